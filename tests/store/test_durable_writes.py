"""Atomic writes held whole across Ctrl-C: a SIGINT that landed inside numpy's zip writing
became ``ValueError: Can't close the ZIP file while there is an open writing handle``
(``internal error``, exit 3, in ``cbr train cfr`` at a checkpoint) instead of ``interrupted``."""
from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
import pytest

from cbr.store.durable import atomic_savez


class InterruptsWhilePickled:
    """An object whose pickling (inside ``np.savez``'s zip write) raises Ctrl-C."""

    def __reduce__(self):
        signal.raise_signal(signal.SIGINT)
        return (int, (7,))


def test_a_ctrl_c_during_a_savez_is_delivered_after_the_whole_write(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    with pytest.raises(KeyboardInterrupt):
        atomic_savez(path, x=np.arange(5), y=np.array([InterruptsWhilePickled()], dtype=object))
    with np.load(path, allow_pickle=True) as data:  # written whole before the interrupt came
        assert data["x"].tolist() == [0, 1, 2, 3, 4] and data["y"].tolist() == [7]
    assert [p.name for p in tmp_path.iterdir()] == ["a.npz"]  # no temp file left
