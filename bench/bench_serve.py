"""``cbr serve``'s ``/retrieve`` over real HTTP on loopback, beside the same queries through
the library in the same process (the floor) and through ``cbr query`` as a process per query.

A ``cbr serve`` process is started on a free loopback port over the default case base; 1, 4
and 16 client threads (one ``httpx.Client`` each, keep-alive) send ``/retrieve`` requests
for ``--seconds`` each, drawn from a fixed set of situations (random holdings and boards on
every street, seeded). Printed per row: requests, errors (any status but 200), p50 and p99
latency in ms, and requests per second. The floor rows run the same bodies in this process:
``answer()`` on a decision point built beforehand, and the server's own per-request work
(``Engine.retrieve``: situation search + retrieval + JSON-ready answer); ``GET /health``
with one client is the HTTP floor (no engine work). ``cbr query``
starts an interpreter per query (``--process-samples`` of them). Aim: p99 <= 10 ms with 16
clients, no errors.

    python bench/bench_serve.py --seconds 5
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from cbr.errors import counted  # noqa: E402

RANKS, SUITS = "23456789TJQKA", "cdhs"


def situations(n: int, seed: int) -> list[dict]:
    """``n`` request bodies: random holdings and boards (0, 3, 4, 5 cards), position and to_call."""
    rng = random.Random(seed)
    deck = [r + s for r in RANKS for s in SUITS]
    out = []
    for _ in range(n):
        cards = rng.sample(deck, 7)
        board = "".join(cards[2:2 + rng.choice((0, 3, 4, 5))])
        body = {"hole": "".join(cards[:2]), "top": 5}
        if board:
            body.update(board=board, position=rng.choice((0, 1)), to_call=rng.choice((0, 1)))
        out.append(body)
    return out


def percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def start_server(threads: int, workers: int = 1) -> tuple[subprocess.Popen, str]:
    from cbr.errors import CBRError
    from cbr.serve.process import start_server as start

    try:
        return start(["--threads", str(threads), "--workers", str(workers)], cwd=REPO, stdout=subprocess.DEVNULL)
    except CBRError as exc:
        raise SystemExit(str(exc)) from None


def stop(proc: subprocess.Popen) -> None:
    from cbr.serve.process import stop_server

    stop_server(proc)


def http_load(url: str, bodies: list[dict], clients: int, seconds: float, health: bool = False) -> dict:
    """``clients`` threads posting ``bodies`` round-robin to /retrieve for ``seconds``
    (``health``: GET /health instead, the HTTP floor)."""
    import httpx

    lat: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    start = threading.Barrier(clients + 1)
    stop_at = [0.0]

    def worker(k: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            c.post("/retrieve", json=bodies[k % len(bodies)])  # connect before timing
            start.wait()
            i = k
            while time.perf_counter() < stop_at[0]:
                t = time.perf_counter()
                try:
                    r = c.get("/health") if health else c.post("/retrieve", json=bodies[i % len(bodies)])
                    ok = r.status_code == 200
                except httpx.HTTPError:
                    ok = False
                lat[k].append(time.perf_counter() - t)
                errors[k] += not ok
                i += clients

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    for t in ts:
        t.start()
    stop_at[0] = time.perf_counter() + 1e9
    start.wait()
    t0 = time.perf_counter()
    stop_at[0] = t0 + seconds
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    flat = [x for xs in lat for x in xs]
    return {"n": len(flat), "errors": sum(errors), "p50": percentile(flat, 0.5), "p99": percentile(flat, 0.99),
            "rps": len(flat) / wall}


def timed(fn, items: list, seconds: float) -> dict:
    lat = []
    end = time.perf_counter() + seconds
    t0 = time.perf_counter()
    i = 0
    while time.perf_counter() < end:
        t = time.perf_counter()
        fn(items[i % len(items)])
        lat.append(time.perf_counter() - t)
        i += 1
    wall = time.perf_counter() - t0
    return {"n": len(lat), "errors": 0, "p50": percentile(lat, 0.5), "p99": percentile(lat, 0.99),
            "rps": len(lat) / wall}


def process_queries(bodies: list[dict], samples: int) -> dict:
    script = Path(sys.executable).parent / "cbr"
    cmd = [str(script)] if script.is_file() else [sys.executable, "-m", "cli"]
    lat, errors = [], 0
    for body in bodies[:samples]:
        args = ["query", "--json", "--hole", body["hole"]]
        for k in ("board", "position", "to_call"):
            if k in body:
                args += [f"--{k.replace('_', '-')}", str(body[k])]
        t = time.perf_counter()
        r = subprocess.run(cmd + args, cwd=REPO, capture_output=True)
        lat.append(time.perf_counter() - t)
        errors += r.returncode != 0
    return {"n": len(lat), "errors": errors, "p50": percentile(lat, 0.5), "p99": percentile(lat, 0.99),
            "rps": len(lat) / sum(lat)}


def main() -> None:
    from native_guard import (
        help_format,
        number_list,
        parse_args,
        positive_float,
        positive_int,
        require_modules,
        seed_int,
    )

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seconds", type=positive_float, default=5.0, help="Seconds of load per row.")
    ap.add_argument("--clients", type=number_list(1), default="1,4,16", help="Client thread counts, comma-separated.")
    ap.add_argument("--situations", type=positive_int, default=200, help="Situations the clients ask about.")
    ap.add_argument("--process-samples", type=positive_int, default=5,
                    help="Situations asked of a new cbr query process each (the row without a server).")
    ap.add_argument("--threads", type=positive_int, default=8, help="The server's --threads.")
    ap.add_argument("--workers", type=positive_int, default=1, help="The server's --workers (processes).")
    ap.add_argument("--seed", type=seed_int, default=1, help="Seed of the situations.")
    args = parse_args(ap)
    require_modules("bench_serve.py", "sends its HTTP requests with", ("httpx",), "test")
    require_modules("bench_serve.py", "starts cbr serve, which needs", ("fastapi", "uvicorn"), "serve")

    from cbr.serve.engine import Engine

    engine = Engine(["default"])
    bodies = []
    for b in situations(args.situations * 2, args.seed):  # keep the spots a legal hand reaches
        try:
            engine.decision_point(b)
        except ValueError:
            continue
        bodies.append(b)
        if len(bodies) == args.situations:
            break
    from cbr.query.answer import answer

    cb = engine.casebases["default"].cb
    dps = [engine.decision_point(b) for b in bodies]
    rows = [("library: answer() on a built spot", 1, timed(lambda dp: answer(cb, dp, top=5).to_dict(top=5), dps,
                                                             args.seconds)),
            ("library: Engine.retrieve (situation + answer)", 1, timed(engine.retrieve, bodies, args.seconds))]
    engine.close()
    proc, url = start_server(args.threads, args.workers)
    try:
        rows.append(("HTTP GET /health, 1 client (HTTP floor)", 1, http_load(url, bodies, 1, args.seconds, True)))
        for n in args.clients:
            rows.append((f"HTTP /retrieve, {counted(n, 'client')}", n, http_load(url, bodies, n, args.seconds)))
    finally:
        stop(proc)
    rows.append(("cbr query, a process per query", 1, process_queries(bodies, args.process_samples)))
    print(f"{counted(len(bodies), 'situation')}, default case base, {args.seconds:g} s per row, {os.cpu_count()} CPUs, "
          f"server: {counted(args.workers, 'worker')} x {counted(args.threads, 'thread')}")
    print(f"{'path':<48} {'requests':>8} {'errors':>6} {'p50 ms':>8} {'p99 ms':>8} {'req/s':>8}")
    for name, _, r in rows:
        print(f"{name:<48} {r['n']:>8} {r['errors']:>6} {r['p50'] * 1e3:>8.2f} {r['p99'] * 1e3:>8.2f} "
              f"{r['rps']:>8.1f}")


if __name__ == "__main__":
    from native_guard import run

    run(main)
