"""Pre-flop odds the bots share: win probability of a hand class against ``n`` random hands
(seeded Monte Carlo, cached per class), a holding's percentile among the 1,326 holdings, and
the multi-way cut-offs of the rule bots.

The bots' constants were tuned heads-up. Before the flop they use Poki's ``HS_n`` idea: the
hand's percentile ``s`` among the 1326 holdings (ranked by win probability against ``n``
opponents, or by ``preflop_rank``) gives ``s ** n``, the chance that no opponent holds a
better starting hand. Rank cut-offs become the weakest rank whose ``s ** n`` reaches the
heads-up cut-off's percentile (:func:`rank_cutoff`); win probabilities become the heads-up
win probability at percentile ``s ** n`` (:func:`heads_up_equivalent`).

Every value is a pure function of the hand class and the number of opponents (the Monte
Carlo seed is fixed), so the rule bots, the player models and the networks share one cache.

>>> 0.80 < preflop_win((51, 50), 1) < 0.88     # AA heads-up
True
"""
from __future__ import annotations

import bisect

import evaluator_ext as ev

__all__ = ["PREFLOP_TRIALS", "PREFLOP_SEED", "preflop_win", "preflop_percentile", "preflop_best_hand",
           "heads_up_equivalent", "rank_percentile", "rank_cutoff"]

# Pre-flop win probabilities depend only on the hand class and the number of opponents:
# shared by every bot instance (the Monte Carlo seed is fixed, so the values are too).
_PREFLOP_WIN: dict[tuple[object, int, int], float] = {}
PREFLOP_TRIALS = 4000
PREFLOP_SEED = 20240601


def preflop_win(hole: tuple[int, int], n_opponents: int, trials: int = PREFLOP_TRIALS) -> float:
    """Probability of winning at showdown against ``n_opponents`` random hands that never
    fold, ties counted half (seed waterloo 3.1, eq. 1, "percentage of wins"); cached per
    hand class. The simulation always deals the class's first holding
    (``class_combos(name)[0]``), so the value depends on the class only, never on which
    holding of it was met first.

    >>> 0.80 < preflop_win((51, 50), 1) < 0.88     # AA heads-up
    True
    >>> preflop_win((51, 50), 1) == preflop_win((49, 48), 1)
    True
    """
    name = ev.preflop_class(hole)
    key = (name, n_opponents, trials)
    value = _PREFLOP_WIN.get(key)
    if value is None:
        canonical = tuple(ev.class_combos(name)[0])
        win, tie, _ = ev.win_probability(canonical, (), n_opponents=n_opponents, trials=trials, seed=PREFLOP_SEED)
        value = _PREFLOP_WIN[key] = float(win) + float(tie) / 2.0
    return value


def _holdings(name: str) -> int:
    """Holdings in a hand class: 6 pairs, 4 suited, 12 offsuit."""
    return 6 if len(name) == 2 else 4 if name.endswith("s") else 12


def _percentiles(strength: dict[str, float]) -> dict[str, float]:
    """Share of the 1326 holdings weaker than each class by ``strength`` (ties count half)."""
    total = float(sum(_holdings(c) for c in strength))
    out: dict[str, float] = {}
    for c, v in strength.items():
        below = sum(_holdings(d) for d, w in strength.items() if w < v)
        tied = sum(_holdings(d) for d, w in strength.items() if w == v)
        out[c] = (below + 0.5 * tied) / total
    return out


# Per number of opponents: the percentile of every class by its win probability against
# that many opponents (seed poki: "completely different hand rankings are necessary for
# games with fewer players"); computed once from the cached Monte Carlo values.
_WIN_PERCENTILE: dict[tuple[int, int], dict[str, float]] = {}
_HEADS_UP_CURVE: dict[int, tuple[list[float], list[float]]] = {}
_RANK_PERCENTILE: list[float] = []
_RANK_CUTOFF: dict[tuple[int, int], int] = {}


def preflop_percentile(hole: tuple[int, int], n_opponents: int, trials: int = PREFLOP_TRIALS) -> float:
    """Share of the 1326 starting holdings with a lower win probability against
    ``n_opponents`` than ``hole`` (ties half; card removal ignored): pre-flop ``HS``.

    >>> round(preflop_percentile((51, 50), 1), 4)        # AA: only half its own 6 combos tie
    0.9977
    """
    key = (n_opponents, trials)
    table = _WIN_PERCENTILE.get(key)
    if table is None:
        wins = {c: preflop_win(tuple(ev.class_combos(c)[0]), n_opponents, trials)  # type: ignore[arg-type]
                for c in ev.PREFLOP_CLASSES}
        table = _WIN_PERCENTILE[key] = _percentiles(wins)
    return table[ev.preflop_class(hole)]


def preflop_best_hand(hole: tuple[int, int], n_opponents: int, trials: int = PREFLOP_TRIALS) -> float:
    """Pre-flop ``HS_n``: the chance that none of ``n_opponents`` random holdings ranks
    above ``hole``, ``preflop_percentile ** n`` (Poki's ``HS ** n`` before the flop).

    >>> preflop_best_hand((51, 50), 8) > 0.95 > 0.01 > preflop_best_hand((20, 1), 8)   # AA, 7c2d
    True
    """
    return preflop_percentile(hole, n_opponents, trials) ** n_opponents


def heads_up_equivalent(best_hand: float, trials: int = PREFLOP_TRIALS) -> float:
    """Heads-up win probability of the holding at heads-up percentile ``best_hand``
    (linear between the classes, clamped to the weakest and strongest class).

    A pre-flop ``HS_n`` mapped back onto the win-probability scale the bots' heads-up
    thresholds were tuned on: at the percentile of a class it is exactly that class's
    heads-up :func:`preflop_win`, so heads-up nothing changes.

    >>> aces = (51, 50)
    >>> heads_up_equivalent(preflop_percentile(aces, 1)) == preflop_win(aces, 1)
    True
    """
    curve = _HEADS_UP_CURVE.get(trials)
    if curve is None:
        pairs = sorted({(preflop_percentile(tuple(ev.class_combos(c)[0]), 1, trials),  # type: ignore[arg-type]
                         preflop_win(tuple(ev.class_combos(c)[0]), 1, trials))  # type: ignore[arg-type]
                        for c in ev.PREFLOP_CLASSES})
        curve = _HEADS_UP_CURVE[trials] = ([a for a, _ in pairs], [b for _, b in pairs])
    knots, values = curve
    i = bisect.bisect_left(knots, best_hand)
    if i >= len(knots):
        return values[-1]
    if knots[i] == best_hand or i == 0:
        return values[i]
    lo, hi = knots[i - 1], knots[i]
    return values[i - 1] + (values[i] - values[i - 1]) * (best_hand - lo) / (hi - lo)


def rank_percentile(rank: int) -> float:
    """Share of the 1326 holdings in classes ranked below ``rank`` (``preflop_rank``
    order, 1 = AA), the rank's own class counting half.

    >>> rank_percentile(1) > rank_percentile(2) > rank_percentile(169) > 0
    True
    """
    if not _RANK_PERCENTILE:
        by_rank = {c: -float(i) for i, c in enumerate(ev.PREFLOP_TABLE)}
        pct = _percentiles(by_rank)
        _RANK_PERCENTILE.extend(pct[c] for c in ev.PREFLOP_TABLE)
    if not 1 <= rank <= len(_RANK_PERCENTILE):
        raise ValueError(f"a pre-flop rank is between 1 and {len(_RANK_PERCENTILE)}, got {rank}")
    return _RANK_PERCENTILE[rank - 1]


def rank_cutoff(rank: int, n_opponents: int) -> int:
    """The rank cut-off against ``n_opponents`` matching the heads-up cut-off ``rank``:
    the weakest rank whose pre-flop ``HS_n`` (``rank_percentile ** n``) is still at least
    the heads-up percentile of ``rank``. Heads-up (``n = 1``) it is ``rank`` itself (169
    at most); it tightens with every opponent.

    >>> rank_cutoff(110, 1), rank_cutoff(110, 2) > rank_cutoff(110, 8)
    (110, True)
    """
    top = len(ev.PREFLOP_TABLE)
    if rank < 1:
        return rank
    key = (min(rank, top), n_opponents)
    cut = _RANK_CUTOFF.get(key)
    if cut is None:
        bar = rank_percentile(key[0])
        cut = 0
        for r in range(1, top + 1):
            if rank_percentile(r) ** n_opponents < bar:
                break
            cut = r
        _RANK_CUTOFF[key] = cut
    return cut
