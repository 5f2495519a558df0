"""The cbr bot's re-use rules, as a table: from the retrieved cases' vote
(:class:`~cbr.retrieval.triple.Vote`) to the action played, and why.

:data:`REUSE` maps each rule's name to a function of a :class:`Spot` (the vote, its triple made
legal, the legal actions, the random draws and the shaping options) that returns what it
:class:`Reused`:

``probabilistic`` (CASPER)
    Sample an action from the triple; shaped first (:func:`shaped_triple`) when ``sharpen``
    or ``outcome_weight`` say so.
``max-frequency``
    The most frequent legal action (:func:`max_frequency_action`).
``best-outcome``
    The legal action whose retrieved cases won the most on average
    (:func:`best_outcome_action`); without any known outcome, ``probabilistic`` plays
    instead and the reason says so.

Ties are broken in :data:`TIE_ORDER`. :func:`guard_strength` is the odds guard's effective
strength (the guard itself needs the case base's feature names; the bot applies it).

>>> sorted(REUSE) == sorted(REUSE_POLICIES)
True
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from cbr.errors import counted
from cbr.game.actions import ACTION_WORDS
from cbr.policies.base import KINDS, Triple, legal_triple, sample_action
from cbr.retrieval.triple import Vote, outcome_means

__all__ = ["REUSE", "REUSE_POLICIES", "PLAYED", "TIE_ORDER", "Spot", "Reused", "max_frequency_action", "best_outcome_action",
           "shaped_triple", "guard_strength", "probabilistic", "max_frequency", "best_outcome"]

#: Order in which tied actions are preferred: check/call, bet/raise, fold.
TIE_ORDER = "crf"


def _one_hot(kind: str) -> Triple:
    return tuple(1.0 if k == kind else 0.0 for k in KINDS)  # type: ignore[return-value]


def max_frequency_action(triple: Sequence[float], legal: str) -> str:
    """The legal action with the largest share of ``triple`` (made legal first, so a
    capped raise's share counts for the call); ties in :data:`TIE_ORDER`.

    >>> max_frequency_action((0.4, 0.2, 0.4), "fcr")      # tie: bet/raise before fold
    'r'
    >>> max_frequency_action((0.1, 0.3, 0.6), "fc")       # capped: the raise share calls
    'c'
    >>> max_frequency_action((0.9, 0.05, 0.05), "cr")     # checking is free: never fold
    'c'
    """
    p = legal_triple(tuple(triple), legal)
    best = max(p)
    return next(k for k in TIE_ORDER if k in legal and p[KINDS.index(k)] == best)


def _best(means: dict[str, float]) -> Optional[str]:
    """The action of the highest mean (ties in :data:`TIE_ORDER`), None without any."""
    if not means:
        return None
    top = max(means.values())
    return next(k for k in TIE_ORDER if k in means and means[k] == top)


def best_outcome_action(actions: Sequence[str] | Any, outcomes: Sequence[float] | Any, legal: str
                        ) -> tuple[Optional[str], dict[str, float]]:
    """The legal action whose cases have the highest mean known outcome, and the means.

    ``actions``: ``'f'/'c'/'r'`` (or codes 0/1/2) per case; ``outcomes`` per case (NaN =
    unknown). An illegal fold or raise counts as check/call, as :func:`legal_triple`
    moves them (:func:`~cbr.retrieval.triple.outcome_means`). Returns ``(None, {})`` when no
    case of a legal action has an outcome; ties in :data:`TIE_ORDER`.

    >>> best_outcome_action(["c", "r", "r", "f"], [0.5, 2.0, 0.0, -1.0], "fcr")
    ('r', {'f': -1.0, 'c': 0.5, 'r': 1.0})
    >>> best_outcome_action(["c", "r"], [math.nan, math.nan], "fcr")
    (None, {})
    """
    from cbr.retrieval import action_codes

    means = outcome_means(action_codes(actions), outcomes, legal)
    action = _best(means)
    return (action, means) if action is not None else (None, {})


def guard_strength(hand_strength: float, positive_potential: float, players_in_hand: int) -> float:
    """Effective hand strength against the ``players_in_hand - 1`` opponents, as the EHS bot
    computes it: ``HS_n + (1 - HS_n) * PPOT`` with ``HS_n = HS ** opponents`` (CASPER's
    features 7, 8 and 2). The odds guard compares it with the pot odds.

    >>> round(guard_strength(0.5, 0.2, 3), 3)
    0.4
    """
    hs_n = hand_strength ** max(players_in_hand - 1, 1)
    return hs_n + (1.0 - hs_n) * positive_potential


def shaped_triple(triple: Sequence[float], legal: str, *, sharpen: float = 1.0, outcome_weight: float = 0.0,
                  means: Optional[dict[str, float]] = None) -> Triple:
    """The triple the ``probabilistic`` re-use samples once shaped: each legal action's share
    raised to the power ``sharpen`` (1: CASPER's sampling; towards infinity: max-frequency)
    and multiplied by ``exp(outcome_weight * mean outcome)`` of its retrieved cases
    (``means`` as :func:`best_outcome_action` gives them, in small bets; an action without
    a known mean keeps its share), then normalised. Actions with no share stay at 0.

    >>> [round(p, 3) for p in shaped_triple((0.2, 0.3, 0.5), "fcr", sharpen=2)]
    [0.105, 0.237, 0.658]
    >>> [round(p, 3) for p in shaped_triple((0.0, 0.5, 0.5), "fcr", outcome_weight=1.0, means={"c": 0.0, "r": 1.0})]
    [0.0, 0.269, 0.731]

    A negative weight tilts towards the actions whose cases lost, as far as the weight is large:

    >>> [round(p, 3) for p in shaped_triple((0.0, 0.5, 0.5), "fcr", outcome_weight=-1e9, means={"c": 0.0, "r": 1.0})]
    [0.0, 1.0, 0.0]
    """
    p = legal_triple(tuple(triple), legal)
    means = means or {}
    tilt = {k: outcome_weight * m for k, m in means.items()}
    top = max(tilt.values(), default=0.0)  # shift the exponents by the largest, whatever the weight's sign: no overflow
    w = [(x ** sharpen if x > 0.0 else 0.0) * (math.exp(tilt[k] - top) if k in tilt else 1.0)
         for k, x in zip(KINDS, p)]
    total = sum(w)
    if total <= 0.0 or not math.isfinite(total):
        return p
    return (w[0] / total, w[1] / total, w[2] / total)


@dataclass(frozen=True)
class Spot:
    """What a re-use rule decides from: the retrieved cases' ``vote``, its ``triple`` made
    legal for ``legal``, the ``rng`` of the draws, the shaping options of ``probabilistic``
    and the ``casebase``'s name (for the reasons)."""

    vote: Vote
    triple: Triple
    legal: str
    rng: random.Random
    sharpen: float = 1.0
    outcome_weight: float = 0.0
    casebase: str = ""

    @property
    def basis(self) -> str:
        """Which cases voted, in words."""
        return (f"{counted(len(self.vote), self.vote.street + ' case')} "
                + ("(the most similar: none reached the threshold)" if self.vote.fallback
                   else "at or above the similarity threshold"))

    @property
    def shares(self) -> str:
        """The legal triple, in words."""
        t = self.triple
        return f"fold {t[0]:.2f}, check/call {t[1]:.2f}, bet/raise {t[2]:.2f}"


@dataclass(frozen=True)
class Reused:
    """What a re-use rule decided: the ``action``, the triple it was drawn from (``played``;
    one-hot for a deterministic choice), the rule that decided (``reuse``) and ``why``."""

    action: str
    played: Triple
    reuse: str
    why: str


def _shaping(spot: Spot) -> bool:
    return spot.sharpen != 1.0 or spot.outcome_weight != 0.0


def _probabilistic_played(spot: Spot) -> Triple:
    if not _shaping(spot):
        return spot.triple
    means = spot.vote.outcome_means(spot.legal) if spot.outcome_weight != 0.0 else {}
    return shaped_triple(spot.triple, spot.legal, sharpen=spot.sharpen, outcome_weight=spot.outcome_weight,
                         means=means)


def probabilistic(spot: Spot) -> Reused:
    """CASPER's re-use: sample from the triple (shaped first when the options say so)."""
    played = _probabilistic_played(spot)
    action = sample_action(played, spot.rng)
    if not _shaping(spot):
        return Reused(action, played, "probabilistic",
                      f"{spot.basis} vote {spot.shares}; sampled {ACTION_WORDS[action]}")
    return Reused(action, played, "probabilistic",
                  f"{spot.basis} vote {spot.shares}; shaped (sharpen {spot.sharpen:g}, outcome weight "
                  f"{spot.outcome_weight:g}) to fold {played[0]:.2f}, check/call {played[1]:.2f}, "
                  f"bet/raise {played[2]:.2f}; sampled {ACTION_WORDS[action]}")


def max_frequency(spot: Spot) -> Reused:
    """The most frequent legal action."""
    action = max_frequency_action(spot.triple, spot.legal)
    return Reused(action, _one_hot(action), "max-frequency",
                  f"{spot.basis} vote {spot.shares}; the most frequent legal action is {ACTION_WORDS[action]}")


def _best_outcome_means(spot: Spot) -> tuple[dict[str, float], str]:
    if spot.vote.outcomes is None:
        return {}, f"case base {spot.casebase!r} has no outcome column"
    return spot.vote.outcome_means(spot.legal), "none of the retrieved cases has a known outcome"


def best_outcome(spot: Spot) -> Reused:
    """The legal action whose retrieved cases won the most on average; without any known
    outcome, plain ``probabilistic`` sampling, saying so."""
    means, missing = _best_outcome_means(spot)
    action = _best(means)
    if action is None:
        drawn = sample_action(spot.triple, spot.rng)
        return Reused(drawn, spot.triple, "probabilistic",
                      f"best-outcome fell back to probabilistic ({missing}); {spot.basis} vote {spot.shares}")
    avg = ", ".join(f"{ACTION_WORDS[k]} {v:+.2f}" for k, v in means.items())
    return Reused(action, _one_hot(action), "best-outcome",
                  f"{spot.basis}; mean outcome in small bets: {avg}; best is {ACTION_WORDS[action]}")


def _best_outcome_played(spot: Spot) -> Triple:
    action = _best(_best_outcome_means(spot)[0])
    return spot.triple if action is None else _one_hot(action)


#: The re-use rules by name (the ``reuse`` option of the cbr bot).
REUSE: dict[str, Callable[[Spot], Reused]] = {
    "probabilistic": probabilistic,
    "max-frequency": max_frequency,
    "best-outcome": best_outcome,
}
REUSE_POLICIES = tuple(REUSE)

#: The triple each rule plays (``REUSE[name](spot).played``) without drawing an action or
#: saying why: what a batch of triples (every holding at a spot) needs. Each rule draws at
#: most once from ``spot.rng``, so the played triple never depends on the draw.
PLAYED: dict[str, Callable[[Spot], Triple]] = {
    "probabilistic": _probabilistic_played,
    "max-frequency": lambda spot: _one_hot(max_frequency_action(spot.triple, spot.legal)),
    "best-outcome": _best_outcome_played,
}
