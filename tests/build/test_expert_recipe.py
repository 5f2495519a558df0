"""The expert case base's recipe (casebases/build_expert.py), at a small scale: the teacher's
matches are written as ACPC logs, a re-run plays nothing twice, and the case base holds the
teacher's decisions only."""
from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.conftest import default_sigint, require_native

require_native(module_level=True)

from casebases import build_expert as recipe  # noqa: E402
from cbr.logs.acpc import AcpcParser  # noqa: E402
from cbr.store.casebase import CaseBase  # noqa: E402


def test_the_recipe_splits_hands_by_share_and_keeps_seeds_apart() -> None:
    matches = recipe.recipe(Path("logs"), 100_000, 20_000)
    assert sum(m.hands for m in matches) == 100_000
    by_pair = {}
    for m in matches:
        by_pair[m.players] = by_pair.get(m.players, 0) + m.hands
    assert by_pair[("cfr", "cfr")] == 40_000 and by_pair[("cfr", "hs")] == 15_000
    assert len({m.seed for m in matches}) == len(matches)
    ship = recipe.shipped_subset(matches, 40_000)
    assert sum(k for _, k in ship) == 40_000 and {m.players for m, _ in ship} == set(recipe.PAIRINGS)
    assert all(k % 2 == 0 and k <= m.hands for m, k in ship)          # whole duplicate deals of a match


def test_a_small_expert_base_holds_only_the_teachers_decisions(tmp_path: Path) -> None:
    logs, out = tmp_path / "logs", tmp_path / "expert"
    assert recipe.main(["--logs", str(logs), "--hands", "200", "--match-hands", "40", "--workers", "1",
                        "--teacher", "cfr", "--out", str(out)]) == 0
    files = sorted(logs.glob("*.log"))
    assert [f.name for f in files][:2] == ["cfr-cfr-000.log", "cfr-cfr-001.log"] and len(files) == 6   # 80 self-play hands in two logs, 30 against each rule bot
    stamps = {f: f.stat().st_mtime_ns for f in files}
    hands = [h for f in files for h in AcpcParser().parse(str(f))]
    assert len(hands) == 200 and all(type(h).__name__ == "HandRecord" for h in hands)
    cb = CaseBase.open(out)
    try:
        players = {r[0] for r in cb.sql("SELECT DISTINCT player FROM cases").fetchall()}
        assert players == set(recipe.teacher_seats("cfr")[:2]), players   # both self-play seats, nobody else
    finally:
        cb.close()
    # a re-run finds every log and plays nothing again
    assert recipe.main(["--logs", str(logs), "--hands", "200", "--match-hands", "40", "--workers", "1",
                        "--teacher", "cfr", "--out", str(tmp_path / "again")]) == 0
    assert {f: f.stat().st_mtime_ns for f in files} == stamps
    # the shipped sample: the first hands of each pairing's logs, in the recipe's shares
    assert recipe.main(["--logs", str(logs), "--hands", "200", "--match-hands", "40", "--workers", "1",
                        "--teacher", "cfr", "--ship", "100", "--out", str(tmp_path / "ship")]) == 0
    sample = CaseBase.open(tmp_path / "ship")
    try:
        per_log = {s: (n, last) for s, n, last in sample.sql(
            "SELECT source, count(DISTINCT hand_id), max(CAST(hand_id AS INTEGER)) FROM cases GROUP BY ALL").fetchall()}
    finally:
        sample.close()
    assert set(per_log) == {f"expert-logs/cfr-{b}-000.log" for b in ("cfr", "hs", "ehs", "poki", "lag")}
    assert per_log["expert-logs/cfr-cfr-000.log"] == (40, 39)   # both seats the teacher: a case in every hand
    for b in ("hs", "ehs", "poki", "lag"):                      # 15% of 100 = 7 deals: hands 0..13 (the teacher
        n, last = per_log[f"expert-logs/cfr-{b}-000.log"]       # has no decision when the bot folds its small blind)
        assert 7 <= n <= 14 and last <= 13


def test_the_teacher_is_recorded_and_another_teachers_logs_are_refused(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "logs"
    args = ["--logs", str(logs), "--hands", "20", "--match-hands", "20", "--workers", "1", "--teacher", "cfr"]
    assert recipe.main(args + ["--out", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    assert (logs / "teacher.txt").read_text().strip() == "cfr"
    before = sorted(p.name for p in logs.iterdir())
    assert recipe.main(args[:-1] + ["cfr:resolve=river", "--out", str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "'cfr'" in err and err.count("\n") == 1
    assert sorted(p.name for p in logs.iterdir()) == before and not (tmp_path / "b").exists()
    with pytest.raises(SystemExit) as usage:                   # a spec that names no bot: a usage error
        recipe.main(args[:-1] + ["nosuchbot", "--out", str(tmp_path / "c")])
    assert usage.value.code == 2


def test_the_shipped_sample_plays_only_the_hands_it_keeps(tmp_path: Path) -> None:
    """With the default teacher (the re-solving one): its decisions are deterministic too."""
    logs = tmp_path / "logs"
    assert recipe.main(["--logs", str(logs), "--hands", "1000", "--match-hands", "200", "--workers", "1",
                        "--ship", "40", "--out", str(tmp_path / "ship")]) == 0
    played = sorted(f.name for f in logs.glob("*.log"))
    assert played == ["cfr-cfr-000.first16.log"] + [f"cfr-{b}-000.first6.log" for b in ("ehs", "hs", "lag", "poki")]
    assert sum(len(list(AcpcParser().parse(str(f)))) for f in logs.glob("*.log")) == 40
    # the same first hands as the whole match's log
    whole = recipe.recipe(logs, 1000, 200)[0]
    other = tmp_path / "whole"
    other.mkdir()
    from dataclasses import replace
    replace(whole, log=other / whole.log.name, hands=30).play()
    states = [ln for ln in (other / whole.log.name).read_text().splitlines() if ln.startswith("STATE:")]
    cut = [ln for ln in (logs / played[0]).read_text().splitlines() if ln.startswith("STATE:")]
    assert cut == states[:16]


def _run(args: list[str], **kw):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "casebases.build_expert", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=Path(recipe.__file__).parent.parent, **kw)


@pytest.mark.parametrize("args,says", [
    (["--ship", "3"], "--ship must be 0"),
    (["--ship", "100", "--feature-set", "nope"], "--feature-set: no plugin 'nope'"),
    (["--ship", "100", "--teacher", "raise"], "is not a `cfr` bot"),
    (["--ship", "100", "--teacher", "nosuch"], "--teacher: unknown policy 'nosuch'"),
])
def test_bad_options_are_usage_errors_before_anything_is_played(tmp_path: Path, args, says) -> None:
    """A bad --feature-set was a traceback after all the play; --ship 3 a traceback naming no path."""
    proc = _run(["--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "b"), *args])
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and says in err and "Traceback" not in err, err
    assert not (tmp_path / "logs").exists() and not (tmp_path / "b").exists()


def test_a_logs_path_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    proc = _run(["--logs", str(tmp_path / "f"), "--ship", "100", "--out", str(tmp_path / "b")])
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and err == f"error: --logs {tmp_path / 'f'} is a file, not a folder\n"


@pytest.mark.parametrize("signum,code,by", [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_stop_while_playing_ends_the_workers_and_leaves_whole_logs_only(tmp_path: Path, signum, code, by) -> None:
    """Ctrl-C was a traceback, and the worker went on playing (and finishing logs) after it."""
    import os
    import time

    logs = tmp_path / "logs"
    proc = _run(["--logs", str(logs), "--ship", "400000", "--match-hands", "200000", "--workers", "1",
                 "--teacher", "cfr:strategy=emd_256", "--out", str(tmp_path / "b")], start_new_session=True,
                preexec_fn=default_sigint)
    deadline = time.monotonic() + 60
    while not list(logs.glob(".*.tmp-*")) and time.monotonic() < deadline:   # a worker is writing a log
        time.sleep(0.1)
    assert list(logs.glob(".*.tmp-*")), "no log was started within 60 s"
    workers = {int(p.name.split(".tmp-")[1].split("-")[0]) for p in logs.glob(".*.tmp-*")}
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code, err
    assert err.splitlines()[-1].startswith(f"stopped by {by}: the logs played so far are in {logs}")
    assert "Traceback" not in err
    assert not list(logs.glob(".*.tmp-*"))                      # the half-written log is gone
    for pid in workers:                                         # the worker is gone (not a zombie left playing)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"worker {pid} outlived the recipe")


def test_a_burst_of_signals_while_it_stops_is_one_stop(tmp_path: Path) -> None:
    """SIGTERM, then Ctrl-C every 10 ms until the recipe is gone: the first signal stops it
    (:class:`cbr.cfr.longrun.StopSignals`, ``ignore_after``), the others cannot cut its clean-up or
    its last line. Its own SIGTERM handler raised, and a Ctrl-C after it killed it (exit -2)."""
    import time

    logs = tmp_path / "logs"
    proc = _run(["--logs", str(logs), "--ship", "400000", "--match-hands", "200000", "--workers", "1",
                 "--teacher", "cfr:strategy=emd_256", "--out", str(tmp_path / "b")], start_new_session=True,
                preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        while not list(logs.glob(".*.tmp-*")) and time.monotonic() < deadline:   # a worker is writing a log
            time.sleep(0.1)
        assert list(logs.glob(".*.tmp-*")), "no log was started within 60 s"
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.05)                                # the first one lands first (SIGINT's number is lower)
        end = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < end:
            proc.send_signal(signal.SIGINT)
            time.sleep(0.01)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # on a busy machine both may be pending when it first looks: then the lower number, SIGINT, is the stop
    by, code = ("SIGTERM", 143) if "stopped by SIGTERM" in err else ("Ctrl-C", 130)
    assert proc.returncode == code, err
    assert "Traceback" not in err and err.splitlines()[-1].startswith(f"stopped by {by}: the logs played so far")
    assert err.count("stopped by") == 1 and not list(logs.glob(".*.tmp-*")) and not (tmp_path / "b").exists()


def test_a_killed_match_worker_is_one_error_line(tmp_path: Path) -> None:
    """A match worker SIGKILLed from outside (the OOM killer, say) while it plays: one ``error:``
    line, exit 1, no half-written log and no worker left (it was a ``BrokenProcessPool``
    traceback). The recipe's pool is the build's (:mod:`cbr.build.pools`)."""
    import os
    import time

    logs = tmp_path / "logs"
    proc = _run(["--logs", str(logs), "--ship", "400000", "--match-hands", "200000", "--workers", "2",
                 "--teacher", "cfr:strategy=emd_256", "--out", str(tmp_path / "b")], start_new_session=True,
                preexec_fn=default_sigint)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:      # both workers are writing a log
            workers = {int(p.name.split(".tmp-")[1].split("-")[0]) for p in logs.glob(".*.tmp-*")}
            time.sleep(0.1)
        assert len(workers) == 2, f"two logs were not started within 60 s: {workers}"
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith("error: a worker process of the recipe died"), err
    assert not list(logs.glob(".*.tmp-*")) and not (tmp_path / "b").exists()
    left = [pid for pid in workers if os.path.exists(f"/proc/{pid}") and
            Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    assert left == [], f"workers outlived the recipe: {left}"
