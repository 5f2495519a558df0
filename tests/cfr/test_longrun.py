"""Issue 37, part 3: long MCCFR runs across working sessions (cbr.cfr.longrun and the recipe
casebases/build_cfr_big.py), on a 4-bucket abstraction made in a second from the shipped one.

The recipe runs as the real command in a subprocess: a SIGTERM mid-run saves a checkpoint
and exits 143 with one line, and the resumed run ends with the tables of an unbroken one
(one thread: bit for bit); other options, another run's checkpoint, a second process on the
same folder and tables over --max-gb are refused with one line; progress.jsonl grows by a
parseable line a checkpoint. Every run folder is under tmp_path (never .cfr-runs/).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.conftest import REPO, default_sigint, require_native

require_native(module_level=True)

from cbr.abstraction.distribution import DistributionAbstraction  # noqa: E402
from cbr.cfr.longrun import LongRun, RunFolder, StopSignals, read_progress, table_memory  # noqa: E402
from cbr.cfr.mccfr import MCCFRTrainer  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.cfr.testing import coarse_abstraction  # noqa: E402
from tests.cfr.conftest import FOUR  # noqa: E402


def recipe_args(run: Path, tiny: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "casebases.build_cfr_big", "--out", str(run), "--abstraction", str(tiny), *FOUR,
            *more]


def recipe(run: Path, tiny: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(recipe_args(run, tiny, *more), cwd=REPO, capture_output=True, text=True, timeout=300)


def checkpoint_info(run: Path) -> dict:
    with np.load(RunFolder(run).checkpoint) as z:
        return json.loads(str(z["info"]))


def wait_for_training(run: Path, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    """Until the run's progress log has its session's start line (training has begun)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p["event"] == "start" for p in read_progress(RunFolder(run).progress)):
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the run did not start training")


def test_sigterm_saves_a_checkpoint_and_the_resumed_run_equals_an_unbroken_one(tiny, tmp_path) -> None:
    run = tmp_path / "run"
    total = 600_000
    proc = subprocess.Popen(recipe_args(run, tiny, "--iterations", str(total), "--snapshot-minutes", "0"), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_training(run, proc)
        time.sleep(0.7)
        second = recipe(run, tiny, "--iterations", str(total))  # the folder is locked while the first trains
        assert second.returncode == 1
        assert second.stderr.strip().splitlines()[-1] == \
            f"error: {run}: another process is training this run (it holds {run / '.lock'})"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    last = err.strip().splitlines()[-1]
    stopped = checkpoint_info(run)["iterations"]
    assert last == (f"stopped by SIGTERM: checkpoint at {stopped:,} iterations in {RunFolder(run).checkpoint}; "
                    f"run the same command again to continue")
    assert 0 < stopped < total  # stopped mid-run
    assert sum("stopped by" in line for line in err.splitlines()) == 1
    assert [line for line in err.splitlines() if line.startswith("stopped")] == [last]  # the stop in one line
    done = recipe(run, tiny, "--iterations", str(total))
    assert done.returncode == 0, done.stderr
    assert f"resumed {run} at {stopped:,} iterations" in done.stderr
    unbroken = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=0, threads=1)
    unbroken.run(total)
    with np.load(RunFolder(run).checkpoint) as z:
        assert json.loads(str(z["info"]))["iterations"] == total
        assert np.array_equal(z["regret"], unbroken.regret) and np.array_equal(z["avg"], unbroken.avg)
    events = [p["event"] for p in read_progress(RunFolder(run).progress)]
    assert events[0] == "start" and events[-1] == "iterations" and events.count("stopped") == 1
    assert events.count("start") == 2


def test_other_options_or_another_runs_checkpoint_are_refused(tiny, tmp_path) -> None:
    run = tmp_path / "run"
    first = recipe(run, tiny, "--iterations", "20000")
    assert first.returncode == 0, first.stderr
    before = RunFolder(run).checkpoint.read_bytes()
    for more in (["--river", "8"], ["--seed", "1"], ["--river-kind", "ochs"]):
        r = recipe(run, tiny, "--iterations", "40000", *more)  # the last of a repeated option counts
        assert r.returncode == 1, r.stderr
        lines = r.stderr.strip().splitlines()
        assert lines[-1].startswith(f"error: {run}: this run was started with --flop 4 --turn 4 --river 4 "
                                    f"--river-kind hs --seed 0 --fit-boards 400, not ")
        assert sum(line.startswith("error:") for line in lines) == 1
    assert RunFolder(run).checkpoint.read_bytes() == before  # untouched
    # a checkpoint of another abstraction in the folder: refused, not trained on
    other = coarse_abstraction(DistributionAbstraction.load(SHIPPED_TEACHER), 2)
    t = MCCFRTrainer(other, seed=0, threads=1)
    t.run(1000)
    t.save_checkpoint(RunFolder(run).checkpoint)
    r = recipe(run, tiny, "--iterations", "40000")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1].startswith(f"error: {RunFolder(run).checkpoint}: checkpoint abstraction")


def test_progress_lines_parse_and_grow_and_snapshots_follow_training_time(tiny, tmp_path) -> None:
    run = tmp_path / "run"
    sizes = []
    for total in (150_000, 300_000):
        r = recipe(run, tiny, "--iterations", str(total), "--checkpoint-minutes", "0.01", "--snapshot-minutes", "0.01")
        assert r.returncode == 0, r.stderr
        sizes.append(len(read_progress(RunFolder(run).progress)))
    lines = read_progress(RunFolder(run).progress)
    assert sizes[0] >= 2 and sizes[1] > sizes[0]
    keys = {"event", "time", "iterations", "training_seconds", "cpu_seconds", "session_wall_seconds",
            "iterations_per_second", "threads", "table_bytes", "max_rss_bytes", "load_average"}
    assert all(set(p) == keys for p in lines)
    for key in ("iterations", "training_seconds", "cpu_seconds"):
        values = [p[key] for p in lines]
        assert values == sorted(values), key
    assert lines[-1]["iterations"] == 300_000 and lines[-1]["cpu_seconds"] > 0
    assert {p["table_bytes"] for p in lines} == {table_memory((169, 4, 4, 4))["total"]}
    assert [p["event"] for p in lines].count("checkpoint") >= 1
    snaps = sorted(RunFolder(run).snapshots.glob("strategy-*.npz"), key=lambda p: int(p.stem.split("-")[1]))
    assert snaps
    seen = []
    for f in snaps:
        with np.load(f) as z:
            info = json.loads(str(z["info"]))
        assert f.name == f"strategy-{info['iterations']}.npz" and info["extra"]["cpu_seconds"] > 0
        seen.append(info["seconds"])
    assert seen == sorted(seen)
    # the cfr bot plays the run folder
    from cbr.play.match import run_match

    result = run_match([f"cfr:strategy={run}", "call"], 20, seed=1)
    assert result is not None


def test_tables_over_max_gb_are_refused_before_anything_is_written(tiny, tmp_path) -> None:
    run = tmp_path / "run"
    r = recipe(run, tiny, "--iterations", "1000", "--max-gb", "0.5")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert r.stderr.startswith("error: tables: 0.00 GB of regrets and averages (69,797 entries) + 0.82 GB of bucket "
                               "tables") and "(--max-gb 0.5): over the limit" in r.stderr
    assert not run.exists()
    usage = subprocess.run([sys.executable, "-m", "casebases.build_cfr_big", "--out", str(run)], cwd=REPO,
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "give --minutes" in usage.stderr


def test_memory_of_the_planned_sizes() -> None:
    m = table_memory((169, 2000, 2000, 2000))
    assert m["entries"] == 33_127_549 and m["regrets_and_averages"] == 16 * 33_127_549
    assert m["bucket_tables"] == 2 * 1326 * (22_100 + 270_725 + 1_755 + 16_432)


def test_the_teacher_recipe_shares_the_loop_with_iteration_checkpoints(tiny, tmp_path) -> None:
    """casebases/build_cfr_emd.py on the loop: checkpoints every N iterations beside the folder,
    snapshots by iterations, and a second call goes on from the checkpoint."""
    from casebases import build_cfr_emd

    out = tmp_path / "emd"
    out.mkdir()
    (out / "abstraction.npz").write_bytes(tiny.read_bytes())
    args = ["--out", str(out), "--buckets", "4", "--threads", "1", "--iterations", "30000", "--checkpoint-every", "10000",
            "--snapshots", str(tmp_path / "snaps"), "--snapshot-every", "15000"]
    assert build_cfr_emd.main(args) == 0
    assert build_cfr_emd.main(args) == 0  # 30,000 more
    with np.load(tmp_path / "emd.ckpt.npz") as z:
        assert json.loads(str(z["info"]))["iterations"] == 60_000
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == \
        sorted(f"strategy-{n}.npz" for n in (15_000, 30_000, 45_000, 60_000))
    assert (out / "strategy.npz").exists()


def test_stop_flag_ends_training_with_a_checkpoint(tiny, tmp_path) -> None:
    """In process: a SIGINT while training sets the flag; the loop saves and says why it ended."""
    t = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=2, threads=1)
    asked = []

    def stop() -> bool:
        asked.append(t.iterations)
        if len(asked) == 3:
            signal.raise_signal(signal.SIGINT)
        return flag()

    run = LongRun(t, tmp_path / "ck.npz", progress=tmp_path / "p.jsonl")
    with StopSignals() as flag:
        assert run.train(minutes=5, stop=stop) == "stopped"
    assert flag.signal == signal.SIGINT and os.path.exists(tmp_path / "ck.npz")
    assert [p["event"] for p in read_progress(tmp_path / "p.jsonl")] == ["start", "stopped"]
    again = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=2, threads=1)
    assert LongRun(again, tmp_path / "ck.npz").resume() and again.iterations == t.iterations > 0


def test_stop_signals_ignore_after_a_stop_without_a_window_for_the_old_handler() -> None:
    """``ignore_after=True``: once a signal came, leaving the block ignores SIGINT and SIGTERM
    directly (restoring the old handler first and ignoring after let a second Ctrl-C of a burst
    interrupt the process while it stopped: CI saw it); with no signal, the old handlers return."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with StopSignals(ignore_after=True) as quiet:
            pass
        assert quiet.signal is None and all(signal.getsignal(s) == h for s, h in before.items())
        with StopSignals(ignore_after=True) as stopped:
            signal.raise_signal(signal.SIGINT)
        assert stopped.signal == signal.SIGINT
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in before)
        signal.raise_signal(signal.SIGINT)  # ignored: no KeyboardInterrupt
    finally:
        for s, h in before.items():
            signal.signal(s, h)


def test_the_curve_script_measures_each_snapshot_once_and_plots_them(tiny, tmp_path) -> None:
    """experiments/cfr_curve.py on a run with two snapshots: LBR on the same deals, JSON and
    PNG; a second call measures only the snapshot that is new."""
    run = RunFolder(tmp_path / "run")
    run.path.mkdir()
    run.abstraction.write_bytes(tiny.read_bytes())
    t = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=0, threads=1)
    loop = LongRun(t, run.checkpoint, snapshots=run.snapshots, snapshot_every=20_000)
    loop.train(iterations=40_000)
    results = tmp_path / "results"

    def curve() -> tuple[subprocess.CompletedProcess[str], dict]:
        r = subprocess.run([sys.executable, "experiments/cfr_curve.py", str(run.path), "--hands", "20", "--seed", "5",
                            "--results", str(results)], cwd=REPO, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        return r, json.loads((results / "cfr-curve-run-seed5.json").read_text())

    r, first = curve()
    assert [p["iterations"] for p in first["points"]] == [20_000, 40_000]
    assert all(p["hands"] == 20 and p["ci"] > 0 and p["training_hours"] > 0 for p in first["points"])
    assert (results / "cfr-curve-run-seed5.png").stat().st_size > 10_000
    assert r.stderr.strip().splitlines()[-1] == \
        f"wrote {results / 'cfr-curve-run-seed5.png'} and {results / 'cfr-curve-run-seed5.json'}"
    assert "| 20,000 |" in r.stdout and "| 40,000 |" in r.stdout
    loop.train(iterations=60_000)
    r, second = curve()
    assert second["points"][:2] == first["points"]  # kept, not measured again
    assert [p["iterations"] for p in second["points"]] == [20_000, 40_000, 60_000]
    assert r.stderr.count("iterations,") == 1
    longer = subprocess.run([sys.executable, "experiments/cfr_curve.py", str(run.path), "--hands", "30", "--seed", "5",
                             "--last", "1", "--results", str(results)], cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert longer.returncode == 0, longer.stderr
    third = json.loads((results / "cfr-curve-run-seed5.json").read_text())
    assert third["points"][:3] == second["points"]  # the 20-hand curve stays beside the longer measurement
    assert [(p["hands"], p["iterations"]) for p in third["points"][3:]] == [(30, 60_000)]


def test_a_second_ctrl_c_while_saving_does_not_cut_the_save(tiny, tmp_path) -> None:
    """Ctrl-C, then Ctrl-C every 2 ms until the process ends (so some land while the checkpoint
    and the strategy are written): exit 130 with one line, and the checkpoint loads."""
    run = tmp_path / "run"
    proc = subprocess.Popen(recipe_args(run, tiny, "--iterations", "5000000", "--snapshot-minutes", "0"), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        wait_for_training(run, proc)
        time.sleep(0.5)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.002)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("stopped by SIGINT: checkpoint at ")
    assert "Traceback" not in err and sum("stopped by" in line for line in err.splitlines()) == 1
    t = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=0, threads=1)
    t.load_checkpoint(RunFolder(run).checkpoint)
    assert 0 < t.iterations < 5_000_000


def test_an_ochs_river_run_trains_and_is_checked_as_one(tmp_path) -> None:
    """``--river-kind ochs``: a 4-bucket OCHS river (2 opponent clusters) on the merged
    abstraction trains through the recipe; the same folder asked for a percentile river, or
    for another number of clusters, is refused."""
    from cbr.abstraction.distribution import fit_ochs_river

    river = fit_ochs_river(4, 2, fit_boards=20, cluster_boards=100)
    coarse_abstraction(DistributionAbstraction.load(SHIPPED_TEACHER), 4).with_ochs_river(river).save(tmp_path / "a")
    ochs = tmp_path / "a" / "abstraction.npz"
    run = tmp_path / "run"
    r = recipe(run, ochs, "--river-kind", "ochs", "--clusters", "2", "--iterations", "5000")
    assert r.returncode == 0, r.stderr
    assert checkpoint_info(run)["iterations"] == 5000
    for more in (["--river-kind", "hs"], ["--river-kind", "ochs", "--clusters", "8"]):
        refused = recipe(run, ochs, "--iterations", "9000", *more)
        assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert refused.stderr.strip().splitlines()[-1].startswith(
            f"error: {run}: this run was started with --flop 4 --turn 4 --river 4 --river-kind ochs --clusters 2 ")


def test_a_public_chance_run_is_asked_to_stop_after_a_short_first_slice(tiny, tmp_path) -> None:
    """A public-chance iteration takes a fraction of a second: the loop's first slice is a few
    iterations, not thousands (a Ctrl-C, the budget and checkpoints once waited 40 minutes), and
    the loop asks ``stop`` again right after it."""
    t = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=2, threads=1, sampling="public")
    asked: list[int] = []

    def stop() -> bool:
        asked.append(t.iterations)
        return len(asked) == 2

    assert LongRun(t, tmp_path / "ck.npz").train(minutes=5, stop=stop) == "stopped"
    assert asked[0] == 0 and 0 < asked[1] <= 10 and t.iterations == asked[1]


def test_the_teacher_recipe_refuses_other_buckets_or_sampling_in_one_line(tiny, tmp_path, capsys) -> None:
    """--buckets other than the folder's abstraction (the default folder is the shipped teacher's,
    which a `--buckets 8` once retrained at 256) and a checkpoint of the other sampling: one
    `error:` line, exit 1, nothing trained or written."""
    from casebases import build_cfr_emd

    out = tmp_path / "emd"
    out.mkdir()
    (out / "abstraction.npz").write_bytes(tiny.read_bytes())
    base = ["--out", str(out), "--threads", "1", "--iterations", "1000"]
    assert build_cfr_emd.main([*base, "--buckets", "8"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {out} holds a run of 4/4/4 buckets, not --buckets 8: give --buckets 4 to go on with it, "
                   "or another --out"]
    assert sorted(p.name for p in out.iterdir()) == ["abstraction.npz"] and not (tmp_path / "emd.ckpt.npz").exists()
    assert build_cfr_emd.main([*base, "--buckets", "4"]) == 0
    capsys.readouterr()
    assert build_cfr_emd.main([*base, "--buckets", "4", "--sampling", "public"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "sampling" in err[0]


def test_a_long_slice_of_training_reports_progress_between_checkpoints(tiny, tmp_path) -> None:
    """The run printed nothing between checkpoints (10 minutes apart by default): a first-time user
    saw a silent terminal. Now a line every ``report_seconds``, none at a stop."""
    t = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=2, threads=1)
    said: list[str] = []
    run = LongRun(t, tmp_path / "ck.npz", report=said.append, report_seconds=0.5, slice_seconds=0.1)

    def progress() -> list[str]:
        return [s for s in said if s.startswith("training: ")]

    # until three lines came (however slow a loaded machine makes the slices), at most 5 minutes
    assert run.train(minutes=5, stop=lambda: len(progress()) >= 3) == "stopped", said
    counts = [int(s.split()[1].replace(",", "")) for s in progress()]
    assert len(counts) == 3 and counts == sorted(counts) and counts[-1] <= t.iterations
    assert said[-1] == progress()[-1]                           # a stop adds no line: its caller says it
    assert run.train(minutes=0.5 / 60) == "minutes"
    assert said[-1].startswith("minutes: ")                     # the end's line comes last
    quiet: list[str] = []
    LongRun(MCCFRTrainer(DistributionAbstraction.load(tiny), seed=2, threads=1), tmp_path / "q.npz",
            report=quiet.append, report_seconds=0).train(minutes=1.0 / 60)
    assert not [s for s in quiet if s.startswith("training: ")]
