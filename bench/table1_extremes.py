"""Reproduce table 1 of the KTH study exactly: the weakest and strongest HS and HS^2 per street.

Pre-flop from the 169-class table; flop and turn by visiting one board of every suit class
(1,755 flops, 16,432 turns: every holding on every board, up to suit relabelling, which
changes no metric) with the native all-holdings kernel; the river's 0 and 1 are reached
(found on random boards). Prints the table and one witness (holding, board) per cell.

    python3 bench/table1_extremes.py          # about 3 minutes on one core
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cbr.abstraction.metrics import board_metrics, preflop_metrics  # noqa: E402
from evaluator_ext import cards_str, combo_cards  # noqa: E402


def canonical_boards(size: int) -> list[tuple[int, ...]]:
    perms = list(itertools.permutations(range(4)))
    seen: set[tuple[int, ...]] = set()
    for board in itertools.combinations(range(52), size):
        seen.add(min(tuple(sorted(4 * (c // 4) + p[c % 4] for c in board)) for p in perms))
    return sorted(seen)


def extremes(boards: list[tuple[int, ...]]) -> dict[str, tuple[float, str]]:
    best: dict[str, tuple[float, str]] = {}
    for board in boards:
        hs, hs2 = board_metrics(board)
        for name, arr in (("hs", hs), ("hs2", hs2)):
            live = np.flatnonzero(arr >= 0)
            for tag, i in (("min", live[np.argmin(arr[live])]), ("max", live[np.argmax(arr[live])])):
                key = f"{tag}_{name}"
                v = float(arr[i])
                if key not in best or (v < best[key][0] if tag == "min" else v > best[key][0]):
                    best[key] = (v, f"{cards_str(combo_cards(int(i)))} on {cards_str(board)}")
    return best


def main() -> int:
    from native_guard import help_format, parse_args

    from casebases import description

    parse_args(argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format()))  # --help; no options
    start = time.perf_counter()
    rows = {}
    hs, hs2 = preflop_metrics()
    pre = {}
    for name, arr in (("hs", hs), ("hs2", hs2)):
        for tag, i in (("min", int(np.argmin(arr))), ("max", int(np.argmax(arr)))):
            pre[f"{tag}_{name}"] = (float(arr[i]), cards_str(combo_cards(i)))
    rows["Preflop"] = pre
    rows["Flop"] = extremes(canonical_boards(3))
    rows["Turn"] = extremes(canonical_boards(4))
    rng = np.random.default_rng(1)
    rivers = [tuple(int(c) for c in rng.permutation(52)[:5]) for _ in range(2000)]
    rows["River"] = extremes(rivers)
    print(f"table 1 reproduced in {time.perf_counter() - start:.0f} s")
    print("| | " + " | ".join(rows) + " |")
    print("|---|" + "---|" * len(rows))
    for key, label in (("min_hs", "Min HS"), ("max_hs", "Max HS"), ("min_hs2", "Min HS²"), ("max_hs2", "Max HS²")):
        print(f"| {label} | " + " | ".join(f"{rows[s][key][0]:.4f}" for s in rows) + " |")
    for s, r in rows.items():
        for key, (v, where) in r.items():
            print(f"{s} {key}: {v:.6f} {where}")
    return 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
