"""The adaptive bot (plain ``cbr``, the ``adapt`` plugin with its defaults) against each opponent, beside the fixed bots of the house on the same
deals: its win rate, the best fixed bot's, whether it learns (hands 2,001-4,000 against 1-500),
and what it chose over time.

    python experiments/adaptive.py --seed 2 --hands 4000 -j 2

Seed 1 is the tuning seed (the style cases were measured on it); report on others. Writes
``experiments/scratch/adaptive-seed<S>.json`` and ``.png`` (learning curves with 95% bands).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

from common import OUT_HELP, ci_text, finite, out_file, out_path, policy_spec, pyplot, say, write_json

from cbr.errors import counted

#: Opponents: the house's bots, the baselines, and two that change style in the middle.
OPPONENTS = ["call", "raise", "station", "hs", "ehs", "poki", "lag", "phase3", "cfr:strategy=emd_256", "call>raise", "raise>call"]
#: Opponents no style case was measured on (variants of the house's bots with other options):
#: how the bot does against players it has never seen.
UNSEEN = ["rock:raise-rank=10:call-rank=60", "lag:looseness=0.4:stab-rate=0.2", "ehs:bluff-rate=0.6:raise-ehs=0.5",
          "hs:call-hs=0.2:raise-hs=0.6", "station>lag"]
#: Fixed bots measured beside it against each opponent (the best of them is the bar).
FIXED = ["cbr:preset=expert", "ehs", "poki", "hs", "cfr:strategy=emd_256", "phase3", "lag", "cbr:preset=casper"]


def _switching(spec: str, hands: int, seed: int):
    """``a>b``: plays ``a`` for the first half of the hands and ``b`` after, under one name."""
    from cbr.policies.base import Policy
    from cbr.policies.spec import policy_from_spec

    first, second = (policy_from_spec(s, seed=seed) for s in spec.split(">"))

    class Switch(Policy):
        name = "switch"

        def __init__(self) -> None:
            super().__init__(seed=seed)
            self.played = 0

        def act(self, dp, rng):  # noqa: ANN001, ANN201
            return (first if self.played < hands // 2 else second).act(dp, rng)

        def triple(self, dp):  # noqa: ANN001, ANN201
            return (first if self.played < hands // 2 else second).triple(dp)

        def observe(self, record, position):  # noqa: ANN001, ANN201
            self.played += 1

    return Switch()


def opponent_spec(text: str) -> str:
    """An opponent of ``--opponents``: a policy spec, or ``a>b`` (:func:`_switching`), each side checked.

    >>> opponent_spec("call>raise")
    'call>raise'
    >>> opponent_spec("call>raise>ehs")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: 'call>raise>ehs' switches more than once: a switching opponent is two bots, a>b
    """
    import argparse

    parts = text.split(">")
    if len(parts) > 2:
        raise argparse.ArgumentTypeError(f"{text.strip()!r} switches more than once: a switching opponent is two bots, a>b")
    return ">".join(policy_spec(part) for part in parts)


def _unreadable(report: object) -> str | None:
    """What a report lacks that :func:`plot` draws (None when nothing): the opponents, and for
    each the adaptive bot's deals and choices, the best fixed bot and the fixed bots' results.

    >>> _unreadable({}), _unreadable({"opponents": ["call"], "adapt": {}, "best": {}, "fixed": {}, "hands": 10})
    ("it has no 'opponents'", None)
    >>> _unreadable({"opponents": ["call"], "adapt": {"call": {"deals": []}}, "best": {}, "fixed": {}, "hands": 10})
    "its 'adapt' of 'call' has no 'choices'"
    """
    if not isinstance(report, dict):
        return f"it holds a {type(report).__name__}, not an object"
    for key, kind in (("opponents", list), ("adapt", dict), ("best", dict), ("fixed", dict), ("hands", (int, float))):
        if not isinstance(report.get(key), kind):
            return f"it has no {key!r}"
    for opp in (o for o in report["opponents"] if o in report["adapt"]):
        for part, keys in (("adapt", ("deals", "choices")), ("best", ("bot", "sb")), ("fixed", ())):
            entry = report[part].get(opp)
            if not isinstance(entry, dict):
                return f"its {part!r} has no {opp!r}"
            missing = [k for k in keys if k not in entry]
            if missing:
                return f"its {part!r} of {opp!r} has no {missing[0]!r}"
    return None


def report_file(text: str) -> tuple[Path, dict]:
    """An argparse ``type=`` for ``--replot``: a report this script wrote, read and checked
    before anything is drawn (:func:`_unreadable`), so a file that is not there, not JSON or not
    such a report is one usage error (exit 2) naming it. The path and the report."""
    import argparse

    path = Path(text)
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise argparse.ArgumentTypeError(f"{text}: no such file") from None
    except IsADirectoryError:
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a report") from None
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{text}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:  # json.JSONDecodeError, UnicodeDecodeError
        raise argparse.ArgumentTypeError(f"{text} is not JSON ({exc})") from None
    problem = _unreadable(report)
    if problem:
        raise argparse.ArgumentTypeError(f"{text} is not a report of adaptive.py: {problem}")
    return path, report


def _opponent(spec: str, hands: int, seed: int):
    return _switching(spec, hands, seed) if ">" in spec else spec


def _rate(window: list | None) -> str:
    """A window's sb/h for the table, ``n/a`` when the match had no hands there (under 2,001).

    >>> _rate([0.5, 0.1]), _rate(None)
    ('+0.50', 'n/a')
    """
    return "n/a" if window is None else f"{window[0]:+.2f}"


def play_adapt(opp: str, hands: int, seed: int, spec: str = "cbr") -> dict:
    from cbr.play.match import run_match
    from cbr.policies.spec import policy_from_spec

    bot = policy_from_spec(spec, seed=seed)  # the default `cbr`: the adaptive bot
    t = time.time()
    try:
        r = run_match([bot, _opponent(opp, hands, seed)], hands, duplicate=True, seed=seed, keep_payoffs=True)
    finally:
        bot.close()
    sb = r.game.small_bet
    deals = [(r.hand_payoffs[i][0] + r.hand_payoffs[i + 1][0]) / 2 / sb for i in range(0, len(r.hand_payoffs) - 1, 2)]
    chosen = [e for _, e in bot.chosen]
    step = max(1, len(chosen) // 40)
    shares = {e: [sum(1 for c in chosen[i:i + step] if c == e) / len(chosen[i:i + step])
                  for i in range(0, len(chosen), step)] for e in sorted(set(chosen))}
    from cbr.stats import mean_ci

    def window(part: list[float]) -> list | None:  # None: the match had no such hands
        return [finite(v) for v in mean_ci(part)] if part else None

    me = r.players[0]
    return {"opponent": opp, "bot": "adapt", "sb": me.sb_per_hand, "ci": finite(me.sb_ci), "hands": r.hands,
            "deals": deals, "first_500": window(deals[: 500 // 2]), "after_2000": window(deals[2000 // 2:]),
            "choices": shares,
            "seconds": round(time.time() - t)}


def play_fixed(bot: str, opp: str, hands: int, seed: int) -> dict:
    from cbr.play.match import run_match

    t = time.time()
    r = run_match([bot, _opponent(opp, hands, seed)], hands, duplicate=True, seed=seed)
    me = r.players[0]
    return {"opponent": opp, "bot": bot, "sb": me.sb_per_hand, "ci": finite(me.sb_ci), "hands": r.hands,
            "seconds": round(time.time() - t)}


def _run(job: tuple) -> dict:
    kind, *args = job
    return play_adapt(*args) if kind == "adapt" else play_fixed(*args)


def plot(report: dict, path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    from cbr.policies.adaptive import expert_alias

    opps = [o for o in report["opponents"] if o in report["adapt"]]
    cols = 4
    rows = -(-len(opps) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, opp in zip(axes.flat, opps):
        deals = report["adapt"][opp]["deals"]
        x, mean, lo, hi = [], [], [], []
        total = 0.0
        sq = 0.0
        for i, v in enumerate(deals, start=1):
            total += v
            sq += v * v
            if i >= 20:
                m = total / i
                sd = math.sqrt(max(sq / i - m * m, 0.0) * i / (i - 1))
                x.append(2 * i)
                mean.append(m)
                lo.append(m - 1.96 * sd / math.sqrt(i))
                hi.append(m + 1.96 * sd / math.sqrt(i))
        ax.plot(x, mean, color="tab:blue", label="cbr, adaptive (running mean)")
        ax.fill_between(x, lo, hi, color="tab:blue", alpha=0.2)
        best = report["best"][opp]
        ax.axhline(best["sb"], color="tab:green", ls="--", label=f"best fixed: {expert_alias(best['bot'])}")
        for bot, color, style in (("cbr:preset=expert", "tab:gray", ":"), ("cfr:strategy=emd_256", "tab:red", "-."),
                                  ("ehs", "tab:orange", ":")):
            fixed = report["fixed"][opp].get(bot)
            if fixed and bot != best["bot"]:
                ax.axhline(fixed["sb"], color=color, ls=style, lw=1, label=bot)
        ax.set_title(f"vs {opp}")
        ax.set_xlabel("hands")
        ax.set_ylabel("sb/h")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(opps):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    # what it chose over time: each expert's share of the decisions, per 1/40 of the match (one
    # colour per expert in every panel)
    every = sorted({e for opp in opps for e in report["adapt"][opp]["choices"]})
    palette = plt.get_cmap("tab10" if len(every) <= 10 else "tab20")
    colour = {e: palette(i) for i, e in enumerate(every)}
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.6 * rows), squeeze=False)
    for ax, opp in zip(axes.flat, opps):
        shares = report["adapt"][opp]["choices"]
        names = sorted(shares)
        n = len(shares[names[0]])
        x = [(i + 0.5) * report["hands"] / n for i in range(n)]
        ax.stackplot(x, *[shares[e] for e in names], labels=[expert_alias(e) for e in names],
                     colors=[colour[e] for e in names], alpha=0.85)
        ax.set_ylim(0, 1)
        ax.set_title(f"vs {opp}", fontsize=9)
        ax.set_xlabel("hands")
        ax.set_ylabel("share of decisions")
        ax.legend(fontsize=6, loc="lower right")
    for ax in list(axes.flat)[len(opps):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path.with_name(path.stem + "-choices.png"), dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    from common import description, help_format, parse_args, policy_specs, positive_int, seed_int, worker_pool

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed of the matches")
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("-j", "--jobs", type=positive_int, default=2, help="matches played at once")
    ap.add_argument("--opponents", type=policy_specs(each=opponent_spec), default=",".join(OPPONENTS + UNSEEN),
                    help="comma-separated opponents (policy specs; a>b plays a for the first half of the hands, b after)")
    ap.add_argument("--fixed", type=policy_specs(), default=",".join(FIXED), help="comma-separated fixed bots to compare with (policy specs)")
    ap.add_argument("--fixed-from", type=Path, default=None,
                    help="a report of this script for the same --seed and --hands: its fixed bots' results are "
                         "taken instead of played again (the same deals; `cbr` there is `cbr:preset=expert`)")
    ap.add_argument("--bot", type=policy_spec, default="cbr", help="the adaptive bot's spec (default: plain cbr), e.g. adapt:min-gain=0.05")
    ap.add_argument("--tag", default="", help="appended to the report's name (adaptive-seed<S><TAG>.json)")
    ap.add_argument("--replot", type=report_file, default=None,
                    help="a report of this script: draw its PNGs again beside it, and stop")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="adaptive-seed<SEED><TAG>.json"))
    args = parse_args(ap, argv)
    if args.replot is not None:
        path, report = args.replot
        plot(report, path.with_suffix(".png"))
        return 0
    opps, fixed = args.opponents, args.fixed
    report: dict = {"seed": args.seed, "hands": args.hands, "bot": args.bot, "opponents": opps, "adapt": {}, "fixed": {},
                    "best": {}}
    if args.fixed_from is not None:
        old = json.loads(args.fixed_from.read_text())
        if (old["seed"], old["hands"]) != (args.seed, args.hands):
            raise SystemExit(f"error: {args.fixed_from}: seed {old['seed']}, {counted(old['hands'], 'hand')}; not {args.seed}, {args.hands}")
        for o, bots in old["fixed"].items():
            for b, res in bots.items():
                b = "cbr:preset=expert" if b == "cbr" else b  # before plain cbr became the adaptive bot
                if o in opps and b in fixed:
                    report["fixed"].setdefault(o, {})[b] = {**res, "bot": b, "from": str(args.fixed_from.name)}
    jobs = [("adapt", o, args.hands, args.seed, args.bot) for o in opps]
    jobs += [("fixed", b, o, args.hands, args.seed) for o in opps for b in fixed if b not in report["fixed"].get(o, {})]
    with worker_pool(args.jobs) as pool:
        for res in pool.map(_run, jobs):
            if res["bot"] == "adapt":
                report["adapt"][res["opponent"]] = res
                say(f"adapt vs {res['opponent']}: {res['sb']:+.3f} ± {ci_text(res['ci'])} "
                    f"(first 500 {_rate(res['first_500'])}, after 2,000 {_rate(res['after_2000'])}; {res['seconds']} s)")
            else:
                report["fixed"].setdefault(res["opponent"], {})[res["bot"]] = res
                say(f"{res['bot']} vs {res['opponent']}: {res['sb']:+.3f} ± {ci_text(res['ci'])} ({res['seconds']} s)")
    print(f"{'opponent':<12} {'adapt':>16} {'best fixed':>26} {'gap':>7} {'first 500':>10} {'2,001+':>8}")
    for o in opps:
        best_bot = max(report["fixed"][o], key=lambda b: report["fixed"][o][b]["sb"])
        best = report["best"][o] = {"bot": best_bot, **report["fixed"][o][best_bot]}
        a = report["adapt"][o]
        print(f"{o:<12} {a['sb']:+.3f} ± {ci_text(a['ci'])}   {best_bot:>12} {best['sb']:+.3f} ± {ci_text(best['ci'])} "
              f"{a['sb'] - best['sb']:+.3f} {_rate(a['first_500']):>10} {_rate(a['after_2000']):>8}")
    out = out_file(args.out, f"adaptive-seed{args.seed}{args.tag}.json")
    write_json(out, report)
    plot(report, out.with_suffix(".png"))
    say(f"wrote {out}")
    return 0


if __name__ == "__main__":
    from common import run

    run(main, "nothing written")
