"""What the experiment scripts share: the repository on ``sys.path``, matplotlib if it is
installed (``pip install -e .[plots]``), progress lines on stderr, JSON output."""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

PLOTS_HINT = "matplotlib is not installed, so no PNG was written: pip install -e .[plots]"


def pyplot() -> Optional[Any]:
    """``matplotlib.pyplot`` with the file-only Agg backend, or ``None`` (and a line on
    stderr saying how to install it) when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say(PLOTS_HINT)
        return None
    return plt


def say(text: str) -> None:
    """One progress line on stderr, stamped with the wall-clock time."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def environment() -> dict:
    """What the numbers depend on: evaluator implementation, Python, CPU count."""
    import evaluator_ext

    return {"evaluator": evaluator_ext.IMPLEMENTATION, "python": platform.python_version(),
            "cpus": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}


def write_json(path: Path, data: dict) -> None:
    """Write ``data`` as indented JSON (the folder is created if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
