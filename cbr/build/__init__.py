"""Building case bases from logs: parse -> replay -> features -> store.

- :mod:`cbr.build.local`: the build on this machine (worker processes, chunks of hands,
  results written in input order; :func:`~cbr.build.local.build_casebase`).
- :mod:`cbr.build.on_dask`: the same build with the per-file work on a Dask cluster.
- :mod:`cbr.build.ordered`: the ordered player-model pass of opponent-aware feature sets.
- :mod:`cbr.build.pools` and :mod:`cbr.build.parent`: worker pools that neither hang nor leave
  workers behind (the build's, and those of leagues, measurements and recipes).

Self-play logs for builds at scale are written by :mod:`cbr.play.selfplay` (they are played).
"""
