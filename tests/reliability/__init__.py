"""The reliability suite: faults tried on purpose (mutated logs, fuzzed inputs, killed
processes, damaged case bases, concurrent readers and writers).

Every test here is bounded in time. The short form runs with the normal suite; the long
form scales the number of rounds: ``CBR_RELIABILITY=long`` (x20) or an explicit
``CBR_RELIABILITY_ROUNDS=N`` (N rounds wherever a test asks for its default).

>>> import os
>>> os.environ.pop("CBR_RELIABILITY", None); os.environ.pop("CBR_RELIABILITY_ROUNDS", None)
>>> reliability_rounds(5)
5
"""
from __future__ import annotations

import os

LONG_FACTOR = 20


def reliability_rounds(default: int) -> int:
    """How many rounds a fault test should run: ``default`` in the short form.

    ``CBR_RELIABILITY_ROUNDS=N`` sets N outright; ``CBR_RELIABILITY=long`` multiplies
    the default by 20.
    """
    explicit = os.environ.get("CBR_RELIABILITY_ROUNDS")
    if explicit:
        return max(1, int(explicit))
    if os.environ.get("CBR_RELIABILITY", "").lower() == "long":
        return default * LONG_FACTOR
    return default
