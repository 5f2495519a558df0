"""Answer a situation from a case base: features -> retrieval -> probability triple
(:func:`cbr.retrieval.triple.retrieve_triple`, the path the cbr bot decides by), with the
cases behind it and their provenance.

>>> from cbr.store import CaseBase, resolve_casebase
>>> from cbr.game.situation import situation
>>> cb = CaseBase.open(resolve_casebase("default"))          # the embedded default case base
>>> ans = answer(cb, situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5,
...                            previous_round_bets=2))
>>> [round(p, 2) for p in ans.triple]                        # fold, check/call, bet/raise
[0.11, 0.48, 0.41]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from cbr.errors import CaseBaseError, ConfigError, counted
from cbr.game.actions import ACTION_WORDS
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.retrieval import ACTIONS, Explanation, action_codes
from cbr.retrieval.triple import resolve_weighted, retrieve_triple
from cbr.store import resolve_casebase  # noqa: F401  (docstring examples)
from cbr.store.answer_rows import PROVENANCE
from cbr.store.casebase import CaseBase
from cbr.store.honesty import action_warnings


@dataclass(frozen=True)
class QueryAnswer:
    """The triple for one situation, and why.

    ``casebase``: the name of the case base's folder (what users pass; a copy keeps the name
    its manifest was built with); ``passed``: cases at or above the similarity threshold (with the
    fallback, fewer than ``min_cases``: 0 with CASPER's rule); ``explanation``: every retrieved case with global and per-feature similarity,
    action and provenance.
    """

    casebase: str
    street: str
    features: dict[str, float]
    triple: tuple[float, float, float]
    passed: int
    retrieved: int
    fallback: bool
    threshold: float
    mean_similarity: float
    explanation: Explanation
    case_ids: tuple[int, ...] = ()
    case_features: tuple[dict[str, float], ...] = ()
    warnings: tuple[str, ...] = ()
    min_cases: int = 1  # fewer than this many at or above the threshold: the fallback's most similar

    def to_dict(self, top: Optional[int] = None) -> dict[str, Any]:
        """Plain data for JSON: each case's ``id`` is its ``case_id`` in the SQL tables and
        ``features`` its own feature values (beside ``local``, its local similarities)."""
        expl = self.explanation.to_dict()
        cases = expl["cases"]
        for j, case in enumerate(cases):
            if j < len(self.case_ids):
                case["id"] = self.case_ids[j]
            if j < len(self.case_features):
                case["features"] = self.case_features[j]
        cases = cases if top is None else cases[:top]
        return {
            "casebase": self.casebase, "street": self.street, "features": self.features,
            "triple": {"fold": self.triple[0], "check_call": self.triple[1], "bet_raise": self.triple[2]},
            "passed_threshold": self.passed, "retrieved": self.retrieved, "fallback": self.fallback,
            "threshold": self.threshold, "min_cases": self.min_cases, "mean_similarity": self.mean_similarity,
            "weighted": expl["weighted"], "weights": expl["weights"], "cases": cases,
            "warnings": list(self.warnings),
        }


_counts_cache: dict[tuple[str, str, int, str], dict[str, int]] = {}


def action_counts(casebase: CaseBase, street: str) -> dict[str, int]:
    """Cases per action kind on ``street`` (``{"f": n, "c": n, "r": n}``), cached per case base.

    >>> action_counts(CaseBase.open(resolve_casebase("default")), "flop")  # doctest: +SKIP
    {'f': 3391, 'c': 10417, 'r': 8203}
    """
    key = (str(casebase.path), street, casebase.count(street), casebase.name)
    hit = _counts_cache.get(key)
    source = casebase.answer_source(street) if hit is None else None
    if source is not None:  # the saved answer rows' codes: no Parquet read
        counts = np.bincount(source[1].codes, minlength=3)
        hit = _counts_cache[key] = {k: int(counts[i]) for i, k in enumerate(ACTIONS)}
    if hit is None:
        actions = casebase.column(street, "action")
        hit = {k: int(np.count_nonzero(actions == k)) for k in ACTION_WORDS}  # no sort (np.unique's)
        _counts_cache[key] = hit
    return dict(hit)


def street_warnings(casebase: CaseBase, street: str) -> list[str]:
    """The answer's warnings: action kinds ``street`` lacks or has rarely (under
    :data:`~cbr.store.honesty.RARE_SHARE`), in :func:`cbr.store.honesty.action_warnings`'
    ``answer`` wording."""
    counts = action_counts(casebase, street)
    return action_warnings({street: {"total": sum(counts.values()), **counts}}, wording="answer",
                           casebase=casebase.path.name)


#: Up to this many rows are gathered by slicing (~12 us a row); more use ``Table.take``, whose first call imports
#: ``pyarrow.compute`` (~40 ms of a one-query process) but is faster per row.
SLICE_ROWS = 2000


def _rows(table: Any, ids: Any) -> list[dict[str, Any]]:
    """Rows ``ids`` of an Arrow table as dicts, in that order.

    >>> import pyarrow as pa
    >>> _rows(pa.table({"a": [10, 11, 12]}), [2, 0])
    [{'a': 12}, {'a': 10}]
    """
    if len(ids) == 0:
        return []
    if len(ids) > SLICE_ROWS:
        return table.take(ids).to_pylist()
    import pyarrow as pa

    return pa.concat_tables([table.slice(int(i), 1) for i in ids]).to_pylist()


def opponents_in_hand(dp: DecisionPoint) -> list[int]:
    """Positions of the opponents still in the hand at ``dp`` (not the actor, not folded),
    in position order: the order in which :func:`answer` takes ``opponents``."""
    return [q for q, out in enumerate(dp.folded) if q != dp.position and not out]


def opponent_values(dp: DecisionPoint, opponents: Sequence[Sequence[float]]) -> dict[int, tuple[float, ...]]:
    """``position -> (aggressiveness, tightness, riskiness)`` from values given for the
    opponents still in the hand, in position order (fewer: the rest stay at the player
    model's defaults). Raises :class:`ConfigError` for more values than opponents, or an
    attribute outside 0..1.

    >>> from cbr.game.situation import situation
    >>> dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5)
    >>> opponent_values(dp, [(0.4, 0.8, 0.6)])
    {0: (0.4, 0.8, 0.6)}
    """
    positions = opponents_in_hand(dp)
    if len(opponents) > len(positions):
        raise ConfigError(f"{counted(len(opponents), 'opponent model')} given, but "
                          f"{counted(len(positions), 'opponent')} {'is' if len(positions) == 1 else 'are'} still in the hand")
    out = {}
    for q, values in zip(positions, opponents):
        vals = tuple(float(v) for v in values)
        if len(vals) != 3 or not all(0.0 <= v <= 1.0 for v in vals):
            raise ConfigError(f"an opponent model is three values in 0..1 (aggressiveness, tightness, "
                              f"riskiness), not {values!r}")
        out[q] = vals
    return out


#: The int8 action codes of each loaded street's action column, by the column's id (with a
#: reference to it, so a reused id of a dropped column is never taken for it).
_codes_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _action_codes(actions: np.ndarray) -> np.ndarray:
    """:func:`~cbr.retrieval.action_codes` of a street's action column, computed once per
    loaded column (a street of 30,000 cases takes about 2 ms to encode)."""
    hit = _codes_cache.get(id(actions))
    if hit is not None and hit[0] is actions:
        return hit[1]
    codes = action_codes(actions)
    if len(_codes_cache) > 64:
        _codes_cache.clear()
    _codes_cache[id(actions)] = (actions, codes)
    return codes


def _from_answer_rows(casebase: CaseBase, source: tuple[Any, Any], fs: Any, dp: DecisionPoint, weighted: bool,
                      values: Any, keep: Optional[int], top: Optional[int]) -> Optional[tuple[Any, Any, tuple, Any]]:
    """The vote, explanation, case ids and feature rows from the saved index and its answer
    rows (:meth:`CaseBase.answer_source`); None if a provenance record is damaged (noted)."""
    index, rows = source
    vote = retrieve_triple(fs, dp, index, rows.codes, weighted=weighted, opponents=values, top=keep)
    expl = vote.explanation(index)
    expl = expl if top is None else expl.head(top)
    ids = np.asarray(expl.ids, dtype=np.int64)
    try:
        listed = rows.rows(ids)
    except CaseBaseError as exc:
        if casebase.memory_map:
            raise
        casebase.answer_rows_damaged(dp.street, exc)
        return None
    case_ids = tuple(int(r.pop("case_id")) for r in listed)
    expl = expl.with_provenance([{c: r[c] for c in PROVENANCE if c in r} for r in listed])
    return vote, expl, case_ids, index.cases_[ids]


def _passed(vote: Any, threshold: float, index: Any) -> int:
    """How many cases reached the threshold: all of them, or with the fallback (fewer than
    ``min_cases`` did) those among the listed most similar when a listed case is below it (the
    list is sorted, so every one above is in it), else a count by the grouped scan of ``index()``."""
    if not vote.fallback:
        return len(vote)
    sims = np.asarray(vote.similarities)
    hit = int(np.count_nonzero(sims >= threshold))
    if hit < sims.shape[0]:
        return hit
    idx = index()
    return int(idx.aggregate(vote.query, np.zeros(idx.n_cases_, dtype=np.int8), None, 1, fallback=False).n)


def answer(casebase: CaseBase, dp: DecisionPoint, *, weighted: Optional[bool] = None,
           opponents: Optional[Sequence[Sequence[float]]] = None, top: Optional[int] = None,
           threshold: Optional[float] = None, k: Optional[int] = None,
           min_cases: Optional[int] = None) -> QueryAnswer:
    """Retrieve the cases most similar to ``dp`` and the action frequencies they vote for.

    ``weighted`` (default: the case base's ``weighted_triple`` setting) weights each
    retrieved action by its similarity. ``opponents``: for a case base whose features use
    player models (``casper-opp``), the (aggressiveness, tightness, riskiness) of the
    opponents still in the hand in position order (see :func:`opponent_values`; None or
    fewer: the model's defaults). ``top``: explain only the ``top`` most similar cases
    (their provenance and feature values; the triple, counts and mean similarity still come
    from every retrieved case; None: explain all). Raises :class:`CaseBaseError` when the
    street has no cases, :class:`ConfigError` for ``opponents`` the feature set does not use.
    ``threshold``, ``k`` and ``min_cases`` replace the case base's similarity threshold, fallback
    ``k`` and ``min_cases`` (fewer than this many at or above the threshold: the ``k`` most similar)
    for this answer alone (:meth:`~cbr.retrieval.CaseIndex.with_retrieval`; a bad value raises
    :class:`ConfigError`); ``cbr casebase similarity`` changes them for good.
    """
    street = STREETS[dp.street]
    if casebase.count(street) == 0:
        raise CaseBaseError(f"case base {casebase.name!r} has no {street} cases")
    config = casebase.similarity()
    used = float(config.threshold if threshold is None else threshold)
    weighted = resolve_weighted(weighted, config)

    def tuned(index: Any) -> Any:  # this answer's threshold and k, if given: the case base is unchanged
        if threshold is None and k is None and min_cases is None:
            return index
        least = config.min_cases if min_cases is None else min_cases
        if k is not None and isinstance(least, int) and least > k:
            own = " (the case base's)" if min_cases is None else ""
            raise ConfigError(f"min_cases {least}{own} is above k {k}: fewer than min_cases cases at the threshold "
                              f"take the k most similar, so min_cases must be at most k"
                              + (" (give min_cases too)" if min_cases is None else ""))
        return index.with_retrieval(threshold=threshold, fallback_k=k, min_cases=min_cases)
    fs = casebase.feature_set()
    values = None
    if opponents is not None:
        if not getattr(fs, "needs_player_models", False):
            raise ConfigError(f"case base {casebase.name!r} (feature set {fs.name!r}) does not use opponent "
                              "models; they apply to case bases built with the casper-opp feature set")
        values = opponent_values(dp, opponents)
    names = casebase.feature_names(street)
    # with ``top``, the triple and the counts come from the aggregate of every hit, and only the
    # ``top`` most similar cases are listed (retrieve_triple's top)
    keep = None if top is None else max(int(top), 1)
    source = casebase.answer_source(street)
    found = None if source is None else _from_answer_rows(casebase, (tuned(source[0]), source[1]), fs, dp, weighted,
                                                          values, keep, top)
    if found is not None:
        vote, expl, case_ids, own = found
    elif casebase.memory_map:  # the street may not fit in memory: read the hits only
        index = tuned(casebase.index(street))
        vote = retrieve_triple(fs, dp, index, action_codes(casebase.column(street, "action")), weighted=weighted,
                               opponents=values, top=keep)
        expl = vote.explanation(index)
        expl = expl if top is None else expl.head(top)
        rows = np.asarray(expl.ids, dtype=np.int64)
        case_ids = tuple(int(i) for i in casebase.column(street, "case_id")[rows])
        expl = expl.with_provenance(casebase.rows_by_id(street, case_ids, PROVENANCE))
        own = index.cases_[rows]
    else:
        index = tuned(casebase.index(street))
        cases = casebase.cases(street)
        vote = retrieve_triple(fs, dp, index, _action_codes(cases.actions), weighted=weighted, opponents=values,
                               top=keep)
        expl = vote.explanation(index)
        expl = expl if top is None else expl.head(top)
        table = casebase.table(street)
        cols = [c for c in PROVENANCE if c in table.column_names]
        expl = expl.with_provenance(_rows(table.select(cols), expl.ids))
        rows = np.asarray(expl.ids, dtype=np.int64)
        # the retrieval's ids are row numbers of the street's table; users see the case_id column
        case_ids = tuple(int(i) for i in cases.case_ids[rows]) if len(rows) else ()
        own = cases.features[rows] if len(rows) else np.zeros((0, len(names)))
    case_features = tuple({n: float(v) for n, v in zip(names, r)} for r in own)
    return QueryAnswer(
        casebase=casebase.path.name, street=street,  # the folder users name (a copy keeps its manifest's name)
        features={n: float(v) for n, v in zip(fs.feature_names(street), vote.query)},
        triple=vote.triple, passed=_passed(vote, used, lambda: tuned(casebase.index(street))),
        retrieved=len(vote), fallback=vote.fallback, threshold=used,
        min_cases=int(config.min_cases if min_cases is None else min_cases),
        mean_similarity=vote.mean_similarity() if len(vote) else 0.0, explanation=expl,
        case_ids=case_ids, case_features=case_features, warnings=tuple(street_warnings(casebase, street)),
    )


def explain_decision(decision: Any, *, top: Optional[int] = None) -> QueryAnswer:
    """A case-based bot's decision explained from its own record
    (:class:`~cbr.policies.cbr_policy.CBRDecision`): the feature row it decided from, the cases
    its vote counted (the ``top`` most similar of those the record lists) with their provenance
    and per-feature similarities, the triple and the counts. Nothing is retrieved again: in a
    session that retains, the decision's own case (retained after it) is not among them.

    >>> from cbr.game.situation import situation
    >>> from cbr.policies.cbr_policy import CBRPolicy
    >>> dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5, previous_round_bets=2)
    >>> with CBRPolicy(preset="casper", seed=1) as bot:
    ...     d = bot.decide(dp)
    ...     ans = explain_decision(d, top=3)
    >>> ans.triple == d.vote.triple, ans.retrieved == d.retrieved, ans.case_ids == tuple(d.case_ids[:3].tolist())
    (True, True, True)
    """
    vote, casebase, index = decision.vote, decision.casebase, decision.index
    if vote is None or casebase is None or index is None:
        raise ConfigError("this decision carries no vote to explain (not a case-based bot's)")
    street = decision.street
    expl = vote.explanation(index)
    expl = expl if top is None else expl.head(top)
    ids = np.asarray(expl.ids, dtype=np.int64)
    case_ids = tuple(int(i) for i in np.asarray(decision.case_ids)[: len(ids)])
    if casebase.memory_map:
        expl = expl.with_provenance(casebase.rows_by_id(street, case_ids, PROVENANCE))
    else:
        table = casebase.table(street)
        cols = [c for c in PROVENANCE if c in table.column_names]
        expl = expl.with_provenance(_rows(table.select(cols), ids))
    names = index.similarity.features
    own = index.cases_[ids] if len(ids) else np.zeros((0, len(names)))
    return QueryAnswer(
        casebase=casebase.path.name, street=street, features={n: float(v) for n, v in zip(names, vote.query)},
        triple=vote.triple, passed=_passed(vote, float(index.threshold), lambda: index), retrieved=len(vote),
        fallback=vote.fallback,
        threshold=float(index.threshold), min_cases=int(index.min_cases),
        mean_similarity=vote.mean_similarity() if len(vote) else 0.0, explanation=expl, case_ids=case_ids,
        case_features=tuple({n: float(v) for n, v in zip(names, r)} for r in own),
        warnings=tuple(street_warnings(casebase, street)),
    )
