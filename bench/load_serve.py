"""A bounded load test of ``cbr serve`` on loopback: many clients mixing good and bad requests.

A ``cbr serve`` process is started in a temporary folder over the shipped default case base
and a writable copy of it (``loadcb``), with a token. ``--clients`` threads (one keep-alive
``httpx.Client`` each) send ``--requests`` requests each, drawn with a fixed seed:

- ``/retrieve`` and ``/reuse`` of random situations (holdings and boards on every street),
- bad input: a bad card, a board of two cards, an unknown case base, a pot no hand reaches,
  a body that is not JSON, an unknown field, a policy naming a server file, an unknown policy,
- ``/retain`` of one finished hand (ACPC) into the copy, with the token.

Checked: no answer is a 5xx; every good request is answered 200 and every bad one 4xx; no
retained case is lost (the copy's case count after the server's stop equals the count before
plus the cases every ``/retain`` answer reported); the server's memory is flat: its RSS after
a warm-up, sampled every 0.25 s during the run and at the end; the growth from the warm-up to
the end must stay under ``--max-growth-mb`` (64) and from a quarter of the run to its end under
half of that (the first requests fill the caches: policies, counts); no client's connection
fails (a reset or refused connection while the run goes on is one line per client in
``client_errors``).

    python bench/load_serve.py                      # the full form: 16 clients x 500 requests
    python bench/load_serve.py --clients 4 --requests 50 --json

Exit status 0 when every check held, 1 otherwise; a Ctrl-C is the one line ``interrupted:
nothing written``, exit 130 (the clients stop without a word when the server is stopped under
them). ``tests/reliability/test_serve_load.py`` runs a short form with the suite (``run_load``
below).
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

RANKS, SUITS = "23456789TJQKA", "cdhs"
TOKEN = "load-test-token-0123456789"
START_TIMEOUT = 120.0

from cbr.serve.process import stop_server  # noqa: E402


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB (Linux ``/proc``)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def hands_text(n: int, seed: int, folder: Path) -> list[str]:
    """``n`` finished heads-up hands as ACPC ``STATE:`` lines (every card shown), one per item."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    path = folder / "hands.log"
    with AcpcLogWriter(path, overwrite=True) as log:
        run_match(["ehs", "lag"], n, seed=seed, log=log)
    return [line for line in path.read_text().splitlines() if line.startswith("STATE:")]


def situation(rng: random.Random) -> dict[str, Any]:
    deck = [r + s for r in RANKS for s in SUITS]
    cards = rng.sample(deck, 7)
    board = "".join(cards[2:2 + rng.choice((0, 3, 4, 5))])
    body: dict[str, Any] = {"hole": "".join(cards[:2]), "top": rng.choice((0, 3, 5))}
    if board:
        body["board"] = board
    return body


#: Bad requests: (path, body as JSON data or raw bytes, expected status).
BAD: list[tuple[str, Any, int]] = [
    ("/retrieve", {"hole": "AdXx"}, 422),
    ("/retrieve", {"hole": "AdQc", "board": "3h4c"}, 422),
    ("/retrieve", {"hole": "AdQc", "casebase": "nosuch"}, 404),
    ("/retrieve", {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 4}, 422),
    ("/retrieve", b"{not json", 422),
    ("/retrieve", {"hole": "AdQc", "colour": "red"}, 422),
    ("/reuse", {"hole": "AdQc", "policy": "cbr:similarity=/etc/passwd"}, 422),
    ("/reuse", {"hole": "AdQc", "policy": "nosuchbot"}, 422),
    ("/retrieve/batch", {"situations": []}, 422),
    ("/retain", {"casebase": "loadcb", "text": "STATE:0:rr:garbage"}, 422),
]


POLICIES = ("cbr:preset=casper", "ehs", "call")


def warm_up(url: str, hands: list[str]) -> int:
    """Every path once before the memory is measured: each policy built, each street's cases
    read, each kind of refusal, one retention (its cases are returned)."""
    import httpx

    with httpx.Client(base_url=url, timeout=60) as c:
        for board in ("", "3h4cJh", "3h4cJh2s", "3h4cJh2s9d"):
            body = {"hole": "AdQc", "board": board} if board else {"hole": "AdQc"}
            c.post("/retrieve", json=body)
            for policy in POLICIES:
                c.post("/reuse", json={**body, "policy": policy})
        for path, body, _ in BAD:
            if isinstance(body, bytes):
                c.post(path, content=body, headers={"Content-Type": "application/json"})
            else:
                c.post(path, json=body, headers={"Authorization": f"Bearer {TOKEN}"})
        r = c.post("/retain", json={"casebase": "loadcb", "text": hands[0]}, headers={"Authorization": f"Bearer {TOKEN}"})
        r.raise_for_status()
        return int(r.json()["cases"])


def client_run(url: str, seed: int, requests: int, hands: list[str], out: dict[str, Any],
               stopping: Optional[threading.Event] = None) -> None:
    """One client's requests; ``out`` gets its counts and the cases its retentions kept.

    A failure of the connection (``httpx.HTTPError``: reset, refused, timed out) ends the client:
    while the run goes on it is a finding, kept in ``out["error"]`` (the report's
    ``client_errors``, one line per client, and the run fails); once ``stopping`` is set (the run
    is stopping: a Ctrl-C, and the server is stopped under the clients) it is the stop, and the
    client ends without a word. The client also ends before its next request once ``stopping`` is
    set. (Before, each client thread died with its traceback when a Ctrl-C stopped the server:
    a thousand lines around the script's one ``interrupted:`` line.)"""
    import httpx

    rng = random.Random(f"load:{seed}")
    statuses: Counter = Counter()
    wrong: list[str] = []
    out.update(statuses=statuses, wrong=wrong, retained=0)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=url, timeout=60) as c:
            for _ in range(requests):
                if stopping is not None and stopping.is_set():
                    return
                roll = rng.random()
                if roll < 0.40:
                    kind, path, body, want = "retrieve", "/retrieve", situation(rng), 200
                elif roll < 0.65:
                    body = situation(rng)
                    body.update(policy=rng.choice(POLICIES), seed=rng.randrange(1000))
                    kind, path, want = "reuse", "/reuse", 200
                elif roll < 0.95:
                    path, body, want = rng.choice(BAD)
                    kind = "bad"
                else:
                    kind, path, body, want = ("retain", "/retain",
                                              {"casebase": "loadcb", "text": rng.choice(hands)}, 200)
                headers = auth if kind == "retain" or path == "/retain" else {}
                if isinstance(body, bytes):
                    r = c.post(path, content=body, headers={**headers, "Content-Type": "application/json"})
                else:
                    r = c.post(path, json=body, headers=headers)
                statuses[r.status_code] += 1
                if r.status_code != want and len(wrong) < 20:
                    wrong.append(f"{kind} {path} {json.dumps(body) if not isinstance(body, bytes) else body!r}: "
                                 f"{r.status_code} (wanted {want}) {r.text[:200]}")
                if kind == "retain" and r.status_code == 200:
                    out["retained"] += int(r.json()["cases"])
                statuses[f"{kind}:{'ok' if r.status_code == want else 'wrong'}"] += 1
    except httpx.HTTPError as exc:
        if stopping is None or not stopping.is_set():
            out["error"] = f"{type(exc).__name__}: {exc}"


def start_server(folder: Path, casebase: Path, token_file: Path, threads: int) -> tuple[subprocess.Popen, str]:
    """The server under load: the default case base and a writable copy, with a token."""
    from cbr.serve.process import start_server as start

    return start(["--casebase", "default", "--casebase", str(casebase), "--token-file", str(token_file),
                  "--threads", str(threads)], cwd=folder, timeout=START_TIMEOUT)


def run_load(clients: int = 16, requests: int = 500, *, seed: int = 0, threads: int = 8,
             folder: Optional[Path] = None, max_growth_mb: float = 64.0) -> dict[str, Any]:
    """Run the load test (see the module docstring); returns the figures and ``ok``."""
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase

    with tempfile.TemporaryDirectory(prefix="cbr-load-") as tmp:
        root = Path(folder or tmp)
        casebase = copy_casebase("default", root / "loadcb")
        token_file = root / "token"
        token_file.write_text(TOKEN + "\n")
        hands = hands_text(40, seed, root)
        with CaseBase.open(casebase) as cb:
            before = cb.count()
        proc, url = start_server(root, casebase, token_file, threads)
        stopping = threading.Event()  # set when the run ends, however: the clients end without a word
        done = threading.Event()
        try:
            warm_retained = warm_up(url, hands)  # every path once: the policies built, the caches filled
            warm: dict[str, Any] = {}
            client_run(url, -1 - seed, 40, hands, warm, stopping)  # and 40 requests as the clients send them
            rss_before = rss_mb(proc.pid)
            outs: list[dict[str, Any]] = [{} for _ in range(clients)]
            workers = [threading.Thread(target=client_run,
                                        args=(url, seed * 1000 + i, requests, hands, outs[i], stopping))
                       for i in range(clients)]
            samples: list[tuple[float, float]] = []   # (seconds since the start, RSS MB)

            def sample() -> None:
                while not done.wait(0.25):
                    try:
                        samples.append((time.monotonic() - start, rss_mb(proc.pid)))
                    except (OSError, RuntimeError):
                        return

            start = time.monotonic()
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            seconds = time.monotonic() - start
            done.set()
            sampler.join()
            rss_after = rss_mb(proc.pid)
            alive = proc.poll() is None
        finally:
            stopping.set()  # before the server stops: a client's failure from here on is the stop
            done.set()
            stop_server(proc)
        with CaseBase.open(casebase) as cb:
            after = cb.count()
    statuses: Counter = Counter()
    wrong: list[str] = []
    client_errors: list[str] = []
    for o in [warm, *outs]:
        statuses.update(o.get("statuses", {}))
        wrong += o.get("wrong", [])
        if "error" in o:
            client_errors.append(o["error"])
    retained = warm_retained + sum(o.get("retained", 0) for o in [warm, *outs])
    errors_5xx = sum(n for s, n in statuses.items() if isinstance(s, int) and s >= 500)
    answered = sum(n for s, n in statuses.items() if isinstance(s, int))
    lost = before + retained - after
    growth = rss_after - rss_before
    # flat: from a quarter of the run to its end (the first requests fill the caches)
    quarter = next((mb for t, mb in samples if t >= seconds / 4), rss_before)
    late_growth = rss_after - quarter
    report = {
        "clients": clients, "requests_per_client": requests, "requests": clients * requests,
        "answered": answered,
        "seconds": round(seconds, 2), "requests_per_second": round(clients * requests / seconds, 1),
        "status": {str(k): v for k, v in sorted(statuses.items(), key=lambda kv: str(kv[0])) if isinstance(k, int)},
        "by_kind": {k: v for k, v in sorted((k, v) for k, v in statuses.items() if isinstance(k, str))},
        "errors_5xx": errors_5xx, "wrong_status": sum(n for k, n in statuses.items()
                                                      if isinstance(k, str) and k.endswith(":wrong")),
        "wrong_examples": wrong[:5], "retained_cases": retained, "cases_before": before, "cases_after": after,
        "lost_cases": lost, "rss_mb_before": round(rss_before, 1), "rss_mb_after": round(rss_after, 1),
        "rss_mb_at_quarter": round(quarter, 1), "rss_mb_max": round(max([rss_after, *(mb for _, mb in samples)]), 1),
        "rss_growth_mb": round(growth, 1), "rss_growth_after_quarter_mb": round(late_growth, 1),
        "max_growth_mb": max_growth_mb, "server_alive": alive, "client_errors": client_errors,
    }
    report["ok"] = (errors_5xx == 0 and report["wrong_status"] == 0 and lost == 0 and alive and not client_errors
                    and growth < max_growth_mb and late_growth < max_growth_mb / 2)
    return report


def main(argv: Optional[list[str]] = None) -> int:
    from native_guard import help_format, parse_args, positive_float, positive_int, require_modules, seed_int

    from casebases import description

    parser = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    parser.add_argument("--clients", type=positive_int, default=16, help="client threads sending at once")
    parser.add_argument("--requests", type=positive_int, default=500, help="requests per client")
    parser.add_argument("--threads", type=positive_int, default=8, help="the server's --threads")
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the requests drawn")
    parser.add_argument("--max-growth-mb", type=positive_float, default=64.0,
                        help="the server's memory growth allowed, MB (half of it after the first quarter)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of lines")
    args = parse_args(parser, argv)
    require_modules("load_serve.py", "sends its HTTP requests with", ("httpx",), "test")
    require_modules("load_serve.py", "starts cbr serve, which needs", ("fastapi", "uvicorn"), "serve")
    report = run_load(args.clients, args.requests, seed=args.seed, threads=args.threads,
                      max_growth_mb=args.max_growth_mb)
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        for k, v in report.items():
            print(f"{k:>20}: {v}")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    from native_guard import run

    run(main)
