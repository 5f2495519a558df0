"""Learning curves: `MatchResult.curves` and `cbr match --plot` (a real PNG, also after Ctrl-C)."""
from __future__ import annotations

import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from cbr.play.match import run_match
from cli import app
from tests.conftest import REPO, default_sigint

runner = CliRunner()
PNG = b"\x89PNG\r\n\x1a\n"


def test_curves_end_at_the_match_result_with_its_confidence_interval():
    for duplicate in (False, True):
        r = run_match(["ehs", "call", "lag"], 30, seed=2, duplicate=duplicate, keep_payoffs=True)
        curves = r.curves()
        assert list(curves) == ["ehs", "call", "lag"]
        points = r.deals if duplicate else r.hands
        for p in r.players:
            total, half = curves[p.name]
            assert len(total) == len(half) == points
            assert math.isclose(total[-1], p.total / r.game.small_bet, abs_tol=1e-9)
            assert math.isclose(half[-1], p.sb_ci * r.hands)   # the CI of the mean, scaled to the total
            assert math.isinf(half[0]) and all(math.isfinite(h) for h in half[1:])
    assert run_match(["call", "raise"], 5).curves() == {}        # nothing kept, nothing drawn


def test_match_plot_writes_a_png(tmp_path: Path):
    plot = tmp_path / "curve.png"
    result = runner.invoke(app, ["match", "-p", "ehs,call", "-n", "40", "--duplicate", "--plot", str(plot)])
    assert result.exit_code == 0, result.output
    assert f"plot written to {plot}" in result.output
    data = plot.read_bytes()
    assert data.startswith(PNG) and len(data) > 5000
    result = runner.invoke(app, ["match", "-p", "ehs,call", "-n", "4", "--plot", str(plot)])
    assert result.exit_code == 1 and "already exists" in result.output and plot.read_bytes() == data
    result = runner.invoke(app, ["match", "-p", "ehs,call", "-n", "4", "--plot", str(plot), "--overwrite", "--json"])
    assert result.exit_code == 0 and plot.read_bytes() != data and result.output.lstrip().startswith("{")


def test_plot_option_refusals(tmp_path: Path):
    assert runner.invoke(app, ["match", "-p", "ehs,call", "-n", "4", "--overwrite"]).exit_code == 2
    assert runner.invoke(app, ["match", "-p", "ehs,call", "-n", "4", "--plot", str(tmp_path / "a.svg")]).exit_code == 2
    result = runner.invoke(app, ["match", "-p", "ehs,call", "-n", "4", "--plot", str(tmp_path / "no" / "a.png")])
    assert result.exit_code == 1 and list(tmp_path.iterdir()) == []


def test_ctrl_c_draws_the_hands_finished(tmp_path: Path):
    plot = tmp_path / "c.png"
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    proc = subprocess.Popen([sys.executable, "-c", code, "match", "-p", "random,call", "-n", "100000000",
                             "--plot", str(plot)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=default_sigint)
    try:
        time.sleep(4.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err.strip() == "interrupted", err
    assert re.search(r"[0-9]+ hands, seed 0 \(interrupted\)", out) and f"plot written to {plot}" in out
    assert plot.read_bytes().startswith(PNG)


def test_without_matplotlib_plot_is_one_line_before_any_hand(tmp_path: Path):
    """matplotlib hidden (a module that fails to import): --plot is refused in one line naming the
    plots extra, exit 1, before the match is played; without --plot the match still runs."""
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('hidden for the test')\n")
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    env = {**__import__("os").environ, "PYTHONPATH": f"{fake}:{REPO}"}
    for args in (["match", "-p", "ehs,call", "-n", "100000000"], ["logs", "stats", str(REPO), "--top", "1"],
                 ["league", "--bots", "ehs,call", "-n", "100000000"]):
        p = subprocess.run([sys.executable, "-c", code, *args, "--plot", str(tmp_path / "x.png")], cwd=REPO,
                           capture_output=True, text=True, env=env, timeout=60)
        assert p.returncode == 1 and p.stderr.strip() == "error: --plot needs matplotlib: pip install " \
                                                         "'cbr-holdem[plots]'", (args, p.stderr)
        assert not (tmp_path / "x.png").exists()
    p = subprocess.run([sys.executable, "-c", code, "match", "-p", "ehs,call", "-n", "4"], cwd=REPO,
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr


def test_curves_start_at_zero_and_one_point_is_drawn(monkeypatch, tmp_path):
    """The curves started at the first hand's result (a one-hand match drew an empty chart); more
    than ten lines repeated colours that looked alike."""
    from cbr.cli import _plot

    figs = []
    monkeypatch.setattr(_plot, "_save", lambda fig, path: figs.append(fig))
    _plot.plot_cumulative(str(tmp_path / "a.png"), {"a": [4.0], "b": [-4.0]}, title="t", xlabel="x", ylabel="y")
    lines = figs[0].axes[0].get_lines()
    a = next(ln for ln in lines if ln.get_label() == "a")
    assert list(a.get_xdata()) == [0, 1] and list(a.get_ydata()) == [0.0, 4.0] and a.get_marker() == "o"
    _plot.plot_cumulative(str(tmp_path / "b.png"), {f"p{i}": [1.0, 2.0] for i in range(12)}, title="t", xlabel="x",
                          ylabel="y")
    looks = {(ln.get_color(), ln.get_linestyle()) for ln in figs[1].axes[0].get_lines() if ln.get_label().startswith("p")}
    assert len(looks) == 12
