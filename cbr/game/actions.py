"""Betting actions: the frozen record of one action, shared by the rules engine and the logs,
and the one table of what each action kind is called (:data:`ACTION_NAMES`).

It lives in :mod:`cbr.game` (not with the log parsers) because the table state machine
(:mod:`cbr.game.state`) applies actions, and ``cbr.game`` imports nothing above it.

>>> a = limit_action(0, 1, "r")
>>> a.kind, a.amount, a is limit_action(0, 1, "r")
('r', None, True)
>>> ACTION_NAMES["c"].name, ACTION_NAMES["r"].verb, KIND_OF_WORD["bet"]
('check/call', 'bet or raise', 'r')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

__all__ = ["Action", "ActionKind", "ActionName", "ACTION_NAMES", "ACTION_WORDS", "KIND_OF_WORD", "limit_action"]

ActionKind = Literal["f", "c", "r"]


@dataclass(frozen=True)
class ActionName:
    """What one action kind is called: ``name`` in tables, explanations and warnings
    (``check/call``), ``verb`` in sentences (``cannot check or call``, ``never recommend to
    check or call``), ``words`` what a person may type for it (``cbr play --human``; the
    first is the key offered)."""

    kind: ActionKind
    name: str
    verb: str
    words: tuple[str, ...]


#: The action kinds in their order (``f``, ``c``, ``r``) and their names: the one table every
#: message, explanation and prompt takes its words from.
ACTION_NAMES: dict[str, ActionName] = {
    "f": ActionName("f", "fold", "fold", ("f", "fold")),
    "c": ActionName("c", "check/call", "check or call", ("c", "check", "call", "k")),
    "r": ActionName("r", "bet/raise", "bet or raise", ("r", "bet", "raise", "b")),
}
#: Each kind's name as users read it in explanations, warnings and tables (``"check/call"``).
ACTION_WORDS: dict[str, str] = {k: a.name for k, a in ACTION_NAMES.items()}
#: The kind a typed word means (``"call"`` -> ``"c"``).
KIND_OF_WORD: dict[str, str] = {w: a.kind for a in ACTION_NAMES.values() for w in a.words}


@dataclass(frozen=True)
class Action:
    """One betting action.

    ``street`` 0..3 (pre-flop .. river); ``position`` is the actor's seat in the hand;
    ``kind`` ``f`` fold, ``c`` check/call, ``r`` bet/raise. ``amount`` is only for
    no-limit: the actor's total contribution *on this street* after the action, in
    chips (None in limit games, where sizes are fixed). ``all_in`` marks a limit or
    no-limit action that put the player's last chip in.

    >>> Action(1, 0, "c")
    Action(street=1, position=0, kind='c', amount=None, all_in=False)
    """

    street: int
    position: int
    kind: ActionKind
    amount: Optional[float] = None
    all_in: bool = False


_LIMIT_ACTIONS: dict[tuple[int, int, str, bool], Action] = {}


def limit_action(street: int, position: int, kind: ActionKind, all_in: bool = False) -> Action:
    """The shared :class:`Action` of a limit game (no amount).

    Actions are immutable, so parsers reuse one object per ``(street, position, kind,
    all_in)``: a log of a million hands holds a few hundred distinct limit actions.

    >>> limit_action(1, 2, "r") is limit_action(1, 2, "r")
    True
    >>> limit_action(0, 0, "c", all_in=True)
    Action(street=0, position=0, kind='c', amount=None, all_in=True)
    """
    key = (street, position, kind, all_in)
    a = _LIMIT_ACTIONS.get(key)
    if a is None:
        a = _LIMIT_ACTIONS[key] = Action(street, position, kind, None, all_in)
    return a
