"""build_casebase: logs -> replay -> features -> case base, and what a build must never leave behind.

Case counts are checked against the ACPC betting strings read line by line here (one
action character = one decision, every hole card is shown in dealer logs), not against
our replay. Most tests use logs generated in tmp_path; the real ACPC limit logs come from
../shared (skipped when absent).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import cbr.build.local
from cbr.build.local import BuildReport, build_casebase
from cbr.errors import CaseBaseError, CBRError
from cbr.game.gamedef import STREETS
from cbr.logs.acpc import AcpcLogWriter
from cbr.play.match import run_match
from cbr.store import CaseBase
from features.casper import CasperFeatures
from tests.conftest import shared_path


class StubEvaluator:
    """Cheap, deterministic hand values (counting and provenance do not need real ones)."""

    def preflop_rank(self, hole):
        return 1 + (sum(c * c for c in hole) % 169)

    def hand_strength(self, hole, board):
        return (sum(hole) * 7 + sum(board)) % 101 / 100

    def hand_potential(self, hole, board):
        return ((sum(hole) + 3 * sum(board)) % 97 / 96, 0.0625)


class FailingFeatures(CasperFeatures):
    """A feature set that breaks after ``after`` rows (a bug, or a disk failing mid-build)."""

    def __init__(self, after: int, exc: type[BaseException] = RuntimeError) -> None:
        super().__init__(evaluator=StubEvaluator())
        self.after, self.exc, self.done = after, exc, 0

    def row(self, dp):
        self.done += 1
        if self.done > self.after:
            raise self.exc(f"feature failure after {self.after} rows")
        return super().row(dp)


def stub_features() -> CasperFeatures:
    return CasperFeatures(evaluator=StubEvaluator())


def state_lines(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, fields) of the STATE lines of an ACPC log."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("STATE:"):
            out.append((n, line.split(":")))
    return out


def expected_counts(paths: list[Path], player: str | None = None) -> tuple[Counter, Counter]:
    """Decisions per street, and per (source, hand_id, street), from the betting strings.

    ACPC limit betting: one character per action, '/' between streets. With ``player`` the
    actor of each action is worked out here with the limit rules (heads-up reverse blinds:
    position 1 first pre-flop, position 0 after; 3p: position 2 first pre-flop, 0 after).
    """
    per_street: Counter = Counter()
    per_hand: Counter = Counter()
    for path in paths:
        for _, f in state_lines(path):
            names = f[5].split("|")
            first = {2: (1, 0), 3: (2, 0)}[len(names)]
            live = [True] * len(names)
            for street, seg in enumerate(f[2].split("/")):
                pos = first[0] if street == 0 else first[1]
                for kind in seg:
                    while not live[pos]:
                        pos = (pos + 1) % len(names)
                    if player is None or names[pos] == player:
                        per_street[STREETS[street]] += 1
                        per_hand[(str(path), f[1], STREETS[street])] += 1
                    if kind == "f":
                        live[pos] = False
                    pos = (pos + 1) % len(names)
    return per_street, per_hand


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".building-" in p.name or ".old-" in p.name)


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def match_logs(tmp_path_factory) -> Path:
    """Generated heads-up and 3-player limit logs (all cards known), 120 hands each."""
    folder = tmp_path_factory.mktemp("logs")
    with AcpcLogWriter(folder / "hu.log") as log:
        run_match(["random", "raise"], 120, seed=11, log=log)
    with AcpcLogWriter(folder / "p3.log") as log:
        run_match(["random", "call", "lag"], 120, seed=12, log=log)
    return folder


@pytest.fixture(scope="module")
def acpc_build(tmp_path_factory) -> tuple[BuildReport, Path, list[Path]]:
    """The real ACPC limit logs (2,000 hands) built once, with cheap hand values."""
    folder = shared_path("acpc", "dealer_example_limit")
    out = tmp_path_factory.mktemp("acpc") / "acpc-limit"
    report = build_casebase([folder], out, feature_set=stub_features())
    return report, out, sorted(folder.glob("*.log"))


# ---------------------------------------------------------------- counts and provenance
def test_real_acpc_logs_counts_per_street(acpc_build) -> None:
    report, out, logs = acpc_build
    per_street, _ = expected_counts(logs)
    assert report.hands == sum(len(state_lines(p)) for p in logs) == 2000
    assert report.skipped == []
    assert report.sources == 2
    assert report.cases_per_street == {s: per_street[s] for s in STREETS}
    assert report.cases == report.decisions == sum(per_street.values())
    with CaseBase.open(out) as cb:
        assert {s: cb.count(s) for s in STREETS} == report.cases_per_street
        assert cb.manifest.extra.get("built_by") == "cbr build"
        assert {g.name for g in cb.games()} == {"holdem.limit.2p", "holdem.limit.3p"}


def test_real_acpc_logs_every_case_keeps_its_provenance(acpc_build) -> None:
    report, out, logs = acpc_build
    _, per_hand = expected_counts(logs)
    players = {(str(p), f[1]): set(f[5].split("|")) for p in logs for _, f in state_lines(p)}
    found: Counter = Counter()
    with CaseBase.open(out) as cb:
        for s in STREETS:
            rows = cb.table(s).select(["source", "hand_id", "player", "action"]).to_pylist()
            for r in rows:
                key = (r["source"], r["hand_id"])
                assert key in players, f"case from unknown hand {key}"
                assert r["player"] in players[key]
                assert r["action"] in ("f", "c", "r")
                found[(r["source"], r["hand_id"], s)] += 1
        sources = {src["source"] for src in cb.manifest.sources}
        assert sources == {str(p) for p in logs}
        assert all(len(src["sha256"]) == 64 for src in cb.manifest.sources)
    assert found == per_hand


def test_real_acpc_logs_players_filter(tmp_path: Path) -> None:
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    report = build_casebase([log], tmp_path / "p2", feature_set=stub_features(), players=["p2"])
    per_street, _ = expected_counts([log], player="p2")
    assert report.cases_per_street == {s: per_street[s] for s in STREETS}
    with CaseBase.open(tmp_path / "p2") as cb:
        assert cb.manifest.extra["players"] == ["p2"]
        for s in STREETS:
            assert set(cb.table(s).column("player").to_pylist()) == {"p2"}


def test_players_filter_keeps_the_same_cases(match_logs: Path, tmp_path: Path) -> None:
    full = build_casebase([match_logs], tmp_path / "all", feature_set=stub_features())
    only = build_casebase([match_logs], tmp_path / "lag", feature_set=stub_features(), players=["lag", "call"])
    assert 0 < only.cases < full.cases
    with CaseBase.open(tmp_path / "all") as a, CaseBase.open(tmp_path / "lag") as b:
        for s in STREETS:
            ta, tb = a.table(s), b.table(s)
            keep = [i for i, p in enumerate(ta.column("player").to_pylist()) if p in ("lag", "call")]
            assert tb.num_rows == len(keep)
            np.testing.assert_array_equal(b.cases(s).features, a.cases(s).features[keep])
            for col in ("action", "source", "hand_id", "player", "hole", "board", "history"):
                assert tb.column(col).to_pylist() == [ta.column(col)[i].as_py() for i in keep], col


def test_generated_logs_counts(match_logs: Path, tmp_path: Path) -> None:
    report = build_casebase([match_logs], tmp_path / "cb", feature_set=stub_features())
    per_street, _ = expected_counts(sorted(match_logs.glob("*.log")))
    assert report.hands == 240 and report.sources == 2
    assert report.cases_per_street == {s: per_street[s] for s in STREETS}


def test_workers_give_the_same_case_base(match_logs: Path, tmp_path: Path, monkeypatch) -> None:
    """Real CASPER features; small chunks so that two workers really share the hands."""
    monkeypatch.setattr(cbr.build.local, "CHUNK_HANDS", 13)
    log = match_logs / "hu.log"  # 120 hands: 10 chunks
    one = build_casebase([log], tmp_path / "w1", workers=1)
    two = build_casebase([log], tmp_path / "w2", workers=2)
    assert one.cases_per_street == two.cases_per_street
    assert (one.hands, one.decisions) == (two.hands, two.decisions)
    with CaseBase.open(tmp_path / "w1") as a, CaseBase.open(tmp_path / "w2") as b:
        for s in STREETS:
            assert a.count(s) > 0
            np.testing.assert_array_equal(a.cases(s).features, b.cases(s).features)
            ta, tb = a.table(s), b.table(s)
            assert ta.drop(["features"] if "features" in ta.column_names else []).equals(
                tb.drop(["features"] if "features" in tb.column_names else []))


def test_progress_is_called_per_hand(match_logs: Path, tmp_path: Path) -> None:
    seen: list[int] = []
    report = build_casebase([match_logs], tmp_path / "cb", feature_set=stub_features(),
                            progress=lambda n, total=None: seen.append(n))
    assert sum(seen) == report.hands + len(report.skipped)


# ---------------------------------------------------------------- bad input
BAD_LOG = """\
# name/game/hands/seed 2p.limit.h1000.r0 /x/holdem.limit.2p.reverse_blinds.game 1000 0
STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2
STATE:1:rrrrrc/cc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2
STATE:2:cc/crc/cc/cc:5d5c|5dQd/8dAs8s/4h/6d:20|-20:p1|p2
STATE:3:garbage
STATE:4:rrrc/rrf:4s8s|6hJd/QhJs9d:-50|50:p2|p1
STATE:5:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:99|-20:p1|p2
"""


def test_bad_hands_are_reported_with_file_and_line_and_the_rest_builds(tmp_path: Path) -> None:
    log = tmp_path / "bad.log"
    log.write_text(BAD_LOG)
    report = build_casebase([log], tmp_path / "cb", feature_set=stub_features())
    where = {i.where: i.reason for i in report.skipped}
    assert set(where) == {f"{log}:{n}" for n in (3, 4, 5, 7)}
    assert "raises" in where[f"{log}:3"]
    assert "5d" in where[f"{log}:4"]
    assert "payoffs" in where[f"{log}:7"]
    # hands 0 and 4 are fine: cc/crc/cc/cc (9 actions) and rrrc/rrf (7 actions)
    assert report.hands == 2
    assert report.cases == 16
    assert report.cases_per_street == {"preflop": 6, "flop": 6, "turn": 2, "river": 2}
    d = report.to_dict()
    assert d["skipped"] == 4 and {x["where"] for x in d["skipped_hands"]} == set(where)
    assert CaseBase.open(tmp_path / "cb").count() == 16


def test_no_known_cards_is_an_error_and_leaves_nothing(tmp_path: Path) -> None:
    log = tmp_path / "blind.log"
    log.write_text("STATE:0:cc/cc/cc/cc:|/8dAs8s/4h/6d:0|0:p1|p2\nSTATE:1:rf:|:-10|10:p2|p1\n")
    with pytest.raises(CBRError, match="no cases: 2 hands read"):
        build_casebase([log], tmp_path / "cb", feature_set=stub_features())
    assert not (tmp_path / "cb").exists()
    assert leftovers(tmp_path) == []


def test_unknown_player_filter_is_an_error(match_logs: Path, tmp_path: Path) -> None:
    with pytest.raises(CBRError, match=r"none of the players to keep \(nobody\) appears in the logs") as info:
        build_casebase([match_logs], tmp_path / "cb", feature_set=stub_features(), players=["nobody"])
    assert info.value.field == "players"  # the command line names it --only-players
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_no_logs_and_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(CBRError, match="no log files"):
        build_casebase([tmp_path], tmp_path / "cb")
    with pytest.raises((CBRError, FileNotFoundError)):
        build_casebase([tmp_path / "missing.log"], tmp_path / "cb")
    with pytest.raises(ValueError, match="workers"):
        build_casebase([tmp_path], tmp_path / "cb", workers=0)
    assert not (tmp_path / "cb").exists()


# ---------------------------------------------------------------- failures leave nothing behind
@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_failure_in_features_leaves_no_case_base(match_logs: Path, tmp_path: Path, exc) -> None:
    with pytest.raises(exc, match="feature failure"):
        build_casebase([match_logs], tmp_path / "cb", feature_set=FailingFeatures(300, exc))
    assert not (tmp_path / "cb").exists()
    assert leftovers(tmp_path) == []


def test_failure_in_a_worker_leaves_no_case_base(match_logs: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cbr.build.local, "CHUNK_HANDS", 20)
    with pytest.raises(RuntimeError, match="feature failure"):
        build_casebase([match_logs], tmp_path / "cb", feature_set=FailingFeatures(100), workers=2)
    assert not (tmp_path / "cb").exists()
    assert leftovers(tmp_path) == []


def test_interrupt_between_chunks_leaves_no_case_base(match_logs: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cbr.build.local, "CHUNK_HANDS", 30)
    calls = []

    def progress(n, total=None):
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_casebase([match_logs], tmp_path / "cb", feature_set=stub_features(), progress=progress)
    assert not (tmp_path / "cb").exists()
    assert leftovers(tmp_path) == []


def test_existing_target_is_refused_then_replaced(match_logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "cb"
    first = build_casebase([match_logs / "hu.log"], out, feature_set=stub_features())
    with pytest.raises(CaseBaseError, match="already exists"):
        build_casebase([match_logs], out, feature_set=stub_features())
    with CaseBase.open(out) as cb:
        assert cb.count() == first.cases  # untouched
    second = build_casebase([match_logs], out, feature_set=stub_features(), overwrite=True)
    assert second.cases > first.cases
    with CaseBase.open(out) as cb:
        assert cb.count() == second.cases
        assert len(cb.manifest.sources) == 2
    assert leftovers(tmp_path) == []


def test_a_folder_that_is_not_a_case_base_is_never_replaced(match_logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(CaseBaseError, match="not a case base"):
        build_casebase([match_logs], out, feature_set=stub_features(), overwrite=True)
    assert (out / "notes.txt").read_text() == "keep me"


# ---- one kind of game per case base (issue 35, defect 11) -------------------------------------
@pytest.fixture()
def mixed_folder(tmp_path: Path) -> Path:
    """A folder with a limit log (1,000 heads-up hands) and a no-limit one (Pluribus, 6 players)."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    for parts in (("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log"),
                  ("acpc", "pluribus_6p_nolimit", "sample_game_100.log")):
        (folder / parts[-1]).write_bytes(shared_path(*parts).read_bytes())
    return folder


def test_a_mixed_folder_is_refused_naming_the_games(mixed_folder: Path, tmp_path: Path) -> None:
    """Before: the no-limit hands went into the case base with only a warning."""
    with pytest.raises(CBRError, match=r"mix games of two kinds, limit \(holdem\.limit\.2p\) and no-limit "
                                       r"\(holdem\.nolimit\.6p\).*--only-games limit or --only-games nolimit.*"
                                       r"--mixed-games"):
        build_casebase([mixed_folder], tmp_path / "out", feature_set=stub_features())
    assert not (tmp_path / "out").exists()
    both = build_casebase([mixed_folder], tmp_path / "both", feature_set=stub_features(), mixed_games=True)
    with CaseBase.open(tmp_path / "both") as cb:  # asked for: both games, and the warning as before
        assert sorted(g["betting"] for g in cb.manifest.games) == ["limit", "nolimit"]
    assert any("no-limit" in w for w in both.warnings) and both.games_left_out == {}


@pytest.mark.parametrize("only", [["limit"], ["holdem.limit.2p"]])
def test_only_games_keeps_one_game(mixed_folder: Path, tmp_path: Path, only: list[str]) -> None:
    limit_alone = build_casebase([mixed_folder / "2p.limit.h1000.r0.log"], tmp_path / "alone",
                                 feature_set=stub_features())
    nolimit_hands = build_casebase([mixed_folder / "sample_game_100.log"], tmp_path / "nl",
                                   feature_set=stub_features()).hands
    report = build_casebase([mixed_folder], tmp_path / "out", feature_set=stub_features(), only_games=only)
    assert report.cases_per_street == limit_alone.cases_per_street and report.hands == limit_alone.hands
    assert report.games_left_out == {"holdem.nolimit.6p": nolimit_hands} and report.to_dict()["games_left_out"]
    assert not any("no-limit" in w for w in report.warnings)
    with CaseBase.open(tmp_path / "out") as cb:
        assert [g["name"] for g in cb.manifest.games] == ["holdem.limit.2p"]
    nl = build_casebase([mixed_folder], tmp_path / "nlonly", feature_set=stub_features(), only_games=["nolimit"])
    assert nl.hands == nolimit_hands and nl.games_left_out == {"holdem.limit.2p": 1000}
    with pytest.raises(CBRError, match=r"no hands of the --only-games games \(holdem\.limit\.9p\).*games there: "
                                       r"holdem\.limit\.2p, holdem\.nolimit\.6p"):
        build_casebase([mixed_folder], tmp_path / "none", feature_set=stub_features(), only_games=["holdem.limit.9p"])


def test_only_games_on_a_dask_task_counts_what_it_leaves_out(mixed_folder: Path) -> None:
    from cbr.build.on_dask import file_cases
    from cbr.logs.detect import scan_logs

    (source,) = scan_logs([mixed_folder / "sample_game_100.log"])
    kept = file_cases(source, stub_features(), None, None, only_games=frozenset({"limit"}))
    assert (kept.records, kept.games, kept.left_out["holdem.nolimit.6p"] > 0) == (0, [], True)


def test_cli_build_only_games_and_mixed_games(mixed_folder: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    def build(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli", "build", str(mixed_folder), *args], capture_output=True,
                              text=True, cwd=Path(__file__).resolve().parents[2], timeout=300)

    refused = build("-o", str(tmp_path / "a"), "-j", "1")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("error: the logs mix games") and "holdem.nolimit.6p" in refused.stderr
    kept = build("-o", str(tmp_path / "b"), "-j", "1", "--only-games", "limit")
    assert kept.returncode == 0, kept.stderr
    assert "--only-games left out" in kept.stdout and "holdem.nolimit.6p" in kept.stdout, kept.stdout
    assert build("-o", str(tmp_path / "c"), "-j", "1", "--mixed-games").returncode == 0
    empty = build("-o", str(tmp_path / "d"), "--only-games", " , ")
    assert empty.returncode == 2 and "--only-games" in empty.stderr, empty.stderr


def test_a_mix_is_refused_as_soon_as_the_second_kind_is_read(tmp_path: Path) -> None:
    """The refusal came after every hand was read and its cases made (the acceptance run watched
    the progress bar reach 12000/12000 first); now it comes with the first hand of the second kind."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "a-nolimit.log").write_bytes(shared_path("acpc", "pluribus_6p_nolimit", "sample_game_100.log").read_bytes())
    (folder / "b-limit.log").write_bytes(shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log").read_bytes())
    seen = {"total": 0, "done": 0}

    def progress(n: int, total: int | None = None) -> None:
        if total is not None:
            seen["total"] = total
        seen["done"] += n

    with pytest.raises(CBRError, match="mix games of two kinds"):
        build_casebase([folder], tmp_path / "out", feature_set=stub_features(), progress=progress)
    assert seen["total"] > 1000 and seen["done"] <= 100 and not (tmp_path / "out").exists()
