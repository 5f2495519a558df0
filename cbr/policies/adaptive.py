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
3. **Correct by what the table shows.** What the style cases say is a prior worth as many
   hands as its precision and the table's noise make it (:meth:`AdaptivePolicy.prior_weight`); each expert's own results against this opponent (in the hands it
   played while the opponent looked like the same style case) move it
   (:meth:`AdaptivePolicy.values`), so an expert that loses where its style cases promised a
   win is left. Off-policy (importance-sampled) estimates of the experts not played are not
   used: the house's experts are deterministic, so the hands one plays say nothing unbiased
   about another's.
4. **Choose, safely.** The bot plays the ``safe`` expert (the teacher's cases sampled plainly,
   hard to exploit) until it has seen the opponent for ``warmup`` hands, and afterwards the
   ``fallback`` (the same cases sharpened, which wins more against weak players) whenever no
   expert is expected to win ``min_gain`` sb/h more than it, or the opponent's style is far from
   every style case (similarity under ``min_similarity``): it moves only on evidence. The same
   margin keeps the expert playing until another is expected to win ``min_gain`` more than it.

Plain ``cbr`` is this bot over the expert case base (:func:`case_based_bot`), its safe expert the
case base sampled plainly (``cbr:preset=imitate``, the teacher's mixed play, hard to exploit);
``cbr:preset=expert`` is the case-based bot alone, sharpened (one of the experts it may switch to). Retention keeps every decision of the bot, whichever expert made
it, in the safe expert's case base.

At a table of three or more, the opponent is the one still in the hand, or, with several, the
one the bot has seen most; each opponent keeps its own style.

>>> from cbr.game.situation import situation
>>> bot = AdaptivePolicy(seed=1)
>>> bot.safe, bot.expert_for(situation(hole="AdQc", board="3h4cJh", to_call=1, pot=5)).name   # no hand seen yet
('cbr:preset=imitate', 'cbr')
>>> bot.close()
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from cbr.errors import ConfigError, counted
from cbr.game.gamedef import STREETS
from cbr.models.style import STYLE_FEATURES, StyleStats
from cbr.models.tracker import seated_names
from cbr.policies.base import Decision, Policy, Triple
from cbr.policies.cbr_policy import CBRPolicy, one_of
from cbr.policies.table_memory import TableMemory
from cbr.stats import RunningMean

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord

__all__ = ["AdaptivePolicy", "AdaptiveDecision", "ExpertChoice", "expert_alias", "largest_warmup", "StyleCases", "load_style_cases", "DEFAULT_STYLES", "case_based_bot", "DEFAULT_CBR_PRESET"]

#: The shipped style cases (``casebases/styles/house.json``).
DEFAULT_STYLES = "house"


def expert_alias(spec: str) -> str:
    """The short name of a bot spec in ``adapt``'s options: the value of its one option, or the
    spec itself.

    >>> expert_alias("cbr:preset=expert"), expert_alias("cfr:strategy=counter_raise"), expert_alias("ehs")
    ('expert', 'counter_raise', 'ehs')
    """
    name, _, rest = spec.partition(":")
    if rest and ":" not in rest and "=" in rest:
        return rest.partition("=")[2]
    return spec


class StyleCases:
    """Opponent types: per case a name, a style vector and each expert's win rate (sb/h).

    >>> cases = StyleCases(["a", "b"], [("maniac", (0.9, 0.9, 0.9, 0.1), {"a": 0.5, "b": 3.0}),
    ...                                 ("rock", (0.1, 0.05, 0.3, 0.7), {"a": 0.4, "b": 0.1})])
    >>> [round(float(v), 3) for v in cases.expected((0.85, 0.8, 0.9, 0.1), k=1)[0]]
    [0.5, 3.0]
    """

    def __init__(self, experts: Sequence[str], cases: Sequence[tuple[str, Sequence[Optional[float]], dict]],
                 cis: Optional[Sequence[dict]] = None, safe: Optional[str] = None,
                 fallback: Optional[str] = None) -> None:
        self.experts = list(experts)
        if not self.experts:
            raise ConfigError("style cases rate no expert")
        #: the expert whose matches measured the styles, played until there is evidence (the first by default)
        self.safe = self.experts[0] if safe is None else str(safe)
        if self.safe not in self.experts:
            raise ConfigError(f"style cases: their safe expert {self.safe!r} is not one they rate")
        #: the expert played after the warm-up when none is expected to win more (the safe one by default)
        self.fallback = self.safe if fallback is None else str(fallback)
        if self.fallback not in self.experts:
            raise ConfigError(f"style cases: their fallback expert {self.fallback!r} is not one they rate")
        self.names = [c[0] for c in cases]
        self.styles = np.array([[np.nan if v is None else float(v) for v in c[1]] for c in cases], dtype=float)
        self.values = np.array([[float(c[2].get(e, np.nan)) for e in self.experts] for c in cases], dtype=float)
        #: each win rate's 95% CI half-width (NaN: not known)
        self.cis = np.array([[np.nan if (ci or {}).get(e) is None else float(ci[e]) for e in self.experts]
                             for ci in (cis if cis is not None else [None] * len(cases))], dtype=float)
        if self.styles.ndim != 2 or self.styles.shape[1] != len(STYLE_FEATURES):
            raise ConfigError(f"a style case has {counted(len(STYLE_FEATURES), 'value')} ({', '.join(STYLE_FEATURES)})")

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
        w, order, sims = self._votes(style, k, bandwidth)
        vals = self.values[order]
        w = np.where(np.isnan(vals), 0.0, w[:, None])
        total = w.sum(axis=0)
        expect = np.where(total > 0, (np.nan_to_num(vals) * w).sum(axis=0) / np.maximum(total, 1e-300), np.nan)
        return expect, float(sims[order[0]]), [self.names[i] for i in order]

    def uncertainty(self, style: Sequence[Optional[float]], k: int = 3, bandwidth: float = 0.02) -> np.ndarray:
        """Each expert's 95% CI half-width of :meth:`expected`'s win rate, weighted as its votes
        (NaN where the cases give none)."""
        w, order, _ = self._votes(style, k, bandwidth)
        cis = self.cis[order]
        w = np.where(np.isnan(cis), 0.0, w[:, None])
        total = w.sum(axis=0)
        return np.where(total > 0, (np.nan_to_num(cis) * w).sum(axis=0) / np.maximum(total, 1e-300), np.nan)

    def _votes(self, style: Sequence[Optional[float]], k: int, bandwidth: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The weights of the ``k`` nearest cases, their rows, and every case's similarity."""
        sims = self.similarities(style)
        order = np.argsort(-sims, kind="stable")[:max(1, k)]
        return np.exp(-(1.0 - sims[order]) / max(float(bandwidth), 1e-9)), order, sims


def load_style_cases(name_or_path: str = DEFAULT_STYLES) -> StyleCases:
    """Style cases from a JSON file (``{"experts": [...], "cases": [{"name", "style", "sb"}]}``):
    a path, or the name of a shipped file in ``casebases/styles/``."""
    path = Path(name_or_path)
    if path.suffix != ".json" and not path.is_file():  # a shipped name (beside the shipped case bases)
        from cbr.store import PACKAGED_CASEBASES

        path = PACKAGED_CASEBASES / "styles" / f"{name_or_path}.json"
    try:
        data = json.loads(path.read_text())
        return StyleCases(data["experts"], [(c["name"], c["style"], c["sb"]) for c in data["cases"]],
                          [c.get("ci") or {} for c in data["cases"]], data.get("safe"), data.get("fallback"))
    except FileNotFoundError:
        raise ConfigError(f"style cases {name_or_path!r}: no file {path}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"style cases {path}: not a style-case file ({exc})") from None


@dataclass(frozen=True, kw_only=True)
class AdaptiveDecision(Decision):
    """A decision of the adaptive bot that another expert than its case base made: which one
    (``expert``, its spec) and why it plays (``reason``, :meth:`AdaptivePolicy.reason`). The
    decisions of the safe case-based expert are its own records
    (:class:`~cbr.policies.cbr_policy.CBRDecision`)."""

    expert: str
    reason: str = ""
    query_row: Optional[np.ndarray] = field(default=None, repr=False, compare=False)
    casebase: object = field(default=None, repr=False, compare=False)

    @property
    def row(self) -> Optional[np.ndarray]:
        """The safe expert's feature row of this decision, when the table memory computed it."""
        return self.query_row

    def row_for(self, casebase: object) -> Optional[np.ndarray]:
        return self.query_row if casebase is self.casebase and casebase is not None else None


@dataclass(frozen=True)
class ExpertChoice:
    """A stretch of hands in which the adaptive bot played one expert against one opponent
    (:attr:`AdaptivePolicy.expert_choices`): ``expert`` (its spec) played from hand ``first_hand`` to
    ``last_hand`` (numbered from 1 since the bot's last reset: a match's hands), deciding in
    ``hands`` of them (a hand the opponent ended before the bot acted counts for none; such hands
    between two stretches belong to the first, which runs up to the hand before the next one
    begins, so one opponent's stretches leave no hand out), and
    ``why`` is the reason its first decision gave (the words of ``--why``). ``opponent`` is None
    for the first hand at a table of three or more, before the bot knew who sat with it."""

    opponent: Optional[str]
    expert: str
    first_hand: int
    last_hand: int
    hands: int
    why: str = ""

    def to_dict(self) -> dict:
        """Plain data (``cbr match --json``), the expert also by its short name (:func:`expert_alias`).

        >>> ExpertChoice("raise", "cbr:preset=imitate", 1, 50, 50, "warm-up").to_dict()["short"]
        'imitate'
        """
        return {"expert": self.expert, "short": expert_alias(self.expert), "opponent": self.opponent,
                "first_hand": self.first_hand, "last_hand": self.last_hand, "hands": self.hands, "why": self.why}


class AdaptivePolicy(Policy):
    """See the module docstring; one line on each option is in :attr:`OPTION_HELP` (``cbr plugins
    list`` shows them). Beyond those lines: ``warmup`` counts hands discounted as the style is
    (at most 90% of ``1 / (1 - discount)``, :func:`largest_warmup`: a larger one is refused with
    both numbers), ``bandwidth`` is :meth:`StyleCases.expected`'s,
    ``prior_hands=auto`` is :meth:`prior_weight`, and a change of style starts new evidence
    whatever ``evidence_discount``. A bot of ``experts`` and ``safe`` is named by its spec or, when
    the spec has options, by its short name (:func:`expert_alias`: ``expert``, ``counter_raise``),
    since a spec's ``:`` cannot stand inside another spec."""

    name = "adapt"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "experts": "the bots it may switch to, policy specs joined by + (default: the style cases' experts)",
        "safe": "the expert played during the warm-up (default: the style cases' own; shipped: imitate)",
        "fallback": "after the warm-up, the expert played without evidence for another (default: the style cases'; "
                    "shipped: expert)",
        "styles": "the style cases: a file or a shipped name",
        "warmup": "hands of an opponent seen before it may leave the safe expert (at most 0.9/(1-discount))",
        "min_gain": "sb/h an expert must be expected to win over the current one to switch",
        "min_similarity": "least similarity of the nearest style case to trust the style cases",
        "k": "style cases that vote",
        "bandwidth": "how fast a style case's vote falls with its distance",
        "discount": "per hand, of an opponent's style counts (1: never forgets)",
        "prior_hands": "hands of table evidence worth as much as the style cases (auto: from their precision)",
        "tau": "the style cases' model error, sb/h",
        "evidence_discount": "per hand, of the table's evidence (1 keeps it all)",
        "memory": "the table memory: switch an action that lost against this opponent in similar spots",
        "memory_cases": "retained cases an action needs before the table memory weighs it",
        "memory_z": "standard errors by which another action must be worth more to replace the chosen one",
        "memory_similarity": "similarity a retained case needs to count (default: the case base's threshold)",
    }

    def __init__(self, *, seed: int | None = None, experts: Optional[str] = None, safe: Optional[str] = None,
                 fallback: Optional[str] = None,
                 styles: str = DEFAULT_STYLES, warmup: int = 50, min_gain: float = 0.05, min_similarity: float = 0.9,
                 k: int = 3, bandwidth: float = 0.02, discount: float = 0.99, prior_hands: "float | str" = "auto",
                 tau: float = 0.15,
                 evidence_discount: float = 1.0, memory: bool = True, memory_cases: int = 20,
                 memory_z: float = 2.0, memory_similarity: Optional[float] = None) -> None:
        super().__init__(seed=seed)
        from cbr.policies.spec import policy_from_spec

        try:
            self.cases = load_style_cases(str(styles))
        except ConfigError as exc:  # no such file or not one of style cases: a bad input file
            from cbr.policies.spec import file_option_error

            raise file_option_error("styles", exc) from None
        names = {expert_alias(e): e for e in self.cases.experts}  # what a spec may write for each rated bot
        rated = ", ".join(names)
        if isinstance(experts, str):
            given = [e.strip() for e in experts.split("+") if e.strip()]
            if not given:
                raise ConfigError(f"experts: no bot given; name bots joined by '+' (of {rated})")
            unknown = [e for e in given if names.get(e, e) not in self.cases.experts]
            if unknown:  # an expert the style cases have no win rate of could never be chosen
                raise ConfigError(f"experts: the style cases rate {rated}; not {', '.join(unknown)} (measure "
                                  f"them with experiments/adaptation_matrix.py and rebuild the style cases: "
                                  f"python -m casebases.build_styles)")
            specs = [names.get(e, e) for e in given]
        else:
            specs = list(self.cases.experts)
        safe = self.cases.safe if safe is None else names.get(str(safe), str(safe))
        if safe not in self.cases.experts:
            raise ConfigError(f"safe: the style cases rate {rated}; not {safe!r}")
        fallback = self.cases.fallback if fallback is None else names.get(str(fallback), str(fallback))
        if fallback not in self.cases.experts:
            raise ConfigError(f"fallback: the style cases rate {rated}; not {fallback!r}")
        for needed in (fallback, safe):
            if needed not in specs:
                specs = [needed, *specs]
        self.specs = specs
        for name, value, lo in (("warmup", warmup, 0), ("k", k, 1)):
            if isinstance(value, bool) or int(float(value)) != float(value) or int(float(value)) < lo:
                raise ConfigError(f"{name} must be a whole number >= {lo}, got {value!r}")
        self.warmup, self.k = int(float(warmup)), int(float(k))
        self.min_gain, self.min_similarity, self.discount = float(min_gain), float(min_similarity), float(discount)
        if not (math.isfinite(self.min_gain) and self.min_gain >= 0):
            raise ConfigError(f"min_gain must be a number >= 0 (sb/h), got {min_gain!r}")
        if not 0.0 <= self.min_similarity <= 1.0:
            raise ConfigError(f"min_similarity must be in [0, 1], got {min_similarity!r}")
        self.bandwidth = float(bandwidth)
        if not self.bandwidth > 0.0:
            raise ConfigError(f"bandwidth must be a positive number, got {bandwidth!r}")
        for name, value in (("discount", discount), ("evidence_discount", evidence_discount)):
            if not 0.0 < float(value) <= 1.0:
                raise ConfigError(f"{name} must be in (0, 1], got {value!r}")
        if self.warmup > largest_warmup(self.discount):  # never reached: said now, not capped in silence
            need = math.ceil((1.0 - 0.9 / self.warmup) * 1e6 - 1e-6) / 1e6
            raise ConfigError(f"warmup={self.warmup} is more than discount={self.discount:g} allows: an opponent's "
                              f"discounted count of hands levels off at {1.0 / (1.0 - self.discount):g} and the "
                              f"warm-up may be at most 90% of it; give warmup={largest_warmup(self.discount)} or "
                              f"less, or discount={need:g} or more")
        self.evidence_discount = float(evidence_discount)
        if str(prior_hands).strip().lower() == "auto":
            self.prior_hands: Optional[float] = None
        else:
            try:
                self.prior_hands = float(prior_hands)
            except (TypeError, ValueError):
                self.prior_hands = float("nan")
            if not (math.isfinite(self.prior_hands) and self.prior_hands > 0):
                raise ConfigError(f"prior_hands must be 'auto' or a positive number, got {prior_hands!r}")
        self.tau = float(tau)
        if not (math.isfinite(self.tau) and self.tau > 0):
            raise ConfigError(f"tau must be a positive number (sb/h), got {tau!r}")
        #: per opponent: the bot's result a hand (sb), its count, mean and spread
        self._results: dict[str, RunningMean] = {}
        self.safe, self.fallback = safe, fallback
        self.experts: dict[str, Policy] = {}
        #: the spec each expert plays as (:meth:`played_spec`), by its spec in :attr:`specs`
        self.played_specs: dict[str, str] = {}
        for spec in specs:
            expert_seed = self.expert_seed(spec)
            # style cases of before the adaptive default: `cbr` was the case-based bot alone
            self.played_specs[spec] = "cbr:preset=expert" if spec == "cbr" else spec
            self.experts[spec] = policy_from_spec(self.played_specs[spec], seed=expert_seed)
        self.styles = StyleStats(self.discount)
        self.memory = _flag("memory", memory)
        if isinstance(memory_cases, bool) or int(float(memory_cases)) != float(memory_cases) or int(float(memory_cases)) < 1:
            raise ConfigError(f"memory_cases must be a whole number >= 1, got {memory_cases!r}")
        self.memory_cases, self.memory_z = int(float(memory_cases)), float(memory_z)
        if not (math.isfinite(self.memory_z) and self.memory_z >= 0):
            raise ConfigError(f"memory_z must be a number >= 0 (standard errors), got {memory_z!r}")
        self.memory_similarity = None if memory_similarity is None else float(memory_similarity)
        if self.memory_similarity is not None and not 0.0 < self.memory_similarity <= 1.0:
            raise ConfigError(f"memory_similarity must be in (0, 1], got {memory_similarity!r}")
        self._memory: Optional[TableMemory] = None  # made when the safe expert's case base is first read
        # what only a hand seen changes (styles, evidence), kept until the next observe or reset
        self._known: dict[tuple, object] = {}
        #: per (opponent, its nearest style case, expert): the hands the expert played against the
        #: opponent while it looked like that case, and the small bets it won in them (discounted
        #: by ``evidence_discount`` a hand; the evidence of :meth:`values`)
        self.evidence: dict[tuple[str, str, str], list[float]] = {}
        self._played: dict[str, tuple[str, str]] = {}  # this hand's (style case, expert), per opponent
        self._current: dict[str, str] = {}  # the expert playing against each opponent
        self._seating: tuple[str, ...] = ()
        self.chosen: list[tuple[str, str]] = []  # (opponent, expert) of each decision, for reports
        #: the experts it chose against each opponent, in the order they began (:class:`ExpertChoice`;
        #: ``cbr match --json`` reports them); hands counted since the last :meth:`reset`
        self.expert_choices: list[ExpertChoice] = []
        self._last_choice: dict[Optional[str], int] = {}  # each opponent's current choice in `expert_choices`
        self._pending: dict[tuple[Optional[str], str], str] = {}  # this hand's (opponent, expert): why
        self._hand = 0  # hands observed since the last reset

    def expert_seed(self, spec: str) -> Optional[int]:
        """The seed the expert ``spec`` (one of :attr:`specs`) is built with: each its own, from the bot's."""
        return None if self.seed is None else self.seed * 31 + self.specs.index(spec)

    def use_expert(self, spec: str, policy: Policy, played: Optional[str] = None) -> None:
        """Play ``policy`` as the expert ``spec`` (one of :attr:`specs`), closing the one it replaces;
        ``played``: the spec that builds ``policy`` (``spec`` itself when not given), by which
        reports name the expert (:meth:`played_spec`)."""
        if spec not in self.experts:
            raise ConfigError(f"no expert {spec!r} here; the experts are {', '.join(self.experts)}")
        old = self.experts[spec]
        self.experts[spec] = policy
        self.played_specs[spec] = spec if played is None else played
        close = getattr(old, "close", None)
        if callable(close) and old is not policy:
            close()

    def played_spec(self, spec: str) -> str:
        """The spec that plays as the expert ``spec`` (one of :attr:`specs`): the one that builds
        it, with the options the bot passed on to it (plain ``cbr:casebase=mine`` plays
        ``cbr:preset=imitate:casebase=mine`` as ``cbr:preset=imitate``). Reports (:attr:`expert_choices`,
        :attr:`AdaptiveDecision.expert`, the reasons) name experts so: that spec plays as they did.

        >>> bot = AdaptivePolicy(seed=1)
        >>> bot.played_spec("cbr:preset=imitate")
        'cbr:preset=imitate'
        >>> bot.close()
        """
        return self.played_specs.get(spec, spec)

    def _followers(self) -> list[Policy]:
        """The case-based experts besides the safe one that play from its case base (the
        fallback, when it is the same case base sharpened): they follow it to another one."""
        safe = self.case_based
        if safe is None:
            return []
        p = self.experts[self.fallback]
        if self.fallback == self.safe or not getattr(p, "can_retain", False):
            return []
        same = Path(p.casebase_path).resolve() == Path(safe.casebase_path).resolve()  # type: ignore[attr-defined]
        return [p] if same else []

    # ---- the case base (retention and explanations go through the safe expert's) ----------
    @property
    def case_based(self) -> Optional[Policy]:
        """The safe expert when it is a case-based bot (it has a case base), else None."""
        p = self.experts[self.safe]
        return p if getattr(p, "can_retain", False) else None

    @property
    def can_retain(self) -> bool:
        """Retention during play keeps every decision of this bot (whichever expert made it) in
        the safe expert's case base, when that is a case-based bot."""
        return self.case_based is not None

    @property
    def casebase_path(self) -> Path:
        return self._case_based().casebase_path  # type: ignore[attr-defined, no-any-return]

    @property
    def casebase(self) -> str:
        return self._case_based().casebase  # type: ignore[attr-defined, no-any-return]

    @property
    def similarity(self) -> Optional[str]:
        p = self.case_based
        return None if p is None else p.similarity  # type: ignore[attr-defined, no-any-return]

    @property
    def casebase_handle(self) -> object:
        """The shared case base the safe expert plays from, when it was handed one."""
        return getattr(self._case_based(), "casebase_handle", None)

    @property
    def learns(self) -> bool:
        """Always: the bot learns its opponents' styles and what each expert wins against them
        (a server gives every session a bot of its own). Opens the safe expert's case base, as
        the case-based bot's ``learns`` does (a handle it was given is then its own reference)."""
        if self.case_based is not None:
            self.open()
        return True

    def use_casebase(self, path: "str | Path") -> None:
        """Play from (and retain into) another case base: the safe expert and the fallback when
        it played from the same one. When that is another case base (a copy to retain into),
        the reports name it: the experts that moved play as their spec with ``casebase=`` the
        new one (:meth:`played_spec`), not the one their spec named."""
        followers = self._followers()
        safe = self._case_based()
        before = Path(safe.casebase_path).resolve()  # type: ignore[attr-defined]
        safe.use_casebase(path)  # type: ignore[attr-defined]
        for p in followers:
            p.use_casebase(path)  # type: ignore[attr-defined]
        now = Path(safe.casebase_path).resolve()  # type: ignore[attr-defined]
        if now != before:  # (a handle of the same case base, as a server gives, changes no report)
            for spec in [self.safe, *([self.fallback] if followers else [])]:
                self.played_specs[spec] = with_casebase(self.played_spec(spec), str(now))

    def open(self) -> object:
        return self._case_based().open()  # type: ignore[attr-defined]

    def _case_based(self) -> Policy:
        p = self.case_based
        if p is None:
            raise ConfigError(f"the adaptive bot's safe expert {self.safe!r} has no case base")
        return p

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
        return self.experts[self.choose(opp, dp.game.n_players)]

    def choose(self, opponent: Optional[str], players: int = 2) -> str:
        """The expert's spec for ``opponent`` at a table of ``players`` (the safe one without
        enough evidence; never one that plays heads-up only at a bigger table)."""
        if opponent is None or self.styles.hands(opponent) < self._enough():
            return self.safe
        default = self._default(players)
        values = self.values(opponent)
        if players > 2:
            values = {e: v for e, v in values.items() if not getattr(self.experts[e], "heads_up_only", False)}
        if default not in values:
            return default
        best = max(values, key=lambda e: (values[e], e == default))
        # the expert playing now stays until another is expected to win min_gain more (at first: the
        # fallback): no hopping between experts whose expected win rates differ by less than their noise
        current = self._current.get(opponent, default)
        if current not in values:
            current = default
        choice = best if values[best] >= values[current] + self.min_gain else current
        self._current[opponent] = choice
        return choice

    def refuses_table(self, players: int) -> str:
        """Why it cannot play at a table of ``players``, empty when it can: its safe expert plays
        every opponent's warm-up, whatever the table, so one that plays heads-up only (the cfr
        bot) keeps the bot heads-up (:func:`cbr.play.match.seat_refusal`).

        >>> bot = AdaptivePolicy(safe="emd_256")
        >>> bot.refuses_table(2), bot.refuses_table(3)
        ('', "the adapt bot's safe expert, emd_256, plays heads-up only: it cannot play at a table of 3")
        >>> bot.close()
        """
        if players > 2 and getattr(self.experts[self.safe], "heads_up_only", False):
            return (f"the {self.name} bot's safe expert, {expert_alias(self.played_spec(self.safe))}, plays heads-up only: "
                    f"it cannot play at a table of {players}")
        return ""

    def _default(self, players: int) -> str:
        """The expert played after the warm-up without evidence for another: the fallback (the
        safe expert at a bigger table when the fallback plays heads-up only)."""
        if players > 2 and getattr(self.experts[self.fallback], "heads_up_only", False):
            return self.safe
        return self.fallback

    def _enough(self) -> float:
        """The warm-up in the style's (discounted) hands (at most :func:`largest_warmup`: checked
        when the bot is made)."""
        return float(self.warmup)

    def keep_reason(self, opponent: Optional[str], players: int = 2) -> str:
        """Why the house's default plays against ``opponent``, in words: the safe expert during
        the warm-up (or no opponent seen yet: None); after it the fallback, when the style is far
        from every style case or no expert is expected to win ``min_gain`` more; empty when
        another expert plays.

        >>> bot = AdaptivePolicy(seed=1)
        >>> bot.keep_reason("nobody"), bot.keep_reason(None)
        ('nobody: 0.0 of the 50 hands of warm-up seen', 'no opponent seen yet (its first hand)')
        >>> bot.close()
        """
        if opponent is None:
            return "no opponent seen yet (its first hand)"
        chosen, default = self.choose(opponent, players), self._default(players)
        seen = self.styles.hands(opponent)
        if seen < self._enough():
            # discounted hands, floored to a tenth: 49.97 is not yet the 50 of the warm-up
            return f"{opponent}: {math.floor(seen * 10) / 10:,.1f} of the {counted(round(self._enough()), 'hand')} of warm-up seen"
        if chosen != default:
            return ""
        values = self.values(opponent)
        if default not in values:
            _, sim, used = self.cases.expected(self.styles.vector(opponent), 1, self.bandwidth)
            whose = "your" if opponent == "you" else f"{opponent}'s"  # the human at `cbr play --human` is "you"
            return (f"{whose} style is far from every style case (the nearest, {used[0]!r}, is {sim:.2f} similar; "
                    f"at least {self.min_similarity:g} needed): only the table's evidence would move it")
        others = {e: v for e, v in values.items() if e != default}
        if not others:
            return f"{opponent}: no other expert to choose"
        best = max(others, key=lambda e: others[e])
        return (f"{opponent}: no expert expected to win {self.min_gain:g} sb/h more than "
                f"{self.played_spec(default)} ({values[default]:+.2f}); the best, {self.played_spec(best)}, "
                f"{others[best]:+.2f}")

    def _nearest(self, opponent: str) -> str:
        """The style case nearest to ``opponent``'s style (until the next hand seen)."""
        key = ("nearest", opponent)
        if key not in self._known:
            self._known[key] = self.cases.expected(self.styles.vector(opponent), 1, self.bandwidth)[2][0]
        return self._known[key]  # type: ignore[return-value]

    def values(self, opponent: str) -> dict[str, float]:
        """Each expert's expected win rate (sb/h) against ``opponent``: what the nearest style
        cases say (the prior, worth :meth:`prior_weight` hands) corrected by what the expert won
        against this opponent in the hands it played here (discounted by ``evidence_discount``
        a hand): ``(weight * prior + won) / (weight + played)``. An expert the table shows
        losing where its style cases promised winning is left within a few hundred hands (a
        few thousand at a table as noisy as a maniac's). Empty when the opponent's style is far
        from every style case (no prior)."""
        key = ("values", opponent)
        if key not in self._known:
            self._known[key] = self._values(opponent)
        return dict(self._known[key])  # type: ignore[call-overload]

    def _values(self, opponent: str) -> dict[str, float]:
        style = self.styles.vector(opponent)
        expect, sim, used = self.cases.expected(style, self.k, self.bandwidth)
        if sim < self.min_similarity:
            return {}
        cis = self.cases.uncertainty(style, self.k, self.bandwidth)
        spread = self.hand_variance(opponent)
        out = {}
        for e, prior, ci in zip(self.cases.experts, expect, cis):
            if e in self.experts and math.isfinite(prior):
                played, won = self.evidence.get((opponent, used[0], e), (0.0, 0.0))
                weight = self.prior_weight(float(ci), spread)
                out[e] = (weight * float(prior) + won) / (weight + played)
        return out

    def prior_weight(self, ci: float, spread: float) -> float:
        """How many hands of the table's evidence weigh as much as a style case's win rate:
        ``prior_hands`` when given, else (``auto``) the variance of one hand's result against
        this opponent (``spread``, sb^2) over the prior's: the style case's own (its 95% CI
        half-width, ``ci``) plus ``tau^2`` (how far an opponent of that style may differ from it).
        Noisy tables (a maniac's: about 100 sb^2 a hand) then need thousands of hands to
        overrule a precise style case, quiet ones a few hundred.

        >>> bot = AdaptivePolicy(seed=1)
        >>> round(bot.prior_weight(0.1, 16.0)), round(bot.prior_weight(0.1, 100.0)), round(bot.prior_weight(float("nan"), 16.0))
        (637, 3984, 492)
        >>> bot.close()
        """
        if self.prior_hands is not None:
            return self.prior_hands
        own = (ci / 1.96) ** 2 if math.isfinite(ci) else 0.1 ** 2
        return spread / (own + self.tau ** 2)

    def hand_variance(self, opponent: str) -> float:
        """The variance of the bot's result a hand against ``opponent`` (sb^2), from the hands
        seen (25, a standard deviation of 5 sb, before 30 of them)."""
        acc = self._results.get(opponent)
        return acc.m2 / (acc.count - 1) if acc is not None and acc.count >= 30 else 25.0

    # ---- the policy ----------------------------------------------------------------------
    def decide(self, dp: "DecisionPoint", rng: Optional[random.Random] = None) -> Decision:
        opp = self.opponent(dp)
        players = dp.game.n_players
        spec = self.choose(opp, players)
        self.chosen.append((opp or "", spec))
        if opp is not None and self.styles.hands(opp) > 0:
            self._played[opp] = (self._nearest(opp), spec)
        made = self.experts[spec].decide(dp, rng if rng is not None else random.Random(0))
        changed, row, cb = self._remembered(dp, opp, spec, made)
        # a case-based bot's own record (its vote explains it) says why no other expert plays
        case_based = spec == self.safe or (spec == self.fallback and hasattr(made, "kept"))
        if changed is not None:  # the table memory's reason, not the choice's
            if (opp, spec) not in self._pending:
                self._pending[(opp, spec)] = self._why(opp, spec, players, case_based) if self._begins(opp, spec) else ""
            return changed
        why = self._why(opp, spec, players, case_based)
        self._pending.setdefault((opp, spec), why)
        if case_based:
            return dataclasses.replace(made, kept=why) if why and hasattr(made, "kept") else made
        return AdaptiveDecision(dp=made.dp, action=made.action, played=made.played, expert=self.played_spec(spec), reason=why,
                                query_row=row, casebase=cb)

    def _why(self, opp: Optional[str], spec: str, players: int, case_based: bool) -> str:
        """Why ``spec`` plays against ``opp`` (the words of ``--why`` and of :attr:`expert_choices`): a
        case-based expert's :meth:`keep_reason` (the fallback's marked so); the fallback (not
        case-based) says why no other plays; another expert why it plays (:meth:`reason`)."""
        if case_based:
            kept = self.keep_reason(opp, players)
            return f"its fallback, {expert_alias(self.played_spec(spec))}: {kept}" if kept and spec != self.safe else kept
        if opp is None:
            return ""
        return (self.keep_reason(opp, players) if spec == self.fallback else "") or self.reason(opp, spec)

    # ---- what it chose, for reports ----------------------------------------------------------
    def _begins(self, opp: Optional[str], spec: str) -> bool:
        """Whether ``spec`` playing against ``opp`` in this hand begins a new :class:`ExpertChoice`."""
        last = self._last_choice.get(opp)
        return last is None or self.expert_choices[last].expert != self.played_spec(spec)

    def _commit_choices(self, record: "HandRecord", position: int) -> None:
        """The hand ``record`` just ended: each expert that decided in it against an opponent
        continues that opponent's last :class:`ExpertChoice` or begins a new one. The first hand's
        decisions, before the bot knew who sat with it, are the one opponent's when there is one."""
        self._hand += 1
        others = [nm for i, nm in enumerate(record.players) if i != position]
        for (opp, spec), why in self._pending.items():
            if opp is None and len(others) == 1:
                opp = others[0]
                if spec == self.safe:  # the stretch's words: what the first hand's "no opponent yet" begins
                    why = f"{opp}: the warm-up (until {self._enough():.0f} of its hands, discounted, are seen), by the safe expert"
            last = self._last_choice.get(opp)
            if last is not None and self.expert_choices[last].expert == self.played_spec(spec):
                c = self.expert_choices[last]
                if c.last_hand != self._hand:
                    self.expert_choices[last] = dataclasses.replace(c, last_hand=self._hand, hands=c.hands + 1)
            else:
                if last is not None:  # the stretch before runs up to this one: hands without a decision between are its
                    c = self.expert_choices[last]
                    self.expert_choices[last] = dataclasses.replace(c, last_hand=max(c.last_hand, self._hand - 1))
                self._last_choice[opp] = len(self.expert_choices)
                self.expert_choices.append(ExpertChoice(opponent=opp, expert=self.played_spec(spec), first_hand=self._hand,
                                                 last_hand=self._hand, hands=1, why=why))
        self._pending.clear()

    # ---- retention that adapts -------------------------------------------------------------
    def table_memory(self, cb: object = None) -> Optional[TableMemory]:
        """The cases retained against each opponent in the safe expert's case base
        (:mod:`cbr.policies.table_memory`; ``cb``: that case base, when the caller has opened it),
        attached on first use; None when ``memory`` is off or the safe expert has no case base."""
        if not self.memory or self.case_based is None:
            return None
        if cb is None:
            cb = self.open()
        if self._memory is None:
            self._memory = TableMemory(cb.similarity(), threshold=self.memory_similarity,  # type: ignore[attr-defined]
                                       min_cases=self.memory_cases, z=self.memory_z)
        self._memory.attach(cb)  # type: ignore[arg-type]
        return self._memory

    @property
    def memory_changed(self) -> int:
        """How many decisions the table memory changed since this bot was made."""
        return 0 if self._memory is None else sum(self._memory.changed.values())

    def _remembered(self, dp: "DecisionPoint", opp: Optional[str], spec: str,
                    made: Decision) -> tuple[Optional[Decision], Optional[np.ndarray], object]:
        """``made`` with another action when the cases retained against ``opp`` show it worth
        more (:meth:`TableMemory.advise`), else None; and the feature row computed on the way
        (retention keeps it as the case's row) with the case base it is a row of, if any."""
        if opp is None or not self.memory or self.case_based is None:
            return None, None, None
        cb = self.open()
        memory = self.table_memory(cb)
        street = STREETS[dp.street]
        if memory is None or memory.count(opp, street) < memory.min_cases:
            return None, None, None
        row = made.row_for(cb)
        if row is None:
            row = cb.feature_set().row(dp)  # type: ignore[attr-defined]
        fold_value = -float(dp.total_committed[dp.position]) / dp.game.small_bet
        advice = memory.advise(opp, street, row, made.action, dp.legal, fold_value)
        if advice is None:
            return None, np.asarray(row, np.float32), cb
        played = tuple(1.0 if a == advice.action else 0.0 for a in "fcr")
        return AdaptiveDecision(dp=dp.taken(advice.action),
                                action=advice.action, played=played,  # type: ignore[arg-type]
                                expert=f"{expert_alias(self.played_spec(spec))}+memory", reason=advice.explain(),
                                query_row=np.asarray(row, np.float32), casebase=cb), None, None

    def reason(self, opponent: str, spec: str) -> str:
        """Why ``spec`` plays against ``opponent``, in words: its style, the nearest style case
        and the win rates the choice compared.

        >>> bot = AdaptivePolicy(seed=1)
        >>> bot.reason("nobody", "ehs")
        'nobody: not seen yet'
        >>> bot.close()
        """
        key = ("reason", opponent, spec)
        if key not in self._known:
            self._known[key] = self._reason(opponent, spec)
        return self._known[key]  # type: ignore[return-value]

    def _reason(self, opponent: str, spec: str) -> str:
        if self.styles.hands(opponent) == 0:
            return f"{opponent}: not seen yet"
        style = self.styles.vector(opponent)
        shown = ", ".join(f"{name.replace('_', ' ')} {'-' if v is None else f'{v:.2f}'}"
                          for name, v in zip(STYLE_FEATURES, style))
        _, sim, used = self.cases.expected(style, self.k, self.bandwidth)
        values = self.values(opponent)
        compared = "" if not values else (f"; expected {self.played_spec(spec)} {values.get(spec, float('nan')):+.2f} "
                                          f"sb/h, {self.played_spec(self.fallback)} "
                                          f"{values.get(self.fallback, float('nan')):+.2f}")
        played = sum(ev[0] for (o, c, _), ev in self.evidence.items() if o == opponent and c == used[0])
        return (f"{opponent} ({shown}; {_hands(self.styles.hands(opponent))}) is nearest the style case "
                f"{used[0]!r} (similarity {sim:.2f}){compared} (style cases and {_hands(played)} here)")

    def act(self, dp: "DecisionPoint", rng: random.Random) -> str:
        return self.decide(dp, rng).action

    def triple(self, dp: "DecisionPoint") -> Triple:
        return self.expert_for(dp).triple(dp)

    def triples(self, dp: "DecisionPoint", holes: Sequence[tuple[int, int]]) -> np.ndarray:
        return self.expert_for(dp).triples(dp, holes)

    def observe(self, record: "HandRecord", position: int) -> None:
        self._commit_choices(record, position)  # before the styles move: the reasons are the hand's
        self._known.clear()
        self._seating = tuple(record.players)
        self.styles.update(record)
        payoffs = record.payoffs
        sb = record.game.small_bet
        for opp in {nm for nm in record.players if nm != record.players[position]}:
            if self.evidence_discount < 1.0:
                for key, ev in self.evidence.items():
                    if key[0] == opp:
                        ev[0] *= self.evidence_discount
                        ev[1] *= self.evidence_discount
            if payoffs is not None and sb > 0:  # the spread of a hand's result against opp
                self._results.setdefault(opp, RunningMean()).add(float(payoffs[position]) / sb)
            played = self._played.pop(opp, None)
            if played is not None and payoffs is not None and sb > 0:
                ev = self.evidence.setdefault((opp, *played), [0.0, 0.0])
                ev[0] += 1.0
                ev[1] += float(payoffs[position]) / sb
        for p in self.experts.values():
            if type(p).observe is not Policy.observe:
                p.observe(record, position)

    def reset(self) -> None:
        self._known.clear()
        self.styles.reset()
        self.evidence.clear()
        self._results.clear()
        self._played.clear()
        self._current.clear()
        self._seating = ()
        self.chosen.clear()
        self.expert_choices.clear()
        self._last_choice.clear()
        self._pending.clear()
        self._hand = 0
        for p in self.experts.values():
            p.reset()

    def close(self) -> None:
        if self._memory is not None:
            self._memory.detach()
        for p in self.experts.values():
            close = getattr(p, "close", None)
            if callable(close):
                close()


#: The ``cbr`` bot's presets: ``adaptive`` (the default) is :class:`AdaptivePolicy` over the
#: ``imitate`` case-based bot (:data:`SAFE_PRESET`); the others are :data:`cbr.policies.cbr_policy.PRESETS`.
DEFAULT_CBR_PRESET = "adaptive"
#: The case-based bot the adaptive ``cbr`` plays until it knows its opponent (and retention grows):
#: the expert case base sampled plainly, LBR 264 ± 38 mbb/g where the sharpened ``expert`` measured
#: 354 to 403 (docs/experiments.md).
SAFE_PRESET = "imitate"


def largest_warmup(discount: float) -> float:
    """The largest ``warmup`` the adaptive bot takes with ``discount``: an opponent's count of
    hands, each worth ``discount ** age``, approaches ``1 / (1 - discount)`` and never reaches it,
    so the warm-up may be at most 90% of that (reached after ``log(0.1) / log(discount)`` hands,
    229 at 0.99); with ``discount=1`` any.

    >>> largest_warmup(0.99), largest_warmup(0.95), largest_warmup(0.9991), largest_warmup(1.0)
    (90, 18, 1000, inf)
    """
    if discount >= 1.0:
        return math.inf
    return math.floor(0.9 / (1.0 - discount) + 1e-6)  # 0.9 / (1 - 0.99) is 89.99999999999991


def _flag(name: str, value: object) -> bool:
    """A yes/no option: a bool, 0/1 or true/false (as a spec writes it)."""
    from cbr.policies.spec import FALSE_WORDS, TRUE_WORDS

    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    raise ConfigError(f"{name} must be true or false (1/0, yes/no, on/off), got {value!r}")


def _hands(n: float) -> str:
    """``1 hand``, ``12 hands`` (of a discounted count, rounded)."""
    return counted(int(round(n)), "hand")


def spec_options(options: dict) -> str:
    """``options`` as a policy spec writes them after its name (``:KEY=VALUE`` each, keys as a
    spec spells them); a case base held open by the process (a server's) by its path.

    >>> spec_options({"casebase": "p3", "outcome_weight": 0.5})
    ':casebase=p3:outcome-weight=0.5'
    """
    def text(value: object) -> str:
        path = getattr(value, "path", None)  # a SharedCaseBase: the case base it holds
        return str(path if path is not None and not isinstance(value, (str, Path)) else value)

    return "".join(f":{k.replace('_', '-')}={text(v)}" for k, v in options.items())


def with_casebase(spec: str, casebase: str) -> str:
    """``spec`` playing from case base ``casebase`` (its ``casebase`` option set to it, or added).

    >>> with_casebase("cbr:preset=imitate:casebase=default:sharpen=2", "/tmp/mine")
    'cbr:preset=imitate:casebase=/tmp/mine:sharpen=2'
    >>> with_casebase("cbr:preset=expert", "/tmp/mine")
    'cbr:preset=expert:casebase=/tmp/mine'
    """
    from cbr.policies.spec import parse_policy_spec

    name, options = parse_policy_spec(spec)
    options["casebase"] = casebase
    return name + spec_options(options)


def warmup_spec(options: dict) -> str:
    """The spec of the adaptive ``cbr`` bot's safe expert (its warm-up's bot), given the options of
    the ``cbr`` spec (:func:`~cbr.policies.spec.parse_policy_spec`'s): the case-based bot's options
    pass on to it, the preset and the table memory's do not.

    >>> warmup_spec({"casebase": "acpc-limit", "memory_z": "3"})
    'cbr:preset=imitate:casebase=acpc-limit'
    """
    memory = ("memory", "memory_cases", "memory_z", "memory_similarity")
    return f"cbr:preset={SAFE_PRESET}" + spec_options({k: v for k, v in options.items()
                                                       if k != "preset" and k not in memory})


def case_based_bot(*, seed: int | None = None, preset: str = DEFAULT_CBR_PRESET, casebase: "str | Path | None" = None,
                   similarity: Optional[str] = None, reuse: Optional[str] = None, sharpen: Optional[float] = None,
                   outcome_weight: Optional[float] = None, odds_guard: Optional[float] = None,
                   models: Optional[str] = None, threshold: Optional[float] = None, fallback_k: Optional[int] = None,
                   min_cases: Optional[int] = None, memory: bool = True, memory_cases: int = 20,
                   memory_z: float = 2.0, memory_similarity: Optional[float] = None) -> Policy:
    """The ``cbr`` bot (the plugin of that name). ``preset``: ``adaptive`` (the default) plays
    the expert case base sampled plainly (``cbr:preset=imitate``) until it knows its opponent, then
    the house bot that beats that opponent's style, and the same case base sharpened (its fallback,
    ``cbr:preset=expert``) where none is expected to win more (:class:`AdaptivePolicy` with its
    defaults: the ``adapt`` plugin tunes it); ``expert`` is the case-based bot alone, sharpened;
    ``imitate`` alone, plain sampling; ``casper`` is CASPER as published
    (:class:`~cbr.policies.cbr_policy.CBRPolicy`). The other options are the case-based bot's; with
    ``adaptive`` they apply to its safe expert and its fallback, each over its preset (their case
    base is the one retention grows), and
    ``memory``, ``memory_cases``, ``memory_z``, ``memory_similarity`` to its table memory
    (:class:`AdaptivePolicy`; ``memory=0`` turns it off).

    >>> bot = case_based_bot(seed=1)
    >>> bot.name, type(bot).__name__, type(bot.experts[bot.safe]).__name__
    ('cbr', 'AdaptivePolicy', 'CBRPolicy')
    >>> type(case_based_bot(preset="expert")).__name__
    'CBRPolicy'
    >>> bot.close()
    """
    from cbr.policies.cbr_policy import PRESETS

    options = {"casebase": casebase, "similarity": similarity, "reuse": reuse, "sharpen": sharpen,
               "outcome_weight": outcome_weight, "odds_guard": odds_guard, "models": models, "threshold": threshold,
               "fallback_k": fallback_k, "min_cases": min_cases}
    adaptive = {k: v for k, v, default in (("memory", memory, True), ("memory_cases", memory_cases, 20),
                                           ("memory_z", memory_z, 2.0), ("memory_similarity", memory_similarity, None))
                if v != default}  # what a spec changed (the defaults are AdaptivePolicy's)
    if preset != DEFAULT_CBR_PRESET:
        if adaptive:
            raise ConfigError(f"{', '.join(adaptive)}: options of the adaptive preset, not of preset={preset}")
        if preset not in PRESETS:
            raise ConfigError(f"unknown preset {preset!r}; use {one_of([DEFAULT_CBR_PRESET, *PRESETS])}")
        return CBRPolicy(seed=seed, preset=preset, **options)  # type: ignore[arg-type]
    from cbr.policies.spec import parse_policy_spec

    bot = AdaptivePolicy(seed=seed, safe=f"cbr:preset={SAFE_PRESET}", **adaptive)  # type: ignore[arg-type]
    # its case-based experts (the safe one, and the fallback: the case base sharpened) take the
    # options (a case base of one's own, ...), each over its preset, and are named with them
    passed = spec_options({k: v for k, v in options.items() if v is not None})
    for spec in dict.fromkeys((bot.safe, bot.fallback)):
        name, given = parse_policy_spec(spec)
        if name == "cbr" and set(given) == {"preset"} and given["preset"] in PRESETS:
            bot.use_expert(spec, CBRPolicy(seed=bot.expert_seed(spec), preset=given["preset"], **options),  # type: ignore[arg-type]
                           played=spec + passed)
    bot.name = "cbr"
    return bot


#: One line on each option of the ``cbr`` bot (``cbr plugins list``): its presets, then the
#: case-based bot's options and the table memory's, as those classes declare them.
case_based_bot.OPTION_HELP = {  # type: ignore[attr-defined]
    "preset": "adaptive (adapts to the opponent's style), expert (the case base, sharpened), imitate "
              "(plainly) or casper",
    **{k: line for k, line in CBRPolicy.OPTION_HELP.items() if k != "preset"},
    **{k: AdaptivePolicy.OPTION_HELP[k] + " (adaptive only)" for k in ("memory", "memory_cases", "memory_z",
                                                                        "memory_similarity")},
}
#: What each preset of the ``cbr`` bot sets (``cbr plugins list``): ``adaptive``, then the
#: case-based bot's presets, their lines made from the values the bot plays.
case_based_bot.PRESET_HELP = {  # type: ignore[attr-defined]
    "adaptive": "imitate until it knows its opponent, then the house bot that beats its style (or expert)",
    **CBRPolicy.PRESET_HELP,
}
