"""Similarity as configuration: a local measure per feature, weighted global similarity.

CASPER (Watson & Rubin, sections V-VI) compares a query with a case feature by feature:
each feature has a *local* similarity in [0, 1] (:mod:`cbr.similarity.measures`) and a
weight 0..100; the *global* similarity is the weighted mean ``sum(w_i * s_i) / sum(w_i)``.
Which measure, its parameters and the weights are data (TOML), not code:
:class:`SimilarityConfig` holds one :class:`StreetSimilarity` per street, each an ordered
list of :class:`FeatureSimilarity` (the columns of the case rows); :func:`default_casper`
is CASPER's configuration; :func:`global_similarity` is the definition retrieval answers
exactly.

>>> cfg = default_casper()
>>> cfg.streets[0].features[:2]
('players_dealt', 'relative_position')
>>> st = cfg.streets[1]
>>> q = np.array([6, 0.5, 3, 1, 0, 1, 0.25, 0.8, 0.1, 0.05, 8, 1], np.float32)
>>> float(global_similarity(st, q, q[None, :])[0])
1.0
"""
from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cbr.errors import ConfigError, counted
from cbr.game.gamedef import STREETS
from cbr.similarity.measures import LocalMeasure, check_measure

__all__ = ["FeatureSimilarity", "StreetSimilarity", "SimilarityConfig", "CASPER_FEATURES", "default_casper",
           "default_sartre", "default_for", "opponent_similarity", "OPPONENT_SIMILARITY", "local_similarities",
           "global_similarity", "similarity_into", "local_into"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FEATURE_KEYS = {"feature", "measure", "weight", "low", "high"}


@dataclass(frozen=True)
class FeatureSimilarity:
    """One feature's local measure, its parameters, its domain and its weight (0..100).

    >>> f = FeatureSimilarity("bets_to_call", "exp", weight=60, low=0, high=4, params={"k": 1.5})
    >>> f.measure_obj(0, np.array([0.0, 1.0])).round(3).tolist()
    [1.0, 0.223]
    """

    name: str
    measure: str
    weight: float
    low: float
    high: float
    params: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"feature {self.name!r}"
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise ConfigError(f"feature name {self.name!r} is not a valid identifier")
        try:
            weight = float(self.weight)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: weight must be a number 0..100, got {self.weight!r}") from None
        if not (0.0 <= weight <= 100.0):
            raise ConfigError(f"{where}: weight must be within 0..100, got {self.weight!r}")
        object.__setattr__(self, "weight", weight)
        if not isinstance(self.measure, str):
            raise ConfigError(f"{where}: measure must be a name, got {self.measure!r}")
        try:
            cls = check_measure(self.measure, self.params)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        try:
            obj = cls(low=self.low, high=self.high, **dict(self.params))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where} ({self.measure}): {exc}") from None
        slope = float(obj.lower_bound_slope())
        if not (math.isfinite(slope) and slope > 0):
            raise ConfigError(f"{where}: measure {self.measure!r} gives lower-bound slope {slope}; must be > 0")
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))
        object.__setattr__(self, "params", dict(obj.params()))
        object.__setattr__(self, "_obj", obj)

    @property
    def measure_obj(self) -> LocalMeasure:
        """The built measure (callable on ``(query_value, column)``)."""
        return self._obj  # type: ignore[attr-defined]

    def to_dict(self) -> dict[str, Any]:
        return {"feature": self.name, "measure": self.measure, "weight": self.weight,
                "low": self.low, "high": self.high, **self.params}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "") -> "FeatureSimilarity":
        """Build from a TOML table: ``feature``, ``measure``, ``weight``, ``low``, ``high`` + params."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: each feature must be a table, got {data!r}")
        name = data.get("feature")
        label = f"{where} feature {name!r}" if name else where
        for key in ("feature", "measure", "weight", "low", "high"):
            if key not in data:
                raise ConfigError(f"{label}: missing key {key!r}")
        params = {k: v for k, v in data.items() if k not in _FEATURE_KEYS}
        for k, v in params.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"{label}: parameter {k!r} must be a number, got {v!r}")
        try:
            return cls(name=data["feature"], measure=data["measure"], weight=data["weight"],
                       low=data["low"], high=data["high"], params=params)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None


@dataclass(frozen=True)
class StreetSimilarity:
    """The similarity of one street: ordered features (the columns of the case rows).

    >>> st = default_casper().streets[0]
    >>> len(st), st.features[-1], float(st.weights.max())
    (8, 'hand_strength', 100.0)
    """

    street: str
    feature_specs: tuple[FeatureSimilarity, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "feature_specs", tuple(self.feature_specs))
        if not self.feature_specs:
            raise ConfigError(f"street {self.street!r}: no features")
        seen: set[str] = set()
        for spec in self.feature_specs:
            if not isinstance(spec, FeatureSimilarity):
                raise ConfigError(f"street {self.street!r}: {spec!r} is not a FeatureSimilarity")
            if spec.name in seen:
                raise ConfigError(f"street {self.street!r}: feature {spec.name!r} appears twice")
            seen.add(spec.name)
        if sum(s.weight for s in self.feature_specs) <= 0:
            raise ConfigError(f"street {self.street!r}: all weights are 0; at least one must be positive")

    def __len__(self) -> int:
        return len(self.feature_specs)

    @property
    def features(self) -> tuple[str, ...]:
        """Feature names in column order."""
        return tuple(s.name for s in self.feature_specs)

    @property
    def weights(self) -> np.ndarray:
        return np.array([s.weight for s in self.feature_specs], dtype=np.float64)

    @property
    def lows(self) -> np.ndarray:
        return np.array([s.low for s in self.feature_specs], dtype=np.float64)

    @property
    def highs(self) -> np.ndarray:
        return np.array([s.high for s in self.feature_specs], dtype=np.float64)

    def slopes(self) -> np.ndarray:
        """Per feature the lower-bound slope ``c_i`` of bound (B) (see :mod:`cbr.similarity.measures`)."""
        return np.array([s.measure_obj.lower_bound_slope() for s in self.feature_specs], dtype=np.float64)

    def bound_rows(self, rows: np.ndarray) -> np.ndarray:
        """Rows in retrieval's bound space (float64): per feature the value clipped to the
        domain minus ``low`` (or the measure's ``bound_transform``), times :meth:`bound_scales`.
        The L1 distance of two such rows is a lower bound of ``1 - global similarity``."""
        cached = self.__dict__.get("_bound")  # constants of a frozen config: computed once
        if cached is None:
            transforms = [(i, t) for i, spec in enumerate(self.feature_specs)
                          if (t := getattr(spec.measure_obj, "bound_transform", None)) is not None]
            cached = (self.lows, self.highs, self.bound_scales(), transforms)
            object.__setattr__(self, "_bound", cached)
        lows, highs, scales, transforms = cached
        x = np.asarray(rows, dtype=np.float64)
        z = np.clip(x, lows, highs) - lows
        for i, transform in transforms:
            z[:, i] = transform(x[:, i])
        return z * scales

    def bound_scales(self) -> np.ndarray:
        """``w_i * c_i / sum(w)``: L1 distance of rows scaled by these (after clipping to the
        domain and shifting by ``low``) is a lower bound of ``1 - global similarity``."""
        w = self.weights
        return w * self.slopes() / w.sum()

    def to_dicts(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.feature_specs]


def _street_name(street: int | str) -> str:
    if isinstance(street, str) and street in STREETS:
        return street
    if isinstance(street, int) and not isinstance(street, bool) and 0 <= street < len(STREETS):
        return STREETS[street]
    raise ConfigError(f"unknown street {street!r}; streets: {', '.join(STREETS)}")


def check_min_cases(min_cases: object, fallback_k: object) -> None:
    """Raise :class:`ConfigError` unless ``min_cases`` is a whole number from 1 to ``fallback_k``
    (fewer than ``min_cases`` cases at or above the threshold: the ``fallback_k`` most similar).

    >>> check_min_cases(20, 20)
    >>> check_min_cases(21, 20)
    Traceback (most recent call last):
    ...
    cbr.errors.ConfigError: min_cases must be a whole number from 1 to fallback_k (20), got 21
    """
    if isinstance(min_cases, bool) or not isinstance(min_cases, (int, np.integer)) \
            or not 1 <= int(min_cases) <= int(fallback_k):  # type: ignore[call-overload]
        raise ConfigError(f"min_cases must be a whole number from 1 to fallback_k ({fallback_k}), got {min_cases!r}")


@dataclass(frozen=True)
class SimilarityConfig:
    """Similarity for all four streets plus retrieval settings.

    ``threshold``: cases at or above this global similarity are retrieved (CASPER: 0.97);
    ``fallback_k``: if none, the ``fallback_k`` most similar (CASPER: 20);
    ``min_cases``: if fewer than this many reach the threshold, the ``fallback_k`` most similar
    (1, CASPER's rule: only when none does; at most ``fallback_k``: ``min_cases = fallback_k``
    retrieves every case at or above the threshold and never fewer than ``fallback_k``);
    ``weighted_triple``: weight each retrieved action by its similarity.

    >>> cfg = SimilarityConfig.from_toml(default_casper().to_toml())
    >>> cfg == default_casper(), cfg.street("flop").features[-1]
    (True, 'previous_round_bets')
    """

    streets: tuple[StreetSimilarity, StreetSimilarity, StreetSimilarity, StreetSimilarity]
    threshold: float = 0.97
    fallback_k: int = 20
    weighted_triple: bool = False
    min_cases: int = 1

    def __post_init__(self) -> None:
        streets = tuple(self.streets)
        if len(streets) != len(STREETS):
            raise ConfigError(f"need a similarity for each of the {counted(len(STREETS), 'street')} "
                              f"({', '.join(STREETS)}), got {len(streets)}")
        for name, st in zip(STREETS, streets):
            if not isinstance(st, StreetSimilarity):
                raise ConfigError(f"street {name!r}: not a StreetSimilarity: {st!r}")
            if st.street != name:
                raise ConfigError(f"street {name!r}: got the similarity of street {st.street!r}")
        object.__setattr__(self, "streets", streets)
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)) \
                or not 0.0 <= float(self.threshold) <= 1.0:
            raise ConfigError(f"threshold must be a number in [0, 1], got {self.threshold!r}")
        object.__setattr__(self, "threshold", float(self.threshold))
        if isinstance(self.fallback_k, bool) or not isinstance(self.fallback_k, int) or self.fallback_k < 1:
            raise ConfigError(f"fallback_k must be a positive integer, got {self.fallback_k!r}")
        check_min_cases(self.min_cases, self.fallback_k)
        if not isinstance(self.weighted_triple, bool):
            raise ConfigError(f"weighted_triple must be true or false, got {self.weighted_triple!r}")

    def street(self, street: int | str) -> StreetSimilarity:
        """The similarity of a street, by number 0..3 or name."""
        return self.streets[STREETS.index(_street_name(street))]

    def targets(self, key: str) -> list[tuple[str, str]]:
        """The ``(street, feature)`` pairs a key of :meth:`changed` names: ``STREET.FEATURE``, or
        ``FEATURE`` on every street that has it; :class:`ConfigError` for an unknown street or
        a feature no street (or not that street) has, listing the known ones.

        >>> default_casper().targets("flop.pot_odds"), len(default_casper().targets("pot_odds"))
        ([('flop', 'pot_odds')], 4)
        >>> default_casper().targets("nothing")
        Traceback (most recent call last):
        ...
        cbr.errors.ConfigError: no feature 'nothing' on any street; the features: players_dealt, relative_position, players_in_hand, players_to_act, bets_committed, bets_to_call, pot_odds, hand_strength, positive_potential, negative_potential, small_bets_in_pot, previous_round_bets
        """
        street, dot, feature = key.rpartition(".")
        if dot:
            st = self.street(street)
            if feature not in st.features:
                raise ConfigError(f"no feature {feature!r} on the {st.street}; its features: "
                                  f"{', '.join(st.features)}")
            return [(st.street, feature)]
        found = [(st.street, feature) for st in self.streets if feature in st.features]
        if not found:
            known = dict.fromkeys(f for st in self.streets for f in st.features)
            raise ConfigError(f"no feature {feature!r} on any street; the features: {', '.join(known)}")
        return found

    def changed(self, *, threshold: float | None = None, fallback_k: int | None = None,
                min_cases: int | None = None, weighted_triple: bool | None = None, weights: Mapping[str, float] | None = None,
                measures: Mapping[str, tuple[str, Mapping[str, float]]] | None = None) -> "SimilarityConfig":
        """A copy with settings changed, checked as a configuration read from TOML is: None keeps
        a setting. ``weights`` maps ``FEATURE`` (on every street that has it) or
        ``STREET.FEATURE`` to a weight 0..100; ``measures`` maps them to ``(measure name,
        parameters)``, e.g. ``("exp", {"k": 2.0})`` (the feature keeps its domain ``low..high``).
        A feature no street has, a bad value or a measure that does not fit raises
        :class:`ConfigError`.

        >>> cfg = default_casper().changed(threshold=0.9, weights={"flop.hand_strength": 50},
        ...                                measures={"pot_odds": ("exp", {"k": 3.0})})
        >>> cfg.threshold, float(cfg.street("flop").weights[7]), float(cfg.street("turn").weights[7])
        (0.9, 50.0, 100.0)
        >>> {cfg.street(s).feature_specs[6].measure for s in STREETS}
        {'exp'}
        >>> default_casper().changed(weights={"river.nothing": 1})
        Traceback (most recent call last):
        ...
        cbr.errors.ConfigError: no feature 'nothing' on the river; its features: players_dealt, relative_position, players_in_hand, players_to_act, bets_committed, bets_to_call, pot_odds, hand_strength, positive_potential, negative_potential, small_bets_in_pot, previous_round_bets
        """
        changes: dict[tuple[str, str], dict[str, Any]] = {}
        for key, weight in (weights or {}).items():
            for t in self.targets(key):
                changes.setdefault(t, {})["weight"] = weight
        for key, (measure, params) in (measures or {}).items():
            for t in self.targets(key):
                changes.setdefault(t, {}).update(measure=measure, params=dict(params))
        streets = []
        for st in self.streets:
            specs = []
            for spec in st.feature_specs:
                change = changes.get((st.street, spec.name))
                if change:
                    try:
                        spec = FeatureSimilarity(spec.name, change.get("measure", spec.measure),
                                                 change.get("weight", spec.weight), spec.low, spec.high,
                                                 change.get("params", spec.params))
                    except ConfigError as exc:
                        raise ConfigError(f"street {st.street!r}: {exc}") from None
                specs.append(spec)
            streets.append(StreetSimilarity(st.street, tuple(specs)))
        return SimilarityConfig(
            streets=tuple(streets),  # type: ignore[arg-type]
            threshold=self.threshold if threshold is None else threshold,
            fallback_k=self.fallback_k if fallback_k is None else fallback_k,
            weighted_triple=self.weighted_triple if weighted_triple is None else weighted_triple,
            min_cases=self.min_cases if min_cases is None else min_cases)

    # -- TOML ------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SimilarityConfig":
        """Build from the parsed TOML document (see :meth:`from_toml`)."""
        known = {"threshold", "fallback_k", "min_cases", "weighted_triple", *STREETS}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{counted(len(unknown), 'unknown key')} in similarity config ({', '.join(map(repr, unknown))}); "
                              f"expected {', '.join(sorted(known))}")
        streets = []
        for name in STREETS:
            if name not in data:
                raise ConfigError(f"street {name!r} is missing from the similarity config "
                                  f"(one [[{name}]] table per feature)")
            rows = data[name]
            if not isinstance(rows, list):
                raise ConfigError(f"street {name!r}: expected an array of tables [[{name}]], got {rows!r}")
            specs = tuple(FeatureSimilarity.from_dict(row, where=f"street {name!r}") for row in rows)
            streets.append(StreetSimilarity(name, specs))
        kwargs = {k: data[k] for k in ("threshold", "fallback_k", "min_cases", "weighted_triple") if k in data}
        return cls(streets=tuple(streets), **kwargs)  # type: ignore[arg-type]

    @classmethod
    def from_toml(cls, source: str | Path) -> "SimilarityConfig":
        """Read TOML from a path or from the text itself.

        Format: top-level ``threshold``, ``fallback_k``, ``weighted_triple`` (and ``min_cases``,
        written only when it is not 1); then per street
        (``preflop``, ``flop``, ``turn``, ``river``) one ``[[street]]`` table per feature, in
        column order, with ``feature``, ``measure``, ``weight``, ``low``, ``high`` and the
        measure's parameters (``k`` for ``exp``).
        """
        if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source
                                        and "=" not in source):
            path = Path(source)
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise ConfigError(f"similarity config {path} does not exist") from None
            except UnicodeDecodeError:
                raise ConfigError(f"similarity config {path}: not a TOML text file (not UTF-8)") from None
            except OSError as exc:
                raise ConfigError(f"similarity config {path}: cannot be read ({exc.strerror or exc})") from None
            origin = str(path)
        else:
            text, origin = str(source), "similarity config"
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{origin}: not valid TOML: {exc}") from None
        try:
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ConfigError(f"{origin}: {exc}") from None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"threshold": self.threshold, "fallback_k": self.fallback_k,
                               "weighted_triple": self.weighted_triple}
        if self.min_cases != 1:  # CASPER's rule is left out: files written before it stay the same
            out["min_cases"] = self.min_cases
        for st in self.streets:
            out[st.street] = st.to_dicts()
        return out

    def to_toml(self) -> str:
        """The configuration as TOML text (read back by :meth:`from_toml`)."""
        lines = ["# Similarity for the CBR engine: one [[street]] table per feature, in column order.",
                 "# measure: linear (1-|d|/(high-low)), exp (exp(-k|d|)), exact (1 if equal),",
                 "#          equity (pre-flop rank compared by its equity).",
                 f"threshold = {_toml_value(self.threshold)}",
                 f"fallback_k = {self.fallback_k}",
                 f"weighted_triple = {_toml_value(self.weighted_triple)}",
                 *([f"min_cases = {self.min_cases}"] if self.min_cases != 1 else [])]
        for st in self.streets:
            for row in st.to_dicts():
                lines.append("")
                lines.append(f"[[{st.street}]]")
                lines.extend(f"{k} = {_toml_value(v)}" for k, v in row.items())
        return "\n".join(lines) + "\n"

    def dump(self, path: str | Path) -> None:
        """Write :meth:`to_toml` to ``path``."""
        Path(path).write_text(self.to_toml(), encoding="utf-8")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ConfigError(f"cannot write non-finite number {v} to TOML")
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    raise ConfigError(f"cannot write {v!r} to TOML")


# ---------------------------------------------------------------------------------------
# CASPER defaults
# ---------------------------------------------------------------------------------------

CASPER_FEATURES: tuple[str, ...] = (
    "players_dealt", "relative_position", "players_in_hand", "players_to_act",
    "bets_committed", "bets_to_call", "pot_odds", "hand_strength",
    "positive_potential", "negative_potential", "small_bets_in_pot", "previous_round_bets",
)

# name: (measure, weight, low, high, params). Hand strength and the potentials weigh most
# (CASPER section VI); bets to call and bets committed use exponential decay, since one bet
# more changes the situation a lot (the paper's example); counts and fractions are linear.
_CASPER_COMMON: dict[str, tuple[str, float, float, float, dict[str, float]]] = {
    "players_dealt": ("linear", 20, 2, 10, {}),
    "relative_position": ("linear", 30, 0, 1, {}),
    "players_in_hand": ("linear", 30, 1, 10, {}),
    "players_to_act": ("linear", 30, 0, 9, {}),
    "bets_committed": ("exp", 40, 0, 4, {"k": 1.0}),
    "bets_to_call": ("exp", 60, 0, 4, {"k": 1.5}),
    "pot_odds": ("linear", 50, 0, 1, {}),
}
_CASPER_PREFLOP_HS = ("linear", 100, 1, 169, {})
_CASPER_POSTFLOP: dict[str, tuple[str, float, float, float, dict[str, float]]] = {
    "hand_strength": ("linear", 100, 0, 1, {}),
    "positive_potential": ("linear", 80, 0, 1, {}),
    "negative_potential": ("linear", 80, 0, 1, {}),
    "small_bets_in_pot": ("linear", 30, 0, 100, {}),
    "previous_round_bets": ("exp", 30, 0, 4, {"k": 1.0}),
}


def default_casper(threshold: float = 0.97, fallback_k: int = 20,
                   weighted_triple: bool = False) -> SimilarityConfig:
    """CASPER's similarity: 8 features pre-flop, all 12 after.

    Defaults (measure, weight, domain):

    ======================  =======================  ======  ===========
    feature                 measure                  weight  domain
    ======================  =======================  ======  ===========
    players_dealt           linear                   20      2..10
    relative_position       linear                   30      0..1
    players_in_hand         linear                   30      1..10
    players_to_act          linear                   30      0..9
    bets_committed          exp, k = 1.0             40      0..4
    bets_to_call            exp, k = 1.5             60      0..4
    pot_odds                linear                   50      0..1
    hand_strength           linear                   100     1..169 pre-flop (rank), 0..1 after
    positive_potential      linear                   80      0..1
    negative_potential      linear                   80      0..1
    small_bets_in_pot       linear                   30      0..100
    previous_round_bets     exp, k = 1.0             30      0..4
    ======================  =======================  ======  ===========

    >>> [len(s) for s in default_casper().streets]
    [8, 12, 12, 12]
    """
    def spec(name: str, entry: tuple[str, float, float, float, dict[str, float]]) -> FeatureSimilarity:
        measure, weight, low, high, params = entry
        return FeatureSimilarity(name, measure, weight=weight, low=low, high=high, params=params)

    pre = [spec(n, _CASPER_COMMON[n]) for n in CASPER_FEATURES[:7]] + [spec("hand_strength", _CASPER_PREFLOP_HS)]
    post_table = {**_CASPER_COMMON, **_CASPER_POSTFLOP}
    post = [spec(n, post_table[n]) for n in CASPER_FEATURES]
    streets = (StreetSimilarity(STREETS[0], tuple(pre)),
               *(StreetSimilarity(s, tuple(post)) for s in STREETS[1:]))
    return SimilarityConfig(streets=streets, threshold=threshold, fallback_k=fallback_k,  # type: ignore[arg-type]
                            weighted_triple=weighted_triple)


# ---------------------------------------------------------------------------------------
# SARTRE defaults
# ---------------------------------------------------------------------------------------

# (measure, weight, low, high). The betting counts are graded (one bet or raise of difference
# on a street costs a quarter of that column; the current street's count weighs most); the
# current street's actions only break ties between equal counts (their weight, 10, is below
# the 15 that one bet of difference on a street costs), so an identical sequence is the most
# similar, then the same counts, then one bet or raise away; the strength bucket is a
# distance over the buckets; a board texture either is the same category or not.
_SARTRE_BETS_DONE = ("linear", 60, 0, 4)        # bets and raises on an earlier street
_SARTRE_BETS_NOW = ("linear", 80, 0, 4)         # ... on the current street
_SARTRE_ACTIONS = ("exact", 10, 0, 12)          # actions already taken on the current street
_SARTRE_STRENGTH_WEIGHT = 100                   # hand_strength_bucket: linear over 0..buckets-1
_SARTRE_TEXTURE = ("exact", 60, 0, 8)           # board_texture code


def default_sartre(buckets: int | None = None, threshold: float = 0.97, fallback_k: int = 20,
                   weighted_triple: bool = False) -> SimilarityConfig:
    """SARTRE's similarity (:mod:`features.sartre`): for the columns of each street,

    ========================  ==========  ======  =====================
    feature                   measure     weight  domain
    ========================  ==========  ======  =====================
    <earlier street>_bets     linear      60      0..4
    <current street>_bets     linear      80      0..4
    <current street>_actions  exact       10      0..12
    hand_strength_bucket      linear      100     0..buckets-1 (49)
    board_texture             exact       60      0..8 (after the flop)
    ========================  ==========  ======  =====================

    One bet or raise of difference on a street lowers its local similarity by 1/4, so a
    betting sequence one raise away is more similar than one three raises away, and any
    sequence with the query's counts more similar than one a raise away. With the threshold
    0.97 the cases retrieved have the query's bets per street and actions, its texture and a
    strength a few buckets away (else the ``fallback_k`` most similar).
    ``buckets``: the feature set's hand-strength buckets (default
    :data:`features.sartre.HAND_STRENGTH_BUCKETS`).

    >>> cfg = default_sartre()
    >>> [len(s) for s in cfg.streets], cfg.street("turn").features[:3]
    ([3, 5, 6, 7], ('preflop_bets', 'flop_bets', 'turn_bets'))
    """
    from features.sartre import HAND_STRENGTH_BUCKETS, sartre_feature_names

    buckets = HAND_STRENGTH_BUCKETS if buckets is None else buckets
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 2:
        raise ConfigError(f"buckets must be an integer of at least 2, got {buckets!r}")

    def spec(name: str, current: str) -> FeatureSimilarity:
        if name == "hand_strength_bucket":
            measure, weight, low, high = "linear", _SARTRE_STRENGTH_WEIGHT, 0, buckets - 1
        elif name == "board_texture":
            measure, weight, low, high = _SARTRE_TEXTURE
        elif name.endswith("_actions"):
            measure, weight, low, high = _SARTRE_ACTIONS
        else:
            measure, weight, low, high = _SARTRE_BETS_NOW if name == f"{current}_bets" else _SARTRE_BETS_DONE
        return FeatureSimilarity(name, measure, weight=weight, low=low, high=high)

    streets = tuple(StreetSimilarity(s, tuple(spec(n, s) for n in sartre_feature_names(s))) for s in STREETS)
    return SimilarityConfig(streets=streets, threshold=threshold, fallback_k=fallback_k,  # type: ignore[arg-type]
                            weighted_triple=weighted_triple)


#: feature: (measure, weight, low, high) of the opponent columns in ``casper-opp``'s default
#: similarity (:func:`opponent_similarity`). Weights chosen on seed 1 of
#: ``experiments/opponent_aware.py --weights``: twice the first guess (30, 10, 30, 10) did best
#: against both opponents (docs/opponent-models.md, opponent-aware cases).
OPPONENT_SIMILARITY: dict[str, tuple[str, float, float, float]] = {
    "opp_aggressiveness": ("linear", 60, 0, 1),
    "opp_tightness": ("linear", 20, 0, 1),
    "opp_riskiness": ("linear", 60, 0, 1),
    "opp_max_aggressiveness": ("linear", 20, 0, 1),
}


def opponent_similarity(base: SimilarityConfig | None = None, scale: float = 1.0) -> SimilarityConfig:
    """The default similarity of ``casper-opp``: CASPER's (or ``base``'s) features and
    weights, then the opponent columns of :data:`OPPONENT_SIMILARITY` (their weights times
    ``scale``; 0 ignores them).

    >>> cfg = opponent_similarity()
    >>> cfg.street("flop").features[-4:], len(cfg.street("preflop"))
    (('opp_aggressiveness', 'opp_tightness', 'opp_riskiness', 'opp_max_aggressiveness'), 12)
    """
    base = base if base is not None else default_casper()
    extra = tuple(FeatureSimilarity(name, m, weight=w * scale, low=lo, high=hi)
                  for name, (m, w, lo, hi) in OPPONENT_SIMILARITY.items())
    streets = tuple(StreetSimilarity(st.street, st.feature_specs + extra) for st in base.streets)
    return SimilarityConfig(streets=streets, threshold=base.threshold, fallback_k=base.fallback_k,  # type: ignore[arg-type]
                            weighted_triple=base.weighted_triple)


def _covers(config: SimilarityConfig, feature_set: Any) -> bool:
    return all(list(config.street(s).features) == list(feature_set.feature_names(s)) for s in STREETS)


def default_for(feature_set: Any) -> SimilarityConfig | None:
    """The default similarity of a feature set (an instance), the one rule of every writer of
    case bases (``cbr.store.indexes.default_similarity``: a build, ``CaseBaseWriter``):
    CASPER's for ``casper``, :func:`default_sartre` (with its ``buckets``) for ``sartre``,
    :func:`opponent_similarity` for a feature set that takes player models
    (``needs_player_models``, as ``casper-opp``) with exactly CASPER's columns and the
    opponent columns; for any other, what its ``default_similarity()`` method returns (a :class:`SimilarityConfig`, or the same as a
    mapping, as :meth:`SimilarityConfig.from_dict` reads: a plugin's own default,
    docs/plugins.md); None when it has no such method, or (a built-in's) when its columns
    differ from the default's. A plugin's default that does not cover exactly its columns
    raises :class:`ConfigError` naming the feature set.

    >>> from features.sartre import SartreFeatures
    >>> default_for(SartreFeatures(buckets=10)).street("river").feature_specs[-2].high
    9.0
    """
    name = getattr(feature_set, "name", None)
    if name == "casper":
        config = default_casper()
    elif name == "sartre":
        config = default_sartre(getattr(feature_set, "buckets", None))
    elif getattr(feature_set, "needs_player_models", False) and _covers(opponent_similarity(), feature_set):
        return opponent_similarity()
    else:
        return _plugin_default(feature_set, name)
    return config if _covers(config, feature_set) else None


def _plugin_default(feature_set: Any, name: Any) -> SimilarityConfig | None:
    """The similarity a feature set's ``default_similarity()`` gives, checked (None without one)."""
    hook = getattr(feature_set, "default_similarity", None)
    if not callable(hook):
        return None
    where = f"feature set {name!r}: default_similarity()"
    given = hook()
    if isinstance(given, Mapping):
        try:
            given = SimilarityConfig.from_dict(given)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {str(exc).removeprefix('similarity config: ')}") from None
    if not isinstance(given, SimilarityConfig):
        raise ConfigError(f"{where} must return a SimilarityConfig or a mapping, got {type(given).__name__}")
    for s in STREETS:
        have, want = list(given.street(s).features), list(feature_set.feature_names(s))
        if have != want:
            raise ConfigError(f"{where} covers {have} on the {s}, but its feature_names({s!r}) gives {want}")
    return given


# ---------------------------------------------------------------------------------------
# The definition (numpy brute force): the ground truth of retrieval
# ---------------------------------------------------------------------------------------


def _check_rows(street: StreetSimilarity, query: np.ndarray, cases: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q = np.asarray(query, dtype=np.float32)
    x = np.asarray(cases, dtype=np.float32)
    d = len(street)
    if q.shape != (d,):
        raise ConfigError(f"street {street.street!r}: query must have shape ({d},) for features "
                          f"{', '.join(street.features)}; got {q.shape}")
    if x.ndim != 2 or x.shape[1] != d:
        raise ConfigError(f"street {street.street!r}: cases must have shape (n, {d}); got {x.shape}")
    return q, x


def local_similarities(street: StreetSimilarity, query: np.ndarray, cases: np.ndarray) -> np.ndarray:
    """Per case and feature the local similarity, shape ``(n, d)`` (float64).

    >>> st = default_casper().streets[0]
    >>> q = np.array([6, 0, 6, 5, 0, 1, 0.3, 10], np.float32)
    >>> local_similarities(st, q, q[None, :]).tolist() == [[1.0] * 8]
    True
    """
    q, x = _check_rows(street, query, cases)
    out = np.empty(x.shape, dtype=np.float64)
    for i, spec in enumerate(street.feature_specs):
        out[:, i] = spec.measure_obj(float(q[i]), x[:, i])
    return out


def local_into(measure: Any, value: float, column: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``measure``'s local similarities into ``out``: its ``into`` when it has one (built-ins),
    else its ``__call__`` copied in (plugins)."""
    into = getattr(measure, "into", None)
    if into is not None:
        return into(value, column, out)
    out[...] = measure(value, column)
    return out


def similarity_into(street: StreetSimilarity, query: np.ndarray, columns: Sequence[np.ndarray],
                    out: np.ndarray, work: np.ndarray) -> np.ndarray:
    """The global similarity written into ``out`` (float64, contiguous, length n), with
    ``work`` (same shape) as scratch: THE computation; :func:`global_similarity` and retrieval
    both call it, so their values cannot drift apart.

    ``query``: float32 ``(d,)``; ``columns``: per feature the case values (float32, length n,
    any stride). Per weighted feature in column order: local similarity, times the weight,
    added to the running sum; finally divided by the sum of the weights. (The running sum
    starts at the first weighted term itself rather than ``0.0 +`` it: the same bits, since
    the terms are never ``-0.0``.)

    >>> st = default_casper().streets[0]
    >>> q = np.array([6, 0, 6, 5, 0, 1, 0.3, 10], np.float32)
    >>> x = np.stack([q, q]); x[1, 7] = 11
    >>> out, work = np.empty(2), np.empty(2)
    >>> fast = similarity_into(st, q, [x[:, i] for i in range(8)], out, work)
    >>> fast.tolist() == global_similarity(st, q, x).tolist()
    True
    """
    total = 0.0
    for i, spec in enumerate(street.feature_specs):
        w = spec.weight
        if w == 0.0:
            continue
        if total == 0.0:
            np.multiply(local_into(spec.measure_obj, float(query[i]), columns[i], out), w, out=out)
        else:
            np.multiply(local_into(spec.measure_obj, float(query[i]), columns[i], work), w, out=work)
            np.add(out, work, out=out)
        total += w
    return np.divide(out, total, out=out)


def global_similarity(street: StreetSimilarity, query: np.ndarray, cases: np.ndarray) -> np.ndarray:
    """Weighted mean of the local similarities, shape ``(n,)`` (float64).

    Each case's value depends on that row alone (features are summed in column order),
    so any subset of the cases gets bit-identical values: retrieval relies on that, and
    computes them with the same :func:`similarity_into`.

    >>> st = default_casper().streets[0]
    >>> q = np.array([6, 0, 6, 5, 0, 1, 0.3, 10], np.float32)
    >>> other = q.copy(); other[7] = 11            # one rank apart of 168: 1 - 100/(168*360)
    >>> round(float(global_similarity(st, q, np.stack([q, other]))[1]), 6)
    0.998347
    """
    q, x = _check_rows(street, query, cases)
    n = x.shape[0]
    return similarity_into(street, q, [x[:, i] for i in range(x.shape[1])], np.empty(n), np.empty(n))


def load_similarity_file(spec: str | Path, feature_set: str) -> SimilarityConfig:
    """Read and check a similarity TOML before a build: a ``SimilarityConfig`` that covers
    exactly the feature set's (a ``cbr.features`` plugin name) columns; every problem is one
    :class:`ConfigError` naming the user's file."""
    from cbr.plugins import load_feature_set

    path = Path(spec)
    if not path.exists():
        raise ConfigError(f"similarity config {path} does not exist")
    if not path.is_file():
        raise ConfigError(f"similarity config {path} is not a file")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the similarity config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"similarity config {path} is not UTF-8 text") from None
    try:
        config = SimilarityConfig.from_toml(text if "\n" in text or "=" in text else text + "\n")
    except ConfigError as exc:
        message = str(exc).removeprefix("similarity config: ")
        raise ConfigError(f"similarity config {path}: {message}") from None
    fs = load_feature_set(feature_set)
    for s in STREETS:
        have, want = list(config.street(s).features), list(fs.feature_names(s))
        if have != want:
            raise ConfigError(f"similarity config {path}: {s} covers {have}, but feature set "
                              f"{feature_set!r} gives {want}")
    return config
