"""Card abstractions and the abstract game CFR solves (the KTH study).

- :mod:`cbr.abstraction.metrics`: the study's hand-strength metrics HS and HS^2, for one
  holding or every holding on a board at once (native kernels).
- :mod:`cbr.abstraction.bucketing`: :class:`Abstraction`, N buckets per street by HS or
  HS^2 (uniform, percentile, min-max, history), saved with a fingerprint, and its
  :meth:`~Abstraction.bucket_game`.
- :mod:`cbr.abstraction.game`: :class:`BucketGame`, the abstract game's chance model
  (players' bucket sequences and showdown equities), the contract between the bucketings
  that estimate it and the CFR solver that plays it.

>>> from cbr.abstraction import Abstraction
>>> Abstraction.build("minmax", "hs2", n_buckets=8, samples=0).name
'mm_hs2'
"""
from cbr.abstraction.bucketing import ABSTRACTION_FILE, BUCKET_GAME_FILE, KINDS, Abstraction
from cbr.abstraction.game import BucketGame
from cbr.abstraction.metrics import METRICS, board_metrics, hand_strength, hand_strength_squared

__all__ = [
    "Abstraction",
    "BucketGame",
    "KINDS",
    "METRICS",
    "ABSTRACTION_FILE",
    "BUCKET_GAME_FILE",
    "board_metrics",
    "hand_strength",
    "hand_strength_squared",
]
