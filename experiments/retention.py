"""CASPER's figures 5 and 6: does the case-based bot learn from the table it plays?

    python3 experiments/retention.py [--hands 10000] [--seed 2] [--opponent station] [--reuse best-outcome]

The ``cbr`` bot starts from (a copy of) the default case base and plays ``--hands``
heads-up hands against an opponent whose style the case base lacks (default ``station``:
a loose-passive calling station that raises only the nuts; none of the default case
base's bots plays like it), twice on the same deals: once retaining every hand (its own
decisions with their outcomes, the opponent's shown at a showdown) and once without
retention (the control). ``--reuse best-outcome`` lets retained outcomes change what
the bot does (with ``probabilistic`` re-use, retention only adds its own and the
opponent's actions to the votes).

Measured per decision: the mean similarity of the 10 most similar retrieved cases (how
close the nearest experience is; the mean over all retrieved cases sits at the retrieval
threshold by construction); per hand: the small bets won. Reported: the rolling mean similarity (window ``--window`` decisions), the
cumulative small bets, and the win rate of each third of the match with a 95% CI, plus
two differences with 95% CIs: last third minus first third (retention on), and last third
with retention minus without (paired by deal). Written to
``experiments/scratch/retention-seed<S>.json`` and ``.png`` (matplotlib, the ``plots``
extra). Choices were made on seed 1; docs/experiments.md reports seed 2.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from cbr.play.match import run_match  # noqa: E402
from cbr.play.retention import copy_casebase  # noqa: E402
from cbr.policies.cbr_policy import REUSE_POLICIES, CBRPolicy  # noqa: E402
from cbr.stats import Z95  # noqa: E402


class WatchedCBR(CBRPolicy):
    """The cbr bot, recording each decision's mean similarity and the hand it was in."""

    def __init__(self, **kw) -> None:  # noqa: ANN003
        super().__init__(**kw)
        self.similarities: list[float] = []
        self.hands: list[int] = []

    def decide(self, dp, rng=None):  # noqa: ANN001, ANN201  (what the table asks; act goes through it too)
        made = super().decide(dp, rng)
        self.similarities.append(made.similarity)
        self.hands.append(int(dp.hand_id))
        return made


def play(hands: int, seed: int, opponent: str, reuse: str, retain: bool, root: Path, casebase: str = "default",
         gate: float | None = None, spec: str | None = None) -> dict:
    path = copy_casebase(casebase, root / ("retain" if retain else "control"))
    if spec is None:
        bot = WatchedCBR(casebase=str(path), reuse=reuse, seed=seed)
    else:  # another configuration (e.g. plain `cbr`, the adaptive bot) over the copy: no similarities kept
        from cbr.policies.spec import policy_from_spec

        bot = policy_from_spec(f"{spec}:casebase={path}", seed=seed)
        bot.similarities, bot.hands = [], []
    t = time.perf_counter()
    r = run_match([bot, opponent], hands, seed=seed, retain=retain, keep_payoffs=True,
                  retain_gate=gate if retain else None)
    seconds = time.perf_counter() - t
    changed = getattr(bot, "memory_changed", None)  # the adaptive bot's table memory: the decisions it changed
    bot.close()
    sb = np.array([p[0] for p in r.hand_payoffs]) / r.game.small_bet
    return {"sb": sb, "similarity": np.array(bot.similarities), "decision_hand": np.array(bot.hands),
            "retained": r.retained, "skipped": r.retain_skipped, "seconds": seconds, "memory_changed": changed}


def mean_ci(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(Z95 * x.std(ddof=1) / math.sqrt(len(x)))


def diff_ci(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Difference of two independent means with its 95% half-width."""
    return float(a.mean() - b.mean()), float(Z95 * math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b)))


def rolling(x: np.ndarray, w: int) -> np.ndarray:
    c = np.cumsum(np.insert(x, 0, 0.0))
    return (c[w:] - c[:-w]) / w


def checked_bot(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The bot built as it will play, over ``--casebase`` (``--bot``, else CASPER's with
    ``--reuse``), and closed, before any work. A case base that does not exist or cannot be
    opened is the library's error, said as ``cbr query -c`` says it (one ``error:`` line, exit 1,
    from :func:`common.run`: :func:`common.check_casebase`); a ``--bot`` that takes none is a
    usage error."""
    from common import check_casebase, policy_spec

    from cbr.errors import CBRError
    from cbr.policies.spec import PolicyFileError

    check_casebase(args.casebase)
    try:
        if args.bot is None:
            WatchedCBR(casebase=args.casebase, reuse=args.reuse, seed=0).close()
        else:
            policy_spec(f"{args.bot}:casebase={args.casebase}")
    except PolicyFileError as exc:  # --casebase is this script's option: the loader's words, without the bot's option
        ap.error(f"argument {'--bot' if args.bot else '--casebase'}: {exc.reason if args.bot is None else exc}")
    except (CBRError, argparse.ArgumentTypeError) as exc:
        ap.error(f"argument {'--bot' if args.bot else '--casebase'}: {exc}")


def main() -> None:
    from common import (
        OUT_FOLDER_HELP,
        description,
        help_format,
        number,
        out_folder,
        out_path,
        policy_spec,
        positive_int,
        require_native,
        seed_int,
        write_json,
    )

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=10_000, help="hands played, with retention and without (30 or more)")
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed of the matches")
    ap.add_argument("--opponent", type=policy_spec, default="station", help="the opponent's policy spec")
    ap.add_argument("--reuse", choices=REUSE_POLICIES, default="best-outcome", help="the bot's re-use policy")
    ap.add_argument("--window", type=positive_int, default=2000, help="hands in the rolling window of the similarity plot")
    ap.add_argument("--casebase", default="default", help="the case base the bot starts from (a copy of it)")
    ap.add_argument("--out", type=out_path("folder"), default=None, help=OUT_FOLDER_HELP)
    ap.add_argument("--bot", type=policy_spec, default=None,
                    help="a policy spec to play instead of CASPER's bot (e.g. cbr, the adaptive default; "
                         "its casebase option is the copy); --reuse does not apply, no similarities are kept")
    ap.add_argument("--retain-gate", type=number(0, above=True, high=1), default=None,
                    help="skip retaining near-duplicates at this similarity (cbr match --retain-gate) (default: off)")
    args = ap.parse_args()
    stem = (f"retention-seed{args.seed}" if args.casebase == "default"
            else f"retention-{Path(args.casebase).name}-{args.opponent}-seed{args.seed}")
    if args.retain_gate is not None:
        stem += f"-gate{args.retain_gate:g}"
    if args.bot is not None:
        stem += "-" + args.bot.replace(":", "_").replace("=", "-").replace(".", "") + f"-{args.opponent}"
    if args.hands < 30 or not 1 <= args.window:
        ap.error("--hands must be at least 30 (three thirds with a CI each) and --window at least 1")
    checked_bot(ap, args)
    require_native()  # after every usage check: a usage error is one, extensions or not
    outdir = out_folder(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for retain in (True, False):
            runs[retain] = play(args.hands, args.seed, args.opponent, args.reuse, retain, Path(tmp), args.casebase,
                                args.retain_gate, args.bot)
            print(f"retention {'on ' if retain else 'off'}: {counted(args.hands, 'hand')} in {runs[retain]['seconds']:.0f} s"
                  + (f", {counted(runs[retain]['retained'], 'case')} retained" if retain else ""), file=sys.stderr)
    on, off = runs[True], runs[False]
    n = args.hands
    thirds = [slice(0, n // 3), slice(n // 3, 2 * n // 3), slice(2 * n // 3, n)]
    report: dict = {
        "experiment": "retention (CASPER figures 5 and 6)", "hands": n, "seed": args.seed, "tuning_seed": 1,
        "opponent": args.opponent, "reuse": None if args.bot else args.reuse, "casebase": args.casebase,
        "retained": on["retained"],
        "retain_gate": args.retain_gate, "retain_skipped": on["skipped"], "bot": args.bot,
        "memory_changed": on["memory_changed"],
        "seconds": {"retention": round(on["seconds"], 1), "control": round(off["seconds"], 1)},
        "thirds": {}, "similarity_thirds": {},
    }
    for label, run in (("retention", on), ("control", off)):
        report["thirds"][label] = [dict(zip(("sb_per_hand", "ci"), (round(v, 4) for v in mean_ci(run["sb"][t]))))
                                   for t in thirds]
        sims = [run["similarity"][(run["decision_hand"] >= t.start) & (run["decision_hand"] < t.stop)] for t in thirds]
        report["similarity_thirds"][label] = [round(float(s.mean()), 4) if len(s) else None for s in sims]
    d_time = diff_ci(on["sb"][thirds[2]], on["sb"][thirds[0]])
    d_ctrl = mean_ci(on["sb"][thirds[2]] - off["sb"][thirds[2]])  # same deals: paired
    d_all = mean_ci(on["sb"] - off["sb"])  # the whole match, paired by deal
    report["last_minus_first_third"] = {"sb_per_hand": round(d_time[0], 4), "ci": round(d_time[1], 4)}
    report["whole_match_minus_control"] = {"sb_per_hand": round(d_all[0], 4), "ci": round(d_all[1], 4)}
    report["last_third_minus_control"] = {"sb_per_hand": round(d_ctrl[0], 4), "ci": round(d_ctrl[1], 4)}
    report["whole_match"] = {k: dict(zip(("sb_per_hand", "ci"), (round(v, 4) for v in mean_ci(r["sb"]))))
                             for k, r in (("retention", on), ("control", off))}
    s0, s2 = report["similarity_thirds"]["retention"][0], report["similarity_thirds"]["retention"][2]
    report["verdict"] = {
        "similarity_rises": None if s0 is None or s2 is None else bool(s2 > s0),  # None: a --bot keeps none
        "last_third_beats_first_by_more_than_ci": bool(d_time[0] > d_time[1]),
        "last_third_beats_control_by_more_than_ci": bool(d_ctrl[0] > d_ctrl[1]),
    }
    out = outdir / f"{stem}.json"
    write_json(out, report)  # the folder with the result: a run that fails leaves none
    print(json.dumps(report, indent=2))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing: pip install -e .[plots] for the PNG (the JSON is written)", file=sys.stderr)
        return
    kept = len(on["similarity"]) > 0  # a --bot keeps no similarities: the winnings alone
    fig, axes = plt.subplots(3 if kept else 2, 1, figsize=(9, 10 if kept else 7), sharex=False, squeeze=False)
    a1, a2, a3 = (axes[0, 0], axes[1, 0], axes[2, 0]) if kept else (None, axes[0, 0], axes[1, 0])
    w = args.window
    for label, run, color in (("retention on", on, "tab:blue"), ("retention off (control)", off, "tab:gray")):
        w = min(args.window, len(run["similarity"]))
        if a1 is not None and w:
            a1.plot(run["decision_hand"][w - 1:], rolling(run["similarity"], w), label=label, color=color)
        hand = np.arange(1, n + 1)
        band = Z95 * run["sb"].std(ddof=1) * np.sqrt(hand)  # 95% band of a sum of i.i.d. hands
        a2.plot(hand, np.cumsum(run["sb"]), label=label, color=color)
        a2.fill_between(hand, np.cumsum(run["sb"]) - band, np.cumsum(run["sb"]) + band, color=color, alpha=0.15)
    who = args.bot or f"cbr ({args.reuse})"
    if a1 is not None:
        a1.set_ylabel(f"similarity of the 10 nearest cases\n(rolling mean, {counted(w, 'decision')})")
        a1.set_xlabel("hand")
        a1.legend()
    (a1 if a1 is not None else a2).set_title(f"{who}, from {Path(args.casebase).name}, vs {args.opponent}, {n:,} heads-up hands, seed {args.seed}")
    a2.set_ylabel("cumulative small bets won\n(band: 95% CI)")
    a2.set_xlabel("hand")
    a2.legend()
    paired = on["sb"] - off["sb"]  # the same deals: what retention changed, hand by hand
    hand = np.arange(1, n + 1)
    band = Z95 * paired.std(ddof=1) * np.sqrt(hand)
    a3.plot(hand, np.cumsum(paired), color="tab:green", label="retention on minus control (same deals)")
    a3.fill_between(hand, np.cumsum(paired) - band, np.cumsum(paired) + band, color="tab:green", alpha=0.15)
    a3.axhline(0.0, color="black", linewidth=0.8)
    a3.set_ylabel("cumulative difference, small bets\n(band: 95% CI)")
    a3.set_xlabel("hand")
    a3.legend()
    fig.tight_layout()
    png = outdir / f"{stem}.png"
    fig.savefig(png, dpi=100)
    print(f"wrote {out} and {png}", file=sys.stderr)


if __name__ == "__main__":
    from common import run

    run(main)
