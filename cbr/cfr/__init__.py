"""Counterfactual regret minimisation over the abstract game (the KTH study).

- :mod:`cbr.cfr.tree`: heads-up betting trees (fixed limit; no-limit fcpa), flattened.
- :mod:`cbr.cfr.translate`: action translation of off-tree no-limit bets.
- :mod:`cbr.cfr.solver`: CFR+ (C extension ``evaluator_ext._cfr``), best response,
  exploitability, checkpoints; :mod:`cbr.cfr.reference`: its pure-numpy reference.
- :mod:`cbr.cfr.strategy`: strategy files beside their abstraction, training runs.
"""
