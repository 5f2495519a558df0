"""Our ACPC client against the ACPC reference dealer (a binary you built yourself).

Run:  python3 bench/acpc_reference_interop.py --dealer PATH/TO/dealer
          [--game holdem.limit.2p | holdem.limit.3p | FILE.game] [--hands 1000] [--seed 7]
          [--policies ehs,call] [--fixed-seats] [--dealer-args '-S'] [--workdir DIR] [--json]

The reference dealer (``dealer`` of the University of Alberta's ``project_acpc_server``) is not
part of this repository and nothing of it is copied here: build it from its own sources and
pass its path. This script

1. writes the game as an ACPC ``.game`` file with our own writer (:meth:`GameDef.to_acpc_game`,
   named as the reference server names it, e.g. ``holdem.limit.2p.reverse_blinds.game``), or
   uses the ``.game`` file you give;
2. starts ``dealer NAME GAMEFILE HANDS SEED seat1 seat2 ...`` (random ports, read from the first
   line it prints), then one ``cbr play --acpc 127.0.0.1:PORT --policy SPEC --game GAMEFILE
   --json`` process per seat (``--policies``: one policy spec per seat, e.g. ``cbr,ehs``);
3. checks, and exits 1 on any disagreement: every process exits 0; each client played every
   hand; for each hand, the client's position, betting, cards and chips won equal the dealer's
   ``STATE`` log line (values in position order, names rotating with the button unless
   ``--fixed-seats``); each client's total equals the dealer's ``SCORE`` for its seat; the dealer
   complained of nothing (``WARNING``/``ERROR`` lines: an invalid or malformed action, which it
   would have turned into a call, an answer to another state, a timeout); the dealer's log reads
   with :class:`cbr.logs.acpc.AcpcParser` with 0 skipped hands and every hand replays through our
   rules engine with the logged payoffs.
4. prints the match time, hands per second and each seat's response times (from the dealer's
   ``TO``/``FROM`` timestamps on standard error).

With ``--retain-into DIR``, the first ``cbr`` seat's client runs with ``--retain-into DIR``
(a copy of its case base, made on first use), and the script also checks that the case base
kept exactly the decisions it should: every action of that seat, and every action of the
players whose cards were shown at a showdown, counted from the dealer's log.

The other direction, ``--reference-sources DIR`` (instead of ``--dealer``): OUR dealer
(``cbr serve-dealer``) against clients built on the reference's own state code.
``bench/acpc_reference_client.c`` (ours) is compiled with ``DIR/game.c``, ``DIR/rng.c`` and
any other ``.c`` file of ``DIR`` without a ``main`` (your build of the reference sources). Each
client parses every ``MATCHSTATE`` our dealer sends with the reference's ``readMatchState``,
requires the whole line to be read and the reference's ``printMatchState`` to print it back
the same, answers with random valid actions printed by the reference's ``printAction``, and
sums the reference's ``valueOfState`` for its seat. The script checks that every client
exits 0 having seen every hand, that those totals equal our dealer's ``SCORE``, and that our
dealer's log reads and replays with our parser.

Not part of the test suite (the binary is yours to build); its pure parts are tested in
``tests/acpc/test_acpc_reference_interop.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.acpc.client import PlayedHand  # noqa: E402
from cbr.build.parent import stops_with_parent  # noqa: E402
from cbr.errors import counted  # noqa: E402
from cbr.game.gamedef import PRESETS, GameDef  # noqa: E402
from experiments.common import description, help_format, policy_specs, positive_float, positive_int, seed_int  # noqa: E402

#: ACPC file names of our presets (the reference server's names).
GAME_FILE_NAMES = {
    "holdem.limit.2p": "holdem.limit.2p.reverse_blinds.game",
    "holdem.limit.3p": "holdem.limit.3p.game",
}
#: Dealer messages that mean a seat misbehaved (the reference dealer carries on after most).
COMPLAINTS = re.compile(r"^(WARNING|ERROR):")
_STAMPED = re.compile(r"^(TO|FROM) (\d+) at (\d+)\.(\d+) (.*)$")
#: Slack for values the dealer prints with six decimals.
EPS = 2e-6


@dataclass(frozen=True)
class LoggedHand:
    """One ``STATE`` line of the reference dealer's log: values and names in position order."""

    hand_number: int
    betting: str
    cards: str
    values: tuple[float, ...]
    names: tuple[str, ...]


def parse_ports(line: str, n_players: int) -> list[int]:
    """The listening ports the dealer prints first, one per seat.

    >>> parse_ports("29101 29102", 2)
    [29101, 29102]
    """
    fields = line.split()
    if len(fields) != n_players or not all(f.isdigit() for f in fields):
        raise ValueError(f"expected {n_players} port numbers from the dealer, got {line!r}")
    return [int(f) for f in fields]


def parse_state_line(line: str) -> LoggedHand:
    """A log line ``STATE:<hand>:<betting>:<cards>:<values>:<names>``.

    >>> parse_state_line("STATE:1:cc/crc/crc/cc:Jc6c|7h5d/As5cAh/Qh/Tc:-40|40:Bob|Alice").values
    (-40.0, 40.0)
    """
    parts = line.rstrip("\r\n").split(":")
    if len(parts) != 6 or parts[0] != "STATE":
        raise ValueError(f"not a STATE line: {line!r}")
    _, hand, betting, cards, values, names = parts
    return LoggedHand(int(hand), betting, cards, tuple(float(v) for v in values.split("|")),
                      tuple(names.split("|")))


def parse_score(line: str) -> dict[str, float]:
    """The final ``SCORE:<values>:<names>`` line (seat order) as ``{name: chips}``.

    >>> parse_score("SCORE:2210|-2210:Alice|Bob")
    {'Alice': 2210.0, 'Bob': -2210.0}
    """
    parts = line.strip().split(":")
    if len(parts) != 3 or parts[0] != "SCORE":
        raise ValueError(f"not a SCORE line: {line!r}")
    values = [float(v) for v in parts[1].split("|")]
    names = parts[2].split("|")
    if len(values) != len(names):
        raise ValueError(f"SCORE line with {counted(len(values), 'value')} for {counted(len(names), 'name')}: {line!r}")
    return dict(zip(names, values))


def read_log(lines: Iterable[str]) -> tuple[dict[int, LoggedHand], Optional[dict[str, float]]]:
    """The hands (by number) and the final score of a reference dealer log; comments skipped."""
    hands: dict[int, LoggedHand] = {}
    score = None
    for line in lines:
        if line.startswith("STATE:"):
            h = parse_state_line(line)
            hands[h.hand_number] = h
        elif line.startswith("SCORE:"):
            score = parse_score(line)
    return hands, score


def complaints(stderr_lines: Iterable[str]) -> list[str]:
    """The dealer's ``WARNING``/``ERROR`` lines (e.g. ``WARNING: invalid action, changed to call``)."""
    return [line.rstrip() for line in stderr_lines if COMPLAINTS.match(line)]


def response_times(stderr_lines: Iterable[str]) -> dict[int, list[float]]:
    """Seconds from the dealer's last message to a seat until that seat's answer, per seat
    (1-based, as the dealer numbers them), from its ``TO n at S.U`` / ``FROM n at S.U`` lines.

    >>> response_times(["TO 1 at 10.000100 MATCHSTATE:0:0::AsKs|", "FROM 1 at 10.002100 x:c"])
    {1: [0.002]}
    """
    sent: dict[int, float] = {}
    out: dict[int, list[float]] = {}
    for line in stderr_lines:
        m = _STAMPED.match(line)
        if m is None:
            continue
        seat, t = int(m.group(2)), int(m.group(3)) + int(m.group(4)) / 1e6
        if m.group(1) == "TO":
            sent[seat] = t
        elif seat in sent:
            out.setdefault(seat, []).append(round(t - sent[seat], 6))
    return out


def _holes_and_board(cards: str) -> tuple[list[str], str]:
    holes, _, board = cards.partition("/")
    return holes.split("|"), board


def compare(seat_names: Sequence[str], played: dict[str, Sequence[PlayedHand]],
            logged: dict[int, LoggedHand], score: Optional[dict[str, float]], hands: int) -> list[str]:
    """Every disagreement between our clients' hands (``played[name]``, as ``cbr play --json``
    reports them) and the dealer's log and score; empty when they agree.

    >>> log = {0: parse_state_line("STATE:0:cf:AsAh|KdKc:10|-10:A|B")}
    >>> compare(["A", "B"], {"A": [PlayedHand(1, 0, 0, "cf", "AsAh|", 10.0)],
    ...                      "B": [PlayedHand(1, 0, 1, "cf", "|KdKc", -5.0)]}, log, {"A": 10, "B": -10}, 1)
    ['B hand 0: won -5 but the dealer logged -10', 'B: total -5 but the dealer scored -10']
    """
    problems: list[str] = []
    if len(logged) != hands:
        problems.append(f"the dealer logged {counted(len(logged), 'hand')}, not {hands}")
    if score is None:
        problems.append("the dealer wrote no SCORE line")
    for name in seat_names:
        mine = played.get(name)
        if mine is None:
            problems.append(f"{name}: no result from our client")
            continue
        if len(mine) != hands:
            problems.append(f"{name}: our client finished {counted(len(mine), 'hand')}, not {hands}")
        total = 0.0
        for h in mine:
            total += h.won
            log = logged.get(h.acpc_hand_number)  # the dealer's number of the hand (ours count from 1)
            where = f"{name} hand {h.acpc_hand_number}"
            if log is None:
                problems.append(f"{where}: not in the dealer's log")
                continue
            if name not in log.names:
                problems.append(f"{where}: the log seats {list(log.names)}")
                continue
            p = log.names.index(name)
            if h.position != p:
                problems.append(f"{where}: our client played position {h.position}, the log has it at {p}")
            if h.betting != log.betting:
                problems.append(f"{where}: betting {h.betting!r}, the log has {log.betting!r}")
            ours_holes, ours_board = _holes_and_board(h.cards)
            log_holes, log_board = _holes_and_board(log.cards)
            if ours_board != log_board or len(ours_holes) != len(log_holes) \
                    or ours_holes[h.position] != log_holes[p] \
                    or any(o and o != g for o, g in zip(ours_holes, log_holes)):
                problems.append(f"{where}: cards {h.cards!r}, the log has {log.cards!r}")
            if abs(h.won - log.values[p]) > EPS:
                problems.append(f"{where}: won {h.won:g} but the dealer logged {log.values[p]:g}")
        if score is not None and name in score and abs(total - score[name]) > EPS * max(1, hands):
            problems.append(f"{name}: total {total:g} but the dealer scored {score[name]:g}")
    return problems


def check_log_with_our_parser(path: Path) -> list[str]:
    """Problems reading the dealer's log with our ACPC parser and replaying every hand."""
    from cbr.logs.acpc import AcpcParser
    from cbr.logs.record import ParseIssue
    from cbr.logs.replay import replay_hand

    problems: list[str] = []
    n = 0
    for item in AcpcParser().parse(str(path)):
        if isinstance(item, ParseIssue):
            problems.append(f"our parser skipped {item}")
            continue
        n += 1
        try:
            replay_hand(item, check_payoffs=True)
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            problems.append(f"our replay of hand {item.hand_id}: {exc}")
    if n == 0:
        problems.append("our parser read no hand from the dealer's log")
    return problems


def expected_retained(log_path: Path, name: str) -> int:
    """Cases a client retaining for seat ``name`` must keep from the dealer's log: every action
    of that seat, and every action of the players shown at a showdown."""
    from cbr.logs.acpc import AcpcParser
    from cbr.logs.record import ParseIssue
    from cbr.logs.replay import replay
    from cbr.play.retention import shown_positions

    total = 0
    for record in AcpcParser().parse(str(log_path)):
        if isinstance(record, ParseIssue):
            continue
        wanted = shown_positions(record) | {record.players.index(name)}
        total += sum(1 for dp in replay(record, check_payoffs=False)
                     if dp.position in wanted and dp.action in ("f", "c", "r"))
    return total


def check_retained(path: Path, log_path: Path, name: str) -> list[str]:
    """Problems with what the retaining client kept in ``path`` (see :func:`expected_retained`)."""
    from cbr.store import CaseBase

    want = expected_retained(log_path, name)
    with CaseBase.open(path) as cb:
        got = cb.sql("SELECT count(*) FROM cases WHERE source = 'retained'").fetchone()[0]
        bad = cb.sql("SELECT count(*) FROM cases WHERE source = 'retained' AND "
                     "(match_id IS NULL OR retained_at IS NULL OR outcome IS NULL)").fetchone()[0]
    problems = []
    if got != want:
        problems.append(f"{name}: retained {counted(got, 'case')} in {path}, the dealer's log calls for {want}")
    if bad:
        problems.append(f"{name}: {bad} retained cases lack their match id, time or outcome")
    return problems


def build_reference_client(sources: Path, workdir: Path) -> Path:
    """Compile ``bench/acpc_reference_client.c`` with the reference's state code from ``sources``."""
    own = Path(__file__).resolve().parent / "acpc_reference_client.c"
    if not (sources / "game.c").exists() or not (sources / "game.h").exists():
        raise SystemExit(f"error: {sources} has no game.c / game.h of the reference server")
    main_re = re.compile(r"\bint\s+main\s*\(")
    objs = [str(c) for c in sorted(sources.glob("*.c")) if not main_re.search(c.read_text(errors="replace"))]
    exe = workdir / "reference_client"
    cmd = ["gcc", "-O2", "-I", str(sources), "-o", str(exe), str(own), *objs, "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: cannot build the reference client: {done.stderr.strip()[-500:]}")
    return exe


def end_all(procs: list[subprocess.Popen]) -> None:
    """Kill (and reap) every process of ``procs`` still running."""
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()


def run_our_dealer(args: argparse.Namespace) -> dict:
    """Our ``cbr serve-dealer`` against clients built on the reference's state code."""
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="acpc_interop_")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    exe = build_reference_client(Path(args.reference_sources).resolve(), workdir)
    gpath, game = game_file(args.game, workdir)
    n = game.n_players
    log_path = workdir / "ours.log"
    dealer_cmd = cbr_command() + ["serve-dealer", "--players", ",".join(["remote"] * n), "--hands",
                                  str(args.hands), "--seed", str(args.seed), "--game", str(gpath),
                                  "--log", str(log_path), "--overwrite", "--timeout", str(args.timeout)]
    procs: list[subprocess.Popen] = []
    started = time.monotonic()
    try:
        dealer = subprocess.Popen(dealer_cmd, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=open(workdir / "dealer.stderr", "w"), text=True,
                                  preexec_fn=stops_with_parent(os.getpid()))
        procs.append(dealer)
        assert dealer.stdout is not None
        first = dealer.stdout.readline()
        m = re.match(r"listening on [^:]+:(\d+)", first)
        if not m:
            dealer.wait(timeout=10)
            raise SystemExit(f"error: our dealer did not start: {first!r} "
                             f"{(workdir / 'dealer.stderr').read_text().strip()[-300:]}")
        clients = []
        for i in range(n):
            clients.append(subprocess.Popen([str(exe), str(gpath), "127.0.0.1", m.group(1), str(args.seed + i)],
                                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True,
                                            preexec_fn=stops_with_parent(os.getpid())))
            procs.append(clients[-1])
            time.sleep(0.2)          # seats are filled in the order clients connect
        deadline = started + args.limit
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        end_all(procs)
    seconds = time.monotonic() - started
    dealer_out = dealer.stdout.read() if dealer.stdout else ""
    problems: list[str] = []
    if dealer.returncode != 0:
        problems.append(f"our dealer exited with {dealer.returncode}: "
                        f"{(workdir / 'dealer.stderr').read_text().strip()[-300:]}")
    totals: list[float] = []
    for i, c in enumerate(clients):
        out, err = c.communicate()
        fields = out.split()
        if c.returncode != 0 or len(fields) != 6:
            problems.append(f"reference client {i + 1} exited with {c.returncode}: {err.strip()[-300:]}")
            continue
        if int(fields[1]) != args.hands:
            problems.append(f"reference client {i + 1} saw {fields[1]} hands, not {args.hands}")
        totals.append(float(fields[5]))
    score_line = next((ln for ln in dealer_out.splitlines() if ln.startswith("SCORE:")), None)
    if score_line is None:
        problems.append("our dealer printed no SCORE line")
    elif len(totals) == n:
        values = [float(v) for v in score_line.split(":")[1].split("|")]
        for i, (mine, theirs) in enumerate(zip(values, totals)):
            if abs(mine - theirs) > EPS * max(1, args.hands):
                problems.append(f"seat {i + 1}: our dealer scored {mine:g}, the reference's valueOfState sums to {theirs:g}")
    if log_path.exists():
        problems += check_log_with_our_parser(log_path)
    else:
        problems.append("our dealer wrote no log")
    return {"dealer": dealer_cmd, "workdir": str(workdir), "game": game.name, "hands": args.hands,
            "seconds": round(seconds, 3), "hands_per_second": round(args.hands / seconds, 1),
            "score": score_line, "reference_totals": totals, "dealer_stdout": score_line or "",
            "latency": {}, "problems": problems}


def cbr_command() -> list[str]:
    script = Path(sys.executable).parent / "cbr"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"]


def game_file(game: str, workdir: Path) -> tuple[Path, GameDef]:
    """The ``.game`` file the dealer and our clients read, and its game."""
    if game.endswith(".game"):
        path = Path(game).resolve()
        try:
            return path, GameDef.from_acpc_game(path.read_text(), path.stem)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"error: --game {game}: {exc}") from None
    if game not in GAME_FILE_NAMES:
        raise SystemExit(f"--game: one of {', '.join(GAME_FILE_NAMES)} or a .game file")
    path = workdir / GAME_FILE_NAMES[game]
    path.write_text(PRESETS[game].to_acpc_game())
    return path, PRESETS[game]


def run(args: argparse.Namespace) -> dict:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="acpc_interop_")).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    gpath, game = game_file(args.game, workdir)
    n = game.n_players
    specs = args.policies
    if len(specs) != n:
        raise SystemExit(f"--policies: {n} policy specs for the {n}-player game, got {len(specs)}")
    names = [f"s{i + 1}_{re.sub(r'[^A-Za-z0-9]+', '-', s)}" for i, s in enumerate(specs)]
    retain_seat = None
    if args.retain_into:
        retain_seat = next((i for i, s in enumerate(specs) if s.split(":")[0] == "cbr"), None)
        if retain_seat is None:
            raise SystemExit("--retain-into needs a cbr seat in --policies")
    dealer_cmd = [str(Path(args.dealer).resolve()), "interop", str(gpath), str(args.hands), str(args.seed),
                  *names] + (["-f"] if args.fixed_seats else []) + shlex.split(args.dealer_args)
    procs: list[subprocess.Popen] = []
    started = time.monotonic()
    err_path = workdir / "dealer.stderr"
    try:
        with open(err_path, "w") as err:
            dealer = subprocess.Popen(dealer_cmd, cwd=workdir, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.PIPE, stderr=err, text=True,
                                      preexec_fn=stops_with_parent(os.getpid()))
        procs.append(dealer)
        assert dealer.stdout is not None
        try:
            ports = parse_ports(dealer.stdout.readline(), n)
        except ValueError as exc:
            dealer.wait(timeout=10)
            raise SystemExit(f"error: the dealer did not start ({exc}): {err_path.read_text().strip()[-300:]}")
        clients = []
        for i, (spec, port) in enumerate(zip(specs, ports)):
            out = open(workdir / f"client{i + 1}.json", "w")
            cerr = open(workdir / f"client{i + 1}.stderr", "w")
            extra = ["--retain-into", str(Path(args.retain_into).resolve())] if i == retain_seat else []
            clients.append(subprocess.Popen(
                cbr_command() + ["play", "--acpc", f"127.0.0.1:{port}", "--policy", spec, "--game", str(gpath),
                                 "--seed", str(args.seed + i), "--timeout", str(args.timeout), "--json", *extra],
                stdin=subprocess.DEVNULL, stdout=out, stderr=cerr, text=True,
                preexec_fn=stops_with_parent(os.getpid())))
            procs.append(clients[-1])
        deadline = started + args.limit
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline or any(c.returncode for c in clients if c.poll() is not None):
                break        # too slow, or a client gave up: the dealer would wait for it forever
            time.sleep(0.05)
        end_all(procs)
        dealer_out = dealer.stdout.read()
    finally:
        end_all(procs)
    seconds = time.monotonic() - started
    problems: list[str] = []
    def ended(code: int) -> str:
        return "was stopped (another process failed or --limit passed)" if code < 0 else f"exited with {code}"

    if dealer.returncode != 0:
        problems.append(f"the dealer {ended(dealer.returncode)}")
    played: dict[str, list[PlayedHand]] = {}
    for i, (name, proc) in enumerate(zip(names, clients)):
        if proc.returncode != 0:
            msg = (workdir / f"client{i + 1}.stderr").read_text().strip()
            problems.append(f"{name}: our client {ended(proc.returncode)}" + (f": {msg[-300:]}" if msg else ""))
            continue
        result = json.loads((workdir / f"client{i + 1}.json").read_text())
        played[name] = [PlayedHand(**h) for h in result["played"]]
    stderr_lines = err_path.read_text().splitlines()
    problems += [f"the dealer said: {c}" for c in complaints(stderr_lines)]
    log_path = workdir / "interop.log"
    score = None
    if not problems:       # every process finished: compare what each side saw
        logged, score = read_log(log_path.read_text().splitlines()) if log_path.exists() else ({}, None)
        problems += compare(names, played, logged, score, args.hands)
        if log_path.exists():
            problems += check_log_with_our_parser(log_path)
            if retain_seat is not None:
                problems += check_retained(Path(args.retain_into), log_path, names[retain_seat])
    times = response_times(stderr_lines)
    latency = {names[s - 1]: {"answers": len(v), "p50_ms": 1000 * statistics.median(v),
                               "p99_ms": 1000 * sorted(v)[int(0.99 * (len(v) - 1))], "max_ms": 1000 * max(v)}
               for s, v in sorted(times.items()) if v}
    return {"dealer": dealer_cmd, "workdir": str(workdir), "game": game.name, "hands": args.hands,
            "seconds": round(seconds, 3), "hands_per_second": round(args.hands / seconds, 1),
            "score": score, "dealer_stdout": dealer_out.strip(), "latency": latency,
            "problems": problems}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--dealer", help="the reference dealer binary you built: our clients play at it")
    who.add_argument("--reference-sources", metavar="DIR",
                     help="your reference server sources (game.c, game.h, rng.c, ...): clients built on them "
                          "play at OUR dealer")
    ap.add_argument("--retain-into", metavar="DIR",
                    help="the first cbr seat's client retains into DIR; check what it kept against the log")
    ap.add_argument("--game", default="holdem.limit.2p", help="holdem.limit.2p, holdem.limit.3p or a .game file")
    ap.add_argument("--hands", type=positive_int, default=1000, help="hands the dealer deals")
    ap.add_argument("--seed", type=seed_int, default=7, help="the dealer's deal seed (client i plays with seed + i)")
    ap.add_argument("--policies", type=policy_specs(), default="ehs,call", help="one policy spec per seat, comma-separated")
    ap.add_argument("--fixed-seats", action="store_true", help="pass -f: no seat rotation")
    ap.add_argument("--dealer-args", default="", help="more dealer options, e.g. '-S' (show folded cards)")
    ap.add_argument("--timeout", type=positive_float, default=60.0, help="our clients' --timeout (seconds per line)")
    ap.add_argument("--limit", type=positive_float, default=3600.0, help="seconds before every process is killed")
    ap.add_argument("--workdir", help="where the game file, log and outputs go (default: a new temp dir)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON instead of lines")
    from native_guard import parse_args

    args = parse_args(ap, argv)
    if args.dealer and not os.access(args.dealer, os.X_OK):
        print(f"error: {args.dealer} is not an executable dealer binary", file=sys.stderr)
        return 2
    report = run(args) if args.dealer else run_our_dealer(args)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{counted(report['hands'], 'hand')} of {report['game']} in {report['seconds']:.1f} s "
              f"({report['hands_per_second']:.0f} hands/s); dealer: {report['dealer_stdout']}")
        for name, lat in report["latency"].items():
            print(f"  {name}: {lat['answers']} answers, p50 {lat['p50_ms']:.2f} ms, "
                  f"p99 {lat['p99_ms']:.2f} ms, max {lat['max_ms']:.2f} ms")
        print(f"  files: {report['workdir']}")
        for p in report["problems"][:50]:
            print(f"DISAGREEMENT: {p}")
        print("OK: every hand agrees" if not report["problems"] else counted(len(report['problems']), 'problem'))
    return 1 if report["problems"] else 0


if __name__ == "__main__":
    import native_guard  # its run, not this script's own run()

    native_guard.run(main)
