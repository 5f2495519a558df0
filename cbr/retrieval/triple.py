"""The one retrieve -> triple path, used by ``cbr query`` (:func:`cbr.query.answer.answer`) and
the cbr bot (:class:`cbr.policies.cbr_policy.CBRPolicy`):

1. the features of the decision point (the feature set's row; with the opponents' model values
   for an opponent-aware feature set);
2. retrieval in the street's index: every case at or above the similarity threshold, else the
   ``fallback_k`` most similar (:meth:`~cbr.retrieval.CaseIndex.retrieve`);
3. the neighbours' actions (codes 0/1/2 = fold, check/call, bet/raise, by index id);
4. the vote: each neighbour's weight resolved once (1, or its similarity when the triple is
   weighted: :func:`~cbr.retrieval.results.vote_weights`), the per-action totals, and the
   triple, the totals over their sum (the arithmetic of
   :func:`~cbr.retrieval.probability_triple`).

The :class:`Vote` keeps what the explanation and the re-use rules need besides the triple:
the neighbours in order with their similarities (:meth:`Vote.explanation`), the per-action
totals, and the neighbours' outcomes (:meth:`Vote.outcome_means`, for best-outcome re-use).

Callers bring the street ready for retrieval: its :class:`~cbr.retrieval.CaseIndex`, the
action code of every case by index id (:func:`~cbr.retrieval.action_codes`), and optionally
the cases' outcomes. How the case base is opened, refreshed or joined to provenance stays
with them.

>>> from features.casper import CasperFeatures
>>> from cbr.game.situation import situation
>>> from cbr.similarity import default_casper
>>> dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5, previous_round_bets=2)
>>> fs = CasperFeatures()
>>> rows = np.repeat(fs.row(dp)[None, :], 4, axis=0)
>>> rows[3, 7] = 0.1                                   # a much weaker hand than the others
>>> index = CaseIndex.for_street(default_casper(), "flop").fit(rows)
>>> vote = retrieve_triple(fs, dp, index, action_codes(list("rrcf")), weighted=False)
>>> vote.ids.tolist(), vote.triple, vote.fallback    # three at or above 0.97
([0, 1, 2], (0.0, 0.3333333333333333, 0.6666666666666666), False)
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from cbr.errors import counted
from cbr.game.gamedef import STREETS
from cbr.retrieval.index import CaseIndex
from cbr.retrieval.results import (
    ACTIONS,
    Explanation,
    QueryError,
    action_codes,
    action_totals,
    triple_of_totals,
    vote_weights,
)
from cbr.similarity import local_similarities

__all__ = ["Vote", "retrieve_triple", "vote_of", "votes_of", "aggregate_vote", "aggregate_votes", "outcome_means",
           "outcome_means_of_totals", "resolve_weighted"]


def resolve_weighted(weighted: Optional[bool], config: Any) -> bool:
    """Whether the triple is similarity-weighted: ``weighted`` if given, else the similarity
    configuration's ``weighted_triple`` setting.

    >>> from cbr.similarity import default_casper
    >>> resolve_weighted(None, default_casper()) == default_casper().weighted_triple, resolve_weighted(True, None)
    (True, True)
    """
    return bool(config.weighted_triple) if weighted is None else bool(weighted)


def outcome_means(codes: np.ndarray, outcomes: np.ndarray, legal: str = "fcr") -> dict[str, float]:
    """Mean known outcome (NaN = unknown) per legal action kind of cases with action
    ``codes`` (0/1/2): an illegal fold or raise counts as check/call (where
    :func:`~cbr.policies.base.legal_triple` moves its share), and nothing counts for an
    illegal check/call. Kinds without a known outcome are left out.

    >>> outcome_means(np.array([1, 2, 2, 0]), np.array([0.5, 2.0, 0.0, -1.0]))
    {'f': -1.0, 'c': 0.5, 'r': 1.0}
    >>> outcome_means(np.array([1, 2, 2, 0]), np.array([0.5, 2.0, 0.0, np.nan]), "fc")
    {'c': 0.8333333333333334}
    """
    codes = np.asarray(codes).astype(np.int64)
    out = np.asarray(outcomes, dtype=np.float64)
    if out.shape != codes.shape:
        raise ValueError(f"{counted(codes.shape[0], 'action')} but {counted(out.shape[0] if out.ndim else 0, 'outcome')}")
    for i, kind in enumerate(ACTIONS):
        if kind not in legal:
            codes[codes == i] = 1  # an illegal fold/raise is played as check/call
    known = ~np.isnan(out)
    if "c" not in legal:
        known &= codes != 1
    counts = np.bincount(codes[known], minlength=3)
    sums = np.bincount(codes[known], weights=out[known], minlength=3)
    return {k: float(sums[i] / counts[i]) for i, k in enumerate(ACTIONS) if counts[i]}


def outcome_means_of_totals(known: np.ndarray, sums: np.ndarray, legal: str = "fcr") -> dict[str, float]:
    """:func:`outcome_means` from per-action totals instead of the cases: ``known``, the cases
    with a known outcome per action code 0/1/2, and ``sums``, their outcomes' sums (the same
    means, to float rounding).

    >>> outcome_means_of_totals(np.array([1.0, 1, 2]), np.array([-1.0, 0.5, 2.0]))
    {'f': -1.0, 'c': 0.5, 'r': 1.0}
    >>> outcome_means_of_totals(np.array([0.0, 1, 2]), np.array([0.0, 0.5, 2.0]), "fc")
    {'c': 0.8333333333333334}
    """
    counts = np.asarray(known, dtype=np.float64).copy()
    total = np.asarray(sums, dtype=np.float64).copy()
    for i, kind in enumerate(ACTIONS):
        if kind not in legal and i != 1:  # an illegal fold/raise is played as check/call
            counts[1] += counts[i]
            total[1] += total[i]
            counts[i] = total[i] = 0.0
    if "c" not in legal:
        counts[1] = total[1] = 0.0
    return {k: float(total[i] / counts[i]) for i, k in enumerate(ACTIONS) if counts[i]}


@dataclass(frozen=True)
class Vote:
    """What the cases retrieved for one query say: ``ids`` (row numbers in the street's index)
    and ``similarities``, most similar first (ties by id); their action ``codes``; whether the
    ``fallback`` top-k was used; ``totals``, per action the summed vote weights (case counts
    when not ``weighted``), and the ``triple`` they make; ``outcomes``, the neighbours'
    outcomes (NaN = unknown; None when the caller has none). ``query`` is the feature row as
    the feature set computed it."""

    street: str
    query: np.ndarray
    ids: np.ndarray
    similarities: np.ndarray
    codes: np.ndarray
    fallback: bool
    weighted: bool
    totals: np.ndarray
    triple: tuple[float, float, float]
    outcomes: Optional[np.ndarray] = None
    #: With an aggregate vote (:func:`aggregate_vote`): how many cases were retrieved (``ids``
    #: then holds only the most similar of them), their similarities' sum, and per action the
    #: cases with a known outcome and those outcomes' sum (None without outcomes).
    retrieved: Optional[int] = None
    sim_sum: Optional[float] = None
    outcome_totals: Optional[tuple[np.ndarray, np.ndarray]] = None

    def __len__(self) -> int:
        return int(self.ids.shape[0]) if self.retrieved is None else self.retrieved

    def mean_similarity(self, top: Optional[int] = None) -> float:
        """Mean similarity of the (``top`` most similar) retrieved cases; NaN without any. An
        aggregate vote answers ``top`` up to the cases it kept (beyond: those kept)."""
        if top is None and self.retrieved is not None and self.sim_sum is not None:
            return self.sim_sum / self.retrieved if self.retrieved else float("nan")
        sims = self.similarities if top is None else self.similarities[:top]
        return float(sims.mean()) if len(sims) else float("nan")

    def outcome_means(self, legal: str = "fcr") -> dict[str, float]:
        """:func:`outcome_means` of the neighbours (``{}`` without outcomes)."""
        if self.outcomes is None:
            return {}
        if self.outcome_totals is not None:
            return outcome_means_of_totals(*self.outcome_totals, legal)
        return outcome_means(self.codes, self.outcomes, legal)

    def explanation(self, index: CaseIndex) -> Explanation:
        """Every retrieved case with its global and per-feature similarity and its action
        (``index``: the one retrieved from), for ``cbr query``'s explanation."""
        q32 = np.asarray(self.query, dtype=np.float32)
        st = index.similarity
        return Explanation(
            street=st.street, feature_names=st.features, weights=tuple(float(w) for w in st.weights), query=q32,
            ids=self.ids, similarities=self.similarities, local=local_similarities(st, q32, index.cases_[self.ids]),
            actions=tuple(ACTIONS[c] for c in self.codes), triple=self.triple, fallback=self.fallback,
            weighted=self.weighted)


def vote_of(index: CaseIndex, query: np.ndarray, codes: np.ndarray, *, weighted: bool,
            outcomes: Optional[np.ndarray] = None, street: Optional[str] = None) -> Vote:
    """Retrieve for the feature row ``query`` in ``index`` and count the neighbours' votes.

    ``codes``: the action code of every case of the index, by id (``outcomes`` likewise, or
    None). Raises :class:`~cbr.retrieval.QueryError` when ``codes`` (or ``outcomes``) do not
    cover the index's cases.
    """
    _check_cover(index, codes, outcomes)
    return _vote(index.retrieve(query), query, codes, weighted, outcomes, street or index.similarity.street)


def votes_of(index: CaseIndex, queries: np.ndarray, codes: np.ndarray, *, weighted: bool,
             outcomes: Optional[np.ndarray] = None, street: Optional[str] = None) -> list[Vote]:
    """:func:`vote_of` for every row of ``queries`` (an ``(n, features)`` array), retrieved in
    one batch: the same votes, row by row, as one query at a time."""
    _check_cover(index, codes, outcomes)
    name = street or index.similarity.street
    return [_vote(r, q, codes, weighted, outcomes, name) for r, q in zip(index.retrieve_batch(queries), queries)]


def _check_cover(index: CaseIndex, codes: np.ndarray, outcomes: Optional[np.ndarray]) -> None:
    n = index.n_cases_
    if codes.shape[0] < n:
        raise QueryError(f"{counted(codes.shape[0], 'action')} for {counted(n, 'case')}")
    if outcomes is not None and outcomes.shape[0] < n:
        raise QueryError(f"{counted(outcomes.shape[0], 'outcome')} for {counted(n, 'case')}")


def _vote(r: Any, query: np.ndarray, codes: np.ndarray, weighted: bool, outcomes: Optional[np.ndarray],
          street: str) -> Vote:
    ids = r.ids
    chosen = codes[ids]
    if chosen.shape[0] == 0:
        raise QueryError("no cases to form a probability triple from")
    totals = action_totals(chosen, vote_weights(r.similarities, chosen.shape[0], weighted))
    return Vote(street=street, query=query, ids=ids, similarities=r.similarities,
                codes=chosen, fallback=bool(r.fallback), weighted=weighted, totals=totals,
                triple=triple_of_totals(totals), outcomes=None if outcomes is None else outcomes[ids])


def aggregate_vote(index: CaseIndex, query: np.ndarray, codes: np.ndarray, *, weighted: bool,
                   outcomes: Optional[np.ndarray] = None, street: Optional[str] = None, top: int = 20) -> Vote:
    """:func:`vote_of` without listing every neighbour: the same triple, totals, count, fallback
    and outcome means (sums to float rounding), but ``ids`` / ``similarities`` / ``codes`` /
    ``outcomes`` only for the ``top`` most similar (:meth:`~cbr.retrieval.CaseIndex.aggregate`).
    ``codes`` may be a :class:`~cbr.retrieval.aggregate.Labels` (actions and outcomes; then
    ``outcomes`` is None)."""
    return aggregate_votes(index, np.asarray(query)[None, :], codes, weighted=weighted, outcomes=outcomes,
                           street=street, top=top)[0]


def aggregate_votes(index: CaseIndex, queries: np.ndarray, codes: np.ndarray, *, weighted: bool,
                    outcomes: Optional[np.ndarray] = None, street: Optional[str] = None,
                    top: int = 20) -> list[Vote]:
    """:func:`aggregate_vote` for every row of ``queries`` (an ``(n, features)`` array)."""
    from cbr.retrieval.aggregate import Labels

    if isinstance(codes, Labels):  # labels copied into the layout's order: read sequentially
        found = index.aggregate_batch(queries, codes, None, top)
        codes, outcomes = codes.codes, codes.outcomes
    else:
        _check_cover(index, codes, outcomes)
        found = index.aggregate_batch(queries, codes, outcomes, top)
    name = street or index.similarity.street
    out = []
    for a, q in zip(found, queries):
        totals = a.totals(weighted)
        out.append(Vote(street=name, query=q, ids=a.top_ids, similarities=a.top_sims, codes=codes[a.top_ids],
                        fallback=bool(a.fallback), weighted=weighted, totals=totals, triple=triple_of_totals(totals),
                        outcomes=None if outcomes is None else outcomes[a.top_ids], retrieved=a.n,
                        sim_sum=a.sim_sum, outcome_totals=None if outcomes is None else (a.known, a.outcome_sums)))
    return out


def retrieve_triple(features: Any, dp: Any, index: CaseIndex, codes: np.ndarray | Sequence[Any], *,
                    weighted: bool, outcomes: Optional[np.ndarray] = None,
                    opponents: Optional[Mapping[int, Sequence[float]]] = None, top: Optional[int] = None) -> Vote:
    """The decision point ``dp``'s features (``features.row(dp)``, or ``features.row(dp,
    opponents)`` with opponent model values for an opponent-aware feature set), retrieved in
    ``index``, the street's (see :func:`vote_of` for ``codes`` and ``outcomes``). ``top``: keep
    only the ``top`` most similar neighbours (:func:`aggregate_vote`: the same triple, without
    listing every neighbour); None: every one."""
    from cbr.retrieval.aggregate import Labels

    query = features.row(dp) if opponents is None else features.row(dp, opponents)
    if top is not None and isinstance(codes, Labels):
        return aggregate_vote(index, query, codes, weighted=weighted, street=STREETS[dp.street], top=top)
    codes = codes if isinstance(codes, np.ndarray) and codes.dtype == np.int8 else action_codes(codes)
    if top is not None:
        return aggregate_vote(index, query, codes, weighted=weighted, outcomes=outcomes, street=STREETS[dp.street],
                              top=top)
    return vote_of(index, query, codes, weighted=weighted, outcomes=outcomes, street=STREETS[dp.street])
