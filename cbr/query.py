"""Answer a situation from a case base: features -> retrieval -> probability triple.

>>> from cbr.store import CaseBase, resolve_casebase
>>> from cbr.situation import situation
>>> cb = CaseBase.open(resolve_casebase("default"))          # the embedded default case base
>>> ans = answer(cb, situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5,
...                            previous_round_bets=2))
>>> [round(p, 2) for p in ans.triple]                        # fold, check/call, bet/raise
[0.0, 0.55, 0.45]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from cbr.errors import CaseBaseError
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.retrieval import Explanation
from cbr.store.casebase import CaseBase

PROVENANCE = ("source", "hand_id", "player", "position", "hole", "board", "history")


@dataclass(frozen=True)
class QueryAnswer:
    """The triple for one situation, and why.

    ``passed``: cases at or above the similarity threshold (0 when the fallback top-k was
    used); ``explanation``: every retrieved case with global and per-feature similarity,
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

    def to_dict(self, top: Optional[int] = None) -> dict[str, Any]:
        expl = self.explanation.to_dict()
        cases = expl["cases"] if top is None else expl["cases"][:top]
        return {
            "casebase": self.casebase, "street": self.street, "features": self.features,
            "triple": {"fold": self.triple[0], "check_call": self.triple[1], "bet_raise": self.triple[2]},
            "passed_threshold": self.passed, "retrieved": self.retrieved, "fallback": self.fallback,
            "threshold": self.threshold, "mean_similarity": self.mean_similarity,
            "weighted": expl["weighted"], "weights": expl["weights"], "cases": cases,
        }


def answer(casebase: CaseBase, dp: DecisionPoint, *, weighted: Optional[bool] = None) -> QueryAnswer:
    """Retrieve the cases most similar to ``dp`` and the action frequencies they vote for.

    ``weighted`` (default: the case base's ``weighted_triple`` setting) weights each
    retrieved action by its similarity. Raises :class:`CaseBaseError` when the street has
    no cases.
    """
    street = STREETS[dp.street]
    if casebase.count(street) == 0:
        raise CaseBaseError(f"case base {casebase.name!r} has no {street} cases")
    config = casebase.similarity()
    if weighted is None:
        weighted = bool(config.weighted_triple)
    fs = casebase.feature_set()
    q = fs.row(dp)
    index = casebase.index(street)
    cases = casebase.cases(street)
    expl = index.explain(q, cases.actions, weighted=weighted)
    table = casebase.table(street)
    cols = [c for c in PROVENANCE if c in table.column_names]
    picked = table.take(expl.ids).select(cols).to_pylist() if len(expl.ids) else []
    expl = expl.with_provenance(picked)
    sims = expl.similarities
    return QueryAnswer(
        casebase=casebase.name, street=street,
        features={n: float(v) for n, v in zip(fs.feature_names(street), q)},
        triple=expl.triple, passed=0 if expl.fallback else int(len(expl.ids)),
        retrieved=int(len(expl.ids)), fallback=bool(expl.fallback), threshold=float(config.threshold),
        mean_similarity=float(np.mean(sims)) if len(sims) else 0.0, explanation=expl,
    )
