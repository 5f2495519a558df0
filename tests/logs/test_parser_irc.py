"""IRC database parser: the real April 1995 subset, and hand-written bad databases."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cbr.errors import GameError, LogFormatError
from cbr.game.state import HandState
from cbr.logs.irc import IrcParser
from cbr.logs.record import Action, HandRecord, ParseIssue
from cbr.logs.replay import replay_hand
from evaluator_ext.cards import card_str, parse_cards
from tests.conftest import lazy_module, shared_path

eval7 = lazy_module("eval7")  # only the tests that score showdowns with it need it

IRC_DIR = ("irc", "IRCdata", "holdem", "199504")


def ev7(cards) -> int:
    return eval7.evaluate([eval7.Card(card_str(c)) for c in cards])


def replay_state(rec: HandRecord) -> HandState:
    """Walk a record through the rules engine (quits and check-folds leave with fold_out)."""
    st = HandState(rec.game, players=rec.players, stacks=rec.stacks, posted=rec.posted)
    for a in rec.actions:
        if st.needs_board:
            st.deal_board(rec.board[len(st.board):(3, 4, 5)[st.street]])
        if a.kind == "f" and st.to_act != a.position and a.position in rec.extra["quits"]:
            st.fold_out(a.position)                  # left the table out of turn
            continue
        if st.to_act != a.position or st.street != a.street:
            raise GameError(f"log has position {a.position} on street {a.street}, engine expects "
                            f"{st.to_act} on street {st.street}")
        if a.kind == "f" and st.to_call <= 1e-9:
            st.fold_out()
        else:
            st.act(a.kind)
    return st


@pytest.fixture(scope="module")
def parsed() -> tuple[list[HandRecord], list[ParseIssue]]:
    out = list(IrcParser().parse(str(shared_path(*IRC_DIR))))
    return ([x for x in out if isinstance(x, HandRecord)], [x for x in out if isinstance(x, ParseIssue)])


def _raw_pdb(directory: Path) -> dict[str, list[list[str]]]:
    rows: dict[str, list[list[str]]] = {}
    for f in os.listdir(directory / "pdb"):
        for line in (directory / "pdb" / f).read_text(encoding="latin-1").splitlines():
            parts = line.split()
            if parts:
                rows.setdefault(parts[1], []).append(parts)
    return rows


def test_every_hdb_line_gives_a_hand_or_an_issue(parsed):
    hands, issues = parsed
    assert len(hands) + len(issues) == 4000          # SOURCE.md: 4,000 hdb lines
    assert len({h.hand_id for h in hands}) == len(hands)
    assert len(hands) >= 3950
    # SOURCE.md: 2-12 players dealt; 11- and 12-handed hands are read (GameDef seats up to 12)
    assert {h.n_players for h in hands} == set(range(2, 13))
    assert sum(h.n_players > 10 for h in hands) >= 100
    # SOURCE.md: 11 hands whose pdb records do not match the roster
    assert sum("pdb records" in i.reason for i in issues) == 11
    for i in issues:
        assert i.source.endswith("hdb") and 1 <= i.line <= 4000


def test_issue_reasons_are_known_data_defects(parsed):
    _, issues = parsed
    kinds = ("pdb records", "bets/raises on the", "no one could call")
    assert all(any(k in i.reason for k in kinds) for i in issues), [str(i) for i in issues
                                                                     if not any(k in i.reason for k in kinds)]
    # the raising wars of SOURCE.md (13 to 53 bets/raises on a street) are heads-up: read
    assert not any("bets/raises on the" in i.reason for i in issues)


def test_first_hand_as_documented():
    """SOURCE.md's example hand, decoded by hand from the pdb lines it quotes."""
    recs = [r for r in IrcParser().parse(str(shared_path(*IRC_DIR))) if getattr(r, "hand_id", "") == "797210868"]
    (h,) = recs
    assert h.players == ("sagerbot", "johnr", "Winner777", "greg", "jims", "shinner", "Quick", "derek", "gunner")
    assert h.game.blinds[:2] == (10.0, 0.0) and h.posted[0] == 10.0     # one blind only: the big blind
    assert h.game.first_to_act == (1, 0, 0, 0)
    seq = [(a.street, a.position, a.kind) for a in h.actions]
    assert seq == [(0, 1, "f"), (0, 2, "f"), (0, 3, "f"), (0, 4, "f"), (0, 5, "f"), (0, 6, "f"), (0, 7, "f"),
                   (0, 8, "c"), (0, 0, "c"),
                   (1, 0, "r"), (1, 8, "c"), (2, 0, "r"), (2, 8, "c"),
                   (3, 0, "c"), (3, 8, "r"), (3, 0, "c")]
    assert h.extra["quits"] == (6,)
    assert h.payoffs == (-60.0, 0, 0, 0, 0, 0, 0, 0, 60.0)
    assert h.hole_cards[0] == parse_cards("QdJc") and h.hole_cards[8] == parse_cards("8hAd")
    assert h.hole_cards[1] is None and card_str(h.board[0]) == "Qc" and len(h.board) == 5


def test_blind_layouts_match_the_raw_b_letters(parsed):
    hands, _ = parsed
    raw = _raw_pdb(shared_path(*IRC_DIR))
    for h in hands:
        rows = sorted(raw[h.hand_id], key=lambda r: int(r[3]))
        posters = [i for i, r in enumerate(rows) if r[4].startswith("B")]
        blinds = [i for i, b in enumerate(h.game.blinds) if b > 0]
        assert posters == blinds, h.where
        if len(posters) == 2:
            assert h.game.blinds[:2] == (5.0, 10.0)
    assert sum(1 for h in hands if h.n_players == 2) > 700


def test_known_cards_and_chips_against_raw_columns(parsed):
    hands, _ = parsed
    raw = _raw_pdb(shared_path(*IRC_DIR))
    for h in hands:
        rows = sorted(raw[h.hand_id], key=lambda r: int(r[3]))
        assert h.known_hole_cards == sum(len(r) == 13 for r in rows)
        assert h.payoffs == tuple(float(int(r[10]) - int(r[9])) for r in rows)
        assert sum(h.payoffs) == 0                      # play money, no rake
        assert h.stacks == tuple(float(r[8]) for r in rows)


def test_hands_replay_in_the_rules_engine(parsed):
    """Every hand replays, and the chips each position put in match the pdb action column
    (including the two hands that open with a big blind posted all-in for less: the
    betting opens at the full 10 there, as on the IRC server)."""
    hands, _ = parsed
    failed = []
    for h in hands:
        try:
            st = replay_state(h)
        except GameError as exc:
            failed.append((h.hand_id, str(exc)))
            continue
        put_in = tuple(w - p for w, p in zip(h.extra["winnings"], h.payoffs))
        if st.total_committed != put_in:
            failed.append((h.hand_id, f"engine {st.total_committed} vs pdb {put_in}"))
    assert failed == []
    short = {h.hand_id for h in hands if h.posted and any(0 < x < max(h.game.blinds) for x in h.posted)}
    assert short == {"797469974", "797269435"}


def test_every_hand_replays_with_the_pdb_winnings(parsed):
    """replay_hand (showdowns scored by eval7) pays every hand as the pdb winnings do,
    including the hands where players quit and the 11-12 player hands."""
    hands, _ = parsed
    paid = 0
    for h in hands:
        r = replay_hand(h, evaluate=ev7)      # raises on a payoff mismatch
        paid += r.payoffs is not None
    assert paid == len(hands)


def test_short_all_in_big_blind_hands():
    by_id = {r.hand_id: r for r in IrcParser().parse(str(shared_path(*IRC_DIR)))
             if isinstance(r, HandRecord) and r.hand_id in ("797469974", "797269435")}
    h = by_id["797469974"]                       # MrX posts the big blind all-in for 7
    assert h.posted[1] == 7.0 and h.game.blinds[1] == 10.0
    r = replay_hand(h, evaluate=ev7)
    assert r.decisions[0].to_call == 10.0 and r.payoffs == h.payoffs
    h = by_id["797269435"]                       # wsk's only blind: 5 of 10, all-in; raise to 20
    r = replay_hand(h, evaluate=ev7)
    assert r.state.total_committed == (5.0, 0.0, 20.0, 0.0) and r.payoffs == (-5.0, 0.0, 5.0, 0.0)


def test_quits_are_folds_and_the_pdb_says_who_left_first(parsed):
    """A quit is a fold (the hdb no longer counts the quitter, and quitters never collect).
    When two players leave in the same betting round the letters cannot say who left
    first; the one who collected the pot did not fold, so the other left first, out of
    turn. Three-handed hands where the big blind left before the small blind acted read
    the same way."""
    hands, _ = parsed
    by_id = {h.hand_id: h for h in hands}
    h = by_id["797421771"]                       # both BQ heads-up; munch (to act) collects 15
    assert [(a.position, a.kind) for a in h.actions] == [(1, "f")] and h.extra["quits"] == (1,)
    r = replay_hand(h, evaluate=ev7)
    assert r.payoffs == h.payoffs == (10.0, -10.0) and r.decisions == []
    assert r.flags and "out of turn" in r.flags[0]
    h = by_id["797278326"]                       # the same letters; here the big blind collects
    assert [(a.position, a.kind) for a in h.actions] == [(0, "f")]
    assert replay_hand(h).payoffs == h.payoffs == (-5.0, 5.0)
    h = by_id["797320089"]                       # turn raising war, both quit: VedderBot collects
    r = replay_hand(h, evaluate=ev7)
    assert r.payoffs == h.payoffs == (-150.0, 150.0) and h.actions[-1] == Action(2, 0, "f")
    for ts in ("797269526", "797319595", "797372240", "797376466"):
        h = by_id[ts]                            # SB collects 15 without acting
        assert h.actions[-1].position == 1 and replay_hand(h).payoffs[:2] == (10.0, -10.0)
    for h in hands:
        for q in h.extra["quits"]:
            assert h.extra["winnings"][q] == 0, h.where


def test_heads_up_ring_order_first_player_acts_first_every_street(parsed):
    hands, _ = parsed
    hu = [h for h in hands if h.n_players == 2 and len(h.posted or h.game.blinds) == 2 and h.posted is None]
    assert hu and all(h.game.first_to_act == (0, 0, 0, 0) for h in hu)
    # post-flop rounds open with position 0 whenever it is still in
    for h in hu:
        for street in (1, 2, 3):
            acts = [a for a in h.actions if a.street == street]
            if acts:
                assert acts[0].position == 0, h.where


def test_showdown_winner_has_the_best_hand_by_eval7(parsed):
    """Independent check of card reading: where exactly the players who showed split a
    5-card board, the best eval7 hand among them collected chips."""
    hands, _ = parsed
    checked = 0
    for h in hands:
        shown = [p for p in range(h.n_players) if h.hole_cards[p] is not None]
        if len(h.board) != 5 or len(shown) < 2:
            continue
        if any(a.all_in for a in h.actions) or h.extra["quits"]:
            continue
        board = [eval7.Card(card_str(c)) for c in h.board]
        score = {p: eval7.evaluate(board + [eval7.Card(card_str(c)) for c in h.hole_cards[p]]) for p in shown}
        best = max(score.values())
        winners = [p for p in shown if score[p] == best]
        assert all(h.extra["winnings"][p] > 0 for p in winners), h.where
        assert all(h.extra["winnings"][p] == 0 for p in shown if p not in winners), h.where
        checked += 1
    assert checked > 300


def test_sniff():
    d = shared_path(*IRC_DIR)
    p = IrcParser()
    assert p.sniff(str(d), "")
    assert p.sniff(str(d / "hdb"), (d / "hdb").read_text()[:100])
    assert not p.sniff(str(d / "hroster"), "")
    assert not p.sniff(str(d / "pdb" / "pdb.derek"), "")
    assert not p.sniff(str(d.parent), "")


# ---------------------------------------------------------------- hand-written databases
def _db(tmp_path: Path, hands: list[tuple[str, list[str]]], *, crlf: bool = False) -> Path:
    """hands: (hdb line, pdb lines 'nick ts n pos pre flop turn river bankroll action winnings [cards]')."""
    d = tmp_path / "db"
    (d / "pdb").mkdir(parents=True)
    eol = "\r\n" if crlf else "\n"
    (d / "hdb").write_text("".join(h + "  " + eol for h, _ in hands))
    roster, per_nick = [], {}
    for h, rows in hands:
        ts = h.split()[0]
        nicks = sorted({r.split()[0] for r in rows})
        roster.append(f"{ts} {int(h.split()[3])} {' '.join(nicks)}")
        for r in rows:
            per_nick.setdefault(r.split()[0], []).append(r)
    (d / "hroster").write_text("".join(x + eol for x in roster))
    for nick, rows in per_nick.items():
        (d / "pdb" / f"pdb.{nick}").write_text("".join(r + " " + eol for r in rows))
    return d


GOOD = ("100 1 1 2 2/20 2/40 0/0 1/60 2c 3d 4h 5s",
        ["al[1] 100 2 1 Bc b b - 1000 40 60 Ah Kh",
         "b^b 100 2 2 Bk c f - 1000 20 0"])


def _read(d: Path) -> tuple[list[HandRecord], list[ParseIssue]]:
    out = list(IrcParser().parse(str(d)))
    return [x for x in out if isinstance(x, HandRecord)], [x for x in out if isinstance(x, ParseIssue)]


def test_small_good_database_with_crlf_and_odd_nicks(tmp_path):
    hands, issues = _read(_db(tmp_path, [GOOD], crlf=True))
    assert issues == []
    (h,) = hands
    assert h.players == ("al[1]", "b^b") and h.line == 1
    assert [(a.street, a.position, a.kind) for a in h.actions] == [
        (0, 0, "c"), (0, 1, "c"), (1, 0, "r"), (1, 1, "c"), (2, 0, "r"), (2, 1, "f")]
    assert h.payoffs == (20.0, -20.0)
    replay_state(h)


@pytest.mark.parametrize("hand, reason", [
    (("101 1 2 2 2/20 2/40", ["x 101 2 1 Bc - - - 1000 10 20", "y 101 2 2 Bk - - - 1000 10 0"]),
     "corrupt hdb line"),
    (("102 1 3 2 2/20 0/0 0/0 1/30 2c 3d 2c", ["x 102 2 1 Bc b - - 1000 20 30", "y 102 2 2 Bk f - - 1000 10 0"]),
     "dealt twice"),
    (("103 1 4 2 2/20 0/0 0/0 1/30 2c 3d Xx", ["x 103 2 1 Bc b - - 1000 20 30", "y 103 2 2 Bk f - - 1000 10 0"]),
     "unknown card"),
    (("104 1 5 2 0/0 0/0 0/0 1/15", ["x 104 2 1 Bk - - - 1000 5 15", "y 104 2 2 B - - - 1000 10 0"]),
     "checks facing a bet"),
    (("105 1 6 2 2/20 0/0 0/0 1/30 2c 3d 4h", ["x 105 2 1 Bc b - - 1000 20 30", "y 105 2 2 Bk f - - 1000 15 0"]),
     "pdb says"),
    (("106 1 7 3 2/20 0/0 0/0 1/30 2c 3d 4h", ["x 106 3 1 Bc b - - 1000 20 30", "y 106 3 2 Bk f - - 1000 10 0"]),
     "pdb records for 3 players"),
    (("107 1 8 3 3/30 3/300 3/300 3/300 2c 3d 4h 5s 6c",     # 9 bets/raises with three players in
      ["x 107 3 1 Bc brrc k k 1000 100 300", "y 107 3 2 Bk rrrc k k 1000 100 0",
       "z 107 3 3 c rrr k k 1000 100 0"]),
     "more than 8"),
    (("108 1 9 2 2/20 0/0 0/0 1/30 2c 3d 4h", ["x 108 2 1 Bc bb - - 1000 20 30", "y 108 2 2 Bk f - - 1000 10 0"]),
     "left over"),
    (("109 1 9 2 2/20 2/40 0/0 1/40 2c 3d 4h", ["x 109 2 1 Bc b - - 1000 20 40", "y 109 2 2 Bk k - - 1000 20 0"]),
     "checks facing a bet"),
])
def test_bad_hand_is_an_issue_on_its_hdb_line_and_reading_goes_on(tmp_path, hand, reason):
    bad_hdb, bad_rows = hand
    d = _db(tmp_path, [GOOD, (bad_hdb, bad_rows), (GOOD[0].replace("100", "200", 1), [
        r.replace(" 100 ", " 200 ") for r in GOOD[1]])])
    if bad_hdb.startswith("107"):
        lines = (d / "hroster").read_text().splitlines()
        assert lines[1] == "107 3 x y z"
    if bad_hdb.startswith("106"):
        lines = (d / "hroster").read_text().splitlines()
        lines[1] = "106 3 x y z"
        (d / "hroster").write_text("\n".join(lines) + "\n")
    hands, issues = _read(d)
    assert [h.hand_id for h in hands] == ["100", "200"]
    assert len(issues) == 1 and reason in issues[0].reason
    assert issues[0].line == 2 and issues[0].source.endswith("hdb")


def test_latin1_pdb_file_is_reported_and_read(tmp_path):
    d = _db(tmp_path, [GOOD])
    (d / "pdb" / "pdb.b^b").write_bytes("b\xe9b 100 2 2 Bk c f - 1000 20 0\n".encode("latin-1"))
    lines = (d / "hroster").read_text(encoding="latin-1").replace("b^b", "b\xe9b")
    (d / "hroster").write_bytes(lines.encode("latin-1"))
    hands, issues = _read(d)
    assert len(hands) == 1 and hands[0].players[1] == "b\xe9b"
    assert len(issues) == 2 and all("not UTF-8" in i.reason and i.line == 1 for i in issues)


def test_truncated_hdb_and_unreadable_paths(tmp_path):
    d = _db(tmp_path, [GOOD])
    with open(d / "hdb", "a") as fh:
        fh.write("300 1 3 2 2/20 2/4")           # file cut in the middle of a line
    hands, issues = _read(d)
    assert len(hands) == 1 and len(issues) == 1 and issues[0].line == 2
    with pytest.raises(FileNotFoundError):
        list(IrcParser().parse(str(tmp_path / "missing")))
    with pytest.raises(LogFormatError):
        list(IrcParser().parse(str(tmp_path)))
    assert IrcParser().sniff(str(d), "") and IrcParser().sniff(str(d / "hdb"), "")


# ---------------------------------------------------------------- the raise cap, heads-up
def test_shared_data_raises_beyond_the_cap_come_only_between_two_players(parsed):
    """The evidence for the rule: in the real month every bet or raise beyond the usual cap
    (3 pre-flop counting from the big blind, 4 after) is made with two players left in the
    hand, while many rounds with more players stop exactly at the cap."""
    hands, _ = parsed
    beyond = {2: 0, 3: 0}
    capped_crowded = 0
    for h in hands:
        folded: set[int] = set()
        for street, cap in enumerate((3, 4, 4, 4)):
            raises = 0
            for a in h.actions:
                if a.street != street:
                    continue
                if a.kind == "f":
                    folded.add(a.position)
                elif a.kind == "r":
                    raises += 1
                    if raises > cap:
                        beyond[min(h.n_players - len(folded), 3)] += 1
            if raises == cap and h.n_players - len(folded) > 2:
                capped_crowded += 1
    assert beyond[3] == 0
    assert beyond[2] == 230                # in 45 rounds, all heads-up
    assert capped_crowded == 156           # rounds that stopped at the cap with 3+ players


def test_shared_data_heads_up_raising_wars_are_read_and_replay(parsed):
    hands, _ = parsed
    wars = {h.hand_id: h for h in hands if max(h.game.raise_cap) > 8}
    # SOURCE.md: 13, 15, 16, 23, 26, 42 and 53 bets/raises on a street, five hands
    assert sorted(wars) == ["797212059", "797221631", "797304914", "797306313", "797322425"]
    assert wars["797212059"].game.raise_cap[3] == 53
    for h in wars.values():
        replay_hand(h, evaluate=ev7)


def test_heads_up_raising_war_beyond_max_raises_is_read(tmp_path):
    """Twelve bets and raises on the flop between the last two players: no cap heads-up."""
    hand = ("110 1 10 2 2/20 2/260 0/0 1/280 2c 3d 4h 5s",
            ["x 110 2 1 Bc brrrrrc kf - 1000 130 0", "y 110 2 2 Bk rrrrrr b - 1000 150 280"])
    hands, issues = _read(_db(tmp_path, [hand]))
    assert issues == []
    [h] = hands
    flop = [a.kind for a in h.actions if a.street == 1]
    assert flop == ["r"] * 12 + ["c"]
    assert h.game.raise_cap == (3, 12, 4, 4) and h.game.name.endswith(".cap-3-12-4-4")
    assert h.payoffs == (-130.0, 130.0)
    replay_hand(h, evaluate=ev7)


def test_raises_beyond_max_with_a_third_player_in_are_corrupt(tmp_path):
    """Same war with a third player who stays in: the server capped such rounds, so the log is corrupt."""
    hand = ("111 1 11 3 3/30 3/300 3/300 3/300 2c 3d 4h 5s 6c",
            ["x 111 3 1 Bc brrc k k 1000 100 300", "y 111 3 2 Bk rrrc k k 1000 100 0",
             "z 111 3 3 c rrr k k 1000 100 0"])
    hands, issues = _read(_db(tmp_path, [hand]))
    assert hands == [] and len(issues) == 1
    assert "9 with more than two players in the hand (more than 8)" in issues[0].reason


def test_roster_count_that_is_not_a_decimal_number_is_reported(tmp_path):
    """A superscript digit is ``isdigit()`` but not an int (found by the mutated-logs campaign)."""
    d = _db(tmp_path, [GOOD])
    (d / "hroster").write_text("100 \u00b3 al[1] b^b\n", encoding="utf-8")
    hands, issues = _read(d)
    assert hands == []
    assert any("corrupt roster line" in i.reason and i.source.endswith("hroster") and i.line == 1
               for i in issues), [str(i) for i in issues]
