"""Small bucket games for tests, doctests and benchmarks (no card abstraction needed).

>>> g = random_bucket_game(3, seed=7)
>>> g.n_buckets, g.n_classes
(3, 3)
"""
from __future__ import annotations

import numpy as np

from cbr.abstraction.game import BucketGame

__all__ = ["random_bucket_game"]


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
