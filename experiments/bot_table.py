"""Every bot of the house on one table: LBR (mbb/g), duplicate results against ``call``,
``raise`` and ``ehs`` (sb/h), and decision time, heads-up limit, with 95% CIs.

    python3 experiments/bot_table.py --seed 2 --hands 4000 --lbr-hands 2000 --workers 2

Rows are policy specs (``--bots``); columns are ``--opponents`` (duplicate matches of
``--hands`` hands, ``--workers`` at a time), LBR (``cbr exploit``'s default variant, at most
``--lbr-hands`` hands or ``--lbr-budget`` seconds; a row's LBR is taken from
``exploit-table-seed<S>.json`` when that file measured the same spec on the same seed) and the
decision time (mean and p99 of every decision in ``--time-hands`` hands against ``call``, one
process, after a warm-up hand). A cell already in the results file is kept unless ``--redo``
(which also measures the LBRs the committed files hold); a run that reuses a file says which on
stdout.
Writes ``experiments/scratch/bot-table-seed<S>.json``, ``bot-table-seed<S>.png`` (matplotlib,
the ``plots`` extra) and a Markdown table on stdout.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from common import budgeted_lbr, ci_text, duel, one_process_stores, require_native, worker_pool, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.play.match import run_match  # noqa: E402
from cbr.policies.spec import policy_from_spec  # noqa: E402

#: The committed results this table is built from (read only; it writes to --out)
RESULTS = Path(__file__).resolve().parent / "results"  # read only
BOTS = ("hs,ehs,poki,lag,simbot,cfr:strategy=h_hs2_4,cfr:strategy=emd_256,cfr:strategy=emd_256:resolve=river,cfr,cbr:preset=casper,cbr:preset=expert,cbr")
OPPONENTS = "call,raise,ehs"
LABELS = {"cfr:strategy=h_hs2_4": "cfr, 4 buckets (the first default)", "cfr:strategy=emd_256": "cfr, MCCFR teacher as trained (default until 2026-11-29)",
          "cfr:strategy=emd_256:resolve=river": "cfr, the teacher re-solving its river (default until 2026-12-01)",
          "cfr": "cfr, 2,000 buckets re-solving its river (default)",
          "cbr:preset=casper": "cbr, CASPER's base (old default)", "cbr:preset=expert": "cbr, expert base (default until issue 36)",
          "cbr": "cbr, adaptive (the default)"}


def lbr(bot: str, hands: int, seed: int, workers: int, budget: float) -> dict:
    """LBR against ``bot`` for at most ``hands`` hands or ``budget`` seconds, as the table keeps it."""
    r = budgeted_lbr(bot, hands, seed, workers, budget)
    return {"mbb": r["mbb_per_game"], "ci": r["ci95"], "hands": r["hands"], "seconds": round(r["seconds"])}


def lbr_text(r: dict, unit: str = " mbb/g") -> str:
    """An LBR cell as ``mbb ± ci``, with ``n/a`` for what its hands could not give: no CI from
    a single deal (``--lbr-hands`` 2 or 3), no value when no deal finished within the budget.

    >>> lbr_text({"mbb": 750.0, "ci": 12.4}), lbr_text({"mbb": 750.0, "ci": None}), lbr_text({"mbb": None, "ci": None}, "")
    ('750 ± 12 mbb/g', '750 ± n/a mbb/g', 'n/a')
    """
    if r["mbb"] is None:
        return "n/a"
    return f"{r['mbb']:.0f} ± {'n/a' if r['ci'] is None else format(r['ci'], '.0f')}{unit}"


def decision_time(bot: str, hands: int, seed: int) -> dict:
    """Mean and p99 milliseconds of ``bot``'s decisions in ``hands`` hands against ``call``."""
    policy = policy_from_spec(bot, seed=seed)
    times: list[float] = []
    decide = policy.decide  # what the table calls (the adaptive and case-based bots do not go through act)

    def timed(dp, rng):
        t = time.perf_counter()
        d = decide(dp, rng)
        times.append(time.perf_counter() - t)
        return d

    policy.decide = timed  # type: ignore[method-assign]
    run_match([policy, "call"], 2, seed=seed + 1)  # warm-up: the case base or strategy is loaded
    times.clear()
    run_match([policy, "call"], hands, seed=seed)
    ms = np.array(times) * 1e3
    close = getattr(policy, "close", None)
    if close is not None:
        close()
    return {"mean_ms": float(ms.mean()), "p99_ms": float(np.percentile(ms, 99)), "decisions": int(ms.size)}


def old_lbr(seed: int, bot: str) -> dict | None:
    """The LBR of ``bot`` measured earlier: the exploitability table of the same seed, or for
    the teacher as trained (``cfr:strategy=emd_256``) its own experiment (``teacher-seed*.json``,
    the largest run)."""
    if bot == "cfr:strategy=emd_256":
        runs = [json.loads(p.read_text()) for p in sorted(RESULTS.glob("teacher-seed*.json"))]
        runs = [r for r in runs if "lbr" in r]
        if runs:
            r = max(runs, key=lambda r: r["lbr"]["hands"])
            return {**{k: r["lbr"][k] for k in ("mbb", "ci", "hands")}, "seconds": r["lbr"]["lbr_seconds"],
                    "from": f"teacher-seed{r['seed']}.json"}
        return None
    path = RESULTS / f"exploit-table-seed{seed}.json"  # read only: the committed table
    if not path.exists():
        return None
    # its rows are keyed by the spec measured (the 4-bucket cfr row by cfr:strategy=h_hs2_4; the
    # cbr row was re-run with today's default, the CASPER preset's is gone)
    row = json.loads(path.read_text())["rows"].get(bot)
    if not row or "lbr" not in row:
        return None
    r = row["lbr"]
    return {"mbb": r["mbb_per_game"], "ci": r["ci95"], "hands": r["hands"], "seconds": round(r["seconds"]),
            "from": path.name}


def chart_columns(report: dict, bots: list[str], opponents: list[str]) -> tuple[list[str], list[str]]:
    """What the chart can draw from what was measured: the bots (rows) with a measured cell, and
    the columns (``lbr``, then the opponents) that some bot has; two empty lists when nothing
    was measured (a run with ``--skip lbr,matches``).

    >>> report = {"rows": {"call": {"raise": {"sb_per_hand": 1.0, "ci": 0.1}}, "hs": {"time": {}}}}
    >>> chart_columns(report, ["call", "hs"], ["raise", "ehs"])
    (['call'], ['raise'])
    """
    rows = report["rows"]
    columns = [c for c in ("lbr", *opponents) if any(c in rows.get(b, {}) for b in bots)]
    return [b for b in bots if any(c in rows.get(b, {}) for c in columns)], columns


def _or_nan(value: object) -> float:
    return np.nan if value is None else float(value)


def plot(report: dict, bots: list[str], opponents: list[str], path: Path) -> str:
    """Draw the LBR and match columns measured so far into ``path``; what was drawn, or why
    nothing was (one line for stderr)."""
    bots, columns = chart_columns(report, bots, opponents)
    if not columns:
        return f"no chart: no bot has an LBR or a match result to draw, so no {path.name} was written"
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    fig, axes = plt.subplots(1, len(columns), figsize=(1 + 3 * len(columns), 0.45 * len(bots) + 1.8),
                             sharey=True, squeeze=False)
    y = np.arange(len(bots))
    names = [LABELS.get(b, b) for b in bots]
    titles = {"lbr": ("LBR (mbb/g, lower is better)", "mbb")}
    for ax, key in zip(axes[0], columns):
        title, field = titles.get(key, (f"against {key} (sb/h)", "sb_per_hand"))
        # a value or CI the hands could not give (None: lbr_text) is drawn as nothing
        vals = [_or_nan(rows[b].get(key, {}).get(field, np.nan)) for b in bots]
        errs = [_or_nan(rows[b].get(key, {}).get("ci", 0)) for b in bots]
        ax.barh(y, vals, xerr=errs, color="C0" if key == "lbr" else "C2", alpha=0.8, capsize=3)
        top = max((v for v in vals if np.isfinite(v)), default=0.0)
        if key == "lbr" and top > 0:  # a bot measured over a few hands has a CI wider than the field: cut at 2.5x the top value
            ax.set_xlim(0, 2.5 * top)
        ax.set_title(title, fontsize=9)
        ax.axvline(0, color="black", lw=0.8)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(y, names, fontsize=8)
    axes[0][0].invert_yaxis()
    fig.suptitle(f"The house's bots, heads-up limit (seed {report['seed']}, 95% CI bars)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    shown = ", ".join("LBR" if c == "lbr" else f"against {c}" for c in columns)
    return f"wrote {path} ({counted(len(bots), 'bot')}: {shown})"


def main() -> int:
    from common import (
        OUT_FOLDER_HELP,
        description,
        help_format,
        out_folder,
        out_path,
        policy_specs,
        positive_float,
        positive_int,
        seed_int,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed of the matches, LBR and the timing")
    ap.add_argument("--bots", type=policy_specs(), default=BOTS, help="comma-separated bots (policy specs)")
    ap.add_argument("--opponents", type=policy_specs(), default=OPPONENTS, help="comma-separated opponents of the matches (policy specs)")
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("--lbr-hands", type=positive_int, default=2000, help="LBR hands per bot, at most")
    ap.add_argument("--lbr-budget", type=positive_float, default=1800, help="seconds of LBR per bot, at most")
    ap.add_argument("--time-hands", type=positive_int, default=300, help="hands played to time each bot's decisions")
    ap.add_argument("--workers", type=positive_int, default=2, help="worker processes")
    ap.add_argument("--skip", default="", help="comma list of parts to skip: matches,lbr,time")
    ap.add_argument("--redo", action="store_true",
                    help="measure everything afresh: neither the results file's cells nor the committed LBRs "
                         "(exploit-table-seed<S>.json, teacher-seed*.json) are reused")
    ap.add_argument("--out", type=out_path("folder"), default=None, help=OUT_FOLDER_HELP)
    args = ap.parse_args()
    skip = set(filter(None, (p.strip() for p in args.skip.split(","))))
    parts = ("matches", "lbr", "time")
    if skip - set(parts):  # a usage error, one line, before anything runs
        ap.error(f"argument --skip: {counted(len(skip - set(parts)), 'unknown part')}: "
                 f"{', '.join(sorted(skip - set(parts)))}; "
                 f"choose from: {', '.join(parts)}")
    one_process_stores(ap, args)
    require_native()  # after every usage check: a usage error is one, extensions or not
    bots, opponents = args.bots, args.opponents
    outdir = out_folder(args.out)
    out = outdir / f"bot-table-seed{args.seed}.json"
    # an earlier run of this script wrote an unmeasurable CI as Infinity (not JSON): read as null, as now written
    report = (json.loads(out.read_text(), parse_constant=lambda _: None) if out.exists() and not args.redo
              else {"seed": args.seed, "rows": {}})
    rows = report["rows"]
    kept = sum(c in rows.get(b, {}) for b in bots for c in ("lbr", *opponents, "time"))  # cells not measured again
    reused: dict[str, list[str]] = {}  # a committed file -> the bots whose LBR was taken from it

    measured = 0  # cells this run has written into out

    def save() -> None:
        write_json(out, report, indent=1)  # the folder with the first result: a run that fails before leaves none

    def written() -> str:
        """What a worker's death leaves: the cells this run wrote, and where, or none."""
        if measured:
            return (f"{counted(measured, 'cell')} measured by this run {'are' if measured > 1 else 'is'} "
                    f"in {out} (a re-run measures only the rest).")
        return "No cell was written" + (f" ({out} is as an earlier run left it)." if out.exists() else ".")

    if "matches" not in skip:
        todo = [(b, o) for b in bots for o in opponents if o not in rows.get(b, {})]
        with worker_pool(args.workers, kept=written) as pool:
            results = pool.map(duel, [b for b, _ in todo], [o for _, o in todo], [args.hands] * len(todo),
                               [args.seed] * len(todo))
            for (b, o), m in zip(todo, results):
                rows.setdefault(b, {})[o] = m
                print(f"{b} vs {o}: {m['sb_per_hand']:+.3f} ± {ci_text(m['ci'])} sb/h", file=sys.stderr, flush=True)
                save()
                measured += 1
    if "lbr" not in skip:
        for b in bots:
            if "lbr" in rows.get(b, {}):
                continue
            r = None if args.redo else old_lbr(args.seed, b)
            if r is not None:
                reused.setdefault(r["from"], []).append(b)
            else:
                r = lbr(b, args.lbr_hands, args.seed, args.workers, args.lbr_budget)
            rows.setdefault(b, {})["lbr"] = r
            few = ": too few for a CI" if r["ci"] is None else ""
            print(f"{b}: LBR {lbr_text(r)} ({counted(r['hands'], 'hand')}{few})", file=sys.stderr, flush=True)
            save()
    if "time" not in skip:
        for b in bots:
            if "time" not in rows.get(b, {}):
                rows.setdefault(b, {})["time"] = t = decision_time(b, args.time_hands, args.seed)
                print(f"{b}: {t['mean_ms']:.3f} ms mean, {t['p99_ms']:.3f} p99", file=sys.stderr, flush=True)
                save()
    save()
    try:
        print(plot(report, bots, opponents, outdir / f"bot-table-seed{args.seed}.png"), file=sys.stderr)
    except ImportError:
        print("matplotlib is missing: pip install -e .[plots] for the PNG (the JSON is written)", file=sys.stderr)
    if kept:
        print(f"reused {counted(kept, 'cell')} of {out}, measured by an earlier run; --redo measures "
              "them afresh")
    for name, which in reused.items():
        print(f"reused the LBR of {', '.join(which)} from the committed experiments/results/{name}; "
              "--redo measures it afresh")
    head = "| bot | LBR (mbb/g) | " + " | ".join(f"vs `{o}` (sb/h)" for o in opponents) + " | decision ms (mean / p99) |"
    print(head + "\n|---|" + "---:|" * (len(opponents) + 2))
    for b in bots:
        r = rows.get(b, {})
        cells = [f"{lbr_text(r['lbr'], unit='')} ({r['lbr']['hands']:,} h)" if "lbr" in r else "-"]
        cells += [f"{r[o]['sb_per_hand']:+.3f} ± {ci_text(r[o]['ci'])}" if o in r else "-" for o in opponents]
        cells.append(f"{r['time']['mean_ms']:.2f} / {r['time']['p99_ms']:.2f}" if "time" in r else "-")
        print(f"| `{b}` | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    from common import run, so_far

    run(main, so_far("the cells measured so far", " (a re-run measures only the rest)"))
