"""Fixtures shared by the MCCFR long-run tests (``test_longrun.py``, ``test_recipe_cli.py``)."""
from __future__ import annotations

from pathlib import Path

import pytest

#: The recipes' bucket options for a 4-bucket run on one thread.
FOUR = ["--flop", "4", "--turn", "4", "--river", "4", "--threads", "1"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """``abstraction.npz`` of 4 buckets a street (the shipped teacher's, merged)."""
    from cbr.abstraction.distribution import DistributionAbstraction
    from cbr.cfr.policy import SHIPPED_TEACHER
    from cbr.cfr.testing import coarse_abstraction

    folder = tmp_path_factory.mktemp("tiny")
    coarse_abstraction(DistributionAbstraction.load(SHIPPED_TEACHER), 4).save(folder)
    return folder / "abstraction.npz"
