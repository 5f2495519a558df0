"""How much of a case base does each condensing method still cover?

    python3 experiments/condense_coverage.py BASE [--keep 0.1] [--seed 0] [--methods footprint,flat,sample,merge]

Condenses the case base BASE (a shipped name or a path) with each method of ``cbr casebase
condense`` into a temporary folder, one after the other on one core, and writes each report
(coverage and mean total variation per street, the share used per street, seconds) with the
cases kept per game and per source to ``experiments/scratch/condense-coverage-<BASE>.json``.
``flat`` is ``footprint --floor 0``; every other setting is the command's default, with the
seed of the tables in docs/casebases.md (0).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT_HELP, environment, out_file, out_path, say, write_json  # noqa: E402

from cbr.query.maintenance import condense  # noqa: E402
from cbr.store import CaseBase, resolve_casebase  # noqa: E402

METHODS = {"footprint": ("footprint", {}), "flat": ("footprint", {"floor": 0}), "sample": ("sample", {}),
           "merge": ("merge", {})}


def main() -> None:
    from common import description, help_format, number, parse_args, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("base", help="the case base to condense (a name or a folder)")
    ap.add_argument("--keep", type=number(0, above=True, high=1), default=0.1,
                    help="share of the cases kept, more than 0 and at most 1")
    ap.add_argument("--seed", type=seed_int, default=0, help="seed of the condensing methods")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated condensing methods")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="condense-coverage-<BASE>.json"))
    args = parse_args(ap)
    source = resolve_casebase(args.base)
    path = out_file(args.out, f"condense-coverage-{Path(args.base).name}.json")
    out: dict = {"base": args.base, "keep": args.keep, "seed": args.seed, "environment": environment(),
                 "methods": {}}
    for name in args.methods.split(","):
        method, options = METHODS[name]
        say(f"condensing {args.base} ({name})")
        with tempfile.TemporaryDirectory(prefix="condense-") as tmp:
            cpu = time.process_time()
            report = condense(source, Path(tmp) / name, method=method, keep=args.keep, seed=args.seed, **options)
            cpu = time.process_time() - cpu
            with CaseBase.open(Path(tmp) / name) as cb:
                games = dict(cb.sql("SELECT coalesce(game, ''), count(*) FROM cases GROUP BY 1 ORDER BY 1").fetchall())
                sources = dict(cb.sql("SELECT coalesce(source, ''), count(*) FROM cases GROUP BY 1 ORDER BY 1").fetchall())
        out["methods"][name] = {**report.to_dict(), "cpu_seconds": round(cpu, 1), "kept_per_game": games,
                                "kept_per_source": sources}
        say(f"  kept {report.kept}, coverage {report.coverage}, floor used {report.floor_per_street}, "
            f"{report.seconds:.0f} s ({cpu:.0f} CPU s)")
        write_json(path, out)  # after each method: a long run keeps what it measured
    with CaseBase.open(source) as cb:
        out["source_per_game"] = dict(cb.sql("SELECT coalesce(game, ''), count(*) FROM cases GROUP BY 1 ORDER BY 1").fetchall())
    write_json(path, out)
    say(f"wrote {path}")


if __name__ == "__main__":
    from common import run, so_far

    run(main, so_far("the methods measured so far"))
