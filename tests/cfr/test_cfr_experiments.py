"""The study's experiments (issue 10, section 3): the heads-up evaluator of two strategies on
real cards (cbr.cfr.headsup) and the --quick modes of the experiment scripts."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cbr.abstraction import Abstraction
from cbr.cfr.headsup import Contestant, _sequences, deal_boards, play_duplicate, role_values, round_robin
from cbr.cfr.policy import sequence_index
from cbr.cfr.tree import KIND_CHANCE, KIND_FOLD, KIND_SHOWDOWN, build_tree
from cbr.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
GAMES = ("holdem.limit.2p", "nolimit.fcpa")


@pytest.fixture(scope="module")
def trees():
    return {g: build_tree(g) for g in GAMES}


@pytest.fixture(scope="module")
def abstractions():
    return (Abstraction.build("uniform", "hs", n_buckets=2, samples=0),
            Abstraction.build("percentile", "hs2", n_buckets=3, samples=2, seed=5))


def combo(a, b):
    """Colex index of a holding (``evaluator_ext.combo_index``), elementwise."""
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    return hi * (hi - 1) // 2 + lo


def random_contestant(name, tree, abstraction, seed):
    """Every information set gets its own random mix (rows normalised), so a wrong row shows."""
    offset, size = tree.layout(abstraction.n_buckets)
    probs = np.random.default_rng(seed).random(size)
    for node in tree.decision_nodes():
        k = int(tree.n_children[node])
        rows = abstraction.n_buckets ** (int(tree.street[node]) + 1)
        t = probs[offset[node]: offset[node] + rows * k].reshape(rows, k)
        t /= t.sum(axis=1, keepdims=True)
    return Contestant(name, tree, probs, abstraction)


def brute_value(tree, c0, c1, s0, s1, sign, node=0):
    """Role 0's expected chips by plain recursion over the tree (the reference)."""
    kind = int(tree.kind[node])
    stake = float(tree.stake[node])
    if kind == KIND_FOLD:
        return -stake if int(tree.player[node]) == 0 else stake
    if kind == KIND_SHOWDOWN:
        return stake * sign
    kids = tree.children(node)
    if kind == KIND_CHANCE:
        return brute_value(tree, c0, c1, s0, s1, sign, kids[0])
    p = int(tree.player[node])
    c, s = (c0, s0) if p == 0 else (c1, s1)
    k = len(kids)
    row = c.probs[c.offset[node] + s[int(tree.street[node])] * k: c.offset[node] + (s[int(tree.street[node])] + 1) * k]
    return sum(float(row[j]) * brute_value(tree, c0, c1, s0, s1, sign, kid) for j, kid in enumerate(kids))


@pytest.mark.parametrize("game", GAMES)
def test_role_values_match_a_plain_recursion(trees, abstractions, game):
    tree = trees[game]
    a, b = abstractions
    c0, c1 = random_contestant("x", tree, a, 1), random_contestant("y", tree, b, 2)
    rng = np.random.default_rng(3)
    deals = 3
    s0 = np.stack([[sequence_index(rng.integers(0, 2, s + 1), 2) for s in range(4)] for _ in range(deals)])
    s1 = np.stack([[sequence_index(rng.integers(0, 3, s + 1), 3) for s in range(4)] for _ in range(deals)])
    sign = np.array([1, -1, 0])
    got = role_values(tree, c0, c1, s0, s1, sign)
    want = [brute_value(tree, c0, c1, s0[d], s1[d], int(sign[d])) for d in range(deals)]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_bucket_sequences_agree_with_the_bot(abstractions):
    """The evaluator's per-board sequences are the ones the `cfr` policy computes at play time."""
    from cbr.cfr.strategy import SHIPPED_STRATEGY

    shipped = Abstraction.load(SHIPPED_STRATEGY.parent)
    for abstraction in (*abstractions, shipped):
        (board, holes), = deal_boards(7, 1, 4)
        seqs = _sequences(abstraction, board)
        for h in holes:
            hole = (int(h[0]), int(h[1]))
            for street, n in enumerate((0, 3, 4, 5)):
                live = abstraction.bucket_sequence(hole, board[:n])
                assert seqs[int(combo(*hole)), street] == sequence_index(live, abstraction.n_buckets)


@pytest.mark.parametrize("game", GAMES)
def test_zero_sum_and_self_play(trees, abstractions, game):
    tree = trees[game]
    a, b = abstractions
    x, y = random_contestant("x", tree, a, 11), random_contestant("y", tree, b, 12)
    xy = play_duplicate(tree, x, y, seed=4, boards=3, pairs=4)
    yx = play_duplicate(tree, y, x, seed=4, boards=3, pairs=4)
    assert xy.bb100 == pytest.approx(-yx.bb100, abs=1e-9) and xy.ci == pytest.approx(yx.ci)
    assert xy.hands == 2 * 3 * 4 and xy.boards == 3
    assert xy.bb100 != 0.0  # two different strategies: the test would pass vacuously otherwise
    same = play_duplicate(tree, x, random_contestant("x2", tree, a, 11), seed=4, boards=3, pairs=4)
    assert abs(same.bb100) < 1e-9 and abs(same.bb100) <= same.ci


@pytest.mark.parametrize("game,raiser", [("holdem.limit.2p", "rc"), ("nolimit.fcpa", "ac"), ("nolimit.fcpa", "pac")])
def test_a_folding_strategy_loses_the_blinds_exactly(trees, abstractions, game, raiser):
    """Fold whenever facing a bet, against a player who always bets: the small blind (as
    SB) and the big blind (as BB facing the raise), 0.75 bb a hand in duplicate."""
    tree = trees[game]
    folder = Contestant.constant("fold", tree, abstractions[0], "fc")
    bettor = Contestant.constant("bet", tree, abstractions[1], raiser)
    r = play_duplicate(tree, folder, bettor, seed=9, boards=4, pairs=3)
    assert r.bb100 == pytest.approx(-75.0, abs=1e-9) and r.ci == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("game", GAMES)
def test_check_down_pays_the_real_showdown(trees, abstractions, game):
    """Two callers check every street: role 0 wins the big blind exactly when its cards win."""
    from cbr.abstraction.metrics import river_values

    tree = trees[game]
    caller = Contestant.constant("call", tree, abstractions[0], "c")
    (board, holes), = deal_boards(5, 1, 6)
    h0, h1 = (combo(holes[:, k], holes[:, k + 1]) for k in (0, 2))
    v = river_values(board)
    sign = np.sign(v[h0].astype(int) - v[h1].astype(int))
    seqs = _sequences(abstractions[0], board)
    got = role_values(tree, caller, caller, seqs[h0], seqs[h1], sign)
    assert got.tolist() == (sign * tree.game.big_blind).tolist()


def test_bad_input(trees, abstractions):
    limit, fcpa = trees["holdem.limit.2p"], trees["nolimit.fcpa"]
    a = abstractions[0]
    with pytest.raises(ConfigError, match="entries"):
        Contestant("x", limit, np.zeros(5), a)
    x = Contestant.constant("x", limit, a, "c")
    y = Contestant.constant("y", fcpa, a, "c")
    with pytest.raises(ConfigError, match="same betting tree"):
        round_robin([x, y], seed=1, boards=1)
    with pytest.raises(ConfigError):
        play_duplicate(fcpa, x, y, seed=1, boards=1)
    with pytest.raises(ConfigError, match=">= 1"):
        deal_boards(1, 0, 1)
    with pytest.raises(ValueError):  # ConfigError is a ValueError
        Contestant.constant("x", limit, a, "p")


def run_script(name, *args):
    proc = subprocess.run([sys.executable, str(REPO / "experiments" / name), *args], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_table2_quick(tmp_path):
    out = tmp_path / "t2.json"
    run_script("cfr_table2.py", "--quick", "--cache", str(tmp_path / "strategies"), "--out", str(out))
    data = json.loads(out.read_text())
    assert [t["game"] for t in data["tables"]] == ["nolimit.fcpa", "holdem.limit.2p", "holdem.limit.2p"]
    names = {"p_hs", "mm_hs", "mm_hs2", "h_hs", "h_hs2"}
    for t in data["tables"]:
        assert len(t["cells"]) == 10 and {c["a"] for c in t["cells"]} | {c["b"] for c in t["cells"]} == names
        assert all(np.isfinite(c["bb100"]) and c["ci"] >= 0 for c in t["cells"])
    assert set(data["strategies"]) == names and data["settings"]["buckets"] == 2
    # the strategies are reused from the cache on a second run
    again = run_script("cfr_table2.py", "--quick", "--no-match", "--cache", str(tmp_path / "strategies"),
                       "--out", str(tmp_path / "t2b.json"))
    assert "reused" in again.stderr
    first = json.loads(out.read_text())["tables"][0]["cells"]
    assert json.loads((tmp_path / "t2b.json").read_text())["tables"][0]["cells"][0]["bb100"] == first[0]["bb100"]


def test_vs_bots_quick(tmp_path):
    out = tmp_path / "vs.json"
    proc = run_script("cfr_vs_bots.py", "--quick", "--opponents", "call,raise,hs", "--out", str(out))
    data = json.loads(out.read_text())
    assert [c["opponent"] for c in data["cells"]] == ["call", "raise", "hs"]
    assert all(c["hands"] == 4 and c["verdict"] in ("beats", "loses to", "not shown") for c in data["cells"])
    # holdem.limit.2p: the small bet is the big blind, so bb/100 is 100 x sb/h
    assert all(c["bb100"] == pytest.approx(100.0 * c["sb"]) for c in data["cells"])
    assert "| call |" in proc.stdout


def test_aggression_quick(tmp_path):
    """experiments/cfr_aggression.py (issue 37): the teacher against raise and itself, and its table."""
    out = tmp_path / "agg.json"
    teacher = "cfr:strategy=emd_256"   # the teacher as trained (plain cfr re-solves its river), the default self-play bot
    proc = run_script("cfr_aggression.py", "--hands", "40", "--self-hands", "40", "--bots", teacher, "--out", str(out))
    data = json.loads(out.read_text())
    (r,) = data["against_raise"]
    assert r["bot"] == teacher and r["hands"] == 40 and len(r["streets"]) == 4
    assert all(sum(s["actions"].values()) == pytest.approx(1.0) for s in r["streets"] if any(s["actions"].values()))
    assert [s["street"] for s in data["self_play"][teacher]] == [1, 2, 3]
    assert data["table"]["uniform_rows"] == 74_093 and data["table"]["rows"] == 1_632_072
    assert "against raise" in proc.stdout
