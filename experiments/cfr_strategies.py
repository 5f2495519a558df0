"""The five bucketings of the KTH study's table 2, built and solved with CFR+ (issue 10, section 3).

    python3 experiments/cfr_strategies.py [--cache DIR] [--buckets 4] [--quick]

For each of ``p_hs``, ``mm_hs``, ``mm_hs2``, ``h_hs``, ``h_hs2`` (percentile, min-max and
history buckets on HS or HS^2): the thresholds from ``--threshold-boards`` random boards
(seed 0), the abstract game's chance model from ``--game-boards`` boards (seed 1), then
CFR+ for heads-up limit (``holdem.limit.2p``, ``--limit-iterations``) and for no-limit
fcpa (``nolimit.fcpa``, ``--nolimit-iterations``). The same settings for all five; the
defaults (4 buckets as the shipped strategy, 200/300 boards, 200 limit and 500 no-limit
iterations) are smaller than the shipped recipe (``casebases/build_cfr.py``: 400/600
boards, 1000 iterations) so that everything fits in a few minutes of CPU on a shared machine.

Files go to ``--cache`` (default ``experiments/cache/table2``, not in git; a ``--cache`` folder is
made if missing, but only in a folder that exists), one directory
per bucketing as ``cbr abstraction build`` / ``cbr train cfr`` write them; a directory
whose ``settings.json`` matches is reused, so re-running is free. Deterministic from the
seeds. The per-board
metric tables are shared by the five builds (one computation per board).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import OUT_HELP, REPO, out_file, out_path, positive_int, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402

#: The study's five bucketings: (name, kind, metric).
BUCKETINGS: tuple[tuple[str, str, str], ...] = (
    ("p_hs", "percentile", "hs"),
    ("mm_hs", "minmax", "hs"),
    ("mm_hs2", "minmax", "hs2"),
    ("h_hs", "history", "hs"),
    ("h_hs2", "history", "hs2"),
)
GAMES = ("holdem.limit.2p", "nolimit.fcpa")
CACHE = REPO / "experiments" / "cache" / "table2"
DEFAULTS = {"buckets": 4, "threshold_boards": 200, "game_boards": 300, "limit_iterations": 200,
            "nolimit_iterations": 500}
QUICK = {"buckets": 2, "threshold_boards": 4, "game_boards": 4, "limit_iterations": 5, "nolimit_iterations": 5}


def strategy_path(cache: Path, name: str, game: str) -> Path:
    """Where the strategy of bucketing ``name`` for ``game`` is written."""
    return cache / name / f"cfr.{game}.npz"


def prepare(cache: Path, settings: dict, names: Optional[list[str]] = None) -> dict:
    """Build (or reuse) every bucketing in ``names`` and train both games; returns a report per
    bucketing: build and training seconds, exploitability in the abstract game (mbb/g)."""
    import cbr.abstraction.metrics as metrics
    from cbr.abstraction import BUCKET_GAME_FILE, Abstraction
    from cbr.cfr.strategy import train

    # every build visits the same boards: keep all their metric tables (3 prefixes a board)
    metrics._CACHE_SIZE = max(metrics._CACHE_SIZE, 3 * (settings["threshold_boards"] + settings["game_boards"]) + 16)
    # the default cache is made with its parents (inside the checkout); a --cache folder alone (out_path
    # checked that its parent exists): a slip in the path must not make a tree elsewhere
    cache.mkdir(parents=cache == CACHE, exist_ok=True)
    report = {}
    for name, kind, metric in BUCKETINGS:
        if names is not None and name not in names:
            continue
        d = cache / name
        stamp = d / "settings.json"
        if stamp.exists() and json.loads(stamp.read_text()).get("settings") == settings:
            report[name] = json.loads(stamp.read_text())["report"]
            say(f"{name}: reused {d}")
            continue
        t = time.perf_counter()
        a = Abstraction.build(kind, metric, n_buckets=settings["buckets"], samples=settings["threshold_boards"], seed=0)
        a.save(d)
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        a.bucket_game(settings["game_boards"], seed=1).save(d / BUCKET_GAME_FILE)
        game_s = time.perf_counter() - t
        say(f"{name}: abstraction {build_s:.0f} s, bucket game {game_s:.0f} s")
        row = {"fingerprint": a.fingerprint[:16], "build_seconds": round(build_s, 1),
               "bucket_game_seconds": round(game_s, 1)}
        for game, key in zip(GAMES, ("limit_iterations", "nolimit_iterations")):
            r = train(game, d, settings[key], checkpoint=d / f"cfr.{game}.ckpt.npz", checkpoint_every=0,
                      overwrite=True)  # the bucketing was rebuilt: its old strategy is stale
            Path(r["checkpoint"]).unlink(missing_ok=True)
            row[game] = {"iterations": r["iterations"], "seconds": round(r["seconds"], 1),
                         "exploitability_mbb": round(r["stored_exploitability_mbb"], 2),
                         "info_sets": r["info_sets"]}
            say(f"{name}: {game} {counted(r['iterations'], 'iteration')} in {r['seconds']:.0f} s, "
                f"{r['stored_exploitability_mbb']:.1f} mbb/g in its abstraction")
        stamp.write_text(json.dumps({"settings": settings, "report": row}, indent=1) + "\n")
        report[name] = row
    return report


def settings_from(args: argparse.Namespace) -> dict:
    base = dict(QUICK if args.quick else DEFAULTS)
    for key in base:
        value = getattr(args, key, None)
        if value is not None:
            base[key] = value
    return base


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The build/train options (shared with experiments/cfr_table2.py)."""
    ap.add_argument("--cache", type=out_path("folder"), default=None,
                    help=f"strategy directory, made if missing (its parent must exist) (default: {CACHE})")
    ap.add_argument("--quick", action="store_true", help="tiny settings (2 buckets, 4 boards, 5 iterations) for tests")
    # None: the value of the settings (DEFAULTS, or QUICK with --quick), which the help says
    for key, what in (("buckets", "buckets per street"), ("threshold_boards", "boards sampled for the bucket thresholds"),
                      ("game_boards", "boards of the bucket game"), ("limit_iterations", "CFR+ iterations on limit"),
                      ("nolimit_iterations", "CFR+ iterations on no-limit")):
        ap.add_argument(f"--{key.replace('_', '-')}", type=positive_int, default=None,
                        help=f"{what} (default: {DEFAULTS[key]}; {QUICK[key]} with --quick)")


def main(argv: Optional[list[str]] = None) -> int:
    from common import description, help_format, parse_args

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    add_arguments(ap)
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="cfr_strategies.json")
                    + "; not written with --quick or --cache")
    args = parse_args(ap, argv)
    settings = settings_from(args)
    cache = args.cache or CACHE
    t = time.perf_counter()
    report = prepare(cache, settings)
    write_json(cache / "strategies.json", {"settings": settings, "bucketings": report,
                                           "seconds": round(time.perf_counter() - t, 1)})
    if not args.quick and args.cache is None:
        out = out_file(args.out, "cfr_strategies.json")
        write_json(out, {"settings": settings, "bucketings": report})
        say(f"wrote {out}")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    from common import run

    run(main, "the strategies trained so far are kept in the cache (a re-run trains only the rest)")
