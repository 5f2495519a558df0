"""Mutated real logs: every parser survives damage, reports it with ``file:line``, and keeps
reading the hands the damage did not touch.

Real logs of each format (ACPC, PokerStars, PHH, the IRC database) from ../shared are
damaged with seeded random mutations -- the file cut at a random byte, a line deleted,
duplicated or swapped with another, a bit flipped, a line of garbage inserted, a number or a
card changed -- and read again. For every mutation:

- reading never raises: it yields hands and :class:`ParseIssue` items whose ``file:line``
  names the damaged file and a line in it;
- every hand that differs from the undamaged file's hands either replays through the rules
  engine (:func:`cbr.logs.replay.replay_hand`) or is rejected by it with a
  :class:`~cbr.errors.CBRError` (a skip with a reason), never another exception;
- every hand whose lines (and the lines next to them) were not touched is still read, the same.

Rounds per format: ``reliability_rounds(25)``, half that for the IRC database (a few
seconds each; ``CBR_RELIABILITY=long`` for 20 times more; ``CBR_MUTATION_SEED=N`` for other mutations). A failure names the seed and
the mutation, so it can be replayed.
"""
from __future__ import annotations

import os
import random
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import pytest

from cbr.errors import CBRError
from cbr.logs.acpc import AcpcParser
from cbr.logs.irc import IrcParser
from cbr.logs.phh import PhhParser
from cbr.logs.pokerstars import PokerStarsParser
from cbr.logs.record import HandRecord, ParseIssue
from cbr.logs.replay import replay_hand
from tests.conftest import shared_path
from tests.reliability import reliability_rounds

ROUNDS = reliability_rounds(25)
SEED = int(os.environ.get("CBR_MUTATION_SEED", "0"))   # another seed, another campaign
SECONDS_PER_FORMAT = 20.0 * max(1, ROUNDS // 25)    # a hard bound: the short form takes a few seconds
_CARD = re.compile(rb"[2-9TJQKA][cdhs]")
_NUMBER = re.compile(rb"\d+")


@dataclass
class Mutation:
    """What was done to a file: a description, the new bytes, the original lines it damaged."""

    what: str
    data: bytes
    damaged: set[int]        # 0-based line indexes of the original file


def _lines(data: bytes) -> list[bytes]:
    """Lines with their line ends (the last may have none)."""
    return data.splitlines(keepends=True)


def _line_of(data: bytes, pos: int) -> int:
    return data.count(b"\n", 0, pos)


def mutate(data: bytes, rng: random.Random) -> Mutation:
    """One random mutation of ``data`` (a log file's bytes)."""
    lines = _lines(data)
    n = len(lines)
    kind = rng.choice(("truncate", "delete", "duplicate", "swap", "flip", "garbage", "number", "card"))
    i = rng.randrange(n)
    if kind == "truncate":
        pos = rng.randrange(1, len(data))
        first = _line_of(data, pos)
        return Mutation(f"cut at byte {pos}", data[:pos], set(range(first, n)))
    if kind == "delete":
        return Mutation(f"line {i + 1} deleted", b"".join(lines[:i] + lines[i + 1:]), {i})
    if kind == "duplicate":
        return Mutation(f"line {i + 1} duplicated", b"".join(lines[:i + 1] + lines[i:]), {i})
    if kind == "swap":
        j = rng.randrange(n)
        new = list(lines)
        new[i], new[j] = new[j], new[i]
        # a line end moves with its line: the last line (maybe without one) swapped merges two
        return Mutation(f"lines {i + 1} and {j + 1} swapped", b"".join(new), {i, j, n - 1})
    if kind == "flip":
        pos = rng.randrange(len(data))
        bit = 1 << rng.randrange(8)
        new = bytearray(data)
        new[pos] ^= bit
        line = _line_of(data, pos)
        return Mutation(f"bit {bit:#x} of byte {pos} flipped", bytes(new), {line, line + 1})
    if kind == "garbage":
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60))).replace(b"\n", b"") + b"\n"
        return Mutation(f"garbage {junk[:20]!r} inserted before line {i + 1}", b"".join(lines[:i] + [junk] + lines[i:]),
                        {i - 1, i})
    pattern = _NUMBER if kind == "number" else _CARD
    for _ in range(20):                  # a line with a number (a card) in it
        matches = list(pattern.finditer(lines[i]))
        if matches:
            break
        i = rng.randrange(n)
    else:
        return Mutation("nothing changed", data, set())
    m = rng.choice(matches)
    if kind == "number":
        new_text = str(rng.choice((0, 1, rng.randrange(10 ** 6), 10 ** 30, int(m.group()) + 1))).encode()
    else:
        new_text = rng.choice(b"23456789TJQKA").to_bytes(1, "big") + rng.choice(b"cdhs").to_bytes(1, "big")
    line = lines[i][:m.start()] + new_text + lines[i][m.end():]
    return Mutation(f"{kind} {m.group()!r} on line {i + 1} changed to {new_text!r}",
                    b"".join(lines[:i] + [line] + lines[i + 1:]), {i})


def _signature(rec: HandRecord) -> tuple:
    return (rec.players, rec.hole_cards, rec.board, rec.actions, rec.payoffs, rec.game)


def _blocks(records: list[HandRecord], n_lines: int, single_line: bool) -> list[tuple[HandRecord, range]]:
    """Each hand and the 0-based original lines it spans (to the next hand's first line)."""
    starts = sorted(records, key=lambda r: r.line)
    out = []
    for k, rec in enumerate(starts):
        if single_line:
            end = rec.line
        else:
            end = starts[k + 1].line - 1 if k + 1 < len(starts) else n_lines
        out.append((rec, range(rec.line - 1, end)))
    return out


def _read(parse: Callable[[str], object], path: str) -> tuple[list[HandRecord], list[ParseIssue]]:
    hands, issues = [], []
    for item in parse(path):          # type: ignore[attr-defined]
        if isinstance(item, HandRecord):
            hands.append(item)
        else:
            assert isinstance(item, ParseIssue), item
            issues.append(item)
    return hands, issues


def _check_round(parse, path: Path, files: set[str], original: list[HandRecord],
                 blocks: Optional[list[tuple[HandRecord, range]]], mutation: Mutation, context: str) -> None:
    try:
        hands, issues = _read(parse, str(path))
    except Exception as exc:  # noqa: BLE001 - the point: nothing may escape
        pytest.fail(f"{context}: {mutation.what}: reading raised {type(exc).__name__}: {exc}")
    for issue in issues:
        assert issue.source in files, f"{context}: {mutation.what}: issue names {issue.source!r}"
        assert isinstance(issue.line, int) and issue.line >= 0 and issue.reason, (context, mutation.what, issue)
    known = Counter(_signature(r) for r in original)
    for rec in hands:
        assert rec.source in files and rec.line >= 1, (context, mutation.what, rec.where)
        if known[_signature(rec)]:
            continue                  # an undamaged hand: replayed when the original was read
        try:
            replay_hand(rec)
        except CBRError:
            pass                      # rejected by the engine: a skipped hand with its reason
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"{context}: {mutation.what}: replaying {rec.where} raised {type(exc).__name__}: {exc}")
    if blocks is None:
        return
    got = Counter(_signature(r) for r in hands)
    for rec, span in blocks:
        touched = any(k in mutation.damaged for k in range(span.start - 1, span.stop + 1))
        if not touched:
            assert got[_signature(rec)] >= 1, (
                f"{context}: {mutation.what}: undamaged hand {rec.hand_id} (line {rec.line}) was not read")


def _campaign(tmp_path: Path, name: str, text_files: dict[str, bytes], parse, single_line: bool,
              target: Optional[str] = None, seed: int = 0) -> int:
    """Mutate one file of the set per round; returns the rounds run."""
    for rel, data in text_files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    files = {str(tmp_path / rel) for rel in text_files}
    where = str(tmp_path / target) if target else str(tmp_path / next(iter(text_files)))
    original, issues = _read(parse, where)
    assert original, f"{name}: the undamaged sample reads no hand"
    for rec in original:
        replay_hand(rec)
    seed += SEED
    rng = random.Random(seed)
    names = list(text_files)
    start = time.monotonic()
    for k in range(ROUNDS):
        rel = rng.choice(names)
        mutation = mutate(text_files[rel], rng)
        (tmp_path / rel).write_bytes(mutation.data)
        data_file = target is None or rel == target
        lines = len(_lines(text_files[rel]))
        blocks = _blocks(original, lines, single_line) if data_file and rel == names[0] else None
        _check_round(parse, tmp_path / rel if target is None else tmp_path / target, files, original, blocks,
                     mutation, f"{name} seed {seed} round {k} ({rel})")
        (tmp_path / rel).write_bytes(text_files[rel])
        assert time.monotonic() - start < SECONDS_PER_FORMAT, f"{name}: {k + 1} rounds took too long"
    return ROUNDS


def test_mutated_acpc_logs(tmp_path):
    limit = shared_path("acpc", "dealer_example_limit", "3p.limit.h1000.r0.log").read_bytes()
    nolimit = shared_path("acpc", "pluribus_6p_nolimit", "sample_game_30.log").read_bytes()
    head = b"".join(_lines(limit)[:300])
    parse = AcpcParser().parse
    assert _campaign(tmp_path / "a", "acpc limit", {"3p.log": head}, parse, single_line=True, seed=1) == ROUNDS
    assert _campaign(tmp_path / "b", "acpc no-limit", {"30.log": nolimit}, parse, single_line=True, seed=2)


def test_mutated_pokerstars_export(tmp_path):
    """The ten real sample hands in one export (as the client writes many hands per file)."""
    folder = shared_path("pokerstars_fl")
    texts = [p.read_bytes().lstrip(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").strip()
             for p in sorted(folder.rglob("*.txt"))]
    assert len(texts) == 10
    export = b"\n\n\n".join(texts) + b"\n"
    assert _campaign(tmp_path, "pokerstars", {"export.txt": export}, PokerStarsParser().parse,
                     single_line=False, seed=3)


def test_mutated_phh_hand_sets(tmp_path):
    phhs = shared_path("phh", "data", "handhq", "PS-2009-07-01_2009-07-23_1000NLH_OBFU", "10",
                       "ps NLH handhq_1-OBFUSCATED.first11.phhs").read_bytes()
    limit = shared_path("phh", "data", "wsop", "2023", "43", "5", "01-47-38.phh").read_bytes()
    parse = PhhParser().parse
    assert _campaign(tmp_path / "a", "phhs", {"hands.phhs": phhs}, parse, single_line=False, seed=4)
    assert _campaign(tmp_path / "b", "phh limit", {"hand.phh": limit}, parse, single_line=False, seed=5)


def test_mutated_irc_database(tmp_path):
    """The first 150 hands of the IRC month (hdb, hroster and their pdb lines); any of the
    three kinds of file is damaged (fewer rounds: a database is many files)."""
    source = shared_path("irc", "IRCdata", "holdem", "199504")
    hdb = _lines(source.joinpath("hdb").read_bytes())[:150]
    stamps = {line.split()[0] for line in hdb if line.split()}
    roster = [line for line in _lines(source.joinpath("hroster").read_bytes())
              if line.split() and line.split()[0] in stamps]
    files = {"db/hdb": b"".join(hdb), "db/hroster": b"".join(roster)}
    for pdb in sorted(source.joinpath("pdb").iterdir()):
        keep = [line for line in _lines(pdb.read_bytes()) if len(line.split()) > 1 and line.split()[1] in stamps]
        if keep:
            files[f"db/pdb/{pdb.name}"] = b"".join(keep)
    parse = IrcParser().parse
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    all_files = {str(tmp_path / rel) for rel in files}
    original, _ = _read(parse, str(tmp_path / "db"))
    assert len(original) > 120
    for rec in original:
        replay_hand(rec)
    rng = random.Random(6 + SEED)
    start = time.monotonic()
    for k in range(max(1, ROUNDS // 2)):
        rel = rng.choice(["db/hdb", "db/hroster"] + [r for r in files if "/pdb/" in r][:3])
        mutation = mutate(files[rel], rng)
        (tmp_path / rel).write_bytes(mutation.data)
        # the damage, as the hands' timestamps: on the damaged lines before and after
        old_lines, new_lines = _lines(files[rel]), _lines(mutation.data)
        hit = set()
        for lines in (old_lines, new_lines):
            for i in mutation.damaged | {min(mutation.damaged, default=0) + 1}:
                if 0 <= i < len(lines):
                    hit.update(w for w in lines[i].split()[:2])
        if "truncate" in mutation.what or "cut" in mutation.what:
            hit.update(w for line in old_lines[min(mutation.damaged):] for w in line.split()[:2])
        if rel == "db/hdb":
            blocks = [(rec, range(rec.line - 1, rec.line)) for rec in original]
        else:
            blocks = [(rec, range(-10, -10)) for rec in original]
        blocks = [(rec, span) for rec, span in blocks if rec.hand_id.encode() not in hit]
        if rel != "db/hdb":
            mutation = Mutation(mutation.what, mutation.data, set())
        _check_round(parse, tmp_path / "db", all_files | {str(tmp_path / "db")}, original, blocks, mutation,
                     f"irc seed {6 + SEED} round {k} ({rel})")
        (tmp_path / rel).write_bytes(files[rel])
        assert time.monotonic() - start < SECONDS_PER_FORMAT, f"irc: {k + 1} rounds took too long"
