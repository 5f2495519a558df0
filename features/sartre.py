"""SARTRE's situation description (Rubin & Watson): the betting so far, a hand-strength
bucket and a board-texture category.

SARTRE (Similarity Assessment Reasoning for Texas hold'em via Recall of Experience) is the
heads-up limit successor of CASPER. Its cases hold three attributes: the betting sequence of
the hand (``crc/r``), the strength of the hand and the texture of the board. Here they are
numbers, so that each has a local similarity (:func:`cbr.similarity.default_sartre`):

| column | value | default similarity |
|---|---|---|
| ``preflop_bets`` .. ``river_bets`` | bets and raises on each street so far (the big blind not counted), the current street's included | linear over 0..4 |
| ``<street>_actions`` | actions already taken on the current street (the length of its betting string) | exact |
| ``hand_strength_bucket`` | 0 (weakest) .. ``buckets - 1``; see below | linear over the buckets |
| ``board_texture`` | ``3 * flush_level + straight_level``, 0..8 (after the flop only) | exact |

The betting sequence becomes the count of bets/raises per street, so two sequences with the
same counts are alike and the similarity falls with each bet or raise of difference on a
street (SARTRE's graded betting similarity); ``<street>_actions`` keeps apart sequences with
equal counts that differ in who acts (``""`` first to act, ``"c"`` checked to, ``"cr"``
check-raised). What the counts leave out: who made the earlier streets' bets.

**Hand strength.** The first SARTRE (2009) described the hand by rule-based categories (a
made hand and a draw: "missed", "one pair", "flush draw", ...); later versions bucketed
E[HS^2]. This uses E[HS^2] after the flop: the mean, over every way the board can be
completed, of the river hand strength against one random hand, squared
(``evaluator_ext.hand_strength_squared``, exact; on the river HS^2). Squaring rewards
draws, whose river strength varies most, so one number carries both strength and
potential, which SARTRE has no other attribute for; and a bucket index is ordered, so a
distance-based similarity applies (categories are not ordered). Buckets are equal-width:
``min(int(E[HS^2] * buckets), buckets - 1)``. Pre-flop the hand's class rank 1..169
(``evaluator_ext.preflop_rank``, 1 = AA) is cut into equal runs of ranks:
``(169 - rank) * buckets // 169``, so AA is the top bucket and 72o bucket 0 as after the flop.
``buckets`` is 50 by default.

**Board texture.** SARTRE's board categories are about flush and straight possibilities,
each at three levels, nine combinations (SARTRE's key A..I):

- ``flush_level``: 0 no two board cards share a suit, 1 *flush possible* (two of a suit: one
  more on the board and a suited hand can make it), 2 *flush highly possible* (three or more:
  a hand can hold it now);
- ``straight_level``: by the most distinct board ranks within five consecutive ranks (the
  ace also low): 0 one, 1 *straight possible* (two), 2 *straight highly possible* (three or
  more). A pair counts once.

The levels describe the board only, the same on the river (where "possible" no longer
means a card can come). The seeds in ``../shared/seeds`` do not describe SARTRE (the CASPER
paper only cites Rubin & Watson 2007); these definitions follow SARTRE's published papers.

>>> from cbr.game import preset
>>> from cbr.game.state import HandState
>>> s = HandState(preset("holdem.limit.2p"), hole_cards=[(51, 50), (31, 35)])  # AsAh v 9sTs
>>> for a in "crc":
...     _ = s.act(a)
>>> s.deal_board([26, 38, 0]); _ = s.act("r")                                # 8h Jh 2c, a bet
>>> dp = s.decision_point(); dp.history, dp.hole                             # 9sTs to act
('crc/r', (31, 35))
>>> fs = SartreFeatures()
>>> dict(zip(fs.feature_names(dp.street), fs.row(dp).tolist()))
{'preflop_bets': 1.0, 'flop_bets': 1.0, 'flop_actions': 1.0, 'hand_strength_bucket': 19.0, 'board_texture': 4.0}
>>> round(fs.hand_strength(dp), 4), texture_name(4)                          # E[HS^2] 0.39: bucket 19 of 50
(0.3918, 'flush possible, straight possible')
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Optional

import numpy as np

from cbr.errors import GameError, counted
from cbr.game.decision import DecisionPoint
from features.base import STREETS, split_rows, street_number
from features.hand import EvaluatorUser, HandFeatureCache, known_hand

__all__ = ["SartreFeatures", "HAND_STRENGTH_BUCKETS", "LEVELS", "sartre_feature_names", "betting_counts",
           "flush_level", "straight_level", "board_texture", "texture_name", "preflop_bucket", "strength_bucket"]

#: Buckets of the hand strength (pre-flop rank runs, E[HS^2] after) unless told otherwise.
HAND_STRENGTH_BUCKETS = 50
#: The three levels of the flush and of the straight possibility.
LEVELS: tuple[str, ...] = ("none", "possible", "highly possible")
_RANKS = 169  # pre-flop hand classes


def sartre_feature_names(street: int | str) -> list[str]:
    """The columns of a street: bets per street so far, the current street's actions, the
    hand-strength bucket, and after the flop the board texture.

    >>> sartre_feature_names("preflop")
    ['preflop_bets', 'preflop_actions', 'hand_strength_bucket']
    >>> sartre_feature_names(3)[3:]
    ['river_bets', 'river_actions', 'hand_strength_bucket', 'board_texture']
    """
    s = street_number(street)
    names = [f"{STREETS[k]}_bets" for k in range(s + 1)] + [f"{STREETS[s]}_actions", "hand_strength_bucket"]
    return names + (["board_texture"] if s > 0 else [])


def betting_counts(history: str, street: int) -> tuple[list[int], int]:
    """``(bets and raises on each street 0..street, actions on the current street)`` from an
    ACPC betting string (``crc/cr``; no-limit amounts ``r300`` count as one raise). The
    string must reach ``street`` (one ``/`` per street dealt); raises :class:`GameError`.

    >>> betting_counts("crc/rrc/c", 2)
    ([1, 2, 0], 1)
    >>> betting_counts("", 0)
    ([0], 0)
    >>> betting_counts("r300c/", 1)
    ([1, 0], 0)
    """
    segments = history.split("/")
    if len(segments) != street + 1:
        raise GameError(f"the betting history {history!r} covers {counted(len(segments), 'street')}, the decision is on "
                        f"the {STREETS[street]}; SARTRE features need the hand's betting so far (dp.history)")
    for seg in segments:
        if any(ch not in "fcr0123456789." for ch in seg):
            raise GameError(f"betting history {history!r}: {seg!r} is not a betting string of f, c and r")
    current = segments[-1]
    return [seg.count("r") for seg in segments], sum(current.count(a) for a in "fcr")


def flush_level(board: Sequence[int]) -> int:
    """0 no two cards of a suit, 1 two (flush possible), 2 three or more (highly possible).

    >>> flush_level((0, 4, 8)), flush_level((2, 6, 11)), flush_level((3, 7, 11))   # 2c3c4c, 2h3h4s, 2s3s4s
    (2, 1, 2)
    """
    if not board:
        return 0
    most = max(sum(1 for c in board if c % 4 == suit) for suit in range(4))
    return 2 if most >= 3 else 1 if most == 2 else 0


def straight_level(board: Sequence[int]) -> int:
    """By the most distinct board ranks within five consecutive ranks (ace high and low):
    0 one, 1 two (straight possible), 2 three or more (highly possible).

    >>> straight_level((48, 1, 6))     # A 2 3: the wheel's window
    2
    >>> straight_level((24, 25, 32))   # 8 8 T: the pair counts once
    1
    """
    ranks = {c // 4 for c in board}
    if 12 in ranks:
        ranks.add(-1)  # the ace also plays low (A2345)
    most = max((sum(1 for r in ranks if low <= r <= low + 4) for low in range(-1, 9)), default=0)
    return 2 if most >= 3 else 1 if most == 2 else 0


def board_texture(board: Sequence[int]) -> int:
    """The texture code ``3 * flush_level + straight_level`` (0..8).

    >>> board_texture((27, 36, 2))     # 8s Jc 2h: no two suited, 8 and J within five ranks
    1
    """
    return 3 * flush_level(board) + straight_level(board)


def texture_name(code: int) -> str:
    """What a texture code means.

    >>> texture_name(0), texture_name(7)
    ('no flush or straight possible', 'flush highly possible, straight possible')
    """
    code = int(code)
    if not 0 <= code <= 8:
        raise ValueError(f"a board texture code is 0..8, got {code}")
    flush, straight = divmod(code, 3)
    parts = [f"flush {LEVELS[flush]}"] * (flush > 0) + [f"straight {LEVELS[straight]}"] * (straight > 0)
    return ", ".join(parts) or "no flush or straight possible"


def _check_buckets(buckets: int) -> int:
    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 2 <= buckets <= _RANKS:
        raise ValueError(f"buckets must be an integer 2..{_RANKS}, got {buckets!r}")
    return buckets


def preflop_bucket(rank: int, buckets: int = HAND_STRENGTH_BUCKETS) -> int:
    """Bucket of a pre-flop class rank 1 (AA) .. 169: equal runs of ranks, AA in the top one.

    >>> preflop_bucket(1), preflop_bucket(169), preflop_bucket(16, 10), preflop_bucket(17, 10)
    (49, 0, 9, 8)
    """
    _check_buckets(buckets)
    if not 1 <= rank <= _RANKS:
        raise ValueError(f"a pre-flop rank is 1..{_RANKS}, got {rank}")
    return (_RANKS - int(rank)) * buckets // _RANKS


def strength_bucket(value: float, buckets: int = HAND_STRENGTH_BUCKETS) -> int:
    """Equal-width bucket of a strength in [0, 1] (E[HS^2] after the flop).

    >>> strength_bucket(0.0), strength_bucket(0.3073), strength_bucket(1.0)
    (0, 15, 49)
    """
    _check_buckets(buckets)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"a hand strength is in [0, 1], got {value}")
    return min(int(value * buckets), buckets - 1)


class SartreFeatures(EvaluatorUser):
    """SARTRE's feature set (plugin ``sartre`` in ``cbr.features``; see the module docstring).

    ``evaluator``: anything with ``preflop_rank(hole)`` and ``hand_strength_squared(hole,
    board)``; by default the :mod:`evaluator_ext` facade. ``buckets``: hand-strength buckets
    (2..169). Strengths are cached per (hole, board) as CASPER's hand features are.

    >>> SartreFeatures().feature_names("flop")
    ['preflop_bets', 'flop_bets', 'flop_actions', 'hand_strength_bucket', 'board_texture']
    """

    name = "sartre"

    def __init__(self, *, evaluator: Optional[Any] = None, buckets: int = HAND_STRENGTH_BUCKETS,
                 cache_size: int = 4096) -> None:
        self._evaluator = evaluator
        self.buckets = _check_buckets(buckets)
        self.cache = HandFeatureCache(cache_size)

    def feature_names(self, street: int | str) -> list[str]:
        """The columns of a street (:func:`sartre_feature_names`)."""
        return sartre_feature_names(street)

    def row(self, dp: DecisionPoint) -> np.ndarray:
        """The feature row of one decision point (float32). Needs the hand's betting string
        (``dp.history``, which every decision point the rules engine makes carries) and the
        actor's hole cards; raises :class:`GameError` otherwise."""
        hole, board = known_hand(dp, "SARTRE")
        bets, actions = betting_counts(dp.history, dp.street)
        blind = 1 if dp.street == 0 and max(dp.game.blinds, default=0.0) > 0 else 0
        if bets[-1] + blind != dp.street_bets:
            raise GameError(f"the betting history {dp.history!r} has {counted(bets[-1], 'raise')} on the "
                            f"{STREETS[dp.street]}, the decision point counts {counted(dp.street_bets, 'bet')}")
        values = [*bets, actions, self.hand_strength_bucket(dp)]
        if dp.street > 0:
            values.append(board_texture(board))
        return np.asarray(values, dtype=np.float32)

    def rows(self, dps: Iterable[DecisionPoint]) -> dict[int, np.ndarray]:
        """``{street: (n, d) float32}`` for streets 0..3, input order kept within a street."""
        return split_rows(self, list(dps))

    def hand_strength(self, dp: DecisionPoint) -> float:
        """Pre-flop the class rank 1..169, after the flop E[HS^2] (cached per hole and board)."""
        hole, board = known_hand(dp, "SARTRE")
        return self.cache.get_or_compute(hole, board, lambda: self._compute(hole, board))[0]

    def hand_strength_bucket(self, dp: DecisionPoint) -> int:
        """The bucket of :meth:`hand_strength` (0 weakest .. ``buckets - 1``)."""
        value = self.hand_strength(dp)
        if dp.street == 0:
            return preflop_bucket(int(value), self.buckets)
        return strength_bucket(value, self.buckets)

    def _compute(self, hole: tuple[int, ...], board: tuple[int, ...]) -> tuple[float]:
        ev = self.evaluator
        if not board:
            return (float(ev.preflop_rank(hole)),)
        return (float(ev.hand_strength_squared(hole, board)),)

    def __repr__(self) -> str:
        return f"SartreFeatures(buckets={self.buckets}, cache={self.cache.info()})"
