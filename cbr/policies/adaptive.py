"""The adaptive bot (plugin ``adapt``): the teacher's cases until it knows its opponent, then the
house bot that beats players of that style.

Opponent type adaptation (Rubin and Watson, ICCBR 2012), with the opponent types as cases:

1. **Watch.** Every hand the bot sees updates each opponent's style (:mod:`cbr.models.style`:
   how often it puts chips in before the flop, raises before the flop, bets after it, folds
   to a bet), discounted per hand so that a player who changes style is followed.
2. **Retrieve.** A *style case* is an opponent type met before: its style and what every
   expert (a fixed bot of the house) won against it in duplicate matches
   (``casebases/styles/house.json``, built by ``casebases/build_styles.py`` from
   ``experiments/adaptation_matrix.py``). The ``k`` style cases nearest to the opponent's
   style vote, weighted by similarity, for each expert's win rate.
3. **Choose, safely.** The bot plays the ``safe`` expert (the teacher-imitating ``cbr``)
   until it has seen the opponent for ``warmup`` hands, and afterwards whenever no expert is
   expected to win ``min_gain`` sb/h more than it, or the opponent's style is far from every
   style case (similarity under ``min_similarity``): it moves only on evidence.

At a table of three or more, the opponent is the one still in the hand, or, with several, the
one the bot has seen most; each opponent keeps its own style.

>>> from cbr.game.situation import situation
>>> bot = AdaptivePolicy(seed=1)
>>> bot.expert_for(situation(hole="AdQc", board="3h4cJh", to_call=1, pot=5)).name   # no hand seen yet
'cbr'
>>> bot.close()
"""
from __future__ import annotations

import json
import math
import random
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from cbr.errors import ConfigError
from cbr.models.style import STYLE_FEATURES, StyleStats
from cbr.models.tracker import seated_names
from cbr.policies.base import Decision, Policy, Triple

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord

__all__ = ["AdaptivePolicy", "StyleCases", "load_style_cases", "DEFAULT_STYLES"]

#: The shipped style cases (``casebases/styles/house.json``).
DEFAULT_STYLES = "house"


class StyleCases:
    """Opponent types: per case a name, a style vector and each expert's win rate (sb/h).

    >>> cases = StyleCases(["a", "b"], [("maniac", (0.9, 0.9, 0.9, 0.1), {"a": 0.5, "b": 3.0}),
    ...                                 ("rock", (0.1, 0.05, 0.3, 0.7), {"a": 0.4, "b": 0.1})])
    >>> [round(float(v), 3) for v in cases.expected((0.85, 0.8, 0.9, 0.1), k=1)[0]]
    [0.5, 3.0]
    """

    def __init__(self, experts: Sequence[str], cases: Sequence[tuple[str, Sequence[Optional[float]], dict]]) -> None:
        self.experts = list(experts)
        self.names = [c[0] for c in cases]
        self.styles = np.array([[np.nan if v is None else float(v) for v in c[1]] for c in cases], dtype=float)
        self.values = np.array([[float(c[2].get(e, np.nan)) for e in self.experts] for c in cases], dtype=float)
        if self.styles.ndim != 2 or self.styles.shape[1] != len(STYLE_FEATURES):
            raise ConfigError(f"a style case has {len(STYLE_FEATURES)} values ({', '.join(STYLE_FEATURES)})")

    def similarities(self, style: Sequence[Optional[float]]) -> np.ndarray:
        """``1 - mean |difference|`` over the style features measured in both (each in 0..1)."""
        q = np.array([np.nan if v is None else float(v) for v in style], dtype=float)
        diff = np.abs(self.styles - q[None, :])
        known = ~np.isnan(diff)
        n = known.sum(axis=1)
        total = np.where(known, diff, 0.0).sum(axis=1)
        return np.where(n > 0, 1.0 - total / np.maximum(n, 1), 0.0)

    def expected(self, style: Sequence[Optional[float]], k: int = 3,
                 bandwidth: float = 0.02) -> tuple[np.ndarray, float, list[str]]:
        """Each expert's win rate against ``style``, as the ``k`` nearest cases say, each weighted
        by ``exp(-(1 - similarity) / bandwidth)`` (a case much farther than the nearest one has no
        say: a maniac's nearest case decides, not the average of it and a distant one), the
        nearest case's similarity, and the names of the cases used."""
        sims = self.similarities(style)
        order = np.argsort(-sims, kind="stable")[:max(1, k)]
        w = np.exp(-(1.0 - sims[order]) / max(float(bandwidth), 1e-9))
        vals = self.values[order]
        w = np.where(np.isnan(vals), 0.0, w[:, None])
        total = w.sum(axis=0)
        expect = np.where(total > 0, (np.nan_to_num(vals) * w).sum(axis=0) / np.maximum(total, 1e-300), np.nan)
        return expect, float(sims[order[0]]), [self.names[i] for i in order]


def load_style_cases(name_or_path: str = DEFAULT_STYLES) -> StyleCases:
    """Style cases from a JSON file (``{"experts": [...], "cases": [{"name", "style", "sb"}]}``):
    a path, or the name of a shipped file in ``casebases/styles/``."""
    path = Path(name_or_path)
    if path.suffix != ".json":
        path = Path(str(resources.files("casebases") / "styles" / f"{name_or_path}.json"))
    try:
        data = json.loads(path.read_text())
        return StyleCases(data["experts"], [(c["name"], c["style"], c["sb"]) for c in data["cases"]])
    except FileNotFoundError:
        raise ConfigError(f"style cases {name_or_path!r}: no file {path}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"style cases {path}: not a style-case file ({exc})") from None


class AdaptivePolicy(Policy):
    """See the module docstring. Options: ``experts`` (policy specs joined by ``+``; default:
    the experts of the style cases), ``safe`` (the expert played until there is evidence;
    default ``cbr``), ``styles`` (a style-case file or shipped name), ``warmup`` (hands seen
    before leaving the safe expert), ``min_gain`` (sb/h an expert must be expected to win over
    the safe one), ``min_similarity`` (of the nearest style case), ``k`` (style cases that
    vote) and ``bandwidth`` (how fast a case's vote falls with its distance,
    :meth:`StyleCases.expected`), ``discount`` (per hand, of an opponent's style counts)."""

    name = "adapt"

    def __init__(self, *, seed: int | None = None, experts: Optional[str] = None, safe: str = "cbr",
                 styles: str = DEFAULT_STYLES, warmup: int = 50, min_gain: float = 0.1, min_similarity: float = 0.9,
                 k: int = 3, bandwidth: float = 0.02, discount: float = 0.99) -> None:
        super().__init__(seed=seed)
        from cbr.policies.spec import policy_from_spec

        self.cases = load_style_cases(str(styles))
        specs = [s for s in (experts.split("+") if isinstance(experts, str) else self.cases.experts) if s]
        if safe not in specs:
            specs = [safe, *specs]
        unknown = [e for e in specs if e not in self.cases.experts]
        if unknown:  # an expert the style cases have no win rate of could never be chosen
            raise ConfigError(f"experts: the style cases rate {', '.join(self.cases.experts)}; not "
                              f"{', '.join(unknown)} (measure them with experiments/adaptation_matrix.py and "
                              f"rebuild the style cases: python -m casebases.build_styles)")
        self.specs = specs
        for name, value, lo in (("warmup", warmup, 0), ("k", k, 1)):
            if isinstance(value, bool) or int(float(value)) != float(value) or int(float(value)) < lo:
                raise ConfigError(f"{name} must be a whole number >= {lo}, got {value!r}")
        self.warmup, self.k = int(float(warmup)), int(float(k))
        self.min_gain, self.min_similarity, self.discount = float(min_gain), float(min_similarity), float(discount)
        self.bandwidth = float(bandwidth)
        if not self.bandwidth > 0.0:
            raise ConfigError(f"bandwidth must be a positive number, got {bandwidth!r}")
        if not 0.0 < self.discount <= 1.0:
            raise ConfigError(f"discount must be in (0, 1], got {discount!r}")
        self.safe = safe
        self.experts: dict[str, Policy] = {}
        for i, spec in enumerate(specs):
            self.experts[spec] = policy_from_spec(spec, seed=None if seed is None else seed * 31 + i)
        self.styles = StyleStats(self.discount)
        self._seating: tuple[str, ...] = ()
        self.chosen: list[tuple[str, str]] = []  # (opponent, expert) of each decision, for reports

    # ---- who is the opponent -------------------------------------------------------------
    def opponent(self, dp: "DecisionPoint") -> Optional[str]:
        """The opponent the bot adapts to at ``dp``: the one still in the hand (the one seen
        most when several are); None before any hand was seen."""
        names = seated_names(self._seating, dp.position, dp.player, len(dp.folded))
        live = [names[p] for p in range(len(dp.folded)) if p != dp.position and not dp.folded[p] and p in names]
        if not live:
            return None
        return max(live, key=lambda nm: (self.styles.hands(nm), nm))

    def expert_for(self, dp: "DecisionPoint") -> Policy:
        """The expert that decides at ``dp`` (see the module docstring)."""
        opp = self.opponent(dp)
        return self.experts[self.choose(opp)]

    def choose(self, opponent: Optional[str]) -> str:
        """The expert's spec for ``opponent`` (the safe one without enough evidence)."""
        # discounted counts level off at 1 / (1 - discount) hands: a warm-up above that waits for 90% of it
        enough = self.warmup if self.discount == 1.0 else min(self.warmup, 0.9 / (1.0 - self.discount))
        if opponent is None or self.styles.hands(opponent) < enough:
            return self.safe
        expect, sim, _ = self.cases.expected(self.styles.vector(opponent), self.k, self.bandwidth)
        if sim < self.min_similarity:
            return self.safe
        values = {e: v for e, v in zip(self.cases.experts, expect) if e in self.experts and math.isfinite(v)}
        if self.safe not in values:
            return self.safe
        best = max(values, key=lambda e: (values[e], e == self.safe))
        return best if values[best] >= values[self.safe] + self.min_gain else self.safe

    # ---- the policy ----------------------------------------------------------------------
    def decide(self, dp: "DecisionPoint", rng: Optional[random.Random] = None) -> Decision:
        opp = self.opponent(dp)
        spec = self.choose(opp)
        self.chosen.append((opp or "", spec))
        return self.experts[spec].decide(dp, rng if rng is not None else random.Random(0))

    def act(self, dp: "DecisionPoint", rng: random.Random) -> str:
        return self.decide(dp, rng).action

    def triple(self, dp: "DecisionPoint") -> Triple:
        return self.expert_for(dp).triple(dp)

    def triples(self, dp: "DecisionPoint", holes: Sequence[tuple[int, int]]) -> np.ndarray:
        return self.expert_for(dp).triples(dp, holes)

    def observe(self, record: "HandRecord", position: int) -> None:
        self._seating = tuple(record.players)
        self.styles.update(record)
        for p in self.experts.values():
            if type(p).observe is not Policy.observe:
                p.observe(record, position)

    def reset(self) -> None:
        self.styles.reset()
        self._seating = ()
        self.chosen.clear()
        for p in self.experts.values():
            p.reset()

    def close(self) -> None:
        for p in self.experts.values():
            close = getattr(p, "close", None)
            if callable(close):
                close()
