"""Opponent models: the thesis' player model, Poki's weight tables, and their durable store.

- :mod:`cbr.models.player_model`: aggressiveness, tightness and riskiness per opponent,
  overall, recent (last 10 hands) and current (this hand), from seed
  ``itu-adaptive-poker-computer-thesis.txt`` (section 3.1).
- :mod:`cbr.models.weights`: Poki's per-opponent weight tables over the 1,326 holdings,
  re-weighted after every observed action (seed ``billings-challenge-of-poker-poki.txt``;
  algorithm 7 of ``waterloo-holdem-bot-report.txt``).
- :mod:`cbr.models.store`: the model store, a DuckDB file written in transactions.
- :mod:`cbr.models.poki_wt`: the ``poki-wt`` bot (a ``cbr.policies`` plugin).
- :mod:`cbr.models.predictor`: the ANN action predictor (Davidson's 19 context inputs,
  a scikit-learn MLP predicting the (fold, call, raise) triple).

Nothing here is imported by ``cbr.policies``: the bot lives in this package, so the
package graph stays acyclic (``cbr.models`` -> ``cbr.policies``).
"""
