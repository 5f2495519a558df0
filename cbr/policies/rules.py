"""Rule bots from the seeds: hand strength, EHS + pot odds + bluffing, a Poki-style formula,
and a loose-aggressive bot.

All of them read the hand through the evaluator facade (``evaluator_ext``): hand strength
HS against one random hand by full enumeration, hand potential (PPOT, NPOT) and, before
the flop, the 169-class rank or a seeded Monte Carlo win probability. With ``n``
opponents left (players not folded, not players dealt), ``HS_n = HS ** n`` (Poki) and
``EHS = HS_n + (1 - HS_n) * PPOT`` (seed ``waterloo-holdem-bot-report.txt`` eq. 6).
Post-flop numbers are cached per ``(hole, board)`` (one evaluation per street), pre-flop
numbers per hand class.

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

from typing import TYPE_CHECKING

import numpy as np

import evaluator_ext as ev
from cbr.policies.base import Policy, Triple, legal_triple
from evaluator_ext.preflop_odds import (
    heads_up_equivalent,
    preflop_best_hand,
    preflop_win,
    rank_cutoff,
)
from features.casper import BOARD_BATCH_MIN, native_hand_features

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from cbr.game.decision import DecisionPoint

RIVER = 3

def _clamp(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


class RuleBot(Policy):
    """Shared machinery of the rule bots: cached HS / potential / EHS for a decision point."""

    name = "rulebot"

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self._cache: dict[tuple[tuple[int, int], tuple[int, ...]], list] = {}  # [HS, (PPOT, NPOT) | None]

    def reset(self) -> None:
        self._cache.clear()

    # ---- hand evaluation (cached) ----
    def _key(self, dp: "DecisionPoint") -> tuple[tuple[int, int], tuple[int, ...]]:
        if dp.hole is None:
            raise ValueError("a rule bot needs its own hole cards in the decision point")
        if len(self._cache) > 8192:  # old hands: not needed any more (every holding of a board fits:
            # an exploitability run asks for all of them, again at each decision on the board)
            self._cache.clear()
        return (tuple(dp.hole), tuple(dp.board))  # type: ignore[return-value]

    def triples(self, dp: "DecisionPoint", holes: "Sequence[tuple[int, int]]") -> np.ndarray:
        """The triple for each holding of ``holes`` at ``dp`` (:meth:`Policy.triples`). On a
        flop or turn, many holdings' HS and potentials come from one native pass over the
        board (:func:`features.casper.native_hand_features`: the same values as one holding
        at a time) before the rules run holding by holding."""
        self._prefill(dp, holes)
        return super().triples(dp, holes)

    def _prefill(self, dp: "DecisionPoint", holes: "Sequence[tuple[int, int]]") -> None:
        board = tuple(dp.board)
        if len(board) not in (3, 4) or len(holes) < BOARD_BATCH_MIN or getattr(ev, "IMPLEMENTATION", None) != "native":
            return
        todo = list(dict.fromkeys(tuple(h) for h in holes if (tuple(h), board) not in self._cache))
        if len(todo) < BOARD_BATCH_MIN or any(len(h) != 2 or set(h) & set(board) for h in todo):
            return  # a few, or bad ones (left to hand_strength, which reports them)
        if len(self._cache) + len(todo) > 8192:
            self._cache.clear()
        values = native_hand_features([tuple(sorted(h)) for h in todo], board)
        for hole, (hs, ppot, npot) in zip(todo, values):
            self._cache[(hole, board)] = [hs, (ppot, npot)]  # type: ignore[index]

    def hand_strength(self, dp: "DecisionPoint") -> float:
        """HS of the actor's hand against one random opponent (full enumeration), cached."""
        key = self._key(dp)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = [float(ev.hand_strength(dp.hole, dp.board, n_opponents=1)), None]
        return hit[0]

    def potential(self, dp: "DecisionPoint") -> tuple[float, float]:
        """``(PPOT, NPOT)`` against one random opponent (0, 0 on the river), cached."""
        self.hand_strength(dp)
        hit = self._cache[(tuple(dp.hole), tuple(dp.board))]  # type: ignore[index, arg-type]
        if hit[1] is None:
            if len(dp.board) < 5:
                ppot, npot = ev.hand_potential(dp.hole, dp.board)
                hit[1] = (float(ppot), float(npot))
            else:
                hit[1] = (0.0, 0.0)
        return hit[1]

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
        n = self.opponents(dp)
        if n == 1:
            return preflop_win(tuple(dp.hole), 1)  # type: ignore[arg-type]  # == the mapping below, cheaper
        return heads_up_equivalent(preflop_best_hand(tuple(dp.hole), n))  # type: ignore[arg-type]

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

    def __init__(self, *, seed: int | None = None, raise_rank: int = 30, call_rank: int = 110,
                 raise_hs: float = 0.8, call_hs: float = 0.4) -> None:
        super().__init__(seed=seed)
        self.raise_rank, self.call_rank = raise_rank, call_rank
        self.raise_hs, self.call_hs = raise_hs, call_hs

    def triple(self, dp: "DecisionPoint") -> Triple:
        if dp.street == 0:
            rank = ev.preflop_rank(dp.hole)
            raise_cut, call_cut = self.rank_cutoff(dp, self.raise_rank), self.rank_cutoff(dp, self.call_rank)
            action = (0, 0, 1) if rank <= raise_cut else (0, 1, 0) if rank <= call_cut else (1, 0, 0)
        else:
            hs = self.hs_n(dp)
            action = (0, 0, 1) if hs > self.raise_hs else (0, 1, 0) if hs > self.call_hs else (1, 0, 0)
        return legal_triple(action, dp.legal)


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

    def __init__(self, *, seed: int | None = None, raise_ehs: float = 0.6, call_ehs: float = 0.4,
                 bluff_ehs: float = 0.2, bluff_rate: float = 0.2, bluff_pot: float = 8.0,
                 semibluff_ppot: float = 0.3, semibluff_rate: float = 0.2,
                 reraise_step: float = 0.1, fold_win: float = 0.45) -> None:
        super().__init__(seed=seed)
        self.raise_ehs, self.call_ehs = raise_ehs, call_ehs
        self.bluff_ehs, self.bluff_rate, self.bluff_pot = bluff_ehs, bluff_rate, bluff_pot
        self.semibluff_ppot, self.semibluff_rate = semibluff_ppot, semibluff_rate
        self.reraise_step = reraise_step
        self.fold_win = fold_win

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

    def __init__(self, *, seed: int | None = None, raise_base: float = 0.62, raise_step: float = 0.08,
                 width: float = 0.1) -> None:
        super().__init__(seed=seed)
        self.raise_base, self.raise_step, self.width = raise_base, raise_step, width

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

    def __init__(self, *, seed: int | None = None, raise_rank: int = 50, reraise_rank: int = 20,
                 call_rank: int = 120, raise_ehs: float = 0.6, stab_rate: float = 0.5,
                 draw_ppot: float = 0.25, looseness: float = 0.8) -> None:
        super().__init__(seed=seed)
        self.raise_rank, self.reraise_rank, self.call_rank = raise_rank, reraise_rank, call_rank
        self.raise_ehs, self.stab_rate = raise_ehs, stab_rate
        self.draw_ppot, self.looseness = draw_ppot, looseness

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

    def __init__(self, *, seed: int | None = None, nuts: float = 0.97, preflop_nuts: float = 0.82) -> None:
        super().__init__(seed=seed)
        if not 0.0 <= nuts <= 1.0 or not 0.0 <= preflop_nuts <= 1.0:
            raise ValueError(f"nuts and preflop-nuts are strengths in [0, 1], got {nuts!r}, {preflop_nuts!r}")
        self.nuts, self.preflop_nuts = float(nuts), float(preflop_nuts)

    def triple(self, dp: "DecisionPoint") -> Triple:
        strong = (self.preflop_strength(dp) >= self.preflop_nuts if dp.street == 0
                  else self.hand_strength(dp) >= self.nuts)
        return legal_triple((0.0, 0.0, 1.0) if strong else (0.0, 1.0, 0.0), dp.legal)
