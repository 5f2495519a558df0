"""Log parser speed on the real logs in ../shared/data/logs (hands per second).

Run: ``python3 bench/bench_parsers.py [--repeat N]``. Each file set is parsed N times (a
fresh parser each time) to get a stable figure. Targets: ACPC >= 50,000 hands/s (parse
only; parse + replay through the rules engine is shown beside it), IRC and PokerStars
>= 10,000 hands/s. PHH is measured beside PokerKit's own PHH reader (the peer) on the
same hold'em files, and the ratio printed. Times are CPU seconds of this process
(``time.process_time``): the machine is shared, and wall time mostly measures the others.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cbr.logs.record import HandRecord  # noqa: E402

LOGS = REPO.parent / "shared" / "data" / "logs"


def _rate(label: str, hands: int, seconds: float, target: float | None = None) -> float:
    rate = hands / seconds if seconds > 0 else float("inf")
    goal = f"   target >= {target:,.0f}  {'ok' if rate >= target else 'BELOW TARGET'}" if target else ""
    print(f"{label:<40} {hands:>8,} hands  {seconds:7.3f} cpu-s  {rate:>10,.0f} hands/s{goal}")
    return rate


def bench_acpc(repeat: int) -> None:
    from cbr.logs.acpc import AcpcParser

    files = sorted((LOGS / "acpc").rglob("*.log"))
    texts = [(str(f), f.read_text()) for f in files]
    limit = [(s, t) for s, t in texts if "dealer_example_limit" in s]
    for label, subset in (("acpc, all (limit + Pluribus NL)", texts), ("acpc, fixed-limit 2p/3p only", limit)):
        n, t0 = 0, time.process_time()
        for _ in range(repeat):
            parser = AcpcParser()
            for source, text in subset:
                n += sum(1 for r in parser.parse_text(text, source) if isinstance(r, HandRecord))
        _rate(label + ", parse", n, time.process_time() - t0, 50_000)
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
    n, t0 = 0, time.process_time()
    for _ in range(repeat):
        parser = PhhParser()
        for source, text in texts:
            n += sum(1 for r in parser.parse_text(text, source) if isinstance(r, HandRecord))
    ours = _rate("phh, parse (hold'em hands)", n, time.process_time() - t0)
    try:
        import pokerkit
    except ImportError:
        return
    peer_texts = texts
    n, t0 = 0, time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeat):
            for source, text in peer_texts:
                if source.endswith(".phhs"):
                    n += len(list(pokerkit.HandHistory.loads_all(text)))
                else:
                    pokerkit.HandHistory.loads(text)
                    n += 1
    peer = _rate("phh, pokerkit HandHistory.loads (peer)", n, time.process_time() - t0)
    print(f"{'':<40} ratio ours / pokerkit = {ours / peer:.1f}x  (pokerkit also validates hands)")


def bench_other(name: str, folder: str, repeat: int) -> None:
    from cbr.logs.detect import log_sources, parser_for
    from cbr.errors import PluginError

    try:
        parser_cls = type(parser_for(name))
    except PluginError as exc:
        print(f"{name}: not available ({exc})")
        return
    sources = [s for s, f in log_sources([LOGS / folder]) if f == name]
    n, t0 = 0, time.process_time()
    for _ in range(repeat):
        parser = parser_cls()
        for source in sources:
            n += sum(1 for r in parser.parse(source) if isinstance(r, HandRecord))
    _rate(f"{name}, parse (files from disk)", n, time.process_time() - t0, 10_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not LOGS.exists():
        sys.exit(f"real logs not found at {LOGS}")
    bench_acpc(args.repeat)
    bench_phh(args.repeat)
    bench_other("irc", "irc", args.repeat)
    bench_other("pokerstars", "pokerstars_fl", max(args.repeat, 20))


if __name__ == "__main__":
    main()
