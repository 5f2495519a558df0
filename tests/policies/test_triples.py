"""Every built-in policy answers "your triple for each of these hidden holdings at this spot"
(:meth:`Policy.triples`) exactly as it answers one holding at a time, legal for the spot, and
asking it changes nothing it answers for its own cards (what an exploitability run relies on)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cbr.exploit.lbr import HOLDINGS
from cbr.game import preset
from cbr.game.state import HandState
from cbr.policies.base import legal_triple
from cbr.policies.spec import policy_from_spec
from tests.conftest import shared_path

SPECS = ["random", "fold", "call", "raise", "hs", "ehs", "poki", "lag", "station", "rock", "poki-wt", "phase3",
         "thesis-net:logs={acpc2p}:player=p2", "simbot:trials=20", "cfr", "cfr:strategy=h_hs2_4", "cbr", "cbr:reuse=max-frequency",
         "cbr:reuse=best-outcome", "cbr:sharpen=2:outcome-weight=0.5", "cbr:odds-guard=1"]
STEPS = {0: 3, 3: 4, 4: 5}


def _spot(actions: tuple[str, ...], board: tuple[int, ...]):
    s = HandState(preset("holdem.limit.2p"), hole_cards=[(51, 50), (47, 46)], hand_id="9")
    for a in actions:
        while s.needs_board:
            s.deal_board(board[len(s.board):STEPS[len(s.board)]])
        s.act(a)
    while s.needs_board:
        s.deal_board(board[len(s.board):STEPS[len(s.board)]])
    return s.decision_point()


SPOTS = [((), ()), (("r",), ()), (("c", "c"), (0, 17, 30)), (("c", "c", "r", "r"), (0, 17, 30)),
         (("c", "c", "c", "c"), (0, 17, 30, 35)), (("c", "c", "c", "c", "r", "c"), (0, 17, 30, 35, 44))]


@pytest.mark.parametrize("spec", SPECS)
def test_batched_triples_are_the_one_at_a_time_triples(spec: str) -> None:
    rng = np.random.default_rng(len(spec))
    if "{acpc2p}" in spec:
        spec = spec.format(acpc2p=shared_path("acpc", "dealer_example_limit") / "2p.limit.h1000.r0.log")
    batch, single = policy_from_spec(spec, seed=3), policy_from_spec(spec, seed=3)
    try:
        for actions, board in SPOTS:
            dp = _spot(actions, board)
            own = single.triple(dp)
            open_h = [h for h in HOLDINGS if not set(h) & set(board)]
            holes = [open_h[i] for i in rng.choice(len(open_h), 25, replace=False)]
            got = batch.triples(dp, holes)
            want = np.array([legal_triple(single.triple(replace(dp, hole=h)), dp.legal) for h in holes])
            assert got.shape == (25, 3)
            assert np.array_equal(got, want), (spec, actions)
            assert np.allclose(got.sum(axis=1), 1.0)
            illegal = [i for i, k in enumerate("fcr") if k not in dp.legal]
            assert np.all(got[:, illegal] == 0.0)
            assert batch.triple(dp) == own == single.triple(dp)      # asking changed nothing
    finally:
        for p in (batch, single):
            close = getattr(p, "close", None)
            if callable(close):
                close()


@pytest.mark.parametrize("spec", ["hs", "ehs", "poki", "lag", "station"])
def test_rule_bots_answer_every_holding_of_a_board_from_one_native_pass(spec: str) -> None:
    """Asked for every holding of a flop or turn, a rule bot takes their HS and potentials
    from one pass over the board (:func:`features.casper.native_hand_features`) and answers
    exactly what it answers one holding at a time with its own evaluator calls."""
    from cbr.policies.rules import RuleBot

    for actions, board in (SPOTS[2], SPOTS[4]):
        dp = _spot(actions, board)
        holes = [h for h in HOLDINGS if not set(h) & set(board)]
        batch, single = policy_from_spec(spec, seed=3), policy_from_spec(spec, seed=3)
        assert isinstance(batch, RuleBot)
        batch._prefill(dp, holes)
        assert len(batch._cache) == len(holes) and all(v[1] is not None for v in batch._cache.values())
        got = batch.triples(dp, holes)
        want = np.array([legal_triple(single.triple(replace(dp, hole=h)), dp.legal) for h in holes])
        assert np.array_equal(got, want), (spec, actions)
        assert batch._cache.keys() == single._cache.keys()
        for key, (hs, pots) in single._cache.items():  # the very same HS (and potentials where used)
            assert batch._cache[key][0] == hs and pots in (None, batch._cache[key][1])


def test_unique_rows_is_numpys_unique_by_rows() -> None:
    """The batch's distinct feature rows: exactly ``np.unique(axis=0, return_inverse=True)``
    (rows in the same order, the same inverse), on rows with many repeats, ties in early
    columns, negative zero and a single row."""
    from cbr.policies.cbr_policy import unique_rows

    rng = np.random.default_rng(5)
    for n, d, values in ((1, 3, 4), (50, 1, 3), (1200, 12, 3), (1200, 12, 1000), (7, 2, 2)):
        rows = rng.integers(0, values, (n, d)).astype(np.float32) / 4
        rows[rng.random((n, d)) < 0.05] *= -1      # -0.0 beside 0.0: equal, as numpy has it
        got, back = unique_rows(rows)
        want, inverse = np.unique(rows, axis=0, return_inverse=True)
        assert np.array_equal(got, want) and np.array_equal(back, inverse.reshape(-1))
        assert np.array_equal(got[back], rows)
