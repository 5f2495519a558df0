"""How well does a case base predict? Hold-out evaluation of its probability triples.

For held-out decisions, per street: the accuracy of the triple's most likely action and the
log-loss of the triple (each probability clipped to at least
:data:`~cbr.models.predictor.LOG_LOSS_CLIP` = 0.001 and renormalised, because a k-NN triple
can give the action taken probability 0; ``zero_share`` says how often it did), beside the
majority-class baseline and the ANN action predictor (:mod:`cbr.models.predictor`) on the
same decisions, and the mean similarity of the retrieved cases. Each accuracy and log-loss
comes with the half-width of its 95% confidence interval over hands
(:func:`cbr.stats.cluster_mean_ci`: the decisions of one hand are not independent, so the hands
are the independent draws).

Two ways to hold decisions out:

- ``folds=K``: K-fold over the case base's own cases. Whole hands go to one fold
  (:func:`~cbr.models.predictor.fold_assignment` over ``(source, hand_id)``), so a decision
  is never answered by a case of its own hand; each fold is answered by an index over the
  other folds' cases, built with the case base's similarity (or ``similarity``).
- ``holdout=LOGS``: every decision with known hole cards in other logs, answered by the
  whole case base (its own index, or one built with ``similarity``).

The majority baseline answers each street with the training cases' action frequencies;
the ANN is trained on the training cases (every street at once, as its inputs hold the
street). ``max_decisions`` evaluates a seeded sample of each street's held-out decisions
(the training side always uses every case). The decisions scored never depend on the
columns asked for: a case whose decision cannot be rebuilt for the ANN's inputs is still
scored by the k-NN and the majority baseline, and only the ANN column leaves it out
(``ann_decisions`` says on how many it was scored).

>>> from cbr.store import CaseBase, resolve_casebase
>>> ev = evaluate_casebase(CaseBase.open(resolve_casebase("default")), folds=3, max_decisions=100, ann=False)
>>> [r.street for r in ev.rows], ev.rows[0].decisions
(['preflop', 'flop', 'turn', 'river', 'all'], 100)
>>> 0 <= ev.rows[-1].knn["accuracy"] <= 1
True
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from cbr.errors import ConfigError, counted
from cbr.game.gamedef import STREETS
from cbr.models.predictor import (
    ACTIONS,
    LOG_LOSS_CLIP,
    MIN_STREET_EXAMPLES,
    ActionPredictor,
    Examples,
    PredictorError,
    TooFewExamplesError,
    clipped_log_loss,
    examples_from_casebase,
    fold_assignment,
    hand_inputs,
    majority_triples,
)
from cbr.retrieval import CaseIndex, action_codes, probability_triple
from cbr.stats import cluster_mean_ci

__all__ = ["StreetEvaluation", "Evaluation", "evaluate_casebase", "check_similarity", "knn_triples", "log_losses",
           "CI_METHOD"]

Progress = Optional[Callable[..., None]]
#: How the confidence intervals are computed (``--json``'s ``ci_method``).
CI_METHOD = "cluster-robust over hands (the hands are the independent draws)"
#: The per-decision arrays kept for each street while evaluating.
_KEYS = ("y", "knn", "majority", "ann", "sims", "fell", "hands")


@dataclass
class StreetEvaluation:
    """Scores on one street (or ``all``): each predictor's ``{"accuracy", "log_loss"}``
    (``None`` below :data:`~cbr.models.predictor.MIN_STREET_EXAMPLES` decisions), and in
    ``ci`` the same keys per predictor holding the half-width of the 95% confidence interval
    over ``hands`` (:func:`cbr.stats.cluster_mean_ci`). ``ann_decisions``: the decisions the
    ANN column was scored on (those whose inputs could be rebuilt; None without the ANN)."""

    street: str
    decisions: int
    actions: dict[str, int]
    knn: dict[str, Optional[float]]
    majority: dict[str, Optional[float]]
    ann: Optional[dict[str, Optional[float]]]
    mean_similarity: Optional[float]
    fallback_share: Optional[float]
    zero_share: Optional[float]
    note: str = ""
    hands: int = 0
    ann_decisions: Optional[int] = None
    ci: dict[str, Optional[dict[str, Optional[float]]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"street": self.street, "decisions": self.decisions, "actions": self.actions, "knn": self.knn,
                "majority": self.majority, "ann": self.ann, "mean_similarity": self.mean_similarity,
                "fallback_share": self.fallback_share, "zero_share": self.zero_share, "note": self.note,
                "hands": self.hands, "ann_decisions": self.ann_decisions, "ci": self.ci}


@dataclass
class Evaluation:
    """The report of :func:`evaluate_casebase`: one row per street, then ``all``."""

    casebase: str
    mode: str
    folds: Optional[int]
    holdout: list[str]
    similarity: str
    seed: int
    max_decisions: Optional[int]
    rows: list[StreetEvaluation]
    skipped: int = 0
    notes: list[str] = field(default_factory=list)
    clip: float = LOG_LOSS_CLIP
    #: With ``details=True``: one record per evaluated decision (street, row number of its
    #: case or its index among the hold-out decisions, fold, hand number, action, k-NN triple,
    #: mean similarity).
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"casebase": self.casebase, "mode": self.mode, "folds": self.folds, "holdout": self.holdout,
                "similarity": self.similarity, "seed": self.seed, "max_decisions": self.max_decisions,
                "log_loss_clip": self.clip, "skipped": self.skipped, "notes": self.notes,
                "ci_level": 0.95, "ci_method": CI_METHOD, "streets": [r.to_dict() for r in self.rows]}


def check_similarity(config: Any, casebase: Any) -> None:
    """Raise :class:`ConfigError` unless ``config`` covers exactly the case base's columns."""
    for s in STREETS:
        have, want = list(config.street(s).features), list(casebase.feature_names(s))
        if have != want:
            raise ConfigError(f"the similarity covers {have} on the {s}, but case base "
                              f"{casebase.name!r} has {want}")


def knn_triples(index: CaseIndex, actions: np.ndarray, queries: np.ndarray,
                weighted: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Triples ``(n, 3)``, mean similarity of the retrieved cases ``(n,)`` and whether the
    fallback was used ``(n,)`` for each query row; ``actions``: the index's cases' actions."""
    codes = action_codes(actions)
    P = np.zeros((len(queries), 3))
    sims = np.zeros(len(queries))
    fell = np.zeros(len(queries), dtype=bool)
    if len(queries) == 0:
        return P, sims, fell
    for i, r in enumerate(index.retrieve_batch(np.asarray(queries, dtype=np.float32))):
        P[i] = probability_triple(codes[r.ids], r.similarities, weighted)
        sims[i] = float(np.mean(r.similarities))
        fell[i] = bool(r.fallback)
    return P, sims, fell


def log_losses(P: np.ndarray, y: np.ndarray, eps: float = LOG_LOSS_CLIP) -> np.ndarray:
    """Per decision ``-ln p(action taken)``, each triple clipped as :func:`~cbr.models.predictor.
    clipped_log_loss` does (whose value is their mean).

    >>> log_losses(np.array([[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]), np.array([1, 1])).round(4).tolist()
    [0.6941, 0.002]
    """
    P = np.maximum(np.asarray(P, dtype=np.float64), eps)
    P = P / P.sum(axis=1, keepdims=True)
    y = np.asarray(y, dtype=np.int64)
    return -np.log(P[np.arange(len(y)), y])


def _half_width(values: np.ndarray, hands: np.ndarray) -> Optional[float]:
    """The 95% half-width over hands (None when it has no finite value: a single hand)."""
    half = cluster_mean_ci(values.tolist(), hands.tolist())[1]
    return half if math.isfinite(half) else None


def _score(name: str, y: np.ndarray, P: dict[str, Optional[np.ndarray]], sims: np.ndarray,
           fell: np.ndarray, hands: np.ndarray) -> StreetEvaluation:
    n = int(len(y))
    counts = {a: int((y == i).sum()) for i, a in enumerate(ACTIONS)}

    def scores(M: Optional[np.ndarray]) -> tuple[Optional[dict[str, Optional[float]]],
                                                 Optional[dict[str, Optional[float]]]]:
        if M is None:
            return None, None
        known = ~np.isnan(M).any(axis=1)  # the ANN leaves out the decisions it has no inputs for
        m, yk, hk = (M, y, hands) if known.all() else (M[known], y[known], hands[known])
        if len(yk) < MIN_STREET_EXAMPLES:
            return {"accuracy": None, "log_loss": None}, {"accuracy": None, "log_loss": None}
        hits = (np.argmax(m, axis=1) == yk).astype(np.float64)
        return ({"accuracy": float(np.mean(hits)), "log_loss": clipped_log_loss(m, yk)},
                {"accuracy": _half_width(hits, hk), "log_loss": _half_width(log_losses(m, yk), hk)})

    knn = P["knn"]
    enough = n >= MIN_STREET_EXAMPLES
    (knn_s, knn_ci), (maj_s, maj_ci), (ann_s, ann_ci) = scores(knn), scores(P["majority"]), scores(P.get("ann"))
    ann = P.get("ann")
    return StreetEvaluation(
        street=name, decisions=n, actions=counts, knn=knn_s or {}, majority=maj_s or {}, ann=ann_s,
        mean_similarity=float(np.mean(sims)) if enough else None,
        fallback_share=float(np.mean(fell)) if enough else None,
        zero_share=float(np.mean(knn[np.arange(n), y] <= 0)) if enough and knn is not None else None,
        note="" if enough else f"too few decisions ({n} < {MIN_STREET_EXAMPLES}) for a meaningful accuracy",
        hands=int(len(np.unique(hands))),
        ann_decisions=None if ann is None else int((~np.isnan(ann).any(axis=1)).sum()),
        ci={"knn": knn_ci or {}, "majority": maj_ci or {}, "ann": ann_ci},
    )


def _sample(rows: np.ndarray, limit: Optional[int], rng: np.random.Generator) -> np.ndarray:
    if limit is None or len(rows) <= limit:
        return rows
    return np.sort(rng.choice(rows, size=limit, replace=False))


def _hand_keys(casebase: Any) -> dict[str, np.ndarray]:
    """Per street, an integer hand number per case (same number across streets)."""
    ids: dict[tuple[str, str], int] = {}
    out: dict[str, np.ndarray] = {}
    for s in STREETS:
        n = casebase.count(s)
        if n == 0:
            out[s] = np.zeros(0, dtype=np.int64)
            continue
        table = casebase.table(s)
        cols = table.column_names
        src = table.column("source").to_pylist() if "source" in cols else [None] * n
        hid = table.column("hand_id").to_pylist() if "hand_id" in cols else [None] * n
        cid = table.column("case_id").to_pylist()
        keys = [(a or "", b if b else f"case{c}") for a, b, c in zip(src, hid, cid)]
        out[s] = np.asarray([ids.setdefault(k, len(ids)) for k in keys], dtype=np.int64)
    return out


def evaluate_casebase(casebase: Any, *, folds: Optional[int] = 5, holdout: Optional[Sequence[str]] = None,
                      similarity: Any = None, similarity_name: Optional[str] = None, seed: int = 0,
                      max_decisions: Optional[int] = None, ann: bool = True, log_format: Optional[str] = None,
                      details: bool = False, predictor: Optional[ActionPredictor] = None,
                      progress: Progress = None) -> Evaluation:
    """Evaluate ``casebase`` (an open :class:`~cbr.store.CaseBase`): K-fold over its cases
    (``folds``), or on the decisions of ``holdout`` logs; see the module docstring.

    ``similarity``: a :class:`~cbr.similarity.SimilarityConfig` to use instead of the case
    base's own (named ``similarity_name`` in the report); ``ann=False`` skips the predictor;
    ``details=True`` lists every evaluated decision in :attr:`Evaluation.decisions`;
    ``predictor``: a trained :class:`~cbr.models.predictor.ActionPredictor` for the ANN
    column of a hold-out evaluation (default: one trained on the case base's cases; with
    folds it is always trained per fold, as a saved one may have seen the held-out hands).
    """
    config = similarity if similarity is not None else casebase.similarity()
    check_similarity(config, casebase)
    name = similarity_name or ("case base's own" if similarity is None else "given")
    if max_decisions is not None and max_decisions < 1:
        raise ConfigError(f"max_decisions must be at least 1, got {max_decisions}")
    if predictor is not None and not holdout:
        raise ConfigError("a saved predictor can only be compared on hold-out logs: with folds it is trained "
                          "per fold, on the training folds only")
    if holdout:
        ev = _evaluate_holdout(casebase, list(holdout), config, similarity is not None, name, seed,
                               max_decisions, ann, log_format, progress, predictor)
    else:
        if folds is None or folds < 2:
            raise ConfigError(f"k-fold evaluation needs at least 2 folds, got {folds}")
        ev = _evaluate_folds(casebase, folds, config, name, seed, max_decisions, ann, progress)
    if not details:
        ev.decisions = []
    return ev


def _evaluate_folds(cb: Any, k: int, config: Any, sim_name: str, seed: int, max_decisions: Optional[int],
                    ann: bool, progress: Progress) -> Evaluation:
    hands = _hand_keys(cb)
    all_groups = np.concatenate([hands[s] for s in STREETS])
    if len(all_groups) == 0:
        raise TooFewExamplesError(f"case base {cb.name!r} has no cases to evaluate")
    fold_all = fold_assignment(all_groups, k, seed)
    fold: dict[str, np.ndarray] = {}
    start = 0
    for s in STREETS:
        fold[s] = fold_all[start:start + len(hands[s])]
        start += len(hands[s])
    rng = np.random.default_rng(seed)
    notes: list[str] = []
    skipped = 0
    # the ANN's examples, aligned to (street, row)
    ex: Optional[Examples] = None
    ex_index: dict[str, np.ndarray] = {s: np.full(cb.count(s), -1, dtype=np.int64) for s in STREETS}
    ex_fold = np.zeros(0, dtype=np.int64)
    if ann:
        ex, where = examples_from_casebase(cb)
        for j, (s, row) in enumerate(where.tolist()):
            ex_index[STREETS[s]][row] = j
        ex_fold = np.asarray([fold[STREETS[s]][row] for s, row in where.tolist()], dtype=np.int64)
        skipped = len(ex.skipped)
        if skipped:
            notes.append(f"{counted(skipped, 'case')} whose decision could not be rebuilt for the ANN's inputs are left out "
                         f"of the ANN column only (k-NN and majority score them): {ex.skipped[0]}")
    # the decisions scored: the same whichever columns are asked for
    chosen = {s: _sample(np.arange(cb.count(s)), max_decisions, rng) for s in STREETS}
    total = sum(len(c) for c in chosen.values())
    if progress is not None:
        progress(0, total=total)
    weighted = bool(config.weighted_triple)
    decisions: list[dict[str, Any]] = []
    per_street: dict[str, dict[str, list[np.ndarray]]] = {s: {key: [] for key in _KEYS} for s in STREETS}
    for f in range(k):
        net = None
        if ann and ex is not None:
            train = ex_fold != f
            try:
                net = ActionPredictor(seed=seed).fit(ex.X[train], ex.y[train])
            except TooFewExamplesError as exc:
                notes.append(f"fold {f}: no ANN ({exc})")
        for s in STREETS:
            cases = cb.cases(s)
            test = chosen[s][fold[s][chosen[s]] == f]
            if len(test) == 0:
                continue
            train_rows = np.flatnonzero(fold[s] != f)
            codes = action_codes(cases.actions)
            y = codes[test].astype(np.int64)
            if len(train_rows) == 0:
                raise TooFewExamplesError(f"fold {f} holds every {s} case: too few hands for {k} folds")
            index = CaseIndex.for_street(config, s).fit(cases.features[train_rows])
            P, sims, fell = knn_triples(index, cases.actions[train_rows], cases.features[test], weighted)
            street_no = np.full(len(train_rows), STREETS.index(s))
            maj = majority_triples(codes[train_rows].astype(np.int64), street_no, np.full(len(test), street_no[0]))
            d = per_street[s]
            d["y"].append(y)
            d["knn"].append(P)
            d["majority"].append(maj)
            d["sims"].append(sims)
            d["fell"].append(fell)
            d["hands"].append(hands[s][test])
            if net is not None and ex is not None:
                d["ann"].append(_ann_triples(net, ex.X, ex_index[s][test]))
            decisions.extend({"street": s, "row": int(r), "fold": f, "hand": int(h), "action": ACTIONS[int(a)],
                              "knn": P[j].tolist(), "mean_similarity": float(sims[j])}
                             for j, (r, h, a) in enumerate(zip(test, hands[s][test], y)))
            if progress is not None:
                progress(len(test))
    rows = _rows(per_street, ann and all(len(per_street[s]["ann"]) == len(per_street[s]["y"]) for s in STREETS))
    return Evaluation(casebase=cb.name, mode="folds", folds=k, holdout=[], similarity=sim_name, seed=seed,
                      max_decisions=max_decisions, rows=rows, skipped=skipped, notes=notes, decisions=decisions)


def _ann_triples(net: ActionPredictor, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The ANN's triples for the examples ``rows`` (-1: no inputs; a row of NaN, left out of its scores)."""
    out = np.full((len(rows), 3), np.nan)
    known = rows >= 0
    if known.any():
        out[known] = net.predict_proba(X[rows[known]])
    return out


def _rows(per_street: dict[str, dict[str, list[np.ndarray]]], with_ann: bool) -> list[StreetEvaluation]:
    out = []
    merged: dict[str, list[np.ndarray]] = {key: [] for key in _KEYS}

    def cat(parts: list[np.ndarray], width: int = 3) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros((0, width))

    def flat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

    for s in STREETS:
        d = per_street[s]
        y = flat(d["y"], np.int64)
        P = {"knn": cat(d["knn"]), "majority": cat(d["majority"]), "ann": cat(d["ann"]) if with_ann else None}
        sims = flat(d["sims"], np.float64)
        fell = flat(d["fell"], bool)
        hands = flat(d["hands"], np.int64)
        out.append(_score(s, y, P, sims, fell, hands))
        for key, value in (("y", y), ("sims", sims), ("fell", fell), ("hands", hands)):
            merged[key].append(value)
        for key in ("knn", "majority", "ann"):
            if P[key] is not None:
                merged[key].append(P[key])
    y = np.concatenate(merged["y"])
    P = {"knn": cat(merged["knn"]), "majority": cat(merged["majority"]),
         "ann": cat(merged["ann"]) if with_ann else None}
    out.append(_score("all", y, P, np.concatenate(merged["sims"]), np.concatenate(merged["fell"]),
                      np.concatenate(merged["hands"])))
    return out


def _evaluate_holdout(cb: Any, paths: list[str], config: Any, own_index: bool, sim_name: str, seed: int,
                      max_decisions: Optional[int], ann: bool, log_format: Optional[str],
                      progress: Progress, predictor: Optional[ActionPredictor] = None) -> Evaluation:
    from cbr.logs.replay import ReplayedLogs

    fs = cb.feature_set()
    dps_by_street: dict[int, list[Any]] = {s: [] for s in range(4)}
    inputs_by_street: dict[int, list[np.ndarray]] = {s: [] for s in range(4)}
    hand_by_street: dict[int, list[int]] = {s: [] for s in range(4)}
    notes: list[str] = []
    logs = ReplayedLogs(paths, log_format)
    for _, dps in logs:
        hand = logs.hands
        X = hand_inputs(dps) if dps else np.zeros((0, 19), np.float32)
        for dp, row in zip(dps, X):
            if dp.hole is None or dp.action not in ("f", "c", "r"):
                continue
            dps_by_street[dp.street].append(dp)
            inputs_by_street[dp.street].append(row)
            hand_by_street[dp.street].append(hand)
    skipped = len(logs.issues)
    first_issue = logs.issues[0].splitlines()[0] if logs.issues else None  # why the first was skipped
    if skipped:
        notes.append(f"{skipped:,} {'hand or file' if skipped == 1 else 'hands or files'} of the hold-out logs could not "
                     f"be read or replayed")
    rng = np.random.default_rng(seed)
    chosen = {s: _sample(np.arange(len(dps_by_street[s])), max_decisions, rng) for s in range(4)}
    total = sum(len(c) for c in chosen.values())
    if total == 0:
        raise TooFewExamplesError(f"no decision with known hole cards in {', '.join(paths)}"
                                  + (f" ({skipped} skipped; the first: {first_issue})" if first_issue else ""))
    net = predictor if ann else None
    if ann and net is None:
        ex, _ = examples_from_casebase(cb)
        try:
            net = ActionPredictor(seed=seed).fit(ex.X, ex.y)
        except (TooFewExamplesError, PredictorError) as exc:
            notes.append(f"no ANN ({exc})")
    if progress is not None:
        progress(0, total=total)
    weighted = bool(config.weighted_triple)
    decisions: list[dict[str, Any]] = []
    per_street: dict[str, dict[str, list[np.ndarray]]] = {s: {key: [] for key in _KEYS} for s in STREETS}
    for s, name in enumerate(STREETS):
        picked = [dps_by_street[s][i] for i in chosen[s]]
        if not picked or cb.count(name) == 0:
            if picked:
                notes.append(f"case base {cb.name!r} has no {name} cases: {counted(len(picked), 'decision')} not evaluated")
            continue
        prepare = getattr(fs, "prepare", None)
        if callable(prepare):  # batch hand features where the feature set has it (CASPER)
            prepare(picked)
        Q = np.asarray([fs.row(dp) for dp in picked], dtype=np.float32)
        cases = cb.cases(name)
        index = CaseIndex.for_street(config, name).fit(cases.features) if own_index else cb.index(name)
        P, sims, fell = knn_triples(index, cases.actions, Q, weighted)
        codes = action_codes(cases.actions).astype(np.int64)
        y = action_codes([dp.action for dp in picked]).astype(np.int64)
        d = per_street[name]
        d["y"].append(y)
        d["knn"].append(P)
        d["majority"].append(majority_triples(codes, np.full(len(codes), s), np.full(len(y), s)))
        d["sims"].append(sims)
        d["fell"].append(fell)
        hands = np.asarray([hand_by_street[s][i] for i in chosen[s]], dtype=np.int64)
        d["hands"].append(hands)
        if net is not None:
            d["ann"].append(net.predict_proba(np.asarray([inputs_by_street[s][i] for i in chosen[s]])))
        decisions.extend({"street": name, "row": int(i), "fold": None, "hand": int(h), "action": ACTIONS[int(a)],
                          "knn": P[j].tolist(), "mean_similarity": float(sims[j])}
                         for j, (i, h, a) in enumerate(zip(chosen[s], hands, y)))
        if progress is not None:
            progress(len(y))
    rows = _rows(per_street, net is not None)
    return Evaluation(casebase=cb.name, mode="holdout", folds=None, holdout=paths, similarity=sim_name, seed=seed,
                      max_decisions=max_decisions, rows=rows, skipped=skipped, notes=notes, decisions=decisions)
