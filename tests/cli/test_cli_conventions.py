"""Conventions of the `cbr` command line (issue 7, section 6): exit codes, one-line errors,
usage errors for out-of-range counts, output paths, option names, --version, help, tables
and start-up imports. Driven through typer's CliRunner, or a real subprocess where a
signal or a fresh interpreter is the point."""
from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cbr.cli import _errors, _options, _output
from cbr.errors import ConfigError, GameError, OutputPathError
from cbr.game.spec import load_game
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.output import check_output_path
from cbr.play.match import MAX_HANDS, run_match
from cli import app
from tests.conftest import default_sigint

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def cbr(*args: object, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def one_error_line(result, code: int = 1) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def usage_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.stderr


@pytest.fixture(scope="module")
def small_log(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("conv") / "hu.log"
    with AcpcLogWriter(path) as log:
        run_match(["random", "call"], 30, seed=3, log=log)
    return path


# ---- exit codes: usage errors (2) ---------------------------------------------------
@pytest.mark.parametrize("args", [
    ["match", "-p", "random,call", "--hands", "99999999999999999999"],
    ["match", "-p", "random,call", "--hands", "9223372036854775808"],   # was an OverflowError
    ["match", "-p", "random,call", "--hands", "1000000000000"],         # was a MemoryError
    ["match", "-p", "random,call", "--hands", "0"],
    ["match", "-p", "random"],                                          # one seat
    ["match", "-p", ",".join(["call"] * 11)],                           # eleven seats
    ["match", "-p", "random,nobody"],                                   # unknown bot
    ["match", "-p", "random,call", "--log-format", "xml", "--log", "x.log"],
    ["match", "-p", "random,call", "--log-format", "phh"],              # dropped silently before
    ["build", "x.log", "-o", "cb", "-j", "99999999999999999999"],
    ["build", "x.log", "-o", "cb", "-j", "0"],
    ["build", "x.log", "-o", "cb", "--log-format", "nope"],
    ["build", "x.log", "-o", "cb", "--feature-set", "nosuch"],           # exited 1, unlike --log-format
    ["build", "x.log", "-o", "cb", "--only-players", "a", "--players", "b"],
    ["hand", "AsKd", "--opponents", "99999999999999999999"],
    ["hand", "AsKd", "--trials", "99999999999999999999"],             # ran 2^64-sized work before
    ["hand", "AsKd", "--seed", "-1"],
    ["hand", "AsKd", "--seed", "18446744073709551616"],
    ["logs", "inspect", "x.log", "--log-format", "acpc", "--format", "phh"],
    ["play", "--acpc", "127.0.0.1:1", "--policy", "nosuchbot"],     # exit 1 before, unlike cbr match
    ["serve-dealer", "-p", "nosuchbot,call", "--port", "0"],
    ["query", "--hole", "AdQc", "--top", "99999999999999999999999"],  # was an internal error (exit 3)
    ["query", "--hole", "AdQc", "--top", "50000000000"],              # was "not enough memory"
])
def test_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    result = cbr(*args)
    usage_error(result)
    assert not (tmp_path / "cb").exists()


#: (a command naming a bot that does not exist, the option its error names): every command that
#: takes bots from a user who may mistype one (``cbr league`` and ``serve-dealer`` are above).
UNKNOWN_BOT = [(["exploit", "nosuchbot", "--hands", "4"], "'POLICY-SPEC'"),
               (["match", "-p", "call,nosuchbot", "--hands", "4"], "'--players'"),
               (["play", "--acpc", "127.0.0.1:1", "--policy", "nosuchbot"], "'--policy'"),
               (["play", "--human", "--bots", "call,nosuchbot"], "'--bots'")]


@pytest.mark.parametrize("args, option", UNKNOWN_BOT, ids=[" ".join(a[:2]) for a, _ in UNKNOWN_BOT])
def test_an_unknown_bot_is_one_error_line_naming_the_known_ones(args: list[str], option: str, tmp_path: Path) -> None:
    """A real ``cbr`` process given a bot that does not exist (the experiment scripts say it the
    same way, docs/experiments.md): exit 2, no traceback, one ``Error:`` line naming the bot and
    every installed one, before any hand (nothing on stdout; ``cbr match``'s log not made)."""
    from cbr.plugins import available

    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    log = tmp_path / "m.log"
    extra = ["--log", str(log)] if args[0] == "match" else []
    p = subprocess.run([sys.executable, "-c", code, *args, *extra], cwd=REPO, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    errors = [line for line in p.stderr.splitlines() if "rror" in line]
    assert errors == [f"Error: Invalid value for {option}: unknown policy 'nosuchbot'; known policies: "
                      f"{', '.join(available('cbr.policies'))}"], p.stderr
    assert not log.exists()


def test_hands_cap_is_the_library_cap() -> None:
    assert _options.MAX_HANDS == MAX_HANDS
    with pytest.raises(GameError, match="hands"):
        run_match(["random", "call"], MAX_HANDS + 1)
    with pytest.raises(GameError, match="hands"):
        run_match(["random", "call"], 9223372036854775808)


def test_match_results_take_no_memory_per_hand() -> None:
    r = run_match(["random", "raise"], 90, seed=2, duplicate=True)
    assert r.hand_payoffs == ()
    kept = run_match(["random", "raise"], 90, seed=2, duplicate=True, keep_payoffs=True)
    assert [p.total for p in r.players] == [p.total for p in kept.players]
    for a, b in zip(r.players, kept.players):
        assert a.sb_per_hand == pytest.approx(b.sb_per_hand, abs=1e-12)
        assert a.sb_ci == pytest.approx(b.sb_ci, rel=1e-9)
    assert len(kept.hand_payoffs) == 90


def test_workers_above_the_cpus_are_reduced_with_a_note(small_log: Path, tmp_path: Path) -> None:
    result = cbr("build", small_log, "-o", tmp_path / "cb", "-j", "200", "--json")
    assert result.exit_code == 0, result.output
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert re.search(rf"--workers 200 reduced to {cpus}\b", result.stderr)
    assert json.loads(result.stdout)["cases"] > 0


@pytest.mark.parametrize("command", [["exploit", "call", "--hands", "4"], ["league", "-b", "call,raise", "--hands", "4"]])
def test_every_command_with_workers_reduces_them_to_the_cpus(command: list[str]) -> None:
    """``cbr exploit`` took ``-j 200`` as given (``build`` and ``league`` reduced it): one rule
    now, ``worker_count``."""
    result = cbr(*command, "-j", "200", "--json")
    assert result.exit_code == 0, result.output
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert re.search(rf"--workers 200 reduced to {cpus}\b", result.stderr), result.stderr
    json.loads(result.stdout)


# ---- exit codes: errors (1), internal errors (3), interrupts -------------------------
def _guarded_app(exc: BaseException) -> typer.Typer:
    probe = typer.Typer()

    @probe.command()
    @_errors.guarded
    def boom() -> None:
        raise exc

    @probe.command()
    @_errors.guarded
    def other() -> None:
        pass

    return probe


@pytest.mark.parametrize(("exc", "code", "start"), [
    (ConfigError("bad config"), 1, "error: bad config"),
    (GameError("no legal hand reaches a pot of 4: change the pot", field="pot"), 1,
     "error: no legal hand reaches a pot of 4: change the pot (--pot)"),
    (GameError("too many bets: change them", field=("to_call", "committed")), 1,
     "error: too many bets: change them (--to-call, --committed)"),
    (GameError("pre-flop has no previous round", field="previous_round_bets"), 1,
     "error: pre-flop has no previous round (--prev-bets)"),
    (FileNotFoundError(2, "No such file or directory", "/no/such/file"), 1,
     "error: /no/such/file: No such file or directory"),
    (IsADirectoryError(21, "Is a directory", "/tmp"), 1, "error: /tmp: Is a directory"),
    (ValueError("not ours"), 3, "internal error: ValueError: not ours (run with --debug"),
    (ZeroDivisionError("division by zero"), 3, "internal error: ZeroDivisionError"),
    (KeyboardInterrupt(), 130, "interrupted"),
    (_errors.Terminated(), 143, "terminated"),
])
def test_guarded_maps_exceptions_to_one_line_and_exit_code(exc: BaseException, code: int, start: str) -> None:
    result = runner.invoke(_guarded_app(exc), ["boom"])
    assert one_error_line(result, code).startswith(start)


def test_debug_shows_the_traceback() -> None:
    _errors.state["debug"] = True
    try:
        result = runner.invoke(_guarded_app(ValueError("not ours")), ["boom"])
    finally:
        _errors.state["debug"] = False
    assert isinstance(result.exception, ValueError)


def test_sigterm_during_a_match_cleans_up_the_log(tmp_path: Path) -> None:
    """SIGTERM of a real `cbr match --log`: one line, exit 143, no log and no temp file."""
    log = tmp_path / "m.log"
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    proc = subprocess.Popen([sys.executable, "-c", code, "match", "-p", "random,call", "-n", "100000000",
                             "--log", str(log)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(p.name.startswith(".m.log.") for p in tmp_path.iterdir()):
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 143, err.decode()
    assert err.decode().strip() == "terminated"
    assert list(tmp_path.iterdir()) == []


def stop_a_long_match(tmp_path: Path, sig: int, *args: str) -> tuple[int, str, str]:
    """A real `cbr match --log` of 10^8 hands, sent ``sig`` once hands have been played (its
    log's temp file has been flushed); returns (exit code, stdout, stderr)."""
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    proc = subprocess.Popen([sys.executable, "-c", code, "match", "-n", "100000000", "--log", str(tmp_path / "m.log"),
                             *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and \
                not any(p.name.startswith(".m.log.") and p.stat().st_size > 0 for p in tmp_path.iterdir()):
            time.sleep(0.05)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, out, err


def test_ctrl_c_during_a_match_prints_the_result_so_far(tmp_path: Path) -> None:
    """Ctrl-C printed only 'interrupted': the result of the hands played comes first (exit 130)."""
    code, out, err = stop_a_long_match(tmp_path, signal.SIGINT, "-p", "random,call")
    assert code == 130 and err.strip() == "interrupted", err
    title = re.search(r"holdem\.limit\.2p: ([0-9]+) hands, seed 0 \(interrupted\)", out)
    assert title and int(title.group(1)) > 0, out
    assert "random" in out and "call" in out and "sb/h" in out and "± 95%" in out
    assert "no log written" in out
    assert list(tmp_path.iterdir()) == []  # the log: whole or not at all


def test_sigterm_during_a_match_prints_the_partial_json(tmp_path: Path) -> None:
    """SIGTERM (exit 143) with --json: the JSON of the whole deals played, flagged interrupted."""
    code, out, err = stop_a_long_match(tmp_path, signal.SIGTERM, "-p", "random,call,lag", "--duplicate", "--json")
    assert code == 143 and err.strip() == "terminated", err
    result = json.loads(out)
    assert result["interrupted"] is True and result["duplicate"] is True
    hands = result["hands"]
    assert hands > 0 and hands % 3 == 0 and result["deals"] == hands // 3
    assert [p["hands"] for p in result["players"]] == [hands] * 3
    assert abs(sum(p["total"] for p in result["players"])) < 1e-9
    assert list(tmp_path.iterdir()) == []


# ---- output paths -------------------------------------------------------------------
def test_log_under_a_regular_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    line = one_error_line(cbr("match", "-p", "random,call", "-n", "2", "--log", tmp_path / "file" / "x.log"))
    assert f"{tmp_path / 'file'} is a file, not a folder" in line
    line = one_error_line(cbr("match", "-p", "random,call", "-n", "2", "--log", "/etc/passwd/x.log"))
    assert "/etc/passwd is a file" in line


def test_build_out_under_a_regular_file_is_one_line(small_log: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    line = one_error_line(cbr("build", small_log, "-o", tmp_path / "file" / "cb"))
    assert f"{tmp_path / 'file'} is a file, not a folder" in line


def test_log_refuses_to_overwrite_without_overwrite(tmp_path: Path) -> None:
    log = tmp_path / "m.log"
    log.write_text("precious\n")
    line = one_error_line(cbr("match", "-p", "random,call", "-n", "3", "--log", log))
    assert str(log) in line and "--overwrite" in line
    assert log.read_text() == "precious\n"
    result = cbr("match", "-p", "random,call", "-n", "3", "--log", log, "--overwrite")
    assert result.exit_code == 0, result.output
    assert log.read_text().count("STATE:") == 3
    assert [p.name for p in tmp_path.iterdir()] == ["m.log"]          # no temp file left


def test_log_does_not_create_missing_folders(tmp_path: Path) -> None:
    log = tmp_path / "a" / "b" / "m.log"
    line = one_error_line(cbr("match", "-p", "random,call", "-n", "2", "--log", log))
    assert f"folder {tmp_path / 'a'} does not exist" in line
    assert not (tmp_path / "a").exists()


def test_log_refuses_a_symlink_and_leaves_it(tmp_path: Path) -> None:
    target = tmp_path / "target.log"
    target.write_text("kept\n")
    link = tmp_path / "link.log"
    link.symlink_to(target)
    for extra in ([], ["--overwrite"]):
        line = one_error_line(cbr("match", "-p", "random,call", "-n", "2", "--log", link, *extra))
        assert "symbolic link" in line
        assert link.is_symlink() and target.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.log", "target.log"]


def test_log_is_written_through_a_named_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as fh:
            received.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    time.sleep(0.1)                                  # the reader has the pipe open
    result = cbr("match", "-p", "random,call", "-n", "4", "--log", fifo)
    reader.join(10)
    assert result.exit_code == 0, result.output
    assert not reader.is_alive()
    text = received[0].decode()
    assert text.startswith("# game: ") and text.count("STATE:") == 4 and "SCORE:" in text
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)        # still a pipe, not replaced by a file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_named_pipe_without_a_reader_is_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    line = one_error_line(cbr("match", "-p", "random,call", "-n", "2", "--log", fifo))
    assert "has no reader" in line and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_devices_are_refused_by_the_check_alone() -> None:
    """Only the read-only check is run against a device node: nothing is written."""
    for dev in ("/dev/null", "/dev/zero"):
        if os.path.exists(dev) and stat.S_ISCHR(os.lstat(dev).st_mode):
            with pytest.raises(OutputPathError, match="device"):
                check_output_path(dev, overwrite=True)


def test_phh_log_folder_is_not_created_under_a_missing_folder(tmp_path: Path) -> None:
    line = one_error_line(cbr("match", "-p", "random,call", "-n", "2", "--log-format", "phh",
                              "--log", tmp_path / "missing" / "hands"))
    assert "does not exist" in line and not (tmp_path / "missing").exists()


#: Every command's output option, as (name, arguments with OUT for the output, folder output?).
OUTPUTS = [
    ("build", ["build", "{log}", "-o", "OUT"], True),
    ("casebase merge", ["casebase", "merge", "default", "default", "-o", "OUT"], True),
    ("abstraction build", ["abstraction", "build", "--kind", "uniform", "--metric", "hs", "--buckets", "2",
                           "--samples", "1", "-o", "OUT"], True),
    ("tune", ["tune", "default", "-g", "1", "--population", "1", "--folds", "2", "--max-decisions", "100",
              "-o", "OUT"], False),
    ("train predictor", ["train", "predictor", "{log}", "--folds", "2", "-o", "OUT"], False),
    ("train network", ["train", "network", "{log}", "--folds", "2", "-o", "OUT"], False),
    ("train cfr", ["train", "cfr", "-a", "h_hs2_4", "-n", "1", "-o", "OUT"], False),
    ("match --log", ["match", "-p", "random,call", "-n", "2", "--log", "OUT"], False),
    ("serve-dealer --log", ["serve-dealer", "-p", "random,call", "-n", "2", "--log", "OUT"], False),
]


def run_with_output(args: list[str], out: Path, small_log: Path):
    return cbr(*[str(out) if a == "OUT" else a.format(log=small_log) for a in args])


@pytest.mark.parametrize("name, args, folder", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_every_output_needs_an_existing_folder(name, args, folder, small_log: Path, tmp_path: Path) -> None:
    """One rule for every -o/--out/--log: a missing folder is an error (exit 1, one line),
    never created; a path under a regular file is an error."""
    line = one_error_line(run_with_output(args, tmp_path / "missing" / "deeper" / "out", small_log))
    assert f"folder {tmp_path / 'missing'} does not exist (create it first)" in line
    assert not (tmp_path / "missing").exists()
    (tmp_path / "file").write_text("kept")
    line = one_error_line(run_with_output(args, tmp_path / "file" / "out", small_log))
    assert f"{tmp_path / 'file'} is a file, not a folder" in line
    assert (tmp_path / "file").read_text() == "kept"


@pytest.mark.parametrize("name, args, folder", [o for o in OUTPUTS if o[0] != "train cfr"],
                         ids=[o[0] for o in OUTPUTS if o[0] != "train cfr"])
def test_every_existing_output_needs_overwrite(name, args, folder, small_log: Path, tmp_path: Path) -> None:
    """An existing output is refused (exit 1, one line naming --overwrite) and left as it was.
    (`train cfr` replaces its own strategy file on --resume: its rule is the trainer's.)"""
    out = tmp_path / "out"
    if folder:
        out.mkdir()
        (out / "note").write_text("kept")
    else:
        out.write_text("kept")
    line = one_error_line(run_with_output(args, out, small_log))
    assert str(out) in line and "--overwrite" in line
    assert (out / "note" if folder else out).read_text() == "kept"


def test_a_case_base_may_go_straight_into_the_casebases_home(small_log: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`-o casebases/NAME` (README's form) works from a folder without ./casebases (the home of
    case bases named by a bare name, as --retain-into NAME makes it); deeper folders do not."""
    monkeypatch.chdir(tmp_path)
    assert cbr("build", small_log, "-o", "casebases/mine").exit_code == 0
    assert (tmp_path / "casebases" / "mine" / "manifest.json").is_file()
    line = one_error_line(cbr("build", small_log, "-o", "elsewhere/mine"))
    assert "folder elsewhere does not exist" in line and not (tmp_path / "elsewhere").exists()


# ---- build --similarity and --game ---------------------------------------------------
def test_similarity_is_checked_before_the_build_and_names_the_file(small_log: Path, tmp_path: Path) -> None:
    bad = tmp_path / "sim.toml"
    bad.write_text("threshold = 0.9\n[[preflop]]\nfeature = 'hand_strength'\nmeasure = 'linear'\n")
    t0 = time.perf_counter()
    line = one_error_line(cbr("build", small_log, "-o", tmp_path / "cb", "--similarity", bad))
    assert str(bad) in line and ".building-" not in line
    assert not (tmp_path / "cb").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["sim.toml"]
    from cbr.similarity.config import default_casper

    wrong = tmp_path / "wrong.toml"                  # a valid config for other features
    text = default_casper().to_toml().replace("'previous_round_bets'", "'prev'").replace(
        '"previous_round_bets"', '"prev"')
    wrong.write_text(text)
    line = one_error_line(cbr("build", small_log, "-o", tmp_path / "cb", "--similarity", wrong))
    assert str(wrong) in line
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert str(binary) in one_error_line(cbr("build", small_log, "-o", tmp_path / "cb", "--similarity", binary))
    assert str(tmp_path) in one_error_line(cbr("build", small_log, "-o", tmp_path / "cb", "--similarity", tmp_path))
    assert time.perf_counter() - t0 < 60


def test_good_similarity_file_is_used(small_log: Path, tmp_path: Path) -> None:
    from cbr.similarity.config import default_casper

    cfg = default_casper()
    good = tmp_path / "sim.toml"
    good.write_text(cfg.to_toml().replace("threshold = 0.97", "threshold = 0.9"))
    result = cbr("build", small_log, "-o", tmp_path / "cb", "--similarity", good, "--json")
    assert result.exit_code == 0, result.output
    from cbr.similarity import SimilarityConfig

    saved = SimilarityConfig.from_toml(next((tmp_path / "cb").glob("*.toml")))
    assert saved.threshold == 0.9


def test_game_accepts_inline_json_and_names_bad_files(tmp_path: Path) -> None:
    from cbr.game.gamedef import preset

    g = preset("holdem.limit.2p")
    inline = json.dumps(g.to_dict())
    assert load_game(inline) == g
    assert load_game("  " + inline) == g
    f = tmp_path / "g.json"
    f.write_text(inline)
    assert load_game(str(f)) == g
    cases = {
        "bad.json": b"{not json",
        "list.json": b"[1, 2]",
        "empty.json": b"{}",
        "latin1.game": b"GAMEDEF\n\xe9\xe9\n",
        "nonsense.game": b"GAMEDEF\nlimit\nnumPlayers = banana\n",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(ConfigError) as info:
            load_game(str(p))
        assert str(p) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="directory"):
        load_game(str(tmp_path))
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_game("{oops")
    with pytest.raises(ConfigError, match="unknown game"):
        load_game("no.such.preset")


def test_library_errors_name_fields_and_the_cli_names_the_options(tmp_path: Path) -> None:
    """Library messages said ``--pot`` (and the server rewrote them with a regex): now they
    carry the field by its library name and name no option; the command line adds its own."""
    with pytest.raises(ConfigError) as info:
        load_game("{oops")
    assert info.value.field == "game" and "--" not in str(info.value)
    assert _errors.error_line(info.value).endswith("(--game)")
    (tmp_path / "old.log").write_text("x")
    with pytest.raises(OutputPathError) as info:
        check_output_path(tmp_path / "old.log")
    assert info.value.field == "overwrite" and "--" not in str(info.value)
    assert _errors.error_line(info.value).endswith("; overwrite to replace it (--overwrite)")


def _library_fields() -> dict[str, str]:
    """Every literal ``field=`` a library module (outside ``cbr/cli`` and ``cbr/serve``) gives
    an error, with where."""
    import ast

    found: dict[str, str] = {}
    for path in sorted((REPO / "cbr").rglob("*.py")):
        if path.parts[len(REPO.parts) + 1] in ("cli", "serve"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "field":  # GameError(..., field="pot")
                value = node.value
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "fields"
                                                      for t in node.targets):  # exc.fields = ("game",)
                value = node.value
            else:
                continue
            for v in ast.walk(value):
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    found.setdefault(v.value, f"{path.relative_to(REPO)}:{value.lineno}")
    from cbr.game.situation import _OPTION  # the situation's fields are given by name

    for name in _OPTION:
        found.setdefault(name, "cbr/game/situation.py")
    return found


def test_every_field_of_a_library_error_has_its_option() -> None:
    """The one table of the command line names an option for every field the library's
    errors carry (a field it did not know would print without its option)."""
    fields = _library_fields()
    assert {"pot", "to_call", "previous_round_bets", "game", "overwrite", "dealt"} <= set(fields)
    assert {f: where for f, where in fields.items() if f not in _errors.OPTION_OF_FIELD} == {}


def test_query_takes_inline_json_game() -> None:
    inline = json.dumps(load_game("holdem.limit.2p").to_dict())
    result = cbr("query", "--game", inline, "--matchstate", "MATCHSTATE:1:0::|AsKs", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["street"] == "preflop"


# ---- option names and help ------------------------------------------------------------
def test_only_players_and_its_hidden_alias(small_log: Path, tmp_path: Path) -> None:
    a = cbr("build", small_log, "-o", tmp_path / "a", "--only-players", "call", "--json")
    b = cbr("build", small_log, "-o", tmp_path / "b", "--players", "call", "--json")
    assert a.exit_code == 0 and b.exit_code == 0, a.output + b.output
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert ja["cases"] == jb["cases"] > 0
    full = json.loads(cbr("build", small_log, "-o", tmp_path / "c", "--json").stdout)
    assert ja["cases"] < full["cases"]


def _option_names(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", help_text))


@pytest.mark.parametrize(("command", "shown", "hidden"), [
    (["build"], {"--only-players", "--log-format", "--workers", "--similarity", "--json"}, {"--players", "--format"}),
    (["match"], {"--players", "--log-format", "--log", "--overwrite", "--hands"}, {"--format"}),
    (["logs", "inspect"], {"--log-format"}, {"--format"}),
    (["hand"], {"--opponents"}, {"-n"}),
    (["league"], {"--players", "-p", "--gauntlet"}, {"--bots", "-b"}),
    (["play"], {"--players", "-p", "--policy", "--human"}, {"--bots"}),
])
def test_help_shows_the_new_names_only(command: list[str], shown: set[str], hidden: set[str]) -> None:
    text = cbr(*command, "--help").stdout
    names = _option_names(text)
    assert shown <= names, names
    assert not (hidden & names), hidden & names


def _commands(command, path: tuple[str, ...] = ()):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, path + (name,))


def test_every_log_format_option_has_the_same_short_form() -> None:
    """`build` had no -f for --log-format while `logs inspect` and `players build` had; and
    no command takes -f for anything else."""
    takers = []
    for path, command in _commands(typer.main.get_command(app)):
        for param in getattr(command, "params", []):
            names = set(param.opts) | set(param.secondary_opts)
            if "--log-format" in names:
                assert "-f" in names, path
                takers.append(" ".join(path))
            else:
                assert "-f" not in names, (path, param.opts)
    assert {"build", "match", "logs inspect", "logs stats", "players build", "train predictor",
            "train network"} <= set(takers), takers
    r = cbr("build", "nowhere.log", "-o", "x", "-f", "nosuch")
    assert r.exit_code == 2 and "nosuch" in r.output


def test_json_is_shown_as_a_flag_and_help_fits_80_columns() -> None:
    for command in (["--help"], ["match", "--help"], ["build", "--help"], ["hand", "--help"],
                    ["logs", "inspect", "--help"], ["plugins", "list", "--help"], ["query", "--help"]):
        text = cbr(*command, env={"COLUMNS": "80"}).stdout
        assert "<bool>" not in text, command
        assert max(len(line) for line in text.splitlines()) <= 80, command
    assert re.search(r"^\s+--json\s+Print", cbr("match", "--help").stdout, re.M)


def test_version() -> None:
    result = cbr("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"cbr {version('cbr-holdem')}"


# ---- tables --------------------------------------------------------------------------
def test_match_table_keeps_every_number_in_80_columns() -> None:
    args = ["match", "-p", "random,raise,call,random,raise,call,lag,random,call,raise", "-n", "20", "--seed", "4"]
    data = json.loads(cbr(*args, "--json").stdout)
    text = cbr(*args, env={"COLUMNS": "80"}).stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    for p in data["players"]:
        assert f"{p['total']:+,.0f}" in text and f"{p['sb_per_hand']:+.3f}" in text
        assert f"{p['mbb_per_hand']:+,.0f}" in text and f"{p['mbb_ci']:,.0f}" in text  # 1,000 on: grouped
    assert "…" not in text


def test_wide_tables_split_instead_of_cropping() -> None:
    from rich.console import Console

    numbers = [123456.789 * (i + 1) for i in range(12)]
    table = _output.rich_table("t", ["feature", *(f"c{i}" for i in range(12))], [["hand_strength", *numbers]], width=80)
    console = Console(width=80, record=True, file=open(os.devnull, "w"))
    console.print(table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    for x in numbers:
        assert f"{x:.4g}" in text
    assert "…" not in text and text.count("hand_strength") >= 2


def _rendered(table, width: int) -> str:
    from rich.console import Console

    console = Console(width=width, record=True, file=open(os.devnull, "w"))
    console.print(table)
    return console.export_text()


def _whole(text: str, width: int) -> bool:
    """No line wider than ``width``, nothing elided, every table closed on its right edge."""
    lines = text.splitlines()
    return (max(len(line) for line in lines) <= width and "…" not in text
            and all(line.rstrip()[-1] in "┓┃┩│┘" for line in lines if line[:1] in "┏┃┡│└"))


@pytest.mark.parametrize("width", [40, 80, 120])
def test_numbers_survive_headers_wider_than_the_table(width: int) -> None:
    """Random tables (seeded): headers of every length, up to twice the width, over numbers and
    text; every number is printed whole, nothing is cropped or elided."""
    import random

    rng = random.Random(width)
    for _ in range(300):
        n = rng.randint(1, 7)
        heads = ["h" * rng.randint(1, 2 * width) for _ in range(n)]
        kinds = ["n" if rng.random() < 0.6 else "t" for _ in range(n)]
        rows = [[rng.randint(0, 10 ** rng.randint(1, 9)) if k == "n" else "t" * rng.randint(1, 90) for k in kinds]
                for _ in range(rng.randint(1, 3))]
        text = _rendered(_output.rich_table("t", heads, rows, width=width), width)
        assert _whole(text, width), (heads, rows, text)
        for row in rows:
            for value, kind in zip(row, kinds):
                assert kind == "t" or str(value) in text, (value, heads, text)


@pytest.mark.parametrize("width", [40, 80, 133])
def test_plain_tables_are_the_text_rich_prints(width: int) -> None:
    """`cbr query` writes its tables without rich when they need no folding: random tables
    (seeded; numbers, scores with ``±``, cards, words, a title or none) are either left to
    rich (None) or exactly the text rich prints for them; most of them are plain."""
    import random

    rng = random.Random(width)
    plain = 0
    for _ in range(400):
        n = rng.randint(1, 9)
        heads = [rng.choice(["id", "similarity", "source#hand", "h" * rng.randint(1, 30), "#68665"]) for _ in range(n)]
        kinds = [rng.choice("nstc") for _ in range(n)]

        def value(kind: str) -> object:
            if kind == "n":
                return rng.choice([rng.randint(0, 10 ** rng.randint(1, 9)), rng.random() * 10 ** rng.randint(-3, 4)])
            if kind == "s":
                return f"{rng.random():.3f} ± {rng.random() / 10:.3f}"
            if kind == "c":
                return rng.choice(["AdQc", "3h4cJh", "-", "rc/r", "", None])
            return rng.choice(["t" * rng.randint(1, 40), "hu-simbot-lag.log#417", "0.5 ~0.998", "two words"])

        rows = [[value(k) for k in kinds] for _ in range(rng.randint(0, 6))]
        title = rng.choice([None, "t", "top 5 cases (id: case_id in the SQL tables)", "x" * rng.randint(1, 150)])
        text = _output.plain_table(title, heads, rows, width=width)
        if text is None:
            continue
        plain += 1
        assert text == _rendered(_output.rich_table(title, heads, rows, width=width), width), (title, heads, rows)
    assert plain >= 100


def test_plain_tables_leave_wide_and_multi_line_cells_to_rich() -> None:
    assert _output.plain_table(None, ["hole"], [["A\u2660K\u2660"]], width=80) is not None   # narrow symbols
    assert _output.plain_table(None, ["name"], [["\u6f22\u5b57"]], width=80) is None          # wide characters
    assert _output.plain_table(None, ["note"], [["two\nlines"]], width=80) is None
    assert _output.plain_table(None, ["text"], [["t" * 100]], width=80) is None                 # must fold
    assert _output.plain_table("a title wider than the line " * 3, ["id"], [[1]], width=80) is None   # rich wraps it
    # a title wider than its table: a line of its own, as long as it is (rich padded it to the table's width)
    assert _output.plain_table("a title wider than its table", ["id"], [[1]], width=80).splitlines()[0] == \
        "a title wider than its table"


@pytest.mark.parametrize("sql", [
    "SELECT count(*) AS a_very_long_column_name_indeed_for_the_number_of_cases_in_the_whole_case_base FROM cases",
    "SELECT street, count(*) AS a_very_long_column_name_indeed_for_the_number_of_cases_on_each_street, "
    "avg(hand_strength) AS mean_hand_strength FROM cases GROUP BY street ORDER BY street",
    "SELECT street AS the_street_of_the_cases_counted_with_a_name_long_enough_to_fill_a_line, "
    "count(*) AS a_very_long_column_name_indeed FROM cases GROUP BY street ORDER BY street",
])
def test_sql_numbers_print_under_long_headers_at_80_columns(sql: str) -> None:
    """`cbr casebase inspect --sql`: a number column whose header is wider than the room left
    prints every number whole at 80 columns (it used to print blanks or cut digits)."""
    rows = json.loads(cbr("casebase", "inspect", "default", "--sql", sql, "--json").stdout)
    result = cbr("casebase", "inspect", "default", "--sql", sql, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert _whole(result.stdout, 80), result.stdout
    numbers = [v for row in rows for v in row.values() if isinstance(v, (int, float))]
    assert numbers
    for v in numbers:
        assert (f"{v:.4g}" if isinstance(v, float) else str(v)) in result.stdout, (v, result.stdout)


# ---- start-up -------------------------------------------------------------------------
HEAVY = ("numpy", "faiss", "duckdb", "pyarrow", "rich", "sklearn")


def test_help_imports_no_heavy_library() -> None:
    code = ("import sys; from cli import app\n"
            "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_hand_trials_range_is_the_evaluator_cap() -> None:
    """`cbr hand --trials` refuses what the evaluator would refuse, as a usage error (exit 2)."""
    import evaluator_ext
    from cbr.cli import _options

    assert _options.MAX_TRIALS == evaluator_ext.MAX_TRIALS
    result = cbr("hand", "AhKd", "--trials", str(evaluator_ext.MAX_TRIALS + 1))
    assert result.exit_code == 2, result.output


def test_a_match_stopped_before_its_first_hand_shows_no_infinite_ci(capsys) -> None:
    """A match stopped during its first hand printed `± inf` in both CI columns."""
    import math

    from cbr.cli.play import _print_match
    from cbr.game.gamedef import preset
    from cbr.play.match import MatchResult, PlayerResult

    seats = tuple(PlayerResult(n, n, 0, 0.0, 0.0, math.inf, 0.0, math.inf) for n in ("cfr", "raise"))
    _print_match(MatchResult(preset("holdem.limit.2p"), seats, 0, 0, True, 3, interrupted=True), 3, False)
    out = capsys.readouterr().out
    assert "inf" not in out and out.count("n/a") == 4 and "(interrupted)" in out
