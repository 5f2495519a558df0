"""Recipe: the style cases of the ``adapt`` bot (``casebases/styles/house.json``) from a matrix of
duplicate matches (``experiments/adaptation_matrix.py``).

One case per opponent of the matrix: its style as the safe expert (``cbr:preset=imitate``, the
expert case base sampled plainly, which the adaptive ``cbr`` plays until it knows its opponent)
saw it, and what every expert won against it (sb/h, with the 95% CI half-width). After the
warm-up, without evidence for another, the bot plays the fallback (``cbr:preset=expert``, the
same case base sharpened: it wins more against weak players). A matrix measured
before plain ``cbr`` became the adaptive bot (issue 36) names the case-based bot ``cbr``: it is
renamed ``cbr:preset=expert``, what it was.

    python experiments/adaptation_matrix.py --seed 1 --hands 1000 -j 2
    python -m casebases.build_styles experiments/results/adaptation-matrix-seed1.json
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

#: The shipped style cases, from the source checkout: ``--out``'s default is this path under
#: :func:`casebases.output_root`.
OUT = Path("casebases") / "styles" / "house.json"


def _spec(name: str) -> str:
    """A bot's spec as the style cases name it: ``cbr`` of an older matrix is ``cbr:preset=expert``."""
    return "cbr:preset=expert" if name == "cbr" else name


#: The house's experts in the order the style cases list them (the safe expert first).
HOUSE = ["cbr:preset=imitate", "cbr:preset=expert", "cbr:preset=casper", "cfr:strategy=emd_256", "ehs", "poki", "hs",
         "lag", "station", "phase3"]


def style_cases(matrix: dict, safe: str = "cbr:preset=imitate", fallback: str = "cbr:preset=expert") -> dict:
    """The style-case file's content from a matrix's cells."""
    experts: list[str] = []
    cases: dict[str, dict] = {}
    for cell in matrix["cells"]:
        c = {**cell, "expert": _spec(cell["expert"]), "opponent": _spec(cell["opponent"])}
        if c["expert"] not in experts:
            experts.append(c["expert"])
        case = cases.setdefault(c["opponent"], {"name": c["opponent"], "style": None, "sb": {}, "ci": {}})
        case["sb"][c["expert"]] = round(float(c["sb"]), 4)
        case["ci"][c["expert"]] = None if c["ci"] is None else round(float(c["ci"]), 4)
        if c["expert"] == safe:
            case["style"] = [None if v is None else round(float(v), 4) for v in c["style"]]
    # the house's order (the safe expert first), whatever order the matrix measured them in
    house = [safe, *(e for e in HOUSE if e != safe)]
    first = {e: i for i, e in enumerate(experts)}
    experts.sort(key=lambda e: (house.index(e) if e in house else len(house), first[e]))
    missing = [name for name, case in cases.items() if case["style"] is None]
    if missing:
        raise SystemExit(f"error: no match of the safe expert {safe!r} against {', '.join(missing)}: its style is unknown")
    if fallback not in experts:
        raise SystemExit(f"error: the matrix has no match of the fallback expert {fallback!r}")
    return {"seed": matrix.get("seed"), "hands": matrix.get("hands"), "safe": safe, "fallback": fallback, "experts": experts,
            "features": ["vpip", "pfr", "aggression", "fold_to_bet"], "cases": list(cases.values())}


def main(argv: list[str] | None = None) -> int:
    from casebases import description
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("matrix", type=Path)
    ap.add_argument("-o", "--out", type=Path, default=None,
                    help=f"the style-case file (default {OUT} of the current folder, or of the source checkout when "
                         "run in it)")
    args = ap.parse_args(argv)
    if args.out is None:
        from casebases import output_root

        args.out = output_root() / OUT
    data = style_cases(json.loads(args.matrix.read_text()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {len(data['cases'])} style cases over {len(data['experts'])} experts to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
