"""Similarity: local measures per feature (:mod:`~cbr.similarity.measures`) and their
configuration, weights and the global similarity (:mod:`~cbr.similarity.config`).

>>> cfg = default_casper()
>>> cfg.street("flop").feature_specs[0].measure_obj.name
'linear'
"""
from __future__ import annotations

from cbr.similarity.config import (
    CASPER_FEATURES,
    FeatureSimilarity,
    SimilarityConfig,
    StreetSimilarity,
    check_min_cases,
    default_casper,
    default_for,
    default_sartre,
    global_similarity,
    load_similarity_file,
    local_into,
    local_similarities,
    opponent_similarity,
    similarity_into,
)
from cbr.similarity.measures import (
    BUILTIN_MEASURES,
    EquitySimilarity,
    ExactMatch,
    ExponentialSimilarity,
    LinearSimilarity,
    LocalMeasure,
    measure_class,
)

__all__ = [
    # measures
    "LocalMeasure", "LinearSimilarity", "ExponentialSimilarity", "ExactMatch", "EquitySimilarity", "BUILTIN_MEASURES",
    "measure_class",
    # configuration
    "FeatureSimilarity", "StreetSimilarity", "SimilarityConfig", "CASPER_FEATURES", "default_casper",
    "default_sartre", "default_for", "local_similarities", "global_similarity", "similarity_into", "local_into",
    "load_similarity_file", "check_min_cases", "opponent_similarity",
]
