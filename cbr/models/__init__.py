"""Opponent models: the thesis' player model, Poki's weight tables, the ANN action
predictor, and their durable store. The bots that use them live in :mod:`cbr.policies`;
nothing here imports a policy.

- :mod:`cbr.models.player_model`: aggressiveness, tightness and riskiness per opponent,
  overall, recent (last 10 hands) and current (this hand), from seed
  ``itu-adaptive-poker-computer-thesis.txt`` (section 3.1).
- :mod:`cbr.models.tracker`: the player models of everyone at a table, as a bot keeps them.
- :mod:`cbr.models.weights`: Poki's per-opponent weight tables over the 1,326 holdings,
  re-weighted after every observed action (seed ``billings-challenge-of-poker-poki.txt``;
  algorithm 7 of ``waterloo-holdem-bot-report.txt``).
- :mod:`cbr.models.store`: the model store, a DuckDB file written in transactions, filled
  from logs (``cbr players build``).
- :mod:`cbr.models.predictor`: the ANN action predictor (Davidson's 19 context inputs,
  a scikit-learn MLP predicting the (fold, call, raise) triple).
- :mod:`cbr.models.modelfile`: the file format of trained models.
"""
