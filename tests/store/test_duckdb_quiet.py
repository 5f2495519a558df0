"""The library never prints: DuckDB's progress bar (written to stdout by DuckDB itself once a
query runs past ``progress_bar_time``) is off on every connection the library opens.

Found by CI: a slow compaction (then called fold) printed bar characters into a retaining player's stdout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from cbr.models.store import ModelStore
from cbr.store import CaseBase
from cbr.store.writer import CaseBaseWriter

REPO = Path(__file__).resolve().parents[2]
#: A query long enough to draw a bar once progress_bar_time is 0 (about 0.5 s here, so a much
#: faster machine still spends some milliseconds in it).
SLOW = "SELECT count(*) FROM range(100000000) t(a) WHERE a % 7 = 1"


def _stdout_of(code: str, *args: str) -> bytes:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


def _tiny_casebase(path: Path) -> Path:
    with CaseBaseWriter(path, build_index=False) as w:
        w.add_rows("flop", np.ones((5, 12), np.float32), "ccrcf")
    return path


def test_a_bare_duckdb_connection_does_print_a_bar_so_the_check_below_can_fail() -> None:
    out = _stdout_of(f"""
        import duckdb
        con = duckdb.connect()
        con.execute("SET progress_bar_time = 0")
        con.execute("{SLOW}").fetchall()
    """)
    assert "%".encode() in out and len(out) > 50


def test_casebase_sql_prints_nothing_even_with_progress_bar_time_0(tmp_path: Path) -> None:
    path = _tiny_casebase(tmp_path / "cb")
    out = _stdout_of(f"""
        import sys
        from cbr.store import CaseBase
        cb = CaseBase.open(sys.argv[1])
        cb.sql("SELECT 1")  # the connection, made on first use
        cb._con.execute("SET progress_bar_time = 0")  # (CaseBase.sql runs queries only)
        assert cb.sql("{SLOW}").fetchone()[0] == 14285715
        cb.close()
    """, str(path))
    assert out == b""


def test_every_library_connection_has_the_bar_off(tmp_path: Path) -> None:
    setting = "SELECT current_setting('enable_progress_bar'), current_setting('enable_progress_bar_print')"
    cb = CaseBase.open(_tiny_casebase(tmp_path / "cb"))
    try:
        assert cb.sql(setting).fetchone() == (False, False)
    finally:
        cb.close()
    store = ModelStore.open(tmp_path / "models.duckdb", create=True)
    try:
        assert store._con.execute(setting).fetchone() == (False, False)
    finally:
        store.close()
