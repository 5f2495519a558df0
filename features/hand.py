"""What the feature sets share about the hand itself: the LRU of hand features keyed by
(hole, board), the known-cards check, and the default evaluator.

Hand features depend only on the hole cards and the board, so a feature set computes them
once per player and street (the several decisions a player makes in one betting round cost
one evaluation). :class:`EvaluatorUser` gives a feature set the :mod:`evaluator_ext` facade
by default, imported on first use and left out when the feature set is pickled for a
worker process.

>>> from cbr.game import preset
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=1, position=0, player="p1",
...     hole=(49, 40), board=(6, 8, 38), folded=(False, False), all_in=(False, False),
...     acted=(False, False), order=(0, 1), street_bets=0, committed=(0.0, 0.0),
...     total_committed=(10.0, 10.0), previous_round_bets=1, legal="kr")
>>> known_hand(dp, "CASPER")
((49, 40), (6, 8, 38))
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional

from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, STREETS

__all__ = ["CacheInfo", "HandFeatureCache", "EvaluatorUser", "known_hand"]


@dataclass(frozen=True)
class CacheInfo:
    """Hits, misses and size of a :class:`HandFeatureCache`."""

    hits: int
    misses: int
    size: int
    maxsize: int


class HandFeatureCache:
    """LRU of hand features keyed by (hole, board), card order ignored.

    >>> cache = HandFeatureCache(maxsize=2)
    >>> cache.get_or_compute((1, 0), (), lambda: (5.0,))
    (5.0,)
    >>> cache.get_or_compute((0, 1), (), lambda: (9.0,)), cache.info().hits
    ((5.0,), 1)
    """

    def __init__(self, maxsize: int = 4096) -> None:
        if maxsize < 1:
            raise ValueError(f"cache size must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[tuple[tuple[int, ...], tuple[int, ...]], tuple[float, ...]] = OrderedDict()
        self._hits = 0
        self._misses = 0

    def get_or_compute(self, hole: Iterable[int], board: Iterable[int], compute: Any) -> tuple[float, ...]:
        """The cached value for (hole, board), or ``compute()`` stored and returned."""
        key = (tuple(sorted(hole)), tuple(sorted(board)))
        value = self._data.get(key)
        if value is not None:
            self._hits += 1
            self._data.move_to_end(key)
            return value
        self._misses += 1
        value = tuple(compute())
        self._data[key] = value
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)
        return value

    def __contains__(self, hole_board: tuple[Iterable[int], Iterable[int]]) -> bool:
        hole, board = hole_board
        return (tuple(sorted(hole)), tuple(sorted(board))) in self._data

    def touch(self, hole: Iterable[int], board: Iterable[int]) -> bool:
        """Whether (hole, board) is cached; if so it becomes the most recently used (so
        storing other values next does not evict it).

        >>> cache = HandFeatureCache(maxsize=2)
        >>> cache.put((0, 1), (), (1.0,)); cache.put((0, 2), (), (2.0,))
        >>> cache.touch((1, 0), ()), cache.touch((5, 6), ())
        (True, False)
        >>> cache.put((0, 3), (), (3.0,)); ((0, 1), ()) in cache, ((0, 2), ()) in cache
        (True, False)
        """
        key = (tuple(sorted(hole)), tuple(sorted(board)))
        if key not in self._data:
            return False
        self._data.move_to_end(key)
        return True

    def put(self, hole: Iterable[int], board: Iterable[int], value: Iterable[float]) -> None:
        """Store a value computed elsewhere (counts as a miss, as computing it here would).

        >>> cache = HandFeatureCache()
        >>> cache.put((3, 2), (9, 8, 7), (0.5, 0.25, 0.125))
        >>> ((2, 3), (7, 8, 9)) in cache, cache.get_or_compute((2, 3), (7, 8, 9), list)
        (True, (0.5, 0.25, 0.125))
        """
        key = (tuple(sorted(hole)), tuple(sorted(board)))
        self._misses += 1
        self._data[key] = tuple(value)
        self._data.move_to_end(key)
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def info(self) -> CacheInfo:
        return CacheInfo(self._hits, self._misses, len(self._data), self.maxsize)

    def clear(self) -> None:
        self._data.clear()
        self._hits = self._misses = 0


def known_hand(dp: DecisionPoint, who: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(hole, board)`` of ``dp``; raises :class:`GameError` (naming the feature set
    ``who``) when the hole cards are unknown or the board does not fit the street.

    >>> from cbr.game import preset
    >>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=0, position=1, player="p2",
    ...     hole=None, board=(), folded=(False, False), all_in=(False, False), acted=(False, False),
    ...     order=(1, 0), street_bets=1, committed=(10.0, 5.0), total_committed=(10.0, 5.0),
    ...     previous_round_bets=0, legal="fcr")
    >>> known_hand(dp, "SARTRE")
    Traceback (most recent call last):
    ...
    cbr.errors.GameError: player 'p2' has no known hole cards; SARTRE features need them
    """
    if dp.hole is None or len(dp.hole) != 2:
        raise GameError(f"player {dp.player!r} has no known hole cards; {who} features need them")
    s = dp.street
    if not 0 <= s < len(STREETS):
        raise GameError(f"street must be 0..3, got {s}")
    if len(dp.board) != BOARD_SIZES[s]:
        raise GameError(f"{STREETS[s]} needs {BOARD_SIZES[s]} board cards, the decision point has {len(dp.board)}")
    return tuple(dp.hole), tuple(dp.board)


class EvaluatorUser:
    """Mixin: ``evaluator`` is the one given (``self._evaluator``) or, by default, the
    :mod:`evaluator_ext` facade imported on first use (so the feature set loads without the
    C module); pickling leaves the default module out (re-imported in the worker)."""

    _evaluator: Optional[Any] = None

    @property
    def evaluator(self) -> Any:
        if self._evaluator is None:
            import evaluator_ext  # the facade; imported late so features load without the C module

            self._evaluator = evaluator_ext
        return self._evaluator

    def __getstate__(self) -> dict:
        """Picklable for worker processes: the default evaluator module is re-imported there."""
        state = self.__dict__.copy()
        if isinstance(state.get("_evaluator"), ModuleType):
            state["_evaluator"] = None
        return state
