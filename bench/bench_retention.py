"""Retention during play: does an append cost the same however large the case base is?

Run:  python3 bench/bench_retention.py [--decisions 100000] [--hands 10000] [--skip-match | --only-match]
                                       [--bots cbr,casper] [--pairs 1] [--breakdown | --bounds | --floor]

1. Appends: ``--decisions`` retained decisions into a copy of the default case base, in
   commits of one hand (4 decisions on 4 streets, random CASPER-shaped rows), with the
   default ``sync_every`` (fsync at most once a second) and with an ``fsync`` per commit.
   Prints the append p50/p99 of the first and the last 10% of the commits (they must not
   grow), beside the peer: the way appends worked before the retention log (a Parquet part
   and a manifest rewrite per commit: ``CaseBase._append_part_per_commit`` below, measured
   on the same base for the first 300 commits only, as its cost grows).
2. Reading after: opening the base and answering one flop query (index extended by the
   log's rows), with the 100,000 cases still in the log and after :meth:`CaseBase.compact`.
3. A ``--hands`` heads-up match against `call` with retention off and on (same deals,
   ``OMP_NUM_THREADS=1``), for each bot of ``--bots``: ``cbr`` (the default bot: the
   expert preset on a copy of the shipped expert case base) and ``casper`` (CASPER's
   preset on a copy of the default case base, whose decisions are cheaper, so retention
   weighs more). ``--pairs`` off/on pairs run interleaved; hands per second of wall time
   and per CPU second (the CPU figure moves less when other processes load the machine),
   the median of each and the ratios (target: on >= :data:`TARGET` of off, CPU, at 3,000 hands;
   within 0.1 of ``--floor`` at 10,000). `call` never folds, so
   every hand reaches a showdown and both players' decisions are retained: the most work
   retention can have per hand. The time includes closing the bot (compaction, indexes saved).
4. ``--breakdown``: the same off and on matches once each, with the functions retention makes
   dearer timed by wrappers (ms a hand): the feature rows (the opponent's shown decisions are
   computed at retention), the aggregate retrieval (the retained cases are scanned and hit),
   the decision, the retained hand's write; then the budget that on >= TARGET of off leaves for
   retention beside what those first two alone add.
5. ``--bounds``: how far the ratio could rise if retention left work out. Play only (the close
   is not timed, in every variant), CPU, ``--pairs`` rounds of: off; on; *write only*: every case
   still written durably (features, log record, compactions) but not added to what the bot
   searches (``RetainedWrites._absorb``, which also extends the street views the bot reads,
   replaced by a no-op for the match; the bot then plays as with retention off); *log only*: the same without compactions.
   Then the floor, the work no retention can leave out: *features only* (retention computes
   the feature rows of the opponent's shown decisions, the bot's own being kept from deciding,
   and writes nothing) and *off, grown base* (retention off, from a copy grown first by a
   retaining match of half the hands, another seed, closed: the mean size the case base has
   during a retaining match). The floor is off / (off + what each of those two adds): the
   ratio a retention whose writing, absorbing and compacting cost nothing would reach.
   What-if measurements that break retention on purpose: they bound, they do not ship.
6. ``--floor``: those last two beside off only, ``--pairs`` rounds, each round's floor and
   their mean with a 95% interval (Student t over the rounds).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from cbr.game.gamedef import STREETS  # noqa: E402
from cbr.play.retention import copy_casebase  # noqa: E402
from cbr.store import CaseBase  # noqa: E402
from cbr.store.manifest import read_manifest  # noqa: E402
from cbr.store.parts import build_table, count_actions, part_entry, write_part  # noqa: E402
from experiments.common import description, help_format, number, positive_int  # noqa: E402


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) * 1000.0


def hand_batches(cb: CaseBase, rng: np.random.Generator) -> dict:
    out = {}
    for s in STREETS:
        d = len(cb.feature_names(s))
        out[s] = (rng.random((1, d), dtype=np.float32), rng.choice(list("fcr")), {"match_id": "bench", "seat": 0})
    return out


def appends(path: Path, commits: int, sync_every: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    times = []
    with CaseBase.open(path) as cb:
        cb.sync_every = sync_every
        for _ in range(commits):
            b = hand_batches(cb, rng)
            t = time.perf_counter()
            cb.append_streets(b)
            times.append(time.perf_counter() - t)
    return times


def part_per_commit(path: Path, commits: int, seed: int) -> list[float]:
    """The pre-log way: per commit, a Parquet part per street and a manifest (and stale
    catalog) rewrite listing every part, under the write lock."""
    rng = np.random.default_rng(seed)
    times = []
    with CaseBase.open(path) as cb:
        for _ in range(commits):
            b = hand_batches(cb, rng)
            t = time.perf_counter()
            with cb._lock():
                m = read_manifest(cb.path)
                for s, (X, a, meta) in b.items():
                    table = build_table(m.features[s], m.next_case_id, X, a, **meta)
                    n = len(m.parts[s])
                    rel = f"cases/{s}/part-{n + 90000:05d}.parquet"
                    m.parts[s].append(part_entry(rel, 1, write_part(cb.path / rel, table)))
                    count_actions(m.counts[s], [a])
                    m.next_case_id += 1
                cb._commit(m, catalog=False)
            times.append(time.perf_counter() - t)
    return times


def read_after(path: Path) -> tuple[float, float]:
    t = time.perf_counter()
    cb = CaseBase.open(path)
    n = cb.count()
    opened = time.perf_counter() - t
    q = cb.cases("flop").features[0]
    cb.index("flop").retrieve(q)
    answered = time.perf_counter() - t
    cb._dirty_indexes.clear()  # measure reading only: do not save the grown index on close
    cb.close()
    assert n > 0
    return opened, answered


#: The ratio retention on / off (CPU) a 3,000-hand match must reach (issue 34).
TARGET = 0.62

#: Bots of the match part: bot -> (shipped case base copied, policy preset).
MATCH_BOTS = {"cbr": ("expert", "expert"), "casper": ("default", "casper")}


def match_speed(hands: int, retain: bool, root: Path, bot_name: str, run: int) -> tuple[float, float]:
    from cbr.play.match import run_match
    from cbr.policies.cbr_policy import CBRPolicy

    base, preset = MATCH_BOTS[bot_name]
    path = copy_casebase(base, root / f"{bot_name}-{run}-{'on' if retain else 'off'}")
    bot = CBRPolicy(preset=preset, casebase=str(path), seed=1)
    bot.open()
    t, c = time.perf_counter(), time.process_time()
    r = run_match([bot, "call"], hands, seed=7, retain=retain)
    bot.close()  # compacts the retention log and saves the grown indexes: part of the cost
    dt, dc = time.perf_counter() - t, time.process_time() - c
    print(f"  {bot_name} retention {'on ' if retain else 'off'}: {counted(hands, 'hand')} in {dt:.1f} s wall = "
          f"{hands / dt:,.0f} hands/s, {dc:.1f} s CPU = {hands / dc:,.0f} hands per CPU second"
          + (f", {counted(r.retained, 'case')} retained" if retain else ""), flush=True)
    shutil.rmtree(path, ignore_errors=True)
    return hands / dt, hands / dc


#: What ``--breakdown`` times: label -> (module, class, method).
BREAKDOWN = {"feature rows": ("features.casper", "CasperFeatures", "row"),
             "aggregate retrieval": ("cbr.retrieval.brute", "BruteForceBackend", "aggregate_batch"),
             "decision": ("cbr.policies.cbr_policy", "CBRPolicy", "decide"),
             "retained hand's write": ("cbr.store.retained", "RetainedWrites", "retain_hand")}


def timed_match(hands: int, retain: bool, root: Path, bot_name: str) -> tuple[float, dict[str, float]]:
    """Seconds of a match (closing included) and the seconds spent in each :data:`BREAKDOWN` function."""
    import functools
    import importlib

    spent = {label: 0.0 for label in BREAKDOWN}
    originals = []
    for label, (module, cls, name) in BREAKDOWN.items():
        owner = getattr(importlib.import_module(module), cls)
        f = owner.__dict__[name]

        def wrapper(*a, _f=f, _label=label, **k):
            t = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                spent[_label] += time.perf_counter() - t

        originals.append((owner, name, f))
        setattr(owner, name, functools.wraps(f)(wrapper))
    try:
        hands_per_s, _ = match_speed(hands, retain, root, bot_name, 0)
        return hands / hands_per_s, spent
    finally:
        for owner, name, f in originals:
            setattr(owner, name, f)


def breakdown_part(hands: int, bots: list[str], root: Path) -> None:
    for bot_name in bots:
        print(f"4. where retention's time goes: {bot_name} vs call, {counted(hands, 'hand')}, ms a hand")
        (off, t_off), (on, t_on) = (timed_match(hands, r, root, bot_name) for r in (False, True))
        ms = 1000.0 / hands
        for label in BREAKDOWN:
            print(f"  {label}: off {t_off[label] * ms:.2f}, on {t_on[label] * ms:.2f}, "
                  f"+{(t_on[label] - t_off[label]) * ms:.2f}")
        budget = (off / TARGET - off) * ms
        floor = sum(t_on[k] - t_off[k] for k in ("feature rows", "aggregate retrieval")) * ms
        print(f"  match: off {off * ms:.2f}, on {on * ms:.2f} (on / off {off / on:.2f}); the budget for "
              f"on >= {TARGET:.2f} of off: {budget:.2f} ms a hand; the feature rows and the aggregate retrieval "
              f"alone add {floor:.2f}", flush=True)


#: ``--bounds``' variants: label -> what is replaced by a no-op for the match, (module, class, method).
BOUNDS = {"write only": [("cbr.store.retained", "RetainedWrites", "_absorb")],
          "log only": [("cbr.store.retained", "RetainedWrites", "_absorb"),
                       ("cbr.store.compaction", "Compaction", "compact")]}


def features_only(cb, dps, outcomes=None, source=None, rows=None, **provenance):
    """``RetainedWrites.retain_hand`` reduced to the work no retention can skip: the feature
    rows of the decisions the bot did not compute while deciding (the opponent's shown ones).
    Nothing is written or searched."""
    fs = cb.feature_set()
    given = list(rows) if rows is not None else [None] * len(dps)
    for dp, row in zip(dps, given):
        if row is None:
            fs.row(dp)
    return [0] * len(dps)


def grown_copy(hands: int, root: Path, bot_name: str, run: int) -> Path:
    """A copy of the bot's case base grown by a retaining match of ``hands`` hands (another
    seed than the timed matches), closed: its retained cases compacted into parts."""
    from cbr.play.match import run_match
    from cbr.policies.cbr_policy import CBRPolicy

    base, preset = MATCH_BOTS[bot_name]
    path = copy_casebase(base, root / f"{bot_name}-{run}-grown")
    bot = CBRPolicy(preset=preset, casebase=str(path), seed=1)
    bot.open()
    run_match([bot, "call"], hands, seed=8, retain=True)
    bot.close()
    return path


def play_cpu(hands: int, retain: bool, root: Path, bot_name: str, run: int, left_out: list,
             replaced: dict | None = None, start: Path | None = None) -> float:
    """CPU seconds of a match's play (the close not timed) with the methods ``left_out`` made
    no-ops and those of ``replaced`` (``(module, class, method) -> function``) replaced, from a
    copy of ``start`` (default: the bot's shipped case base)."""
    import importlib

    from cbr.play.match import run_match
    from cbr.policies.cbr_policy import CBRPolicy

    base, preset = MATCH_BOTS[bot_name]
    path = copy_casebase(start or base, root / f"{bot_name}-{run}-bound")
    bot = CBRPolicy(preset=preset, casebase=str(path), seed=1)
    bot.open()
    originals = []
    swaps = [(where, lambda *a, **k: None) for where in left_out] + list((replaced or {}).items())
    for (module, cls, name), f in swaps:
        owner = getattr(importlib.import_module(module), cls)
        originals.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, f)
    try:
        c = time.process_time()
        run_match([bot, "call"], hands, seed=7, retain=retain)
        return time.process_time() - c
    finally:
        for owner, name, f in originals:
            setattr(owner, name, f)
        shutil.rmtree(path, ignore_errors=True)  # not closed: a left-out variant's base is not whole


def floor_runs(hands: int, root: Path, bot_name: str, run: int) -> tuple[float, float]:
    """CPU seconds of the floor's two runs: *features only*, and off on a grown copy."""
    feats = play_cpu(hands, True, root, bot_name, run, [], {
        ("cbr.store.retained", "RetainedWrites", "retain_hand"): features_only})
    grown = grown_copy(hands // 2, root, bot_name, run)
    try:
        return feats, play_cpu(hands, False, root, bot_name, run, [], start=grown)
    finally:
        shutil.rmtree(grown, ignore_errors=True)


def floor_of(off: float, feats: float, grown_off: float) -> float:
    """off / (off + what *features only* and the grown base each add)."""
    return off / (feats + grown_off - off)


def mean_ci(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% Student t interval (at least two values)."""
    from statistics import mean, stdev

    return mean(values), T95[min(len(values) - 1, len(T95)) - 1] * stdev(values) / len(values) ** 0.5


def bounds_part(hands: int, bots: list[str], pairs: int, root: Path) -> None:
    for bot_name in bots:
        print(f"5. bounds: {bot_name} vs call, {counted(hands, 'hand')}, play only (close not timed), CPU ms a hand, "
              f"{counted(pairs, 'round')}")
        runs: dict[str, list[float]] = {"off": [], "on": [], **{label: [] for label in BOUNDS},
                                        "features only": [], "off, grown base": []}
        for run in range(pairs):
            runs["off"].append(play_cpu(hands, False, root, bot_name, run, []))
            runs["on"].append(play_cpu(hands, True, root, bot_name, run, []))
            for label, left_out in BOUNDS.items():
                runs[label].append(play_cpu(hands, True, root, bot_name, run, left_out))
            feats, grown_off = floor_runs(hands, root, bot_name, run)
            runs["features only"].append(feats)
            runs["off, grown base"].append(grown_off)
        ms = {label: [1000.0 * s / hands for s in v] for label, v in runs.items()}
        for label, v in ms.items():
            ratios = "" if label == "off" else "; off / this: " + ", ".join(
                f"{o / x:.2f}" for o, x in zip(ms["off"], v))
            print(f"  {label}: {', '.join(f'{x:.2f}' for x in v)} ms a hand{ratios}", flush=True)
        floor = [floor_of(*x) for x in zip(ms["off"], ms["features only"], ms["off, grown base"])]
        print(f"  floor (off / (off + what features only and the grown base each add)): "
              f"{', '.join(f'{x:.2f}' for x in floor)}", flush=True)


def floor_part(hands: int, bots: list[str], rounds: int, root: Path) -> None:
    """``--floor``: only off, *features only* and *off, grown base* of :func:`bounds_part`,
    ``rounds`` interleaved rounds; the floor of each round, their mean and its 95% interval."""
    for bot_name in bots:
        print(f"6. floor: {bot_name} vs call, {counted(hands, 'hand')}, play only, CPU ms a hand, {counted(rounds, 'round')}")
        floors, left = [], []
        for run in range(rounds):
            off = 1000.0 * play_cpu(hands, False, root, bot_name, run, []) / hands
            feats, grown_off = (1000.0 * x / hands for x in floor_runs(hands, root, bot_name, run))
            floors.append(floor_of(off, feats, grown_off))
            left.append(off / TARGET - (feats + grown_off - off))
            print(f"  round {run + 1}: off {off:.2f}, features only {feats:.2f} (+{feats - off:.2f}), "
                  f"off on the grown base {grown_off:.2f} (+{grown_off - off:.2f}); floor {floors[-1]:.2f}",
                  flush=True)
        if rounds > 1:
            (f, f_half), (lt, l_half) = mean_ci(floors), mean_ci(left)
            print(f"  floor: mean {f:.2f} +- {f_half:.2f} (95%, t, {counted(rounds, 'round')}); what a ratio of {TARGET:.2f} "
                  f"leaves for writing, absorbing and compacting: {lt:.2f} +- {l_half:.2f} ms a hand", flush=True)


#: Two-sided 95% Student t quantiles for 1..10 degrees of freedom.
T95 = (12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23)


def match_part(hands: int, bots: list[str], pairs: int, root: Path) -> None:
    for bot_name in bots:
        print(f"3. match {bot_name} vs call, {counted(hands, 'hand')} heads-up, {counted(pairs, 'off/on pair')}")
        off, on = [], []
        for run in range(pairs):
            off.append(match_speed(hands, False, root, bot_name, run))
            on.append(match_speed(hands, True, root, bot_name, run))
        wall_off, cpu_off = (statistics.median(x[i] for x in off) for i in (0, 1))
        wall_on, cpu_on = (statistics.median(x[i] for x in on) for i in (0, 1))
        pair_wall = [b[0] / a[0] for a, b in zip(off, on)]
        pair_cpu = [b[1] / a[1] for a, b in zip(off, on)]
        print(f"  {bot_name}: median off {wall_off:,.0f} hands/s wall, {cpu_off:,.0f} per CPU s; on {wall_on:,.0f} / "
              f"{cpu_on:,.0f}; on / off = {wall_on / wall_off:.2f} wall, {cpu_on / cpu_off:.2f} CPU "
              f"(pairs: wall {', '.join(f'{x:.2f}' for x in pair_wall)}; CPU {', '.join(f'{x:.2f}' for x in pair_cpu)}; "
              f"target >= {TARGET:.2f})", flush=True)


def match_bots(text: str) -> list[str]:
    """``--bots``: a comma-separated list of :data:`MATCH_BOTS`, checked as the arguments are
    read (so an unknown bot is a usage error with or without the C extensions)."""
    bots = [b for b in text.split(",") if b]
    unknown = [b for b in bots if b not in MATCH_BOTS]
    if unknown:
        raise argparse.ArgumentTypeError(f"{counted(len(unknown), 'unknown bot')}: {', '.join(unknown)}; use {', '.join(MATCH_BOTS)}")
    return bots


def whole_hands(text: str) -> int:
    """``--decisions``' type: 4 or more, a multiple of 4, as part 1 commits whole hands of 4
    decisions (one a street); another count was rounded down without a word."""
    decisions = number(4, int)(text)
    if decisions % 4:
        raise argparse.ArgumentTypeError(
            f"{text} is not a multiple of 4: part 1 commits whole hands of 4 decisions, one a street "
            f"(give {decisions // 4 * 4} or {decisions // 4 * 4 + 4})")
    return decisions


def main() -> None:
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--decisions", type=whole_hands, default=100_000,
                    help="decisions retained in part 1, four a hand (a multiple of 4)")
    ap.add_argument("--hands", type=positive_int, default=10_000, help="hands of each match")
    # the parts to run: one choice (--skip-match --only-match ran the match part alone)
    parts = ap.add_mutually_exclusive_group()
    parts.add_argument("--skip-match", action="store_true", help="only the append and read parts")
    parts.add_argument("--only-match", action="store_true", help="only the match part")
    ap.add_argument("--bots", type=match_bots, default="cbr,casper", help=f"match bots, of {', '.join(MATCH_BOTS)}")
    ap.add_argument("--pairs", type=positive_int, default=1, help="off/on match pairs per bot (medians reported)")
    parts.add_argument("--breakdown", action="store_true", help="only part 4: where retention's time goes")
    parts.add_argument("--bounds", action="store_true", help="only part 5: the ratio if retention left work out")
    parts.add_argument("--floor", action="store_true",
                    help="only part 6: the floor of part 5 alone, --pairs rounds, with a 95%% interval")
    from native_guard import parse_args

    args = parse_args(ap)
    bots = args.bots
    if args.breakdown:
        with tempfile.TemporaryDirectory() as tmp:
            breakdown_part(args.hands, bots, Path(tmp))
        return
    if args.floor:
        with tempfile.TemporaryDirectory() as tmp:
            floor_part(args.hands, bots, args.pairs, Path(tmp))
        return
    if args.bounds:
        with tempfile.TemporaryDirectory() as tmp:
            bounds_part(args.hands, bots, args.pairs, Path(tmp))
        return
    if args.only_match:
        with tempfile.TemporaryDirectory() as tmp:
            match_part(args.hands, bots, args.pairs, Path(tmp))
        return
    commits = args.decisions // 4
    tenth = max(1, commits // 10)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"1. appends: {counted(args.decisions, 'decision')} in {commits:,} commits of one hand (4 streets)")
        for label, sync in (("fsync at most once a second (default)", 1.0), ("fsync every commit", 0.0)):
            path = copy_casebase("default", root / f"a{sync}")
            n = commits if sync else max(tenth * 2, min(commits, 5000))
            t = appends(path, n, sync, 1)
            k = max(1, n // 10)
            print(f"  {label}: first {k:,} commits p50 {pct(t[:k], 50):.2f} ms p99 {pct(t[:k], 99):.2f} ms; "
                  f"last {k:,} p50 {pct(t[-k:], 50):.2f} ms p99 {pct(t[-k:], 99):.2f} ms", flush=True)
            if sync:
                big = path
        peer = copy_casebase("default", root / "peer")
        t = part_per_commit(peer, 300, 1)
        print(f"  peer, a part per street + a manifest listing every part, per commit: commits 1-30 p50 "
              f"{pct(t[:30], 50):.2f} ms, commits 271-300 p50 {pct(t[-30:], 50):.2f} ms", flush=True)
        print("2. open + one flop query afterwards (median of 3)")
        runs = [read_after(big) for _ in range(3)]
        with CaseBase.open(big) as cb:
            logged = cb.count() - cb.manifest.total_cases
        print(f"  {args.decisions:,} retained ({args.decisions - logged:,} already compacted into parts by the "
              f"automatic compaction every {counted(cb.compact_every, 'record')}, {logged:,} in the log): open "
              f"{statistics.median(r[0] for r in runs):.2f} s, open + query "
              f"{statistics.median(r[1] for r in runs):.2f} s", flush=True)
        t = time.perf_counter()
        with CaseBase.open(big) as cb:
            moved = cb.compact()
        compaction = time.perf_counter() - t
        runs = [read_after(big) for _ in range(3)]
        print(f"  after compact() ({counted(moved, 'case')} in {compaction:.2f} s): open {statistics.median(r[0] for r in runs):.2f} s, "
              f"open + query {statistics.median(r[1] for r in runs):.2f} s", flush=True)
        if not args.skip_match:
            match_part(args.hands, bots, args.pairs, root)


if __name__ == "__main__":
    from native_guard import run

    run(main)
