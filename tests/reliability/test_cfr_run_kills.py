"""A long MCCFR run (casebases/build_cfr_big.py) SIGKILLed while it writes a checkpoint: half-way
through the regrets, after the temp file is complete but before the rename, and just after the
rename. Each time the checkpoint on disk is whole and loadable (the first one, or the second
once renamed), the progress log parses, and running the recipe again resumes from it and
clears the dead writer's temp file. Run folders under tmp_path; a 4-bucket abstraction.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, require_native

require_native(module_level=True)

from cbr.abstraction.distribution import DistributionAbstraction  # noqa: E402
from cbr.cfr.longrun import RunFolder, read_progress  # noqa: E402
from cbr.cfr.mccfr import MCCFRTrainer  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.cfr.testing import coarse_abstraction  # noqa: E402

#: Runs the recipe in process and SIGKILLs itself during the second checkpoint's write.
KILLED = textwrap.dedent("""
    import os, signal, sys
    import numpy.lib.format as fmt
    from cbr.store import durable
    from casebases import build_cfr_big

    mode, args = sys.argv[1], sys.argv[2:]
    tables, renames = [0], [0]
    write_array, move = fmt.write_array, durable.move_into_place

    def dying_write(fp, array, *a, **k):
        if array.dtype == "float64" and array.size > 1000:  # the checkpoint's regrets and averages
            tables[0] += 1
            if mode == "mid-write" and tables[0] == 3:  # the second checkpoint's regrets, half written
                fmt.write_array_header_2_0(fp, fmt.header_data_from_array_1_0(array))
                fp.write(array.tobytes()[: array.nbytes // 2])
                fp.flush()
                os.kill(os.getpid(), signal.SIGKILL)
        return write_array(fp, array, *a, **k)

    def dying_move(tmp, target, **k):
        second = str(target).endswith("checkpoint.npz") and tables[0] == 4
        if second and mode == "before-rename":
            os.kill(os.getpid(), signal.SIGKILL)
        move(tmp, target, **k)
        if second and mode == "after-rename":
            os.kill(os.getpid(), signal.SIGKILL)

    fmt.write_array = dying_write
    durable.move_into_place = dying_move
    sys.exit(build_cfr_big.main(args))
""")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny")
    coarse_abstraction(DistributionAbstraction.load(SHIPPED_TEACHER), 4).save(folder)
    return folder / "abstraction.npz"


def _args(run: Path, tiny: Path) -> list[str]:
    return ["--out", str(run), "--abstraction", str(tiny), "--flop", "4", "--turn", "4", "--river", "4",
            "--threads", "1", "--iterations", "2000000", "--checkpoint-minutes", "0.004", "--snapshot-minutes", "0"]


@pytest.mark.time_limit(120)
@pytest.mark.parametrize("mode", ["mid-write", "before-rename", "after-rename"])
def test_sigkill_while_a_checkpoint_is_written_leaves_a_loadable_one(tiny: Path, tmp_path: Path, mode: str) -> None:
    run = tmp_path / "run"
    killed = subprocess.run([sys.executable, "-c", KILLED, mode, *_args(run, tiny)], cwd=REPO, capture_output=True,
                            text=True, timeout=100)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    files = RunFolder(run)
    lines = read_progress(files.progress)  # every line whole
    checkpoints = [p["iterations"] for p in lines if p["event"] == "checkpoint"]
    assert len(checkpoints) == 1  # the first checkpoint's line; the second never got one
    temps = [p.name for p in run.iterdir() if p.name.startswith(".checkpoint.npz.tmp-")]
    assert (len(temps) == 1) == (mode != "after-rename")  # the dead writer's temp file is left...
    t = MCCFRTrainer(DistributionAbstraction.load(tiny), seed=0, threads=1)
    t.load_checkpoint(files.checkpoint)
    if mode == "after-rename":
        assert t.iterations > checkpoints[0]  # the second checkpoint, whole
    else:
        assert t.iterations == checkpoints[0]  # the first, untouched
    again = subprocess.run([sys.executable, "-m", "casebases.build_cfr_big", *_args(run, tiny)[:-6],
                            "--iterations", str(t.iterations + 20_000)], cwd=REPO, capture_output=True, text=True,
                           timeout=100)
    assert again.returncode == 0, again.stderr
    assert f"resumed {run} at {t.iterations:,} iterations" in again.stderr
    assert not [p.name for p in run.iterdir() if ".tmp-" in p.name]  # ...and cleared by the next run
    with np.load(files.checkpoint) as z:
        assert json.loads(str(z["info"]))["iterations"] == t.iterations + 20_000
