"""PHH (TOML) parser: the real PHH files (WSOP, Pluribus, HandHQ), PokerKit and ACPC cross-checks, bad input."""
from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import pytest

from cbr.logs.acpc import AcpcParser
from cbr.logs.phh import PhhParser
from cbr.logs.record import HandRecord, ParseIssue
from tests.conftest import require_module, shared_path

HANDHQ_ABS = ("phh", "data", "handhq", "ABS-2009-07-01_2009-07-23_1000NLH_OBFU", "10",
              "abs NLH handhq_1-OBFUSCATED.first10.phhs")
HANDHQ_PS = ("phh", "data", "handhq", "PS-2009-07-01_2009-07-23_1000NLH_OBFU", "10",
             "ps NLH handhq_1-OBFUSCATED.first11.phhs")
FT_FILES = ("01-39-18", "01-42-31", "01-44-49", "01-45-43", "01-46-42", "01-47-38", "01-51-27")


def _read(path) -> tuple[list[HandRecord], list[ParseIssue]]:
    hands, issues = [], []
    for item in PhhParser().parse(str(path)):
        (hands if isinstance(item, HandRecord) else issues).append(item)
    return hands, issues


def _text(text: str, source: str = "t.phh") -> tuple[list[HandRecord], list[ParseIssue]]:
    hands, issues = [], []
    for item in PhhParser().parse_text(text, source):
        (hands if isinstance(item, HandRecord) else issues).append(item)
    return hands, issues


def _all(folder: Path) -> tuple[list[HandRecord], list[ParseIssue]]:
    hands, issues = [], []
    for f in sorted(folder.rglob("*.phh*")):
        h, i = _read(f)
        hands += h
        issues += i
    return hands, issues


def test_dataset_counts():
    hands, issues = _all(shared_path("phh"))
    assert len(hands) + len(issues) == 190                     # SOURCE.md: 190 hands
    variants = Counter(h.extra["variant"] for h in hands)
    assert variants == {"FT": 7, "NT": 114}
    skipped = Counter(i.reason.split("'")[1] for i in issues)
    # SOURCE.md's WSOP table: PO 7, FO/8 14, F7S 13, F7S/8 7, FR 10, F2L3D 7, N2L1D 7; the five
    # historical files are 1 NT + FB, PO, F2L3D, NS (SOURCE.md says "4 NT + 1 badugi").
    assert skipped == {"PO": 8, "FO/8": 14, "F7S": 13, "F7S/8": 7, "FR": 10, "F2L3D": 8, "N2L1D": 7,
                       "FB": 1, "NS": 1}
    assert all("not limit or no-limit hold'em" in i.reason for i in issues)


def test_fixed_limit_wsop_hands():
    folder = shared_path("phh", "data", "wsop", "2023", "43", "5")
    hands = [h for f in FT_FILES for h in _read(folder / f"{f}.phh")[0]]
    assert len(hands) == 7
    assert all(h.game.betting == "limit" and h.game.raise_cap == (3, 4, 4, 4) for h in hands)
    assert {(h.game.small_bet, h.game.big_bet, h.game.blinds[:2]) for h in hands} == \
        {(200_000.0, 400_000.0, (100_000.0, 200_000.0))}
    assert all(a.amount is None for h in hands for a in h.actions)
    by_id = {h.source.rsplit("/", 1)[1]: h for h in hands}
    assert by_id["01-42-31.phh"].hole_cards[2] is None        # p3 ????
    assert by_id["01-44-49.phh"].hole_cards[3] is None        # p4 ????
    assert sum(h.known_hole_cards for h in hands) == 7 * 5 - 2
    first = by_id["01-39-18.phh"]                               # the SOURCE.md example
    assert [(a.street, a.position, a.kind) for a in first.actions] == [
        (0, 2, "f"), (0, 3, "r"), (0, 4, "f"), (0, 0, "f"), (0, 1, "c"),
        (1, 1, "c"), (1, 3, "r"), (1, 1, "r"), (1, 3, "c"), (2, 1, "r"), (2, 3, "c"), (3, 1, "c"), (3, 3, "c")]
    for h in hands:
        assert sum(h.payoffs) == 0                              # finishing - starting stacks


def test_heads_up_positions_reverse_blinds():
    hands, issues = _read(shared_path(*HANDHQ_ABS))
    assert len(hands) == 10 and issues == []
    h8, h9 = hands[7], hands[8]            # [8]: 'p2 f' -> winnings = [15, 0]; [9]: p2 completes
    for h in (h8, h9):
        assert h.n_players == 2 and h.game.first_to_act == (0, 1, 1, 1)
        assert h.actions[0].position == 0      # p2 = button = small blind acts first pre-flop
    assert h8.actions[0].kind == "f" and h9.actions[0].kind == "c" and h9.actions[0].amount == 10
    assert h8.payoffs == (-5.0, 5.0)           # p2 loses the small blind to p1


def test_handhq_winnings_and_unknown_cards():
    hands, _ = _read(shared_path(*HANDHQ_ABS))
    first = hands[0]   # p3 raises to 47.50, all fold; winnings 37.50 (rake 2.50 taken)
    assert first.game.antes == (2.5,) * 6
    assert first.known_hole_cards == 0
    assert first.payoffs[2] == pytest.approx(37.5 - 12.5)      # ante + the big blind's 10 called
    assert sum(first.payoffs) == pytest.approx(-2.5)
    ps_hands, ps_issues = _read(shared_path(*HANDHQ_PS))
    assert len(ps_hands) == 11 and ps_issues == []
    assert ps_hands[0].payoffs is None                          # winnings all zero: unknown
    assert ps_hands[10].board and len(ps_hands[10].board) == 5  # repeated 'sm ????' tolerated


def test_a_header_before_the_first_table_is_lines_skipped_and_a_damaged_first_hand_a_hand(tmp_path):
    """A note before the first ``[n]`` table of a real ``.phhs`` was a hand skipped in every report
    (`cbr build`, `cbr logs inspect`): it is a line skipped (each such line once; a TOML comment
    and blank lines are no issue), every hand is read. A first hand whose ``[1]`` line is damaged
    is still a hand skipped, at its first line, beside the note's lines."""
    real = shared_path(*HANDHQ_PS).read_text(encoding="utf-8")
    head = "# HandHQ hands, obfuscated\nexported by a tool on 2009-07-23\nsecond line of the note\n\n"
    path = tmp_path / "ps.phhs"
    path.write_text(head + real, encoding="utf-8")
    hands, issues = _read(path)
    assert len(hands) == 11
    assert [(i.line, i.not_a_hand, i.hand_skipped) for i in issues] == [(2, True, False), (3, True, False)]
    assert issues[0].reason == "text before the first hand, not a hand: 'exported by a tool on 2009-07-23'"
    assert real.startswith("[1]\n")
    path.write_text(head + "[1\n" + real[len("[1]\n"):], encoding="utf-8")  # the first table's header damaged
    hands, issues = _read(path)
    assert len(hands) == 10 and hands[0].hand_id == "2"
    assert [(i.line, i.not_a_hand, i.hand_skipped) for i in issues] == [(2, True, False), (3, True, False),
                                                                        (5, False, True)]
    assert issues[2].reason == "a hand without its [n] table line (damaged?): '[1'"


def test_pluribus_phh_equals_acpc():
    """The same 80 hands, written by two different tools, must read the same."""
    acpc = {h.hand_id: h for h in AcpcParser().parse(str(shared_path("acpc", "pluribus_6p_nolimit",
                                                                         "sample_game_30.log")))}
    folder = shared_path("phh", "data", "pluribus", "30")
    for n in range(80):
        [p], _ = _read(folder / f"{n}.phh")
        a = acpc[str(n)]
        assert p.players == a.players
        assert p.hole_cards == a.hole_cards, n
        assert p.board == a.board, n
        assert [(x.street, x.position, x.kind) for x in p.actions] == \
            [(x.street, x.position, x.kind) for x in a.actions], n
        assert [x.amount for x in p.actions] == [x.amount for x in a.actions], n
        assert p.payoffs == a.payoffs, n


def _pokerkit_actions(hh) -> list[tuple[int, str, float | None]]:
    """(player index, kind, street total for raises) from PokerKit's own reading of a hand."""
    from pokerkit import CheckingOrCalling, CompletionBettingOrRaisingTo, Folding

    out = []
    state = None
    for state in hh:
        pass
    for op in state.operations:
        if isinstance(op, Folding):
            out.append((op.player_index, "f", None))
        elif isinstance(op, CheckingOrCalling):
            out.append((op.player_index, "c", None))
        elif isinstance(op, CompletionBettingOrRaisingTo):
            out.append((op.player_index, "r", float(op.amount)))
    return out


def test_actions_agree_with_pokerkit():
    pokerkit = require_module("pokerkit")
    paths = [shared_path("phh", "data", "wsop", "2023", "43", "5", f"{f}.phh") for f in FT_FILES]
    paths += sorted(shared_path("phh", "data", "pluribus", "30").glob("*.phh"))[:20]
    checked = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in paths + [shared_path(*HANDHQ_ABS)]:
            with open(path, "rb") as fh:
                theirs = list(pokerkit.HandHistory.load_all(fh)) if path.suffix == ".phhs" \
                    else [pokerkit.HandHistory.load(fh)]
            ours, _ = _read(path)
            for hh, rec in zip(theirs, ours):
                n = rec.n_players
                pos = (lambda i: 1 - i) if n == 2 else (lambda i: i)   # heads-up: p2 is position 0
                expect = [(pos(i), k, amt if rec.game.betting == "nolimit" else None)
                          for i, k, amt in _pokerkit_actions(hh)]
                got = [(a.position, a.kind, a.amount if a.kind == "r" else None) for a in rec.actions]
                assert got == expect, rec.where
                checked += 1
    assert checked == 7 + 20 + 10


# ---- bad input ----------------------------------------------------------------

HAND = """variant = 'NT'
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 100, 100]
actions = [{actions}]
"""


def _hand(actions: str) -> str:
    return HAND.format(actions=actions)


@pytest.mark.parametrize("actions, words", [
    ("'d dh p1 AhKd', 'd dh p2 AhQd', 'd dh p3 ????', 'p3 f', 'p1 f'", "dealt twice"),
    ("'d dh p1 AhKx', 'p3 f', 'p1 f'", "unknown card"),
    ("'d dh p9 AhKd', 'p3 f', 'p1 f'", "unknown player"),
    ("'d dh p\u00b3 AhKd', 'p3 f', 'p1 f'", "unknown player"),     # a digit int() cannot read (fuzz)
    ("'p3 f', 'p3 cc'", "acts after folding"),
    ("'p3 cbr 1'", "not above the bet"),
    ("'p3 cbr 500'", "more than p3's stack"),
    ("'p3 sd'", "does not exist in hold'em"),
    ("'p3 cc', 'p1 cc', 'p2 cc', 'd db AhKd'", "board cards dealt"),
])
def test_bad_hands_become_issues(actions, words):
    hands, issues = _text(_hand(actions))
    assert hands == [] and len(issues) == 1 and issues[0].line == 1
    assert words in issues[0].reason, issues[0].reason


def test_phhs_bad_table_does_not_stop_the_others():
    good = _hand("'p3 f', 'p1 f'")
    text = f"[1]\n{good}\n[2]\nvariant = 'NT'\nactions = ['p1 f'\n\n[3]\n{good}\n[4]\nvariant = 'FR'\n[5]\n" + \
        good[: len(good) // 2]
    hands, issues = _text(text, "t.phhs")
    assert [h.hand_id for h in hands] == ["1", "3"]
    assert [h.line for h in hands] == [1, 13]
    reasons = {i.line: i.reason for i in issues}
    assert "not valid TOML" in reasons[9]
    assert "'FR' (razz)" in reasons[21]
    assert "not valid TOML" in reasons[23]                                       # the truncated last hand


def test_missing_fields_and_straddle():
    _, issues = _text("variant = 'NT'\nactions = []\n")
    assert "starting_stacks" in issues[0].reason
    hands, _ = _text(HAND.replace("[1, 2, 0]", "[1, 2, 4]").format(actions="'p1 f', 'p2 f'"))
    assert hands[0].game.first_to_act == (0, 0, 0, 0)           # after the straddle: p1 opens


def test_shown_cards_fill_unknown_holes():
    hands, _ = _text(_hand("'d dh p1 ????', 'd dh p2 ????', 'd dh p3 ????', 'p3 cc', 'p1 cc', 'p2 cc', "
                           "'d db 2c3c4c', 'p1 cc', 'p2 cc', 'p3 cc', 'd db 5c', 'p1 cc', 'p2 cc', 'p3 cc', "
                           "'d db 6c', 'p1 cc', 'p2 cc', 'p3 cc', 'p1 sm AhKd', 'p2 sm'"))
    assert hands[0].hole_cards == ((50, 45), None, None)


def test_latin1_file(tmp_path: Path):
    path = tmp_path / "x.phh"
    path.write_bytes(b"# caf\xe9\n" + _hand("'p3 f', 'p1 f'").encode())
    hands, issues = _read(path)
    assert len(hands) == 1 and "latin-1" in issues[0].reason


def test_sniff():
    p = PhhParser()
    assert p.sniff("a.phhs", "")
    assert p.sniff("a.txt", "variant = 'NT'\nactions = []\n")
    assert not p.sniff("a.log", "STATE:0:f:AhKd|2c2d:5|-5:a|b")


def test_records_replay_through_the_rules_engine():
    from cbr.logs.replay import replay

    folder = shared_path("phh", "data")
    hands = _all(folder / "pluribus")[0] + _all(folder / "handhq")[0]
    hands += [h for f in FT_FILES for h in _read(folder / "wsop" / "2023" / "43" / "5" / f"{f}.phh")[0]]
    for h in hands:
        assert len(replay(h)) <= len(h.actions)
