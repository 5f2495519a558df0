"""River re-solving's decision time (issue 37): the current path beside the old one, in one run.

Run:  python3 bench/bench_resolve.py [--hands 300] [--seed 61] [--old 5047fdd] [--json out.json]

1. **The old path.** ``--old`` (a commit; default 5047fdd, the last before the speed work) is
   rebuilt here: its ``evaluator_ext/src`` and ``cbr/cfr/resolve.py`` from git, its
   ``_resolve`` extension compiled into a temporary folder with the flags ``setup.py`` gives
   (``-O3 -std=c11`` on Python's CFLAGS) and loaded under another name; a ``cfr`` bot whose
   ``_resolve`` calls that module's ``resolve_river`` is the old bot.
2. **Real play.** ``cfr:strategy=emd_256:resolve=river:resolve-iters=40`` (the teacher re-solved,
   plain ``cfr`` until 2026-12-01; the current code) plays ``--hands``
   hands against ``cfr:strategy=emd_256`` (the teacher as trained) and as many against ``raise`` (deals of ``--seed``; it takes seat 0
   in even hands, seat 1 in odd ones). At each of its decisions, on every street, four bots
   see the same decision point through ``Policy.triple``: the current and the old path at 40
   and at 200 iterations (each pair in alternating order, so that both meet the same load),
   so each fills its caches (the board's buckets) as in play; a river decision of each is
   timed, wall clock and CPU time of the process. The first river decision of a hand
   carries the solve, a later one is a lookup of it. The old and the current bot must give
   the same triple (the solve is the same bit for bit): the run stops if not.
3. Prints, per iteration count and path: p50 / p99 / mean of a river decision (all of them,
   and the first of each hand), wall and CPU, the ratios current / old, and the load average
   before and after (the machine is shared: nothing here is niced).
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core: before numpy loads

import argparse  # noqa: E402
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import sysconfig  # noqa: E402
import tarfile  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cbr.cfr.policy import CFRPolicy  # noqa: E402
from cbr.errors import counted  # noqa: E402

ITERATIONS = (40, 200)


def build_old(commit: str, work: Path) -> types.ModuleType:
    """The old ``cbr.cfr.resolve`` of ``commit``, bound to its own ``_resolve`` built here."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "evaluator_ext/src", "cbr/cfr/resolve.py"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(work, filter="data")
    src = work / "evaluator_ext" / "src"
    cc = shlex.split(sysconfig.get_config_var("CC") or "cc")
    cflags = shlex.split(sysconfig.get_config_var("CFLAGS") or "")
    gen = work / "gen_eval_tables"
    subprocess.run([*cc, "-O2", "-std=c11", f"-I{src}", str(src / "gen_eval_tables.c"), str(src / "eval_tables.c"),
                    "-o", str(gen)], check=True)
    subprocess.run([str(gen), str(work / "eval_tables_data.h")], check=True)
    out = work / "old" / f"_resolve{sysconfig.get_config_var('EXT_SUFFIX')}"
    out.parent.mkdir()
    subprocess.run([*cc, *cflags, "-fPIC", "-shared", "-O3", "-std=c11", f"-I{src}", f"-I{work}",
                    f"-I{sysconfig.get_paths()['include']}",
                    *(str(src / f) for f in ("eval_kernels.c", "eval_tables.c", "resolve_kernels.c", "resolve_module.c")),
                    "-o", str(out)], check=True)
    loader = importlib.machinery.ExtensionFileLoader("bench_old._resolve", str(out))
    ext = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench_old._resolve", loader))
    loader.exec_module(ext)
    mod = types.ModuleType("bench_old_resolve")
    mod.__file__ = str(work / "cbr" / "cfr" / "resolve.py")
    sys.modules[mod.__name__] = mod
    exec(compile((work / "cbr" / "cfr" / "resolve.py").read_text(), mod.__file__, "exec"), mod.__dict__)
    mod.native = lambda: ext  # type: ignore[attr-defined]
    return mod


class OldResolving(CFRPolicy):
    """``cfr:resolve=river`` re-solving through the old module (as the old ``_resolve``)."""

    def __init__(self, old: types.ModuleType, iterations: int) -> None:
        super().__init__(strategy="emd_256", resolve="river", resolve_iters=iterations)
        self.old = old

    def _resolve(self, dp, node):  # noqa: ANN001, ANN202
        key = (self.old.river_prefix(dp.history), tuple(int(c) for c in dp.board))
        role = int(self._load().tree.player[node])
        if self._resolved is None or self._resolved[0] != key:
            self._resolved = (key, {})
        solved = self._resolved[1].get(role)
        if solved is None:
            solved = self._resolved[1][role] = self.old.resolve_river(
                self._load(), dp.history, dp.board, role, iterations=self.resolve_iters, gadget=self.resolve_gadget,
                buckets=self._boards)
        return solved


def summary(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"n": len(xs), "p50": round(statistics.median(xs), 3),
            "p99": round(xs[min(len(xs) - 1, int(0.99 * len(xs)))], 3), "mean": round(statistics.fmean(xs), 3)}


def main(argv: list[str] | None = None) -> int:
    from native_guard import help_format, json_file, parse_args, positive_int, seed_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=300,
                    help="hands against each of cfr:strategy=emd_256 and raise")
    ap.add_argument("--seed", type=seed_int, default=61, help="seed of the deals and the bots' choices")
    ap.add_argument("--old", default="5047fdd",
                    help="the commit of the old path: one before the shared sweep kernel (default: 5047fdd; the script "
                         "compiles that commit's resolve kernel alone)")
    ap.add_argument("--json", type=json_file, default=None, help="also write the figures to this JSON file")
    args = parse_args(ap, argv)  # the arguments' types check them, before the extensions

    from cbr.game import preset
    from cbr.play.table import dealt_decisions
    from cbr.policies.spec import policy_from_spec

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        old = build_old(args.old, Path(tmp))
        bots = {(n, path): (CFRPolicy(strategy="emd_256", resolve="river", resolve_iters=n) if path == "new" else OldResolving(old, n))
                for n in ITERATIONS for path in ("new", "old")}
        game = preset("holdem.limit.2p")
        rng = random.Random(args.seed)
        player = bots[(40, "new")]
        wall: dict = {k: {"all": [], "first": []} for k in bots}
        cpu: dict = {k: {"all": [], "first": []} for k in bots}
        hands_seen = 0
        for opp_spec in ("cfr:strategy=emd_256", "raise"):
            opp = policy_from_spec(opp_spec, seed=args.seed)
            for deal in range(args.hands):
                seat = deal % 2
                for bot in bots.values():
                    bot.reset()
                opp.reset()
                first = True
                for s, dp in dealt_decisions(game, args.seed, deal + (0 if opp_spec.startswith("cfr") else 100_000)):
                    if dp.position != seat:
                        s.act(opp.act(dp, rng))
                        continue
                    got = {}
                    for n in ITERATIONS:
                        order = ("new", "old") if (deal + n) % 2 == 0 else ("old", "new")
                        for path in order:
                            w, c = time.perf_counter(), time.process_time()
                            got[(n, path)] = bots[(n, path)].triple(dp)
                            w, c = 1000.0 * (time.perf_counter() - w), 1000.0 * (time.process_time() - c)
                            if dp.street == 3:
                                for k in ("all", "first") if first else ("all",):
                                    wall[(n, path)][k].append(w)
                                    cpu[(n, path)][k].append(c)
                        if got[(n, "new")] != got[(n, "old")]:
                            raise SystemExit(f"error: hand {deal} against {opp_spec}, {counted(n, 'iteration')}: the old and the "
                                             f"current path differ: {got[(n, 'old')]} != {got[(n, 'new')]}")
                    if dp.street == 3:
                        first = False
                    s.act(player.act(dp, rng))
                hands_seen += 1
    load_after = os.getloadavg()
    if not wall[(ITERATIONS[0], "new")]["all"]:  # (their medians were a StatisticsError)
        raise SystemExit(f"error: the bot reached no river decision in {counted(hands_seen, 'hand')}: nothing to time; give "
                         f"more --hands")
    result = {"hands": hands_seen, "seed": args.seed, "old": args.old,
              "load_average_before": [round(x, 2) for x in load_before],
              "load_average_after": [round(x, 2) for x in load_after], "paths": {}}
    print(f"{counted(hands_seen, 'hand')} (seed {args.seed}; half against cfr, half against raise); old path: {args.old}; "
          f"load average {' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} after")
    for n in ITERATIONS:
        for k, label in (("all", "every river decision"), ("first", "first river decision of a hand (the solve)")):
            row = {}
            for path in ("old", "new"):
                row[path] = {"wall_ms": summary(wall[(n, path)][k]), "cpu_ms": summary(cpu[(n, path)][k])}
            ratio = {clock: {stat: round(row["new"][clock][stat] / row["old"][clock][stat], 3)
                             for stat in ("p50", "p99", "mean")} for clock in ("wall_ms", "cpu_ms")}
            result["paths"][f"{n} {k}"] = {**row, "ratio_new_old": ratio}
            print(f"{counted(n, 'iteration'):>15}, {label} (n = {row['new']['wall_ms']['n']}):")
            for clock in ("wall_ms", "cpu_ms"):
                o, c = row["old"][clock], row["new"][clock]
                print(f"      {clock[:-3]:>4} ms: old p50 {o['p50']:8.2f}  p99 {o['p99']:8.2f}  mean {o['mean']:8.2f} | "
                      f"new p50 {c['p50']:8.2f}  p99 {c['p99']:8.2f}  mean {c['mean']:8.2f} | new/old p50 "
                      f"{ratio[clock]['p50']:.2f} p99 {ratio[clock]['p99']:.2f} mean {ratio[clock]['mean']:.2f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    from native_guard import run

    run(main)
