"""Opponent models: components that learn how players act, beside the case base.

- :mod:`cbr.models.predictor`: the ANN action predictor (Davidson's 19 context inputs,
  a scikit-learn MLP predicting the (fold, call, raise) triple).
"""
