"""The re-use policies compared (issue 8, section 7b): probabilistic, max-frequency, best-outcome.

    python3 experiments/reuse_policies.py [--seed 2] [--hands 4000] [--jobs 1|2] [--bot SPEC] [--also SPEC]

Each re-use policy of the case-based bot (``--bot`` with ``reuse=...`` added; default
case base) plays the SAME duplicate deals (one seed, so deal ``d`` has the same cards in
every match) against each of ``poki``, ``ehs``, ``lag``, ``hs``, ``call``, ``raise``,
``random``, and so does ``--also`` (default: the tuned bot of CASPER's table). Reported: each policy's sb/h with its 95% CI, and each policy minus
``probabilistic`` deal by deal (a paired difference: the card luck both saw cancels, so
its CI is narrower than either result's). Writes ``experiments/scratch/reuse_policies.json``
and ``reuse_policies.png`` (needs ``pip install -e .[plots]``; the JSON is written
without it). Progress goes to stderr.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per match: the machine is shared
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT_HELP, ci_text, environment, finite, out_file, out_path, policy_spec, pyplot, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.play.match import run_match  # noqa: E402
from cbr.play.measure import BASELINES, SOURCE_BOTS, TARGETS, TUNED_BOT, deal_means, paired_difference  # noqa: E402
from cbr.policies.cbr_policy import REUSE_POLICIES  # noqa: E402
from cbr.policies.spec import parse_policy_spec  # noqa: E402

OPPONENTS = (*SOURCE_BOTS, *BASELINES)


def with_reuse(bot: str, reuse: str) -> str:
    """``bot``'s spec with ``reuse`` set (replacing one given)."""
    name, options = parse_policy_spec(bot)
    options["reuse"] = reuse
    return ":".join([name, *(f"{k}={v}" for k, v in options.items())])


def bot_spec(text: str) -> str:
    """``--bot``: a policy spec that plays with each re-use policy (checked as given, then with each
    ``reuse=...``, by :func:`common.policy_spec`)."""
    spec = policy_spec(text)
    for reuse in REUSE_POLICIES:
        policy_spec(with_reuse(spec, reuse))
    return spec


def also_spec(text: str) -> str:
    """``--also``: a policy spec (:func:`common.policy_spec`), or "" for none."""
    return policy_spec(text) if text.strip() else ""


def run_one(job: dict) -> dict:
    """One match; its result and the bot's per-deal averages (for the paired differences)."""
    t0 = time.perf_counter()
    r = run_match([job["spec"], job["opponent"]], job["hands"], duplicate=True, seed=job["seed"],
                  keep_payoffs=True)
    me = r.players[0]
    out = {"reuse": job["reuse"], "opponent": job["opponent"], "hands": r.hands, "deals": r.deals,
           "sb": me.sb_per_hand, "ci": me.sb_ci, "seconds": time.perf_counter() - t0,
           "deal_means": deal_means(r)}
    say(f"{job['reuse']:>13} vs {job['opponent']:6}: {me.sb_per_hand:+.3f} ± {ci_text(me.sb_ci)} sb/h "
        f"({out['seconds']:.0f} s)")
    return out


def compare(results: list[dict], variants: list[str]) -> list[dict]:
    """Rows per opponent and policy: sb/h with CI, and the paired difference to probabilistic."""
    by = {(r["opponent"], r["reuse"]): r for r in results}
    rows = []
    for opp in OPPONENTS:
        base = by[(opp, "probabilistic")]["deal_means"]
        for reuse in variants:
            r = by[(opp, reuse)]
            diff, dci = paired_difference(r["deal_means"], base) if reuse != "probabilistic" else (0.0, 0.0)
            rows.append({"opponent": opp, "reuse": reuse, "hands": r["hands"], "sb": round(r["sb"], 4),
                         "ci": finite(r["ci"], 4), "vs_probabilistic": round(diff, 4),
                         "vs_probabilistic_ci": finite(dci, 4), "target": TARGETS[opp],
                         "seconds": round(r["seconds"], 1)})
    return rows


def markdown(rows: list[dict], variants: list[str]) -> str:
    """One line per opponent, one column per re-use policy (differences in brackets)."""
    head = "| opponent | " + " | ".join(f"`{v}`" if ":" in v else v for v in variants) + " |"
    lines = [head, "|---|" + "---:|" * len(variants)]
    for opp in OPPONENTS:
        cells = []
        for reuse in variants:
            r = next(x for x in rows if x["opponent"] == opp and x["reuse"] == reuse)
            text = f"{r['sb']:+.3f} ± {ci_text(r['ci'])}"
            if reuse != "probabilistic":
                text += f" ({r['vs_probabilistic']:+.3f} ± {ci_text(r['vs_probabilistic_ci'])})"
            cells.append(text)
        lines.append(f"| {opp} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(rows: list[dict], variants: list[str], path: Path, title: str) -> bool:
    """Grouped bars: one group per opponent, one bar per re-use policy, 95% CI whiskers."""
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(9.5, 4.8))
    width = 0.8 / len(variants)
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    for i, reuse in enumerate(variants):
        rs = [next(x for x in rows if x["opponent"] == o and x["reuse"] == reuse) for o in OPPONENTS]
        xs = [j + (i - (len(variants) - 1) / 2) * width for j in range(len(OPPONENTS))]
        ax.bar(xs, [r["sb"] for r in rs], width, yerr=[r["ci"] or 0.0 for r in rs], capsize=3,
               color=colors[i % len(colors)], edgecolor="black", linewidth=0.5, label=reuse)
    for j, opp in enumerate(OPPONENTS):
        if TARGETS[opp] is not None:
            ax.hlines(TARGETS[opp], j - 0.45, j + 0.45, colors="red", linestyles="--", linewidth=1.2)
    ax.plot([], [], "r--", label="target (issue 8)")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(OPPONENTS)), list(OPPONENTS))
    ax.set_ylabel("cbr bot, small bets per hand")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: Optional[list[str]] = None) -> int:
    from common import description, help_format, one_process_stores, positive_int, require_native, seed_int, worker_pool

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed (2: the reported run; 1 was for tuning)")
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("--jobs", type=int, choices=(1, 2), default=1, help="matches played at once")
    ap.add_argument("--bot", type=bot_spec, default="cbr:preset=expert", help="the case-based bot's spec; reuse=... is set per run")
    ap.add_argument("--also", type=also_spec, default=TUNED_BOT, metavar="SPEC",
                    help=f"one more bot compared on the same deals (default: the tuned {TUNED_BOT}; '' for none)")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="reuse_policies.json"))
    ap.add_argument("--png", type=out_path("file"), default=None, help="the PNG to write, in a folder that exists (default: the --out path with .png)")
    args = ap.parse_args(argv)
    if args.hands < 2:
        ap.error("--hands must be at least 2 (one deal)")
    one_process_stores(ap, args)
    require_native()  # after every usage check: a usage error is one, extensions or not
    args.out = out_file(args.out, "reuse_policies.json")
    png = args.png or args.out.with_suffix(".png")
    specs = {reuse: with_reuse(args.bot, reuse) for reuse in REUSE_POLICIES}
    if args.also:
        specs[args.also] = args.also
    variants = list(specs)
    jobs = [{"spec": spec, "reuse": label, "opponent": opp, "hands": args.hands, "seed": args.seed}
            for opp in OPPONENTS for label, spec in specs.items()]
    t0 = time.perf_counter()
    say(f"re-use policies: {counted(len(jobs), 'match', 'matches')} of {args.hands} duplicate hands, seed {args.seed}, jobs {args.jobs}")
    if args.jobs == 1:
        results = [run_one(j) for j in jobs]
    else:
        with worker_pool(args.jobs) as pool:
            results = list(pool.map(run_one, jobs))
    seconds = time.perf_counter() - t0
    rows = compare(results, variants)
    table = markdown(rows, variants)
    report: dict[str, Any] = {
        "experiment": "re-use policies of the cbr bot on the same duplicate deals",
        "bot": args.bot, "specs": specs, "seed": args.seed, "tuning_seed": 1, "hands": args.hands,
        "game": "holdem.limit.2p", "jobs": args.jobs, "seconds": round(seconds, 1),
        "environment": environment(), "rows": rows, "markdown": table,
        "note": "vs_probabilistic: mean per-deal difference to the probabilistic bot on the same deals, 95% CI",
    }
    write_json(args.out, report)
    drew = plot(rows, variants, png, f"Re-use policies of {args.bot}, the same {args.hands:,} duplicate hands "
                           f"per match (seed {args.seed}), 95% CI")
    print(table)
    print(f"{counted(len(jobs) * args.hands, 'hand')} in {seconds:.0f} s; wrote {args.out}" + (f" and {png}" if drew else ""))
    return 0


if __name__ == "__main__":
    from common import run

    run(main, "nothing written")
