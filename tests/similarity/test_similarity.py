"""Similarity as configuration: local measures, the lower bound retrieval relies on, TOML."""
from __future__ import annotations

import math

import numpy as np
import pytest

from cbr.errors import ConfigError
from cbr.similarity import (
    CASPER_FEATURES,
    ExactMatch,
    ExponentialSimilarity,
    FeatureSimilarity,
    LinearSimilarity,
    SimilarityConfig,
    StreetSimilarity,
    default_casper,
    global_similarity,
    local_similarities,
)
from tests.conftest import given, settings, st  # hypothesis, or stand-ins that skip without it

# -- an independent scalar implementation of CASPER's formulas (eq. 1-3) -------------------


def reference_local(spec: dict, a: float, b: float) -> float:
    a, b = float(np.float32(a)), float(np.float32(b))
    if spec["measure"] == "linear":
        return max(0.0, 1.0 - abs(a - b) / (spec["high"] - spec["low"]))
    if spec["measure"] == "exp":
        return math.exp(-spec["k"] * abs(a - b))
    return 1.0 if a == b else 0.0


def reference_global(specs: list[dict], q, x) -> float:
    num = sum(s["weight"] * reference_local(s, q[i], x[i]) for i, s in enumerate(specs))
    return num / sum(s["weight"] for s in specs)


feature_spec = st.fixed_dictionaries({
    "measure": st.sampled_from(["linear", "exp", "exact"]),
    "weight": st.integers(0, 100),
    "low": st.integers(-5, 5),
    "span": st.integers(1, 10),
    "k": st.floats(0.05, 5.0),
})


def build(specs: list[dict]) -> tuple[StreetSimilarity, list[dict]]:
    if all(s["weight"] == 0 for s in specs):
        specs[0]["weight"] = 1
    out, plain = [], []
    for i, s in enumerate(specs):
        params = {"k": s["k"]} if s["measure"] == "exp" else {}
        out.append(FeatureSimilarity(f"f{i}", s["measure"], weight=s["weight"], low=s["low"],
                                     high=s["low"] + s["span"], params=params))
        plain.append({**s, "high": s["low"] + s["span"]})
    return StreetSimilarity("flop", tuple(out)), plain


@settings(max_examples=60, deadline=None)
@given(specs=st.lists(feature_spec, min_size=1, max_size=5), data=st.data())
def test_global_similarity_matches_independent_formula(specs, data):
    street, plain = build(specs)
    d = len(plain)
    vals = st.one_of(st.integers(-8, 12).map(float), st.floats(-8, 12, width=32))
    q = np.array(data.draw(st.lists(vals, min_size=d, max_size=d)), np.float32)
    X = np.array(data.draw(st.lists(st.lists(vals, min_size=d, max_size=d), min_size=1, max_size=8)), np.float32)
    got = global_similarity(street, q, X)
    want = [reference_global(plain, q, row) for row in X]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    loc = local_similarities(street, q, X)
    assert loc.shape == X.shape and (loc >= 0).all() and (loc <= 1).all()


@settings(max_examples=80, deadline=None)
@given(spec=feature_spec, a=st.floats(-20, 20, width=32), b=st.floats(-20, 20, width=32))
def test_lower_bound_slope_bounds_the_dissimilarity(spec, a, b):
    """Bound (B): 1 - s(a, b) >= c * |clip(a) - clip(b)| for any values, inside the domain or not."""
    street, _ = build([spec])
    f = street.feature_specs[0]
    m = f.measure_obj
    s = float(m(a, np.array([b], np.float32))[0])
    c = m.lower_bound_slope()
    gap = abs(float(np.clip(np.float32(a), f.low, f.high)) - float(np.clip(np.float32(b), f.low, f.high)))
    assert 1.0 - s >= c * gap - 1e-12
    assert c > 0


def test_slopes_are_the_derived_ones():
    assert LinearSimilarity(low=0, high=4).lower_bound_slope() == 0.25
    assert ExactMatch(low=1, high=11).lower_bound_slope() == 0.1
    # chord of 1 - exp(-k t) over [0, R]: tight at t = R
    m = ExponentialSimilarity(low=0, high=4, k=1.5)
    assert math.isclose(m.lower_bound_slope() * 4, 1 - math.exp(-6.0))
    assert math.isclose(1 - float(m(0.0, np.array([4.0]))[0]), m.lower_bound_slope() * 4)


def test_measures_values():
    col = np.array([0, 1, 3, 20], np.float32)
    assert LinearSimilarity(low=0, high=4)(1.0, col).tolist() == [0.75, 1.0, 0.5, 0.0]
    np.testing.assert_allclose(ExponentialSimilarity(low=0, high=4, k=2)(1.0, col), np.exp(-2 * np.abs(col - 1.0)))
    assert ExactMatch(low=0, high=4)(3, col).tolist() == [0, 0, 1, 0]


def test_default_casper_layout():
    cfg = default_casper()
    assert cfg.threshold == 0.97 and cfg.fallback_k == 20 and cfg.weighted_triple is False
    pre, *post = cfg.streets
    assert pre.features == CASPER_FEATURES[:8]
    assert all(s.features == CASPER_FEATURES for s in post)
    w = dict(zip(post[0].features, post[0].weights))
    top = sorted(w, key=w.get, reverse=True)[:3]
    assert set(top) == {"hand_strength", "positive_potential", "negative_potential"}
    hs_pre = pre.feature_specs[pre.features.index("hand_strength")]
    hs_post = post[0].feature_specs[post[0].features.index("hand_strength")]
    assert (hs_pre.low, hs_pre.high) == (1, 169) and (hs_post.low, hs_post.high) == (0, 1)
    assert pre.weights.max() == w["hand_strength"]


def test_toml_round_trip_default(tmp_path):
    cfg = default_casper(threshold=0.9, fallback_k=7, weighted_triple=True)
    text = cfg.to_toml()
    assert SimilarityConfig.from_toml(text) == cfg
    path = tmp_path / "similarity.toml"
    cfg.dump(path)
    assert SimilarityConfig.from_toml(path) == cfg
    assert SimilarityConfig.from_toml(str(path)) == cfg


@settings(max_examples=30, deadline=None)
@given(specs=st.lists(feature_spec, min_size=1, max_size=4), thr=st.floats(0, 1), k=st.integers(1, 50),
       weighted=st.booleans())
def test_toml_round_trip_random(specs, thr, k, weighted):
    street, _ = build(specs)
    streets = tuple(StreetSimilarity(name, street.feature_specs) for name in ("preflop", "flop", "turn", "river"))
    cfg = SimilarityConfig(streets=streets, threshold=thr, fallback_k=k, weighted_triple=weighted)
    back = SimilarityConfig.from_toml(cfg.to_toml())
    assert back == cfg


def _toml_with(replace_from: str, replace_to: str) -> str:
    text = default_casper().to_toml()
    assert replace_from in text
    return text.replace(replace_from, replace_to, 1)


@pytest.mark.parametrize("edit, message", [
    (('measure = "exp"', 'measure = "cubic"'), "unknown similarity measure 'cubic'"),
    (("weight = 100.0", "weight = 150.0"), "weight must be within 0..100"),
    (("threshold = 0.97", "threshold = 1.5"), "threshold"),
    (("fallback_k = 20", "fallback_k = 0"), "fallback_k"),
    (("k = 1.5", "k = -1.0"), "'bets_to_call'"),
    (("high = 169.0", "high = 1.0"), "low < high"),
    (('feature = "players_dealt"', 'feature = "players dealt"'), "not a valid identifier"),
    (('feature = "relative_position"', 'feature = "players_dealt"'), "appears twice"),
    (("[[river]]", "[[rivr]]"), "1 unknown key in similarity config ('rivr')"),
    (("k = 1.5", 'k = "fast"'), "parameter 'k' must be a number"),
    (("threshold = 0.97", "threshold = 0.97\nthreshold ="), "not valid TOML"),
])
def test_invalid_configs_name_the_problem(edit, message):
    with pytest.raises(ConfigError) as err:
        SimilarityConfig.from_toml(_toml_with(*edit))
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_invalid_config_names_street_and_feature():
    text = default_casper().to_toml()
    head, tail = text.split("[[flop]]", 1)
    with pytest.raises(ConfigError, match=r"street 'flop': feature 'bets_to_call' \(exp\): decay k"):
        SimilarityConfig.from_toml(head + "[[flop]]" + tail.replace("k = 1.5", "k = 0.0", 1))
    # drop one key from the first flop feature
    head, tail = text.split("[[flop]]", 1)
    tail = tail.replace("low = 2.0\n", "", 1)
    with pytest.raises(ConfigError, match=r"street 'flop'.*'players_dealt'.*missing key 'low'"):
        SimilarityConfig.from_toml(head + "[[flop]]" + tail)


def test_missing_street_and_zero_weights():
    text = default_casper().to_toml().split("[[river]]")[0]
    with pytest.raises(ConfigError, match="street 'river' is missing"):
        SimilarityConfig.from_toml(text)
    with pytest.raises(ConfigError, match="all weights are 0"):
        StreetSimilarity("flop", (FeatureSimilarity("a", "linear", weight=0, low=0, high=1),))
    with pytest.raises(ConfigError, match="does not exist"):
        SimilarityConfig.from_toml("/nonexistent/similarity.toml")


def test_shape_mismatch_is_reported():
    street = default_casper().street("flop")
    with pytest.raises(ValueError, match=r"shape \(12,\)"):
        global_similarity(street, np.zeros(8, np.float32), np.zeros((3, 12), np.float32))
