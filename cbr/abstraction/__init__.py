"""Card abstractions and the abstract game CFR solves (issue 10, the KTH study).

- :mod:`cbr.abstraction.game`: :class:`BucketGame`, the abstract game's chance model
  (players' bucket sequences and showdown equities), the contract between the bucketings
  that estimate it and the CFR solver that plays it.
"""
