"""Does the condensed expert case base play as well as the full one?

    python3 experiments/condense.py [--hands 4000] [--head-to-head 10000] [--seed 38] [--keep 0.1]
                                    [--full-from RESULT.json] [--tag TAG]

Condenses the shipped expert base (378,564 cases) with ``cbr casebase condense``'s methods
(``footprint``, and ``sample``, the control) into a temporary folder, timed, then plays, all
duplicate on the same deals of ``--seed``: the condensed (footprint) bot against the full one
(``--head-to-head`` hands), and the full and the condensed bot each against ``call``, ``raise``
and ``ehs`` (``--hands`` each). Every bot is the ``expert`` preset; only the case base differs.
Written to ``experiments/scratch/condense-seed<S>.json``. Seeds 38 and 39 were used while
choosing the method (``--floor 20`` was added after a flat 10% share lost to the full base
against ``raise`` on both, outside its CI); the figures reported are seed 40's.
``--full-from`` takes the full base's three matches from an earlier result of the same seed and
hands (the same bot on the same deals plays the same hands), so that only the condensed bot plays;
``--tag`` names the result ``condense-seed<S>-<TAG>.json`` (an earlier result is kept).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT_HELP, duel, environment, out_file, out_path, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402
from cbr.query.maintenance import condense  # noqa: E402
from cbr.store import resolve_casebase  # noqa: E402


def main() -> None:
    from common import description, help_format, number, parse_args, positive_int, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=4000, help="duplicate hands per match")
    ap.add_argument("--head-to-head", type=positive_int, default=10000, help="duplicate hands of the condensed base against the full one")
    ap.add_argument("--seed", type=seed_int, default=40, help="deal seed of the matches")
    ap.add_argument("--keep", type=number(0, above=True, high=1), default=0.1,
                    help="share of the cases each condensing keeps, more than 0 and at most 1")
    ap.add_argument("--full-from", type=Path, help="the full base's matches from this earlier result")
    ap.add_argument("--tag", default="", help="written to condense-seed<S>-<TAG>.json")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="condense-seed<SEED>[-<TAG>].json"))
    args = parse_args(ap)
    out: dict = {"seed": args.seed, "hands": args.hands, "head_to_head_hands": args.head_to_head,
                 "environment": environment(), "condense": {}, "matches": {}}
    earlier = None
    if args.full_from is not None:
        earlier = json.loads(args.full_from.read_text())
        if (earlier["seed"], earlier["hands"]) != (args.seed, args.hands):
            sys.exit(f"error: {args.full_from} is seed {earlier['seed']}, {counted(earlier['hands'], 'hand')}; "
                     f"this run is seed {args.seed}, {counted(args.hands, 'hand')}")
        out["full_from"] = str(args.full_from)
    with tempfile.TemporaryDirectory(prefix="condense-") as tmp:
        small = {}
        for method in ("footprint", "sample"):
            say(f"condensing expert ({method})")
            report = condense(resolve_casebase("expert"), Path(tmp) / method, method=method, keep=args.keep)
            out["condense"][method] = report.to_dict()
            small[method] = str(Path(tmp) / method)
            say(f"  kept {report.kept}, coverage {report.coverage}, {report.seconds:.0f} s")
        # the expert preset by name: plain `cbr` is the adaptive bot since the seed-40 run
        full, condensed = "cbr:preset=expert", f"cbr:preset=expert:casebase={small['footprint']}"
        say(f"head to head, {counted(args.head_to_head, 'hand')}")
        out["matches"]["condensed-vs-full"] = duel(condensed, full, args.head_to_head, args.seed)
        say(f"  {out['matches']['condensed-vs-full']}")
        for opp in ("call", "raise", "ehs"):
            for name, bot in (("full", full), ("condensed", condensed)):
                if name == "full" and earlier is not None:
                    out["matches"][f"full-vs-{opp}"] = earlier["matches"][f"full-vs-{opp}"]
                    continue
                say(f"{name} against {opp}, {counted(args.hands, 'hand')}")
                out["matches"][f"{name}-vs-{opp}"] = r = duel(bot, opp, args.hands, args.seed)
                say(f"  {r}")
    path = out_file(args.out, f"condense-seed{args.seed}{'-' + args.tag if args.tag else ''}.json")
    write_json(path, out)
    say(f"wrote {path}")


if __name__ == "__main__":
    from common import run

    run(main)
