"""Public-chance sampling beside external sampling (issue 37): speed, and LBR for the same CPU time.

Run:  python3 bench/bench_pcs.py speed [--repeats 3] [--threads 1]
      python3 bench/bench_pcs.py train --sampling public --cpu-minutes 8 --out /tmp/pcs [--seed 1]
      python3 bench/bench_pcs.py lbr /tmp/es /tmp/pcs [--hands 4000] [--seed 5] [--minutes 14]

1. ``speed``: iterations per CPU second (and per second of wall time) of both schemes on
   the teacher's abstraction (``casebases/cfr/emd_256/abstraction.npz``), the median of
   ``--repeats`` timed runs each (after a warm-up run), and how many external-sampling
   iterations one public-chance iteration costs (CPU time: the machine is shared).
2. ``train``: one scheme for ``--cpu-minutes`` of this process's CPU time (checked between
   chunks of about two seconds), from empty tables; writes the folder a ``cfr`` bot plays
   (``abstraction.npz``, ``strategy.npz``) and ``run.json`` (iterations, CPU and wall seconds).
   Run one per scheme with ``--threads 1`` (the default) so that both get the same CPU time.
3. ``lbr``: ``cbr exploit cfr:strategy=FOLDER`` on each folder, the same deals (``--seed``,
   ``--hands``; ``--minutes`` stops a run early with the hands played so far), one after the
   other; prints each LBR with its 95% CI. A folder ``cbr exploit`` refuses is one ``error:``
   line on stderr, and the script exits with its code (after the other folders).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cbr.abstraction import distribution as D  # noqa: E402
from cbr.cfr.mccfr import STRATEGY_FILE, MCCFRTrainer  # noqa: E402
from cbr.cfr.policy import SHIPPED_TEACHER  # noqa: E402
from cbr.errors import counted  # noqa: E402

#: Iterations a timed run does, and a training chunk, by scheme (each about seconds).
TIMED = {"external": 200_000, "public": 6}
CHUNK = {"external": 50_000, "public": 4}


def speed(args: argparse.Namespace) -> None:
    a = D.DistributionAbstraction.load(SHIPPED_TEACHER)
    rate = {}
    for sampling in ("external", "public"):
        t = MCCFRTrainer(a, seed=1, threads=args.threads, sampling=sampling)
        t.run(TIMED[sampling] // 4)  # warm: caches, the tables' pages
        runs, cpu_runs = [], []
        for _ in range(args.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            t.run(TIMED[sampling])
            runs.append(TIMED[sampling] / (time.perf_counter() - start))
            cpu_runs.append(TIMED[sampling] / (time.process_time() - cpu))
        rate[sampling] = statistics.median(cpu_runs)
        print(f"{sampling:>9}: {rate[sampling]:,.2f} iterations per CPU second, {statistics.median(runs):,.2f} per "
              f"second of wall time, on {counted(args.threads, 'thread')} (medians of {args.repeats}; CPU: "
              f"{', '.join(f'{r:,.2f}' for r in cpu_runs)})", flush=True)
    print(f"one public-chance iteration costs {rate['external'] / rate['public']:,.0f} external-sampling ones")


def train(args: argparse.Namespace) -> None:
    a = D.DistributionAbstraction.load(SHIPPED_TEACHER)
    out = Path(args.out)
    out.mkdir(exist_ok=True)  # that folder alone: its parent was checked (out_path)
    t = MCCFRTrainer(a, seed=args.seed, threads=args.threads, sampling=args.sampling)
    budget = args.cpu_minutes * 60.0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    while time.process_time() - cpu0 < budget:
        t.run(CHUNK[args.sampling])
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    shutil.copy(SHIPPED_TEACHER / "abstraction.npz", out / "abstraction.npz")
    t.save_strategy(out / STRATEGY_FILE)
    run = {"sampling": args.sampling, "iterations": t.iterations, "cpu_seconds": round(cpu, 1),
           "wall_seconds": round(wall, 1), "threads": args.threads, "seed": args.seed,
           "discount_every": t.discount_every}
    (out / "run.json").write_text(json.dumps(run, indent=1) + "\n")
    print(json.dumps(run))


def lbr(args: argparse.Namespace) -> int:
    code = 0
    for folder in args.folders:
        cmd = [sys.executable, str(ROOT / "cli.py"), "exploit", f"cfr:strategy={folder}", "--hands", str(args.hands),
               "--seed", str(args.seed), "--json"] + (["--minutes", str(args.minutes)] if args.minutes else [])
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            said = [line for line in done.stderr.splitlines() if line.strip()]
            why = said[-1].strip().removeprefix("Error: ").removeprefix("error: ") if said else "no message"
            print(f"error: {folder}: cbr exploit exited {done.returncode}: {why}", file=sys.stderr, flush=True)
            code = code or done.returncode
            continue
        r = json.loads(done.stdout)
        run = json.loads((Path(folder) / "run.json").read_text()) if (Path(folder) / "run.json").exists() else {}
        print(f"{folder}: {run.get('sampling', '?')}, {counted(run.get('iterations', 0), 'iteration')} in "
              f"{run.get('cpu_seconds', 0)} CPU s: LBR {json.dumps(r)}", flush=True)
    return code


def main() -> int:
    from native_guard import help_format, number, out_path, parse_args, positive_float, positive_int, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("speed", formatter_class=help_format())
    s.add_argument("--repeats", type=positive_int, default=3, help="timed runs of each scheme (the median is kept)")
    s.add_argument("--threads", type=positive_int, default=1, help="threads of each trainer")
    t = sub.add_parser("train", formatter_class=help_format())
    t.add_argument("--sampling", choices=("external", "public"), required=True, help="the sampling scheme trained")
    t.add_argument("--cpu-minutes", type=positive_float, default=10.0, help="CPU minutes of this process to train for")
    t.add_argument("--out", type=out_path("folder"), required=True,
                   help="the folder a cfr bot plays, written (abstraction, strategy, run.json); made if missing, its parent must exist")
    t.add_argument("--seed", type=seed_int, default=1, help="the trainer's seed")
    t.add_argument("--threads", type=positive_int, default=1, help="the trainer's threads (1 for the same CPU time per scheme)")
    e = sub.add_parser("lbr", formatter_class=help_format())
    e.add_argument("folders", nargs="+", help="folders written by train, each measured by cbr exploit")
    e.add_argument("--hands", type=positive_int, default=4000, help="LBR hands per folder")
    e.add_argument("--seed", type=seed_int, default=5, help="seed of LBR's deals (the same for every folder)")
    e.add_argument("--minutes", type=number(0), default=0.0, help="stop each LBR run after this long (0: all --hands)")
    args = parse_args(ap)
    return {"speed": speed, "train": train, "lbr": lbr}[args.what](args) or 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
