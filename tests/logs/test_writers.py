"""Match logs: ACPC and PHH writers, read back by our parsers and by PokerKit."""
from __future__ import annotations

import json
import tomllib

import pytest

from cbr.errors import LogFormatError
from cbr.game import GameDef, preset
from cbr.logs.acpc import AcpcLogWriter, acpc_state_line
from cbr.logs.phh import PhhLogWriter, phh_player_order
from cbr.logs.record import Action, HandRecord, ParseIssue
from cbr.logs.writers import open_log
from cbr.play.match import run_match
from tests.conftest import require_module


class Tee:
    def __init__(self, *writers) -> None:
        self.writers = writers
        self.records: list[HandRecord] = []

    def write(self, record: HandRecord) -> None:
        self.records.append(record)
        for w in self.writers:
            w.write(record)


def play(players, hands, path_acpc=None, path_phh=None, seed=2):
    writers = []
    if path_acpc:
        writers.append(AcpcLogWriter(path_acpc))
    if path_phh:
        writers.append(PhhLogWriter(path_phh))
    tee = Tee(*writers)
    result = run_match(players, hands, seed=seed, log=tee)
    for w in writers:
        w.close()
    return result, tee.records


def parser(name):
    from cbr.plugins import load

    return load("cbr.parsers", name)()


def by_name(record: HandRecord):
    """What a hand says about each player, independent of how positions are numbered."""
    out = {}
    for pos, name in enumerate(record.players):
        acts = tuple((a.street, a.kind) for a in record.actions if a.position == pos)
        out[name] = (record.hole_cards[pos], record.payoffs[pos] if record.payoffs else None, acts)
    return out


def test_acpc_line_format():
    rec = HandRecord(source="m", line=0, hand_id="7", game=preset("holdem.limit.2p"), players=("a", "b"),
                     hole_cards=((51, 50), (0, 5)), board=(8, 12, 16, 20, 24),
                     actions=(Action(0, 1, "c"), Action(0, 0, "c"), Action(1, 0, "c"), Action(1, 1, "c"),
                              Action(2, 0, "r"), Action(2, 1, "c"), Action(3, 0, "c"), Action(3, 1, "c")),
                     payoffs=(30.0, -30.0))
    assert acpc_state_line(rec) == "STATE:7:cc/cc/rc/cc:AsAh|2c3d/4c5c6c/7c/8c:30|-30:a|b"
    with pytest.raises(LogFormatError):
        acpc_state_line(HandRecord("m", 0, "1", rec.game, ("a:b", "c"), rec.hole_cards, (), (), (5.0, -5.0)))


def test_acpc_log_header_lines_and_score(tmp_path):
    path = tmp_path / "match.log"
    result, records = play(["random", "raise", "call"], 60, path_acpc=path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# game: ")
    assert GameDef.from_dict(json.loads(lines[0][len("# game: "):])) == result.game
    states = [line for line in lines if line.startswith("STATE:")]
    assert len(states) == 60 and states[0].startswith("STATE:0:")
    score, totals, names = lines[-1].split(":")
    assert score == "SCORE"
    got = dict(zip(names.split("|"), map(float, totals.split("|"))))
    assert got == {p.name: p.total for p in result.players}


@pytest.mark.parametrize("players", [["random", "raise"], ["random", "call", "raise", "random", "lag"]])
def test_acpc_log_round_trips_through_the_acpc_parser(tmp_path, players):
    path = tmp_path / "match.log"
    _, records = play(players, 80, path_acpc=path)
    items = list(parser("acpc").parse(str(path)))
    issues = [i for i in items if isinstance(i, ParseIssue)]
    hands = [i for i in items if isinstance(i, HandRecord)]
    assert not issues, issues[:3]
    assert len(hands) == len(records)
    for mine, back in zip(records, hands):
        assert back.game == mine.game                      # exact rules from the header
        assert back.players == mine.players and back.hand_id == mine.hand_id
        assert back.hole_cards == mine.hole_cards and back.board == mine.board
        assert [(a.street, a.position, a.kind) for a in back.actions] == \
               [(a.street, a.position, a.kind) for a in mine.actions]
        assert back.payoffs == mine.payoffs


@pytest.mark.parametrize("players", [["random", "raise"], ["random", "call", "raise", "random"]])
def test_phh_log_replays_in_pokerkit(tmp_path, players):
    """An independent engine (PokerKit) replays every written hand to the same payoffs."""
    pokerkit = require_module("pokerkit")
    path = tmp_path / "match.phhs"
    result, records = play(players, 60, path_phh=path)
    text = path.read_text()
    tables = tomllib.loads(text)
    assert list(tables) == [str(i) for i in range(1, 61)]
    chunks = text.split("\n[")
    for k, (mine, chunk) in enumerate(zip(records, chunks)):
        body = chunk.split("]\n", 1)[1]
        hh = pokerkit.HandHistory.loads(body)
        *_, final = iter(hh)
        order = phh_player_order(mine.game)
        assert [final.payoffs[i] for i in range(len(order))] == [mine.payoffs[pos] for pos in order], k


@pytest.mark.parametrize("players", [["random", "raise"], ["random", "call", "raise"]])
def test_phh_log_round_trips_through_the_phh_parser(tmp_path, players):
    path = tmp_path / "match.phhs"
    _, records = play(players, 60, path_phh=path)
    items = list(parser("phh").parse(str(path)))
    hands = [i for i in items if isinstance(i, HandRecord)]
    assert not [i for i in items if isinstance(i, ParseIssue)]
    assert len(hands) == len(records)
    for mine, back in zip(records, hands):
        assert back.board == mine.board
        assert by_name(back) == by_name(mine)


@pytest.mark.parametrize("players", [["random", "raise"], ["random", "call", "raise", "lag"]])
def test_each_format_dumps_what_its_writer_writes_and_loads_it_back(tmp_path, players):
    """One module per format reads and writes it: dumps is the writer's text, loads reads it back."""
    from cbr.logs import acpc, phh

    _, records = play(players, 40, path_acpc=tmp_path / "m.log", path_phh=tmp_path / "m.phhs")
    assert acpc.dumps(records) == (tmp_path / "m.log").read_text()
    assert phh.dumps(records) == (tmp_path / "m.phhs").read_text()
    back = acpc.loads(acpc.dumps(records))
    assert [(r.hand_id, r.game, r.players, r.hole_cards, r.board, r.payoffs) for r in back] == \
           [(r.hand_id, r.game, r.players, r.hole_cards, r.board, r.payoffs) for r in records]
    assert [[(a.street, a.position, a.kind) for a in r.actions] for r in back] == \
           [[(a.street, a.position, a.kind) for a in r.actions] for r in records]
    back = phh.loads(phh.dumps(records))
    assert [(by_name(r), r.board) for r in back] == [(by_name(r), r.board) for r in records]
    with pytest.raises(LogFormatError, match="<text>:1"):
        acpc.loads("STATE:0:garbage\n")


def test_phh_directory_holds_one_file_per_hand(tmp_path):
    out = tmp_path / "hands"
    _, records = play(["random", "call"], 5, path_phh=out)
    files = sorted(p.name for p in out.iterdir())
    assert files == [f"{i}.phh" for i in range(5)]
    data = tomllib.loads((out / "3.phh").read_text())
    assert data["variant"] == "FT" and data["hand"] == 3 and data["small_bet"] == 10
    assert data["players"] == list(records[3].players)  # holdem.limit.2p: p1 = position 0 (big blind)


def test_heads_up_phh_lists_the_big_blind_first():
    assert phh_player_order(preset("holdem.limit.2p")) == [0, 1]
    assert phh_player_order(preset("casper.2p")) == [1, 0]
    assert phh_player_order(preset("casper.9p")) == list(range(9))


def test_a_failed_match_leaves_no_log(tmp_path):
    path = tmp_path / "broken.log"

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with AcpcLogWriter(path) as log:
            run_match(["random", "call"], 5, log=log)
            assert not path.exists()                     # nothing visible while writing
            raise Boom()
    assert list(tmp_path.iterdir()) == []


def test_open_log_knows_two_formats(tmp_path):
    with open_log(tmp_path / "a.log", "acpc") as w:
        assert isinstance(w, AcpcLogWriter)
    assert (tmp_path / "a.log").read_text() == ""        # no hands: empty, but complete
    with pytest.raises(ValueError, match="acpc, phh"):
        open_log(tmp_path / "b.log", "xml")


def test_acpc_writer_refuses_a_second_game(tmp_path):
    rec = HandRecord("m", 0, "0", preset("holdem.limit.2p"), ("a", "b"), ((0, 1), (2, 3)), (),
                     (Action(0, 1, "f"),), (5.0, -5.0))
    other = HandRecord("m", 0, "1", preset("casper.2p"), ("a", "b"), ((0, 1), (2, 3)), (),
                       (Action(0, 0, "f"),), (-5.0, 5.0))
    w = AcpcLogWriter(tmp_path / "x.log")
    w.write(rec)
    with pytest.raises(LogFormatError):
        w.write(other)
    w.abort()
    assert not (tmp_path / "x.log").exists()
