"""The evaluator tests' fixtures: ``impl`` (each implementation in turn), ``native`` and
``reference``."""
from __future__ import annotations

from types import ModuleType

import pytest

from tests.evaluator.support import IMPLEMENTATIONS, load_impl


@pytest.fixture(params=IMPLEMENTATIONS)
def impl(request: pytest.FixtureRequest) -> ModuleType:
    """Each implementation in turn (``impl.__name__`` tells which)."""
    return load_impl(request.param)


@pytest.fixture
def native() -> ModuleType:
    """The native implementation only (heavy checks the reference is too slow for)."""
    return load_impl("native")


@pytest.fixture
def reference() -> ModuleType:
    """The pure-Python reference implementation."""
    return load_impl("reference")
