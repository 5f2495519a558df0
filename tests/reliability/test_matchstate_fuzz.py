"""Fuzzed MATCHSTATE strings: a decision point consistent with the string, or one line of
CBRError; never another exception, never a silently dropped part of the string.

Valid strings come from the real ACPC limit logs (../shared) and from generated matches;
each is mutated with a seeded random generator (cards, betting, board, separators, huge
numbers). The short form tries about 3,000 strings in a few seconds;
``CBR_RELIABILITY=long`` tries 20 times more.
"""
from __future__ import annotations

import itertools
import random
import time
from pathlib import Path

import pytest

from cbr.acpc.matchstate import from_matchstate
from cbr.errors import CBRError
from cbr.game.gamedef import BOARD_SIZES, preset
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.detect import read_logs
from cbr.play.match import run_match
from evaluator_ext.cards import parse_cards
from tests.acpc.test_matchstate import decisions, matchstate_of
from tests.conftest import shared_path
from tests.reliability import reliability_rounds

RANKS, SUITS = "23456789TJQKA", "cdhs"
TIME_LIMIT = 60.0  # seconds for one test, whatever the rounds


def valid_matchstates(records, limit: int) -> list[tuple[str, object]]:
    out = []
    for record, i, dp in decisions(records):
        out.append((matchstate_of(record, i, dp), record.game))
        if len(out) >= limit:
            break
    return out


def mutate(text: str, rng: random.Random) -> str:
    """One to three random edits of a MATCHSTATE string."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(12)
        fields = text.split(":")
        if kind == 0 and text:  # replace a character
            i = rng.randrange(len(text))
            text = text[:i] + rng.choice(RANKS + SUITS + "crfk/|:0123456789x \u0661") + text[i + 1:]
        elif kind == 1 and text:  # delete a character
            i = rng.randrange(len(text))
            text = text[:i] + text[i + 1:]
        elif kind == 2:  # insert a separator
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(":|/") + text[i:]
        elif kind == 3:  # an extra board card or street
            text += rng.choice(["", "/"]) + rng.choice(RANKS) + rng.choice(SUITS)
        elif kind == 4 and len(fields) >= 5:  # more or less betting
            b = fields[3]
            fields[3] = rng.choice([b + rng.choice("crf/"), b[:-1], b + b, b.replace("/", ""), b + "/"])
            text = ":".join(fields)
        elif kind == 5 and len(fields) >= 3:  # huge or negative numbers
            j = rng.choice([1, 2])
            fields[j] = rng.choice(["9" * rng.randint(10, 400), "-1", str(2**63), "1e9", " 1", ""])
            text = ":".join(fields)
        elif kind == 6 and len(fields) >= 4:  # raise amounts
            fields[3] += "r" + "9" * rng.randint(1, 40)
            text = ":".join(fields)
        elif kind == 7:  # a random card anywhere
            i = rng.randrange(len(text) + 1)
            text = text[:i] + rng.choice(RANKS) + rng.choice(SUITS) + text[i:]
        elif kind == 8 and "/" in text.split(":")[-1]:  # drop a board street
            text = text[:text.rindex("/")]
        elif kind == 9:  # swap two characters
            if len(text) > 1:
                i = rng.randrange(len(text) - 1)
                text = text[:i] + text[i + 1] + text[i] + text[i + 2:]
        elif kind == 10:  # truncate
            text = text[: rng.randrange(len(text) + 1)]
        else:  # a long run of one token
            text = text.replace(":", ":" + rng.choice("cr") * rng.randint(1, 30), 1) if rng.random() < 0.5 else text
    return text


def check_one(text: str, game) -> bool:
    """True if accepted (and consistent with ``text``), False if refused with one CBRError line."""
    try:
        dp = from_matchstate(text, game)
    except CBRError as exc:
        message = str(exc)
        assert message and "\n" not in message and len(message) < 400, (text, message)
        return False
    # accepted: every part of the string is in the decision point
    body = text.strip()[len("MATCHSTATE:"):] if text.strip().startswith("MATCHSTATE:") else text.strip()
    position, _hand, betting, cards = body.split(":")
    assert dp.position == int(position)
    segments = cards.split("/")
    assert dp.hole == tuple(parse_cards(segments[0].split("|")[int(position)]))
    board = tuple(parse_cards("".join(segments[1:])))
    assert dp.board == board, (text, "board")
    assert len(dp.board) == BOARD_SIZES[dp.street] and betting.count("/") == dp.street, (text, "street")
    assert dp.history == betting.replace("k", "c"), (text, "betting")
    return True


def fuzz(sources: list[tuple[str, object]], rounds: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    accepted = refused = 0
    start = time.monotonic()
    for _ in range(rounds):
        text, game = rng.choice(sources)
        if check_one(mutate(text, rng), game):
            accepted += 1
        else:
            refused += 1
        if time.monotonic() - start > TIME_LIMIT:
            break
    return accepted, refused


def test_fuzzed_matchstates_from_real_acpc_limit_logs() -> None:
    folder = shared_path("acpc", "dealer_example_limit")
    sources = []
    for log in sorted(folder.glob("*.log")):
        sources += valid_matchstates(itertools.islice(read_logs([log]), 150), 600)
    assert all(check_one(text, game) for text, game in sources[:200])  # the unmutated strings are accepted
    accepted, refused = fuzz(sources, reliability_rounds(2000), seed=7)
    assert accepted > 20 and refused > 500, (accepted, refused)


def test_fuzzed_matchstates_from_generated_matches(tmp_path: Path) -> None:
    with AcpcLogWriter(tmp_path / "p3.log") as log:
        run_match(["random", "call", "lag"], 40, seed=11, log=log)
    with AcpcLogWriter(tmp_path / "hu.log") as log:
        run_match(["random", "raise"], 40, seed=12, log=log)
    sources = valid_matchstates(read_logs([tmp_path]), 800)
    accepted, refused = fuzz(sources, reliability_rounds(1000), seed=8)
    assert accepted > 10 and refused > 200, (accepted, refused)


@pytest.mark.parametrize("text", [
    "MATCHSTATE:1:0::|AsAh/2c3c4c",            # a flop with pre-flop betting
    "MATCHSTATE:0:1:cc/:AsKs|/2c3c4c5c",        # four flop cards
    "MATCHSTATE:0:1:cc/cc/:AsKs|/2c3c4c/5c/6c",  # a river card the betting has not reached
    "MATCHSTATE:1:1:cc/cr:|AsKs/2c3c4c7h",       # the turn card glued to the flop
])
def test_extra_board_cards_are_refused(text: str) -> None:
    assert check_one(text, preset("holdem.limit.2p")) is False
