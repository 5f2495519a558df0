"""Decisions unchanged: a golden file of the bots' triples at 10,000 decision points of self-play.

Recorded once before a refactor of the hand's path (the decision record, the one hand
driver, integer chips), then checked after it: every triple and every action must be the
same, bit for bit (floats are kept by ``float.hex``). A change that is meant must be
explained and the file recorded again in the same commit.

Each pairing plays ``hands`` hands (``cbr.play.match.run_match``, seed 11); every decision
of every seat is kept: the pairing, the hand, the seat, the betting so far, the triple the
seat's bot answered there and the action it took.

    python bench/golden_decisions.py record            # writes bench/golden/decisions.json.gz
    python bench/golden_decisions.py check             # all pairings; exit 1 on a difference
    python bench/golden_decisions.py check --pairings 1  # the first pairing only (the test's)

``tests/play/test_golden_decisions.py`` runs the check on the first pairing.
"""
from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path
from typing import Any

from cbr.errors import counted

GOLDEN = Path(__file__).resolve().parent / "golden" / "decisions.json.gz"
SEED = 11
#: (players, hands): about 10,000 decisions in all. The bots are named by what they were when
#: the file was recorded: ``cbr:preset=expert`` (plain ``cbr`` is now the adaptive bot over it,
#: issue 36) and ``cfr:strategy=emd_256`` (plain ``cfr`` now re-solves the river, issue 37).
PAIRINGS: list[tuple[list[str], int]] = [
    (["cbr:preset=expert", "ehs"], 300),
    (["cbr:preset=expert", "cfr:strategy=emd_256"], 300),
    (["cbr:preset=casper", "poki"], 300),
    (["cbr:preset=expert", "raise"], 200),
    (["cbr:preset=expert:reuse=best-outcome", "lag"], 200),
    (["cbr:preset=expert:reuse=max-frequency", "call"], 200),
    (["cbr:preset=expert", "cbr:preset=casper", "ehs"], 200),
]


def _recording(policy: Any, out: list, pairing: int, seat: int) -> Any:
    """``policy`` with its ``act`` (and ``decide``, where the table asks that) wrapped to keep
    the triple it answers and the action it takes, once per decision."""
    inner_act = policy.act
    inner_decide = getattr(policy, "decide", None)
    busy = [False]

    def kept(dp: Any, decide: Any) -> Any:
        if busy[0]:  # decide calling act (or the reverse): the outer call keeps it
            return decide()
        busy[0] = True
        try:
            triple = policy.triple(dp)
            made = decide()
        finally:
            busy[0] = False
        kind = made if isinstance(made, str) else made.action
        out.append([pairing, dp.hand_id, seat, dp.history, [float(p).hex() for p in triple], kind])
        return made

    policy.act = lambda dp, rng: kept(dp, lambda: inner_act(dp, rng))  # instance attributes: the class is unchanged
    if inner_decide is not None:
        policy.decide = lambda dp, rng=None: kept(dp, lambda: inner_decide(dp, rng))
    return policy


def play(pairings: list[tuple[list[str], int]]) -> list:
    from cbr.play.match import run_match
    from cbr.play.table import resolve_players

    rows: list = []
    for i, (players, hands) in enumerate(pairings):
        policies = resolve_players(players, SEED)
        try:
            for s, p in enumerate(policies):
                _recording(p, rows, i, s)
            run_match(policies, hands, seed=SEED)
        finally:
            for p in policies:
                close = getattr(p, "close", None)
                if callable(close):
                    close()
    return rows


def differences(got: list, want: list, limit: int = 10) -> list[str]:
    """The first ``limit`` decisions that differ, described; [] when they are the same."""
    out = []
    for g, w in zip(got, want):
        if g != w:
            out.append(f"pairing {w[0]} hand {w[1]} seat {w[2]} history {w[3]!r}: "
                       f"want {[float.fromhex(x) for x in w[4]]} {w[5]!r}, got {[float.fromhex(x) for x in g[4]]} {g[5]!r}")
            if len(out) >= limit:
                break
    if len(got) != len(want) and len(out) < limit:
        out.append(f"{counted(len(got), 'decision')} where the golden file has {len(want)}")
    return out


def load() -> list:
    with gzip.open(GOLDEN, "rt") as f:
        return json.load(f)["decisions"]


def main(argv: list[str] | None = None) -> int:
    from native_guard import help_format, number, parse_args

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("mode", choices=("record", "check"),
                    help="record: write the golden file; check: play again and compare with it")
    ap.add_argument("--pairings", type=number(1, int, high=len(PAIRINGS)), default=len(PAIRINGS), help="the first N pairings only (check)")
    args = parse_args(ap, argv)
    chosen = PAIRINGS[: args.pairings]
    rows = play(chosen)
    if args.mode == "record":
        GOLDEN.parent.mkdir(exist_ok=True)
        with gzip.open(GOLDEN, "wt") as f:
            json.dump({"seed": SEED, "pairings": PAIRINGS, "decisions": rows}, f, separators=(",", ":"))
        print(f"recorded {counted(len(rows), 'decision')} of {counted(len(chosen), 'pairing')} in {GOLDEN}")
        return 0
    want = [r for r in load() if r[0] < len(chosen)]
    diff = differences(rows, want)
    for line in diff:
        print(line)
    print(f"{counted(len(rows), 'decision')} checked: {'the same, bit for bit' if not diff else 'DIFFERENT'}")
    return 1 if diff else 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
