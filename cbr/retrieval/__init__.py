"""Exact retrieval of similar cases, and the probability triple they vote for.

- :mod:`~cbr.retrieval.results`: ``Retrieval``, ``probability_triple``, ``action_codes``,
  ``Explanation``, ``QueryError``;
- :mod:`~cbr.retrieval.brute`: ``BruteForceBackend``, the definition;
- :mod:`~cbr.retrieval.faiss_backend`: ``FaissBackend``, exact with faiss (and why);
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
