"""What a case base cannot answer honestly, in words: action kinds missing or rare on a
street, and games whose betting the similarity ranges do not describe.

A case base learns only the decisions its logs show with hole cards. Logs that reveal
cards only at showdown (the IRC database) hold no folds at all, so such a case base can
never recommend folding; :func:`action_warnings` says so for ``cbr build`` (the
``BuildReport``), ``cbr casebase inspect`` and, for the street of each answer, ``cbr query``
(:func:`cbr.query.answer.answer`).

>>> action_warnings({"flop": {"total": 200, "f": 0, "c": 150, "r": 50}})[0]
'flop: no fold cases among 200: retrieval can never recommend to fold on the flop (logs that show cards only at showdown, such as the IRC database, hold no folds)'
>>> action_warnings({"flop": {"total": 1000, "f": 5, "c": 700, "r": 295}})[0][:47]
'flop: only 5 fold cases among 1,000 (0.5% < 1%)'
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

from cbr.game.actions import ACTION_NAMES, ACTION_WORDS

__all__ = ["RARE_SHARE", "ACTION_WORDS", "WORDINGS", "action_warnings", "street_gaps", "game_warnings",
           "shown_percent"]

#: An action kind below this share of a street's cases is reported as rare.
RARE_SHARE = 0.01
_NO_FOLDS = " (logs that show cards only at showdown, such as the IRC database, hold no folds)"

#: How each reader is told about a missing or a rare action kind: ``casebase`` (the build
#: report and ``cbr casebase inspect``, every street of a case base at once) and ``answer``
#: (``cbr query``: the street of the answer in hand, naming its case base). Fields: ``street``,
#: ``on`` (``pre-flop`` / ``on the flop``), ``word`` and ``verb`` of the action kind, ``n`` its
#: cases, ``total`` the street's, ``pct`` = 100 n / total as text (:func:`shown_percent`: with
#: the digits that keep it visibly below the threshold), ``rare`` = :data:`RARE_SHARE`,
#: ``why`` (why folds may be missing), ``casebase`` (its name).
WORDINGS: dict[str, dict[str, str]] = {
    "casebase": {
        "missing": "{street}: no {word} cases among {total:,}: retrieval can never recommend {verb} {on}{why}",
        "rare": "{street}: only {n:,} {word} {cases} among {total:,} ({pct}% < {rare:.0%}): retrieval will rarely "
                "recommend {verb} {on}",
    },
    "answer": {
        "missing": "case base {casebase!r} has no {word} cases on the {street}: the answer can never recommend {word}",
        "rare": "case base {casebase!r} has only {n:,} {word} {cases} of {total:,} on the {street} ({pct}%): "
                "{word} is rarely recommended",
    },
}


def shown_percent(n: int, total: int, below: float = RARE_SHARE) -> str:
    """``100 n / total`` as text with one decimal, or as many more (up to six) as it takes to
    show it below ``below`` (a share) when it is, and above 0 when ``n`` is: 62 of 6,525 is
    ``0.95``, never ``1.0``; 2 of 10,000 is ``0.02``, never ``0.0``.

    >>> shown_percent(5, 1000), shown_percent(62, 6525), shown_percent(9999, 1000000), shown_percent(1, 3)
    ('0.5', '0.95', '0.9999', '33.3')
    >>> shown_percent(2, 10000), shown_percent(0, 10)
    ('0.02', '0.0')
    """
    pct = 100.0 * n / total
    text = f"{pct:.1f}"
    for digits in range(2, 7):
        shown = float(text)
        if (pct >= 100.0 * below or shown < 100.0 * below) and (pct == 0.0 or shown > 0.0):
            break
        text = f"{pct:.{digits}f}"
    return text


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


def action_warnings(counts: Mapping[str, Mapping[str, int]], *, wording: str = "casebase",
                    casebase: str = "", no_folds: Optional[Mapping[str, str]] = None) -> list[str]:
    """One sentence per street and action kind that is missing or rare (see the module
    docstring), worded for the reader (:data:`WORDINGS`; ``casebase`` names the case base
    in the ``answer`` wording). ``counts``: per street, ``{"total": n, "f": n, "c": n, "r": n}``.
    ``no_folds``: per street, why folds are missing there, when the reader knows better than
    the default guess (logs that show cards only at showdown); ``cbr casebase condense``
    says what its source held.

    >>> action_warnings({"flop": {"total": 5, "f": 0, "c": 4, "r": 1}}, no_folds={"flop": " (kept none)"})[0][-11:]
    '(kept none)'

    >>> action_warnings({"flop": {"total": 100, "f": 0, "c": 70, "r": 30}}, wording="answer", casebase="irc")
    ["case base 'irc' has no fold cases on the flop: the answer can never recommend fold"]
    """
    templates = WORDINGS[wording]
    out = []
    for street, c in counts.items():
        total = int(c.get("total", 0))
        for a, n in street_gaps(c).items():
            out.append(templates["missing" if n == 0 else "rare"].format(
                street=street, on=_on(street), word=ACTION_WORDS[a], verb="to " + ACTION_NAMES[a].verb, n=n, total=total,
                pct=shown_percent(n, total), rare=RARE_SHARE, casebase=casebase, cases="case" if n == 1 else "cases",
                why=((no_folds or {}).get(street, _NO_FOLDS) if a == "f" else "")))
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
