"""The benchmarks' check that the C extensions load (``experiments.common.require_native``):
a benchmark of the pure-Python fallbacks would measure the wrong thing, so each script stops
with one line unless ``CBR_ALLOW_REFERENCE=1``.

Each script reads its arguments with :func:`parse_args` (the experiments' own,
:func:`experiments.common.parse_args`), which checks them first and the extensions second: ``--help`` and a usage error (argparse's one ``error:`` line, exit 2) are
answered the same with or without the extensions, and the check runs before any work."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from experiments.common import parse_args, require_native  # noqa: E402  (the experiments' own: the same order)

__all__ = ["parse_args", "require_native"]
