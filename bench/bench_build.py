"""Build throughput: hands per second of ``build_casebase`` with exact CASPER features.

Run:  python3 bench/bench_build.py [--workers 1 2] [--data irc acpc] [--repeat 1]

Data (from ../shared/data/logs, beside the clone):

- ``irc``: the UofA IRC database sample (4,000 hands of real humans, cards known only at
  showdowns, so few cases per hand);
- ``acpc``: the ACPC dealer's fixed-limit example logs (2,000 hands, 2p and 3p, every hole
  card known, so every decision is a case and most flops need a full PPOT/NPOT enumeration).

Peer: none (no other library builds CASPER case bases); the target is printed beside
the figures: >= 500 hands/s on the IRC sample on the 2-core machine. Besides wall-clock
figures the CPU seconds (this process + worker processes) and the CPU milliseconds per
hand are printed, since the machine is shared (CPU time is much less sensitive to other
load than wall time), and a breakdown of one single-process build, wall and CPU seconds
per stage: parse, replay, hand features (hand strength + potentials, the exact
enumerations, batched per board as the build does) and table features.
"""
from __future__ import annotations

import argparse
import atexit
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.build.local import build_casebase  # noqa: E402
from cbr.errors import counted  # noqa: E402
from cbr.logs.detect import read_logs  # noqa: E402
from cbr.logs.record import HandRecord  # noqa: E402
from cbr.logs.replay import replay  # noqa: E402
from features.casper import CasperFeatures  # noqa: E402

SHARED = Path(os.environ.get("CBR_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "data" / "logs"
DATA = {"irc": SHARED / "irc", "acpc": SHARED / "acpc" / "dealer_example_limit"}
TARGET_HANDS_PER_S = 500.0


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def one_build(path: Path, workers: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
        c0, t0 = cpu_seconds(), time.perf_counter()
        report = build_casebase([path], Path(tmp) / "cb", workers=workers)
        wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
    return {"hands": report.hands, "cases": report.cases, "skipped": len(report.skipped),
            "wall": wall, "cpu": cpu}


CHUNK_HANDS = 250  # as cbr.build.local: hand features are batched per chunk of hands


def breakdown(path: Path) -> dict[str, object]:
    """Wall and CPU seconds per stage in one process (the stages of ``cases_of_hands``)."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def stage(name: str, t: float, c: float) -> None:
        wall[name] = time.perf_counter() - t
        cpu[name] = time.process_time() - c

    t, c = time.perf_counter(), time.process_time()
    records = [r for r in read_logs([path]) if isinstance(r, HandRecord)]
    stage("parse", t, c)
    t, c = time.perf_counter(), time.process_time()
    chunks: list[list] = []
    for i in range(0, len(records), CHUNK_HANDS):
        chunk = []
        for r in records[i:i + CHUNK_HANDS]:
            try:
                chunk.extend(d for d in replay(r) if d.hole is not None)
            except Exception:  # noqa: BLE001 - skipped hands, as the build does
                pass
        chunks.append(chunk)
    stage("replay", t, c)
    dps = [dp for chunk in chunks for dp in chunk]
    fs = CasperFeatures(cache_size=10_000_000)  # keep every hand so the 2nd pass is table-only
    t, c = time.perf_counter(), time.process_time()
    for chunk in chunks:
        fs.prepare(chunk)
        for dp in chunk:
            fs.hand_features(dp)
    stage("hand features", t, c)
    distinct = fs.cache.info().misses
    t, c = time.perf_counter(), time.process_time()
    for dp in dps:  # hand features now cached: this is the table part of the row
        fs.row(dp)
    stage("table features", t, c)
    return {"wall": wall, "cpu": cpu, "hands": len(records), "cases": len(dps), "distinct hands/boards": distinct}


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--workers", type=positive_int, nargs="+", default=[1, 2], help="worker counts to build with")
    ap.add_argument("--data", nargs="+", choices=sorted(DATA), default=["irc", "acpc"],
                    help="the shared hand logs to build from (../shared/data/logs)")
    ap.add_argument("--repeat", type=positive_int, default=1, help="builds per configuration (best is kept)")
    ap.add_argument("--no-breakdown", action="store_true",
                    help="skip the per-stage breakdown of a single-process build")
    args = parse_args(ap)

    print(f"build_casebase, CASPER features (exact HS/PPOT/NPOT); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    atexit.register(lambda: print(f"load average {os.getloadavg()[0]:.1f} at end"))
    print(f"target: >= {TARGET_HANDS_PER_S:.0f} hands/s on the IRC sample; peer: none")
    for name in args.data:
        path = DATA[name]
        if not path.exists():
            print(f"{name}: {path} missing, skipped")
            continue
        print(f"\n{name}: {path}")
        if not args.no_breakdown:
            b = breakdown(path)
            print(f"  stages (1 process): {counted(b['hands'], 'hand')}, {counted(b['cases'], 'case')}, "
                  f"{b['distinct hands/boards']} distinct (hole, board) evaluated")
            total = sum(b["cpu"].values())
            for k in ("parse", "replay", "hand features", "table features"):
                print(f"    {k:15s} {b['wall'][k]:7.2f} s wall {b['cpu'][k]:7.2f} s CPU  "
                      f"{100 * b['cpu'][k] / total:5.1f}% of CPU  {1000 * b['cpu'][k] / b['hands']:6.3f} ms CPU/hand")
        base = None
        for w in args.workers:
            runs = [one_build(path, w) for _ in range(args.repeat)]
            r = min(runs, key=lambda x: x["wall"])
            hps = r["hands"] / r["wall"]
            base = base or hps
            print(f"  workers={w}: {counted(r['hands'], 'hand')}, {counted(r['cases'], 'case')} ({counted(r['skipped'], 'hand')} skipped) "
                  f"in {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU -> {hps:7.1f} hands/s, "
                  f"{r['cases'] / r['wall']:7.1f} cases/s, {r['hands'] / r['cpu']:7.1f} hands per CPU-s "
                  f"({1000 * r['cpu'] / r['hands']:.2f} ms CPU/hand); "
                  f"x{hps / base:.2f} vs workers={args.workers[0]}; target ratio {hps / TARGET_HANDS_PER_S:.2f}")


if __name__ == "__main__":
    from native_guard import run

    run(main)
