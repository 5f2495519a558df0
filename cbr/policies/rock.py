"""A tight-passive rule bot (plugin ``rock``): few hands, rarely a bet.

The "tight" and "passive" ends of the player attributes of seed
``itu-adaptive-poker-computer-thesis.txt`` (section 3.1: aggressiveness is how often a
player bets or raises, tightness how closely the actions follow the hand), the opposite
corner of :class:`~cbr.policies.rules.LooseAggressivePolicy` (``lag``). The rules are ours:

- pre-flop: raise only a hand class ranked ``<= raise_rank`` (3: AA, KK, QQ), call one
  ranked ``<= call_rank`` (25), else fold (check when free); multi-way both cut-offs
  tighten by :func:`~evaluator_ext.preflop_odds.rank_cutoff`;
- post-flop: bet or raise only with hand strength ``>= nuts`` (0.9 against one random
  hand); otherwise check when free, call with ``EHS >= call_ehs`` (0.6), else fold.

>>> from cbr.game import preset
>>> from cbr.game.state import HandState
>>> from evaluator_ext import parse_cards
>>> s = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("AsAh"), parse_cards("7c2d")])
>>> dp = s.decision_point(); dp.position, RockPolicy().triple(dp)   # 72o first to act: folds
(1, (1.0, 0.0, 0.0))
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import evaluator_ext as ev
from cbr.policies.base import Triple, legal_triple
from cbr.policies.rules import PURE_ROWS, RuleBot, preflop_ranks

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint

__all__ = ["RockPolicy"]


class RockPolicy(RuleBot):
    """Tight-passive: see the module docstring for the rules and the defaults."""

    name = "rock"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "raise_rank": "pre-flop: raise only a hand class ranked this or better (3: AA, KK, QQ)",
        "call_rank": "pre-flop: call a hand class ranked this or better, else fold",
        "nuts": "after the flop: bet or raise only with hand strength at least this",
        "call_ehs": "after the flop: call a bet with EHS at least this, else fold",
    }

    def __init__(self, *, seed: int | None = None, raise_rank: int = 3, call_rank: int = 25,
                 nuts: float = 0.9, call_ehs: float = 0.6) -> None:
        super().__init__(seed=seed)
        if not 1 <= raise_rank <= 169 or not 1 <= call_rank <= 169:
            raise ValueError(f"raise-rank and call-rank are hand-class ranks 1..169, got {raise_rank!r}, {call_rank!r}")
        if not 0.0 <= nuts <= 1.0 or not 0.0 <= call_ehs <= 1.0:
            raise ValueError(f"nuts and call-ehs are strengths in [0, 1], got {nuts!r}, {call_ehs!r}")
        self.raise_rank, self.call_rank = int(raise_rank), int(call_rank)
        self.nuts, self.call_ehs = float(nuts), float(call_ehs)

    def triple(self, dp: "DecisionPoint") -> Triple:
        if dp.street == 0:
            rank = ev.preflop_rank(dp.hole)
            if rank <= self.rank_cutoff(dp, self.raise_rank):
                raw = (0.0, 0.0, 1.0)
            elif rank <= self.rank_cutoff(dp, self.call_rank):
                raw = (0.0, 1.0, 0.0)
            else:
                raw = (1.0, 0.0, 0.0)
            return legal_triple(raw, dp.legal)
        if self.hand_strength(dp) >= self.nuts:
            return legal_triple((0.0, 0.0, 1.0), dp.legal)
        if dp.to_call <= 0 or self.ehs(dp) >= self.call_ehs:
            return legal_triple((0.0, 1.0, 0.0), dp.legal)
        return legal_triple((1.0, 0.0, 0.0), dp.legal)

    def _reads_potential(self, dp: "DecisionPoint") -> bool:
        return dp.to_call > 0   # EHS only facing a bet

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        """:meth:`triple`'s rules for every holding at once (:meth:`RuleBot.triples`)."""
        if dp.street == 0:
            rank = preflop_ranks(cards)
            raise_cut, call_cut = self.rank_cutoff(dp, self.raise_rank), self.rank_cutoff(dp, self.call_rank)
            return PURE_ROWS[np.where(rank <= raise_cut, 2, np.where(rank <= call_cut, 1, 0))]
        free = dp.to_call <= 0
        hs, ppot = self._values(dp, cards, potential=not free)
        call = np.ones(len(cards), dtype=bool) if free else self._ehs_rows(dp, hs, ppot) >= self.call_ehs
        return PURE_ROWS[np.where(hs >= self.nuts, 2, np.where(call, 1, 0))]
