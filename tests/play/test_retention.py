"""Retention during play (issue 8, section 3): what is kept, with which provenance and
outcome, seen by the next retrieval, never written into the shipped default case base;
the retention log's crash rules; readers in other processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import CaseBaseError, OutputPathError
from cbr.game.gamedef import STREETS
from cbr.logs.replay import replay
from cbr.play.match import run_match
from cbr.play.retention import Retainer, copy_casebase, shown_positions
from cbr.policies.cbr_policy import CBRPolicy
from cbr.store import PACKAGED_CASEBASES, CaseBase
from cbr.store.retention_log import RetentionLog

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.fixture(scope="module")
def small_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the default case base (made once; each test copies it again)."""
    return copy_casebase("default", tmp_path_factory.mktemp("cb") / "base")


def fresh(small_copy: Path, tmp_path: Path, name: str = "mine") -> Path:
    return copy_casebase(small_copy, tmp_path / name)


class Recorder:
    """A log writer stand-in that keeps the records (the match's own HandRecords)."""

    def __init__(self) -> None:
        self.records = []

    def write(self, record) -> None:  # noqa: ANN001
        self.records.append(record)


def test_match_keeps_own_decisions_and_showdowns_with_outcomes_and_provenance(small_copy: Path,
                                                                               tmp_path: Path) -> None:
    path = fresh(small_copy, tmp_path)
    before = CaseBase.open(path).count()
    rec = Recorder()
    bot = CBRPolicy(casebase=str(path), seed=4)
    r = run_match([bot, "call"], 30, seed=5, retain=True, log=rec)  # type: ignore[arg-type]
    bot.close()
    # what should be kept, counted independently from the match's records
    expected = []
    for k, record in enumerate(rec.records):
        bot_pos = [p for p, name in enumerate(record.players) if name == "cbr"][0]
        wanted = {bot_pos} | shown_positions(record)
        for dp in replay(record):
            if dp.position in wanted:
                seat = 0 if dp.position == bot_pos else 1
                expected.append((str(k), dp.player, dp.street, dp.action, seat,
                                 record.payoffs[dp.position] / record.game.small_bet))
    cb = CaseBase.open(path)
    assert cb.count() - before == r.retained == len(expected) > 0
    assert cb.manifest.log is not None and cb.manifest.counts["flop"]["total"] == cb.count("flop")  # compacted
    rows = cb.sql("SELECT hand_id, player, street, action, seat, outcome, match_id, opponents, source, "
                  "retained_at FROM cases WHERE source = 'retained'").fetchall()
    streets = {s: i for i, s in enumerate(STREETS)}
    got = sorted((h, p, streets[s], a, seat, o) for h, p, s, a, seat, o, *_ in rows)
    assert got == sorted(expected)
    assert {row[6] for row in rows} == {r.match_id}
    assert {(row[1], row[7]) for row in rows} <= {("cbr", "call"), ("call", "cbr")}
    assert all(row[9] is not None for row in rows)


def test_retained_case_is_seen_by_the_next_retrieval(small_copy: Path, tmp_path: Path) -> None:
    """Retain one hand, then decide at exactly a retained decision: the case is retrieved."""
    path = fresh(small_copy, tmp_path)
    rec = Recorder()
    run_match(["ehs", "call"], 3, seed=11, log=rec)
    record = next(r for r in rec.records if len(shown_positions(r)) == 2)
    bot = CBRPolicy(casebase=str(path), seed=1)
    cb = bot.open()
    flop = [dp for dp in replay(record) if dp.street == 1]
    assert flop
    first = bot.decide(flop[0])
    assert first.case_ids.size  # the street is loaded before the retention
    retainer = Retainer(cb, keep=[], names=list(record.players), match_id="m1")
    kept = retainer.hand(record, [0, 1])
    ids = cb.sql("SELECT case_id FROM cases_flop WHERE match_id = 'm1' ORDER BY case_id").fetchall()
    assert kept > 0 and ids
    again = bot.decide(flop[0])
    assert ids[0][0] in set(again.case_ids.tolist())  # in the very next retrieval
    assert again.retrieved > first.retrieved
    bot.close()


def test_default_casebase_is_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain ``cbr`` plays the shipped expert base: retention refuses it and grows a copy."""
    default = PACKAGED_CASEBASES / "expert"
    before = {p.name: p.stat().st_mtime_ns for p in default.rglob("*") if p.is_file()}
    with pytest.raises(CaseBaseError, match="never written to; retain into a copy") as info:
        run_match(["cbr", "call"], 2, retain=True)
    assert info.value.field == "retain_into" and "--" not in str(info.value)  # the CLI names --retain-into
    monkeypatch.chdir(tmp_path)
    r = run_match(["cbr", "call"], 4, retain_into="copy1")
    assert r.retained > 0 and (tmp_path / "casebases" / "copy1" / "manifest.json").is_file()
    r2 = run_match(["cbr", "call"], 4, retain_into="copy1", seed=2)  # grows the same copy
    with CaseBase.open(tmp_path / "casebases" / "copy1") as cb:
        assert cb.sql("SELECT count(DISTINCT match_id) FROM cases").fetchone() == (2,)
        assert cb.count() == CaseBase.open(default).count() + r.retained + r2.retained
        assert cb.name == "copy1"
    after = {p.name: p.stat().st_mtime_ns for p in default.rglob("*") if p.is_file()}
    assert after == before
    with pytest.raises(CaseBaseError, match="never written to; retain into a copy"):   # CASPER's base likewise
        run_match(["cbr:preset=casper", "call"], 2, retain=True)


def test_retain_into_a_path_means_that_path(small_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--retain-into ./X` made ./casebases/X, and every later run with ./X failed. A path (a
    separator in it, or a leading '.') is that folder; a bare name is ./casebases/NAME; at
    every table that retains (match, ACPC dealer, human table)."""
    from cbr.acpc.dealer import Dealer
    from cbr.play.human import play_human

    monkeypatch.chdir(tmp_path)
    bot = f"cbr:casebase={small_copy}"
    first = run_match([bot, "call"], 3, seed=1, retain_into="./mine")
    assert (tmp_path / "mine" / "manifest.json").is_file() and not (tmp_path / "casebases").exists()
    second = run_match([bot, "call"], 3, seed=2, retain_into="./mine")  # the same copy grows
    with CaseBase.open(tmp_path / "mine") as cb:
        assert cb.sql("SELECT count(DISTINCT match_id) FROM cases WHERE source = 'retained'").fetchone() == (2,)
        assert cb.count() == CaseBase.open(small_copy).count() + first.retained + second.retained
    (tmp_path / "sub").mkdir()
    Dealer([bot, "call"], 2, seed=3, retain_into="sub/dealt").run()
    assert (tmp_path / "sub" / "dealt" / "manifest.json").is_file()
    play_human([bot], 1, read=lambda prompt: "c", show=lambda line: None, retain_into=".person")
    assert (tmp_path / ".person" / "manifest.json").is_file()
    run_match([bot, "call"], 2, retain_into="named")
    assert (tmp_path / "casebases" / "named" / "manifest.json").is_file()
    with pytest.raises(OutputPathError, match="does not exist"):  # a path's folder must exist
        run_match([bot, "call"], 2, retain_into="./nowhere/x")
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("name", ["default", "expert"])
def test_retain_into_a_shipped_name_is_refused(small_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               name: str) -> None:
    """A copy made at ./casebases/default would stand in for the shipped default case base in
    every later run from that folder (the web table's "Retain into" made one silently)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseBaseError, match=f"'{name}' is the name of a shipped case base"):
        run_match([f"cbr:casebase={small_copy}", "call"], 2, retain_into=name)
    assert not (tmp_path / "casebases").exists()
    run_match([f"cbr:casebase={small_copy}", "call"], 2, retain_into=f"./{name}")  # a path says where: fine
    assert (tmp_path / name / "manifest.json").is_file()


@pytest.mark.parametrize("name", ["default", "expert"])
def test_retain_into_a_shipped_case_base_by_its_folder_is_refused_as_shipped(monkeypatch: pytest.MonkeyPatch,
                                                                            name: str) -> None:
    """From the folder beside the shipped case bases (an editable install), ./casebases/default is
    the shipped default: retaining into it for bots on expert said it was "no copy of it" (naming
    --retain-into); it is refused as every shipped base is, by the field, in the library's words."""
    from cbr.store import PACKAGED_CASEBASES

    monkeypatch.chdir(PACKAGED_CASEBASES.parent)
    for into in (name, str(PACKAGED_CASEBASES / name)):
        with pytest.raises(CaseBaseError, match=f"^the shipped case base '{name}' is never written to; retain "
                                                f"into") as info:
            run_match(["cbr", "call"], 2, retain_into=into)
        assert info.value.field == "retain_into" and "--" not in str(info.value)


@pytest.mark.parametrize("name", ["styles", "cfr", "selfplay"])
def test_retain_into_a_shipped_folder_is_refused_as_build_refuses_it(monkeypatch: pytest.MonkeyPatch,
                                                                    name: str) -> None:
    """From the folder beside the shipped data (an editable install), ``--retain-into styles``
    (cfr, selfplay: shipped folders that are no case bases) said ``.../casebases/styles is not
    a case base: manifest.json is missing``, naming a server path over HTTP; it is refused as
    ``build -o casebases/styles`` is: a shipped folder, never written to; nothing is written."""
    monkeypatch.chdir(PACKAGED_CASEBASES.parent)
    folder = PACKAGED_CASEBASES / name
    before = sorted(p.name for p in folder.rglob("*"))
    for into in (name, f"./casebases/{name}", f"./casebases/{name}/mine"):
        with pytest.raises(CaseBaseError) as info:
            run_match(["cbr", "call"], 2, retain_into=into)
        shown = into if into.startswith(".") else f"casebases/{name}"
        inside = "in " if into.endswith("/mine") else ""
        assert str(info.value) == (f"{shown} is {inside}the shipped folder {name!r}, which is never written to (its "
                                   f"recipe under casebases/ rebuilds it); give another case base name or path")
        assert info.value.field == "retain_into" and str(PACKAGED_CASEBASES) not in str(info.value)
    assert sorted(p.name for p in folder.rglob("*")) == before
    proc = subprocess.run([sys.executable, "-m", "cli", "match", "--players", "cbr,call", "--hands", "1",
                           "--retain-into", name], capture_output=True, text=True, cwd=PACKAGED_CASEBASES.parent,
                          timeout=300)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"error: casebases/{name} is the shipped folder {name!r}, which is never "
                                  "written to"), proc.stderr


def test_retain_into_with_bots_on_two_case_bases_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both bots played from a copy of the first one's case base: the expert bot silently
    became a casper bot."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseBaseError, match=r"play from 2 \(default, expert\)"):
        run_match(["cbr:preset=casper", "cbr", "call"], 2, retain_into="./both")
    assert not (tmp_path / "both").exists()


def test_cli_retain_into_a_path_twice(small_copy: Path, tmp_path: Path) -> None:
    """The second `cbr match --retain-into ./X` grows ./X (it failed when the first made ./casebases/X)."""
    runs = [subprocess.run([sys.executable, "-m", "cli", "match", "--players", f"cbr:casebase={small_copy},call",
                            "--hands", "2", "--seed", str(seed), "--retain-into", "./X", "--json"],
                           capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120) for seed in (1, 2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    ids = {json.loads(run.stdout)["match_id"] for run in runs}
    with CaseBase.open(tmp_path / "X") as cb:
        assert {r[0] for r in cb.sql("SELECT DISTINCT match_id FROM cases WHERE source = 'retained'").fetchall()} == ids
    assert not (tmp_path / "casebases").exists()
    help_text = subprocess.run([sys.executable, "-m", "cli", "match", "--help"], capture_output=True, text=True,
                               env=ENV, cwd=tmp_path, timeout=60).stdout
    help_text = " ".join(help_text.split())
    assert "a bare name is ./casebases/NAME" in help_text and "starting with '.') is that folder" in help_text


def test_the_adaptive_bots_report_names_the_copy_it_retains_into(small_copy: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """After `--retain-into ./X` the adaptive bot played from the copy ./X, while its report (the
    experts it chose, by hand) named the case base of its spec (`casebase=default`): the report
    names the case base the bot played from and grew, in the library and on the command line; a
    plain `cbr` (no casebase option) names it too."""
    monkeypatch.chdir(tmp_path)
    for bot, into in ((f"cbr:casebase={small_copy}", "./X"), ("cbr", "./Y")):
        r = run_match([bot, "call"], 3, seed=1, retain_into=into)
        copy = (tmp_path / into).resolve()
        experts = r.players[0].experts
        assert experts and {e.expert for e in experts} == {f"cbr:preset=imitate:casebase={copy}"}, experts
    proc = subprocess.run([sys.executable, "-m", "cli", "match", "--players", f"cbr:casebase={small_copy},call",
                           "--hands", "3", "--seed", "1", "--retain-into", "./Z"],
                          capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    played = next(ln for ln in proc.stdout.splitlines() if "played, by hand:" in ln).partition("played, by hand:")[2]
    assert played.startswith(f" cbr:preset=imitate:casebase={(tmp_path / 'Z').resolve()} 1-3 ("), played


def test_retention_needs_a_case_based_bot() -> None:
    with pytest.raises(CaseBaseError, match="case-based bot"):
        run_match(["ehs", "call"], 2, retain=True)


def test_cli_match_retain_json_and_errors(small_copy: Path, tmp_path: Path) -> None:
    path = fresh(small_copy, tmp_path)
    run = subprocess.run([sys.executable, "-m", "cli", "match", "--players", f"cbr:casebase={path},call",
                          "--hands", "6", "--retain", "--json"], capture_output=True, text=True, env=ENV,
                         cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["retained"] > 0 and out["match_id"]
    bad = subprocess.run([sys.executable, "-m", "cli", "match", "--players", "cbr,call", "--hands", "2", "--retain"],
                         capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=120)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "--retain-into" in bad.stderr


def test_human_decisions_are_retained(small_copy: Path, tmp_path: Path) -> None:
    from cbr.play.human import play_human

    path = fresh(small_copy, tmp_path)
    keys = iter(["c"] * 40)
    r = play_human([f"cbr:casebase={path}"], 3, read=lambda p: next(keys, None), show=lambda s: None, seed=3,
                   retain=True)
    with CaseBase.open(path) as cb:
        mine = cb.sql("SELECT count(*) FROM cases WHERE source = 'retained' AND player = 'you'").fetchone()[0]
        total = cb.sql("SELECT count(*) FROM cases WHERE source = 'retained'").fetchone()[0]
    assert mine == len(r.decisions) > 0 and total == r.retained


# ---- the retention log -----------------------------------------------------------------
def _table(first: int, n: int):  # noqa: ANN202
    """A log chunk: case ids from ``first`` and ``n`` rows of one feature."""
    from cbr.store.parts import row_batch

    return (np.arange(first, first + n), row_batch(["x"], np.arange(n, dtype=np.float32).reshape(n, 1), "c" * n))


def test_torn_tail_is_ignored_then_truncated(tmp_path: Path) -> None:
    path = tmp_path / "log-00000.bin"
    log = RetentionLog(path, 0)
    log.append({"flop": _table(0, 2)})
    good = path.stat().st_size
    for cut in (1, 5, 11, 12, 30):  # a record cut anywhere: header or body
        with open(path, "r+b") as fh:
            fh.truncate(good)
            fh.seek(good)
            fh.write(bytes(_full_record(2, 3))[:cut])
        again = RetentionLog(path, 0)
        again.refresh()
        assert again.rows["flop"] == 2 and again.torn, cut
    again.append({"flop": _table(2, 1)})  # the next writer drops the torn tail
    third = RetentionLog(path, 0)
    third.refresh()
    assert third.rows["flop"] == 3 and not third.torn and third.next_id == 3


def _full_record(first: int, n: int) -> bytes:
    import struct
    import zlib

    from cbr.store.retention_log import MAGIC, _encode

    payload = _encode({"flop": _table(first, n)})
    return struct.pack("<4sII", MAGIC, len(payload), zlib.crc32(payload)) + payload


def test_damage_before_committed_records_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "log-00000.bin"
    log = RetentionLog(path, 0)
    log.append({"flop": _table(0, 2)})
    first = path.stat().st_size
    log.append({"flop": _table(2, 2)})
    data = bytearray(path.read_bytes())
    data[first // 2] ^= 0x40  # a flipped bit inside the first record
    path.write_bytes(bytes(data))
    with pytest.raises(CaseBaseError, match="damaged record at byte 0"):
        RetentionLog(path, 0).refresh()


def test_a_zero_filled_tail_is_torn_not_damage(tmp_path: Path) -> None:
    path = tmp_path / "log-00000.bin"
    RetentionLog(path, 0).append({"flop": _table(0, 2)})
    with open(path, "ab") as fh:
        fh.write(b"\0" * 100)
    log = RetentionLog(path, 0)
    log.refresh()
    assert log.rows["flop"] == 2 and log.torn


def test_compaction_by_another_handle_keeps_the_writer_consistent(small_copy: Path, tmp_path: Path) -> None:
    path = fresh(small_copy, tmp_path)
    writer, compactor = CaseBase.open(path), CaseBase.open(path)
    rows = np.zeros((1, len(writer.feature_names("flop"))), np.float32)
    a = writer.append("flop", rows, "c")
    assert compactor.compact() == 1
    b = writer.append("flop", rows + 0.5, "r")  # follows the new log generation
    assert int(b[0]) == int(a[0]) + 1
    writer.close()
    compactor.close()
    with CaseBase.open(path) as cb:
        c = cb.cases("flop")
        assert c.case_ids[-2:].tolist() == [int(a[0]), int(b[0])] and c.actions[-2:].tolist() == ["c", "r"]
        assert cb.index("flop").n_cases_ == len(c)


def test_reader_in_another_process_sees_new_cases_after_refresh(small_copy: Path, tmp_path: Path) -> None:
    path = fresh(small_copy, tmp_path)
    reader = CaseBase.open(path)
    n = reader.count("turn")
    proc = subprocess.run([sys.executable, "-c", "import sys, numpy as np\nfrom cbr.store import CaseBase\n"
                           "cb = CaseBase.open(sys.argv[1])\n"
                           "cb.append('turn', np.zeros((2, len(cb.feature_names('turn'))), np.float32), 'cr')\n",
                           str(path)], env=ENV, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert reader.count("turn") == n  # a snapshot until refreshed
    assert reader.refresh() == 2 and reader.count("turn") == n + 2
    assert reader.sql("SELECT count(*) FROM cases_turn").fetchone() == (n + 2,)
    reader.close()


def test_inspect_and_query_in_other_processes_while_a_bot_retains(small_copy: Path, tmp_path: Path) -> None:
    """`cbr casebase inspect --json` and `cbr query` run while a match retains: every answer is
    a consistent base (counts add up, the total never goes down, queries answer)."""
    path = fresh(small_copy, tmp_path)
    player = subprocess.Popen([sys.executable, "-m", "cli", "match", "--players", f"cbr:casebase={path},call",
                               "--hands", "400", "--retain", "--json"], env=ENV, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    totals = []
    try:
        deadline = time.monotonic() + 120
        while player.poll() is None and time.monotonic() < deadline and len(totals) < 6:
            ins = subprocess.run([sys.executable, "-m", "cli", "casebase", "inspect", str(path), "--json"],
                                 env=ENV, cwd=REPO, capture_output=True, text=True, timeout=120)
            assert ins.returncode == 0, ins.stderr
            info = json.loads(ins.stdout)
            assert info["total"] == sum(c["total"] for c in info["counts"].values())
            for c in info["counts"].values():
                assert c["total"] == c["f"] + c["c"] + c["r"]
            totals.append(info["total"])
            q = subprocess.run([sys.executable, "-m", "cli", "query", "--casebase", str(path), "--hole", "AsKs",
                                "--board", "2c7d9h", "--json"], env=ENV, cwd=REPO, capture_output=True,
                               text=True, timeout=120)
            assert q.returncode == 0, q.stderr
            assert abs(sum(json.loads(q.stdout)["triple"].values()) - 1) < 1e-6
        out, err = player.communicate(timeout=300)
        assert player.returncode == 0, err
    finally:
        if player.poll() is None:
            player.kill()
            player.wait()
    assert totals == sorted(totals) and len(totals) >= 2
    assert CaseBase.open(path).count() == CaseBase.open(small_copy).count() + json.loads(out)["retained"]


def test_acpc_client_and_dealer_retain(small_copy: Path, tmp_path: Path) -> None:
    """`cbr serve-dealer --retain-into` (an in-process cbr seat) and `cbr play --acpc --retain`
    (a client, over loopback TCP) both keep their hands."""
    path = fresh(small_copy, tmp_path)
    before = CaseBase.open(path).count()
    dealer = subprocess.Popen([sys.executable, "-m", "cli", "serve-dealer", "--players", "remote,call", "--hands", "12",
                               "--port", "0", "--timeout", "30"], env=ENV, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert dealer.stdout is not None
        line = dealer.stdout.readline().strip()
        assert line.startswith("listening on "), dealer.stderr.read() if dealer.stderr else line
        address = line.split()[-1]
        client = subprocess.run([sys.executable, "-m", "cli", "play", "--acpc", address, "--policy",
                                 f"cbr:casebase={path}", "--retain", "--json"], env=ENV, cwd=REPO,
                                capture_output=True, text=True, timeout=120)
        assert client.returncode == 0, client.stderr
        out = json.loads(client.stdout)
        assert out["hands"] == 12 and out["retained"] > 0
        dealer.wait(timeout=60)
    finally:
        if dealer.poll() is None:
            dealer.kill()
            dealer.wait()
    with CaseBase.open(path) as cb:
        assert cb.count() == before + out["retained"]
        (opps,) = cb.sql("SELECT DISTINCT opponents FROM cases WHERE source = 'retained' AND player = "
                         "'cbr'").fetchone()
        assert opps == address  # the client knows its opponents only by the dealer's address
    run = subprocess.run([sys.executable, "-m", "cli", "serve-dealer", "--players", "cbr,call", "--hands", "6",
                          "--retain-into", str(tmp_path / "dealt")], env=ENV, cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    kept = int(run.stdout.strip().splitlines()[-1].split()[1].replace(",", ""))
    with CaseBase.open(tmp_path / "dealt") as cb:
        assert kept > 0 and cb.sql("SELECT count(*) FROM cases WHERE source = 'retained'").fetchone() == (kept,)


def test_retention_experiment_script_runs_and_reports(tmp_path: Path) -> None:
    """experiments/retention.py on a few hands: the report's shape, and the paired difference
    equals the mean of the per-hand differences it is computed from."""
    run = subprocess.run([sys.executable, str(REPO / "experiments" / "retention.py"), "--hands", "45", "--seed", "5",
                          "--window", "20", "--out", str(tmp_path)], env=ENV, cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    report = json.loads((tmp_path / "retention-seed5.json").read_text())
    assert report["hands"] == 45 and report["retained"] > 0
    assert len(report["thirds"]["retention"]) == 3 == len(report["similarity_thirds"]["control"])
    sims = report["similarity_thirds"]["retention"] + report["similarity_thirds"]["control"]
    assert all(0 < s <= 1 for s in sims)          # every decision's similarity kept (they were NaN: none kept)
    assert set(report["verdict"]) == {"similarity_rises", "last_third_beats_first_by_more_than_ci",
                                      "last_third_beats_control_by_more_than_ci"}
    on, off = report["thirds"]["retention"][2], report["thirds"]["control"][2]
    assert abs(report["last_third_minus_control"]["sb_per_hand"] - (on["sb_per_hand"] - off["sb_per_hand"])) < 2e-4


def test_rows_the_bot_computed_are_reused_and_equal_recomputed_rows(small_copy: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Retention takes the bot's own decisions' feature rows from the bot (not computed again):
    bit-equal to ``fs.row(dp)``; the opponent's shown decisions are computed; what is stored
    is the same either way."""
    path = fresh(small_copy, tmp_path)
    seen: list[tuple[list, list]] = []
    original = CaseBase.retain_hand

    def spy(self, dps, *args, rows=None, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.append((list(dps), list(rows) if rows is not None else [None] * len(dps)))
        return original(self, dps, *args, rows=rows, **kwargs)

    monkeypatch.setattr(CaseBase, "retain_hand", spy)
    bot = CBRPolicy(casebase=str(path), seed=2)
    r = run_match([bot, "call"], 25, seed=9, retain=True)
    bot.close()
    fs = CaseBase.open(path).feature_set()
    given = [(dp, row) for dps, rows in seen for dp, row in zip(dps, rows) if row is not None]
    computed = [dp for dps, rows in seen for dp, row in zip(dps, rows) if row is None]
    assert given and computed and len(given) + len(computed) == r.retained
    assert {dp.player for dp, _ in given} == {"cbr"} and {dp.player for dp in computed} == {"call"}
    for dp, row in given:
        again = fs.row(dp)
        assert row.dtype == again.dtype == np.float32 and row.tobytes() == again.tobytes()
    # the stored features are the rows recomputed from the decisions, bit for bit
    cb = CaseBase.open(path)
    for street, name in enumerate(STREETS):
        dps = [dp for dps, _ in seen for dp in dps if dp.street == street]
        if not dps:
            continue
        table = cb.sql(f"SELECT case_id FROM cases_{name} WHERE source = 'retained' ORDER BY case_id").fetchall()
        arrays = cb.cases(name)
        pos = {int(c): i for i, c in enumerate(arrays.case_ids.tolist())}
        stored = arrays.features[[pos[c] for (c,) in table]]
        assert stored.tobytes() == np.vstack([fs.row(dp) for dp in dps]).tobytes()


def test_retain_hand_rows_argument(small_copy: Path, tmp_path: Path) -> None:
    """``rows=``: None entries are computed; given ones are stored as given; a wrong count
    or shape is refused before anything is written."""
    rec = Recorder()
    run_match(["ehs", "call"], 6, seed=11, log=rec)
    dps = [dp for record in rec.records for dp in replay(record)][:12]
    a, b = CaseBase.open(fresh(small_copy, tmp_path, "a")), CaseBase.open(fresh(small_copy, tmp_path, "b"))
    fs = a.feature_set()
    rows = [fs.row(dp) if i % 2 else None for i, dp in enumerate(dps)]
    ids_a = a.retain_hand(dps, match_id="m")
    ids_b = b.retain_hand(dps, rows=rows, match_id="m")
    assert ids_a == ids_b
    for s in STREETS:
        assert a.rows_since(s, 0).features.tobytes() == b.rows_since(s, 0).features.tobytes()
    n = b.count()
    with pytest.raises(ValueError, match="rows: 1 row for 12 decisions"):
        b.retain_hand(dps, rows=rows[:1])
    with pytest.raises(ValueError, match="features must have shape"):
        b.retain_hand(dps, rows=[np.zeros(3, np.float32)] * len(dps))
    assert b.count() == n


def test_a_decision_record_gives_its_row_only_to_its_own_casebase(small_copy: Path, tmp_path: Path) -> None:
    """The record carries the row the bot decided from, the same bit for bit as the feature
    set computes it; retention into another case base does not take it."""
    rec = Recorder()
    run_match(["ehs", "call"], 4, seed=11, log=rec)
    first = list(replay(rec.records[0]))
    bot = CBRPolicy(casebase=str(fresh(small_copy, tmp_path)), seed=1)
    cb = bot.open()
    d = bot.decide(first[0])
    assert d.dp.action == d.action and d.dp.history == first[0].history
    assert d.row.tobytes() == cb.feature_set().row(first[0]).tobytes()
    assert d.row_for(cb) is d.row
    other = CaseBase.open(fresh(small_copy, tmp_path, "other"))
    assert d.row_for(other) is None  # another case base: its own row is computed
    assert len(d.vote.ids) == len(d.case_ids) and len(d.vote) == d.retrieved
    other.close()
    bot.close()


def test_a_retained_case_keeps_the_row_its_decision_was_made_from(small_copy: Path, tmp_path: Path) -> None:
    """No second feature pass: the row a live decision was made from is the retained case's
    row. A row that differs from what the feature set would compute (here: marked) is stored
    as the decision gave it, so the test sees which of the two was written."""
    from cbr.game import preset
    from cbr.play.retention import Retainer
    from cbr.play.table import PolicySeat, Table, act_rng
    from cbr.policies.baseline import AlwaysCallPolicy

    bot = CBRPolicy(casebase=str(fresh(small_copy, tmp_path)), seed=1)
    cb = bot.open()
    marked = []

    class Marking(PolicySeat):
        def decide(self, state, dp):
            d = super().decide(state, dp)
            d.row[-1] = 0.123  # the record's own row: retention must store this one
            marked.append(d)
            return d

    retainer = Retainer(cb, [0], ["cbr", "call"])
    table = Table(preset("holdem.limit.2p"), [Marking(bot, act_rng(0, 0)), PolicySeat(AlwaysCallPolicy(), act_rng(0, 1))],
                  ["cbr", "call"], seed=5, retainers=[retainer])
    for k in range(3):
        table.play(k)
    assert marked and retainer.retained >= len(marked)
    for street, name in enumerate(STREETS):
        mine = [d for d in marked if d.dp.street == street]
        if not mine:
            continue
        got = cb.rows_since(name, cb.count(name) - retainer.retained).features
        stored = {r.tobytes() for r in got}
        assert all(d.row.tobytes() in stored for d in mine)
    bot.close()


def test_retain_into_a_copy_of_another_case_base_is_refused(small_copy: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35, defect 6: `cbr:preset=casper` retaining into `learned` (a copy of `expert`)
    played from the expert cases without a word. The copy now records where it came from,
    and a target that is neither the bot's case base nor a copy of it is refused."""
    from cbr.store.manifest import read_manifest, write_manifest
    from cbr.store.writer import CaseBaseWriter

    monkeypatch.chdir(tmp_path)
    mine = f"cbr:casebase={small_copy}"
    first = run_match([mine, "call"], 2, seed=1, retain_into="learned")
    learned = tmp_path / "casebases" / "learned"
    origin = read_manifest(learned).origin
    assert origin is not None and (origin["name"], origin["path"]) == ("base", str(small_copy.resolve()))
    assert origin["cases"] == CaseBase.open(small_copy).count() and origin["bytes"] > 1_000_000
    count = CaseBase.open(learned).count()
    with pytest.raises(CaseBaseError, match=r"copy of case base 'base' .* while the case-based bots play from "
                                            r".*default.*cbr:casebase="):
        run_match(["cbr:preset=casper", "call"], 2, retain_into="learned")  # CASPER's bot plays from default
    assert CaseBase.open(learned).count() == count  # nothing retained, nothing played from it
    again = run_match([mine, "call"], 2, seed=2, retain_into="learned")  # the bot it was copied for: grows it
    assert CaseBase.open(learned).count() == count + again.retained and first.retained > 0
    run_match([f"cbr:casebase={learned}", "call"], 2, retain_into="learned")  # the bot's own base: fine

    old = copy_casebase(small_copy, tmp_path / "old")  # a copy made before origins were recorded
    m = read_manifest(old)
    m.origin = None
    write_manifest(old, m)
    run_match([mine, "call"], 2, retain_into="./old")  # the same logs as the bot's base: a copy of it
    built = tmp_path / "built"  # a case base built from other logs
    with CaseBaseWriter(built, build_index=False) as w:
        w.add_source(REPO / "casebases" / "selfplay" / "hu-ehs-hs.log", format="acpc")
        w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
    with pytest.raises(CaseBaseError, match="no copy of it"):
        run_match([mine, "call"], 2, retain_into="./built")


def test_retain_into_a_copy_whose_source_moved_is_the_same_case_base_by_name_and_content(
        small_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first-time user's report: `pip install .`, `cbr match ... --retain-into learned` (a copy
    of the shipped 'expert'), then `pip install -e .` and the same match: refused, because the copy
    recorded the site-packages path of 'expert' and the bots now played from the clone's. A copy
    names its source by name and content, not only by folder: a source that moved (its recorded
    path rewritten, as a reinstall does) is still its source; another case base is not."""
    from cbr.store.manifest import content_id, read_manifest, write_manifest

    monkeypatch.chdir(tmp_path)
    mine = f"cbr:casebase={small_copy}"
    run_match([mine, "call"], 2, seed=1, retain_into="learned")
    learned = tmp_path / "casebases" / "learned"
    m = read_manifest(learned)
    assert m.origin is not None and m.origin["content"] == content_id(read_manifest(small_copy))
    m.origin["path"] = str(tmp_path / "gone" / "site-packages" / "casebases" / "base")  # the old install
    write_manifest(learned, m)
    count = CaseBase.open(learned).count()
    again = run_match([mine, "call"], 2, seed=2, retain_into="learned")  # the same source: it grows
    assert again.retained > 0 and CaseBase.open(learned).count() == count + again.retained

    other = tmp_path / "elsewhere" / "base"  # another case base of the same name, with other cases
    copy_casebase(small_copy, other)
    run_match([f"cbr:casebase={other}", "call"], 2, seed=3, retain=True)
    run_match([f"cbr:casebase={other}", "call"], 2, seed=4, retain_into="learned2")
    learned2 = tmp_path / "casebases" / "learned2"
    m2 = read_manifest(learned2)
    assert m2.origin is not None and m2.origin["name"] == "base" and m2.origin["content"] != m.origin["content"]
    m2.origin["path"] = m.origin["path"]
    write_manifest(learned2, m2)
    count2 = CaseBase.open(learned2).count()
    with pytest.raises(CaseBaseError, match=r"copy of case base 'base' .* while the case-based bots play from"):
        run_match([mine, "call"], 2, retain_into="learned2")
    assert CaseBase.open(learned2).count() == count2


def test_a_copy_of_a_shipped_case_base_made_before_copies_named_their_content(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own `learned`, made by an engine whose copies recorded only the source's name,
    path, cases and bytes: a copy of the shipped case base of that name, installed elsewhere then,
    with as many cases as it has now, is a copy of it; one with other counts is not."""
    from cbr.store.manifest import read_manifest, write_manifest

    monkeypatch.chdir(tmp_path)
    run_match(["cbr:preset=casper", "call"], 2, seed=1, retain_into="learned")  # CASPER plays from 'default'
    learned = tmp_path / "casebases" / "learned"
    m = read_manifest(learned)
    assert m.origin is not None and m.origin["name"] == "default"
    del m.origin["content"]
    m.origin["path"] = str(tmp_path / ".venv" / "lib" / "site-packages" / "casebases" / "default")
    write_manifest(learned, m)
    count = CaseBase.open(learned).count()
    again = run_match(["cbr:preset=casper", "call"], 2, seed=2, retain_into="learned")
    assert again.retained > 0 and CaseBase.open(learned).count() == count + again.retained
    m = read_manifest(learned)
    m.origin["cases"] += 1  # it was copied from a 'default' of other cases
    write_manifest(learned, m)
    with pytest.raises(CaseBaseError, match=r"copy of case base 'default' .* while the case-based bots play from"):
        run_match(["cbr:preset=casper", "call"], 2, retain_into="learned")


def test_cli_says_what_retain_into_copied_and_its_size(small_copy: Path, tmp_path: Path) -> None:
    def match(players: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli", "match", "--players", players, "--hands", "2",
                               "--retain-into", "./L", "--json"], capture_output=True, text=True, env=ENV,
                              cwd=tmp_path, timeout=120)

    first = match(f"cbr:casebase={small_copy},call")
    assert first.returncode == 0, first.stderr
    cases = CaseBase.open(small_copy).count()
    size = sum(f.stat().st_size for f in small_copy.rglob("*") if f.is_file() and not f.name.startswith("."))
    note = [line for line in first.stderr.splitlines() if line.startswith("note: copied")]
    assert note == [f"note: copied case base 'base' ({cases:,} cases, {size / 1e6:.1f} MB) to {tmp_path / 'L'}; "
                    f"the case-based bots play from the copy"], first.stderr
    json.loads(first.stdout)  # the JSON on stdout stays whole
    second = match(f"cbr:casebase={small_copy},call")
    assert second.returncode == 0 and "copied" not in second.stderr, second.stderr
    other = match("cbr:preset=casper,call")
    assert other.returncode == 1 and other.stderr.count("\n") == 1, other.stderr
    assert other.stderr.startswith(f"error: the case base to retain into, {tmp_path / 'L'}, is a copy of case "
                                   f"base 'base'") and other.stderr.endswith(" (--retain-into)\n"), other.stderr


def test_the_default_adaptive_bot_keeps_every_decision_whichever_expert_made_it(small_copy: Path,
                                                                                 tmp_path: Path) -> None:
    """Plain `cbr` is the adaptive bot: against a maniac it leaves its case base for another bot
    after the warm-up, and retention still keeps every one of its decisions, in its safe expert's
    case base."""
    from cbr.policies.spec import policy_from_spec

    path = fresh(small_copy, tmp_path)
    rec = Recorder()
    bot = policy_from_spec(f"cbr:casebase={path}", seed=4)
    assert type(bot).__name__ == "AdaptivePolicy" and bot.casebase_path == path.resolve()
    r = run_match([bot, "raise"], 160, seed=5, retain=True, log=rec)  # type: ignore[arg-type]
    experts = {e for _, e in bot.chosen}
    bot.close()
    assert bot.safe in experts and len(experts) >= 2                    # both made decisions
    me = f"cbr/casebase={path}"  # the seat is labelled by the spec it was built from
    mine = sum(1 for record in rec.records for dp in replay(record) if dp.player == me)
    cb = CaseBase.open(path)
    kept = cb.sql(f"SELECT count(*) FROM cases WHERE source = 'retained' AND player = '{me}'").fetchone()[0]
    assert kept == mine == len(bot.chosen) > 0 and r.retained >= kept


def test_an_empty_retention_target_or_condensed_name_is_refused_as_empty(tmp_path: Path, monkeypatch) -> None:
    """`--retain-into ''` said the current folder's casebases/ was not a case base; `condense -o ''`
    that '' already existed."""
    from typer.testing import CliRunner

    from cbr.play.retention import retention_target
    from cli import app

    monkeypatch.chdir(tmp_path)
    with pytest.raises(CaseBaseError, match="empty name"):
        retention_target("  ")
    r = CliRunner().invoke(app, ["match", "--players", "cbr,call", "--hands", "2", "--retain-into", ""])
    assert r.exit_code == 1 and "empty name" in r.output and not (tmp_path / "casebases").exists()
    r = CliRunner().invoke(app, ["casebase", "condense", "default", "-o", ""])
    assert r.exit_code == 2 and "needs a name" in r.output
