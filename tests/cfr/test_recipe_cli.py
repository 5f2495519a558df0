"""Issue 37 tooling: the MCCFR recipes' command lines as a first-time user meets them
(casebases/build_cfr_big.py, casebases/build_cfr_emd.py), and the scripts beside them
(experiments/cfr_curve.py's plot, bench/bench_pcs.py lbr).

Bad values are usage errors (exit 2) naming the valid range, other refusals one ``error:``
line (exit 1), never a traceback; a start that fails or is stopped leaves nothing it made (a
folder made by the user stays, holding what it held); a SIGTERM or Ctrl-C while the
abstraction is built is one line and exit 143 or 130. The recipes run as real commands in
subprocesses where the command line's behaviour is the point; every folder is under tmp_path.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, default_sigint, lines_until, require_native, run_on_a_terminal

require_native(module_level=True)

from casebases import build_cfr_big, build_cfr_emd  # noqa: E402
from tests.cfr.conftest import FOUR  # noqa: E402


def command(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    """The ``error:`` line of a refused run (exit 1), checked to be its only one and no traceback."""
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and r.stderr.strip().splitlines()[-1] == errors[0], r.stderr
    return errors[0]


def test_an_out_that_is_a_file_or_cannot_be_made_is_one_error_line(tiny, tmp_path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    r = command("casebases.build_cfr_big", "--out", str(a_file), "--abstraction", str(tiny), *FOUR, "--minutes", "1")
    assert one_error_line(r) == f"error: {a_file}: a file, not a run folder: give another --out"
    assert a_file.read_text() == "mine\n"
    r = command("casebases.build_cfr_big", "--out", "/proc/cbr-no-such/run", "--abstraction", str(tiny), *FOUR,
                "--minutes", "1")
    assert one_error_line(r) == ("error: /proc/cbr-no-such/run: cannot make this folder (No such file or directory): "
                                 "give another --out")
    r = command("casebases.build_cfr_emd", "--out", str(a_file), "--buckets", "4", "--threads", "1",
                "--iterations", "10")
    assert one_error_line(r) == f"error: {a_file}: a file, not a folder: give another --out"
    assert a_file.read_text() == "mine\n"


@pytest.mark.parametrize("module", ["casebases.build_cfr_big", "casebases.build_cfr_emd"])
@pytest.mark.parametrize("option, value, valid", [
    ("--threads", "0", "give 1 or more"),
    ("--seed", "-1", "give 0 or more"),
    ("--minutes", "-5", "give 0 or more"),
    ("--iterations", "-1", "give 0 or more"),
])
def test_bad_shared_values_are_usage_errors_naming_the_range(module, option, value, valid, tmp_path, capsys) -> None:
    run = tmp_path / "run"
    main = {"casebases.build_cfr_big": build_cfr_big.main, "casebases.build_cfr_emd": build_cfr_emd.main}[module]
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(run), "--minutes", "1", "--threads", "1", option, value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {option}: {value} is out of range: {valid}" in err.strip().splitlines()[-1]
    assert not run.exists()


@pytest.mark.parametrize("option, value, said", [
    ("--minutes", "-1", "give 0 or more (0: no limit)"),
    ("--checkpoint-minutes", "-1", "give 0 or more (0: only at the end)"),
    ("--snapshot-minutes", "-0.5", "give 0 or more (0: none)"),
    ("--max-gb", "-2", "give more than 0"),
    ("--max-gb", "0", "give more than 0"),  # accepted once, then every run refused as over the limit
    ("--max-gb", "nan", "give more than 0"),
    ("--flop", "-3", "give 1 or more"),
    ("--fit-boards", "0", "give 1 or more"),
    ("--clusters", "0", "give 1 or more"),
])
def test_the_long_runs_bad_values_are_usage_errors_and_make_nothing(option, value, said, tiny, tmp_path,
                                                                    capsys) -> None:
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as stop:
        build_cfr_big.main(["--out", str(run), "--abstraction", str(tiny), *FOUR, "--iterations", "1000",
                            option, value])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        f": error: argument {option}: {value} is out of range: {said}")
    assert not run.exists()


def test_a_bad_abstraction_is_refused_before_anything_is_made(tiny, tmp_path) -> None:
    run = tmp_path / "run"
    missing = tmp_path / "none.npz"
    r = command("casebases.build_cfr_big", "--out", str(run), "--abstraction", str(missing), *FOUR, "--minutes", "1")
    assert one_error_line(r).startswith(f"error: {missing}: no abstraction here")
    assert not run.exists()
    r = command("casebases.build_cfr_big", "--out", str(run), "--abstraction", str(tiny), "--flop", "8", "--turn", "4",
                "--river", "4", "--threads", "1", "--minutes", "1")  # built with 4 flop buckets, not 8
    assert one_error_line(r).startswith(f"error: {tiny}: this abstraction was built with --flop 4 ")
    assert not run.exists()


def test_a_failed_start_in_the_users_folder_removes_only_what_it_made(tiny, tmp_path) -> None:
    """A folder the user made (for the log, as the docs' command does) holding a torn
    abstraction: refused in one line; the folder, the log and the file stay, the lock goes."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("earlier\n")
    (run / "abstraction.npz").write_bytes(tiny.read_bytes()[:1000])
    r = command("casebases.build_cfr_big", "--out", str(run), *FOUR, "--minutes", "1")
    assert one_error_line(r).startswith(f"error: {run / 'abstraction.npz'}: not a readable abstraction")
    assert sorted(p.name for p in run.iterdir()) == ["abstraction.npz", "train.log"]
    assert (run / "train.log").read_text() == "earlier\n"


def stop_the_build(args: list[str], sig: int, module: str = "casebases.build_cfr_big") -> tuple[int, str]:
    """Start a recipe that builds its abstraction (a minute at 4 buckets), send ``sig`` once it
    says it is building, and return its exit code and stderr."""
    proc = subprocess.Popen([sys.executable, "-m", module, *args], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        assert proc.stderr is not None
        lines = lines_until(proc.stderr, "building the abstraction")
        time.sleep(1.0)  # inside the build
        assert proc.poll() is None
        proc.send_signal(sig)
        rest = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + rest


def test_sigterm_while_building_the_abstraction_says_so_and_leaves_nothing(tmp_path) -> None:
    run = tmp_path / "runs" / "run"
    code, err = stop_the_build(["--out", str(run), *FOUR, "--fit-boards", "10", "--minutes", "1"], signal.SIGTERM)
    assert code == 143, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == ("stopped by SIGTERM while building the abstraction: nothing to resume; "
                                            "run the same command again to start over")
    assert not (tmp_path / "runs").exists()  # the folders it made, and nothing else
    assert sorted(tmp_path.iterdir()) == []


def test_ctrl_c_while_building_in_the_users_folder_keeps_the_folder_and_its_log(tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("earlier\n")
    code, err = stop_the_build(["--out", str(run), *FOUR, "--fit-boards", "10", "--minutes", "1"], signal.SIGINT)
    assert code == 130, err
    assert err.strip().splitlines()[-1].startswith("stopped by SIGINT while building the abstraction: ")
    assert sorted(p.name for p in run.iterdir()) == ["train.log"]


def test_the_teacher_recipe_stopped_while_building_says_so_and_removes_its_new_folder(tmp_path) -> None:
    out = tmp_path / "emd"
    code, err = stop_the_build(["--out", str(out), "--buckets", "4", "--threads", "1", "--iterations", "10"],
                               signal.SIGTERM, module="casebases.build_cfr_emd")
    assert code == 143, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == ("stopped by SIGTERM while building the abstraction: nothing to resume; "
                                            "run the same command again to start over")
    assert not out.exists()


def test_help_shows_the_defaults_and_true_sampling_advice(capsys) -> None:
    with pytest.raises(SystemExit):
        build_cfr_big.main(["--help"])
    out = capsys.readouterr().out
    entries = {" ".join(e.split()).split(" ")[0]: " ".join(e.split()) for e in out.split("\n  -")[1:]}
    for option, default in (("-flop", "2000"), ("-checkpoint-minutes", "10.0"), ("-snapshot-minutes", "15.0"),
                            ("-max-gb", "20.0"), ("-threads", "2"), ("-minutes", "0.0"), ("-sampling", "external")):
        assert entries[option].endswith(f"(default: {default})"), entries[option]
    big = " ".join(out.split())
    assert "(default: )" not in big
    assert "7,854 to 8,820 measured: scale --iterations down by as much; the minutes count time" in big
    assert "5,000" not in big
    with pytest.raises(SystemExit):
        build_cfr_emd.main(["--help"])
    emd = " ".join(capsys.readouterr().out.split())
    assert "(default: 256)" in emd and "(default: 10000000)" in emd
    assert "scale --iterations, --checkpoint- every and --snapshot-every down by as much" in emd


def test_the_curve_reaches_below_zero_and_names_its_x_axis(tmp_path) -> None:
    from experiments import cfr_curve
    points = [{"iterations": 20_000, "training_hours": 0.01, "mbb": 40.0, "ci": 95.0, "hands": 20},
              {"iterations": 40_000, "training_hours": 0.02, "mbb": -30.0, "ci": 80.0, "hands": 20}]
    drawn = cfr_curve.plot(points, tmp_path / "c.png", title="t")
    assert drawn["ylim"][0] < -110.0  # the lower band, -30 - 80, is shown
    assert drawn["ylim"][1] > 324.0  # the teacher's band
    assert drawn["xlabel"] == "training hours (the trainer's clock: wall time spent training, summed over sessions)"
    assert (tmp_path / "c.png").stat().st_size > 10_000


def test_the_curve_without_matplotlib_stops_at_once_saying_how_to_install_it(tmp_path) -> None:
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n\nclass _NoPlots:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'matplotlib' or name.startswith('matplotlib.'):\n"
        "            raise ImportError(f'No module named {name!r} (hidden for the test)')\n"
        "        return None\n\nsys.meta_path.insert(0, _NoPlots())\n")
    run = tmp_path / "run"
    run.mkdir()
    r = subprocess.run([sys.executable, "experiments/cfr_curve.py", str(run), "--results", str(tmp_path / "res")],
                       cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(hide)})
    assert r.returncode == 1
    assert r.stderr.strip() == 'error: the plot needs matplotlib: pip install -e ".[plots]"'
    assert not (tmp_path / "res").exists()


def test_bench_pcs_lbr_of_a_folder_that_is_no_strategy_fails(tmp_path) -> None:
    r = subprocess.run([sys.executable, "bench/bench_pcs.py", "lbr", str(tmp_path / "none"), "--hands", "10"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert r.stdout == ""
    assert r.stderr.strip().splitlines() == [r.stderr.strip()]
    assert r.stderr.startswith(f"error: {tmp_path / 'none'}: cbr exploit exited 1: ")
    assert "no such strategy" in r.stderr


# ---- a progress bar while the abstraction is built (a minute and more at 4 buckets) -------------
def test_building_the_abstraction_shows_its_phases_on_a_terminal(tmp_path) -> None:
    """The fit of each street, then the bucketing of every flop and turn, each with its bar and
    count (it showed nothing for 80 s); a SIGTERM mid-bar still ends in the one line, promptly."""
    run = tmp_path / "run"
    started = time.monotonic()
    code, _, shown = run_on_a_terminal(["--out", str(run), *FOUR, "--fit-boards", "10", "--minutes", "1"],
                                       module="casebases.build_cfr_big", sig=signal.SIGTERM,
                                       stop=lambda text: "flop buckets" in text and "/1,755" in text)
    assert code == 143, shown
    for phase in ("flop fit", "turn fit", "river fit"):
        assert f"{phase} " in shown and "10/10" in shown, shown
    assert "━" in shown and "/1,755" in shown, shown
    assert shown.strip().splitlines()[-1].strip() == ("stopped by SIGTERM while building the abstraction: nothing to "
                                                      "resume; run the same command again to start over"), shown
    assert time.monotonic() - started < 100  # the 16,432 turn boards were not bucketed after the signal


def test_quiet_builds_without_a_bar(tmp_path) -> None:
    run = tmp_path / "run"
    code, _, shown = run_on_a_terminal(["--out", str(run), *FOUR, "--fit-boards", "10", "--minutes", "1", "--quiet"],
                                       module="casebases.build_cfr_big", sig=signal.SIGTERM,
                                       stop=lambda text: "building the abstraction" in text, wait=4.0)
    assert code == 143, shown
    assert "━" not in shown and " fit " not in shown and "buckets " not in shown.split("\n", 1)[1], shown


def test_the_bar_is_drawn_only_on_a_terminal() -> None:
    """Off a terminal (a log, a pipe) the bar draws nothing: the recipe's lines stay as they were."""
    import io

    bar = build_cfr_emd.ProgressBar(stream=io.StringIO())
    bar("flop fit", 3, 10)
    bar.close()
    assert bar.stream.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    drawn = build_cfr_emd.ProgressBar(stream=Terminal())
    drawn("turn buckets", 200, 16_432)
    drawn("turn buckets", 16_432, 16_432)
    drawn.close()
    text = drawn.stream.getvalue()
    assert "turn buckets " in text and "200/16,432" in text and "16,432/16,432" in text and text.endswith("\r\x1b[2K")
    quiet = build_cfr_emd.ProgressBar(enabled=False, stream=Terminal())
    quiet("turn buckets", 200, 16_432)
    assert quiet.stream.getvalue() == ""
