"""PokerStars limit hold'em parser: the 10 real fixture hands, and hand-written bad files."""
from __future__ import annotations

from pathlib import Path

import pytest

from cbr.errors import LogFormatError
from cbr.logs.pokerstars import PokerStarsParser
from cbr.logs.record import Action, HandRecord, ParseIssue, limit_action
from evaluator_ext.cards import parse_cards
from tests.conftest import shared_path
from tests.logs.test_parser_irc import replay_state

# file -> (players dealt, known hole cards), counted by hand from each file
FILES = {
    "HHSmithy/ExtraHands_ShowsDownSingleCard.txt": (6, 1),
    "HHSmithy/GameTypeTests_FixedLimitHoldem.txt": (9, 0),
    "HHSmithy/Seats_Full Ring (10 Handed).txt": (8, 0),
    "fpdb-3/cash/HH20100819 Vibilia II - $0,02-$0,04 - USD Лимит Холдем.txt": (8, 3),
    "fpdb-3/cash/LHE-10max-USD-0.05-0.10-PF_all_fold_to_BB.txt": (8, 1),
    "fpdb-3/cash/LHE-10max-USD-1.00-2.00-200508.hero.takes.a.walk.txt": (10, 1),
    "fpdb-3/cash/LHE-10max-USD-1.00-2.00-No_max_seats.txt": (10, 1),
    "fpdb-3/cash/LHE-USD-1.00-200508.BB.and.Button.same.player.txt": (2, 1),
    "fpdb-3/tour/LHE-USD-MTT-2-201007.Mixed.Holdem.txt": (5, 3),
    "fpdb-3/tour/LHE-USD-STT-5-20100607.allInPreflop.txt": (9, 3),
}


def _one(name: str) -> HandRecord:
    path = shared_path("pokerstars_fl", *name.split("/"))
    out = list(PokerStarsParser().parse(str(path)))
    assert len(out) == 1 and isinstance(out[0], HandRecord), out
    return out[0]


@pytest.mark.parametrize("name", sorted(FILES))
def test_real_hand_reads_balances_and_replays(name):
    path = shared_path("pokerstars_fl", *name.split("/"))
    assert PokerStarsParser().sniff(str(path), path.read_text(encoding="utf-8", errors="replace")[:4096])
    h = _one(name)
    n, known = FILES[name]
    assert h.n_players == n and h.known_hole_cards == known and h.format == "pokerstars"
    assert h.line == 1 and h.game.betting == "limit"
    assert abs(sum(h.payoffs) + h.extra["rake"]) < 1e-6          # net of rake
    st = replay_state(h)                                            # the rules engine accepts it
    assert st.is_over or len(h.board) == 5


def test_short_all_in_raise_and_side_pot():
    h = _one("fpdb-3/tour/LHE-USD-STT-5-20100607.allInPreflop.txt")
    assert h.game.small_bet == 50 and h.game.big_bet == 100 and h.game.blinds[:2] == (25, 50)
    assert h.players[0] == "101ripcord" and h.players[-1] == "zsoccerino"   # SB first, button last
    slush = h.players.index("Slush11")
    (allin,) = [a for a in h.actions if a.all_in]
    assert allin.position == slush and allin.kind == "r" and allin.street == 0
    assert h.stacks[slush] == 110
    pay = dict(zip(h.players, h.payoffs))
    assert pay["101ripcord"] == 630 and pay["Hero"] == -360 and pay["Slush11"] == -110
    assert h.hole_cards[slush] == parse_cards("9dAs")


def test_heads_up_2005_button_on_big_blind():
    h = _one("fpdb-3/cash/LHE-USD-1.00-200508.BB.and.Button.same.player.txt")
    assert h.players == ("fblm2002", "Hero") and h.game.first_to_act == (0, 1, 1, 1)
    assert h.payoffs == (-0.5, 0.5) and h.extra["implicit_uncalled"] == 0.5


def test_extra_big_blinds_posted_and_partial_show():
    h = _one("fpdb-3/cash/HH20100819 Vibilia II - $0,02-$0,04 - USD Лимит Холдем.txt")
    assert h.posted == (0.01, 0.02, 0.02, 0.02, 0, 0, 0, 0)
    assert h.players[:3] == ("player7", "player1", "hero")
    s = _one("HHSmithy/ExtraHands_ShowsDownSingleCard.txt")
    assert s.extra["partial_cards"] == {"Zaza5573": "Qc"}
    assert dict(zip(s.players, s.payoffs))["fingies7"] == pytest.approx(15.84 - 6)


# ---------------------------------------------------------------- hand-written files
HAND = """PokerStars Hand #{id}:  Hold'em Limit ($1/$2 USD) - 2012/09/11 0:15:11 ET
Table 'T' 6-max Seat #1 is the button
Seat 1: A ($50 in chips)
Seat 2: B ($50 in chips)
Seat 3: C ($50 in chips)
B: posts small blind $0.50
C: posts big blind $1
*** HOLE CARDS ***
Dealt to A [Ah Kh]
A: raises $1 to $2
B: folds
C: calls $1
*** FLOP *** [{flop}]
C: checks
A: bets $1
C: calls $1
*** TURN *** [{flop}] [2s]
C: checks
A: bets $2
C: folds
Uncalled bet ($2) returned to A
A collected $6.25 from pot
*** SUMMARY ***
Total pot $6.50 | Rake $0.25
Board [{flop} 2s]
Seat 1: A (button) collected ($6.25)
"""


def _write(tmp_path: Path, text: str, encoding: str = "utf-8") -> str:
    p = tmp_path / "hh.txt"
    p.write_bytes(text.encode(encoding))
    return str(p)


def _parse(path: str) -> tuple[list[HandRecord], list[ParseIssue]]:
    out = list(PokerStarsParser().parse(path))
    return [x for x in out if isinstance(x, HandRecord)], [x for x in out if isinstance(x, ParseIssue)]


def test_multi_hand_file_with_bom_and_blank_lines(tmp_path):
    text = "\ufeff" + HAND.format(id=1, flop="9d 9c 6h") + "\n\n\n" + HAND.format(id=2, flop="9d 9c 6h")
    hands, issues = _parse(_write(tmp_path, text))
    assert issues == [] and [h.hand_id for h in hands] == ["1", "2"]
    assert hands[1].line == HAND.count("\n") + 4
    h = hands[0]
    assert h.players == ("B", "C", "A") and h.payoffs == (-0.5, -3.0, 3.25)
    assert [(a.street, a.position, a.kind) for a in h.actions] == [
        (0, 2, "r"), (0, 0, "f"), (0, 1, "c"), (1, 1, "c"), (1, 2, "r"), (1, 1, "c"), (2, 1, "c"), (2, 2, "r"),
        (2, 1, "f")]
    replay_state(h)


@pytest.mark.parametrize("bad, reason", [
    (lambda t: t.split("*** TURN")[0], "truncated"),
    (lambda t: t.replace("9d 9c 6h", "9d 9c Ah"), "dealt twice"),
    (lambda t: t.replace("9d 9c 6h", "9d 9c 6x"), "unknown card"),
    (lambda t: t.replace("A: bets $2", "A: bets $5"), "not limit betting"),
    (lambda t: t.replace("C: calls $1\n*** TURN", "C: checks\n*** TURN"), "checks facing a bet"),
    (lambda t: t.replace("Hold'em Limit", "Omaha Pot Limit"), "variant 'Omaha Pot Limit ($1/$2 USD)' not supported"),
    (lambda t: t.replace("$6.25", "$7.25"), "!= total pot"),
])
def test_bad_hand_is_an_issue_and_next_hand_still_reads(tmp_path, bad, reason):
    good = HAND.format(id=1, flop="9d 9c 6h")
    text = bad(HAND.format(id=2, flop="9d 9c 6h")) + "\n" + good.replace("#1:", "#3:")
    hands, issues = _parse(_write(tmp_path, good + "\n" + text))
    assert [h.hand_id for h in hands] == ["1", "3"]
    assert len(issues) == 1 and reason in issues[0].reason, issues
    assert issues[0].line == HAND.count("\n") + 2


def test_latin1_file_is_reported_and_read(tmp_path):
    text = HAND.format(id=1, flop="9d 9c 6h").replace("A: raises", 'C said, "caf\xe9"\nA: raises')
    hands, issues = _parse(_write(tmp_path, text, "latin-1"))
    assert len(hands) == 1 and len(issues) == 1 and "not UTF-8" in issues[0].reason and issues[0].line == 10


def test_unreadable_paths_and_sniff(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(PokerStarsParser().parse(str(tmp_path / "missing.txt")))
    p = PokerStarsParser()
    assert p.sniff("x.txt", "\n\nPokerStars Hand #5: Hold'em Limit ($1/$2 USD)")
    assert not p.sniff("x.txt", "STATE:0:r:AhKh|:0|0:a|b")


# ---------------------------------------------------------------- one pass, many hands
def _export(names: list[str]) -> str:
    """The real sample hands in one file, as a client export holds them (blank lines between)."""
    return "\ufeff" + "\n\n\n".join(
        shared_path("pokerstars_fl", *n.split("/")).read_text(encoding="utf-8-sig").strip("\n") for n in names
    ) + "\n"


def test_real_hands_in_one_export_read_as_in_their_own_files(tmp_path):
    names = sorted(FILES)
    text = _export(names)
    hands, issues = _parse(_write(tmp_path, text))
    assert issues == [] and len(hands) == len(names)
    for name, h in zip(names, hands):
        alone = _one(name)
        assert (h.hand_id, h.game, h.players, h.hole_cards, h.board, h.actions, h.payoffs, h.stacks, h.posted) == (
            alone.hand_id, alone.game, alone.players, alone.hole_cards, alone.board, alone.actions, alone.payoffs,
            alone.stacks, alone.posted)
        assert h.extra == alone.extra
    # each hand's line is where its header is in the export (counted independently)
    header_lines = [k + 1 for k, ln in enumerate(text.lstrip("\ufeff").split("\n")) if ln.startswith("PokerStars ")]
    assert [h.line for h in hands] == header_lines


def test_same_hand_number_twice_in_a_file(tmp_path):
    good = HAND.format(id=7, flop="9d 9c 6h")
    hands, issues = _parse(_write(tmp_path, good + "\n" + good))
    assert len(hands) == 1 and len(issues) == 1 and "appears twice" in issues[0].reason


def test_windows_line_ends_and_text_before_the_first_hand(tmp_path):
    text = "exported by a tool\n\n" + HAND.format(id=1, flop="9d 9c 6h") + "\n" + HAND.format(id=2, flop="9d 9c 6h")
    hands, issues = _parse(_write(tmp_path, text.replace("\n", "\r\n")))
    assert [h.hand_id for h in hands] == ["1", "2"] and [h.line for h in hands] == [3, 3 + HAND.count("\n") + 1]
    assert len(issues) == 1 and issues[0].line == 1 and issues[0].not_a_hand and not issues[0].hand_skipped
    assert issues[0].reason == "text before the first hand, not a hand: 'exported by a tool'"


def _real_export(tmp_path: Path, head: str, first=lambda text: text) -> tuple[Path, int]:
    """The real files as one export (a blank line between them; ``first`` changes the first
    one's text), with ``head`` before the first hand; the number of hands in it."""
    texts = [shared_path("pokerstars_fl", *name.split("/")).read_text(encoding="utf-8").lstrip("\ufeff").strip()
             for name in sorted(FILES)]
    path = tmp_path / "export.txt"
    path.write_text(head + "\n\n".join([first(texts[0]), *texts[1:]]) + "\n", encoding="utf-8")
    return path, len(texts)


def test_a_header_before_the_first_hand_is_lines_skipped_not_a_hand(tmp_path):
    """A file header, a comment and blank lines before the first hand of an export were a hand
    skipped in every report (`cbr build`, `cbr logs inspect`): they are lines skipped, each line
    once, as the ACPC parser counts the lines that are no hand; every hand is read."""
    head = "Hand history export - PokerStars, table Phad\n# exported 2010-07-03 by a tool\n\n\n"
    path, n = _real_export(tmp_path, head)
    hands, issues = _parse(str(path))
    assert len(hands) == n
    assert [(i.line, i.not_a_hand, i.hand_skipped) for i in issues] == [(1, True, False), (2, True, False)]
    assert issues[1].reason == "text before the first hand, not a hand: '# exported 2010-07-03 by a tool'"
    hands, issues = _parse(str(_real_export(tmp_path, "\n\n\n")[0]))  # blank lines alone: nothing said
    assert len(hands) == n and issues == []


def test_a_damaged_first_hand_is_still_a_hand_skipped(tmp_path):
    """The first hand's header damaged: its lines are a hand (its seats, actions, results), one
    hand skipped at its first line; the export's header before it stays lines skipped."""
    head = "Hand history export\n\n"
    path, n = _real_export(tmp_path, head, lambda text: text.replace("PokerStars Game #", "PokerStars Gaem #", 1))
    hands, issues = _parse(str(path))
    assert len(hands) == n - 1
    assert [(i.line, i.not_a_hand, i.hand_skipped) for i in issues] == [(1, True, False), (3, False, True)]
    assert issues[1].reason.startswith("a hand without its PokerStars Game # line (damaged?): \"PokerStars Gaem #")
    # its header line lost altogether: the hand starts at its table line
    path, n = _real_export(tmp_path, head, lambda text: text.split("\n", 1)[1])
    hands, issues = _parse(str(path))
    assert len(hands) == n - 1 and [(i.line, i.hand_skipped) for i in issues] == [(1, False), (3, True)]
    assert issues[1].reason.startswith("a hand without its PokerStars Game # line (damaged?): \"Table '")


@pytest.mark.parametrize("bad, reason", [
    # malformed amounts and cards are issues, never exceptions out of parse()
    (lambda t: t.replace("C: calls $1\n*** FLOP", "C: calls $\n*** FLOP"), "unreadable amount"),
    (lambda t: t.replace("A: raises $1 to $2", "A: raises $1 to"), "unreadable amount"),
    (lambda t: t.replace("A: bets $1", "A: bets $nan"), "unreadable amount"),
    (lambda t: t.replace("B: folds", "B: shows [Ad"), "no cards in"),
    (lambda t: t.replace("Seat 2: B ($50 in", "Seat 2: B ($5.0.0 in"), "corrupt seat line"),
    # which fault is reported when a hand has several: the shape of the hand first ...
    (lambda t: t.replace("A: bets $2", "A: bets $5").split("*** SUMMARY")[0], "truncated"),
    (lambda t: t.replace("C: checks\nA: bets $1", "C: checks\nA: bets $3").replace("*** TURN ***", "*** RIVER ***"),
     "out of order"),
    (lambda t: t.replace("A: bets $2", "A: bets $5").replace("Total pot", "Totally"), "no 'Total pot"),
    # ... then the first betting fault in the order of the lines
    (lambda t: t.replace("C: checks\nA: bets $1", "C: checks\nA: bets $3").replace("A: bets $2", "A: bets $5"),
     "A bets $3 on the flop"),
])
def test_faults_are_issues_and_the_shape_is_reported_first(tmp_path, bad, reason):
    good = HAND.format(id=1, flop="9d 9c 6h")
    text = bad(HAND.format(id=2, flop="9d 9c 6h")) + "\n" + good.replace("#1:", "#3:")
    hands, issues = _parse(_write(tmp_path, good + "\n" + text))
    assert [h.hand_id for h in hands] == ["1", "3"]
    assert len(issues) == 1 and reason in issues[0].reason, issues


def test_directory_is_not_a_hand_history(tmp_path):
    with pytest.raises(LogFormatError):
        list(PokerStarsParser().parse(str(tmp_path)))


def test_actions_are_the_shared_limit_actions(tmp_path):
    one, = _parse(_write(tmp_path, HAND.format(id=1, flop="9d 9c 6h")))[0]
    two, = _parse(_write(tmp_path, HAND.format(id=2, flop="9d 9c 6h")))[0]
    assert all(a is b for a, b in zip(one.actions, two.actions))
    assert one.actions[0] is limit_action(0, 2, "r") and one.actions[0] == Action(0, 2, "r", None, False)


def test_damaged_real_hands_never_raise(tmp_path):
    """Lines dropped, doubled, moved or with a digit or letter changed: every hand is read
    (and then balances to the rake) or reported, never an exception out of parse()."""
    import random

    rng = random.Random(20240611)
    hands = [shared_path("pokerstars_fl", *n.split("/")).read_text(encoding="utf-8-sig").split("\n")
             for n in sorted(FILES)]
    read = reported = 0
    for _ in range(300):
        lines = list(rng.choice(hands))
        for _ in range(rng.randint(1, 3)):
            j = rng.randrange(len(lines))
            op = rng.randrange(5)
            if op == 0:
                del lines[j]
            elif op == 1:
                lines.insert(j, lines[j])
            elif op == 2:
                lines.insert(rng.randrange(len(lines)), lines.pop(j))
            else:
                spots = [i for i, ch in enumerate(lines[j]) if (ch.isdigit() if op == 3 else ch.isalpha())]
                if spots:
                    i = rng.choice(spots)
                    lines[j] = lines[j][:i] + rng.choice("0123456789" if op == 3 else "acdhsxAKQJT") + lines[j][i + 1:]
        for r in PokerStarsParser().parse(_write(tmp_path, "\n".join(lines))):
            assert isinstance(r, (HandRecord, ParseIssue))
            if isinstance(r, HandRecord):
                read += 1
                assert abs(sum(r.payoffs) + r.extra["rake"]) < 1e-6
                assert len(set(r.board) | {c for h in r.hole_cards if h for c in h}) == (
                    len(r.board) + 2 * r.known_hole_cards)
            else:
                reported += 1
    assert read > 0 and reported > 0


def test_a_line_not_understood_inside_a_hand_skips_it_naming_the_line(tmp_path):
    """A first-time user's report: a garbage line inside a hand was ignored (the hand read, no
    note). The house rule: a malformed hand is skipped and reported with file and line, here the
    line's own, with what was not understood; the hands around it read."""
    good = HAND.format(id=1, flop="9d 9c 6h")
    for before, where in (("A: raises $1 to $2", "body"), ("Board [", "summary")):
        bad = HAND.format(id=2, flop="9d 9c 6h").replace(before, "zq!! 17 garbage\n" + before, 1)
        text = good + "\n" + bad + "\n" + good.replace("#1:", "#3:")
        hands, issues = _parse(_write(tmp_path, text))
        assert [h.hand_id for h in hands] == ["1", "3"], where
        line = text.split("\n").index("zq!! 17 garbage") + 1
        assert [str(i) for i in issues] == [f"{tmp_path / 'hh.txt'}:{line}: (hand 2): line not understood: "
                                            "'zq!! 17 garbage'"], where


def test_the_clients_notes_about_the_table_are_no_fault(tmp_path):
    """Joins, leaves, sitting out, chat and the like (by seated players or not) are what the
    client writes about the table: the hand reads as without them."""
    notes = ["D joins the table at seat #4", "B leaves the table", "E: sits out", "E is sitting out",
             'A said, "nh"', "C is disconnected", "C is connected", "C has timed out", "C has returned",
             "Betting is capped", "E will be allowed to play after the button"]
    plain = _parse(_write(tmp_path, HAND.format(id=1, flop="9d 9c 6h")))[0][0]
    noted = HAND.format(id=1, flop="9d 9c 6h").replace("*** TURN", "\n".join(notes) + "\n*** TURN", 1)
    hands, issues = _parse(_write(tmp_path, noted))
    assert issues == [] and len(hands) == 1
    assert (hands[0].actions, hands[0].payoffs, hands[0].players) == (plain.actions, plain.payoffs, plain.players)


def test_an_action_by_a_player_whose_seat_line_is_lost_is_named(tmp_path):
    """A seat line replaced by garbage skipped the hand as `chips put in 1.5 - returned 0 != total
    pot 2.5`: the player's lines were dropped without a word. The reason now names the first
    action by the player who has no seat, at its line."""
    path = shared_path("pokerstars_fl", "fpdb-3", "cash", "LHE-10max-USD-1.00-2.00-No_max_seats.txt")
    lines = path.read_text(encoding="utf-8").split("\n")
    k = next(i for i, s in enumerate(lines) if s.startswith("Seat 6: Naughtychic"))
    lines[k] = "zq!! 17 garbage"
    hands, issues = _parse(_write(tmp_path, "\n".join(lines)))
    post = next(i for i, s in enumerate(lines) if s.startswith("Naughtychic: posts small blind")) + 1
    assert hands == [] and [str(i) for i in issues] == [
        f"{tmp_path / 'hh.txt'}:{post}: (hand 2428142447): an action by Naughtychic, who has no seat in the hand's "
        "seat lines: 'Naughtychic: posts small blind $0.50'"]


def test_every_real_export_reads_every_hand_it_read_before(tmp_path):
    """The lines the real exports hold beside the play (chat, joins, sitting out) stay harmless:
    every file of ../shared/data/logs/pokerstars_fl reads all its hands, with no issue."""
    files = sorted(p for p in shared_path("pokerstars_fl").rglob("*.txt"))
    assert len(files) == len(FILES)
    for p in files:
        hands, issues = _parse(str(p))
        assert (len(hands), issues) == (1, []), p
