"""A two-column feature set: how much is in the pot and what calling costs."""
from __future__ import annotations

import numpy as np


class PotOnlyFeatures:
    """``pot_odds`` and ``small_bets_in_pot`` on every street.

    >>> PotOnlyFeatures().feature_names("flop")
    ['pot_odds', 'small_bets_in_pot']
    """

    name = "pot_only"

    def feature_names(self, street):
        return ["pot_odds", "small_bets_in_pot"]

    def row(self, dp):
        return np.asarray([dp.pot_odds, dp.small_bets_in_pot], dtype=np.float32)

    def rows(self, dps):
        dps = list(dps)
        out = {}
        for s in range(4):
            chosen = [self.row(dp) for dp in dps if dp.street == s]
            out[s] = np.vstack(chosen) if chosen else np.zeros((0, 2), np.float32)
        return out
