"""The thesis' player model (issue 9, sections 1 and 10): definitions on hand-made hands,
real logs, the DuckDB model store (round trip, other processes, schema refusal, a killed
writer) and `cbr players build / inspect`."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from cbr.errors import CaseBaseError, GameError, ModelError
from cbr.game import preset
from cbr.logs.detect import read_logs
from cbr.logs.record import Action, HandRecord
from cbr.logs.replay import replay
from cbr.models.player_model import (
    BLUFF_HS,
    DEFAULTS,
    RECENT_HANDS,
    SLOW_PLAY_HS,
    PlayerHistory,
    PlayerModels,
    RoundStats,
    hand_strength,
)
from cbr.models.store import CASEBASE_STORE, SCHEMA_VERSION, ModelStore, build_store, casebase_store_path, inspect_store
from cli import app
from evaluator_ext.cards import parse_cards
from tests.conftest import shared_path

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()
HU = preset("holdem.limit.2p")   # position 0 = big blind (first after the flop), 1 = small blind (first pre-flop)


def cbr(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def hand(actions: list[tuple[int, int, str]], holes=(None, None), board: str = "", hand_id: str = "1",
         players=("ann", "bob")) -> HandRecord:
    return HandRecord(source="made", line=1, hand_id=hand_id, game=HU, players=players,
                      hole_cards=tuple(parse_cards(h) if h else None for h in holes),
                      board=parse_cards(board) if board else (),
                      actions=tuple(Action(s, p, k) for s, p, k in actions))


# A hand worked out by hand. bob (small blind, AdAc) limps, ann (big blind, 7c2d) raises,
# bob calls; flop AsKhQd: ann bets, bob raises, ann calls; turn Jc: ann checks, bob bets,
# ann folds.
WORKED = [(0, 1, "c"), (0, 0, "r"), (0, 1, "c"),
          (1, 0, "r"), (1, 1, "r"), (1, 0, "c"),
          (2, 0, "c"), (2, 1, "r"), (2, 0, "f")]
WORKED_HOLES = ("7c2d", "AdAc")
WORKED_BOARD = "AsKhQdJc"


def test_worked_hand_matches_the_thesis_formulas() -> None:
    # The hand strengths that decide bluffs and slow plays are far from the thresholds:
    seven_deuce, aces = parse_cards("7c2d"), parse_cards("AdAc")
    flop = parse_cards("AsKhQd")
    assert hand_strength(seven_deuce, ()) < BLUFF_HS            # pre-flop raise: a bluff
    assert hand_strength(seven_deuce, flop) < BLUFF_HS          # flop bet: a bluff
    assert hand_strength(aces, ()) > SLOW_PLAY_HS               # pre-flop limp and call: slow plays
    assert hand_strength(aces, flop) > SLOW_PLAY_HS             # (the flop raise is not one)
    models = PlayerModels()
    models.update(hand(WORKED, WORKED_HOLES, WORKED_BOARD))
    ann, bob = models.model("ann"), models.model("bob")
    # ann: r, r, c (facing a raise), c (check), f (facing a bet) -> 2 of 5 aggressive;
    # paid to continue twice (flop call, turn fold) and continued once;
    # 2 bluffs (pre-flop and flop raise with 7c2d), the checks/calls with a weak hand are no slow play.
    assert (ann.aggressiveness, ann.riskiness, ann.tightness) == (2 / 5, 1 / 2, 1 - 2 / 5)
    # bob: c (limp, 5 to call), c (calls the raise), r (flop raise, facing a bet), r (turn bet)
    # -> 2 of 4 aggressive; paid to continue 3 times, always continued;
    # slow plays: the limp and the call with AA (HS > 0.63) -> tightness 1 - 2/4.
    assert (bob.aggressiveness, bob.riskiness, bob.tightness) == (2 / 4, 3 / 3, 1 - 2 / 4)
    assert ann.hands == bob.hands == 1 and ann.defaults == bob.defaults == ()
    # one hand: recent == overall
    assert (bob.recent_aggressiveness, bob.recent_riskiness, bob.recent_tightness) == (0.5, 1.0, 0.5)


def test_tightness_only_from_hands_whose_cards_were_shown() -> None:
    models = PlayerModels()
    models.update(hand(WORKED, (None, "AdAc"), WORKED_BOARD))   # ann's cards not shown
    assert "tightness" in models.model("ann").defaults
    assert models.model("ann").tightness == DEFAULTS["tightness"]
    assert models.model("ann").measured["tightness"] == 0
    assert models.model("bob").tightness == 0.5


def test_overall_is_the_mean_of_per_hand_values_and_recent_the_last_ten() -> None:
    models = PlayerModels()
    # hand 1: bob raises, ann folds (bob: 1 action, aggressive). hand 2: bob calls, ann checks... to the river
    models.update(hand([(0, 1, "r"), (0, 0, "f")], hand_id="1"))
    models.update(hand([(0, 1, "c"), (0, 0, "c"), (1, 0, "c"), (1, 1, "c"), (2, 0, "c"), (2, 1, "c"),
                        (3, 0, "c"), (3, 1, "c")], board="2c3d4h5s9c", hand_id="2"))
    bob = models.model("bob")
    # per hand 1/1 and 0/4: the thesis' mean of rounds is 1/2 (the pooled ratio would be 1/5)
    assert bob.aggressiveness == (1.0 + 0.0) / 2
    # riskiness: hand 1 paid once (5 to call) and raised; hand 2 paid once (the limp) and called
    assert bob.riskiness == 1.0 and bob.measured["riskiness"] == 2
    # ann: hand 1 folded facing a raise (risk 0); hand 2 never paid: no riskiness round
    assert models.model("ann").riskiness == 0.0 and models.model("ann").measured["riskiness"] == 1

    # 12 more hands: 2 where bob folds at once, then 10 where he raises and ann folds
    models = PlayerModels()
    for i in range(2):
        models.update(hand([(0, 1, "f")], hand_id=f"f{i}"))
    for i in range(RECENT_HANDS):
        models.update(hand([(0, 1, "r"), (0, 0, "f")], hand_id=f"r{i}"))
    bob = models.model("bob")
    n = 2 + RECENT_HANDS
    assert bob.hands == n
    assert bob.aggressiveness == pytest.approx(RECENT_HANDS / n, abs=1e-15)
    assert bob.recent_aggressiveness == 1.0 and bob.recent_riskiness == 1.0
    assert bob.riskiness == pytest.approx(RECENT_HANDS / n, abs=1e-15)
    ann = models.model("ann")
    assert ann.hands == n and ann.measured["aggressiveness"] == RECENT_HANDS  # no action when bob folded
    assert ann.aggressiveness == 0.0 and ann.riskiness == 0.0


def test_current_aggressiveness_is_this_hand_per_street() -> None:
    h = PlayerHistory("p")
    assert h.model().current_aggressiveness is None
    h.observe_action(0, "r")
    h.observe_action(0, "c")
    assert h.current_aggressiveness == 0.5
    h.observe_action(1, "r")
    assert h.current_aggressiveness == (0.5 + 1.0) / 2    # mean over the streets so far
    h.add_round(RoundStats(actions=3, aggressive=2))
    assert h.current_aggressiveness is None                # a new hand starts empty


def test_unknown_players_get_the_documented_defaults(tmp_path: Path) -> None:
    m = PlayerModels().model("stranger")
    assert m.hands == 0 and set(m.defaults) == set(DEFAULTS)
    for a, v in DEFAULTS.items():
        assert getattr(m, a) == v and getattr(m, "recent_" + a) == v
    path = tmp_path / "p.duckdb"
    with ModelStore.open(path, create=True) as store:
        assert store.model("stranger") == m
    r = cbr("players", "inspect", "--store", path, "--player", "stranger", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)[0]
    assert data["hands"] == 0 and data["aggressiveness"] == DEFAULTS["aggressiveness"]
    assert sorted(data["defaults"]) == sorted(DEFAULTS)


# ---- real logs -----------------------------------------------------------------------
def test_acpc_log_aggressiveness_counted_from_the_records(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "3p.limit.h1000.r0.log")
    records = [r for r in read_logs([log]) if isinstance(r, HandRecord)]
    report = build_store([log], tmp_path / "p.duckdb")
    assert report.hands == len(records) and report.skipped == 0
    models = {m.player: m for m in inspect_store(tmp_path / "p.duckdb")}
    # an independent count from the records' actions: per hand bets+raises / actions, averaged
    per_player: dict[str, list[float]] = {}
    for rec in records:
        for pos, name in enumerate(rec.players):
            kinds = [a.kind for a in rec.actions if a.position == pos]
            if kinds:
                per_player.setdefault(name, []).append(kinds.count("r") / len(kinds))
    assert set(models) == set(per_player)
    for name, values in per_player.items():
        m = models[name]
        assert m.hands == len(records)
        assert m.measured["aggressiveness"] == len(values)
        assert m.aggressiveness == pytest.approx(sum(values) / len(values), rel=1e-12)
        assert m.recent_aggressiveness == pytest.approx(sum(values[-RECENT_HANDS:]) / RECENT_HANDS, rel=1e-12)
        assert 0.0 <= m.riskiness <= 1.0 and 0.0 <= m.tightness <= 1.0


def test_irc_logs_tightness_only_where_cards_were_shown(tmp_path: Path) -> None:
    logs = shared_path("irc")
    records = [r for r in read_logs([logs]) if isinstance(r, HandRecord)]
    report = build_store([logs], tmp_path / "irc.duckdb")
    assert report.hands > 0 and report.players > 0
    models = {m.player: m for m in inspect_store(tmp_path / "irc.duckdb")}
    assert len(models) == report.players
    # hands where a player made a decision with cards shown, from the hands that replay
    shown: dict[str, int] = {}
    for rec in records:
        try:
            deciders = {dp.position for dp in replay(rec, check_payoffs=False)}
        except GameError:
            continue
        for pos, name in enumerate(rec.players):
            if rec.hole_cards[pos] is not None and pos in deciders:
                shown[name] = shown.get(name, 0) + 1
    assert sum(shown.values()) > 0
    for name, m in models.items():
        assert m.measured["tightness"] == shown.get(name, 0), name
        assert ("tightness" in m.defaults) == (m.measured["tightness"] == 0)


# ---- the store ----------------------------------------------------------------------------
def test_store_round_trip(tmp_path: Path) -> None:
    models = PlayerModels()
    for i in range(RECENT_HANDS + 3):
        models.update(hand(WORKED, WORKED_HOLES, WORKED_BOARD, hand_id=str(i)))
    models.update(hand([(0, 1, "f")], hand_id="x", players=("ann", "cid")))
    path = tmp_path / "p.duckdb"
    with ModelStore.open(path, create=True) as store:
        assert store.save(models) == 3
    with ModelStore.open(path, read_only=True) as store:
        back = store.load()
        assert store.players() == ["ann", "bob", "cid"]
        assert store.meta()["schema_version"] == str(SCHEMA_VERSION)
    for name, h in models.histories.items():
        assert back.histories[name].to_row() == h.to_row()
        assert back.model(name) == models.model(name)
    assert len(back.histories["bob"].recent["aggressiveness"]) == RECENT_HANDS


def test_build_adds_to_the_store_and_reset_empties_it(tmp_path: Path) -> None:
    # Two logs of the same two players (the real log cut in halves): the second build adds
    # to the histories. (Issue 16: building the *same* log twice used to double every count
    # here; a log already read is now skipped, see test_model_store_sources.py.)
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    lines = log.read_text().splitlines(keepends=True)
    head = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if ln.startswith("STATE:")]
    halves = [tmp_path / "first.log", tmp_path / "second.log"]
    halves[0].write_text("".join(head + body[:len(body) // 2]))
    halves[1].write_text("".join(head + body[len(body) // 2:]))
    path = tmp_path / "p.duckdb"
    first = build_store([halves[0]], path)
    again = build_store([halves[1]], path)
    assert [m.hands for m in inspect_store(path)] == [first.hands + again.hands] * 2
    assert again.players_in_store == 2
    build_store([log], path, reset=True)
    assert [m.hands for m in inspect_store(path)] == [first.hands + again.hands] * 2 == [len(body)] * 2


_WRITER = r"""
import sys
from cbr.models.player_model import PlayerModels, RoundStats
from cbr.models.store import ModelStore
path, players = sys.argv[1], int(sys.argv[2])
with ModelStore.open(path, create=True) as store:
    models = store.load()
    for i in range(1, 10**9):
        for p in range(players):
            models.history(f"p{p}").add_round(RoundStats(actions=2, aggressive=p % 3 and 1))
        store.save(models)
        print(i, flush=True)
"""


def _read_hands(path: Path) -> dict[str, int]:
    code = ("import sys, json; from cbr.models.store import ModelStore\n"
            "with ModelStore.open(sys.argv[1], read_only=True) as s:\n"
            "    print(json.dumps({n: h.hands for n, h in s.load().histories.items()}))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60,
                         cwd=REPO)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_persistence_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "p.duckdb"
    code = ("import sys; from cbr.models.store import build_store\n"
            "print(build_store([sys.argv[1]], sys.argv[2]).hands)")
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    out = subprocess.run([sys.executable, "-c", code, str(log), str(path)], capture_output=True, text=True,
                         timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    hands = int(out.stdout)
    assert _read_hands(path) == {m.player: hands for m in inspect_store(path)}
    # a bot with the store learns in one process and remembers in the next
    bots = tmp_path / "bots.duckdb"
    for match in (1, 2):
        r = subprocess.run([sys.executable, "-m", "cli", "match", "--players", f"poki-wt:store={bots},lag",
                            "--hands", "12", "--seed", str(match)], capture_output=True, text=True, timeout=300,
                           cwd=REPO)
        assert r.returncode == 0, r.stderr
        assert _read_hands(bots) == {"lag": 12 * match}


def test_a_killed_writer_never_leaves_a_store_that_fails_to_open(tmp_path: Path) -> None:
    players = 20
    for attempt, delay in enumerate((0.0, "creating", None, None)):
        path = tmp_path / f"k{attempt}.duckdb"
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path), str(players)], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            committed = 0
            if delay is None:   # kill in the middle of the writes, after some commits
                for _ in range(5 + 7 * attempt):
                    line = proc.stdout.readline()
                    assert line, proc.stderr.read()
                    committed = int(line)
            elif delay == "creating":  # kill while the new store is made under its temporary name
                deadline = time.monotonic() + 60
                while not list(tmp_path.glob(f".{path.name}.*")) and proc.poll() is None:
                    assert time.monotonic() < deadline
                    time.sleep(0.0005)
            else:               # kill early: while the interpreter starts
                time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL
        if not path.exists():
            assert delay is not None   # killed before the store was complete: no store at all
            continue
        hands = _read_hands(path)   # opens, in another process
        if hands:
            assert len(hands) == players and len(set(hands.values())) == 1, hands  # one transaction: all or none
        assert (hands["p0"] if hands else 0) >= committed


def test_other_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.duckdb"
    ModelStore.open(path, create=True).close()
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(ModelError, match="schema version 99; this engine reads version 1"):
        ModelStore.open(path)
    r = cbr("players", "inspect", "--store", path)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "schema version 99" in r.stderr


def test_not_a_model_store_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.duckdb"
    text.write_text("hello\n")
    with pytest.raises(ModelError, match="not a model store: not a DuckDB database file") as err:
        ModelStore.open(text)
    assert "IO Error" not in str(err.value) and "DuckDB cannot" not in str(err.value)  # the project's words
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE t (x INT)")
    con.close()
    with pytest.raises(ModelError, match="not a model store"):
        ModelStore.open(other)
    with pytest.raises(ModelError, match="no model store at"):
        ModelStore.open(tmp_path / "missing.duckdb")
    assert issubclass(ModelError, ValueError)


# ---- the CLI ----------------------------------------------------------------------------
def test_cli_build_and_inspect(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    path = tmp_path / "p.duckdb"
    r = cbr("players", "build", log, "--store", path, "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["hands"] == 1000 and report["players_in_store"] == 2
    r = cbr("players", "inspect", "--store", path, "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [row["hands"] for row in rows] == [1000, 1000]
    r = cbr("players", "inspect", "--store", path)
    assert r.exit_code == 0 and "2 players in" in r.stdout
    name = rows[0]["player"]
    r = cbr("players", "inspect", "--store", path, "--player", name)
    assert r.exit_code == 0 and f"{name}: 1,000 hands" in r.stdout


def test_cli_build_lists_files_not_read_and_hands_skipped(tmp_path: Path) -> None:
    # `cbr players build` says what it did not read, as `cbr build` does: file:line and why
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a log\n")
    r = cbr("players", "build", notes, log, "--store", tmp_path / "p.duckdb")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[1:] == ["1 file not read:", f"  {notes}: not a log any parser recognises "
                                         f"(formats: acpc, irc, phh, pokerstars); skipped"]
    r = cbr("players", "build", shared_path("irc"), "--store", tmp_path / "irc.duckdb", "--max-issues", "2")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("3,986 hands read (14 skipped)") and lines[1] == "14 hands skipped:"
    assert lines[2].startswith(f"  {shared_path('irc')}") and ":821: (hand 797268780): Stewie raises" in lines[2]
    assert len(lines) == 5 and lines[4] == "  ... and 12 more (--max-issues, --json)"
    report = json.loads(cbr("players", "build", notes, log, "--store", tmp_path / "q.duckdb", "--json").stdout)
    assert report["hands"] == 1000 and report["skipped"] == 0 and report["files_skipped"] == 1
    assert report["issues"] == [f"{notes}: not a log any parser recognises (formats: acpc, irc, phh, pokerstars); "
                                f"skipped"]


def test_cli_build_of_nothing_readable_fails_with_the_reason_and_leaves_no_store(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a log\n")
    store = tmp_path / "p.duckdb"
    for extra in ((), ("--json",), ("--reset",)):
        r = cbr("players", "build", notes, "--store", store, *extra)
        assert r.exit_code == 1 and r.stdout == ""
        assert r.stderr == (f"error: no hand could be read from {notes}: {notes}: not a log any parser "
                            f"recognises (formats: acpc, irc, phh, pokerstars); skipped\n")
        assert not store.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    (tmp_path / "empty").mkdir()
    r = cbr("players", "build", tmp_path / "empty", notes, "--store", store)
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and not store.exists()
    r = cbr("players", "build", tmp_path / "empty", "--store", store)
    assert r.stderr == f"error: no hand could be read from {tmp_path / 'empty'} (no log file there)\n"
    # a store that existed is left as it was, even with --reset
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    assert cbr("players", "build", log, "--store", store).exit_code == 0
    r = cbr("players", "build", notes, "--store", store, "--reset")
    assert r.exit_code == 1 and "no hand could be read" in r.stderr
    assert [m.hands for m in inspect_store(store)] == [1000, 1000]


def test_cli_help_says_what_each_players_command_does_with_its_store() -> None:
    build = cbr("players", "build", "--help").stdout
    inspect = cbr("players", "inspect", "--help").stdout
    assert "Fill players.duckdb inside this case base" in build and "Keep the models" not in build
    assert "Read players.duckdb inside this case base" in inspect
    assert "Keep the models" not in inspect and "Fill" not in inspect and "made when missing" not in inspect
    for text in (build, inspect):
        assert "shipped default" not in text and "default and expert" in " ".join(text.split())


def test_cli_casebase_store(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    cb = tmp_path / "mycb"
    cb.mkdir()
    r = cbr("players", "build", log, "--casebase", cb)
    assert r.exit_code == 0, r.output
    assert (cb / CASEBASE_STORE).is_file()
    assert casebase_store_path(cb) == cb / CASEBASE_STORE
    r = cbr("players", "inspect", "--casebase", cb, "--json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)) == 2
    # the shipped default case base is read-only: refused, pointing at --store
    for args in (["players", "inspect", "--casebase", "default"], ["players", "build", log, "--casebase", "default"]):
        r = cbr(*args)
        assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "--store" in r.stderr
    with pytest.raises(CaseBaseError):
        casebase_store_path(tmp_path / "no-such-casebase")


def test_cli_usage_errors(tmp_path: Path) -> None:
    r = cbr("players", "inspect")
    assert r.exit_code == 2
    r = cbr("players", "inspect", "--store", tmp_path / "a", "--casebase", tmp_path)
    assert r.exit_code == 2
    r = cbr("players", "inspect", "--store", tmp_path / "missing.duckdb")
    assert r.exit_code == 1 and "no model store at" in r.stderr


def test_a_store_in_use_by_another_process_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "p.duckdb"
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    with ModelStore.open(path, create=True):
        r = subprocess.run([sys.executable, "-m", "cli", "players", "build", str(log), "--store", str(path)],
                           capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "in use by another process" in r.stderr
    r = cbr("players", "build", tmp_path / "p.duckdb", "--store", tmp_path / "q.duckdb")
    assert r.exit_code == 1 and "no hand could be read" in r.stderr
