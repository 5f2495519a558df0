"""Faults tried on the shared-enumeration potential kernel (``_native.potential_tables``):
fuzzed holes, boards and weights (each call raises ValueError/TypeError or returns
well-formed tables, never crashes), huge and duplicate hole lists, and concurrent calls
from threads (the GIL is released; results equal the serial ones). Run in a child
process so that a crash is reported as a failure, bounded in time."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np

from tests.conftest import require_native
from tests.reliability import reliability_rounds

require_native(module_level=True)
from evaluator_ext import _native  # noqa: E402

REPO = Path(__file__).resolve().parents[2]

FUZZ = textwrap.dedent(
    """
    import random, sys
    import numpy as np
    from evaluator_ext import _native

    rng = random.Random(int(sys.argv[1]))
    rounds = int(sys.argv[2])
    ok = bad = 0
    junk = [None, "Ah", 3.5, -1, 52, 255, 2**70, b"ab", (1,), [], object()]

    def card():
        return rng.choice(junk) if rng.random() < 0.05 else rng.randrange(-2, 55)

    for _ in range(rounds):
        if rng.random() < 0.6:  # a valid situation, sometimes with one card spoiled
            deck = rng.sample(range(52), 5)
            board = rng.sample(deck, rng.choice([3, 4, 5]))
            rest = [c for c in range(52) if c not in board]
            holes = [rng.sample(rest, 2) for _ in range(rng.choice([1, 2, 3]))]
            if rng.random() < 0.3:
                target = board if rng.random() < 0.5 else rng.choice(holes)
                target[rng.randrange(len(target))] = card()
        else:
            board = [card() for _ in range(rng.choice([0, 2, 3, 3, 4, 4, 5, 6]))]
            holes = [[card() for _ in range(rng.choice([1, 2, 2, 2, 3]))] for _ in range(rng.choice([0, 1, 2, 5]))]
        if rng.random() < 0.05:
            holes = rng.choice(junk)
        w = None
        r = rng.random()
        if r < 0.1:
            w = np.random.default_rng(rng.randrange(1000)).random(1326) * (rng.random() < 0.5)
        elif r < 0.15:
            w = rng.choice([np.ones(1325), np.ones((2, 663)), np.full(1326, np.nan), np.ones(1326, np.float32),
                            np.full(1326, -0.5), np.zeros(1326), "x", 7])
        try:
            tables = _native.potential_tables(holes, board, w)
        except (ValueError, TypeError, OverflowError):
            bad += 1
            continue
        assert isinstance(tables, list) and len(tables) == len(holes)
        for t in tables:
            assert len(t) == 3 and all(len(row) == 3 for row in t)
            assert all(x >= 0 for row in t for x in row)
        ok += 1
    print(ok, bad)
    """
)


def test_fuzzed_inputs_never_crash(tmp_path: Path) -> None:
    script = tmp_path / "fuzz_potential.py"
    script.write_text(FUZZ)
    rounds = reliability_rounds(300)
    proc = subprocess.run([sys.executable, str(script), "11", str(rounds)], cwd=REPO, capture_output=True,
                          text=True, timeout=60 + rounds // 10)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ok, bad = map(int, proc.stdout.split())
    assert ok + bad == rounds and ok > rounds // 4 and bad > rounds // 4


def test_many_holes_on_one_board_match_one_at_a_time() -> None:
    """Every hole left on a turn board (1,128, some appearing twice) in one call."""
    board = (0, 13, 26, 51)
    rest = [c for c in range(52) if c not in board]
    holes = [(a, b) for i, a in enumerate(rest) for b in rest[i + 1:]]
    holes += holes[:50]
    t0 = time.monotonic()
    tables = _native.potential_tables(holes, board)
    assert time.monotonic() - t0 < 30
    rng = np.random.default_rng(3)
    for p in rng.choice(len(holes), size=reliability_rounds(40), replace=False):
        assert tables[p] == _native.potential_table(holes[p], board)


def test_threads_at_once_equal_serial() -> None:
    rng = np.random.default_rng(5)
    jobs = []
    for _ in range(reliability_rounds(6)):
        deck = [int(c) for c in rng.permutation(52)[:9]]
        jobs.append(([tuple(deck[3:5]), tuple(deck[5:7]), tuple(deck[7:9])], tuple(deck[:3])))
    serial = [_native.potential_tables(h, b) for h, b in jobs]
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            results[k] = [_native.potential_tables(h, b) for h, b in jobs]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert not errors
    assert all(results[k] == serial for k in range(3))
