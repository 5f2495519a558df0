"""Poki's weight tables: per opponent, one weight per two-card holding (1,326 of them).

Seed ``billings-challenge-of-poker-poki.txt`` ("weighting the enumerations", "opponent
modeling"): every entry starts each hand at 1, holdings that contain a known card (our
hole cards, the board) at 0; after each observed action of the opponent every entry is
multiplied by the probability that the opponent would have taken that action holding it
(the *re-weighting*: the old table is the prior, the new one the posterior). Weighted
hand strength and potential multiply each holding's count by its weight
(``evaluator_ext.hand_strength(..., weights=...)``).

The predicted action distribution of a holding ``h`` (its probability triple) comes from
the opponent's player model (:mod:`cbr.models.player_model`) through the linear
interpolation of the Waterloo report's algorithm 7 (seed ``waterloo-holdem-bot-report.txt``,
section 3.4.1), ``clamp((s_h - mu + delta) / (2 * delta), 0, 1)``:

- ``s_h``: the holding's strength as a percentile of the opponent's *current* weighted
  range (0 = weakest, 1 = strongest; ties count half). The strength is the holding's hand
  strength against one random holding on the board (immediate HS, Poki), before the flop
  its heads-up percentile among the 1,326 starting holdings;
- raise: ``P_r(h) = clamp((s_h - mu_r + delta) / (2 delta))`` with ``mu_r = 1 - a``: an
  opponent who bets or raises a fraction ``a`` of the time (aggressiveness) does so with
  the top ``a`` of his range;
- continue (facing a bet): ``P_k(h) = clamp((s_h - mu_k + delta) / (2 delta))`` with
  ``mu_k = 1 - r``: he folds the bottom ``1 - r`` (riskiness ``r``); with nothing to call
  ``P_k = 1``;
- triple ``(1 - P_k, P_k - min(P_r, P_k), min(P_r, P_k))``, made legal (a raise that is
  not allowed is a call);
- ``delta = clamp(0.5 * (1 - tightness), MIN_SPREAD, MAX_SPREAD)``: a tight player's
  actions follow his cards closely (a sharp step), a loose one's (bluffs, slow play)
  less so (a wide ramp).

Re-weighting after action ``x``: ``w[h] <- max(w[h] * P_x(h), LOWEST_WEIGHT)`` for every
possible holding (Poki; the floor, algorithm 7's ``lowest_weight``, keeps any holding
possible, so a bluff never makes the table wrong for good).

>>> import evaluator_ext as ev
>>> table = WeightTable(dead=ev.parse_cards("2c3d"))
>>> int((table.weights == 0).sum())          # 101 holdings contain 2c or 3d
101
>>> model = ActionModel(raise_rate=0.2, fold_rate=0.5, spread=0.1)
>>> table.reweight("r", holding_strengths(()), model, facing_bet=True)
>>> aces, seven_deuce = ev.combo_index(51, 50), ev.combo_index(20, 1)
>>> float(table.weights[aces]), float(table.weights[seven_deuce])     # AsAh kept, 7c2d floored
(1.0, 0.01)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

import evaluator_ext as ev
from cbr.models.player_model import PlayerModel
from evaluator_ext.cards import N_COMBOS, combo_cards

#: The floor of a possible holding's weight (algorithm 7's ``lowest_weight``).
LOWEST_WEIGHT = 0.01
#: Bounds of the interpolation half-width ``delta``.
MIN_SPREAD, MAX_SPREAD = 0.05, 0.5

_COMBOS = np.array([combo_cards(i) for i in range(N_COMBOS)], dtype=np.int64)  # (1326, 2), lo < hi
_DISJOINT: Optional[np.ndarray] = None
_PREFLOP: Optional[np.ndarray] = None
_BOARD_CACHE: dict[tuple[int, ...], np.ndarray] = {}


def _disjoint() -> np.ndarray:
    """(1326, 1326) bool: holdings i and j share no card."""
    global _DISJOINT
    if _DISJOINT is None:
        onehot = np.zeros((N_COMBOS, 52), dtype=np.uint8)
        onehot[np.arange(N_COMBOS), _COMBOS[:, 0]] = 1
        onehot[np.arange(N_COMBOS), _COMBOS[:, 1]] = 1
        _DISJOINT = (onehot @ onehot.T) == 0
    return _DISJOINT


def touching(cards: Iterable[int]) -> np.ndarray:
    """Bool mask of the holdings that contain any of ``cards``.

    >>> int(touching([0]).sum())          # 51 holdings contain the 2c
    51
    """
    dead = np.zeros(52, dtype=bool)
    dead[list(cards)] = True
    return dead[_COMBOS[:, 0]] | dead[_COMBOS[:, 1]]


def holding_strengths(board: Sequence[int]) -> np.ndarray:
    """Strength of every holding on ``board`` (NaN for holdings that touch it).

    Before the flop: the holding's heads-up percentile among the starting holdings
    (:func:`evaluator_ext.preflop_odds.preflop_percentile`). After it: immediate hand strength
    against one random holding that shares no card with it or the board,
    ``(ahead + tied / 2) / all`` (the same number as ``evaluator_ext.hand_strength``).

    >>> import evaluator_ext as ev
    >>> s = holding_strengths(ev.parse_cards("Ah Kd 7c"))
    >>> i = ev.combo_index(*ev.parse_cards("AsAd"))
    >>> round(float(s[i]), 6) == round(ev.hand_strength("AsAd", "AhKd7c"), 6)
    True
    """
    key = tuple(int(c) for c in board)
    hit = _BOARD_CACHE.get(key)
    if hit is not None:
        return hit
    if not key:
        global _PREFLOP
        if _PREFLOP is None:
            from evaluator_ext.preflop_odds import preflop_percentile

            by_class: dict[str, float] = {}
            out = np.empty(N_COMBOS)
            for i, (a, b) in enumerate(_COMBOS):
                name = ev.preflop_class((int(a), int(b)))
                if name not in by_class:
                    by_class[name] = preflop_percentile((int(a), int(b)), 1)
                out[i] = by_class[name]
            out.setflags(write=False)
            _PREFLOP = out
        return _PREFLOP
    if len(key) not in (3, 4, 5):
        raise ValueError(f"a board has 0, 3, 4 or 5 cards, got {len(key)}")
    live = ~touching(key)
    idx = np.flatnonzero(live)
    cards = np.empty((idx.size, 2 + len(key)), dtype=np.uint8)
    cards[:, :2] = _COMBOS[idx]
    cards[:, 2:] = key
    values = np.zeros(N_COMBOS, dtype=np.int64)
    values[idx] = ev.evaluate_batch(cards)
    sub = values[idx]
    both = _disjoint()[np.ix_(idx, idx)]
    ahead = ((sub[:, None] > sub[None, :]) & both).sum(axis=1)
    tied = ((sub[:, None] == sub[None, :]) & both).sum(axis=1)
    total = both.sum(axis=1)
    out = np.full(N_COMBOS, np.nan)
    out[idx] = (ahead + tied / 2.0) / total
    out.setflags(write=False)
    if len(_BOARD_CACHE) > 64:
        _BOARD_CACHE.clear()
    _BOARD_CACHE[key] = out
    return out


@dataclass(frozen=True)
class ActionModel:
    """How an opponent is predicted to act: bet/raise rate ``raise_rate``, fold rate
    facing a bet ``fold_rate``, and the interpolation half-width ``spread`` (delta)."""

    raise_rate: float
    fold_rate: float
    spread: float

    def __post_init__(self) -> None:
        for name in ("raise_rate", "fold_rate"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} is a probability 0..1, got {v!r}")
        if not MIN_SPREAD <= self.spread <= MAX_SPREAD:
            raise ValueError(f"spread is {MIN_SPREAD}..{MAX_SPREAD}, got {self.spread!r}")

    @classmethod
    def from_player(cls, model: PlayerModel) -> "ActionModel":
        """From the thesis attributes: ``raise_rate`` = aggressiveness, ``fold_rate`` =
        1 - riskiness, ``spread`` = ``0.5 * (1 - tightness)`` within the bounds (overall values).

        >>> from cbr.models.player_model import default_model
        >>> ActionModel.from_player(default_model("x"))
        ActionModel(raise_rate=0.14, fold_rate=0.61, spread=0.13)
        """
        spread = min(MAX_SPREAD, max(MIN_SPREAD, 0.5 * (1.0 - model.tightness)))
        return cls(raise_rate=round(model.aggressiveness, 12), fold_rate=round(1.0 - model.riskiness, 12),
                   spread=round(spread, 12))

    def triples(self, percentiles: np.ndarray, *, facing_bet: bool, can_raise: bool = True) -> np.ndarray:
        """(n, 3) predicted (fold, call, raise) probabilities for holdings at ``percentiles``.

        >>> m = ActionModel(raise_rate=0.2, fold_rate=0.5, spread=0.1)
        >>> m.triples(np.array([0.1, 0.5, 0.8, 0.95]), facing_bet=True).round(2).tolist()
        [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.0, 0.0, 1.0]]
        """
        d = self.spread
        s = np.asarray(percentiles, dtype=np.float64)
        p_raise = np.clip((s - (1.0 - self.raise_rate) + d) / (2.0 * d), 0.0, 1.0)
        if facing_bet:
            p_cont = np.clip((s - self.fold_rate + d) / (2.0 * d), 0.0, 1.0)
        else:
            p_cont = np.ones_like(s)
        r = np.minimum(p_raise, p_cont)
        if not can_raise:
            r = np.zeros_like(s)
        return np.stack([1.0 - p_cont, p_cont - r, r], axis=1)


def weighted_percentiles(strengths: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each holding's strength as a percentile of the weighted range: the weight below
    it plus half the weight tied with it, over the total (holdings with weight 0 get 0).

    >>> weighted_percentiles(np.array([0.2, 0.5, 0.5, 0.9]), np.array([1.0, 1.0, 1.0, 1.0])).tolist()
    [0.125, 0.5, 0.5, 0.875]
    """
    out = np.zeros(strengths.shape[0])
    live = weights > 0
    vals, ws = strengths[live], weights[live]
    total = ws.sum()
    if total <= 0:
        return out
    order = np.argsort(vals, kind="stable")
    sv, cw = vals[order], np.cumsum(ws[order])
    left = np.searchsorted(sv, vals, "left")
    right = np.searchsorted(sv, vals, "right")
    below = np.where(left > 0, cw[np.maximum(left - 1, 0)], 0.0)
    upto = cw[right - 1]
    out[live] = (below + (upto - below) / 2.0) / total
    return out


class WeightTable:
    """One opponent's weights over the 1,326 holdings (``weights``, float64, in
    ``combo_index`` order). Made at the start of a hand; ``dead`` cards get weight 0."""

    def __init__(self, dead: Iterable[int] = ()) -> None:
        self.weights = np.ones(N_COMBOS)
        self.remove(dead)

    def remove(self, cards: Iterable[int]) -> None:
        """Cards now known to be elsewhere (the board, our hole): their holdings get 0."""
        cards = list(cards)
        if cards:
            self.weights[touching(cards)] = 0.0

    def normalized(self) -> np.ndarray:
        """The weights as probabilities (Poki's ``w'``: the chance the opponent holds each)."""
        total = self.weights.sum()
        return self.weights / total if total > 0 else self.weights.copy()

    def predicted(self, strengths: np.ndarray, model: ActionModel, *, facing_bet: bool,
                  can_raise: bool = True) -> np.ndarray:
        """(1326, 3) predicted triples of the possible holdings (rows of impossible ones: 0)."""
        live = self.weights > 0
        pct = weighted_percentiles(np.where(live, np.nan_to_num(strengths), 0.0), self.weights)
        out = np.zeros((N_COMBOS, 3))
        out[live] = model.triples(pct[live], facing_bet=facing_bet, can_raise=can_raise)
        return out

    def reweight(self, action: str, strengths: np.ndarray, model: ActionModel, *, facing_bet: bool,
                 can_raise: bool = True) -> None:
        """Re-weight after the opponent took ``action`` (``'f'``, ``'c'`` or ``'r'``):
        ``w[h] <- max(w[h] * P_action(h), LOWEST_WEIGHT)`` for every possible holding."""
        if action not in ("f", "c", "r"):
            raise ValueError(f"an action is 'f', 'c' or 'r', got {action!r}")
        live = self.weights > 0
        p = self.predicted(strengths, model, facing_bet=facing_bet, can_raise=can_raise)[:, "fcr".index(action)]
        self.weights[live] = np.maximum(self.weights[live] * p[live], LOWEST_WEIGHT)

    def mean_strength(self, strengths: np.ndarray) -> float:
        """The opponent's expected hand strength, ``sum_h w'[h] * HS_h`` (Waterloo eq. 8)."""
        w = self.normalized()
        live = w > 0
        return float((w[live] * np.nan_to_num(strengths[live])).sum())


def weighted_ehs(hole: Sequence[int], board: Sequence[int], tables: Sequence[WeightTable]) -> tuple[float, float, float]:
    """Poki's EHS against opponents with weight tables: ``(HS_n, PPOT, EHS)`` with
    ``HS_n = prod_p HS(hole, board, weights_p)``, ``PPOT`` against the sum of the
    normalised tables (0 on the river) and ``EHS = HS_n + (1 - HS_n) * PPOT``.
    Uniform tables give the unweighted numbers.

    >>> import evaluator_ext as ev
    >>> hole, flop = ev.parse_cards("AdQc"), ev.parse_cards("3h4cJh")
    >>> hs, ppot, ehs = weighted_ehs(hole, flop, [WeightTable(dead=hole + flop)])
    >>> round(hs, 6) == round(ev.hand_strength(hole, flop), 6), round(ehs, 4) == round(ev.effective_hand_strength(hole, flop), 4)
    (True, True)
    """
    if not tables:
        raise ValueError("weighted_ehs needs at least one opponent's table")
    hs_n = 1.0
    for table in tables:
        hs_n *= ev.hand_strength(hole, board, weights=table.weights)
    if len(board) < 5:
        pooled = np.sum([table.normalized() for table in tables], axis=0)
        ppot = float(ev.hand_potential(hole, board, weights=pooled)[0])
    else:
        ppot = 0.0
    return float(hs_n), ppot, float(hs_n + (1.0 - hs_n) * ppot)
