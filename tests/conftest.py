"""Shared fixtures. Real logs are read from ../shared/data (beside the clone, as in CI);
tests that need them skip with a clear reason when that folder is absent."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Speed is shown in bench/, not asserted in tests: no per-example deadlines, and no
# "too slow" health check on a loaded 2-core CI machine. Examples stay random.
settings.register_profile("cbr", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cbr")

REPO = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CBR_SHARED", REPO.parent / "shared"))
LOGS = SHARED / "data" / "logs"
REFERENCE = SHARED / "data" / "reference"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data/logs; skips the calling test when it is missing."""
    path = LOGS.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real logs not available: {path} is missing (they live in ../shared beside the clone)")
    return path


@pytest.fixture
def logs_dir() -> Path:
    """../shared/data/logs, or skip."""
    return shared_path()
