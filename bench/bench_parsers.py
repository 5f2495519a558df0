"""Log parser speed on the real logs in ../shared/data/logs (hands per second).

Run: ``python3 bench/bench_parsers.py [--repeat N]``. Each file set is parsed N times (a
fresh parser each time) to get a stable figure. Targets: ACPC >= 50,000 hands/s (parse
only; parse + replay through the rules engine is shown beside it), IRC and PokerStars
>= 10,000 hands/s. PokerStars is measured on the 10 sample files as published (one hand
per file, so opening files weighs a lot) and, as the headline, on one 1,000-hand file
built from them in a temporary folder (real exports hold many hands per file); there is
no peer for it (PokerKit's ``PokerStarsParser`` reads only ``Hold'em No Limit``). PHH is
measured beside PokerKit's own PHH reader (the peer) on the same hold'em files, and the
ratio printed. Times are CPU seconds of this process
(``time.process_time``): the machine is shared, and wall time mostly measures the others.
"""
from __future__ import annotations

import argparse
import gc
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cbr.errors import counted  # noqa: E402
from cbr.logs.record import HandRecord  # noqa: E402

LOGS = REPO.parent / "shared" / "data" / "logs"


def _fresh_heap() -> None:
    """Start a benchmark as in a fresh process: objects the earlier ones left behind (parser
    caches, game definitions) are moved out of the garbage collector's reach. Otherwise
    every collection during the next benchmark walks them, and on this machine that cost
    a later parser 20-30% (PokerStars after ACPC and IRC)."""
    gc.collect()
    gc.freeze()


def _rate(label: str, hands: int, seconds: float, target: float | None = None) -> float:
    rate = hands / seconds if seconds > 0 else float("inf")
    goal = f"   target >= {target:,.0f}  {'ok' if rate >= target else 'BELOW TARGET'}" if target else ""
    print(f"{label:<40} {counted(hands, 'hand'):>14}  {seconds:7.3f} cpu-s  {rate:>10,.0f} hands/s{goal}")
    return rate


def _report(label: str, measured: tuple[int, float, float], target: float | None = None) -> float:
    """Print the best round (the figure least disturbed by neighbours) and the median."""
    n, best, median = measured
    rate = _rate(label, n, best, target)
    print(f"{'':<40} (best of rounds; median round {n / median:,.0f} hands/s)")
    return rate


def bench_acpc(repeat: int) -> None:
    from cbr.logs.acpc import AcpcParser

    files = sorted((LOGS / "acpc").rglob("*.log"))
    texts = [(str(f), f.read_text()) for f in files]
    limit = [(s, t) for s, t in texts if "dealer_example_limit" in s]
    for label, subset in (("acpc, all (limit + Pluribus NL)", texts), ("acpc, fixed-limit 2p/3p only", limit)):
        def one_round(subset=subset) -> int:
            parser = AcpcParser()
            return sum(1 for source, text in subset for r in parser.parse_text(text, source)
                       if isinstance(r, HandRecord))

        _report(label + ", parse", _best_of(max(repeat, 5), one_round), 50_000)
    try:
        from cbr.logs.replay import replay
    except ImportError:
        print("acpc parse + replay: cbr.logs.replay not available")
        return
    n, t0 = 0, time.process_time()
    parser = AcpcParser()
    for source, text in texts:
        for r in parser.parse_text(text, source):
            if isinstance(r, HandRecord):
                replay(r)
                n += 1
    _rate("acpc, all, parse + replay", n, time.process_time() - t0)


def bench_phh(repeat: int) -> None:
    from cbr.logs.phh import PhhParser

    files = [f for f in sorted((LOGS / "phh").rglob("*.phh*"))]
    texts = [(str(f), f.read_text()) for f in files]
    # the same hold'em files for both readers (other variants are skipped by ours)
    holdem = {r.source for s, t in texts for r in PhhParser().parse_text(t, s) if isinstance(r, HandRecord)}
    texts = [(s, t) for s, t in texts if s in holdem]
    def ours_round() -> int:
        parser = PhhParser()
        return sum(1 for source, text in texts for r in parser.parse_text(text, source) if isinstance(r, HandRecord))

    ours = _report("phh, parse (hold'em hands)", _best_of(max(repeat, 5), ours_round))
    try:
        import pokerkit
    except ImportError:
        return
    def peer_round() -> int:
        n = 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for source, text in texts:
                if source.endswith(".phhs"):
                    n += len(list(pokerkit.HandHistory.loads_all(text)))
                else:
                    pokerkit.HandHistory.loads(text)
                    n += 1
        return n

    peer = _report("phh, pokerkit HandHistory.loads (peer)", _best_of(max(repeat, 5), peer_round))
    print(f"{'':<40} ratio ours / pokerkit = {ours / peer:.1f}x  (pokerkit also validates hands)")


def bench_other(name: str, folder: str, repeat: int) -> None:
    from cbr.errors import PluginError
    from cbr.logs.detect import log_sources, parser_for

    try:
        parser_cls = type(parser_for(name))
    except PluginError as exc:
        print(f"{name}: not available ({exc})")
        return
    sources = [s for s, f in log_sources([LOGS / folder]) if f == name]

    def one_round() -> int:
        parser = parser_cls()
        return sum(1 for source in sources for r in parser.parse(source) if isinstance(r, HandRecord))

    _report(f"{name}, parse (files from disk)", _best_of(max(repeat, 5), one_round), 10_000)


def pokerstars_multi_hand_file(folder: Path, hands: int) -> str:
    """One realistic export: the sample hands (one per file) concatenated in turn until
    there are ``hands`` of them, each with its own hand number (a file may not repeat
    one), separated by blank lines, UTF-8 with a BOM like the client writes."""
    header = re.compile(r"^(PokerStars (?:Zoom )?(?:Game|Hand) #)(\d+):", re.M)
    samples = [p.read_text(encoding="utf-8-sig").strip("\n") for p in sorted(folder.rglob("*.txt"))]
    out = []
    for k in range(hands):
        out.append(header.sub(lambda m: f"{m[1]}{m[2]}{k:06d}:", samples[k % len(samples)]))
    return "\ufeff" + "\n\n\n".join(out) + "\n"


def _best_of(rounds: int, one_round) -> tuple[int, float, float]:
    """Run ``one_round()`` (returns hands read) ``rounds`` times: (hands per round, best and
    median CPU seconds). The best round is the figure least disturbed by the neighbours."""
    times, hands = [], 0
    for _ in range(rounds):
        t0 = time.process_time()
        hands = one_round()
        times.append(time.process_time() - t0)
    times.sort()
    return hands, times[0], times[len(times) // 2]


def bench_pokerstars(repeat: int, parser_cls: type | None = None, label: str = "pokerstars",
                     rounds: int = 5) -> tuple[float, float]:
    """PokerStars reading speed, CPU time, best of ``rounds`` rounds (median beside it):
    (a) the 10 sample files from disk, one hand per file as published, read ``repeat * 5``
    times a round; (b) the headline, one 1,000-hand file like a real export (the sample
    hands repeated, each with its own hand number), read once a round. Returns the two
    best rates (hands/s)."""
    if parser_cls is None:
        from cbr.logs.pokerstars import PokerStarsParser as parser_cls
    folder = LOGS / "pokerstars_fl"
    files = [str(p) for p in sorted(folder.rglob("*.txt"))]

    def sample_files() -> int:
        n = 0
        for _ in range(repeat * 5):
            parser = parser_cls()
            for source in files:
                n += sum(1 for r in parser.parse(source) if isinstance(r, HandRecord))
        return n

    n, best, median = _best_of(rounds, sample_files)
    per_file = _rate(f"{label}, {len(files)} sample files, 1 hand each", n, best, 10_000)
    print(f"{'':<40} (best of {counted(rounds, 'round')}; median round {n / median:,.0f} hands/s)")
    hands = 1_000
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "pokerstars_export.txt"
        big.write_text(pokerstars_multi_hand_file(folder, hands), encoding="utf-8")

        def one_export() -> int:
            got = sum(1 for r in parser_cls().parse(str(big)) if isinstance(r, HandRecord))
            if got != hands:
                print(f"{label}: only {got} of the {counted(hands, 'hand')} of the multi-hand file were read")
            return got

        n, best, median = _best_of(rounds, one_export)
        multi = _rate(f"{label}, {hands:,}-hand file (HEADLINE)", n, best, 10_000)
        print(f"{'':<40} (best of {counted(rounds, 'round')}; median round {n / median:,.0f} hands/s)")
    return per_file, multi


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--repeat", type=positive_int, default=3, help="timed rounds of each parser (the best is kept)")
    args = parse_args(ap)
    if not LOGS.exists():
        sys.exit(f"real logs not found at {LOGS}")
    for bench in (lambda: bench_acpc(args.repeat), lambda: bench_phh(args.repeat),
                  lambda: bench_other("irc", "irc", args.repeat), lambda: bench_pokerstars(max(args.repeat, 20))):
        _fresh_heap()
        bench()


if __name__ == "__main__":
    from native_guard import run

    run(main)
