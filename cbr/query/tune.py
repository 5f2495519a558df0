"""Learned similarity weights (CASPER's "CASPERGeneral"): an evolutionary search over the
feature weights (and the ``exp`` measures' decay constants) that minimises the hold-out
log-loss of a case base's probability triples (:mod:`cbr.query.evaluate`).

The search is a seeded (mu + lambda) evolution strategy. A genome is the whole similarity
configuration; a child mutates each weight by a log-normal factor (``sigma``, clipped to
0.5..100) and each ``k`` likewise. Fitness is the k-fold log-loss of :func:`~cbr.query.evaluate.
evaluate_casebase` per street; because a street's weights change only that street's
triples, selection is per street: each street of the next parents comes from the genomes
best on that street. Generation 0 holds the case base's own (hand-picked) configuration,
so the result is never worse than it on the tuning folds.

Tune on one evaluation seed, report on another (``report_seed``): the held-out folds and
the decision sample differ, so the reported improvement is not the tuning's own score. The
report gives each log-loss with the half-width of its 95% confidence interval over hands, and
the change (learned minus hand-picked) with its own, paired over the same held-out decisions
(:func:`report_losses`).

>>> from cbr.store import CaseBase, resolve_casebase
>>> r = tune_similarity(CaseBase.open(resolve_casebase("default")), generations=1, population=1,
...                     max_decisions=100, folds=2, seed=3)
>>> len(r.history), r.best_loss["all"] <= r.start_loss["all"]
(2, True)
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np

from cbr.errors import CBRError, ConfigError
from cbr.game.gamedef import STREETS
from cbr.similarity.config import FeatureSimilarity, SimilarityConfig, StreetSimilarity

__all__ = ["TuneResult", "tune_similarity", "tune_and_report", "street_losses", "report_losses", "mutate"]

#: Bounds of a mutated weight (CASPER's weights run 0..100; 0 would drop a feature for good).
WEIGHT_RANGE = (0.5, 100.0)
K_RANGE = (0.05, 20.0)


@dataclass
class TuneResult:
    """What :func:`tune_similarity` found: the best configuration, its log-loss per street
    (and ``all``, the decision-weighted mean) on the tuning seed beside the starting
    configuration's, and per generation the best losses (``history``)."""

    best: SimilarityConfig
    best_loss: dict[str, float]
    start_loss: dict[str, float]
    history: list[dict[str, float]] = field(default_factory=list)
    evaluations: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"best_loss": self.best_loss, "start_loss": self.start_loss, "history": self.history,
                "evaluations": self.evaluations}


def street_losses(cb: Any, config: SimilarityConfig, *, folds: int, max_decisions: Optional[int],
                  seed: int) -> dict[str, float]:
    """k-NN log-loss per street and ``all`` (k-fold, no ANN) of ``config`` on ``cb``."""
    ev = _evaluate(cb, config, folds, max_decisions, seed)
    out = {}
    for row in ev.rows:
        loss = row.knn.get("log_loss")
        out[row.street] = float("inf") if loss is None else float(loss)
    return out


def _evaluate(cb: Any, config: SimilarityConfig, folds: int, max_decisions: Optional[int], seed: int,
              details: bool = False) -> Any:
    from cbr.query.evaluate import evaluate_casebase

    return evaluate_casebase(cb, folds=folds, similarity=config, similarity_name="tuned", seed=seed,
                             max_decisions=max_decisions, ann=False, details=details)


def report_losses(cb: Any, start: SimilarityConfig, best: SimilarityConfig, *, folds: int,
                  max_decisions: Optional[int], seed: int) -> dict[str, dict[str, Optional[float]]]:
    """Both configurations' k-NN log-loss per street and ``all`` on the same held-out
    decisions (``seed`` fixes the folds and the sample, whatever the similarity), each with the
    half-width of its 95% confidence interval over hands (``start_ci``, ``best_ci``), and
    their paired difference ``best - start`` per decision, its mean (``difference``) and
    half-width (``difference_ci``), also over hands. ``None`` (losses: ``inf``) where a street
    has too few decisions."""
    from cbr.models.predictor import ACTIONS, MIN_STREET_EXAMPLES
    from cbr.query.evaluate import log_losses
    from cbr.stats import cluster_mean_ci

    evs = [_evaluate(cb, config, folds, max_decisions, seed, details=True) for config in (start, best)]
    if [(d["street"], d["row"]) for d in evs[0].decisions] != [(d["street"], d["row"]) for d in evs[1].decisions]:
        raise CBRError("the two evaluations did not hold out the same decisions")  # pragma: no cover
    out: dict[str, dict[str, Optional[float]]] = {k: {} for k in ("start_loss", "best_loss", "start_ci", "best_ci",
                                                                   "difference", "difference_ci")}
    for which, ev in zip(("start", "best"), evs):
        for row in ev.rows:
            loss = row.knn.get("log_loss")
            out[f"{which}_loss"][row.street] = float("inf") if loss is None else float(loss)
            out[f"{which}_ci"][row.street] = row.ci["knn"].get("log_loss")
    y = np.asarray([ACTIONS.index(d["action"]) for d in evs[0].decisions], dtype=np.int64)
    losses = [log_losses(np.asarray([d["knn"] for d in ev.decisions]).reshape(-1, 3), y) for ev in evs]
    change = losses[1] - losses[0]
    streets = [d["street"] for d in evs[0].decisions]
    hands = [d["hand"] for d in evs[0].decisions]
    for row in evs[0].rows:
        picked = [i for i, s in enumerate(streets) if row.street in ("all", s)]
        if len(picked) < MIN_STREET_EXAMPLES:
            out["difference"][row.street] = out["difference_ci"][row.street] = None
            continue
        mean, half = cluster_mean_ci(change[picked].tolist(), [hands[i] for i in picked])
        out["difference"][row.street] = mean
        out["difference_ci"][row.street] = half if math.isfinite(half) else None
    return out


def mutate(config: SimilarityConfig, rng: np.random.Generator, sigma: float) -> SimilarityConfig:
    """A child: every weight times ``exp(sigma * N(0, 1))`` (clipped to :data:`WEIGHT_RANGE`),
    every ``exp`` measure's ``k`` likewise (clipped to :data:`K_RANGE`).

    >>> from cbr.similarity import default_casper
    >>> child = mutate(default_casper(), np.random.default_rng(0), 0.3)
    >>> child.streets[1].features == default_casper().streets[1].features, child == default_casper()
    (True, False)
    """
    streets = []
    for st in config.streets:
        specs = []
        for f in st.feature_specs:
            w = float(np.clip(f.weight * math.exp(sigma * rng.standard_normal()), *WEIGHT_RANGE))
            params = dict(f.params)
            if "k" in params:
                params["k"] = float(np.clip(params["k"] * math.exp(sigma * rng.standard_normal()), *K_RANGE))
            specs.append(FeatureSimilarity(f.name, f.measure, round(w, 3), f.low, f.high,
                                           {k: round(v, 4) for k, v in params.items()}))
        streets.append(StreetSimilarity(st.street, tuple(specs)))
    return replace(config, streets=tuple(streets))


def _combine(per_street: dict[str, SimilarityConfig], base: SimilarityConfig) -> SimilarityConfig:
    return replace(base, streets=tuple(per_street[s].street(s) for s in STREETS))


def _all_loss(losses: dict[str, float], counts: dict[str, int]) -> float:
    total = sum(counts.values())
    return sum(losses[s] * counts[s] for s in STREETS) / total if total else float("inf")


def tune_similarity(cb: Any, *, generations: int = 10, population: int = 8, parents: int = 2, sigma: float = 0.4,
                    folds: int = 3, max_decisions: Optional[int] = 1000, seed: int = 0,
                    start: Optional[SimilarityConfig] = None,
                    progress: Optional[Callable[[int], None]] = None) -> TuneResult:
    """Search similarity weights for ``cb`` (an open case base); see the module docstring.

    Each generation evaluates ``population`` children (``progress(1)`` after each). Raises
    :class:`~cbr.errors.ConfigError` for bad settings.
    """
    for name, value, low in (("generations", generations, 1), ("population", population, 1),
                             ("parents", parents, 1), ("folds", folds, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(f"{name} must be a whole number of at least {low}, got {value!r}")
    if not 0 < sigma <= 2:
        raise ConfigError(f"sigma must be in (0, 2], got {sigma!r}")
    from cbr.models.predictor import MIN_STREET_EXAMPLES

    if max_decisions is not None and max_decisions < MIN_STREET_EXAMPLES:
        raise ConfigError(f"max_decisions must be at least {MIN_STREET_EXAMPLES}: fewer held-out decisions a "
                          f"street give no log-loss worth comparing")
    rng = np.random.default_rng(seed)
    base = start or cb.similarity()

    def score(config: SimilarityConfig) -> dict[str, float]:
        ev = _evaluate(cb, config, folds, max_decisions, seed)
        result = {r.street: (float("inf") if r.knn.get("log_loss") is None else float(r.knn["log_loss"]))
                  for r in ev.rows}
        score.counts = {r.street: r.decisions for r in ev.rows if r.street in STREETS}  # type: ignore[attr-defined]
        return result

    start_loss = score(base)
    counts = dict(score.counts)  # type: ignore[attr-defined]
    if not any(math.isfinite(start_loss[s]) for s in STREETS if s in start_loss):
        raise ConfigError(f"too few decisions to score a similarity on any street ({', '.join(f'{s} {n}' for s, n in counts.items())} "
                          f"held out; each street needs {MIN_STREET_EXAMPLES}): nothing to tune on")
    start_loss["all"] = _all_loss(start_loss, counts)
    pool: list[tuple[SimilarityConfig, dict[str, float]]] = [(base, start_loss)]
    history = [{s: round(start_loss[s], 5) for s in (*STREETS, "all")}]
    evaluations = 1
    for _ in range(generations):
        # parents per street: the genomes best on that street
        parent_sets = {s: [c for c, _ in sorted(pool, key=lambda p: p[1][s])[:parents]] for s in STREETS}
        children = []
        for _ in range(population):
            pick = {s: parent_sets[s][int(rng.integers(len(parent_sets[s])))] for s in STREETS}
            child = mutate(_combine(pick, base), rng, sigma)
            children.append((child, score(child)))
            evaluations += 1
            if progress is not None:
                progress(1)
        pool += children
        best = {s: min(pool, key=lambda p: p[1][s]) for s in STREETS}
        pool = [(c, l) for c, l in pool if any(c is b[0] for b in best.values())] + \
            sorted(children, key=lambda p: _all_loss(p[1], counts))[:parents]
        losses = {s: best[s][1][s] for s in STREETS}
        losses["all"] = _all_loss(losses, counts)
        history.append({k: round(v, 5) for k, v in losses.items()})
    best = {s: min(pool, key=lambda p: p[1][s]) for s in STREETS}
    config = _combine({s: best[s][0] for s in STREETS}, base)
    best_loss = {s: best[s][1][s] for s in STREETS}
    best_loss["all"] = _all_loss(best_loss, counts)
    return TuneResult(config, best_loss, start_loss, history, evaluations)


def tune_and_report(cb: Any, *, generations: int = 10, population: int = 8, folds: int = 3,
                    max_decisions: Optional[int] = 1000, seed: int = 0, report_seed: Optional[int] = None,
                    progress: Optional[Callable[[int], None]] = None) -> tuple[TuneResult, dict[str, Any]]:
    """:func:`tune_similarity` on ``seed``, then both configurations scored again on
    ``report_seed`` (default ``seed + 1``: other folds and samples) by :func:`report_losses`.
    Returns the result and the report (``cbr tune --json`` without its ``casebase`` and ``out``)."""
    result = tune_similarity(cb, generations=generations, population=population, folds=folds,
                             max_decisions=max_decisions, seed=seed, progress=progress)
    rseed = seed + 1 if report_seed is None else report_seed
    report = {"seed": seed, "report_seed": rseed, "generations": generations, "population": population,
              "folds": folds, "max_decisions": max_decisions, **result.to_dict(),
              "report": report_losses(cb, cb.similarity(), result.best, folds=folds, max_decisions=max_decisions,
                                      seed=rseed)}
    return result, report
