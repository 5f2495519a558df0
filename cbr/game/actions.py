"""Betting actions: the frozen record of one action, shared by the rules engine and the logs.

It lives in :mod:`cbr.game` (not with the log parsers) because the table state machine
(:mod:`cbr.game.state`) applies actions, and ``cbr.game`` imports nothing above it.

>>> a = limit_action(0, 1, "r")
>>> a.kind, a.amount, a is limit_action(0, 1, "r")
('r', None, True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

__all__ = ["Action", "ActionKind", "ACTION_WORDS", "limit_action"]

ActionKind = Literal["f", "c", "r"]

#: The words users read for each action kind (explanations, warnings, tables).
ACTION_WORDS = {"f": "fold", "c": "check/call", "r": "bet/raise"}


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
