"""Opponent-aware cases: does the cbr bot play better when its cases know the opponents?

    python3 experiments/opponent_aware.py [--hands 10000] [--seed 2] [--workers 2]
    python3 experiments/opponent_aware.py --seed 1 --weights 0,0.5,1,2     # the tuning run
    python3 experiments/opponent_aware.py --quick --out /tmp/x             # a smoke run (the test)

Two case bases are built from the same logs (default ``casebases/selfplay/*.log``, the
default case base's self-play hands of ``ehs``, ``hs``, ``lag`` and ``poki``): one with
CASPER's features (``casper``), one with CASPER's features plus the player-model values
of the opponents still in the hand (``casper-opp``: mean aggressiveness, tightness and
riskiness and the largest aggressiveness, from player models fed the logged hands in
order, :mod:`cbr.build.ordered`). The ``cbr`` bot (probabilistic re-use, CASPER's) plays each
against a loose-aggressive (``lag``) and a tight-passive (``rock``) opponent, heads-up,
in duplicate (each deal twice, seats swapped), on the same deals for both case bases;
with ``casper-opp`` it models the opponent from the hands it plays (starting from no
model: the defaults). Reported per opponent: sb/h of each bot with its 95% CI (over the
per-deal averages) and the difference opp - casper paired by deal with its 95% CI, plus
what the bot's model of the opponent said at the end.

``--weights``: the tuning run: multiples of the opponent columns' default weights
(:data:`cbr.build.ordered.OPPONENT_SIMILARITY`), played over the ``casper-opp`` case base with
an in-memory similarity file each (0 = the columns ignored, i.e. CASPER's retrieval).
The defaults were chosen on seed 1; docs/opponent-models.md reports seed 2.

Results: ``experiments/scratch/opponent-aware-seed<S>.json`` (``-tuning`` for
``--weights``, ``-quick`` for ``--quick``).
"""
from __future__ import annotations

import argparse
import glob
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from experiments.common import (  # noqa: E402
    OUT_FOLDER_HELP,
    REPO,
    ci_text,
    environment,
    finite,
    out_folder,
    out_path,
    say,
    write_json,
)

OPPONENTS = ("lag", "rock")
QUICK_LOGS = ("hu-ehs-lag.log", "hu-poki-hs.log")


def build(logs: list[str], out: Path, feature_set: str, workers: int) -> dict:
    from cbr.build.local import build_casebase

    report = build_casebase(logs, out, feature_set=feature_set, workers=workers, overwrite=True)
    return {"cases": report.cases, "hands": report.hands, "seconds": round(report.seconds, 1)}


def play(casebase: Path, opponent: str, hands: int, seed: int, similarity: str | None = None) -> dict:
    """One duplicate match of the cbr bot (seat 0) against ``opponent``; per-deal sb."""
    from cbr.play.match import run_match
    from cbr.policies.cbr_policy import CBRPolicy

    bot = CBRPolicy(casebase=str(casebase), similarity=similarity, seed=seed)
    t = time.perf_counter()
    r = run_match([bot, opponent], hands, seed=seed, duplicate=True, keep_payoffs=True)
    seconds = time.perf_counter() - t
    model = None
    if bot.opponent_models is not None:  # what the bot thought of the opponent at the end
        m = bot.opponent_models.model(r.players[1].name)
        model = {"hands": m.hands, "aggressiveness": round(m.aggressiveness, 3),
                 "tightness": round(m.tightness, 3), "riskiness": round(m.riskiness, 3)}
    bot.close()
    sb = r.game.small_bet
    per_deal = [sum(p[0] for p in r.hand_payoffs[i:i + 2]) / 2 / sb for i in range(0, len(r.hand_payoffs), 2)]
    return {"sb_per_hand": r.players[0].sb_per_hand, "ci": finite(r.players[0].sb_ci), "per_deal": per_deal,
            "seconds": seconds, "model": model}


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """Mean of ``a - b`` (paired by deal) and its 95% half-width."""
    from cbr.stats import Z95

    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1) if n > 1 else float("nan")
    return mean, Z95 * math.sqrt(var / n)


def weighted_similarity(scale: float, path: Path) -> str:
    """A similarity file: casper-opp's default with the opponent columns' weights times ``scale``."""
    from cbr.build.ordered import opponent_similarity

    opponent_similarity(scale=scale).dump(path)
    return str(path)


def markdown(report: dict) -> str:
    """The results as a Markdown table (for the docs)."""
    lines = []
    if all("difference" in row for row in report["results"].values()):
        lines += ["| opponent | cbr, casper (sb/h ± 95%) | cbr, casper-opp (sb/h ± 95%) | "
                  "casper-opp - casper, paired by deal | bot's model of the opponent (agg / tight / risk) |",
                  "|---|---|---|---|---|"]
        for opponent, row in report["results"].items():
            m = row["model_of_opponent"] or {}
            cells = [f"{row[k]['sb_per_hand']:+.3f} ± {ci_text(row[k]['ci'])}" for k in ("casper", "casper-opp", "difference")]
            lines.append(f"| {opponent} | " + " | ".join(cells)
                         + f" | {m.get('aggressiveness', float('nan')):.2f} / {m.get('tightness', float('nan')):.2f}"
                         f" / {m.get('riskiness', float('nan')):.2f} |")
    else:
        keys = list(next(iter(report["results"].values())))
        lines += ["| opponent | " + " | ".join(f"weights {k}" for k in keys) + " |", "|---|" + "---|" * len(keys)]
        for opponent, row in report["results"].items():
            lines.append(f"| {opponent} | " + " | ".join(f"{row[k]['sb_per_hand']:+.3f} ± {ci_text(row[k]['ci'])}"
                                                           for k in keys) + " |")
    return "\n".join(lines)


def r4(x: Optional[float]) -> Optional[float]:
    """Rounded to 4 decimals; None for a CI a match too short could not give (:func:`finite`)."""
    return finite(x, 4)


def main(argv: list[str] | None = None) -> dict:
    from common import description, help_format, positive_int, require_native, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=10_000, help="hands per match (duplicate: even)")
    ap.add_argument("--seed", type=seed_int, default=2, help="deal seed of the matches")
    ap.add_argument("--logs", nargs="*", default=None, help="logs to build from (default: casebases/selfplay/*.log)")
    ap.add_argument("--workers", type=positive_int, default=2, help="matches played at once")
    ap.add_argument("--weights", default=None, help="tuning: comma-separated multiples of the opponent weights")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 2 logs, 200 hands")
    ap.add_argument("--out", type=out_path("folder"), default=None, help=OUT_FOLDER_HELP)
    args = ap.parse_args(argv)
    if args.quick:
        args.hands = min(args.hands, 200)
        args.logs = args.logs or [str(REPO / "casebases" / "selfplay" / f) for f in QUICK_LOGS]
    logs = args.logs or sorted(glob.glob(str(REPO / "casebases" / "selfplay" / "*.log")))
    if args.hands < 4 or args.hands % 2:
        ap.error("--hands must be even and at least 4 (duplicate pairs, a CI needs two deals)")
    scales = None
    if args.weights:
        try:
            scales = [float(x) for x in args.weights.split(",")]
        except ValueError:
            ap.error(f"--weights takes numbers separated by commas, got {args.weights!r}")
        from cbr.build.ordered import opponent_similarity
        from cbr.errors import ConfigError

        for scale in scales:
            try:
                opponent_similarity(scale=scale)
            except ConfigError as exc:
                ap.error(f"--weights {scale:g}: {exc}")
    require_native()  # after every usage check: a usage error is one, extensions or not
    t0 = time.perf_counter()
    report: dict = {"experiment": "opponent-aware cases (issue 9, section 7)", "seed": args.seed, "tuning_seed": 1,
                    "hands": args.hands, "duplicate": True, "reuse": "probabilistic",
                    "logs": [str(Path(p).relative_to(REPO)) if Path(p).is_relative_to(REPO) else p for p in logs],
                    "environment": environment()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cbs = {}
        report["casebases"] = {}
        for fs in (("casper-opp",) if scales else ("casper", "casper-opp")):
            say(f"building the {fs} case base from {counted(len(logs), 'log')}")
            cbs[fs] = root / fs
            report["casebases"][fs] = build(logs, cbs[fs], fs, args.workers)
        report["results"] = {}
        for opponent in OPPONENTS:
            row: dict = {}
            if scales:
                for scale in scales:
                    sim = weighted_similarity(scale, root / f"sim-{scale:g}.toml")
                    say(f"cbr (casper-opp, opponent weights x{scale:g}) vs {opponent}: {counted(args.hands, 'hand')}")
                    res = play(cbs["casper-opp"], opponent, args.hands, args.seed, sim)
                    row[f"x{scale:g}"] = {"sb_per_hand": r4(res["sb_per_hand"]), "ci": r4(res["ci"]),
                                          "seconds": round(res["seconds"], 1)}
                    say(f"  {res['sb_per_hand']:+.4f} ± {ci_text(res['ci'], '.4f')} sb/h")
            else:
                runs = {}
                for fs in ("casper", "casper-opp"):
                    say(f"cbr ({fs}) vs {opponent}: {counted(args.hands, 'hand')}")
                    runs[fs] = play(cbs[fs], opponent, args.hands, args.seed)
                    row[fs] = {"sb_per_hand": r4(runs[fs]["sb_per_hand"]), "ci": r4(runs[fs]["ci"]),
                               "seconds": round(runs[fs]["seconds"], 1)}
                diff, ci = paired(runs["casper-opp"]["per_deal"], runs["casper"]["per_deal"])
                row["difference"] = {"sb_per_hand": r4(diff), "ci": r4(ci)}
                row["model_of_opponent"] = runs["casper-opp"]["model"]
            report["results"][opponent] = row
    if scales:
        from cbr.build.ordered import OPPONENT_SIMILARITY

        report["opponent_weights_x1"] = {k: v[1] for k, v in OPPONENT_SIMILARITY.items()}
    report["seconds"] = round(time.perf_counter() - t0, 1)
    suffix = "-quick" if args.quick else "-tuning" if scales else ""
    out = out_folder(args.out) / f"opponent-aware-seed{args.seed}{suffix}.json"
    write_json(out, report)
    say(f"wrote {out} in {report['seconds']:.0f} s\n" + markdown(report))
    return report


if __name__ == "__main__":
    import json

    from common import run

    run(lambda: print(json.dumps(main(), indent=2)))
