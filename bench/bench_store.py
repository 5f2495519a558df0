"""The case store beside SQLite, the usual peer for "a durable local table".

Run:  python3 bench/bench_store.py [--cases 200000] [--appends 200]

Both sides hold the same flop cases (12 float32 features + action + provenance) in a
temp directory and are equally durable:

- bulk build: ``CaseBaseWriter`` (Parquet parts, zstd, catalog, manifest; no index) vs
  SQLite ``executemany`` in one transaction (``synchronous=FULL``);
- load a street into numpy: ``CaseBase.cases`` vs ``SELECT`` + ``np.array``;
- durable single-case append (what live play does per decision): ``CaseBase.append``
  (part file + fsync + rename, manifest replaced atomically) vs one SQLite
  ``INSERT`` + ``COMMIT`` in WAL mode with ``synchronous=FULL``;
- an aggregate over all cases: DuckDB over the Parquet parts vs SQLite.

Prints the figures and the ratio SQLite / ours (> 1 means ours is faster).
"""
from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cbr.errors import counted  # noqa: E402
from cbr.store import CaseBase, CaseBaseWriter  # noqa: E402
from features.casper import CASPER_FEATURES  # noqa: E402


def make_cases(n: int, seed: int) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 12), dtype=np.float32)
    X[:, 0] = rng.integers(2, 11, n)
    actions = rng.choice(np.array(list("fcr")), n, p=[0.2, 0.5, 0.3]).tolist()
    return X, actions


def sqlite_open(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    cols = ", ".join(f"{f} REAL NOT NULL" for f in CASPER_FEATURES)
    con.execute(f"CREATE TABLE IF NOT EXISTS flop (case_id INTEGER PRIMARY KEY, {cols}, action TEXT NOT NULL, "
                "source TEXT, hand_id TEXT)")
    return con


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--cases", type=positive_int, default=200_000, help="flop cases of the bulk build")
    ap.add_argument("--appends", type=positive_int, default=200, help="durable single-case appends timed")
    args = parse_args(ap)
    X, actions = make_cases(args.cases, 1)
    hand_ids = [f"h{i}" for i in range(args.cases)]
    placeholders = ", ".join("?" * (len(CASPER_FEATURES) + 4))
    insert = f"INSERT INTO flop VALUES ({placeholders})"

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def build_ours() -> None:
            with CaseBaseWriter(root / "cb", build_index=False) as w:
                w.add_rows("flop", X, actions, source="bench", hand_id=hand_ids)

        def build_sqlite() -> None:
            con = sqlite_open(root / "peer.sqlite")
            rows = [(i, *map(float, X[i]), actions[i], "bench", hand_ids[i]) for i in range(args.cases)]
            con.execute("BEGIN")
            con.executemany(insert, rows)
            con.execute("COMMIT")
            con.close()

        t_build_ours, t_build_peer = timed(build_ours), timed(build_sqlite)

        cb = CaseBase.open(root / "cb")
        con = sqlite_open(root / "peer.sqlite")
        cols = ", ".join(CASPER_FEATURES)
        t_load_ours = timed(lambda: CaseBase.open(root / "cb").cases("flop"))
        t_load_peer = timed(lambda: np.array(con.execute(f"SELECT {cols} FROM flop ORDER BY case_id").fetchall(),
                                             dtype=np.float32))
        q = "SELECT action, count(*), avg(hand_strength) FROM {} GROUP BY action ORDER BY action"
        t_sql_ours = timed(lambda: cb.sql(q.format("cases_flop")).fetchall())
        t_sql_peer = timed(lambda: con.execute(q.format("flop")).fetchall())
        assert cb.sql(q.format("cases_flop")).fetchall()[0][1] == con.execute(q.format("flop")).fetchall()[0][1]

        rng = np.random.default_rng(2)
        ours, peer = [], []
        next_id = args.cases
        for i in range(args.appends):
            row = rng.random(12, dtype=np.float32)
            t = time.perf_counter()
            cb.append("flop", row, "c", hand_id=f"live{i}")
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            con.execute("BEGIN")
            con.execute(insert, (next_id, *map(float, row), "c", "retained", f"live{i}"))
            con.execute("COMMIT")
            peer.append(time.perf_counter() - t)
            next_id += 1
        con.close()
        assert CaseBase.open(root / "cb").count("flop") == args.cases + args.appends

    def line(what: str, a: float, b: float, unit: str = "s") -> None:
        print(f"{what:<44} ours {a:>10.4f} {unit}   sqlite {b:>10.4f} {unit}   ratio {b / a:>6.2f}x")

    print(f"{args.cases:,} flop cases, {args.appends} single-case appends")
    line(f"bulk build ({counted(args.cases, 'case')})", t_build_ours, t_build_peer)
    line("load street features into numpy", t_load_ours, t_load_peer)
    line("aggregate over all cases (SQL)", t_sql_ours, t_sql_peer)
    line("durable append of one case, p50", statistics.median(ours) * 1e3, statistics.median(peer) * 1e3, "ms")
    line("durable append of one case, p99", float(np.quantile(ours, 0.99)) * 1e3,
         float(np.quantile(peer, 0.99)) * 1e3, "ms")


if __name__ == "__main__":
    from native_guard import run

    run(main)
