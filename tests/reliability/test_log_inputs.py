"""Fault campaign on log inputs: special files, loops and deep nesting in the folders given.

A named pipe would block a reader forever, ``/dev/zero`` would be read until memory runs
out: every read here runs in a child process with a time limit (and, for ``/dev/zero``, a
memory limit), killed when it is exceeded, so a regression fails the test in seconds
instead of hanging the suite. Rounds scale with ``reliability_rounds``.
"""
from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability import reliability_rounds

REPO = Path(__file__).resolve().parents[2]
TIME_LIMIT = 60          # seconds per child; a healthy run takes about one
MEMORY_LIMIT = 2 << 30   # bytes of address space per child
ACPC = "STATE:{i}:rc/cc/cc/cc:AhKd|2c2d/3s4s9h/Td/Jc:-20|20:a|b\n"
PHH = ("variant = 'FT'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nsmall_bet = 2\nbig_bet = 4\n"
       "starting_stacks = [100, 100]\nactions = ['d dh p1 AhKd', 'd dh p2 7c2d', 'p2 f']\n"
       "finishing_stacks = [101, 99]\n")

CHILD = """
import json, sys
from cbr.logs.detect import read_logs
from cbr.logs.inspect import inspect_logs
from cbr.logs.record import HandRecord
paths = sys.argv[1:]
r = inspect_logs(paths)
hands = sum(isinstance(i, HandRecord) for i in read_logs(paths))
print(json.dumps({"hands": r.hands_read, "read_logs_hands": hands,
                  "skipped": [[i.source, i.line, i.reason] for i in r.skipped]}))
"""


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def inspect_in_child(*paths: Path) -> dict:
    """``inspect_logs`` and ``read_logs`` over ``paths`` in a bounded child process."""
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, *map(str, paths)], capture_output=True, text=True,
                             timeout=TIME_LIMIT, cwd=REPO, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:   # subprocess.run has killed the child
        pytest.fail(f"reading {paths} did not finish in {TIME_LIMIT} s (blocked on a special file?)")
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert data["hands"] == data["read_logs_hands"]
    return data


def reasons(data: dict) -> dict[str, str]:
    return {Path(s).name: reason for s, line, reason in data["skipped"] if line == 0}


def test_named_pipe_given_or_in_a_folder_does_not_block(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(ACPC.format(i=0))
    os.mkfifo(logs / "pipe.log")
    os.mkfifo(tmp_path / "given.log")
    data = inspect_in_child(logs, tmp_path / "given.log")
    assert data["hands"] == 1
    why = reasons(data)
    assert "a named pipe" in why["pipe.log"] and "a named pipe" in why["given.log"]


def test_named_pipe_does_not_block_cbr_build(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text("".join(ACPC.format(i=i) for i in range(3)))
    os.mkfifo(logs / "pipe.log")
    try:
        out = subprocess.run([sys.executable, "cli.py", "build", str(logs), "-o", str(tmp_path / "cb"), "-j", "1",
                              "--json"], capture_output=True, text=True, timeout=TIME_LIMIT, cwd=REPO)
    except subprocess.TimeoutExpired:
        pytest.fail("cbr build blocked on a named pipe")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["hands"] == 3
    assert any(s["where"] == str(logs / "pipe.log") and "named pipe" in s["reason"] for s in report["skipped_hands"])


def test_symlink_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.log").write_text(ACPC.format(i=0))
    (logs / "zero.log").symlink_to("/dev/zero")
    (tmp_path / "zero.phh").symlink_to("/dev/zero")
    data = inspect_in_child(logs, tmp_path / "zero.phh")
    assert data["hands"] == 1
    why = reasons(data)
    assert "character device" in why["zero.log"] and "character device" in why["zero.phh"]


def _random_tree(root: Path, rng: random.Random) -> tuple[int, dict[str, str]]:
    """A folder of good logs and faults; returns the hands to read and name -> expected words."""
    expected: dict[str, str] = {}
    hands = 0
    folders = [root]
    for k in range(rng.randint(6, 14)):
        where = rng.choice(folders)
        kind = rng.choice(["acpc", "phh", "dir", "fifo", "zero", "loop", "self", "dangling", "nested", "junk"])
        name = f"f{k}"
        if kind == "acpc":
            n = rng.randint(1, 4)
            (where / f"{name}.log").write_text("".join(ACPC.format(i=i) for i in range(n)))
            hands += n
        elif kind == "phh":
            (where / f"{name}.phh").write_text(PHH)
            hands += 1
        elif kind == "dir":
            (where / name).mkdir()
            folders.append(where / name)
        elif kind == "fifo":
            os.mkfifo(where / f"{name}.log")
            expected[f"{name}.log"] = "named pipe"
        elif kind == "zero":
            (where / f"{name}.log").symlink_to("/dev/zero")
            expected[f"{name}.log"] = "character device"
        elif kind == "loop":
            (where / name).symlink_to(os.path.relpath(rng.choice([f for f in folders if where.is_relative_to(f)]),
                                                      where), target_is_directory=True)
            expected[name] = "symlink loop"
        elif kind == "self":
            (where / f"{name}.log").symlink_to(f"{name}.log")
            expected[f"{name}.log"] = "symlink loop"
        elif kind == "dangling":
            (where / f"{name}.log").symlink_to("nowhere.log")
            expected[f"{name}.log"] = "no such file"
        elif kind == "nested":
            depth = rng.choice([5_000, 50_000, 200_000])
            (where / f"{name}.phh").write_text("variant = 'FT'\nactions = " + "[" * depth + "]" * depth + "\n")
            expected[f"{name}.phh"] = "nested too deeply"
        else:
            (where / f"{name}.txt").write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(0, 300))))
            expected[f"{name}.txt"] = ""   # not a log (or, by chance, a log of nothing): never a traceback
    return hands, expected


@pytest.mark.parametrize("round_", range(reliability_rounds(4)))
def test_random_folders_of_faults_are_read_in_time(tmp_path: Path, round_: int) -> None:
    rng = random.Random(7000 + round_)
    root = tmp_path / "logs"
    root.mkdir()
    hands, expected = _random_tree(root, rng)
    data = inspect_in_child(root)
    assert data["hands"] == hands
    why = reasons(data)
    for name, words in expected.items():
        if words:
            assert words in why.get(name, ""), (name, why)
