"""CASPER retrieval over one street: :class:`CaseIndex`, the estimator-shaped facade over the
exact engine and a k-NN backend chosen by name.

CASPER retrieves every case of the street whose global similarity to the query is at
least ``threshold`` (0.97); when there is none (or fewer than ``min_cases``, 1 by default),
the ``fallback_k`` (20) most similar.
:class:`CaseIndex` answers exactly that, with results identical to the brute-force
definition :func:`cbr.similarity.global_similarity` over all cases, for any configuration,
two ways:

- :meth:`~CaseIndex.aggregate`, the grouped scan (:mod:`cbr.retrieval.aggregate`), the engine
  of play: the hits added up (counts, similarity and outcome sums, the most similar) without
  listing them; the same for every backend;
- :meth:`~CaseIndex.retrieve` (every hit listed), :meth:`~CaseIndex.kneighbors` and the
  fallback's k most similar, answered by the backend: ``"faiss"`` (default,
  :mod:`cbr.retrieval.faiss_backend`, where the exactness argument is) filters candidates
  with faiss and re-ranks them with the very same function, so the values are
  bit-identical; ``"brute"`` (:mod:`cbr.retrieval.brute`) is the numpy definition with the
  same API.

Results are sorted by similarity descending, then id ascending. Ids are row numbers of the
street's case table (the store joins provenance through them).

>>> from cbr.similarity import default_casper
>>> rng = np.random.default_rng(0)
>>> st = default_casper().street("preflop")
>>> X = np.column_stack([rng.integers(2, 11, 500), rng.random(500), rng.integers(2, 6, 500),
...     rng.integers(0, 5, 500), rng.integers(0, 3, 500), rng.integers(0, 3, 500),
...     rng.random(500) / 2, rng.integers(1, 170, 500)]).astype(np.float32)
>>> index = CaseIndex(similarity=st).fit(X)
>>> r = index.retrieve(X[0])
>>> int(r.ids[0]), float(r.similarities[0])
(0, 1.0)
>>> brute = CaseIndex(similarity=st, backend="brute").fit(X)
>>> np.array_equal(brute.retrieve(X[0]).ids, r.ids)
True
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cbr.errors import CBRError
from cbr.retrieval.brute import BruteForceBackend
from cbr.retrieval.faiss_backend import FaissBackend
from cbr.retrieval.persist import read_meta
from cbr.retrieval.results import Explanation, Retrieval, action_codes, probability_triple
from cbr.similarity import StreetSimilarity

__all__ = ["CaseIndex", "backend_class"]

_BUILTIN_BACKENDS: dict[str, type[BruteForceBackend]] = {"brute": BruteForceBackend, "faiss": FaissBackend}


def backend_class(name: str) -> type:
    """A retrieval backend by name: built-in (``faiss``, ``brute``) or a ``cbr.backends`` plugin."""
    from cbr import plugins

    return plugins.resolve("cbr.backends", name, _BUILTIN_BACKENDS, "retrieval backend")


class CaseIndex:
    """Exact CASPER retrieval over one street's cases, in scikit-learn estimator shape.

    ``similarity``: the street's :class:`~cbr.similarity.StreetSimilarity`; ``threshold``
    and ``fallback_k`` as in CASPER; ``backend``: ``"faiss"`` (default) or ``"brute"``
    (or a ``cbr.backends`` plugin); ``backend_params``: extra keywords for the backend
    (``n_lists``, ``seed`` for faiss).

    >>> from cbr.similarity import default_casper
    >>> st = default_casper().street("river")
    >>> X = np.tile(np.array([[2, 1, 2, 0, 0, 1, 0.25, 0.9, 0, 0, 12, 1]], np.float32), (30, 1))
    >>> X[:, 7] = np.linspace(0, 1, 30)
    >>> sims, ids = CaseIndex(similarity=st).fit(X).kneighbors(X[:1], 3)
    >>> ids.tolist()
    [[0, 1, 2]]
    """

    def __init__(self, *, similarity: StreetSimilarity, threshold: float = 0.97, fallback_k: int = 20,
                 backend: str = "faiss", backend_params: dict[str, Any] | None = None, min_cases: int = 1) -> None:
        self.similarity = similarity
        self.threshold = threshold
        self.fallback_k = fallback_k
        self.min_cases = min_cases
        self.backend = backend
        self.backend_params = backend_params

    @classmethod
    def for_street(cls, config: Any, street: int | str, **kwargs: Any) -> "CaseIndex":
        """An unfitted index with a :class:`~cbr.similarity.SimilarityConfig`'s settings for ``street``."""
        return cls(similarity=config.street(street), threshold=config.threshold,
                   fallback_k=config.fallback_k, min_cases=config.min_cases, **kwargs)

    def get_params(self) -> dict[str, Any]:
        return {"similarity": self.similarity, "threshold": self.threshold, "fallback_k": self.fallback_k,
                "backend": self.backend, "backend_params": self.backend_params, "min_cases": self.min_cases}

    def with_retrieval(self, *, threshold: float | None = None, fallback_k: int | None = None,
                       min_cases: int | None = None) -> "CaseIndex":
        """This fitted index with another ``threshold``, ``fallback_k`` and/or ``min_cases`` (None: unchanged):
        a view that shares the indexed cases (both settings are read at retrieval time only,
        so nothing is rebuilt); the index itself is unchanged. A bad value raises
        :class:`~cbr.errors.ConfigError`.

        >>> from cbr.similarity import default_casper
        >>> X = np.linspace(0, 1, 50, dtype=np.float32)[:, None].repeat(8, 1)
        >>> idx = CaseIndex.for_street(default_casper(), "preflop").fit(X)
        >>> wide = idx.with_retrieval(threshold=0.0)
        >>> len(idx.retrieve(X[0]).ids), len(wide.retrieve(X[0]).ids), idx.threshold, wide.threshold
        (3, 50, 0.97, 0.0)
        """
        import copy

        original = self._fitted()
        if isinstance(getattr(type(original), "_index", None), property):
            original._index  # a saved index is read on first use: read it once, for the view and the index alike
        backend = copy.copy(original)
        view = copy.copy(self)
        if threshold is not None:
            view.threshold = backend.threshold = threshold
        if fallback_k is not None:
            view.fallback_k = backend.fallback_k = fallback_k
        if min_cases is not None:
            view.min_cases = backend.min_cases = min_cases
        backend._check_params()
        view.backend_ = backend
        return view

    def _make_backend(self) -> BruteForceBackend:
        cls = backend_class(self.backend)
        return cls(similarity=self.similarity, threshold=self.threshold, fallback_k=self.fallback_k,
                   min_cases=self.min_cases, **(self.backend_params or {}))

    def fit(self, X: Any) -> "CaseIndex":
        """Index the street's case rows ``X`` (``(n, d)`` float32; row number = case id)."""
        self.backend_ = self._make_backend().fit(X)
        return self

    def _fitted(self) -> BruteForceBackend:
        if not hasattr(self, "backend_"):
            raise CBRError("this CaseIndex is not fitted yet; call fit(X) or CaseIndex.load(path)")
        return self.backend_

    @property
    def n_cases_(self) -> int:
        return self._fitted().n_cases_

    @property
    def n_features_in_(self) -> int:
        return self._fitted().n_features_in_

    @property
    def cases_(self) -> np.ndarray:
        return self._fitted().cases_

    @property
    def memory_mapped(self) -> bool:
        """Whether the index was loaded with ``mmap=True`` (read-only, files mapped)."""
        return bool(getattr(self._fitted(), "memory_mapped", False))

    def add(self, X: Any) -> np.ndarray:
        """Append cases (live-play retention); returns their ids."""
        return self._fitted().add(X)

    def retrieve(self, q: Any) -> Retrieval:
        """All cases with similarity >= threshold, else the ``fallback_k`` most similar."""
        return self._fitted().retrieve(q)

    def retrieve_batch(self, Q: Any) -> list[Retrieval]:
        """:meth:`retrieve` for each row of ``Q``."""
        return self._fitted().retrieve_batch(Q)

    def aggregate(self, q: Any, codes: Any, outcomes: Any = None, top: int = 20, *, fallback: bool = True) -> Any:
        """What the cases :meth:`retrieve` returns add up to (per-action counts, similarity and
        outcome sums, the ``top`` most similar), exact and without listing them:
        :class:`~cbr.retrieval.aggregate.Aggregate`. ``codes``: every case's action by id.
        ``fallback=False``: no case at or above the threshold gives an empty aggregate."""
        return self._fitted().aggregate(q, codes, outcomes, top, fallback=fallback)

    def aggregate_batch(self, Q: Any, codes: Any, outcomes: Any = None, top: int = 20) -> list[Any]:
        """:meth:`aggregate` for each row of ``Q``."""
        return self._fitted().aggregate_batch(Q, codes, outcomes, top)

    def kneighbors(self, Q: Any, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(similarities, ids)`` of the k most similar cases, each ``(n_queries, k)``."""
        return self._fitted().kneighbors(Q, k)

    def explain(self, q: Any, actions: Sequence[Any] | np.ndarray, weighted: bool = False) -> Explanation:
        """Retrieve for ``q`` and explain the probability triple (``actions``: all cases' actions)."""
        return self._fitted().explain(q, actions, weighted)

    def triple(self, q: Any, actions: Sequence[Any] | np.ndarray, weighted: bool = False) -> tuple[float, float, float]:
        """The probability triple for ``q`` (``actions``: every case's action, by id)."""
        r = self.retrieve(q)
        return probability_triple(action_codes(actions)[r.ids], r.similarities, weighted)

    def save(self, path: str | Path) -> Path:
        """Write to directory ``path``: ``meta.json``, ``cases.npy`` and the backend's files
        (``index.faiss`` via ``faiss.write_index`` and ``lists.npz`` for faiss)."""
        return self._fitted().save(path)

    @classmethod
    def load(cls, path: str | Path, *, mmap: bool = False) -> "CaseIndex":
        """Read an index written by :meth:`save`; raises :class:`CaseBaseError` if it is
        missing, incomplete or of another version.

        ``mmap=True`` maps the files instead of reading them: the case rows (``cases.npy``)
        and faiss's inverted lists stay on disk and in the page cache, and a query reads only
        the pages of the lists it probes and the rows it scores, so a street larger than
        memory can be searched (the answers are identical; the index is read-only).

        >>> import tempfile
        >>> from cbr.similarity import default_casper
        >>> X = np.random.default_rng(0).random((500, 12), dtype=np.float32)
        >>> path = CaseIndex.for_street(default_casper(), "flop").fit(X).save(tempfile.mkdtemp())
        >>> mapped = CaseIndex.load(path, mmap=True)
        >>> mapped.memory_mapped, np.array_equal(mapped.retrieve(X[3]).ids, CaseIndex.load(path).retrieve(X[3]).ids)
        (True, True)
        """
        root = Path(path)
        meta = read_meta(root)
        kind = backend_class(meta["backend"])
        backend = kind._from_meta(root, meta, mmap=True) if mmap else kind._from_meta(root, meta)
        obj = cls(similarity=backend.similarity, threshold=backend.threshold, fallback_k=backend.fallback_k,
                  backend=meta["backend"], backend_params=meta.get("backend_params") or None,
                  min_cases=backend.min_cases)
        obj.backend_ = backend
        return obj
