"""Exact retrieval of similar cases, and the probability triple they vote for.

One exact engine answers the queries of play: the **grouped scan**
(:mod:`~cbr.retrieval.aggregate`; ``CaseIndex.aggregate``): the cases grouped by their betting
columns, a C kernel skipping every group that cannot reach the threshold and adding up the
rest, so CASPER's threshold query (every case with similarity >= 0.97) gives its triple and its
most similar cases without listing the hits. ``cbr query``, the cbr bot and the server's
``/retrieve`` with a ``top`` go through it, whatever the index's backend.

The backend (``CaseIndex(backend=...)``) answers the **k most similar** (the fallback when no
case reaches the threshold, ``kneighbors``) and the **listing** of every hit
(``CaseIndex.retrieve``: ``cbr query --explain``, ``cbr evaluate``, the server's ``top: null``):

- ``faiss`` (default; :mod:`~cbr.retrieval.faiss_backend`): the k-NN backend, exact (IVF lists
  in a bound space, range search, exact re-rank); a k-NN beats the scan, which must score every
  case when there is no threshold to skip groups by (``bench/bench_retrieval_engines.py``);
- ``brute`` (:mod:`~cbr.retrieval.brute`): numpy over every case, the definition both must
  agree with, and the base class holding the scan's entry and what the backends share.

Modules:

- :mod:`~cbr.retrieval.results`: ``Retrieval``, ``probability_triple``, ``action_codes``,
  ``Explanation``, ``QueryError``;
- :mod:`~cbr.retrieval.aggregate`: the grouped scan (``GroupedLayout``) and its ``Aggregate``;
- :mod:`~cbr.retrieval.brute`: ``BruteForceBackend``, the definition and the backends' base;
- :mod:`~cbr.retrieval.faiss_backend`: ``FaissBackend``, the k-NN backend (and why it is exact);
- :mod:`~cbr.retrieval.persist`: the on-disk format of an index;
- :mod:`~cbr.retrieval.index`: ``CaseIndex``, the facade, and ``backend_class``;
- :mod:`~cbr.retrieval.triple`: ``retrieve_triple`` and its ``Vote``, the one path from a
  decision point to the triple, used by ``cbr query`` and the cbr bot.

>>> from cbr.similarity import default_casper
>>> CaseIndex.for_street(default_casper(), "flop").get_params()["backend"]
'faiss'
"""
from __future__ import annotations

from cbr.retrieval.brute import BruteForceBackend
from cbr.retrieval.faiss_backend import FaissBackend
from cbr.retrieval.index import CaseIndex, backend_class
from cbr.retrieval.persist import INDEX_FORMAT, INDEX_VERSION
from cbr.retrieval.results import ACTIONS, Explanation, QueryError, Retrieval, action_codes, probability_triple
from cbr.retrieval.triple import Vote, retrieve_triple

__all__ = [
    "QueryError",
    "Retrieval",
    "Explanation",
    "probability_triple",
    "action_codes",
    "CaseIndex",
    "BruteForceBackend",
    "FaissBackend",
    "backend_class",
    "ACTIONS",
    "INDEX_FORMAT",
    "INDEX_VERSION",
    "Vote",
    "retrieve_triple",
]
