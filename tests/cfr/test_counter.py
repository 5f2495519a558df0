"""Issue 36, part 1: robust counter-strategies (restricted Nash / data-biased responses) by
external-sampling MCCFR in C (evaluator_ext/src/rnr_kernels.c), to opponent models counted
from logs, played by the `cfr` bot.

Cross-checks: with p = 0 the counter-strategy solver gives plain MCCFR's tables bit for bit;
with p = 1 against a fixed model it approaches a best response (its exact value against the
model beats the p = 0 strategy's); a model counted from a log holds exactly the log's
decisions at the nodes and buckets the tree and the abstraction give them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_native

require_native(module_level=True)

from cbr.abstraction import distribution as D  # noqa: E402
from cbr.cfr.counter import CounterTrainer, OpponentModel, count_decisions  # noqa: E402
from cbr.cfr.mccfr import STRATEGY_FILE, MCCFRTrainer, load_imperfect_strategy  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.cfr.tree import build_tree  # noqa: E402
from cbr.errors import ConfigError  # noqa: E402

COUNTERS = ("raise", "call", "station", "lag", "raise_mild")


@pytest.fixture(scope="module")
def shipped() -> D.DistributionAbstraction:
    return D.DistributionAbstraction.load(SHIPPED_TEACHER)


@pytest.fixture(scope="module")
def coarse() -> D.DistributionAbstraction:
    """169 pre-flop classes, one flop and one turn bucket, two river buckets (HS below or above
    one half): a game small enough to converge in seconds. Every flop and turn table entry is
    bucket 0, so the solver's raw tables are zeros (allocated lazily: no gigabyte to fill)."""
    a = D.DistributionAbstraction((169, 1, 1, 2), 30, np.zeros((1, 30), np.float32), np.zeros((1, 30), np.float32),
                                  np.array([0.5]), np.zeros((1755, 1326), np.uint16),
                                  np.zeros((16432, 1326), np.uint16), {"format": D.ABSTRACTION_FORMAT})
    a.__dict__["_raw_tables"] = ((169, 1, 1, 2), D.PREFLOP_CLASS, np.zeros(22100 * 1326, np.uint16),
                                 np.zeros(270725 * 1326, np.uint16), np.array([0.5]))
    return a


def _calling_station(tree, n_buckets) -> OpponentModel:
    """A model that checks or calls at every row (what always-call's log would count)."""
    m = OpponentModel(tree, n_buckets)
    for node in tree.decision_nodes():
        k = int(tree.n_children[node])
        j = [tree.edge[c] for c in tree.children(node)].index("c")
        rows = n_buckets[int(tree.street[node])]
        m.counts[int(m.offset[node]) + np.arange(rows) * k + j] = 5
    return m


def test_p_zero_gives_plain_mccfr_tables_bit_for_bit(shipped) -> None:
    """Also a data-biased response whose confidence is 0 everywhere: the model never acts."""
    options = dict(seed=7, threads=1, discount_every=10_000, discount_blocks=2)
    plain = MCCFRTrainer(shipped, **options)
    plain.run(25_000, chunk=10_000)
    model = _calling_station(plain.tree, shipped.n_buckets)   # p = 0: never used
    counter = CounterTrainer(shipped, model, p=0.0, **options)
    counter.run(25_000, chunk=10_000)
    assert np.abs(plain.regret).sum() > 0
    for mine in (counter.regret, counter.opp_regret):
        assert np.array_equal(mine, plain.regret)
    for mine in (counter.avg, counter.opp_avg):
        assert np.array_equal(mine, plain.avg)
    unsure = CounterTrainer(shipped, model, p=1.0, p_max=0.0, **options)   # a data-biased model trusted nowhere
    unsure.run(25_000, chunk=10_000)
    assert np.array_equal(unsure.regret, plain.regret) and np.array_equal(unsure.avg, plain.avg)
    restricted, free = CounterTrainer(shipped, model, p=0.5, **options), MCCFRTrainer(shipped, **options)
    restricted.run(5_000)
    free.run(5_000)
    assert not np.array_equal(restricted.regret, free.regret)


def test_p_one_approaches_a_best_response_to_the_model(coarse) -> None:
    """Against a fixed calling station, the p = 1 counter-strategy's exact value (both seats,
    the same 300 deals) beats the p = 0 strategy's (an equilibrium's) by a wide margin, and
    p = 0.5 lies in between; p = 1 bets its strong hands and never folds to a station that
    never bets."""
    tree = build_tree("holdem.limit.2p")
    model = _calling_station(tree, coarse.n_buckets)
    values = {}
    for p in (0.0, 0.5, 1.0):
        t = CounterTrainer(coarse, model, p=p, seed=3, threads=1, discount_every=20_000, discount_blocks=3)
        t.run(60_000)
        values[p] = t.model_value(300, seed=11)
    (v0, se0), (vh, _), (v1, se1) = values[0.0], values[0.5], values[1.0]
    assert v1 - v0 > 3 * (se0 + se1), values
    assert v0 < vh < v1, values
    assert v0 > 0, values    # an equilibrium also wins from a player who never raises


def test_a_model_counts_what_the_log_shows(shipped) -> None:
    from cbr.logs.acpc import loads
    from evaluator_ext import parse_cards

    text = ('# game: {"name":"holdem.limit.2p","n_players":2,"blinds":[10.0,5.0],"small_bet":10.0,'
            '"big_bet":20.0,"raise_cap":[3,4,4,4],"first_to_act":[1,0,0,0],"betting":"limit","stack":null,'
            '"antes":[0.0,0.0]}\n'
            "STATE:0:rrrc/crf:AsTc|6h7c/7d5d6d:-40|40:cfr|raise\n"
            "STATE:3:f:Ts2s|3sTh:5|-5:raise|cfr\n")
    tree = build_tree("holdem.limit.2p")
    m = count_decisions(loads(text), "raise", shipped, tree=tree)
    hole, flop = tuple(parse_cards("6h7c")), tuple(parse_cards("7d5d6d"))
    pre, on_flop = shipped.buckets(hole, ())[0], shipped.buckets(hole, flop)[1]
    want = np.zeros(m.size)
    for history, bucket in (("", pre), ("rr", pre), ("rrrc/c", on_flop)):   # its three raises
        node = tree.node_of(history)
        k = int(tree.n_children[node])
        want[int(m.offset[node]) + bucket * k + tree.actions(node).index("r")] = 1
    assert np.array_equal(m.counts, want)
    cfr = count_decisions(loads(text), "cfr", shipped, tree=tree)   # rr, c; c, f; and the fold of hand 3
    assert cfr.counts.sum() == 5
    row = int(m.offset[tree.node_of("rr")]) + pre * 3
    assert m.probs()[row: row + 3].tolist() == [0.0, 0.0, 1.0]
    assert m.confidence(p_max=0.8, c=1.0)[row] == pytest.approx(0.4)
    other = int(m.offset[tree.node_of("rr")])   # bucket 0 never seen: the node's frequencies
    assert m.probs()[other: other + 3].tolist() == [0.0, 0.0, 1.0]


def test_models_save_and_load_and_refuse_another_tree(tmp_path, shipped) -> None:
    tree = build_tree("holdem.limit.2p")
    m = _calling_station(tree, shipped.n_buckets)
    m.save(tmp_path / "model.npz")
    back = OpponentModel.load(tmp_path / "model.npz")
    assert np.array_equal(back.counts, m.counts)
    with pytest.raises(ConfigError, match="another betting tree"):
        OpponentModel.load(tmp_path / "model.npz", tree=build_tree("nolimit.fcpa"))
    with pytest.raises(ConfigError, match="another tree or abstraction"):
        CounterTrainer(shipped, OpponentModel(tree, (169, 1, 1, 2)))
    with pytest.raises(ConfigError, match="probability"):
        CounterTrainer(shipped, m, p=1.5)


def test_a_counter_strategy_folder_uses_its_siblings_abstraction(tmp_path, shipped) -> None:
    """What the recipe writes: strategy.npz alone, naming emd_256 beside it; the cfr bot plays it."""
    from cbr.play.match import run_match

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    folder = tmp_path / "counter_test"
    folder.mkdir()
    t = CounterTrainer(shipped, _calling_station(build_tree("holdem.limit.2p"), shipped.n_buckets), p=0.5,
                       seed=1, threads=1, name="test")
    t.run(2_000)
    t.save_strategy(folder / STRATEGY_FILE)
    s = load_imperfect_strategy(folder)
    assert s.info["counter"]["p"] == 0.5 and s.info["abstraction_folder"] == "emd_256"
    r = run_match([f"cfr:strategy={folder}", "call"], 40, duplicate=True, seed=1)
    assert r.hands == 40
    (tmp_path / "emd_256").unlink()   # the sibling gone: said, not guessed
    with pytest.raises(ConfigError, match="no abstraction"):
        load_imperfect_strategy(folder)


@pytest.mark.parametrize("name", COUNTERS)
def test_the_shipped_counter_strategies_are_small_and_load(name) -> None:
    from cbr.cfr.policy import resolve_strategy

    folder = resolve_strategy(f"counter_{name}")
    assert folder == SHIPPED_TEACHER.parent / f"counter_{name}"
    size = sum(f.stat().st_size for f in Path(folder).iterdir())
    assert size < 5_000_000, size
    s = load_imperfect_strategy(folder)
    assert s.info["counter"]["name"] == name and s.info["iterations"] >= 1_000_000
    assert OpponentModel.load(Path(folder) / "model.npz").counts.sum() > 10_000


def test_the_native_counter_solver_refuses_bad_arguments(coarse) -> None:
    """Wrong lengths, dtypes, read-only tables and a p outside [0, 1]: ValueError/TypeError, no crash."""
    t = CounterTrainer(coarse, _calling_station(build_tree("holdem.limit.2p"), coarse.n_buckets), p=0.5)
    run = D.native_module().run_rnr
    ok = [t.regret, t.avg, t.opp_regret, t.opp_avg, t.model_probs, t.model_conf]
    run(t._tree, t._tables, *ok, 0.5, 0, 10, 1, 1)
    bad = [(2, np.zeros(5, np.float64), ValueError, "differs in length"),
           (2, t.opp_regret.astype(np.float32), ValueError, "wrong dtype"),       # the tables are float64
           (4, t.model_probs.astype(np.float64), ValueError, "wrong dtype"),      # the model float32
           (0, np.zeros(t.size, np.float64)[::-1], TypeError, "C-contiguous"),
           (1, np.frombuffer(np.zeros(t.size, np.float64).tobytes(), np.float64), TypeError, "writable")]
    for i, arr, exc, msg in bad:
        args = list(ok)
        args[i] = arr
        with pytest.raises(exc, match=msg):
            run(t._tree, t._tables, *args, 0.5, 0, 10, 1, 1)
    for p in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="p in") as e:
            run(t._tree, t._tables, *ok, p, 0, 10, 1, 1)
        assert e.value.args[0].endswith(f"got 10, 1 and {p:g}")   # the numbers, not a bare %g
    with pytest.raises(ValueError, match="got 10, 0 and 0.5"):
        run(t._tree, t._tables, *ok, 0.5, 0, 10, 1, 0)
    with pytest.raises(ValueError, match="outside the arrays"):
        short = [a[: t.size - 1].copy() for a in ok]
        run(t._tree, t._tables, *short, 0.5, 0, 10, 1, 1)
    for done, exc, msg in [(np.zeros(1, np.int32), ValueError, "done has the wrong dtype"),
                           (np.zeros(0, np.int64), ValueError, "done must hold one int64"),
                           (np.zeros(4, np.int64)[::2], TypeError, "done must be a C-contiguous")]:
        with pytest.raises(exc, match=msg):
            run(t._tree, t._tables, *ok, 0.5, 0, 10, 1, 1, done)


def test_the_recipe_builds_a_counter_strategy_from_the_teachers_log(tmp_path, shipped) -> None:
    """``python -m casebases.build_counters`` end to end, small: the teacher's log against the
    target, the target's decisions counted (the seat labelled by its spec, beside the teacher's
    ``cfr/strategy=emd_256``: the recipe refused its own log when the teacher's label changed),
    a strategy trained and written; a log with another opponent is refused by name."""
    from casebases import build_counters
    from cbr.logs.acpc import loads

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    logs = tmp_path / "logs"
    argv = ["--only", "raise", "--hands", "20", "--iterations", "2000", "--threads", "1", "--logs", str(logs),
            "--out", str(tmp_path)]
    assert build_counters.main(argv) == 0
    (log,) = logs.iterdir()
    records = loads(log.read_text(encoding="utf-8"))
    assert {n for r in records for n in r.players} == {"cfr/strategy=emd_256", "raise"}
    model = OpponentModel.load(tmp_path / "counter_raise" / "model.npz")
    raises = sum(1 for r in records for a in r.actions if r.players[a.position] == "raise")
    assert int(model.counts.sum()) == raises > 0
    s = load_imperfect_strategy(tmp_path / "counter_raise")
    assert s.info["counter"]["name"] == "raise" and s.info["iterations"] == 2000
    log.write_text(log.read_text(encoding="utf-8").replace(":raise", ":call").replace("|raise", "|call"),
                   encoding="utf-8")
    with pytest.raises(SystemExit, match="expected the teacher and raise"):
        build_counters.main(argv)


def _installed_copy(tmp_path: Path) -> Path:
    """The recipes as ``pip install .`` puts them: the ``casebases`` package (its modules, the
    shipped strategies) in a site-packages folder without the checkout's ``pyproject.toml``."""
    import shutil

    repo = Path(__file__).resolve().parents[2]
    site = tmp_path / "site-packages"
    (site / "casebases").mkdir(parents=True)
    for module in (repo / "casebases").glob("*.py"):
        shutil.copy(module, site / "casebases" / module.name)
    (site / "casebases" / "cfr").symlink_to(repo / "casebases" / "cfr", target_is_directory=True)
    return site


def test_a_recipe_of_an_installed_package_writes_under_the_current_folder(tmp_path) -> None:
    """After ``pip install .``, ``python -m casebases.build_counters`` run outside the checkout
    wrote into site-packages (``site-packages/.cfr-runs/counters/``): the default output is
    relative to the current folder, never the installed package."""
    import os
    import subprocess
    import sys

    site = _installed_copy(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(Path(__file__).resolve().parents[2])])}
    run = subprocess.run([sys.executable, "-m", "casebases.build_counters", "--only", "raise", "--hands", "20",
                          "--iterations", "2000", "--logs", str(tmp_path / "logs")], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"-> {work / '.cfr-runs' / 'counters' / 'counter_raise'}" in run.stderr, run.stderr
    assert (work / ".cfr-runs" / "counters" / "counter_raise" / "strategy.npz").is_file()
    assert not (tmp_path / ".cfr-runs").exists() and not (site / ".cfr-runs").exists()
    probe = subprocess.run([sys.executable, "-c", "import casebases, casebases.build_cfr_big, sys; "
                            "print(casebases.__file__); print(casebases.output_root())"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert probe == [str(site / "casebases" / "__init__.py"), str(work)]  # the other recipes' root too


def test_an_extension_not_built_in_a_checkout_says_to_install_it_editable(tmp_path) -> None:
    """Run in a source checkout after ``pip install .``, the checkout's ``evaluator_ext`` (first
    on ``sys.path``, its extensions not built) shadows the installed one: the error said only
    that ``_mccfr`` is not built. It names the checkout's folder and the editable install."""
    import os
    import shutil
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    checkout = tmp_path / "checkout"
    (checkout / "evaluator_ext").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text((repo / "pyproject.toml").read_text())
    for module in (repo / "evaluator_ext").glob("*.py"):  # the sources only: nothing built
        shutil.copy(module, checkout / "evaluator_ext" / module.name)
    env = {k: v for k, v in os.environ.items() if k not in ("CBR_REQUIRE_NATIVE", "CBR_STRICT")}
    env["PYTHONPATH"] = str(repo)  # the engine (cbr) as installed; evaluator_ext from the current folder
    # (not the editable install's finder: it would find the checkout's missing modules in this worktree)
    run = subprocess.run([sys.executable, "-c", "import sys; sys.meta_path[:] = [f for f in sys.meta_path if "
                          "'Editable' not in getattr(f, '__name__', type(f).__name__)]; import evaluator_ext; "
                          "from cbr.abstraction.distribution import native_module\n"
                          "try:\n native_module()\nexcept Exception as e:\n print(evaluator_ext.__file__); print(e)"],
                         cwd=checkout, env=env, capture_output=True, text=True, check=True)
    where, message = run.stdout.splitlines()
    assert where == str(checkout / "evaluator_ext" / "__init__.py"), run.stdout
    assert message.startswith("the MCCFR extension evaluator_ext._mccfr is not built"), message
    assert f"source checkout's evaluator_ext ({checkout / 'evaluator_ext'}" in message, message
    assert message.endswith("build it in place with the editable install: pip install -e ."), message


def test_the_raise_frontier_experiment_trains_and_measures_each_p(tmp_path) -> None:
    """experiments/raise_frontier.py, tiny: each p trained by the recipe (the control, p = 0,
    too), every opponent played, the control head to head; a second run reuses the runs."""
    import json
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[2] / "experiments" / "raise_frontier.py"
    out = tmp_path / "frontier.json"
    argv = [sys.executable, str(script), "--p", "0", "0.5", "--iterations", "2000", "--model-hands", "20",
            "--hands", "20", "--work", str(tmp_path / "work"), "--out", str(out)]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    data = json.loads(out.read_text())
    assert [r["p"] for r in data["rows"]] == [0.0, 0.5]
    control, mild = data["rows"]
    assert "control" not in control["against"] and "control" in mild["against"]
    assert {"raise", "call", "lag", "random", "ehs", "cfr:strategy=emd_256"} <= set(mild["against"])
    assert all(r["hands"] == 20 for r in mild["against"].values())
    assert (tmp_path / "work" / "p0.5-2000-m20" / "counter_raise" / "strategy.npz").exists()   # keyed by the model too
    assert "| 0.5 |" in first.stdout and "training p = 0.5" in first.stderr
    again = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    assert "training" not in again.stderr and again.stderr.count("reusing") == 2
    def results(rows):
        return [(r["p"], sorted((k, v["sb_per_hand"]) for k, v in r["against"].items())) for r in rows]

    assert results(json.loads(out.read_text())["rows"]) == results(data["rows"])   # the same runs, the same deals


@pytest.mark.parametrize("argv, message", [
    (["--only", "bogus"], "unknown counter-strategies"),
    (["--only", "raise,,call"], "argument --only: an entry of 'raise,,call' is empty"),   # started the whole default run
    (["--iterations", "-5"], "--iterations: -5 is out of range"),
    (["--minutes", "0"], "--minutes: 0 is out of range"),
    (["--threads", "100"], "--threads: 100 is out of range"),
    (["--p", "2"], "--p: 2 is out of range"),
    (["--minutes", "1", "--iterations", "5"], "not both"),
])
def test_the_recipe_refuses_bad_values_before_any_work(tmp_path, capsys, argv, message) -> None:
    """A usage error (exit 2, one line) before a log is played or a strategy written: a zero
    budget used to write an untrained strategy over the shipped one."""
    from casebases import build_counters

    with pytest.raises(SystemExit) as e:
        build_counters.main([*argv, "--logs", str(tmp_path / "logs"), "--out", str(tmp_path)])
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "logs").exists()


def test_the_recipe_obeys_minutes_for_a_counter_with_a_shipped_budget(tmp_path, shipped) -> None:
    """``--minutes`` wins over the shipped iteration budget (raise_mild: 40 million), and a
    missing abstraction in ``--out`` is one line that says how to link it."""
    from casebases import build_counters

    with pytest.raises(SystemExit, match="ln -s") as e:
        build_counters.main(["--only", "raise_mild", "--out", str(tmp_path), "--logs", str(tmp_path / "logs")])
    assert "mkdir" not in str(e.value)                  # the folder is there: the link is all it lacks
    missing = tmp_path / "new" / "counters"
    with pytest.raises(SystemExit, match=f"shipped one: mkdir -p {missing} && ln -s "):   # ln -s alone failed
        build_counters.main(["--only", "raise_mild", "--out", str(missing), "--logs", str(tmp_path / "logs")])
    assert not (tmp_path / "new").exists()
    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    assert build_counters.main(["--only", "raise_mild", "--hands", "20", "--minutes", "0.01", "--logs",
                                str(tmp_path / "logs"), "--out", str(tmp_path)]) == 0
    s = load_imperfect_strategy(tmp_path / "counter_raise_mild")
    assert 0 < s.info["iterations"] < build_counters.SHIPPED_ITERATIONS["raise_mild"]


def _interrupt_after(seconds: float):
    """A timer that sends this process SIGINT (Ctrl-C) in ``seconds``, started."""
    import os
    import signal
    import threading

    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_the_native_counter_solver_looks_for_signals_between_slices(coarse) -> None:
    """Ctrl-C during one long ``run_rnr`` call ends it after the slice under way (the call ran
    to its end first: 200,000 iterations a chunk were seconds of deafness in the recipe); the
    finished iterations are counted in ``done``; a handler that raises nothing lets it finish."""
    import signal
    import time

    t = CounterTrainer(coarse, _calling_station(build_tree("holdem.limit.2p"), coarse.n_buckets), p=0.5, threads=1)
    run = D.native_module().run_rnr
    args = (t._tree, t._tables, t.regret, t.avg, t.opp_regret, t.opp_avg, t.model_probs, t.model_conf, 0.5, 0)
    huge = 1_000_000                                    # half a minute in one call here
    done = np.zeros(1, np.int64)
    timer = _interrupt_after(1.0)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(*args, huge, 1, 1, done)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 20                # a correctness bound, not a timing one
    assert 0 < done[0] < huge and done[0] % 1024 == 0   # whole slices (1,024 iterations a thread)
    seen: list[int] = []
    before = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        timer = _interrupt_after(0.5)
        assert run(*args, 60_000, 1, 1, done) == 60_000 == done[0]   # about 2 s
        timer.join()
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen == [signal.SIGINT]


def test_a_counter_run_stopped_by_ctrl_c_keeps_its_iterations_and_resumes_bit_for_bit(coarse) -> None:
    """The iterations an interrupted chunk finished are in the tables and in ``iterations``;
    with one thread the run continued from there is an unbroken run's, bit for bit."""
    model = _calling_station(build_tree("holdem.limit.2p"), coarse.n_buckets)

    def trainer() -> CounterTrainer:
        return CounterTrainer(coarse, model, p=0.5, seed=3, threads=1, discount_blocks=0)

    t = trainer()
    timer = _interrupt_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            t.run(1_000_000, chunk=1_000_000)           # one call into C, half a minute here
    finally:
        timer.cancel()
    assert 0 < t.iterations < 1_000_000
    total = t.iterations + 2_500
    t.run(total - t.iterations)
    unbroken = trainer()
    unbroken.run(total)
    assert t.iterations == unbroken.iterations == total
    for name in ("regret", "avg", "opp_regret", "opp_avg"):
        assert np.array_equal(getattr(t, name), getattr(unbroken, name)), name


def test_ctrl_c_while_the_recipe_trains_stops_it_and_writes_nothing(tmp_path, shipped) -> None:
    """A real SIGINT to ``python -m casebases.build_counters`` while the counter-strategy trains:
    exit 130 with one line, nothing written for it (no folder, no temp file), the log whole. The
    stop used to wait for the C call under way (seconds; see the test of the slices above)."""
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import default_sigint

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    logs = tmp_path / "logs"
    proc = subprocess.Popen([sys.executable, "-m", "casebases.build_counters", "--only", "raise", "--hands", "20",
                             "--iterations", "100000000", "--threads", "1", "--logs", str(logs), "--out",
                             str(tmp_path)], cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        first = proc.stderr.readline()                  # the teacher plays raise
        assert first.startswith("raise: the teacher plays raise, 20 duplicate hands"), first
        first = proc.stderr.readline()                  # the model is counted: training starts now
        assert "decisions of raise counted" in first, first
        time.sleep(1.5)                                 # well inside the solver's C call
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.startswith("interrupted: the counter-strategy being trained was not written") and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emd_256", "logs"]
    from casebases.build_counters import SEED, log_path, teacher_key
    from cbr.logs.acpc import loads

    (log,) = logs.iterdir()                             # played before the stop: whole, kept for a re-run
    assert log == log_path("raise", 20, SEED, logs, teacher_key())
    assert len(loads(log.read_text(encoding="utf-8"))) == 20


def test_the_recipe_says_how_training_goes(tmp_path, shipped, monkeypatch, capsys) -> None:
    """Training runs up to 30 minutes: a line every :data:`REPORT_SECONDS` (a minute) says the
    iterations done, of how many, and the time left (here every slice, the interval set to 0)."""
    from casebases import build_counters

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    assert build_counters.REPORT_SECONDS == 60.0                # about once a minute
    monkeypatch.setattr(build_counters, "REPORT_SECONDS", 0.0)
    assert build_counters.main(["--only", "raise", "--hands", "20", "--iterations", "3000", "--logs",
                                str(tmp_path / "logs"), "--out", str(tmp_path)]) == 0
    lines = capsys.readouterr().err.splitlines()
    progress = [line for line in lines if line.startswith("raise: 3,000 of 3,000 iterations, ")]
    assert len(progress) == 1 and progress[0].endswith(" a second, about 0 min left"), lines


def test_the_recipe_says_how_the_match_goes_and_when_it_reuses_a_log(tmp_path, shipped, monkeypatch, capsys) -> None:
    """The teacher's match (about a minute) said nothing until it ended: a line every
    :data:`PLAY_REPORT_SECONDS` now (here every call, the interval set to 0). "A log already played
    is reused" was said on every run; now only a run that reuses one says so, naming it."""
    from casebases import build_counters

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    assert build_counters.PLAY_REPORT_SECONDS == 10.0
    monkeypatch.setattr(build_counters, "PLAY_REPORT_SECONDS", 0.0)
    argv = ["--only", "raise", "--hands", "120", "--iterations", "2000", "--logs", str(tmp_path / "logs"),
            "--out", str(tmp_path)]
    assert build_counters.main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "raise: the teacher plays raise, 120 duplicate hands", lines
    played = [line for line in lines if " of 120 hands played in " in line]
    assert played[0].startswith("raise: 50 of 120 hands played in ") and played[-1].startswith("raise: 120 of 120 "), lines
    assert not any("reus" in line for line in lines), lines
    (log,) = (tmp_path / "logs").iterdir()
    assert build_counters.main(argv) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == (f"raise: reusing {log}, the same teacher's 120 duplicate hands against raise played before "
                        "(delete it to play them again)"), lines
    assert not any("hands played in" in line or "the teacher plays" in line for line in lines), lines


def test_the_logs_are_named_by_the_teachers_strategy(tmp_path) -> None:
    """The logs were named by the opponent, hands and seed only: a retrained teacher reused the old
    teacher's logs. Their name holds the hash of the teacher's strategy file."""
    import shutil

    from casebases.build_counters import TEACHER, log_path, teacher_key
    from cbr.cfr.mccfr import STRATEGY_FILE

    copy = tmp_path / "teacher"
    copy.mkdir()
    shutil.copy(SHIPPED_TEACHER / STRATEGY_FILE, copy / STRATEGY_FILE)
    assert teacher_key(f"cfr:strategy={copy}") == teacher_key(TEACHER)   # the same strategy: the same logs
    with open(copy / STRATEGY_FILE, "r+b") as f:                          # another strategy, of the same size
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 1]))
    other = teacher_key(f"cfr:strategy={copy}")
    assert other != teacher_key(TEACHER)
    assert log_path("raise", 20, 1, tmp_path, other) != log_path("raise", 20, 1, tmp_path, teacher_key(TEACHER))


def test_ctrl_c_while_the_teacher_plays_says_the_match_was_stopped(tmp_path, shipped) -> None:
    """A real SIGINT while the teacher plays its match, before any training: the line said "the
    counter-strategy being trained was not written" though nothing was training; it names the
    match now, and nothing is written (no log, no counter-strategy)."""
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import default_sigint

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    logs = tmp_path / "logs"
    proc = subprocess.Popen([sys.executable, "-m", "casebases.build_counters", "--only", "call", "--hands", "20000",
                             "--iterations", "2000", "--logs", str(logs), "--out", str(tmp_path)],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_sigint)
    try:
        first = proc.stderr.readline()
        assert first.startswith("call: the teacher plays call, 20,000 duplicate hands"), first
        time.sleep(1.5)                                 # inside the match (20,000 hands take about a minute)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "interrupted: the teacher's match against call, for counter_call, was not finished; its log was not written"
    ], err  # (it added "the counter-strategies finished before were written", though none had)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emd_256", "logs"]
    assert [p.name for p in logs.iterdir() if p.suffix == ".log"] == []


def test_help_speaks_to_a_user_and_the_default_out_is_an_ignored_folder(tmp_path) -> None:
    """``--help`` showed code names (``TARGETS'``, ``SHIPPED_ITERATIONS'`` and a dict), and the
    default ``--out`` was ``casebases/cfr``, the shipped strategies' tracked folder: a trial run
    overwrote them. The default is ``.cfr-runs/counters/``, ignored by git, which gets a link to
    the teacher's abstraction on first use."""
    import subprocess
    import sys

    from casebases import build_counters

    repo = Path(__file__).resolve().parents[2]
    import os

    text = subprocess.run([sys.executable, "-m", "casebases.build_counters", "--help"], cwd=repo, capture_output=True,
                          text=True, check=True, env={**os.environ, "COLUMNS": "1000"}).stdout
    flat = " ".join(text.split())
    for internal in ("TARGETS", "SHIPPED_ITERATIONS", "{", "``", "c = 0"):
        assert internal not in flat, internal
    assert "raise_mild 40,000,000 iterations" in flat and "raise_mild 0.05" in flat
    assert "(default: .cfr-runs/counters/ of the current folder, or of the source checkout when run in it, ignored " \
           "by git there" in flat and "--out casebases/cfr rebuilds the shipped" in flat
    assert build_counters.runs_out() == repo / ".cfr-runs" / "counters"  # (the tests run in the checkout)
    ignored = subprocess.run(["git", "check-ignore", "-q", ".cfr-runs/counters/counter_raise/strategy.npz"], cwd=repo)
    assert ignored.returncode == 0
    out = tmp_path / "counters"
    build_counters.link_teacher(out)
    build_counters.link_teacher(out)                    # again: already there
    assert (out / "emd_256").resolve() == SHIPPED_TEACHER.resolve()


def test_ctrl_c_while_the_recipe_writes_a_counter_strategy_leaves_the_pair_whole(tmp_path, shipped) -> None:
    """A real SIGINT while ``strategy.npz`` is written (its temp file is there): the folder gets
    the strategy and its model, or nothing. The strategy's write held the Ctrl-C and delivered it
    when done, just before the model was written: a new strategy beside no model (or an old one)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import default_sigint

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    folder = tmp_path / "counter_raise"
    proc = subprocess.Popen([sys.executable, "-m", "casebases.build_counters", "--only", "raise", "--hands", "20",
                             "--iterations", "2000", "--threads", "1", "--logs", str(tmp_path / "logs"), "--out",
                             str(tmp_path)], cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if folder.is_dir() and any(n.startswith(".strategy.npz.tmp-") for n in os.listdir(folder)):
                proc.send_signal(signal.SIGINT)         # inside the strategy's write
                break
            time.sleep(0.002)
        else:
            raise AssertionError(f"the strategy's write was not seen (exit {proc.returncode})")
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.splitlines()[-1].startswith("interrupted: ")
    assert sorted(os.listdir(folder)) == ["model.npz", STRATEGY_FILE]
    assert "raise: 2,000 iterations in" in err                    # it said so before the interrupt
    assert load_imperfect_strategy(folder).info["iterations"] == 2000
    assert OpponentModel.load(folder / "model.npz").counts.sum() > 0


def test_a_stop_names_the_counter_strategies_finished_before_it(tmp_path, shipped) -> None:
    """Stopped while the second of two counter-strategies trains: the line names the first,
    written whole (with one counter-strategy stopped it said "those finished before were written"
    though none had: that test is above)."""
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import default_sigint

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    proc = subprocess.Popen([sys.executable, "-m", "casebases.build_counters", "--only", "raise,call", "--hands", "20",
                             "--iterations", "100000", "--logs", str(tmp_path / "logs"), "--out", str(tmp_path)],
                            cwd=Path(__file__).resolve().parents[2], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_sigint)
    try:
        lines = []
        while not lines or "decisions of call counted" not in lines[-1]:
            line = proc.stderr.readline()
            assert line, lines
            lines.append(line)
        time.sleep(1.0)  # inside call's training (100,000 iterations take seconds)
        proc.send_signal(signal.SIGINT)  # call's counter-strategy trains; raise's was written
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert err.strip().splitlines() == [
        "interrupted: the counter-strategy being trained was not written (the counter-strategies finished before "
        "were written: counter_raise)"], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counter_raise", "emd_256", "logs"]


def test_minutes_bound_the_training_time(tmp_path, shipped) -> None:
    """``--minutes 0.2`` ran 19 s: a timed run trained in slices of 200,000 iterations, the last
    one past the deadline (10 s of training on a budget of 3 s here). Each slice is now sized by
    the speed so far to end by the deadline."""
    from casebases import build_counters

    (tmp_path / "emd_256").symlink_to(SHIPPED_TEACHER)
    assert build_counters.main(["--only", "raise", "--hands", "20", "--minutes", "0.05", "--logs",
                                str(tmp_path / "logs"), "--out", str(tmp_path)]) == 0
    s = load_imperfect_strategy(tmp_path / "counter_raise")
    # 3 s of training: slices end by the deadline. The seconds are wall time: a CI run at a load of
    # 4 to 8 measured 3.6 (a slice sized by the speed so far overran when the speed fell); the
    # slices of 200,000 iterations this guards against ran 10 s.
    assert 2.0 <= s.info["seconds"] <= 5.0, s.info
