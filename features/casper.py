"""CASPER's case features (Watson & Rubin): 8 pre-flop, 12 on flop, turn and river.

| # | feature | source |
|---|---|---|
| 0 | players_dealt | ``dp.players_dealt`` |
| 1 | relative_position | ``dp.relative_position`` (0 first .. 1 last) |
| 2 | players_in_hand | ``dp.players_in_hand`` |
| 3 | players_to_act | ``dp.players_to_act`` |
| 4 | bets_committed | ``dp.bets_committed`` |
| 5 | bets_to_call | ``dp.bets_to_call`` |
| 6 | pot_odds | ``dp.pot_odds`` |
| 7 | hand_strength | pre-flop: rank 1..169 of the hole class (1 = AA); after: HS vs one opponent |
| 8 | positive_potential | PPOT (Poki), 0 on the river |
| 9 | negative_potential | NPOT (Poki), 0 on the river |
| 10 | small_bets_in_pot | ``dp.small_bets_in_pot`` |
| 11 | previous_round_bets | ``dp.previous_round_bets`` |

Hand features depend only on (hole, board), so they are computed once per player and
street and kept in an LRU cache (:class:`features.hand.HandFeatureCache`): the several
decisions a player makes in one betting round cost one evaluation.
:meth:`CasperFeatures.prepare` goes further for a batch of decision points (what a build
does per chunk, or the best response asking for every holding of a flop): the holes seen
on one flop or turn are computed together, with the fastest native path for their number
(the shared enumeration of ``potential_tables`` for a few holes, from
:data:`BOARD_BATCH_MIN` holes the tables of every holding of the board at once with
``board_potential_tables``); the values are the same as one hole at a time.

>>> from cbr.game import preset
>>> fs = CasperFeatures()
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=0, position=1, player="p2",
...     hole=(51, 50), board=(), folded=(False, False), all_in=(False, False),
...     acted=(False, False), order=(1, 0), street_bets=1,
...     committed=(10.0, 5.0), total_committed=(10.0, 5.0), previous_round_bets=0, legal="fcr")
>>> fs.row(dp).tolist()
[2.0, 0.0, 2.0, 1.0, 0.5, 0.5, 0.25, 1.0]
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from cbr.errors import GameError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES
from features.base import STREETS, split_rows, street_number
from features.hand import CacheInfo, EvaluatorUser, HandFeatureCache, known_hand

__all__ = ["CASPER_FEATURES", "PREFLOP_FEATURES", "CasperFeatures", "HandFeatureCache", "CacheInfo", "BOARD_BATCH_MIN",
           "native_hand_features"]

CASPER_FEATURES: tuple[str, ...] = (
    "players_dealt",
    "relative_position",
    "players_in_hand",
    "players_to_act",
    "bets_committed",
    "bets_to_call",
    "pot_odds",
    "hand_strength",
    "positive_potential",
    "negative_potential",
    "small_bets_in_pot",
    "previous_round_bets",
)
PREFLOP_FEATURES: tuple[str, ...] = CASPER_FEATURES[:8]


def _features_of_table(table: Any, board_size: int) -> tuple[float, float, float]:
    """(HS, PPOT, NPOT) from an unweighted potential table of a flop or turn.

    Every opponent holding appears in its row ("now") once per runout it can see:
    C(45, 2) = 990 on the flop, 44 on the turn. So the row sums divided by that are the
    hand-strength counts, and HS is computed exactly as ``hand_strength`` does.

    >>> table = ((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543))  # AdQc, 3h4cJh
    >>> [round(x, 4) for x in _features_of_table(table, 3)]  # 628 ahead, 9 tied, 444 behind
    [0.5851, 0.2083, 0.2737]
    """
    from evaluator_ext._common import potentials

    seen = 990 if board_size == 3 else 44
    t = [[int(x) for x in row] for row in table]
    ahead, tied, behind = (sum(row) // seen for row in t)
    hs = (ahead + tied / 2) / (ahead + tied + behind)
    ppot, npot = potentials(t)
    return (float(hs), ppot, npot)


#: From this many holes on one board, :meth:`CasperFeatures.prepare` computes the tables of
#: every holding of the board at once (``board_potential_tables``: about 40 ms on a flop,
#: 3 ms on a turn) instead of the holes' alone with the shared enumeration of
#: ``potential_tables`` (about 0.3 ms per hole on a flop, 0.025 ms on a turn, for up to
#: ~100 holes; it beats one ``potential_table`` call per hole at every size). The
#: crossover, measured in ``bench/bench_potentials.py``, is near 110 holes on both streets.
BOARD_BATCH_MIN = 100
#: :meth:`CasperFeatures.hole_rows` keeps the hand features of the holdings of this many boards.
BOARDS_KEPT = 8


def native_hand_features(holes: list[tuple[int, ...]], board: tuple[int, ...]) -> list[tuple[float, float, float]]:
    """(HS, PPOT, NPOT) of each (sorted) hole on a flop or turn with the faster native path
    for the number of holes; the same values as one hole at a time.

    >>> from itertools import combinations
    >>> board = (6, 8, 38)
    >>> holes = [(40, 49)] + [h for h in combinations(sorted(set(range(52)) - set(board)), 2)][:BOARD_BATCH_MIN]
    >>> native_hand_features(holes, board)[0] == native_hand_features(holes[:1], board)[0]
    True
    """
    from evaluator_ext import _native

    n = len(board)
    if len(holes) >= BOARD_BATCH_MIN and hasattr(_native, "board_potential_tables"):
        tables = dict(_native.board_potential_tables(board))
        return _features_of_tables(np.array([tables[hole] for hole in holes], dtype=np.int64), n)
    return [_features_of_table(t, n) for t in _native.potential_tables(holes, board)]


def _features_of_tables(tables: np.ndarray, board_size: int) -> list[tuple[float, float, float]]:
    """:func:`_features_of_table` of many tables (``(n, 3, 3)`` int64) at once, with the same
    float operations in the same order: the same values, bit for bit.

    >>> t = ((449005, 3211, 169504), (0, 8370, 540), (91981, 1036, 346543))
    >>> _features_of_tables(np.array([t, t]), 3) == [_features_of_table(t, 3)] * 2
    True
    """
    A, T, B = 0, 1, 2  # ahead, tied, behind (evaluator_ext._common)
    seen = 990 if board_size == 3 else 44
    sums = tables.sum(axis=2)  # exact: int64
    ahead, tied, behind = (sums[:, i] // seen for i in (A, T, B))
    hs = (ahead + tied / 2) / (ahead + tied + behind)
    ppot_den = sums[:, B] + sums[:, T] / 2
    npot_den = sums[:, A] + sums[:, T] / 2
    ppot_num = tables[:, B, A] + tables[:, B, T] / 2 + tables[:, T, A] / 2
    npot_num = tables[:, A, B] + tables[:, T, B] / 2 + tables[:, A, T] / 2
    ppot = np.divide(ppot_num, ppot_den, out=np.zeros_like(ppot_num), where=ppot_den != 0)
    npot = np.divide(npot_num, npot_den, out=np.zeros_like(npot_num), where=npot_den != 0)
    return list(zip(hs.tolist(), ppot.tolist(), npot.tolist()))


def checked_holes(holes: Any, board: Sequence[int]) -> Optional[np.ndarray]:
    """``holes`` as an ``(n, 2)`` int array when there are some and every one is two distinct
    integer cards 0..51 off ``board``; else None (callers then go hole by hole, where a bad
    one is reported). What a batch of holdings (a best response's spot) is checked with.

    >>> checked_holes([(0, 1), (2, 3)], (4, 5, 6)).tolist(), checked_holes([(0, 1), (2, 4)], (4, 5, 6))
    ([[0, 1], [2, 3]], None)
    """
    try:
        cards = np.asarray(holes)
    except (TypeError, ValueError):
        return None
    if cards.ndim != 2 or cards.shape[1] != 2 or cards.shape[0] == 0 or cards.dtype.kind not in "iu":
        return None
    cards = cards.astype(np.intp, copy=False)
    if ((cards < 0) | (cards > 51)).any() or (cards[:, 0] == cards[:, 1]).any():
        return None
    if len(board) and np.isin(cards, np.asarray(tuple(board), dtype=np.intp)).any():
        return None
    return cards


class CasperFeatures(EvaluatorUser):
    """CASPER's feature set (plugin ``casper`` in ``cbr.features``).

    ``evaluator`` is anything with ``preflop_rank(hole)``, ``hand_strength(hole, board)``
    and ``hand_potential(hole, board) -> (ppot, npot)``, optionally
    ``hand_potentials(holes, board) -> [(ppot, npot), ...]`` (used by :meth:`prepare`);
    by default the :mod:`evaluator_ext` facade (imported on first use), whose native
    build shares the enumeration between holes.

    >>> CasperFeatures().feature_names("flop")[-2:]
    ['small_bets_in_pot', 'previous_round_bets']
    """

    name = "casper"

    def __init__(self, *, evaluator: Optional[Any] = None, cache_size: int = 4096) -> None:
        self._evaluator = evaluator
        self.cache = HandFeatureCache(cache_size)
        self._boards: dict[tuple[int, ...], dict[tuple[int, ...], tuple[float, ...]]] = {}  # hole_rows'

    # ---- protocol -----------------------------------------------------------
    def feature_names(self, street: int | str) -> list[str]:
        """Column names of a street: the first 8 pre-flop, all 12 afterwards."""
        return list(PREFLOP_FEATURES if street_number(street) == 0 else CASPER_FEATURES)

    def row(self, dp: DecisionPoint) -> np.ndarray:
        """The feature row of one decision point (float32)."""
        s = dp.street
        if not 0 <= s < len(STREETS):
            raise GameError(f"street must be 0..3, got {s}")
        hand = self.hand_features(dp)
        values = [
            dp.players_dealt,
            dp.relative_position,
            dp.players_in_hand,
            dp.players_to_act,
            dp.bets_committed,
            dp.bets_to_call,
            dp.pot_odds,
            hand[0],
        ]
        if s > 0:
            values += [hand[1], hand[2], dp.small_bets_in_pot, dp.previous_round_bets]
        return np.asarray(values, dtype=np.float32)

    def rows(self, dps: Iterable[DecisionPoint]) -> dict[int, np.ndarray]:
        """``{street: (n, d) float32}`` for streets 0..3, input order kept within a street."""
        return split_rows(self, list(dps))

    def prepare(self, dps: Iterable[DecisionPoint]) -> int:
        """Compute and cache the flop and turn hand features of many decision points at once.

        Holes on the same board are computed together (see :data:`BOARD_BATCH_MIN`). Decision points
        without two known hole cards, with the wrong board size, or already cached are
        left to :meth:`hand_features`; the values are the same either way. Returns the
        number of (hole, board) pairs computed. Without a batch-capable evaluator this
        does nothing (returns 0).

        >>> from cbr.game import preset
        >>> fs = CasperFeatures()
        >>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=1, position=0, player="p1",
        ...     hole=(49, 40), board=(6, 8, 38), folded=(False, False), all_in=(False, False),
        ...     acted=(False, False), order=(0, 1), street_bets=0, committed=(0.0, 0.0),
        ...     total_committed=(10.0, 10.0), previous_round_bets=1, legal="kr")
        >>> fs.prepare([dp, dp]), [round(x, 4) for x in fs.hand_features(dp)]
        (1, [0.5851, 0.2083, 0.2737])
        """
        return self._prepare((dp.hole, dp.board, dp.street) for dp in dps)

    def _prepare(self, hands: Iterable[tuple[Any, Any, int]], checked: bool = False) -> int:
        """:meth:`prepare` of ``(hole, board, street)`` triples (``checked``: their cards are
        known to be valid)."""
        batch = self._batch_potentials()
        if batch is None:
            return 0
        by_board: dict[tuple[int, ...], dict[tuple[int, ...], None]] = {}
        for hole_cards, board_cards, street in hands:
            board = tuple(board_cards)
            if hole_cards is None or len(hole_cards) != 2 or len(board) not in (3, 4):
                continue
            if not 0 <= street < len(STREETS) or len(board) != BOARD_SIZES[street]:
                continue
            hole = tuple(hole_cards)
            cards = hole + board
            if not checked and (len(set(cards)) != len(cards) or not all(type(c) is int and 0 <= c < 52 for c in cards)):
                continue  # left to hand_features, which reports it
            if self.cache.touch(hole, board):  # kept: what this batch stores must not evict it
                continue
            by_board.setdefault(tuple(sorted(board)), {})[tuple(sorted(hole))] = None
        done = 0
        for board, holes in by_board.items():
            hole_list = list(holes)
            for hole, features in zip(hole_list, batch(hole_list, board)):
                self.cache.put(hole, board, features)
                done += 1
        return done

    def hole_rows(self, dp: DecisionPoint, holes: Sequence[tuple[int, int]]) -> np.ndarray:
        """The feature rows of ``dp`` with each holding of ``holes`` in place of ``dp.hole``
        (float32 ``(len(holes), d)``): row ``i`` is ``row(replace(dp, hole=holes[i]))``, bit
        for bit. The betting features are computed once and the holdings' hand features in
        one batch (:meth:`prepare`): what a best response asks ("every holding at this spot").

        >>> from cbr.game import preset
        >>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=1, position=0, player="p1",
        ...     hole=(49, 40), board=(6, 8, 38), folded=(False, False), all_in=(False, False),
        ...     acted=(False, False), order=(0, 1), street_bets=0, committed=(0.0, 0.0),
        ...     total_committed=(10.0, 10.0), previous_round_bets=1, legal="kr")
        >>> fs = CasperFeatures()
        >>> bool((fs.hole_rows(dp, [(49, 40), (0, 1)])[0] == fs.row(dp)).all())
        True
        """
        board = tuple(dp.board)
        plain = type(self).row is CasperFeatures.row and type(self).hand_features is CasperFeatures.hand_features
        cards = checked_holes(holes, board) if plain else None
        holes = [tuple(h) for h in (holes if cards is None else cards.tolist())]
        if cards is None:
            # no holdings, a subclass with columns of its own, or bad cards (row reports them)
            rows = [self.row(replace(dp, hole=h)) for h in holes]
            return np.stack(rows) if rows else np.empty((0, len(self.feature_names(dp.street))), np.float32)
        if len(set(board)) != len(board):
            raise GameError(f"board {board} holds a card twice")
        out = np.repeat(self.row(replace(dp, hole=holes[0]))[None, :], len(holes), axis=0)
        hand = self._board_values(holes, board, dp.street)
        cols = [7] if dp.street == 0 else [7, 8, 9]  # hand[0], and after the flop hand[1], hand[2]: see row()
        out[:, cols] = np.array(hand, dtype=np.float64).astype(np.float32)
        return out

    def _board_values(self, holes: list[tuple[int, ...]], board: tuple[int, ...], street: int) -> list[tuple[float, ...]]:
        """The hand features of ``holes`` (checked) on ``board``, kept per board for the next
        batch on it (a best response asks for every holding at each decision of a street):
        the values of the cache, looked up once per board and holding."""
        boards = self.__dict__.setdefault("_boards", {})  # (a feature set pickled before it had them)
        memo = boards.get(board)
        if memo is None:
            memo = boards[board] = {}
            if len(boards) > BOARDS_KEPT:
                boards.pop(next(iter(boards)))
        missing = [h for h in holes if h not in memo]
        if missing:
            self._prepare(((h, board, street) for h in missing), checked=True)
            for h in missing:
                memo[h] = self.cache.get_or_compute(h, board, lambda h=h: self._compute(h, board))  # type: ignore[misc]
        return [memo[h] for h in holes]

    def _batch_potentials(self) -> Optional[Any]:
        """``(holes, board) -> [(hs, ppot, npot), ...]`` from the evaluator's ``hand_potentials``;
        for the native :mod:`evaluator_ext`, straight from its kernels (:func:`native_hand_features`)."""
        ev = self.evaluator
        batch = getattr(ev, "hand_potentials", None)
        if callable(batch):

            def evaluator_batch(holes: list[tuple[int, ...]], board: tuple[int, ...]) -> list[tuple[float, ...]]:
                pots = batch(holes, board)
                return [(float(ev.hand_strength(h, board)), float(p), float(n)) for h, (p, n) in zip(holes, pots)]

            return evaluator_batch
        if getattr(ev, "__name__", None) == "evaluator_ext" and getattr(ev, "IMPLEMENTATION", None) == "native":
            from evaluator_ext import _native

            if not hasattr(_native, "potential_tables"):
                return None
            return native_hand_features
        return None

    # ---- hand features --------------------------------------------------------
    def hand_features(self, dp: DecisionPoint) -> tuple[float, ...]:
        """``(preflop_rank,)`` pre-flop, ``(hs, ppot, npot)`` after (potentials 0 on the river)."""
        hole, board = known_hand(dp, "CASPER")
        return self.cache.get_or_compute(hole, board, lambda: self._compute(hole, board))

    def _compute(self, hole: tuple[int, ...], board: tuple[int, ...]) -> tuple[float, ...]:
        ev = self.evaluator
        if not board:
            return (float(ev.preflop_rank(hole)),)
        hs = float(ev.hand_strength(hole, board))
        if len(board) == 5:
            return (hs, 0.0, 0.0)
        ppot, npot = ev.hand_potential(hole, board)
        return (hs, float(ppot), float(npot))

    def __repr__(self) -> str:
        return f"CasperFeatures(cache={self.cache.info()})"
