"""Retention under SIGKILL (issue 8, section 3): a bot playing a match and retaining every
hand is killed at random moments, many times over the same case base. After each kill the
case base opens and agrees with itself (manifest, Parquet parts, retention log, SQL views,
on-disk catalog, index), and every hand the player had committed (it says so on stdout
after each commit) is there, whole: at most the hand in flight is lost.

50 kills under ``CBR_SLOW=1`` (as ``.ci/run`` runs it), 8 otherwise; ``python -m
tests.reliability.run_long -k retention`` runs 20x the short form.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import numpy as np
import pytest

from cbr.game.gamedef import STREETS
from cbr.play.retention import copy_casebase
from cbr.store import CaseBase
from cbr.store.catalog import CATALOG
from tests.reliability import reliability_rounds

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}

#: The player: a cbr bot against `call`, retaining; it prints "hand MATCH HAND_ID" after each
#: commit, and compacts the retention log into parts every 7 hands (so kills also land in compactions).
PLAYER = textwrap.dedent("""
    import sys
    import cbr.play.retention as retention
    from cbr.play.match import run_match
    from cbr.policies.cbr_policy import CBRPolicy

    inner = retention.Retainer.hand
    def hand(self, record, seats=None, decisions=None):
        n = inner(self, record, seats, decisions)
        # one write of the whole line: with PYTHONUNBUFFERED set, print() writes each piece on its own
        # and a SIGKILL between two of them would tear the line
        sys.stdout.write(f"hand {self.match_id} {record.hand_id} {n}\\n")
        sys.stdout.flush()
        if self.hands % 7 == 0:
            self.cb.compact()
        return n
    retention.Retainer.hand = hand
    bot = CBRPolicy(casebase=sys.argv[1], seed=int(sys.argv[2]))
    bot.open()
    print("ready", flush=True)
    run_match([bot, "call"], 1_000_000, seed=int(sys.argv[2]), retain=True)
""")


def agrees_with_itself(path: Path) -> CaseBase:
    """Open the base and check it: counts, ids, SQL, catalog, index (returns it open)."""
    cb = CaseBase.open(path)
    m = cb.manifest
    ids = []
    for s in STREETS:
        c = cb.cases(s)
        assert m.counts[s]["total"] == m.part_rows(s) <= len(c) == cb.count(s), s
        assert np.all(np.diff(c.case_ids) > 0), s
        assert cb.sql(f"SELECT count(*) FROM cases_{s}").fetchone() == (len(c),), s
        assert cb.index(s).n_cases_ == len(c), s
        ids.append(c.case_ids)
    all_ids = np.concatenate(ids)
    assert len(np.unique(all_ids)) == len(all_ids) and all_ids.max() < cb.next_case_id
    con = duckdb.connect(str(path / CATALOG), read_only=True)
    try:
        con.execute(f"SET file_search_path = '{path}'")
        assert con.execute("SELECT count(*) FROM cases").fetchone() == (m.total_cases,)
    finally:
        con.close()
    return cb


@pytest.mark.time_limit(420)
def test_sigkill_during_retention_loses_at_most_the_hand_in_flight(tmp_path: Path) -> None:
    """SIGKILL a retaining match at random moments; the base stays whole each time."""
    path = copy_casebase("default", tmp_path / "cb")
    rounds = reliability_rounds(50 if os.environ.get("CBR_SLOW") else 8)
    rng = np.random.default_rng(8)
    committed_total = 0
    before = CaseBase.open(path).count()
    for k in range(rounds):
        proc = subprocess.Popen([sys.executable, "-c", PLAYER, str(path), str(k)], env=ENV,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        committed: dict[str, int] = {}
        match_id = None
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.stderr
            os.set_blocking(proc.stdout.fileno(), False)
            time.sleep(float(rng.uniform(0.0, 2.5)))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            rest = proc.stdout.read() or ""
            assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""  # killed, not crashed
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for line in rest.splitlines():
            fields = line.split()
            assert len(fields) == 4 and fields[0] == "hand", repr(line)  # the player's own lines only
            _, mid, hand_id, n = fields
            match_id = mid
            committed[hand_id] = int(n)
        cb = agrees_with_itself(path)
        try:
            if match_id is not None:
                got = dict(cb.sql(f"SELECT hand_id, count(*) FROM cases WHERE match_id = '{match_id}' "
                                  "GROUP BY hand_id").fetchall())
                for hand_id, n in committed.items():  # every committed hand, whole
                    assert got.get(hand_id) == n, (k, hand_id)
                assert len(set(got) - set(committed)) <= 1, k  # at most the hand in flight beyond
                committed_total += sum(committed.values())
            assert cb.count() >= before + committed_total
        finally:
            cb.close()
    assert committed_total > 0  # the player did retain before being killed
