"""`cbr train cfr` and the files it writes (issue 16, defects 1 and 7): the installed package
is never written, an existing strategy or checkpoint is replaced only with --overwrite, and
Ctrl-C says which checkpoint --resume continues from."""
from __future__ import annotations

import hashlib
import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cbr.abstraction import BUCKET_GAME_FILE, Abstraction
from cbr.cfr.strategy import SHIPPED_STRATEGY, load_strategy, train
from cbr.errors import OutputPathError
from tests.conftest import default_sigint

SHIPPED_DIR = SHIPPED_STRATEGY.parent


def _cbr(*args: str, cwd: Path | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("cbr")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def _tree_digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (names and SHA-256 of the bytes)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def abs2(tmp_path_factory) -> Path:
    """A real (small) abstraction directory of the user's: thresholds and the bucket game."""
    path = tmp_path_factory.mktemp("abs") / "u2"
    a = Abstraction.build("uniform", "hs", n_buckets=2, samples=0, seed=0)
    a.save(path)
    a.bucket_game(3, seed=1).save(path / BUCKET_GAME_FILE)
    return path


def test_the_help_examples_never_write_inside_the_package(tmp_path: Path) -> None:
    shipped_files = SHIPPED_DIR.parent  # casebases/cfr/: the shipped abstractions and strategies
    before = _tree_digest(shipped_files)
    shipped_iterations = load_strategy(SHIPPED_STRATEGY).info["iterations"]
    # the example of issue 16 (no --out), then the example the help shows now
    r = _cbr("train", "cfr", "-a", "h_hs2_4", "-n", "2", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert Path(report["strategy"]) == tmp_path / "cfr.holdem.limit.2p.npz"
    assert Path(report["checkpoint"]).parent == tmp_path
    help_text = _cbr("train", "cfr", "--help").stdout
    example = re.search(r"Example: cbr (train cfr .*)", help_text)
    assert example, help_text
    r = _cbr(*shlex.split(example.group(1)), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert _tree_digest(shipped_files) == before
    assert load_strategy(SHIPPED_STRATEGY).info["iterations"] == shipped_iterations
    # the strategy written in the current directory plays, with the shipped abstraction
    mine = load_strategy(tmp_path / "cfr.holdem.limit.2p.npz")
    assert mine.info["iterations"] == 2 and mine.abstraction.fingerprint == Abstraction.load(SHIPPED_DIR).fingerprint


def test_an_out_path_inside_the_package_is_refused(tmp_path: Path) -> None:
    before = _tree_digest(SHIPPED_DIR)
    target = SHIPPED_DIR / "mine.npz"
    r = _cbr("train", "cfr", "-a", "h_hs2_4", "-n", "2", "-o", str(target), cwd=tmp_path)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "inside the installed package" in r.stderr
    assert not target.exists() and _tree_digest(SHIPPED_DIR) == before
    from cbr.cfr.strategy import default_output, inside_package

    assert inside_package(SHIPPED_STRATEGY) and not inside_package(tmp_path / "x.npz")
    assert default_output(SHIPPED_DIR, "holdem.limit.2p").parent == Path.cwd()
    # the default output, run from inside the shipped folder itself, is refused as well
    r = _cbr("train", "cfr", "-a", "h_hs2_4", "-n", "2", "--overwrite", cwd=SHIPPED_DIR)
    assert r.returncode == 1 and "inside the installed package" in r.stderr, r.stderr
    assert _tree_digest(SHIPPED_DIR) == before


def test_an_existing_strategy_is_replaced_only_with_overwrite(abs2: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine.npz"
    ckpt = tmp_path / "mine.npz.ckpt.npz"
    assert _cbr("train", "cfr", "-a", str(abs2), "-n", "7", "-o", str(out)).returncode == 0
    kept, kept_ckpt = out.read_bytes(), ckpt.read_bytes()
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", "2", "-o", str(out))
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "already exists (7 iterations)" in r.stderr and "--overwrite" in r.stderr
    assert out.read_bytes() == kept and ckpt.read_bytes() == kept_ckpt
    # the checkpoint alone (the strategy moved away) is a run too
    moved = tmp_path / "moved.npz"
    out.rename(moved)
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", "2", "-o", str(out))
    assert r.returncode == 1 and "checkpoint" in r.stderr and "--resume" in r.stderr
    assert not out.exists() and ckpt.read_bytes() == kept_ckpt
    moved.rename(out)
    # --resume continues the run; --overwrite starts over
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", "9", "-o", str(out), "--resume", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 2 and load_strategy(out).info["iterations"] == 9
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", "3", "-o", str(out), "--overwrite", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 3 and load_strategy(out).info["iterations"] == 3
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", "3", "-o", str(out), "--overwrite", "--resume")
    assert r.returncode == 2


def test_the_library_refuses_too_and_reports_its_checkpoints(abs2: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.npz"
    seen: list[tuple[int, Path]] = []
    train("holdem.limit.2p", abs2, 7, out=out, checkpoint_every=3,
          on_checkpoint=lambda it, path: seen.append((it, path)))
    ckpt = tmp_path / "s.npz.ckpt.npz"
    assert seen == [(3, ckpt), (6, ckpt), (7, ckpt)]
    with pytest.raises(OutputPathError, match="already exists"):
        train("holdem.limit.2p", abs2, 2, out=out)
    seen.clear()
    train("holdem.limit.2p", abs2, 8, out=out, resume=True, on_checkpoint=lambda it, path: seen.append((it, path)))
    assert seen == [(7, ckpt), (8, ckpt)]  # the checkpoint resumed from, then the one at the end


def test_ctrl_c_says_which_checkpoint_resume_continues(abs2: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.npz"
    ckpt = tmp_path / "s.npz.ckpt.npz"
    exe = Path(sys.executable).with_name("cbr")
    proc = subprocess.Popen([str(exe), "train", "cfr", "-a", str(abs2), "-n", "1000000", "--checkpoint-every", "3",
                             "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    try:
        deadline = time.time() + 60
        while not ckpt.exists() and time.time() < deadline:
            time.sleep(0.05)
        assert ckpt.exists()
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert lines[-1] == "interrupted" and len(lines) == 2, err
    with np.load(ckpt) as data:
        saved = json.loads(bytes(data["info"]).decode())["iteration"]
    assert lines[0].startswith(f"checkpoint at iteration {saved} in {ckpt}; continue with --resume"), err
    r = _cbr("train", "cfr", "-a", str(abs2), "-n", str(saved + 1), "-o", str(out), "--resume", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 1


def test_a_folder_cbr_train_cfr_wrote_into_is_a_strategy(tmp_path: Path) -> None:
    """`cfr:strategy=FOLDER` on `cbr train cfr -a FOLDER`'s folder said 'no strategy.npz here'."""
    import shutil

    from cbr.cfr.policy import resolve_strategy
    from cbr.errors import ConfigError
    from cbr.policies.spec import policy_from_spec
    from cbr.store import PACKAGED_CASEBASES

    folder = tmp_path / "h"
    shutil.copytree(PACKAGED_CASEBASES / "cfr" / "h_hs2_4", folder)
    (folder / "cfr.holdem.limit.2p.npz.ckpt.npz").write_bytes(b"a checkpoint is not a strategy")
    assert resolve_strategy(str(folder)) == folder / "cfr.holdem.limit.2p.npz"
    assert policy_from_spec(f"cfr:strategy={folder}").name == "cfr"
    shutil.copy(folder / "cfr.holdem.limit.2p.npz", folder / "cfr.holdem.limit.3p.npz")
    with pytest.raises(ConfigError, match="2 CFR strategies here"):
        resolve_strategy(str(folder))
