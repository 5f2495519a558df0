"""The benchmarks' check that the C extensions load (``experiments.common.require_native``):
a benchmark of the pure-Python fallbacks would measure the wrong thing, so each script stops
at start with one line unless ``CBR_ALLOW_REFERENCE=1``."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from experiments.common import require_native  # noqa: E402

__all__ = ["require_native"]
