"""The ``procs`` fixture for the ACPC tests."""
from tests.acpc.support import procs  # noqa: F401
