"""CFR over the abstract game (issue 10, section 2): betting trees against the rules
engine, the C solver against its numpy reference, best response against brute force,
exploitability falling, checkpoints, strategy files, action translation."""
from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from cbr.abstraction.game import BucketGame
from cbr.cfr import reference
from cbr.cfr.solver import IMPLEMENTATION, Solver
from cbr.cfr.testing import random_bucket_game
from cbr.cfr.translate import TranslationError, map_history, pseudo_harmonic
from cbr.cfr.tree import GAMES, KIND_CHANCE, KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN, BettingTree, build_tree, game_def
from cbr.errors import ConfigError
from cbr.game.state import HandState
from tests.conftest import default_sigint

# ---------------------------------------------------------------- betting trees


def _random_walk(tree: BettingTree, rng: random.Random) -> None:
    """Follow one random path through the tree and the rules engine side by side."""
    g = tree.game
    holes = [(51, 47), (0, 5)]  # position 0 holds aces (it wins every showdown below)
    hs = HandState(g, hole_cards=holes)
    board = iter([8, 13, 18, 22, 27])
    street_start = [0.0, 0.0]
    node = 0
    while True:
        kind = int(tree.kind[node])
        assert hs.history == tree.history(node) or kind == KIND_CHANCE
        if kind == KIND_CHANCE:
            assert hs.needs_board
            hs.deal_board([next(board) for _ in range(3 if not hs.board else 1)])
            street_start = [float(x) for x in tree.total[node]]
            node = tree.children(node)[0]
            continue
        if kind == KIND_DECISION:
            p = int(tree.player[node])
            assert hs.to_act == p
            kinds = "".join(sorted({{"p": "r", "a": "r"}.get(e, e) for e in tree.actions(node)}))
            assert kinds == "".join(sorted(hs.legal_actions())), tree.history(node)
            child = rng.choice(tree.children(node))
            letter = tree.edge[child]
            if letter in "pa":
                hs.act("r", amount=float(tree.total[child][p]) - street_start[p])
            elif letter == "r":
                hs.act("r")
            else:
                hs.act(letter)
            node = child
            continue
        while hs.needs_board:  # all-in before the river: the rest of the board, no betting
            hs.deal_board([next(board) for _ in range(3 if not hs.board else 1)])
        assert hs.is_over
        pay = hs.payoffs(evaluate=lambda cards: 1 if tuple(cards[:2]) == holes[0] else 0)
        stake = float(tree.stake[node])
        if kind == KIND_FOLD:
            folder = int(tree.player[node])
            assert pay[folder] == -stake and pay[1 - folder] == stake
        else:
            assert kind == KIND_SHOWDOWN and pay == (stake, -stake)
            assert tuple(tree.total[node]) == (stake, stake)
        return


@pytest.mark.parametrize("game", GAMES)
def test_tree_follows_the_rules_engine(game: str) -> None:
    tree = build_tree(game)
    rng = random.Random(11)
    for _ in range(400):
        _random_walk(tree, rng)


def test_limit_tree_shape() -> None:
    t = build_tree("holdem.limit.2p")
    d = t.kind == KIND_DECISION
    # heads-up limit, raise caps 3 4 4 4: 8 pre-flop betting nodes, 6378 in all (the
    # shape the random walks above check move by move against the rules engine)
    assert int(d.sum()) == 6378
    assert [int((t.street[d] == s).sum()) for s in range(4)] == [8, 70, 630, 5670]
    assert t.info_sets(1) == 6378
    assert t.actions(t.node_of("rrr")) == "fc" and t.actions(t.node_of("rc/rrrr")) == "fc"
    assert float(t.stake[t.node_of("rrrc/rrrrc/rrrrc/rrrrc")]) == 240.0  # most per player: 4 bets of 10 pre-flop and flop, 4 of 20 turn and river


def test_nolimit_tree_fcpa() -> None:
    t = build_tree("nolimit.fcpa")
    g = game_def("nolimit.fcpa")
    assert g.stack == 100 * g.big_blind
    # the small blind's pot raise: call 50, then raise the pot (200) -> 300 in all
    assert [t.history(c) for c in t.children(0)] == ["f", "c", "r300", "r10000"]
    for node in t.decision_nodes():
        edges = t.actions(node)
        assert edges[-1] in "ac" and set(edges) <= set("fcpa")
    ends = [n for n in range(t.n_nodes) if t.kind[n] == KIND_SHOWDOWN and t.street[n] < 3]
    assert ends and all(float(t.stake[n]) == g.stack for n in ends)  # early showdowns are all-ins


# ---------------------------------------------------------------- solver vs reference


@pytest.mark.parametrize("game", GAMES)
def test_native_solver_matches_numpy_reference(game: str) -> None:
    if IMPLEMENTATION != "native":
        pytest.skip("the C extension evaluator_ext._cfr is not built")
    tree = build_tree(game)
    bg = random_bucket_game(2, seed=5)
    native, ref = Solver(tree, bg, native=True), Solver(tree, bg, native=False)
    native.run(2)
    ref.run(2)
    scale = float(np.abs(ref.regret).max())
    assert np.allclose(native.regret, ref.regret, rtol=1e-5, atol=1e-5 * scale)
    assert np.allclose(native.average, ref.average, rtol=1e-5, atol=1e-6 * float(ref.average.max()))
    for player in (0, 1):
        for br in (False, True):
            assert native.value(player, br) == pytest.approx(ref.value(player, br), rel=1e-6, abs=1e-6)
    # zero-sum: the two players' values under the average strategies cancel
    assert native.value(0) + native.value(1) == pytest.approx(0.0, abs=1e-9 * scale)


def test_solver_is_deterministic() -> None:
    tree, bg = build_tree("holdem.limit.2p"), random_bucket_game(2, seed=9)
    a, b = Solver(tree, bg), Solver(tree, bg)
    a.run(7)
    b.run(3)
    b.run(4)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.average, b.average)


@pytest.mark.parametrize("game", GAMES)
def test_exploitability_falls_with_iterations(game: str) -> None:
    s = Solver(build_tree(game), random_bucket_game(2, seed=2))
    curve = [s.exploitability()]
    for n in (5, 20, 80, 200):
        s.run(n - s.iteration)
        curve.append(s.exploitability())
    assert all(x >= 0 for x in curve)
    assert all(b < a for a, b in zip(curve, curve[1:])), curve
    assert curve[-1] < curve[0] / 20


def test_one_bucket_game_is_solved_at_value_zero() -> None:
    """By hand: with one bucket both players always tie, so betting gains nothing and
    folding loses; the equilibrium never folds, the game is worth 0 to each player."""
    g = BucketGame(n_buckets=1, prior=np.ones(1), transitions=(np.ones((1, 1)),) * 3, classes=np.ones((1, 1)),
                   equity=np.full((1, 1), 0.5))
    s = Solver(build_tree("holdem.limit.2p"), g)
    s.run(1000)
    exploit_chips = s.exploitability() * s.tree.game.big_blind / 1000
    assert exploit_chips < 1e-3
    assert abs(s.value(0)) <= 2 * exploit_chips  # |v - v*| <= BR_0 + BR_1, and v* = 0
    root = s.table(0, s.strategy())
    assert root[0, 0] < 1e-3  # the small blind never folds pre-flop


@pytest.mark.parametrize("native", [True, False])
def test_cfr_plus_accumulates_in_float64(native: bool) -> None:
    """Regrets and averages keep additions float32 would round away: on top of 1e8 (where
    float32's spacing is 8) one iteration adds what it adds to zeros, to float64's 1.5e-8."""
    if native and IMPLEMENTATION != "native":
        pytest.skip("the C extension evaluator_ext._cfr is not built")
    tree, bg = build_tree("holdem.limit.2p"), random_bucket_game(2, seed=1)
    plain, lifted = Solver(tree, bg, native=native), Solver(tree, bg, native=native)
    assert plain.regret.dtype == np.float64 and plain.average.dtype == np.float64
    lifted.regret[:] = 1e8   # equal regrets: regret matching is uniform, as from zeros
    lifted.average[:] = 1e8  # the average is never read while training
    plain.run(1)
    lifted.run(1)
    small = (plain.average > 0) & (plain.average < 4)  # float32 would add nothing or 8
    assert small.sum() > 1000
    np.testing.assert_allclose(lifted.average - 1e8, plain.average, rtol=0, atol=3e-8)
    # the first pass (player 0) starts uniform in both: its regrets move by the same amounts
    for node in tree.decision_nodes():
        if int(tree.player[node]) == 0:
            mine, base = plain.table(node, plain.regret), plain.table(node, lifted.regret)
            pos = mine > 0
            np.testing.assert_allclose(base[pos] - 1e8, mine[pos], rtol=0, atol=3e-8)


def test_float32_checkpoints_of_older_runs_resume_widened(tmp_path) -> None:
    tree, bg = build_tree("holdem.limit.2p"), random_bucket_game(2, seed=1)
    s = Solver(tree, bg)
    s.run(5, checkpoint=tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz") as z:  # the layout the float32 solver wrote
        np.savez(tmp_path / "old.npz", regret=z["regret"].astype(np.float32),
                 average=z["average"].astype(np.float32), info=z["info"])
    old = Solver(tree, bg)
    assert old.load_checkpoint(tmp_path / "old.npz")["iteration"] == 5
    assert old.regret.dtype == np.float64 and old.average.dtype == np.float64
    assert np.array_equal(old.average, s.average.astype(np.float32).astype(np.float64))
    old.run(5)
    assert old.iteration == 10 and old.exploitability() < s.exploitability()


# ---------------------------------------------------------------- best response vs brute force


def _toy_tree() -> BettingTree:
    """One street: position 1 checks (showdown), bets 10, or folds; facing a bet position 0
    folds or calls (showdown for 15)."""
    g = game_def("holdem.limit.2p")
    kind = np.array([KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN, KIND_DECISION, KIND_FOLD, KIND_SHOWDOWN], np.int8)
    player = np.array([1, 1, -1, 0, 0, -1], np.int8)
    return BettingTree(
        game=g, kind=kind, player=player, street=np.zeros(6, np.int8),
        child_start=np.array([0, 3, 3, 3, 5, 5], np.int32), n_children=np.array([3, 0, 0, 2, 0, 0], np.int32),
        child_index=np.array([1, 2, 3, 4, 5], np.int32), stake=np.array([0, 5, 5, 0, 5, 15], np.float64),
        total=np.zeros((6, 2)), edge=["", "f", "c", "r", "f", "c"], histories=["", "f", "c", "r", "rf", "rc"])


def test_best_response_beats_every_pure_strategy() -> None:
    tree = _toy_tree()
    bg = random_bucket_game(3, seed=4)
    s = Solver(tree, bg)
    s.run(25)
    avg = s.average.copy()
    for player in (0, 1):
        node = 3 if player == 0 else 0
        k = int(tree.n_children[node])
        br = s.value(player, best_response=True)
        best = -math.inf
        for pure in itertools.product(range(k), repeat=3):  # one action per bucket
            table = avg.copy()
            rows = s.table(node, table)
            rows[:] = 0.0
            rows[np.arange(3), list(pure)] = 1.0
            v = s.value(player, best_response=False, average=table)
            assert v <= br + 1e-9
            best = max(best, v)
        assert best == pytest.approx(br, abs=1e-9)  # a best response is a pure strategy
    assert s.exploitability() >= 0


def test_reference_best_response_on_the_toy_tree() -> None:
    tree, bg = _toy_tree(), random_bucket_game(3, seed=8)
    s = Solver(tree, bg)
    s.run(9)
    for player in (0, 1):
        expect = reference.value(s._tree, s._game, s.average, player, True)
        assert s.value(player, True) == pytest.approx(expect, rel=1e-9)


# ---------------------------------------------------------------- checkpoints


def test_checkpoint_resume_gives_the_same_run(tmp_path) -> None:
    tree, bg = build_tree("holdem.limit.2p"), random_bucket_game(2, seed=1)
    straight = Solver(tree, bg)
    straight.run(8)
    first = Solver(tree, bg)
    first.run(5, checkpoint=tmp_path / "c.npz", checkpoint_every=2)
    resumed = Solver(tree, bg)
    info = resumed.load_checkpoint(tmp_path / "c.npz")
    assert info["iteration"] == 5 == resumed.iteration
    resumed.run(3)
    assert np.array_equal(resumed.regret, straight.regret) and np.array_equal(resumed.average, straight.average)


def test_bad_checkpoints_are_one_line_errors(tmp_path) -> None:
    tree = build_tree("holdem.limit.2p")
    s = Solver(tree, random_bucket_game(2, seed=1))
    s.run(2, checkpoint=tmp_path / "c.npz")
    data = (tmp_path / "c.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    (tmp_path / "junk.npz").write_bytes(b"not a checkpoint")
    other = Solver(tree, random_bucket_game(2, seed=2))
    with pytest.raises(ConfigError, match="corrupted checkpoint"):
        other.load_checkpoint(tmp_path / "cut.npz")
    with pytest.raises(ConfigError, match="corrupted checkpoint"):
        other.load_checkpoint(tmp_path / "junk.npz")
    with pytest.raises(ConfigError, match="another bucket game"):
        other.load_checkpoint(tmp_path / "c.npz")
    with pytest.raises(ConfigError, match="another game"):
        Solver(build_tree("nolimit.fcpa"), random_bucket_game(2, seed=1)).load_checkpoint(tmp_path / "c.npz")
    with pytest.raises(ConfigError, match="no checkpoint"):
        other.load_checkpoint(tmp_path / "missing.npz")


def test_native_rejects_a_broken_tree() -> None:
    if IMPLEMENTATION != "native":
        pytest.skip("the C extension evaluator_ext._cfr is not built")
    from evaluator_ext import _cfr

    s = Solver(_toy_tree(), random_bucket_game(2, seed=1))
    bad = list(s._tree)
    bad[5] = np.array([1, 2, 3, 0, 5], np.int32)  # a child pointing back to the root
    with pytest.raises(ValueError, match="after its parent"):
        _cfr.value(tuple(bad), s._game, s.average, 0, True)
    with pytest.raises(ValueError, match="float64"):
        _cfr.value(s._tree, s._game, s.average.astype(np.float32), 0, True)
    short = list(s._game)
    short[9] = short[9][:-1]
    with pytest.raises(ValueError, match="wrong sizes"):
        _cfr.value(s._tree, tuple(short), s.average, 0, True)


# ---------------------------------------------------------------- action translation


def test_pseudo_harmonic_properties() -> None:
    a, b = 0.5, 2.0
    xs = np.linspace(a, b, 31)
    f = [pseudo_harmonic(x, a, b) for x in xs]
    assert f[0] == 1.0 and f[-1] == 0.0
    assert all(y < x for x, y in zip(f, f[1:]))
    # scale invariance (Ganzfried & Sandholm's axiom): only pot fractions matter
    assert pseudo_harmonic(1.0, 0.5, 2.0) == pytest.approx(0.5)
    with pytest.raises(ConfigError):
        pseudo_harmonic(1.0, 2.0, 0.5)


def test_map_history_on_tree_histories_is_exact() -> None:
    t = build_tree("nolimit.fcpa")
    rng = random.Random(0)
    for node in range(t.n_nodes):
        if t.kind[node] != KIND_CHANCE:
            assert map_history(t, t.history(node), rng) == node
    limit = build_tree("holdem.limit.2p")
    assert map_history(limit, "rc/crr", rng) == limit.node_of("rc/crr")
    with pytest.raises(TranslationError):
        map_history(limit, "rrrr", rng)


def test_off_tree_raise_is_translated_with_the_pseudo_harmonic_frequency() -> None:
    t = build_tree("nolimit.fcpa")
    # after r300c the pot is 600: the tree bets 600 (pot, to 900) or all-in (to 10000)
    root = t.node_of("r300c/")
    pot_child, allin_child = t.children(root)[1:]
    x = (3000 - 300) / 600  # a 4.5-pot bet to 3000
    expect = pseudo_harmonic(x, 1.0, (10000 - 300) / 600)
    rng = random.Random(3)
    n = 4000
    hits = sum(map_history(t, "r300c/r3000", rng) == pot_child for _ in range(n))
    tol = 4 * math.sqrt(expect * (1 - expect) / n)
    assert abs(hits / n - expect) <= tol
    assert map_history(t, "r300c/r9000c", rng) in (t.children(allin_child)[1], t.children(pot_child)[1])


# ---------------------------------------------------------------- abstraction, strategy files, the bot, the CLI

import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from cbr.abstraction import BUCKET_GAME_FILE, Abstraction  # noqa: E402
from cbr.cfr.policy import CFRPolicy, sequence_index  # noqa: E402
from cbr.cfr.strategy import SHIPPED_STRATEGY, load_strategy, train  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def _abstraction_dir(path: Path, kind: str = "uniform", n: int = 2, boards: int = 3) -> Path:
    """A real (small) abstraction directory: thresholds and the estimated bucket game."""
    a = Abstraction.build(kind, "hs", n_buckets=n, samples=0 if kind == "uniform" else 4, seed=0)
    a.save(path)
    a.bucket_game(boards, seed=1).save(path / BUCKET_GAME_FILE)
    return path


@pytest.fixture(scope="module")
def abs2(tmp_path_factory) -> Path:
    return _abstraction_dir(tmp_path_factory.mktemp("abs") / "u2")


def _cbr(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("cbr")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def test_train_writes_a_strategy_beside_its_abstraction(abs2: Path, tmp_path: Path) -> None:
    d = tmp_path / "a"
    shutil.copytree(abs2, d)
    r = _cbr("train", "cfr", "--abstraction", str(d), "--iterations", "6", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["iterations"] == 6 and report["ran"] == 6
    assert Path(report["strategy"]) == d / "cfr.holdem.limit.2p.npz"
    s = load_strategy(d / "cfr.holdem.limit.2p.npz")
    assert s.info["iterations"] == 6 and s.n_buckets == 2
    assert s.info["abstraction_fingerprint"] == Abstraction.load(d).fingerprint
    # the stored exploitability is the quantised strategy's, measured by the solver
    solver = Solver(s.tree, Abstraction.load(d).load_bucket_game(d))
    assert solver.exploitability(s.probs) == pytest.approx(s.info["exploitability_mbb"], rel=1e-6)
    assert report["exploitability_mbb"] > 0


def test_strategy_written_elsewhere_finds_its_abstraction(abs2: Path, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "s.npz"
    out.parent.mkdir()
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", "2", "-o", str(out), "--game", "nolimit.fcpa")
    assert r.returncode == 0, r.stderr
    s = load_strategy(out)
    assert s.tree.name == "nolimit.fcpa" and s.abstraction.fingerprint == Abstraction.load(abs2).fingerprint
    assert "exploitability" in r.stdout and str(out) in r.stdout
    # the bot plays fixed limit: a no-limit strategy is refused in one line
    r = _cbr("match", "--players", f"cfr:strategy={out},call", "--hands", "2")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "fixed-limit" in r.stderr


def test_resume_continues_to_the_same_numbers(abs2: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(abs2, a)
    shutil.copytree(abs2, b)
    assert _cbr("train", "cfr", "-a", str(a), "-n", "9", "--checkpoint-every", "4").returncode == 0
    assert _cbr("train", "cfr", "-a", str(b), "-n", "5").returncode == 0
    r = _cbr("train", "cfr", "-a", str(b), "-n", "9", "--resume", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 4
    with np.load(a / "cfr.holdem.limit.2p.npz") as x, np.load(b / "cfr.holdem.limit.2p.npz") as y:
        assert np.array_equal(x["probs"], y["probs"])


def test_resume_below_the_checkpoints_count_says_nothing_was_trained(abs2: Path, tmp_path: Path) -> None:
    d = tmp_path / "a"
    shutil.copytree(abs2, d)
    assert _cbr("train", "cfr", "-a", str(d), "-n", "6").returncode == 0
    r = _cbr("train", "cfr", "-a", str(d), "-n", "4", "--resume")
    assert r.returncode == 0, r.stderr
    assert "6 iterations (0 in this run" in r.stdout
    assert "note: the checkpoint already has 6 iterations, more than -n 4, so nothing was trained" in r.stderr
    r = _cbr("train", "cfr", "-a", str(d), "-n", "6", "--resume", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["ran"] == 0
    assert "already has 6 iterations, as many as -n 6, so nothing was trained" in r.stderr
    r = _cbr("train", "cfr", "-a", str(d), "-n", "7", "--resume")      # one more: trained, no note
    assert r.returncode == 0 and "(1 in this run" in r.stdout and "nothing was trained" not in r.stderr


def test_interrupted_training_resumes_from_its_last_checkpoint(abs2: Path, tmp_path: Path) -> None:
    d = tmp_path / "a"
    shutil.copytree(abs2, d)
    exe = Path(sys.executable).with_name("cbr")
    ckpt = d / "cfr.holdem.limit.2p.npz.ckpt.npz"
    proc = subprocess.Popen([str(exe), "train", "cfr", "-a", str(d), "-n", "1000000", "--checkpoint-every", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.time() + 60
        while not ckpt.exists() and time.time() < deadline:
            time.sleep(0.05)
        assert ckpt.exists()
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "interrupted"
    with np.load(ckpt) as data:
        saved = json.loads(bytes(data["info"]).decode())["iteration"]
    assert saved >= 3 and saved % 3 == 0
    r = _cbr("train", "cfr", "-a", str(d), "-n", str(saved + 2), "--resume", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 2 and json.loads(r.stdout)["iterations"] == saved + 2


def test_bad_inputs_are_one_line_exit_1(abs2: Path, tmp_path: Path) -> None:
    d = tmp_path / "a"
    shutil.copytree(abs2, d)
    assert _cbr("train", "cfr", "-a", str(d), "-n", "3").returncode == 0
    ckpt = d / "cfr.holdem.limit.2p.npz.ckpt.npz"
    ckpt.write_bytes(ckpt.read_bytes()[:200])
    r = _cbr("train", "cfr", "-a", str(d), "-n", "5", "--resume")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "corrupted checkpoint" in r.stderr
    # a bucket game of another bucket count beside the abstraction
    other = _abstraction_dir(tmp_path / "u3", n=3)
    shutil.copy(other / BUCKET_GAME_FILE, d / BUCKET_GAME_FILE)
    r = _cbr("train", "cfr", "-a", str(d), "-n", "2")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1 and "buckets" in r.stderr
    # a strategy moved beside another abstraction
    shutil.copy(d / "cfr.holdem.limit.2p.npz", other / "moved.npz")
    r = _cbr("match", "--players", f"cfr:strategy={other / 'moved.npz'},call", "--hands", "2")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "does not match its abstraction" in r.stderr
    # an abstraction replaced under a run (its bucket game, its checkpoint no longer match)
    twin = tmp_path / "twin"
    shutil.copytree(abs2, twin)
    assert _cbr("train", "cfr", "-a", str(twin), "-n", "2", "-o", str(twin / "s.npz")).returncode == 0
    (twin / "abstraction.json").write_text(Path(other / "abstraction.json").read_text())
    r = _cbr("train", "cfr", "-a", str(twin), "-n", "3", "-o", str(twin / "s.npz"), "--resume")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    r = _cbr("train", "cfr", "-a", str(d), "-n", "2", "--game", "stud")
    assert r.returncode == 2
    r = _cbr("train", "cfr", "-a", str(tmp_path / "nowhere"), "-n", "2")
    assert r.returncode == 1 and "no such abstraction directory" in r.stderr


def test_policy_plays_the_strategy_row(abs2: Path, tmp_path: Path) -> None:
    d = tmp_path / "a"
    shutil.copytree(abs2, d)
    train("holdem.limit.2p", d, 30)
    path = d / "cfr.holdem.limit.2p.npz"
    s = load_strategy(path)
    bot = CFRPolicy(strategy=str(path), seed=1)
    hs = HandState(game_def("holdem.limit.2p"), hole_cards=[(51, 47), (0, 5)])
    hs.act("r")
    dp = hs.decision_point()  # the big blind (position 0) faces a raise
    seq = sequence_index(s.abstraction.bucket_sequence(dp.hole, dp.board), 2)
    probs = s.action_probs(s.tree.node_of("r"), seq)
    assert bot.triple(dp) == pytest.approx((probs["f"], probs["c"], probs["r"]), abs=1e-6)
    hs.act("c")
    hs.deal_board([8, 13, 18])
    dp = hs.decision_point()
    seq = sequence_index(s.abstraction.bucket_sequence(dp.hole, dp.board), 2)
    assert len(s.abstraction.bucket_sequence(dp.hole, dp.board)) == 2
    probs = s.action_probs(s.tree.node_of("rc/"), seq)
    assert bot.triple(dp) == pytest.approx((0.0, probs["c"], probs["r"]), abs=1e-6)


def test_shipped_strategy_plays_a_match() -> None:
    s = load_strategy(SHIPPED_STRATEGY)
    assert s.tree.name == "holdem.limit.2p" and s.info["iterations"] >= 100
    assert SHIPPED_STRATEGY.stat().st_size < 5_000_000
    r = _cbr("match", "--players", "cfr:strategy=h_hs2_4,ehs", "--hands", "40", "--json")
    assert r.returncode == 0, r.stderr


def test_interrupted_run_keeps_tables_and_count_in_step() -> None:
    tree, bg = build_tree("holdem.limit.2p"), random_bucket_game(2, seed=6)
    s = Solver(tree, bg)
    calls = []

    def progress(n: int) -> None:
        calls.append(n)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s.run(10, progress=progress)
    straight = Solver(tree, bg)
    straight.run(3)
    assert s.iteration == 3
    assert np.array_equal(s.regret, straight.regret) and np.array_equal(s.average, straight.average)


# ---------------------------------------------------------------- the extension: required, private, alone

SRC = REPO / "evaluator_ext" / "src"
_BLOCK_CFR = ("import sys\n"
              "class Block:\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'evaluator_ext._cfr':\n"
              "            raise ImportError('blocked for the test')\n"
              "sys.meta_path.insert(0, Block())\n")


def test_require_native_fails_without_the_cfr_extension() -> None:
    env = dict(os.environ, CBR_REQUIRE_NATIVE="1", PYTHONPATH=str(REPO))
    r = subprocess.run([sys.executable, "-c", _BLOCK_CFR + "import evaluator_ext"], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and "evaluator_ext._cfr" in r.stderr
    env["CBR_REQUIRE_NATIVE"] = "0"
    code = (_BLOCK_CFR + "import evaluator_ext, cbr.cfr.solver as s\n"
            "print(evaluator_ext.CFR_IMPLEMENTATION, s.IMPLEMENTATION)\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["reference", "reference"]
    if os.environ.get("CBR_REQUIRE_NATIVE") == "1":
        import evaluator_ext

        assert evaluator_ext.CFR_IMPLEMENTATION == "native" and IMPLEMENTATION == "native"


def _c_array(ctype: str, name: str, values) -> str:
    body = ", ".join(repr(float(v)) if ctype == "double" else str(int(v)) for v in np.ravel(values))
    return f"static const {ctype} {name}[] = {{{body}}};\n"


def test_kernels_compiled_alone_give_the_solver_s_numbers(tmp_path: Path) -> None:
    """cfr_kernels.c without Python.h, driven from C on the toy tree: the same values."""
    from tests.conftest import require_program

    cc = require_program("cc", "gcc", "clang")
    tree, bg = _toy_tree(), random_bucket_game(2, seed=3)
    s = Solver(tree, bg)
    g = s._game
    driver = tmp_path / "driver.c"
    driver.write_text(
        '#include <stdio.h>\n#include <stdlib.h>\n#include "cfr_kernels.h"\n'
        + _c_array("int8_t", "kind", tree.kind) + _c_array("int8_t", "player", tree.player)
        + _c_array("int8_t", "street", tree.street) + _c_array("int32_t", "cstart", tree.child_start)
        + _c_array("int32_t", "nch", tree.n_children) + _c_array("int32_t", "cidx", tree.child_index)
        + _c_array("double", "stake", tree.stake) + _c_array("int64_t", "offset", s.offset)
        + "".join(_c_array("double", f"a{i}", g[i]) for i in range(1, 10))
        + f"int main(void) {{\n cfr_game gm = {{{tree.n_nodes}, kind, player, street, cstart, nch, cidx, stake, offset,"
        + f" {g[0]}, {bg.n_classes}, {{2, 4, 8, 16}}, a1, {{a2, a3, a4}}, {{a5, a6, a7, a8}}, a9}};\n"
        + f" double *r = calloc({s.size}, sizeof(double)), *avg = calloc({s.size}, sizeof(double));\n"
        + " double *ws = malloc(sizeof(double) * (cfr_workspace_size(&gm) + 64));\n"
        + " for (int t = 1; t <= 7; t++) cfr_iterate(&gm, r, avg, t, ws);\n"
        + " for (int p = 0; p < 2; p++) for (int br = 0; br < 2; br++) {\n"
        + "  double v; cfr_value(&gm, avg, p, br, ws, &v); printf(\"%.12g\\n\", v); }\n"
        + " free(r); free(avg); free(ws); return 0;\n}\n")
    exe = tmp_path / "driver"
    subprocess.run([cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{SRC}", str(driver),
                    str(SRC / "cfr_kernels.c"), "-o", str(exe)], check=True, capture_output=True, text=True)
    out = [float(x) for x in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]
    s.run(7)
    expect = [s.value(p, br) for p in (0, 1) for br in (False, True)]
    assert out == pytest.approx(expect, rel=1e-9, abs=1e-12)
