"""Rule bots from the seeds: hand strength, EHS + pot odds + bluffing, a Poki-style formula,
and a loose-aggressive bot.

All of them read the hand through the evaluator facade (``evaluator_ext``): hand strength
HS against one random hand by full enumeration, hand potential (PPOT, NPOT) and, before
the flop, the 169-class rank or a seeded Monte Carlo win probability. With ``n``
opponents left (players not folded, not players dealt), ``HS_n = HS ** n`` (Poki) and
``EHS = HS_n + (1 - HS_n) * PPOT`` (seed ``waterloo-holdem-bot-report.txt`` eq. 6).
Post-flop numbers are cached per ``(hole, board)`` (one evaluation per street), pre-flop
numbers per hand class. Asked for many holdings at once (:meth:`RuleBot.triples`, what an
exploitability measurement asks), a bot computes their values in arrays and runs its rules as
array operations: the same triples as one holding at a time, bit for bit.

Multi-way pre-flop. The bots' constants were tuned heads-up. Before the flop they use the
same ``HS_n`` idea: the hand's percentile ``s`` among the 1326 holdings (ranked by win
probability against ``n`` opponents, or by ``preflop_rank``) gives ``s ** n``, the chance
that no opponent holds a better starting hand. Rank cut-offs become the weakest rank
whose ``s ** n`` reaches the heads-up cut-off's percentile (:func:`rank_cutoff`); win
probabilities become the heads-up win probability at percentile ``s ** n``
(:func:`heads_up_equivalent`). Heads-up (``n = 1``) both are the identity, so heads-up
play is unchanged; with more opponents the ranges tighten, and they widen again as
players fold (first-in on the button 9-handed counts the two blinds only).

>>> from cbr.game import preset
>>> from cbr.game.decision import DecisionPoint
>>> from evaluator_ext.cards import parse_cards
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=3, position=0, player="p1",
...     hole=parse_cards("AhAd"), board=parse_cards("AsAcKd7h2c"), folded=(False, False),
...     all_in=(False, False), acted=(False, True), order=(0, 1), street_bets=1,
...     committed=(0.0, 20.0), total_committed=(60.0, 80.0), previous_round_bets=0, legal="fcr")
>>> EHSPolicy().triple(dp)                 # four aces on the river: raise
(0.0, 0.0, 1.0)
"""
from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Optional

import numpy as np

import evaluator_ext as ev
from cbr.policies.base import Policy, Triple, legal_triple, legal_triples
from evaluator_ext.preflop_odds import (
    heads_up_equivalent,
    preflop_best_hand,
    preflop_win,
    rank_cutoff,
)
from features.casper import BOARD_BATCH_MIN, checked_holes, native_hand_features

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from cbr.game.decision import DecisionPoint

RIVER = 3
#: From this many holdings whose HS alone is wanted (a river, or a bot that reads no
#: potentials), :meth:`RuleBot.triples` takes their HS from one evaluation of the board's
#: holdings (:func:`board_strengths`, about 1-2 ms for all of them) instead of one call each
#: (about 10 us).
HS_BATCH_MIN = 32
#: The (fold, call, raise) rows of a pure action, indexed by its kind 0, 1, 2 (read-only).
PURE_ROWS = np.eye(3)
PURE_ROWS.flags.writeable = False


def _clamp(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def _clamp_rows(x: np.ndarray) -> np.ndarray:
    """:func:`_clamp` of every entry (NaN stays NaN, as there)."""
    return np.where(x < 0.0, 0.0, np.where(x > 1.0, 1.0, x))


def _power(x: np.ndarray, n: int) -> np.ndarray:
    """``x ** n`` entry by entry with Python's float power (the C library's ``pow``, as the
    one-holding rules compute it; numpy's own ``power`` may round differently).

    >>> _power(np.array([0.5, 0.9]), 2).tolist() == [0.5 ** 2, 0.9 ** 2]
    True
    """
    if n == 1:
        return x  # pow(x, 1) is x
    return np.array([v ** n for v in x.tolist()], dtype=np.float64)


def _preflop_strength(hole: tuple[int, int], n_opponents: int) -> float:
    """:meth:`RuleBot.preflop_strength` of ``hole`` against ``n_opponents`` (a function of its
    hand class alone)."""
    if n_opponents == 1:
        return preflop_win(hole, 1)  # == the mapping below, cheaper
    return heads_up_equivalent(preflop_best_hand(hole, n_opponents))


_RANKS: list[np.ndarray] = []                 # [52 x 52 preflop_rank of each holding, 0 on the diagonal]
_STRENGTHS: dict[int, np.ndarray] = {}        # opponents -> _preflop_strength by rank (NaN: not yet)


def preflop_ranks(holes: np.ndarray) -> np.ndarray:
    """``preflop_rank`` (1 = AA .. 169) of each holding of an ``(n, 2)`` card array, from a
    table of the 1326 holdings built once.

    >>> preflop_ranks(np.array([[51, 50], [20, 1]])).tolist() == [ev.preflop_rank((51, 50)), ev.preflop_rank((20, 1))]
    True
    """
    if not _RANKS:
        table = np.zeros((52, 52), dtype=np.int64)
        for a, b in combinations(range(52), 2):
            table[a, b] = table[b, a] = ev.preflop_rank((a, b))
        _RANKS.append(table)
    return _RANKS[0][holes[:, 0], holes[:, 1]]


def preflop_strengths(holes: np.ndarray, n_opponents: int) -> np.ndarray:
    """:meth:`RuleBot.preflop_strength` of each holding of an ``(n, 2)`` card array against
    ``n_opponents``: one value per hand class met, kept per number of opponents.

    >>> preflop_strengths(np.array([[51, 50], [49, 48]]), 1).tolist() == [preflop_win((51, 50), 1)] * 2
    True
    """
    ranks = preflop_ranks(holes)
    table = _STRENGTHS.get(n_opponents)
    if table is None:
        table = _STRENGTHS[n_opponents] = np.full(len(ev.PREFLOP_TABLE) + 1, np.nan)
    missing = np.unique(ranks[np.isnan(table[ranks])])
    for rank in missing.tolist():
        hole = tuple(ev.class_combos(ev.PREFLOP_TABLE[rank - 1])[0])
        table[rank] = _preflop_strength(hole, n_opponents)  # type: ignore[arg-type]
    return table[ranks]


def board_strengths(holes: np.ndarray, board: tuple[int, ...]) -> np.ndarray:
    """HS against one random hand (``ev.hand_strength(hole, board)``) of each holding of an
    ``(n, 2)`` card array on a flop, turn or river ``board``, from one evaluation of every
    holding of the board: the same integer counts, so the same values bit for bit.

    >>> from evaluator_ext.cards import parse_cards
    >>> board = parse_cards("AsAcKd7h2c")
    >>> holes = np.array([parse_cards("AhAd"), parse_cards("3c4d")])
    >>> board_strengths(holes, board).tolist() == [ev.hand_strength(tuple(h), board) for h in holes.tolist()]
    True
    """
    rest = np.array(sorted(set(range(52)) - set(board)), dtype=np.intp)
    a, b = np.triu_indices(len(rest), 1)
    a, b = rest[a], rest[b]
    k = len(board)
    cards = np.empty((len(a), k + 2), dtype=np.uint8)
    cards[:, :k] = board
    cards[:, k], cards[:, k + 1] = a, b
    values = np.asarray(ev.evaluate_batch(cards), dtype=np.int64)
    grid = np.full((52, 52), 1 << 40, dtype=np.int64)   # above every value: never below nor equal
    grid[a, b] = grid[b, a] = values
    ordered = np.sort(values)
    mine = grid[holes[:, 0], holes[:, 1]][:, None]
    # Opponents: every holding of the board without either of our cards. Those holding our
    # first or second card are in rows grid[c]; our own holding is in both, counted once.
    rows0, rows1 = grid[holes[:, 0]], grid[holes[:, 1]]
    ahead = (np.searchsorted(ordered, mine[:, 0], side="left")
             - (rows0 < mine).sum(axis=1) - (rows1 < mine).sum(axis=1))
    tied = (np.searchsorted(ordered, mine[:, 0], side="right") - np.searchsorted(ordered, mine[:, 0], side="left")
            - (rows0 == mine).sum(axis=1) - (rows1 == mine).sum(axis=1) + 1)
    behind = (len(values) - 2 * (len(rest) - 1) + 1) - ahead - tied
    return (ahead + tied / 2) / (ahead + tied + behind)


#: The RuleBot methods a bot's batched rules (``_rows``) read through: a subclass that
#: overrides any of them (or ``triple``, or the rule methods the class lists in ``_ROW_RULES``)
#: answers holding by holding.
_VALUE_METHODS = ("hand_strength", "potential", "evaluation", "opponents", "hs_n", "ehs", "ppot",
                  "preflop_strength", "rank_cutoff", "bets_faced", "round_position")
_BATCHABLE: dict[type, bool] = {}


def checked_share(name: str, value: float) -> float:
    """A bot's option that is a share, a rate or a strength: a number in [0, 1], else a
    ``ValueError`` naming the option as a spec writes it (``stab-rate``).

    >>> checked_share("stab_rate", 0.5), checked_share("stab_rate", 5)
    Traceback (most recent call last):
    ...
    ValueError: stab-rate is a number in [0, 1], got 5
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name.replace('_', '-')} is a number in [0, 1], got {value!r}")
    return float(value)


def checked_rank(name: str, value: int) -> int:
    """A pre-flop rank cut-off option: a whole number 0..169 (0: no hand), else a ``ValueError``.

    >>> checked_rank("raise_rank", 30)
    30
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 169:
        raise ValueError(f"{name.replace('_', '-')} is a hand-class rank 0..169, got {value!r}")
    return value


def checked_positive(name: str, value: float) -> float:
    """An option that is a finite number >= 0, else a ``ValueError``.

    >>> checked_positive("looseness", 0.8)
    0.8
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < float("inf"):
        raise ValueError(f"{name.replace('_', '-')} is a number >= 0, got {value!r}")
    return float(value)


class RuleBot(Policy):
    """Shared machinery of the rule bots: cached HS / potential / EHS for a decision point."""

    name = "rulebot"

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self._cache: dict[tuple[tuple[int, int], tuple[int, ...]], list] = {}  # [HS, (PPOT, NPOT) | None]
        # The same values of the last few boards asked in batches, as (HS, PPOT) 52 x 52 grids
        # indexed by the two cards (NaN: not known yet), for the batched rules.
        self._grids: dict[tuple[int, ...], np.ndarray] = {}

    def reset(self) -> None:
        self._cache.clear()
        self._grids.clear()

    # ---- hand evaluation (cached) ----
    def _key(self, dp: "DecisionPoint") -> tuple[tuple[int, int], tuple[int, ...]]:
        if dp.hole is None:
            raise ValueError("a rule bot needs its own hole cards in the decision point")
        if len(self._cache) > 8192:  # old hands: not needed any more (every holding of a board fits:
            # an exploitability run asks for all of them, again at each decision on the board)
            self._forget()
        return (tuple(dp.hole), tuple(dp.board))  # type: ignore[return-value]

    def _forget(self) -> None:
        self._cache.clear()
        self._grids.clear()

    def triples(self, dp: "DecisionPoint", holes: "Sequence[tuple[int, int]]") -> np.ndarray:
        """The triple for each holding of ``holes`` at ``dp`` (:meth:`Policy.triples`), the same
        numbers as one holding at a time. The hand values come in arrays: on a flop or turn
        many holdings' HS and potentials from one native pass over the board
        (:func:`features.casper.native_hand_features`), on a river (on any street for a bot
        that reads no potential) their HS from one evaluation of the board's holdings
        (:func:`board_strengths`), before the flop the
        rank or strength of each hand class met (:func:`preflop_ranks`,
        :func:`preflop_strengths`); then the bot's rules run on the arrays (its ``_rows``)
        and :func:`~cbr.policies.base.legal_triples` makes every row legal. A subclass that
        changes the rules or the values they read answers holding by holding (the default),
        and so does every bot when a holding is not two cards off the board (reported there).

        >>> from cbr.game import preset
        >>> from cbr.game.state import HandState
        >>> dp = HandState(preset("holdem.limit.2p")).decision_point()
        >>> HandStrengthPolicy().triples(dp, [(51, 50), (20, 1)]).tolist()    # AA raises, 7c2d folds
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
        """
        cards = self._checked_holes(dp, holes)
        if cards is None:
            return super().triples(dp, holes)
        batchable = self._batchable()
        self._prefill(dp, holes, cards, potential=not batchable or self._reads_potential(dp))
        if not batchable:
            return super().triples(dp, holes)
        raw = self._rows(dp, cards)
        return legal_triples(legal_triples(raw, dp.legal), dp.legal)  # as triple(), then Policy.triples

    @classmethod
    def _batchable(cls) -> bool:
        """Whether this class's batched rules (``_rows``) are those of its ``triple``."""
        hit = _BATCHABLE.get(cls)
        if hit is None:
            owner = next((k for k in cls.__mro__ if "_rows" in k.__dict__), RuleBot)
            names = ("triple", *getattr(owner, "_ROW_RULES", ()), *_VALUE_METHODS)
            hit = _BATCHABLE[cls] = owner is not RuleBot and "triple" in owner.__dict__ and all(
                getattr(cls, m) is getattr(owner, m) for m in names)
        return hit

    def _reads_potential(self, dp: "DecisionPoint") -> bool:
        """Whether the rules read PPOT at ``dp`` (if not, a batch computes the HS alone)."""
        return True

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        """The raw (before :func:`legal_triple`) triples at ``dp`` of the holdings of ``cards``
        (an ``(n, 2)`` int array), as an ``(n, 3)`` array; RuleBot has no rules."""
        raise NotImplementedError

    @staticmethod
    def _checked_holes(dp: "DecisionPoint", holes: "Sequence[tuple[int, int]]") -> Optional[np.ndarray]:
        """``holes`` as an ``(n, 2)`` int array, or None when there are none or any is not two
        distinct cards off the board (:func:`features.casper.checked_holes`)."""
        return checked_holes(holes, tuple(dp.board))

    def _grid(self, board: tuple[int, ...]) -> np.ndarray:
        """The ``(2, 52, 52)`` HS / PPOT grid of ``board`` (new ones all NaN; the last few kept)."""
        grid = self._grids.get(board)
        if grid is None:
            if len(self._grids) >= 8:
                del self._grids[next(iter(self._grids))]
            grid = self._grids[board] = np.full((2, 52, 52), np.nan)
        return grid

    def _values(self, dp: "DecisionPoint", cards: np.ndarray, potential: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(HS, PPOT)`` arrays of the holdings of ``cards`` after the flop (PPOT 0 on the
        river, and when ``potential`` is false): the known values, the rest one holding at a
        time as :meth:`hand_strength` and :meth:`potential` compute them."""
        board = tuple(dp.board)
        grid = self._grid(board)
        a, b = cards[:, 0], cards[:, 1]
        want_pot = potential and len(board) < 5
        hs = grid[0, a, b]
        missing = np.isnan(hs)
        if want_pot:
            missing |= np.isnan(grid[1, a, b])
        for i in np.flatnonzero(missing).tolist():
            hole = tuple(cards[i].tolist())
            hit = self._cache.get((hole, board))
            if hit is None or (want_pot and hit[1] is None):
                hit = self._entry(hole, board, potential=want_pot)  # type: ignore[arg-type]
            grid[0, hole[0], hole[1]] = grid[0, hole[1], hole[0]] = hit[0]
            if hit[1] is not None:
                grid[1, hole[0], hole[1]] = grid[1, hole[1], hole[0]] = hit[1][0]
        if missing.any():
            hs = grid[0, a, b]
        if not want_pot:
            return hs, np.zeros(len(cards))
        return hs, grid[1, a, b]

    def _ehs_rows(self, dp: "DecisionPoint", hs: np.ndarray, ppot: np.ndarray) -> np.ndarray:
        """:meth:`ehs` of every holding from its ``HS`` and ``PPOT``."""
        hs_n = _power(hs, self.opponents(dp))
        return hs_n + (1.0 - hs_n) * ppot

    def _prefill(self, dp: "DecisionPoint", holes: "Sequence[tuple[int, int]]",
                 cards: Optional[np.ndarray] = None, potential: bool = True) -> None:
        """Many holdings' values of a flop, turn or river at once, into the caches (``cards``:
        ``holes`` as :meth:`_checked_holes` gives them): HS and potentials from one native pass
        over a flop or turn (from :data:`BOARD_BATCH_MIN` holdings), or HS alone (a river, or
        ``potential`` false) from :func:`board_strengths` (from :data:`HS_BATCH_MIN`)."""
        board = tuple(dp.board)
        potential = potential and len(board) < 5
        least = BOARD_BATCH_MIN if potential else HS_BATCH_MIN
        if len(board) not in (3, 4, 5) or len(holes) < least or getattr(ev, "IMPLEMENTATION", None) != "native":
            return
        if cards is None:
            cards = self._checked_holes(dp, holes)
            if cards is None:
                return  # bad ones: left to hand_strength, which reports them
        grid = self._grid(board)
        a, b = cards[:, 0], cards[:, 1]
        known = ~np.isnan(grid[1 if potential else 0, a, b])
        if known.all():
            return
        cache = self._cache
        todo = []
        for hole in dict.fromkeys(tuple(h) for h in cards[~known].tolist()):
            hit = cache.get((hole, board))
            if hit is None or (potential and hit[1] is None):
                todo.append(hole)
        if len(todo) < least:
            return
        if len(cache) + len(todo) > 8192:
            self._forget()
            grid = self._grid(board)
        t = np.array(todo, dtype=np.intp)
        if potential:
            values = native_hand_features([tuple(sorted(h)) for h in todo], board)
            for hole, (hs, ppot, npot) in zip(todo, values):
                cache[(hole, board)] = [hs, (ppot, npot)]  # type: ignore[index]
            v = np.array(values, dtype=np.float64)
            grid[0, t[:, 0], t[:, 1]] = grid[0, t[:, 1], t[:, 0]] = v[:, 0]
            grid[1, t[:, 0], t[:, 1]] = grid[1, t[:, 1], t[:, 0]] = v[:, 1]
            return
        hs = board_strengths(t, board)
        river = (0.0, 0.0) if len(board) == 5 else None
        for hole, value in zip(todo, hs.tolist()):   # (none of them cached)
            cache[(hole, board)] = [value, river]
        grid[0, t[:, 0], t[:, 1]] = grid[0, t[:, 1], t[:, 0]] = hs
        if river is not None:
            grid[1, t[:, 0], t[:, 1]] = grid[1, t[:, 1], t[:, 0]] = 0.0

    def hand_strength(self, dp: "DecisionPoint") -> float:
        """HS of the actor's hand against one random opponent (full enumeration), cached."""
        key = self._key(dp)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._entry(*key)
        return hit[0]

    def potential(self, dp: "DecisionPoint") -> tuple[float, float]:
        """``(PPOT, NPOT)`` against one random opponent (0, 0 on the river), cached."""
        key = self._key(dp)
        hit = self._cache.get(key)
        if hit is None or hit[1] is None:
            hit = self._entry(*key, potential=True)
        return hit[1]

    def _entry(self, hole: tuple[int, int], board: tuple[int, ...], potential: bool = False) -> list:
        """The cache entry ``[HS, (PPOT, NPOT) | None]`` of ``(hole, board)``, HS computed if
        missing, and the potentials too with ``potential``."""
        hit = self._cache.get((hole, board))
        if hit is None:
            hit = self._cache[(hole, board)] = [float(ev.hand_strength(hole, board, n_opponents=1)), None]
        if potential and hit[1] is None:
            if len(board) < 5:
                ppot, npot = ev.hand_potential(hole, board)
                hit[1] = (float(ppot), float(npot))
            else:
                hit[1] = (0.0, 0.0)
        return hit

    def evaluation(self, dp: "DecisionPoint") -> tuple[float, float, float]:
        """``(HS, PPOT, NPOT)`` of the actor's hand against one random opponent (post-flop)."""
        hs = self.hand_strength(dp)
        ppot, npot = self.potential(dp)
        return (hs, ppot, npot)

    @staticmethod
    def opponents(dp: "DecisionPoint") -> int:
        """Opponents not folded (at least 1)."""
        return max(1, dp.players_in_hand - 1)

    def hs_n(self, dp: "DecisionPoint") -> float:
        """HS against every opponent still in: ``HS ** n``."""
        return self.hand_strength(dp) ** self.opponents(dp)

    def ehs(self, dp: "DecisionPoint") -> float:
        """``EHS = HS_n + (1 - HS_n) * PPOT`` (waterloo eq. 6; NPOT ignored, as Poki does)."""
        hs, ppot, _ = self.evaluation(dp)
        hs_n = hs ** self.opponents(dp)
        return hs_n + (1.0 - hs_n) * ppot

    def ppot(self, dp: "DecisionPoint") -> float:
        return self.potential(dp)[0]

    def preflop_strength(self, dp: "DecisionPoint") -> float:
        """Pre-flop strength on the heads-up win-probability scale: the pre-flop ``HS_n``
        against the opponents still in (:func:`preflop_best_hand`) mapped through
        :func:`heads_up_equivalent`. Heads-up it is exactly :func:`preflop_win`; with more
        opponents a hand needs a higher percentile to reach the same value.
        """
        if dp.hole is None:
            raise ValueError("a rule bot needs its own hole cards in the decision point")
        return _preflop_strength(tuple(dp.hole), self.opponents(dp))  # type: ignore[arg-type]

    def rank_cutoff(self, dp: "DecisionPoint", rank: int) -> int:
        """A heads-up ``preflop_rank`` cut-off tightened for the opponents still in
        (:func:`rank_cutoff`)."""
        return rank_cutoff(rank, self.opponents(dp))

    @staticmethod
    def bets_faced(dp: "DecisionPoint") -> int:
        """Bets and raises made this street, the big blind not counted."""
        return max(0, dp.street_bets - (1 if dp.street == 0 else 0))

    @staticmethod
    def round_position(dp: "DecisionPoint") -> int:
        """0-based place of the actor in this round's betting order (0 = first to act)."""
        return dp.order.index(dp.position) if dp.position in dp.order else 0


class HandStrengthPolicy(RuleBot):
    """Phase I bot of seed ``waterloo-holdem-bot-report.txt`` (section 4, "Phase I"):
    hand strength only.

    - Pre-flop, "a simple decision function based on the current hand": raise with a
      hand class ranked ``<= raise_rank`` (``preflop_rank``, 1 = AA), call ``<= call_rank``,
      otherwise fold (check when free); with more than one opponent in, both cut-offs
      tighten by :func:`rank_cutoff` (9-handed under the gun: raise AA-JJ, call the top 19 classes).
    - Post-flop, Algorithm 4 with ``HS_n`` in place of EHS (no potential): raise if
      ``HS_n > 0.8``, call if ``HS_n > 0.4``, else fold (check when free).
    """

    name = "hs"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "raise_rank": "pre-flop: raise a hand class ranked this or better (1 = AA, of 169)",
        "call_rank": "pre-flop: call a hand class ranked this or better, else fold",
        "raise_hs": "after the flop: raise with hand strength above this",
        "call_hs": "after the flop: call with hand strength above this, else fold",
    }

    def __init__(self, *, seed: int | None = None, raise_rank: int = 30, call_rank: int = 110,
                 raise_hs: float = 0.8, call_hs: float = 0.4) -> None:
        super().__init__(seed=seed)
        self.raise_rank, self.call_rank = checked_rank("raise_rank", raise_rank), checked_rank("call_rank", call_rank)
        self.raise_hs, self.call_hs = checked_share("raise_hs", raise_hs), checked_share("call_hs", call_hs)

    def triple(self, dp: "DecisionPoint") -> Triple:
        if dp.street == 0:
            rank = ev.preflop_rank(dp.hole)
            raise_cut, call_cut = self.rank_cutoff(dp, self.raise_rank), self.rank_cutoff(dp, self.call_rank)
            action = (0, 0, 1) if rank <= raise_cut else (0, 1, 0) if rank <= call_cut else (1, 0, 0)
        else:
            hs = self.hs_n(dp)
            action = (0, 0, 1) if hs > self.raise_hs else (0, 1, 0) if hs > self.call_hs else (1, 0, 0)
        return legal_triple(action, dp.legal)

    def _reads_potential(self, dp: "DecisionPoint") -> bool:
        return False

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        if dp.street == 0:
            rank = preflop_ranks(cards)
            raise_cut, call_cut = self.rank_cutoff(dp, self.raise_rank), self.rank_cutoff(dp, self.call_rank)
            return PURE_ROWS[np.where(rank <= raise_cut, 2, np.where(rank <= call_cut, 1, 0))]
        hs = _power(self._values(dp, cards, potential=False)[0], self.opponents(dp))
        return PURE_ROWS[np.where(hs > self.raise_hs, 2, np.where(hs > self.call_hs, 1, 0))]


class EHSPolicy(RuleBot):
    """Phase II bot of seed ``waterloo-holdem-bot-report.txt`` (sections 3.3.1-3.3.2, 4):
    pre-flop simulation, EHS, pot odds, bluffing and semi-bluffing.

    - Pre-flop (Algorithm 3): ``threshold = P_win * (1 + position / (2 * players))`` with
      ``P_win`` the simulated win probability against the opponents still in (eq. 1; with
      more than one, on the heads-up scale: :meth:`RuleBot.preflop_strength`) and
      ``position`` the place in the betting order; a player who posted no blind folds
      ``P_win < fold_win``; raise if ``threshold > 0.5``, call if ``> 0.25``, else fold.
      The seed's fold bar is 0.3 on the raw win probability, set for its 2-5 player
      tables (at 9 players it would fold KK); ``fold_win = 0.45`` on the heads-up scale
      is ours: first-in it plays about 43% of holdings 3-handed, 20% 6-handed, 14%
      9-handed. Multi-way it also applies to the blinds once someone raised (on the
      heads-up scale every hand clears the call bar 0.25, so a blind would otherwise call
      any raise). Heads-up it never applies (both players post a blind). With
      ``k`` bets already in (the big blind is the first) the raise bar is
      ``0.5 + reraise_step * (k - 1)``: our limit reading of the seed's bet amount
      ``e^(X-1) * money``, which grows with the margin ``X`` over the threshold.
    - Post-flop (Algorithm 4): ``EHS > raise_ehs`` raise, ``EHS > call_ehs`` call.
    - Otherwise bluff (Algorithm 5): ``EHS < bluff_ehs`` bets with probability
      ``bluff_rate`` (Normal 0.5, Aggressive 0.8, Conservative 0.2) on the flop, and on
      the turn/river only heads-up into a small pot (``<= bluff_pot`` small bets) with at
      most one bet this street.
    - Semi-bluff: with nothing to call before the river, ``PPOT >= semibluff_ppot`` bets
      with probability ``semibluff_rate``.
    - Else pot odds (Algorithm 6): call if river and ``EHS > pot odds``, or before the river
      ``PPOT > pot odds``; fold otherwise (check when free).

    Defaults: the seed's Algorithm 4 raises above 0.8 and its "Normal" bot bluffs half the
    time; ``EHSPolicy(raise_ehs=0.8, bluff_rate=0.5, semibluff_rate=0.5)`` is that bot.
    The defaults (raise above 0.6, the seed's "Conservative" 0.2 bluff rate) were chosen on
    tuning seed 101 (``experiments/tune_ehs.py``, results in
    ``experiments/results/ehs_tuning.json``); the strength experiment reports seed 0.
    """

    name = "ehs"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "raise_ehs": "after the flop: raise with EHS above this",
        "call_ehs": "after the flop: call with EHS above this",
        "bluff_ehs": "bluff (bet) only with EHS below this",
        "bluff_rate": "chance of a bluff when it may bluff",
        "bluff_pot": "bluff on the turn and river only into a pot of at most this many small bets",
        "semibluff_ppot": "with nothing to call before the river, semi-bluff with PPOT at least this",
        "semibluff_rate": "chance of a semi-bluff when it may",
        "reraise_step": "pre-flop: the raise bar rises by this with every bet already in",
        "fold_win": "pre-flop, multi-way: fold a win probability below this (heads-up scale)",
    }

    def __init__(self, *, seed: int | None = None, raise_ehs: float = 0.6, call_ehs: float = 0.4,
                 bluff_ehs: float = 0.2, bluff_rate: float = 0.2, bluff_pot: float = 8.0,
                 semibluff_ppot: float = 0.3, semibluff_rate: float = 0.2,
                 reraise_step: float = 0.1, fold_win: float = 0.45) -> None:
        super().__init__(seed=seed)
        self.raise_ehs, self.call_ehs = checked_share("raise_ehs", raise_ehs), checked_share("call_ehs", call_ehs)
        self.bluff_ehs, self.bluff_rate = checked_share("bluff_ehs", bluff_ehs), checked_share("bluff_rate", bluff_rate)
        self.bluff_pot = checked_positive("bluff_pot", bluff_pot)
        self.semibluff_ppot = checked_share("semibluff_ppot", semibluff_ppot)
        self.semibluff_rate = checked_share("semibluff_rate", semibluff_rate)
        self.reraise_step = checked_share("reraise_step", reraise_step)
        self.fold_win = checked_share("fold_win", fold_win)

    def preflop(self, dp: "DecisionPoint") -> Triple:
        p_win = self.preflop_strength(dp)
        position = self.round_position(dp)
        threshold = p_win * (1.0 + position / (2.0 * dp.players_dealt))
        no_blind = dp.game.blinds[dp.position] <= 0.0
        raised_multiway = self.opponents(dp) > 1 and self.bets_faced(dp) >= 1
        if (no_blind or raised_multiway) and p_win < self.fold_win and dp.to_call > 0:
            return (1.0, 0.0, 0.0)
        raise_bar = 0.5 + self.reraise_step * max(0, dp.street_bets - 1)
        if threshold > raise_bar:
            return (0.0, 0.0, 1.0)
        if threshold > 0.25:
            return (0.0, 1.0, 0.0)
        return (1.0, 0.0, 0.0)

    def postflop(self, dp: "DecisionPoint") -> Triple:
        ehs = self.ehs(dp)
        if ehs > self.raise_ehs:
            return (0.0, 0.0, 1.0)
        if ehs > self.call_ehs:
            free = dp.to_call <= 0
            if free and dp.street < RIVER and self.ppot(dp) >= self.semibluff_ppot:
                return (0.0, 1.0 - self.semibluff_rate, self.semibluff_rate)
            return (0.0, 1.0, 0.0)
        # Too weak to continue on strength: pot odds decide, with a bluff on top.
        if dp.street == RIVER:
            keep = ehs > dp.pot_odds
        else:
            keep = self.ppot(dp) > dp.pot_odds
        base = (0.0, 1.0, 0.0) if keep or dp.to_call <= 0 else (1.0, 0.0, 0.0)
        if dp.to_call <= 0 and dp.street < RIVER and self.ppot(dp) >= self.semibluff_ppot:
            base = (0.0, 1.0 - self.semibluff_rate, self.semibluff_rate)
        rate = self.bluff_rate if ehs < self.bluff_ehs and self._may_bluff(dp) else 0.0
        return tuple((1.0 - rate) * b + (rate if i == 2 else 0.0) for i, b in enumerate(base))  # type: ignore[return-value]

    def _may_bluff(self, dp: "DecisionPoint") -> bool:
        if dp.street == 1:
            return True
        few_players = dp.players_in_hand <= 2
        small_pot = dp.small_bets_in_pot <= self.bluff_pot
        return few_players and small_pot and dp.street_bets <= 1

    def triple(self, dp: "DecisionPoint") -> Triple:
        raw = self.preflop(dp) if dp.street == 0 else self.postflop(dp)
        return legal_triple(raw, dp.legal)

    _ROW_RULES = ("preflop", "postflop", "_may_bluff")

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        """:meth:`preflop` or :meth:`postflop` of every holding, as array operations."""
        if dp.street == 0:
            p_win = preflop_strengths(cards, self.opponents(dp))
            position = self.round_position(dp)
            threshold = p_win * (1.0 + position / (2.0 * dp.players_dealt))
            no_blind = dp.game.blinds[dp.position] <= 0.0
            raised_multiway = self.opponents(dp) > 1 and self.bets_faced(dp) >= 1
            fold = (p_win < self.fold_win) & bool((no_blind or raised_multiway) and dp.to_call > 0)
            raise_bar = 0.5 + self.reraise_step * max(0, dp.street_bets - 1)
            kind = np.where(threshold > raise_bar, 2, np.where(threshold > 0.25, 1, 0))
            return PURE_ROWS[np.where(fold, 0, kind)]
        hs, ppot = self._values(dp, cards)
        ehs = self._ehs_rows(dp, hs, ppot)
        free = dp.to_call <= 0
        semi = (ppot >= self.semibluff_ppot) & bool(free and dp.street < RIVER)
        mixed = np.array([0.0, 1.0 - self.semibluff_rate, self.semibluff_rate])
        keep = ehs > dp.pot_odds if dp.street == RIVER else ppot > dp.pot_odds
        base = PURE_ROWS[np.where(keep | free, 1, 0)]
        base[semi] = mixed
        rate = np.where((ehs < self.bluff_ehs) & self._may_bluff(dp), self.bluff_rate, 0.0)
        weak = (1.0 - rate)[:, None] * base
        weak[:, 0] += 0.0
        weak[:, 1] += 0.0
        weak[:, 2] += rate
        out = np.where((ehs > self.raise_ehs)[:, None], PURE_ROWS[2],
                       np.where((ehs > self.call_ehs)[:, None], np.where(semi[:, None], mixed, PURE_ROWS[1]), weak))
        return out


class PokiFormulaPolicy(RuleBot):
    """A Poki-style formula bot (seed ``billings-challenge-of-poker-poki.txt``, "basic
    betting strategy" and "probability triples"): EHS and the game context go through
    formulas into a mixed strategy ``(f, c, r)``. The seed does not print Poki's rules, so
    the constants are ours:

    - strength ``x`` = pre-flop win probability against the opponents left (heads-up
      scale, :meth:`RuleBot.preflop_strength`), post-flop ``EHS_n``;
    - raise probability ``p_r = clamp((x - t_r) / width + 0.5)`` with
      ``t_r = raise_base + raise_step * k``, ``k`` the bets made this street (the big blind
      not counted): a linear ramp of ``width`` around a raise threshold that rises with
      every bet;
    - continue probability (facing a bet) ``p_k = clamp((x - pot_odds) / width + 0.5)``,
      or 1 before the river when ``PPOT >= pot_odds`` (drawing odds);
    - triple ``(1 - p_r) * (1 - p_k), (1 - p_r) * p_k, p_r``.
    """

    name = "poki"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "raise_base": "strength at which a raise is even money with no bet made this street",
        "raise_step": "that raise threshold's rise with every bet made this street",
        "width": "width of the ramp around each threshold (smaller: closer to pure actions)",
    }

    def __init__(self, *, seed: int | None = None, raise_base: float = 0.62, raise_step: float = 0.08,
                 width: float = 0.1) -> None:
        super().__init__(seed=seed)
        self.raise_base, self.raise_step = checked_share("raise_base", raise_base), checked_share("raise_step", raise_step)
        self.width = checked_share("width", width)

    def triple(self, dp: "DecisionPoint") -> Triple:
        x = self.preflop_strength(dp) if dp.street == 0 else self.ehs(dp)
        threshold = self.raise_base + self.raise_step * self.bets_faced(dp)
        p_raise = _clamp((x - threshold) / self.width + 0.5)
        if dp.to_call <= 0:
            p_cont = 1.0
        else:
            p_cont = _clamp((x - dp.pot_odds) / self.width + 0.5)
            if dp.street in (1, 2) and self.ppot(dp) >= dp.pot_odds:
                p_cont = 1.0
        return legal_triple(((1 - p_raise) * (1 - p_cont), (1 - p_raise) * p_cont, p_raise), dp.legal)

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        if dp.street == 0:
            x = preflop_strengths(cards, self.opponents(dp))
            ppot = np.zeros(len(cards))
        else:
            hs, ppot = self._values(dp, cards)
            x = self._ehs_rows(dp, hs, ppot)
        threshold = self.raise_base + self.raise_step * self.bets_faced(dp)
        p_raise = _clamp_rows((x - threshold) / self.width + 0.5)
        if dp.to_call <= 0:
            p_cont = np.ones(len(cards))
        else:
            p_cont = _clamp_rows((x - dp.pot_odds) / self.width + 0.5)
            if dp.street in (1, 2):
                p_cont = np.where(ppot >= dp.pot_odds, 1.0, p_cont)
        return np.stack([(1 - p_raise) * (1 - p_cont), (1 - p_raise) * p_cont, p_raise], axis=1)


class LooseAggressivePolicy(RuleBot):
    """A loose-aggressive rule bot: plays many hands and bets them hard. The style is the
    "loose" and "aggressive" ends of the player attributes of seed
    ``itu-adaptive-poker-computer-thesis.txt`` (section on player modelling:
    aggressiveness = how often it bets/raises, tightness = how closely actions follow the
    hand); the rules are ours:

    - pre-flop: raise with a hand class ranked ``<= raise_rank`` (``<= reraise_rank``
      facing a raise), call ``<= call_rank``, else fold; multi-way every cut-off tightens
      by :func:`rank_cutoff`;
    - post-flop: raise with ``EHS >= raise_ehs``; with nothing to call, bet ``stab_rate``
      of the time anyway; facing a bet, raise a draw (``PPOT >= draw_ppot``) half the
      time, call when ``EHS`` or ``PPOT`` beats the pot odds (loosened by ``looseness``),
      else fold.
    """

    name = "lag"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "raise_rank": "pre-flop: raise a hand class ranked this or better (1 = AA, of 169)",
        "reraise_rank": "pre-flop: re-raise a raise with a class ranked this or better",
        "call_rank": "pre-flop: call with a class ranked this or better, else fold",
        "raise_ehs": "after the flop: raise with EHS at least this",
        "stab_rate": "chance of a bet with nothing to call after the flop, whatever the hand",
        "draw_ppot": "facing a bet, raise a draw (PPOT at least this) half the time",
        "looseness": "the pot odds it calls against are scaled by this (below 1: calls more)",
    }

    def __init__(self, *, seed: int | None = None, raise_rank: int = 50, reraise_rank: int = 20,
                 call_rank: int = 120, raise_ehs: float = 0.6, stab_rate: float = 0.5,
                 draw_ppot: float = 0.25, looseness: float = 0.8) -> None:
        super().__init__(seed=seed)
        self.raise_rank, self.reraise_rank = checked_rank("raise_rank", raise_rank), checked_rank("reraise_rank", reraise_rank)
        self.call_rank = checked_rank("call_rank", call_rank)
        self.raise_ehs, self.stab_rate = checked_share("raise_ehs", raise_ehs), checked_share("stab_rate", stab_rate)
        self.draw_ppot, self.looseness = checked_share("draw_ppot", draw_ppot), checked_positive("looseness", looseness)

    def triple(self, dp: "DecisionPoint") -> Triple:
        if dp.street == 0:
            rank = ev.preflop_rank(dp.hole)
            bar = self.rank_cutoff(dp, self.reraise_rank if self.bets_faced(dp) >= 1 else self.raise_rank)
            raw = (0, 0, 1) if rank <= bar else (0, 1, 0) if rank <= self.rank_cutoff(dp, self.call_rank) else (1, 0, 0)
            return legal_triple(raw, dp.legal)
        ehs = self.ehs(dp)
        if ehs >= self.raise_ehs:
            return legal_triple((0, 0, 1), dp.legal)
        if dp.to_call <= 0:
            return legal_triple((0, 1 - self.stab_rate, self.stab_rate), dp.legal)
        ppot = self.ppot(dp) if dp.street < RIVER else 0.0
        if ppot >= self.draw_ppot:
            return legal_triple((0, 0.5, 0.5), dp.legal)
        odds = dp.pot_odds * self.looseness
        keep = ehs > odds or ppot > odds
        return legal_triple((0, 1, 0) if keep else (1, 0, 0), dp.legal)

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        if dp.street == 0:
            rank = preflop_ranks(cards)
            bar = self.rank_cutoff(dp, self.reraise_rank if self.bets_faced(dp) >= 1 else self.raise_rank)
            call = self.rank_cutoff(dp, self.call_rank)
            return PURE_ROWS[np.where(rank <= bar, 2, np.where(rank <= call, 1, 0))]
        hs, ppot = self._values(dp, cards)   # PPOT 0 on the river
        ehs = self._ehs_rows(dp, hs, ppot)
        if dp.to_call <= 0:
            rest = np.broadcast_to(np.array([0.0, 1 - self.stab_rate, self.stab_rate]), (len(cards), 3))
        else:
            odds = dp.pot_odds * self.looseness
            keep = (ehs > odds) | (ppot > odds)
            rest = np.where((ppot >= self.draw_ppot)[:, None], np.array([0.0, 0.5, 0.5]),
                            PURE_ROWS[np.where(keep, 1, 0)])
        return np.where((ehs >= self.raise_ehs)[:, None], PURE_ROWS[2], rest)


class StationPolicy(RuleBot):
    """A loose-passive calling station that raises only the nuts: it checks or calls every
    time, and bets or raises only when its hand is (nearly) unbeatable: pre-flop with
    ``preflop_strength >= preflop_nuts`` (0.82: AA, KK heads-up), after the flop with hand
    strength ``>= nuts`` (0.97) against one random hand. It never folds. A style absent
    from the default case base (whose bots fold weak hands and bet strong ones), for the
    retention experiment (CASPER's section VIII).

    >>> from cbr.game import preset
    >>> from cbr.game.state import HandState
    >>> from evaluator_ext import parse_cards
    >>> s = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("7c2d"), parse_cards("AsAh")])
    >>> dp = s.decision_point(); dp.position, StationPolicy().triple(dp)   # AA acts first pre-flop: raises
    (1, (0.0, 0.0, 1.0))
    """

    name = "station"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "nuts": "after the flop: bet or raise only with hand strength at least this",
        "preflop_nuts": "pre-flop: raise only with a pre-flop strength at least this (0.82: AA, KK)",
    }

    def __init__(self, *, seed: int | None = None, nuts: float = 0.97, preflop_nuts: float = 0.82) -> None:
        super().__init__(seed=seed)
        if not 0.0 <= nuts <= 1.0 or not 0.0 <= preflop_nuts <= 1.0:
            raise ValueError(f"nuts and preflop-nuts are strengths in [0, 1], got {nuts!r}, {preflop_nuts!r}")
        self.nuts, self.preflop_nuts = float(nuts), float(preflop_nuts)

    def triple(self, dp: "DecisionPoint") -> Triple:
        strong = (self.preflop_strength(dp) >= self.preflop_nuts if dp.street == 0
                  else self.hand_strength(dp) >= self.nuts)
        return legal_triple((0.0, 0.0, 1.0) if strong else (0.0, 1.0, 0.0), dp.legal)

    def _reads_potential(self, dp: "DecisionPoint") -> bool:
        return False

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        strong = (preflop_strengths(cards, self.opponents(dp)) >= self.preflop_nuts if dp.street == 0
                  else self._values(dp, cards, potential=False)[0] >= self.nuts)
        return PURE_ROWS[np.where(strong, 2, 1)]
