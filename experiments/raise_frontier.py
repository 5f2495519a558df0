"""Restricted Nash responses to always-raise for a sweep of p, against weak bots, the teacher and a p = 0 control.

Spending exploitability on always-raise, in hold'em: each ``p`` against ``raise``, the teacher
and weak bots it was not built for, and head to head with the ``p = 0`` run of the same budget
(what exploiting costs).

    python3 experiments/raise_frontier.py --p 0 0.05 0.2 --iterations 6000000 --seed 63 --hands 10000

Each ``p`` is trained by the counter recipe (``casebases/build_counters.py --only raise --p P
--iterations N --threads 1``: deterministic for its arguments) into ``--work`` (made if missing, but
only in a folder that exists; a run already
there, ``p<P>-<N>[-m<model hands>]/counter_raise/``, is reused, and said so), then plays duplicate
matches on ``--seed``'s deals.
``p = 0`` ignores the model: it is plain self-play MCCFR with the same budget, the control.
``--extra SPEC`` measures more strategies the same way (a shipped one, say). ``--lbr-hands`` adds LBR (``cbr exploit``'s default variant; about 30 hands a second on a core),
at most ``--lbr-minutes`` each. The exact frontier on Leduc hold'em is
``experiments/equilibrium_vs_raise.py``. Writes ``experiments/scratch/raise-frontier-seed<S>.json``
(or ``--out``) and a Markdown table.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import OUT_HELP, budgeted_lbr, ci_text, duel, environment, out_file, out_path, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402

TEACHER = "cfr:strategy=emd_256"
#: the opponents every p plays: the one it was built for, one it was not, rule bots, the teacher
OPPONENTS = ("raise", "call", "lag", "random", "ehs", TEACHER)
SHIPPED = Path(__file__).resolve().parent.parent / "casebases" / "cfr" / "emd_256"


def train(p: float, iterations: int, work: Path, model_hands: int = 20_000) -> str:
    """The counter recipe's run for ``p`` (reused when there); returns its policy spec."""
    from casebases import build_counters

    out = work / (f"p{p:g}-{iterations}" + ("" if model_hands == 20_000 else f"-m{model_hands}"))
    folder = out / "counter_raise"
    if (folder / "strategy.npz").exists():
        say(f"p = {p:g}: reusing {folder} (trained before with the same p, iterations and model hands)")
    else:
        work.mkdir(exist_ok=True)  # that folder alone: its parent was checked (out_path)
        out.mkdir(exist_ok=True)
        if not (out / "emd_256").exists():
            (out / "emd_256").symlink_to(SHIPPED)
        say(f"training p = {p:g}, {counted(iterations, 'iteration')} -> {folder}")
        build_counters.main(["--only", "raise", "--p", str(p), "--iterations", str(iterations), "--threads", "1",
                             "--hands", str(model_hands), "--logs", str(work / "logs"), "--out", str(out)])
    return f"cfr:strategy={folder}"


def _checked(ap: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every value checked before any work: one usage line (exit 2) for a bad one (``--extra``'s
    specs by their type, :func:`common.policy_spec`)."""
    if 0.0 not in args.p:
        ap.error("--p must include 0, the control")
    if max(args.p) > 1.0:
        ap.error(f"argument --p: each must be 0 to 1, not {' '.join(f'{p:g}' for p in args.p)}")


def main() -> None:
    from common import description, help_format, policy_spec, require_native

    from casebases.build_cfr_emd import number

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--p", type=number(0), nargs="+", default=[0.0, 0.05, 0.2],
                    help="restriction chances, 0 to 1 (0: the control)")
    ap.add_argument("--iterations", type=number(1, int), default=6_000_000, help="MCCFR iterations of each run")
    ap.add_argument("--model-hands", type=number(2, int), default=20_000,
                    help="hands of the teacher against raise that the model is counted from (the recipe's --hands)")
    ap.add_argument("--seed", type=number(0, int), default=63, help="the matches' and LBR's seed")
    ap.add_argument("--hands", type=number(2, int), default=10_000, help="duplicate hands of each match")
    ap.add_argument("--lbr-hands", type=number(0, int), default=0, help="LBR hands for each run (0: no LBR)")
    ap.add_argument("--lbr-minutes", type=number(0.01), default=15.0, help="at most this long for each LBR run")
    ap.add_argument("--extra", type=policy_spec, nargs="*", default=[], metavar="SPEC",
                    help="more strategies measured the same way, e.g. cfr:strategy=counter_raise_mild (a row each)")
    ap.add_argument("--work", type=out_path("folder"), default="/tmp/raise-frontier",
                    help="the runs' folder (made if missing; its parent must exist)")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="raise-frontier-seed<SEED>.json"))
    args = ap.parse_args()
    _checked(ap, args)
    require_native()  # after every usage check: a usage error is one, extensions or not
    work = args.work
    specs = {p: train(p, args.iterations, work, args.model_hands) for p in args.p}
    control = specs[0.0]
    rows = []
    for p, spec in [*specs.items(), *((None, e) for e in args.extra)]:
        row = {"p": p, "spec": spec, "against": {}}
        name = spec if p is None else f"p = {p:g}"
        for opp in OPPONENTS + (() if p == 0.0 else (control,)):
            r = duel(spec, opp, args.hands, args.seed)
            row["against"]["control" if opp == control else opp] = r
            say(f"{name} vs {opp}: {r['sb_per_hand']:+.3f} ± {ci_text(r['ci'])}")
        if args.lbr_hands:
            row["lbr"] = budgeted_lbr(spec, args.lbr_hands, args.seed, 1, args.lbr_minutes * 60)
            say(f"{name}: LBR {row['lbr']['mbb_per_game']:.1f} ± {row['lbr']['ci95']:.1f} ({counted(row['lbr']['hands'], 'hand')})")
        rows.append(row)
    out = out_file(args.out, f"raise-frontier-seed{args.seed}.json")
    write_json(out, {"seed": args.seed, "iterations": args.iterations, "model_hands": args.model_hands,
                     "hands": args.hands, "rows": rows,
                     "environment": environment()})
    cols = list(OPPONENTS) + ["control"]
    print("| p | " + " | ".join(f"vs `{c}`" for c in cols) + (" | LBR, mbb/g |" if args.lbr_hands else " |"))
    print("|---:|" + "---:|" * (len(cols) + bool(args.lbr_hands)))
    for row in rows:
        cells = [f"{row['against'][c]['sb_per_hand']:+.3f} ± {ci_text(row['against'][c]['ci'])}" if c in row["against"]
                 else "" for c in cols]
        lbr = [f"{row['lbr']['mbb_per_game']:.0f} ± {row['lbr']['ci95']:.0f}"] if "lbr" in row else []
        first = f"`{row['spec']}`" if row["p"] is None else f"{row['p']:g}"
        print(f"| {first} | " + " | ".join(cells + lbr) + " |")
    say(f"wrote {out}")


if __name__ == "__main__":
    from common import run

    run(main, "nothing written (runs trained so far are kept in --work)")
