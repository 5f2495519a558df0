"""Small bucket games for tests, doctests and benchmarks (no card abstraction needed), and
coarse imperfect-recall abstractions made in a second from a built one (for MCCFR runs in
tests: building one takes minutes whatever its size).

>>> g = random_bucket_game(3, seed=7)
>>> g.n_buckets, g.n_classes
(3, 3)
"""
from __future__ import annotations

import numpy as np

from cbr.abstraction.distribution import NO_BUCKET, DistributionAbstraction
from cbr.abstraction.game import BucketGame

__all__ = ["random_bucket_game", "coarse_abstraction"]


def random_bucket_game(n_buckets: int, seed: int = 0, n_classes: int | None = None) -> BucketGame:
    """A random but plausible bucket game: Dirichlet transitions, classes that lean on the
    last bucket, and equity increasing with the class (``equity + equity.T == 1``)."""
    rng = np.random.default_rng(seed)
    nb = n_buckets
    nc = n_classes or nb
    prior = rng.dirichlet(np.ones(nb))
    transitions = tuple(rng.dirichlet(np.ones(nb), size=nb ** s) for s in (1, 2, 3))
    last = np.arange(nb ** 4) % nb
    classes = rng.dirichlet(np.ones(nc), size=nb ** 4) + 2.0 * np.eye(nc)[last * nc // nb]
    classes /= classes.sum(axis=1, keepdims=True)
    strength = np.sort(rng.random(nc))
    diff = strength[:, None] - strength[None, :]
    equity = 0.5 + 0.5 * np.tanh(3.0 * diff)
    return BucketGame(n_buckets=nb, prior=prior, transitions=transitions, classes=classes, equity=equity,
                      description={"name": f"random-{nb}-{seed}", "fingerprint": f"random-{nb}-{nc}-{seed}"})


def coarse_abstraction(a: DistributionAbstraction, n: int) -> DistributionAbstraction:
    """``a`` (a percentile river) with ``n`` buckets on the flop, turn and river, each merging
    neighbouring buckets of ``a`` (``b * n // buckets``; the river's percentile edges thinned
    to match), so the solver and the bot still bucket alike; the meta is ``a``'s.

    >>> from cbr.cfr.policy import SHIPPED_TEACHER
    >>> c = coarse_abstraction(DistributionAbstraction.load(SHIPPED_TEACHER), 4)
    >>> c.n_buckets, int(c.flop_table[c.flop_table != NO_BUCKET].max()), len(c.river_edges)
    ((169, 4, 4, 4), 3, 3)
    """
    if a.ochs is not None:
        raise ValueError("coarse_abstraction takes a percentile river")
    nb = a.n_buckets

    def merge(table: np.ndarray, k: int) -> np.ndarray:
        out = (table.astype(np.int64) * n // k).astype(np.uint16)
        out[table == NO_BUCKET] = NO_BUCKET
        return out

    river = nb[3]
    edges = np.asarray([a.river_edges[(j * river + n - 1) // n - 1] for j in range(1, n)], dtype=np.float64)
    return DistributionAbstraction((nb[0], n, n, n), a.n_bins, a.flop_centroids[:n], a.turn_centroids[:n], edges,
                                   merge(a.flop_table, nb[1]), merge(a.turn_table, nb[2]), dict(a.meta))
