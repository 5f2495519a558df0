"""How long ``cbr casebase condense`` takes as a street grows: for the 15-minute target on the
4.7M-case expert-full base, which is not on this machine (its recipe takes hours).

Run:  python3 bench/bench_condense.py [--cases 100000 400000 1400000] [--method footprint] [--base expert]

For each size, one flop street of synthetic cases (``bench_retrieval.flop_cases``: the default
case base's flop distribution, hand strength and potentials continuous, so nearly every row is
distinct, as after the flop in the expert bases), each case's action drawn from a mixed strategy
that depends smoothly on hand strength and the bet to call, is written as a case base and
condensed; then the shipped ``--base`` (all four streets) is condensed. Prints wall and CPU
seconds (CPU: this process and its threads; the wall time depends on the machine's load) and
the seconds per 100,000 cases, and the extrapolation to the 4,742,890 cases of expert-full from
the largest synthetic street, linear in the cases (per street, the work is the votes and the
k-NN of its distinct rows, both per row, plus a sort).
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_retrieval import flop_cases  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.query.maintenance import METHODS, condense  # noqa: E402
from cbr.store import resolve_casebase  # noqa: E402
from cbr.store.writer import CaseBaseWriter  # noqa: E402

FULL_CASES = 4_742_890


def synthetic(path: Path, n: int, seed: int) -> None:
    X = flop_cases(n, seed)
    rng = np.random.default_rng(seed + 1)
    hs, to_call = X[:, 7].astype(np.float64), X[:, 5].astype(np.float64)
    p_raise = np.clip(1.6 * (hs - 0.45), 0.02, 0.95)
    p_fold = np.clip((0.5 - hs) * to_call * 0.8, 0.0, 0.9) * (to_call > 0)
    u = rng.random(n)
    actions = np.where(u < p_fold, "f", np.where(u < p_fold + p_raise * (1 - p_fold), "r", "c"))
    with CaseBaseWriter(path) as w:
        w.add_rows("flop", X, actions.tolist(), source="synthetic")


def timed(src: Path, out: Path, method: str) -> tuple[float, float, dict]:
    w0, c0 = time.perf_counter(), time.process_time()
    report = condense(src, out, method=method)
    return time.perf_counter() - w0, time.process_time() - c0, report.to_dict()


def main() -> None:
    from native_guard import casebase_name, help_format, number, parse_args, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--cases", type=number(10, int), nargs="+", default=[100_000, 400_000, 1_400_000],
                    help="sizes of the synthetic flop streets condensed (10 or more: condense keeps a tenth)")
    ap.add_argument("--method", default="footprint", choices=METHODS, help="the condensing method timed")
    ap.add_argument("--base", type=casebase_name, default="expert",
                    help="the case base condensed whole after the synthetic streets (a name or folder)")
    ap.add_argument("--seed", type=seed_int, default=0, help="seed of the synthetic streets")
    args = parse_args(ap)
    from cbr.store import CaseBase

    CaseBase.open(resolve_casebase(args.base)).close()  # a torn base is one error line before any work, not after it
    print(f"{'what':28} {'cases':>10} {'wall s':>8} {'cpu s':>8} {'cpu s/100k':>11} {'kept':>8}")
    per = None
    with tempfile.TemporaryDirectory(prefix="bench-condense-") as tmp:
        for n in args.cases:
            src = Path(tmp) / f"syn-{n}"
            synthetic(src, n, args.seed)
            wall, cpu, rep = timed(src, Path(tmp) / f"syn-{n}-small", args.method)
            per = cpu / n * 100_000
            print(f"{'synthetic flop':28} {n:>10} {wall:>8.1f} {cpu:>8.1f} {per:>11.2f} {rep['kept']:>8}", flush=True)
            shutil.rmtree(src)
        wall, cpu, rep = timed(resolve_casebase(args.base), Path(tmp) / "base-small", args.method)
        n = rep["kept"] + rep["removed"]
        print(f"{args.base + ' (4 streets)':28} {n:>10} {wall:>8.1f} {cpu:>8.1f} {cpu / n * 100_000:>11.2f} "
              f"{rep['kept']:>8}")
    if per is not None:
        est = per * FULL_CASES / 100_000
        print(f"extrapolated to expert-full ({counted(FULL_CASES, 'case')}) from the largest synthetic street: "
              f"{est:.0f} CPU s ({est / 60:.1f} min on one core)")


if __name__ == "__main__":
    from native_guard import run

    run(main)
