"""ACPC ``STATE:`` log parser: real dealer logs (limit 2p/3p, Pluribus no-limit 6p) and bad input."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cbr.errors import LogFormatError
from cbr.game import preset
from cbr.logs.acpc import AcpcParser, betting_actions
from cbr.logs.record import Action, HandRecord, ParseIssue
from tests.conftest import given, settings, shared_path, st  # hypothesis, or stand-ins that skip without it


def _read(path) -> tuple[list[HandRecord], list[ParseIssue]]:
    hands, issues = [], []
    for item in AcpcParser().parse(str(path)):
        (hands if isinstance(item, HandRecord) else issues).append(item)
    return hands, issues


def _text(text: str) -> tuple[list[HandRecord], list[ParseIssue]]:
    hands, issues = [], []
    for item in AcpcParser().parse_text(text, "t.log"):
        (hands if isinstance(item, HandRecord) else issues).append(item)
    return hands, issues


# ---- real logs ---------------------------------------------------------------

@pytest.mark.parametrize("name, game, n", [("2p.limit.h1000.r0.log", "holdem.limit.2p", 2),
                                           ("3p.limit.h1000.r0.log", "holdem.limit.3p", 3)])
def test_dealer_limit_logs_counts(name, game, n):
    hands, issues = _read(shared_path("acpc", "dealer_example_limit", name))
    assert issues == []
    assert len(hands) == 1000                      # SOURCE.md: 1,000 hands per file
    assert {h.game.name for h in hands} == {game}
    assert len({h.hand_id for h in hands}) == 1000
    assert all(h.known_hole_cards == n for h in hands)   # the dealer shows every hand
    assert all(h.format == "acpc" and h.n_players == n for h in hands)
    for h in hands:
        assert abs(sum(h.payoffs)) < 1e-9            # chips only move between players
        assert len(h.board) in (0, 3, 4, 5)
        assert all(a.amount is None for a in h.actions)
        per_street = Counter(a.street for a in h.actions if a.kind == "r")
        assert all(per_street[s] <= h.game.raise_cap[s] for s in range(4))
    # SOURCE.md: observed maximum 3 raises pre-flop, 4 on later streets
    top = Counter()
    for h in hands:
        for s, k in Counter(a.street for a in h.actions if a.kind == "r").items():
            top[s] = max(top[s], k)
    assert top[0] == 3 and max(top[s] for s in (1, 2, 3)) == 4


def test_dealer_limit_first_hand_positions():
    hands, _ = _read(shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log"))
    h = hands[0]   # STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2
    assert h.line == 5 and h.hand_id == "0" and h.players == ("p1", "p2")
    # reverse blinds: p2 (small blind, position 1) opens pre-flop, p1 (big blind) after
    assert [(a.street, a.position, a.kind) for a in h.actions] == [
        (0, 1, "c"), (0, 0, "c"), (1, 0, "c"), (1, 1, "r"), (1, 0, "c"),
        (2, 0, "c"), (2, 1, "c"), (3, 0, "c"), (3, 1, "c")]
    assert h.payoffs == (20.0, -20.0)


def test_three_player_fractional_payoffs():
    hands, _ = _read(shared_path("acpc", "dealer_example_limit", "3p.limit.h1000.r0.log"))
    halves = [h for h in hands if any(p != int(p) for p in h.payoffs)]
    assert halves, "the 3p log has split pots with half chips (e.g. -5|2.5|2.5)"
    assert any(h.payoffs == (-5.0, 2.5, 2.5) for h in halves)


def test_pluribus_all_files():
    folder = shared_path("acpc", "pluribus_6p_nolimit")
    files = sorted(folder.glob("*.log"))
    assert len(files) == 92
    hands, issues = [], []
    for f in files:
        h, i = _read(f)
        hands += h
        issues += i
    assert issues == []
    assert len(hands) == 10_000                                 # SOURCE.md
    assert {h.game.name for h in hands} == {"holdem.nolimit.6p"}  # headers and continuations
    assert all(h.known_hole_cards == 6 for h in hands)
    assert all(h.stacks == (10_000.0,) * 6 for h in hands)
    # SOURCE.md: 344 hands contain a raise to 10000 (all-in)
    shoves = [h for h in hands if any(a.kind == "r" and a.all_in for a in h.actions)]
    assert len(shoves) == 344
    names = {p for h in hands for p in h.players}
    # 13 pseudonyms + Pluribus (SOURCE.md says "14 + Pluribus"; the files hold 14 names in all)
    assert "Pluribus" in names and len(names) == 14


def test_pluribus_amounts_explain_payoffs():
    """A player who folded lost exactly what he put in: the blind plus his street totals."""
    hands, _ = _read(shared_path("acpc", "pluribus_6p_nolimit", "sample_game_30.log"))
    checked = 0
    for h in hands:
        put = list(h.game.blinds)
        street_total: dict[tuple[int, int], float] = {}
        for a in h.actions:
            if a.amount is not None:
                street_total[(a.street, a.position)] = a.amount
        put = [0.0] * 6
        for (s, p), amt in street_total.items():
            put[p] += amt
        for p in range(6):
            if (0, p) not in street_total:
                put[p] += h.game.blinds[p]
        for a in h.actions:
            if a.kind == "f":
                assert h.payoffs[a.position] == pytest.approx(-put[a.position]), (h.hand_id, a)
                checked += 1
    assert checked > 300


def test_continuation_file_without_header():
    hands, issues = _read(shared_path("acpc", "pluribus_6p_nolimit", "sample_game_101b.log"))
    assert issues == []
    assert hands[0].hand_id == "92" and hands[0].line == 1      # starts mid-session
    assert hands[0].game == preset("holdem.nolimit.6p")


def test_all_in_empty_rounds():
    hands, issues = _text("STATE:75:fffr225fr1100r2558r6655r10000c///:4s6d|KsKh|Jh5h|9dQc|4hJs|QsQh/5dKdTh/Ac/7d:"
                          "-50|10050|0|0|0|-10000:MrPink|MrOrange|Pluribus|MrBlue|MrBlonde|MrWhite")
    assert issues == []
    [h] = hands
    assert len(h.board) == 5 and max(a.street for a in h.actions) == 0
    # raise to 10000 by position 5 (all-in), called all-in by position 1
    assert h.actions[-2] == Action(0, 5, "r", 10_000.0, True)
    assert h.actions[-1] == Action(0, 1, "c", 10_000.0, True)


def test_no_limit_raise_to_is_converted_to_street_total():
    acts, last, _ = betting_actions(preset("holdem.nolimit.6p"), "ffr200cr1250fcc/cr3175cf/cc/cr10000c")
    flop_raise = [a for a in acts if a.street == 1 and a.kind == "r"][0]
    assert flop_raise.amount == 3175 - 1250 and last == 3
    river = [a for a in acts if a.street == 3]
    assert river[1] == Action(3, river[1].position, "r", 10_000 - 3175, True)


# ---- headers ---------------------------------------------------------------

def test_json_game_header_takes_precedence():
    game = preset("holdem.limit.2p").replace(name="ours", blinds=(2, 1), small_bet=2, big_bet=4)
    text = ("# name/game/hands/seed x holdem.limit.2p.reverse_blinds.game 1 0\n"
            f"# game: {json.dumps(game.to_dict())}\n"
            "STATE:0:rc/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:-4|4:a|b\n")
    [h], issues = _text(text)
    assert issues == [] and h.game == game


def test_without_header_limit_vs_nolimit_inferred():
    hands, issues = _text("STATE:1:cc/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:10|-10:a|b\n"
                          "STATE:2:ffr225fff:3c9s|6d5s|9dTs|2sQs|AdKd|7cTc:-50|-100|0|0|150|0:a|b|c|d|e|f\n"
                          "STATE:3:ffcfcc/ccc/ccc/ccc:3c9s|6d5s|9dTs|2sQs|AdKd|7cTc/2h3h4h/5h/6h:"
                          "-100|200|0|-100|0|0:a|b|c|d|e|f\n")
    assert issues == []
    assert [h.game.name for h in hands] == ["holdem.limit.2p", "holdem.nolimit.6p", "holdem.nolimit.6p"]


def test_header_player_count_mismatch_is_an_issue():
    text = ("# name/game/hands/seed x /a/holdem.limit.2p.reverse_blinds.game 1 0\n"
            "STATE:0:ccc/cc:AhKd|2c2d|3s3h/4c5c6c:5|-5|0:a|b|c\n"
            "STATE:1:f:AhKd|2c2d:5|-5:a|b\n")
    hands, issues = _text(text)
    assert len(hands) == 1 and hands[0].hand_id == "1"
    assert issues[0].line == 2 and "3 players" in issues[0].reason


# ---- bad input ----------------------------------------------------------------

GOOD = "STATE:9:rc/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:20|-20:a|b"


@pytest.mark.parametrize("line, words", [
    ("STATE:1:cc/crc/cc", "truncated"),                                         # truncated line
    ("STATE:1:rc/cc:AhKd|2c2d/Ah4c5c:20|-20:a|b", "dealt twice"),
    ("STATE:1:rc/cc:AhKd|2c2x/3c4c5c:20|-20:a|b", "2c2x"),                        # unknown card
    ("STATE:1:rc/cc:AhKd|2c2d/3c4c5c/6c:20|-20:a|b", "truncated"),              # stops on the turn
    ("STATE:1:rrrrc/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:20|-20:a|b", "more than 3 raises"),
    ("STATE:1:fc:AhKd|2c2d:20|-20:a|b", "after the betting round was over"),
    ("STATE:1:c/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:20|-20:a|b", "ends before every player"),
    ("STATE:1:rc/cc/cc/cc:AhKd|2c2d/3c4c5c/6c:20|-20:a|b", "board cards"),
    ("STATE:1:rx:AhKd|2c2d:20|-20:a|b", "unknown action"),
    ("STATE:1:f:AhKd|2c2d:20|x:a|b", "bad payoffs"),
    ("STATE:1:f:AhKd|2c2d:20:a|b", "1 payoffs"),
    ("STATE:x:f:AhKd|2c2d:20|-20:a|b", "not a number"),
    ("STATE:\u00b3:f:AhKd|2c2d:20|-20:a|b", "not a number"),      # a digit int() cannot read (fuzz)
    ("garbage here", "not an ACPC log line"),
])
def test_bad_lines_become_issues_and_parsing_goes_on(line, words):
    hands, issues = _text(f"{GOOD}\n{line}\n{GOOD.replace(':9:', ':10:')}\n")
    assert [h.hand_id for h in hands] == ["9", "10"]
    assert len(issues) == 1 and issues[0].line == 2 and issues[0].source == "t.log"
    assert words in issues[0].reason, issues[0].reason


def test_raise_amount_in_a_limit_game_is_rejected():
    _, issues = _text("# name/game/hands/seed x holdem.limit.2p.reverse_blinds.game 1 0\n"
                      "STATE:1:r300c/cc/cc/cc:AhKd|2c2d/3c4c5c/6c/7c:20|-20:a|b\n")
    assert "limit game" in issues[0].reason


def test_nolimit_raise_above_stack_is_rejected():
    _, issues = _text("STATE:1:ffr20000fff:3c9s|6d5s|9dTs|2sQs|AdKd|7cTc:-50|-100|0|0|150|0:a|b|c|d|e|f")
    assert "more than the stack" in issues[0].reason


def test_repeated_hand_numbers_get_unique_ids():
    hands, _ = _text(f"{GOOD}\n{GOOD}\n{GOOD}\n")
    assert [h.hand_id for h in hands] == ["9", "9.2", "9.3"]


def test_latin1_bytes_are_reported_and_parsing_goes_on(tmp_path: Path):
    path = tmp_path / "x.log"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode() + b"\n# caf\xe9\n" + GOOD.replace(":9:", ":10:").encode())
    hands, issues = _read(path)
    assert len(hands) == 2
    assert len(issues) == 1 and issues[0].line == 2 and "latin-1" in issues[0].reason


def test_unreadable_paths_raise(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        list(AcpcParser().parse(str(tmp_path / "missing.log")))
    with pytest.raises(LogFormatError):
        list(AcpcParser().parse(str(tmp_path)))


def test_sniff():
    p = AcpcParser()
    assert p.sniff("x.log", "#--t_response 1\n" + GOOD)
    assert not p.sniff("x.log", "variant = 'NT'\n")
    assert not p.sniff("x.txt", "PokerStars Hand #1: Hold'em Limit")


def test_records_replay_through_the_rules_engine():
    from cbr.logs.replay import replay

    hands = []
    for name in ("2p.limit.h1000.r0.log", "3p.limit.h1000.r0.log"):
        hands += _read(shared_path("acpc", "dealer_example_limit", name))[0]
    hands += _read(shared_path("acpc", "pluribus_6p_nolimit", "sample_game_30.log"))[0]
    for h in hands:
        points = replay(h)
        assert len(points) == len(h.actions), h.where


# ---- all-in EV payoffs (ACPC 2017 convention) ----------------------------------

_NL2_HEADER = "# name/game/hands/seed ev holdem.nolimit.2p.reverse_blinds.game 3 0\n"


def _fmt(x: float) -> str:
    """A value as the ACPC dealer writes it: %.6f, trailing zeros and point removed."""
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _equity_by_enumeration(hero: str, villain: str, flop: str) -> float:
    """Hero's share of a heads-up pot over every turn and river, card by card (no numpy)."""
    from itertools import combinations

    from evaluator_ext import evaluate
    from evaluator_ext.cards import parse_cards

    h, v, b = parse_cards(hero), parse_cards(villain), parse_cards(flop)
    deck = [c for c in range(52) if c not in (*h, *v, *b)]
    share = 0.0
    runs = 0
    for extra in combinations(deck, 2):
        mine, theirs = evaluate((*h, *b, *extra)), evaluate((*v, *b, *extra))
        share += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
        runs += 1
    return share / runs


def _ev_log(tmp_path: Path, pay0: str, pay1: str) -> Path:
    """A generated no-limit log: a plain hand, a flop all-in paid as the log says, a hand after."""
    path = tmp_path / "ev.log"
    path.write_text(
        _NL2_HEADER
        + "STATE:0:r300f:AhKd|QsQc:-100|100:alice|bob\n"
        + f"STATE:1:cc/r20000c//:AhKd|QsQc/2c7d9h/Js/3d:{pay0}|{pay1}:bob|alice\n"
        + "STATE:2:cc/cc/cc/cc:AhKd|QsQc/2c7d9h/Js/3d:-100|100:alice|bob\n"
        + "SCORE:0|0:alice|bob\n")
    return path


def test_all_in_hand_paid_at_its_expected_value_is_read_with_a_note(tmp_path: Path):
    from cbr.logs.replay import replay_hand

    equity = _equity_by_enumeration("AhKd", "QsQc", "2c7d9h")     # bob's AhKd against QsQc
    ev = 40_000 * equity - 20_000
    hands, issues = _read(_ev_log(tmp_path, _fmt(ev), _fmt(-ev)))
    assert issues == []
    assert [h.hand_id for h in hands] == ["0", "1", "2"]
    h = hands[1]
    assert h.extra["payoffs_convention"] == "all-in EV"
    assert h.extra["logged_payoffs"] == (float(_fmt(ev)), float(_fmt(-ev)))
    [note] = h.extra["notes"]
    assert "all-in expected value" in note and "flop" in note
    # the dealt board (Js 3d) gives the queens the pot: the record replays to that result
    assert h.payoffs == (-20_000.0, 20_000.0)
    assert replay_hand(h).payoffs == h.payoffs
    for other in (hands[0], hands[2]):
        assert "notes" not in other.extra
        replay_hand(other)
    from cbr.logs.inspect import inspect_logs

    report = inspect_logs([str(tmp_path / "ev.log")])       # `cbr logs inspect` shows the note
    assert report.hands_read == 3 and report.skipped == []
    assert [(n.line, "all-in expected value" in n.reason) for n in report.notes] == [(3, True)]


def test_all_in_hand_with_a_wrong_payoff_is_still_skipped(tmp_path: Path):
    from cbr.errors import GameError
    from cbr.logs.replay import replay_hand

    equity = _equity_by_enumeration("AhKd", "QsQc", "2c7d9h")
    ev = 40_000 * equity - 20_000 + 3.0            # three chips off the all-in EV
    hands, issues = _read(_ev_log(tmp_path, _fmt(ev), _fmt(-ev)))
    assert issues == []
    h = hands[1]
    assert "notes" not in h.extra and h.payoffs == (float(_fmt(ev)), float(_fmt(-ev)))
    with pytest.raises(GameError, match="payoffs do not match"):
        replay_hand(h)
    from cbr.logs.inspect import inspect_logs

    report = inspect_logs([str(tmp_path / "ev.log")])
    assert report.hands_read == 2
    assert [(i.line, "payoffs do not match" in i.reason) for i in report.skipped] == [(3, True)]


def test_all_in_hand_paid_by_the_cards_has_no_note(tmp_path: Path):
    hands, issues = _read(_ev_log(tmp_path, "-20000", "20000"))
    assert issues == [] and "notes" not in hands[1].extra
    assert hands[1].payoffs == (-20_000.0, 20_000.0)


def test_pluribus_all_ins_are_paid_by_the_cards():
    """Pluribus logs pay the dealt cards: none of their all-ins before the river is an EV payoff."""
    folder = shared_path("acpc", "pluribus_6p_nolimit")
    early_all_ins = 0
    for f in sorted(folder.glob("*.log")):
        for h in _read(f)[0]:
            assert "payoffs_convention" not in h.extra, h.where
            if any(a.all_in for a in h.actions) and h.actions[-1].street < 3 and len(h.board) == 5:
                early_all_ins += 1
    assert early_all_ins > 50


def test_three_way_all_in_with_a_folded_player_at_its_expected_value():
    """Three players, one folds after putting chips in: his chips stay in the pot the two
    all-in players share by equity; the deck is the one less every hole card the log shows."""
    from itertools import combinations

    from evaluator_ext import evaluate
    from evaluator_ext.cards import parse_cards

    holes = {"p0": "AhKd", "p1": "QsQc", "p2": "7h2s"}
    flop = "2c7d9h"
    # pre-flop: position 2 raises to 300, 0 and 1 call; flop: 0 raises to 20000 (all in),
    # 1 calls all in, 2 folds
    h0, h1 = parse_cards(holes["p0"]), parse_cards(holes["p1"])
    dead = [*h0, *h1, *parse_cards(holes["p2"]), *parse_cards(flop)]
    deck = [c for c in range(52) if c not in dead]
    share = runs = 0.0
    for extra in combinations(deck, 2):
        a, b = evaluate((*h0, *parse_cards(flop), *extra)), evaluate((*h1, *parse_cards(flop), *extra))
        share += 1.0 if a > b else 0.5 if a == b else 0.0
        runs += 1
    pot = 20_000 * 2 + 300
    ev0 = pot * share / runs - 20_000
    ev1 = pot * (1 - share / runs) - 20_000
    line = (f"STATE:4:r300cc/r20000cf//:{holes['p0']}|{holes['p1']}|{holes['p2']}/{flop}/Js/3d:"
            f"{_fmt(ev0)}|{_fmt(ev1)}|-300:p0|p1|p2")
    hands, issues = _text("# name/game/hands/seed x holdem.nolimit.3p.game 1 0\n" + line + "\n")
    assert issues == []
    [h] = hands
    assert h.extra.get("payoffs_convention") == "all-in EV", h.extra
    assert "every hole card the log shows" in h.extra["notes"][0]


def test_truncated_last_line_is_reported(tmp_path: Path):
    """A log cut off inside the last player's name is a skipped hand with file:line, not a read one."""
    full = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log").read_text()
    lines = full.splitlines()
    last_state = max(i for i, x in enumerate(lines) if x.startswith("STATE:"))
    cut = "\n".join(lines[:last_state + 1])[:-1]          # "...|p2" -> "...|p"
    path = tmp_path / "cut.log"
    path.write_text(cut)
    hands, issues = _read(path)
    assert len(hands) == 999
    [issue] = issues
    assert issue.line == last_state + 1 and issue.source == str(path)
    assert "truncated last line" in issue.reason and "'p'" in issue.reason
    # the same line with its line end, or cut after a whole name, is a good hand
    path.write_text(cut + "2")
    assert len(_read(path)[0]) == 1000 and _read(path)[1] == []


def test_empty_player_name_is_an_issue():
    _, issues = _text("STATE:1:f:AhKd|2c2d:5|-5:a|\n")
    assert "empty player name" in issues[0].reason


# ---- one betting engine: the reader plays the betting on HandState --------------------

def test_a_no_limit_raise_below_the_minimum_is_refused_when_read():
    """The reader's betting is the rules engine's: a raise the engine refuses (here to 114,
    14 more than the 100 to call, when the minimum raise is to 200) is a skipped hand with
    the reason, not a hand replay rejects later."""
    hands, issues = _text(_NL2_HEADER + "STATE:0:cc/r114f:AhKd|QsQc/2c7d9h:100|-100:a|b\n")
    assert hands == []
    assert [i.reason for i in issues] == ["raise to 114 is less than the minimum raise, to 200 (unless all-in)"]
    # an all-in for less than a full raise (to 150, the minimum is to 200) is allowed
    acts, last, settled = betting_actions(preset("holdem.nolimit.6p").replace(stack=150), "r150fffcc")
    assert acts[0] == Action(0, 2, "r", 150.0, True) and settled is True and last == 0


def _random_history(game, seed: int):
    """A HandState played to a random point by legal actions (no-limit raises of random
    legal sizes) and the ACPC betting string it shows."""
    import random

    from cbr.game import HandState

    rng = random.Random(seed)
    s = HandState(game)
    while not s.is_over and rng.random() > 0.01:
        if s.needs_board:
            s.deal_board({0: (0, 1, 2), 1: (3,), 2: (4,)}[s.street])
            continue
        kind = rng.choice(s.legal_actions())
        amount = None
        if kind == "r" and game.betting == "nolimit":
            lo, hi = s.min_raise_to(), s.max_raise_to()
            amount = rng.choice([lo, hi, float(rng.randint(int(lo), int(hi)))])
        s.act(kind, amount)
    return s


@given(st.integers(0, 10**9), st.sampled_from(["holdem.limit.2p", "holdem.limit.3p", "holdem.nolimit.6p",
                                               "irc.10-20.9p"]))
@settings(max_examples=300, deadline=None)
def test_betting_strings_read_back_as_the_engine_played_them(seed, name):
    game = preset(name)
    s = _random_history(game, seed)
    try:
        acts, last, settled = betting_actions(game, s.history)
    except ValueError as exc:          # a history cut before the hand ended
        assert not s.is_over and "truncated" in str(exc), exc
        free = sum(not f and not a for f, a in zip(s.folded, s.all_in))
        assert s.to_act is not None or (free >= 2 and s.street < 3), exc
        return
    assert acts == tuple(s.actions)
    assert last == s.street
    free = sum(not f and not a for f, a in zip(s.folded, s.all_in))
    assert settled == (s.folded.count(False) <= 1 or free <= 1)
