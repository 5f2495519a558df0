"""What a case base cannot answer honestly, in words: action kinds missing or rare on a
street, and games whose betting the similarity ranges do not describe.

A case base learns only the decisions its logs show with hole cards. Logs that reveal
cards only at showdown (the IRC database) hold no folds at all, so such a case base can
never recommend folding; :func:`action_warnings` says so for ``cbr build`` (the
``BuildReport``) and ``cbr casebase inspect``.

>>> action_warnings({"flop": {"total": 200, "f": 0, "c": 150, "r": 50}})[0]
'flop: no fold cases among 200: retrieval can never recommend to fold on the flop (logs that show cards only at showdown, such as the IRC database, hold no folds)'
>>> action_warnings({"flop": {"total": 1000, "f": 5, "c": 700, "r": 295}})[0][:46]
'flop: only 5 fold cases among 1000 (0.5% < 1%)'
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["RARE_SHARE", "ACTION_WORDS", "action_warnings", "street_gaps", "game_warnings"]

#: An action kind below this share of a street's cases is reported as rare.
RARE_SHARE = 0.01
ACTION_WORDS = {"f": "fold", "c": "check/call", "r": "bet/raise"}
_VERB = {"f": "to fold", "c": "to check or call", "r": "to bet or raise"}


def _on(street: str) -> str:
    return "pre-flop" if street == "preflop" else f"on the {street}"


def street_gaps(counts: Mapping[str, int]) -> dict[str, int]:
    """Action kinds missing (count 0) or rare (< ``RARE_SHARE``) on a street with cases.

    >>> street_gaps({"total": 300, "f": 0, "c": 299, "r": 1})
    {'f': 0, 'r': 1}
    """
    total = int(counts.get("total", 0))
    if total <= 0:
        return {}
    return {a: int(counts.get(a, 0)) for a in ACTION_WORDS if int(counts.get(a, 0)) < RARE_SHARE * total}


def action_warnings(counts: Mapping[str, Mapping[str, int]]) -> list[str]:
    """One sentence per street and action kind that is missing or rare (see the module docstring)."""
    out = []
    for street, c in counts.items():
        total = int(c.get("total", 0))
        for a, n in street_gaps(c).items():
            word = ACTION_WORDS[a]
            if n == 0:
                why = (" (logs that show cards only at showdown, such as the IRC database, hold no folds)"
                       if a == "f" else "")
                out.append(f"{street}: no {word} cases among {total}: retrieval can never recommend "
                           f"{_VERB[a]} {_on(street)}{why}")
            else:
                out.append(f"{street}: only {n} {word} cases among {total} ({100 * n / total:.1f}% < "
                           f"{RARE_SHARE:.0%}): retrieval will rarely recommend {_VERB[a]} {_on(street)}")
    return out


def game_warnings(games: Iterable[Mapping[str, Any]]) -> list[str]:
    """A sentence per no-limit game: CASPER's features and similarity domains count fixed
    bets (``bets_to_call`` 0..4, raise caps), so no-limit amounts mapped to bet/raise are
    compared as if they were limit bets. The engine warns rather than refuses.

    >>> game_warnings([{"name": "nl", "betting": "nolimit"}, {"name": "fl", "betting": "limit"}])[0][:35]
    "game 'nl' is no-limit: the features"
    """
    return [f"game {g.get('name')!r} is no-limit: the features and similarity ranges assume limit betting "
            "(bets counted in fixed units, 0..4 per round), so no-limit bet sizes are lost and "
            "retrieval compares unlike situations"
            for g in games if g.get("betting") == "nolimit"]
