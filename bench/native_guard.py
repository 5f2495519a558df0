"""The benchmarks' check that the C extensions load (``experiments.common.require_native``):
a benchmark of the pure-Python fallbacks would measure the wrong thing, so each script stops
with one line unless ``CBR_ALLOW_REFERENCE=1``.

Each script reads its arguments with :func:`parse_args`, which checks them first and the
extensions second: ``--help`` and a usage error (argparse's one ``error:`` line, exit 2) are
answered the same with or without the extensions, and the check runs before any work."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional, Sequence

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from experiments.common import require_native  # noqa: E402

__all__ = ["parse_args", "require_native"]


def parse_args(parser: argparse.ArgumentParser, argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """``parser.parse_args(argv)`` (``--help`` and usage errors exit there, as argparse does),
    then :func:`require_native` (one line, exit 1, when the extensions do not load)."""
    args = parser.parse_args(argv)
    require_native()
    return args
