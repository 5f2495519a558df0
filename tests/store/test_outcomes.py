"""Outcomes in cases (schema 3): the hand's net result for the player who acted, in small
bets of the hand's game, from the log's payoffs; NaN when the log gives none.

Expected values are read from the log files here with plain string splitting (ACPC
``STATE`` lines, IRC ``pdb`` columns), not through the engine's parsers.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cbr.build.local import build_casebase
from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS, standard_table
from cbr.logs.acpc import AcpcLogWriter
from cbr.play.match import run_match
from cbr.store import SCHEMA_VERSION, CaseBase, CaseBaseWriter, inspect
from cbr.store.manifest import file_checksum
from cbr.store.parts import write_part
from cbr.store.upgrade import upgrade
from tests.conftest import shared_path

REPO = Path(__file__).resolve().parents[2]
IRC_DIR = ("irc", "IRCdata", "holdem", "199504")


def _all_cases(cb: CaseBase) -> list[dict]:
    rows = []
    for s in STREETS:
        c = cb.cases(s)
        assert c.outcomes.dtype == np.float64 and c.outcomes.shape == (len(c),)
        t = c.table
        for hand, player, outcome in zip(t.column("hand_id").to_pylist(), t.column("player").to_pylist(),
                                         c.outcomes.tolist()):
            rows.append({"street": s, "hand": hand, "player": player, "outcome": outcome})
    return rows


@pytest.fixture(scope="module")
def acpc_match(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 3-player match log (blinds 1/2, bets 2/4: outcomes are chips / 2) and its case base."""
    root = tmp_path_factory.mktemp("acpc")
    game = standard_table("limit.3p.small", 3, (1, 2), 2, 4)
    log = root / "match.log"
    with AcpcLogWriter(log, game) as writer:
        run_match(["ehs", "lag", "random"], 150, game=game, seed=11, log=writer)
    build_casebase([log], root / "cb", name="cb")
    return log, root / "cb"


def test_acpc_outcomes_are_the_logged_payoffs_in_small_bets(acpc_match: tuple[Path, Path]) -> None:
    log, path = acpc_match
    lines = log.read_text().splitlines()
    small_bet = json.loads(lines[0].split(":", 1)[1])["small_bet"]
    assert small_bet == 2
    payoff: dict[tuple[str, str], float] = {}
    letters = 0
    for line in lines:
        if not line.startswith("STATE:"):
            continue
        _, hand, betting, _cards, pays, names = line.split(":")
        letters += sum(ch in "fcr" for ch in betting)
        for name, p in zip(names.split("|"), pays.split("|")):
            payoff[hand, name] = float(p)
    with CaseBase.open(path) as cb:
        rows = _all_cases(cb)
    # the match log shows every hole card: every action is a case, each with its outcome
    assert len(rows) == letters
    assert not any(math.isnan(r["outcome"]) for r in rows)
    for r in rows:
        assert r["outcome"] == payoff[r["hand"], r["player"]] / small_bet, r
    # every decision of a player in a hand carries the same outcome, and both signs occur
    per_hand = {}
    for r in rows:
        per_hand.setdefault((r["hand"], r["player"]), set()).add(r["outcome"])
    assert all(len(v) == 1 for v in per_hand.values())
    assert min(r["outcome"] for r in rows) < 0 < max(r["outcome"] for r in rows)


def test_irc_outcomes_are_winnings_minus_chips_put_in(tmp_path: Path) -> None:
    """IRC pdb columns: ``action`` (chips put in) and ``winnings``; the game's small bet is 10."""
    directory = shared_path(*IRC_DIR)
    net: dict[tuple[str, str], float] = {}
    for f in os.listdir(directory / "pdb"):
        for line in (directory / "pdb" / f).read_text(encoding="latin-1").splitlines():
            parts = line.split()
            if parts:
                net[parts[1], parts[0]] = float(parts[10]) - float(parts[9])
    build_casebase([directory], tmp_path / "irc", name="irc", workers=2)
    with CaseBase.open(tmp_path / "irc") as cb:
        small_bets = {g.small_bet for g in cb.games()}
        rows = _all_cases(cb)
    assert small_bets == {10.0}
    assert len(rows) > 1000
    for r in rows:
        assert r["outcome"] == net[r["hand"], r["player"]] / 10.0, r


PHH_HAND = """variant = 'FT'
antes = [0, 0]
blinds_or_straddles = [1, 2]
small_bet = 2
big_bet = 4
starting_stacks = [100, 100]
actions = ['d dh p1 AhKd', 'd dh p2 QsQc', 'p2 cc', 'p1 cbr 4', 'p2 f']
"""


def test_unknown_outcomes_stay_nan(tmp_path: Path) -> None:
    """A PHH hand without finishing stacks or winnings has no payoffs: NaN (NULL in SQL);
    the same hand with finishing stacks gets them, per hand."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a-unknown.phh").write_text(PHH_HAND)
    (logs / "b-known.phh").write_text(PHH_HAND + "finishing_stacks = [102, 98]\n")
    build_casebase([logs], tmp_path / "cb", name="cb")
    with CaseBase.open(tmp_path / "cb") as cb:
        t = cb.cases("preflop")
        by_source = {}
        for src, o in zip(t.table.column("source").to_pylist(), t.outcomes.tolist()):
            by_source.setdefault(Path(src).name, []).append(o)
        # p2 (button, small blind) called and folded to p1's raise: -2 chips = -1 small bet
        assert sorted(by_source["b-known.phh"]) == [-1.0, -1.0, 1.0]
        assert len(by_source["a-unknown.phh"]) == 3 and all(math.isnan(o) for o in by_source["a-unknown.phh"])
        assert cb.sql("SELECT count(*), count(outcome) FROM cases").fetchone() == (6, 3)
        info = inspect(cb)
    assert info["outcomes"]["preflop"] == {"known": 3, "mean": round(-1 / 3, 6)}
    assert info["outcomes"]["flop"] == {"known": 0, "mean": None}


def test_append_and_retain_take_an_optional_outcome(tmp_path: Path, acpc_match: tuple[Path, Path]) -> None:
    rng = np.random.default_rng(3)
    with CaseBaseWriter(tmp_path / "cb", build_index=False) as w:
        w.add_rows("flop", rng.random((4, 12), np.float32), "ccrf", outcome=[1.5, None, float("nan"), -2.0])
    with CaseBase.open(tmp_path / "cb") as cb:
        cb.append("flop", rng.random((2, 12), np.float32), "cr", outcome=3.0)
        cb.append("flop", rng.random(12, np.float32), "f")
        with pytest.raises(ValueError, match="infinity"):
            cb.append("flop", rng.random(12, np.float32), "f", outcome=float("inf"))
        with pytest.raises(ValueError, match="2 values for 1 case"):
            cb.append("flop", rng.random(12, np.float32), "f", outcome=[1.0, 2.0])
        # retain a real decision (from a replayed logged hand) with and without outcome
        from cbr.logs.detect import parse_source, scan_logs
        from cbr.logs.replay import replay

        log, _ = acpc_match
        hand = next(h for src in scan_logs([log]) for h in parse_source(src))
        dp = next(d for d in replay(hand) if d.hole is not None)
        (a,) = cb.retain_hand([dp], [-0.5])
        (b,) = cb.retain_hand([dp])
    with CaseBase.open(tmp_path / "cb") as cb:
        got = np.array(cb.cases("flop").outcomes[:7])
        np.testing.assert_array_equal(got, [1.5, np.nan, np.nan, -2.0, 3.0, 3.0, np.nan])
        s = cb.cases(dp.street)
        pos = {int(i): k for k, i in enumerate(s.case_ids)}
        assert s.outcomes[pos[a]] == -0.5 and math.isnan(s.outcomes[pos[b]])
        assert cb.sql("SELECT count(outcome), sum(outcome) FROM cases_flop").fetchone() == (4, 5.5)


def _as_schema_2(path: Path) -> None:
    """Turn a schema-3 case base into what the schema-2 engine wrote: parts without the
    ``outcome`` column (page CRCs, checksums in the manifest), schema_version 2."""
    m = json.loads((path / "manifest.json").read_text())
    for s in STREETS:
        for part in m["parts"][s]:
            f = path / part["file"]
            table = pq.read_table(f).drop_columns(["outcome"])
            part.update(write_part(f, table))
    m["schema_version"] = 2
    from cbr.store import catalog as _catalog

    (path / "manifest.json").write_text(json.dumps(m))
    # the catalog of a schema-2 base: views over the outcome-less parts
    from cbr.store.manifest import Manifest

    data = dict(m, schema_version=SCHEMA_VERSION)
    _catalog.write_catalog(path, Manifest.from_dict(data))
    m["catalog"] = file_checksum(path / _catalog.CATALOG)
    (path / "manifest.json").write_text(json.dumps(m))


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_schema_2_is_refused_with_the_upgrade_command_and_the_upgrade_works(
        tmp_path: Path, acpc_match: tuple[Path, Path]) -> None:
    _, built = acpc_match
    path = tmp_path / "old"
    shutil.copytree(built, path)
    with CaseBase.open(path) as cb:
        before = {s: (cb.cases(s).case_ids.copy(), cb.cases(s).features.copy(), cb.cases(s).actions.copy())
                  for s in STREETS}
    _as_schema_2(path)
    assert "outcome" not in pq.read_schema(path / json.loads((path / "manifest.json").read_text())
                                           ["parts"]["flop"][0]["file"]).names
    with pytest.raises(CaseBaseError) as err:
        CaseBase.open(path)
    msg = str(err.value)
    assert "\n" not in msg and "schema version 2, this engine reads version 4" in msg
    assert f"python -m cbr.store.upgrade {path}" in msg and "outcome" in msg and "cbr build" in msg
    # the CLI: one line, exit 1
    res = _cli("cli.py", "casebase", "inspect", str(path))
    assert res.returncode == 1 and res.stderr.count("\n") == 1 and "cbr.store.upgrade" in res.stderr, res.stderr
    old_files = {p.relative_to(path) for p in (path / "cases").rglob("*.parquet")}
    # the upgrade command
    res = _cli("-m", "cbr.store.upgrade", str(path))
    assert res.returncode == 0, res.stderr
    assert "upgraded to schema version 4" in res.stdout and "outcomes unknown" in res.stdout
    res = _cli("-m", "cbr.store.upgrade", str(path))
    assert res.returncode == 0 and "already at schema version 4" in res.stdout
    with CaseBase.open(path) as cb:
        assert cb.manifest.schema_version == 4 and cb.manifest.retired == []
        for s in STREETS:
            c = cb.cases(s)
            np.testing.assert_array_equal(c.case_ids, before[s][0])
            np.testing.assert_array_equal(c.features, before[s][1])
            np.testing.assert_array_equal(c.actions, before[s][2])
            assert np.isnan(c.outcomes).all()          # unknown, never made up
            for part in cb.manifest.parts[s]:
                assert file_checksum(path / part["file"]) == {"bytes": part["bytes"], "crc32": part["crc32"]}
                pq.ParquetFile(path / part["file"], page_checksum_verification=True).read()
        assert cb.sql("SELECT count(*), count(outcome) FROM cases").fetchone() == (cb.count(), 0)
        assert cb.index("flop").n_cases_ == cb.count("flop")
        assert cb.notes == []
    new_files = {p.relative_to(path) for p in (path / "cases").rglob("*.parquet")}
    assert not (old_files & new_files)  # new parts were written; the replaced ones are gone
    with CaseBase.open(path) as cb:  # and the upgraded base grows like any other
        cb.append("flop", cb.cases("flop").features[0], "c", outcome=1.0)
        assert cb.cases("flop").outcomes[-1] == 1.0


def test_schema_1_without_outcomes_upgrades_to_current(tmp_path: Path, acpc_match: tuple[Path, Path]) -> None:
    _, built = acpc_match
    path = tmp_path / "older"
    shutil.copytree(built, path)
    _as_schema_2(path)
    m = json.loads((path / "manifest.json").read_text())
    m["schema_version"] = 1
    for s in STREETS:
        for p in m["parts"][s]:
            del p["bytes"], p["crc32"]
    (path / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(CaseBaseError, match=r"version 1, this engine reads version 4: .*cbr\.store\.upgrade"):
        CaseBase.open(path)
    assert upgrade(path) == 1 and upgrade(path) == 0
    with CaseBase.open(path) as cb:
        assert sum(np.isnan(cb.cases(s).outcomes).sum() for s in STREETS) == cb.count()


def test_damaged_schema_2_part_is_not_upgraded(tmp_path: Path, acpc_match: tuple[Path, Path]) -> None:
    """The upgrade checks a schema-2 part's checksum first: damage is refused, nothing changes."""
    _, built = acpc_match
    path = tmp_path / "old"
    shutil.copytree(built, path)
    _as_schema_2(path)
    m = json.loads((path / "manifest.json").read_text())
    f = path / m["parts"]["turn"][0]["file"]
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x01
    f.write_bytes(bytes(data))
    manifest_before = (path / "manifest.json").read_bytes()
    files_before = sorted(p.relative_to(path) for p in path.rglob("*.parquet"))
    with pytest.raises(CaseBaseError, match="is damaged"):
        upgrade(path)
    assert (path / "manifest.json").read_bytes() == manifest_before
    # the parts it wrote for the streets before the damaged one are removed again
    assert sorted(p.relative_to(path) for p in path.rglob("*.parquet")) == files_before
    f.write_bytes(bytes(data[: len(data) // 2]) + bytes([data[len(data) // 2] ^ 0x01]) + bytes(data[len(data) // 2 + 1:]))
    assert upgrade(path) == 2  # repaired: the upgrade goes through
    with CaseBase.open(path) as cb:
        assert cb.count("turn") == len(cb.cases("turn").outcomes)


def test_cli_sql_over_outcomes(acpc_match: tuple[Path, Path]) -> None:
    _, path = acpc_match
    res = _cli("cli.py", "casebase", "inspect", str(path), "--json", "--sql",
               "SELECT street, avg(outcome) AS mean, count(outcome) AS n FROM cases GROUP BY street")
    assert res.returncode == 0, res.stderr
    got = {r["street"]: (r["mean"], r["n"]) for r in json.loads(res.stdout)}
    with CaseBase.open(path) as cb:
        for s in STREETS:
            o = cb.cases(s).outcomes
            assert got[s][1] == len(o)
            assert got[s][0] == pytest.approx(float(np.mean(o)), rel=1e-12)
        total = float(sum(cb.cases(s).outcomes.sum() for s in STREETS))
    # the on-disk catalog (for people using DuckDB directly) has the column too
    import duckdb

    con = duckdb.connect(str(path / "catalog.duckdb"), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{path}'")
        n, known, sum_ = con.execute("SELECT count(*), count(outcome), sum(outcome) FROM cases").fetchone()
    finally:
        con.close()
    assert n == known == sum(got[s][1] for s in STREETS) and sum_ == pytest.approx(total, rel=1e-12)


def test_default_casebase_carries_outcomes() -> None:
    """The shipped default case base (self-play ACPC logs) has an outcome for every case;
    in a heads-up hand where both players acted, their outcomes cancel (zero sum)."""
    with CaseBase.open(REPO / "casebases" / "default") as cb:
        per_hand: dict[tuple[str, str], dict[str, float]] = {}
        for s in STREETS:
            c = cb.cases(s)
            assert not np.isnan(c.outcomes).any(), s
            t = c.table
            for src, hand, player, o in zip(t.column("source").to_pylist(), t.column("hand_id").to_pylist(),
                                            t.column("player").to_pylist(), c.outcomes.tolist()):
                if Path(src).name.startswith("hu-"):
                    assert per_hand.setdefault((src, hand), {}).setdefault(player, o) == o
    both = [v for v in per_hand.values() if len(v) == 2]
    assert len(both) > 1000
    assert all(sum(v.values()) == 0 for v in both)
    assert any(next(iter(v.values())) != 0 for v in both)


def test_outcome_column_is_nullable_float64() -> None:
    from cbr.store.parts import case_schema

    f = case_schema(["x"]).field("outcome")
    assert f.type == pa.float64() and f.nullable


def test_upgrade_killed_at_random_moments_never_leaves_a_wrong_base(tmp_path: Path,
                                                                     acpc_match: tuple[Path, Path]) -> None:
    """SIGKILL ``python -m cbr.store.upgrade`` at moments spread over its run time: the base
    is either still schema 2 (refused with the upgrade message) or schema 3 and whole; the
    next upgrade finishes it and leaves no stray part."""
    import random
    import signal
    import time

    _, built = acpc_match
    template = tmp_path / "template"
    shutil.copytree(built, template)
    with CaseBase.open(template) as cb:
        expected = {s: (cb.cases(s).case_ids.tolist(), cb.cases(s).features.tobytes()) for s in STREETS}
    _as_schema_2(template)

    def run(copy: Path, delay: float | None) -> float:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "cbr.store.upgrade", str(copy)], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if delay is None:
                assert proc.wait(timeout=120) == 0
            else:
                time.sleep(delay)
                proc.send_signal(signal.SIGKILL)
                proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return time.monotonic() - t0

    full = run(shutil.copytree(template, tmp_path / "full"), None)
    rng = random.Random(5)
    states = Counter()
    for k in range(8):
        copy = shutil.copytree(template, tmp_path / f"k{k}")
        run(copy, rng.uniform(0.3 * full, 1.1 * full))
        try:
            with CaseBase.open(copy) as cb:
                assert {s: (cb.cases(s).case_ids.tolist(), cb.cases(s).features.tobytes()) for s in STREETS} == expected
                states["done"] += 1
        except CaseBaseError as exc:
            assert "schema version 2" in str(exc) and "cbr.store.upgrade" in str(exc), exc
            states["not yet"] += 1
        upgrade(copy)
        with CaseBase.open(copy) as cb:
            assert {s: (cb.cases(s).case_ids.tolist(), cb.cases(s).features.tobytes()) for s in STREETS} == expected
            listed = {p["file"] for s in STREETS for p in cb.manifest.parts[s]}
            listed |= {r["file"] for r in cb.manifest.retired}
        on_disk = {str(p.relative_to(copy)) for p in copy.rglob("*.parquet")}
        assert on_disk == listed, (on_disk - listed, listed - on_disk)
    assert sum(states.values()) == 8


@pytest.mark.parametrize("name", ["pokerstars_fl", "phh"])
def test_pokerstars_and_phh_outcomes_follow_each_hands_payoffs(tmp_path: Path, name: str) -> None:
    """The shared PokerStars (net of rake) and PHH logs: each case's outcome is its hand's
    payoff for that player over the hand's small bet, NaN for the PHH hands without one."""
    from cbr.logs.detect import parse_source, scan_logs
    from cbr.logs.record import HandRecord

    src = shared_path(name)
    expected: dict[tuple[str, str, str], float] = {}
    for source in scan_logs([src]):
        for rec in parse_source(source):
            if isinstance(rec, HandRecord):
                for i, player in enumerate(rec.players):
                    expected[rec.source, rec.hand_id, player] = (
                        math.nan if rec.payoffs is None else rec.payoffs[i] / rec.game.small_bet)
    build_casebase([src], tmp_path / "cb", name="cb", mixed_games=True)  # the PHH folder: limit and no-limit hands
    with CaseBase.open(tmp_path / "cb") as cb:
        n = unknown = 0
        for s in STREETS:
            c = cb.cases(s)
            t = c.table
            for key, o in zip(zip(t.column("source").to_pylist(), t.column("hand_id").to_pylist(),
                                  t.column("player").to_pylist()), c.outcomes.tolist()):
                want = expected[key]
                assert (math.isnan(o) and math.isnan(want)) or o == want, (key, o, want)
                n += 1
                unknown += math.isnan(o)
    assert n > 40 and unknown < n


def test_upgrade_rerun_finishes_the_clean_up_of_a_killed_upgrade(tmp_path: Path,
                                                                  acpc_match: tuple[Path, Path]) -> None:
    """Killed between deleting the retired parts and rewriting the manifest, an upgrade leaves
    retired entries whose files are gone (and, killed earlier, retired files still on disk):
    the next upgrade run removes both, and the cases are untouched."""
    from cbr.store.upgrade import upgrade

    _, built = acpc_match
    path = tmp_path / "cb"
    shutil.copytree(built, path)
    _as_schema_2(path)
    assert upgrade(path) == 2
    m = json.loads((path / "manifest.json").read_text())
    kept = path / "cases" / "flop" / "part-00777.parquet"
    shutil.copy(path / m["parts"]["flop"][0]["file"], kept)  # a retired part still on disk
    m["retired"] = [{"file": "cases/turn/part-00999.parquet", "since": "x"},  # already deleted
                    {"file": "cases/flop/part-00777.parquet", "since": "x"}]
    (path / "manifest.json").write_text(json.dumps(m))
    with CaseBase.open(path) as cb:
        before = {s: cb.cases(s).case_ids.tolist() for s in STREETS}
    assert upgrade(path) == 0
    with CaseBase.open(path) as cb:
        assert cb.manifest.retired == [] and {s: cb.cases(s).case_ids.tolist() for s in STREETS} == before
    assert not kept.exists()
