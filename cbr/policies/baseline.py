"""Baseline opponents: random, always-fold, always-call, always-raise.

``RandomPolicy`` is CASPER's baseline (seed ``watson-improving-casper-cbr-bot.txt``): it
picks uniformly among the *legal* actions, so it never folds when it can check.

>>> from cbr.game import preset
>>> from cbr.game.decision import DecisionPoint
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=0, position=1, player="p2",
...     hole=(0, 5), board=(), folded=(False, False), all_in=(False, False),
...     acted=(False, False), order=(1, 0), street_bets=1, committed=(10.0, 5.0),
...     total_committed=(10.0, 5.0), previous_round_bets=0, legal="fcr")
>>> RandomPolicy().triple(dp), AlwaysCallPolicy().triple(dp), AlwaysRaisePolicy().triple(dp)
((0.3333333333333333, 0.3333333333333333, 0.3333333333333333), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from cbr.policies.base import KINDS, Policy, Triple, legal_triple

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint


class BlindPolicy(Policy):
    """A policy whose triple does not depend on its cards: every holding answers alike."""

    def triples(self, dp: "DecisionPoint", holes: Sequence[tuple[int, int]]) -> np.ndarray:
        return np.tile(np.asarray(self.triple(dp), dtype=float), (len(holes), 1))


class RandomPolicy(BlindPolicy):
    """Uniform over the legal actions (fold only when facing a bet)."""

    name = "random"

    def triple(self, dp: "DecisionPoint") -> Triple:
        share = 1.0 / len(dp.legal)
        return legal_triple(tuple(share if k in dp.legal else 0.0 for k in KINDS), dp.legal)  # type: ignore[arg-type]


class AlwaysFoldPolicy(BlindPolicy):
    """Folds whenever it faces a bet, checks when checking is free (a best response wins
    exactly 750 mbb/g from it heads-up: the big blind when it is in the big blind, the small
    blind when it is in the small blind)."""

    name = "fold"

    def triple(self, dp: "DecisionPoint") -> Triple:
        return legal_triple((1.0, 0.0, 0.0), dp.legal)


class AlwaysCallPolicy(BlindPolicy):
    """The calling station: checks or calls every time."""

    name = "call"

    def triple(self, dp: "DecisionPoint") -> Triple:
        return legal_triple((0.0, 1.0, 0.0), dp.legal)


class AlwaysRaisePolicy(BlindPolicy):
    """The maniac: bets or raises whenever it may, calls when the street is capped."""

    name = "raise"

    def triple(self, dp: "DecisionPoint") -> Triple:
        return legal_triple((0.0, 0.0, 1.0), dp.legal)
