"""The DuckDB catalog of a case base: SQL views over the Parquet parts.

Two flavours of the same views:

- ``catalog.duckdb`` on disk, for people using DuckDB directly. Views read exactly the
  parts the manifest lists (a part left behind by a crash or kept for readers after a
  compaction is never counted; rewritten by builds and compactions, by
  :meth:`~cbr.store.CaseBase.close` after appends, and on the next open if a writer died
  before that), by *relative* path, resolved
  through DuckDB's ``file_search_path``, so the directory can be moved or copied::

      duckdb -cmd "SET file_search_path='casebases/demo'" casebases/demo/catalog.duckdb

- :func:`connect`: an in-memory connection whose views list exactly the parts the
  manifest commits (a part left behind by a crash is never read), plus the cases of the
  retention log (not yet compacted into parts). :meth:`CaseBase.sql` uses this one; the
  on-disk catalog sees retained cases once :meth:`CaseBase.compact` has moved them to parts.
  Its views are made street by street (:func:`add_street_view`), each when first needed: a
  query of one street's cases (:meth:`CaseBase.rows_by_id`) reads, and checks, that street's
  parts only, so a damaged part of another street does not stop it.

Views: ``cases_preflop`` .. ``cases_river`` (case_id, the street's features, action,
provenance) and ``cases``, their union with a ``street`` column (features absent on a
street are NULL).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.store import duck
from cbr.store.durable import atomic_write_with
from cbr.store.manifest import Manifest

if TYPE_CHECKING:  # duckdb is imported when a catalog is used, not when a case base opens
    import duckdb
    import pyarrow as pa

__all__ = ["CATALOG", "CatalogViewError", "connect", "add_street_view", "add_union_view", "write_catalog", "view_sql"]

CATALOG = "catalog.duckdb"


class CatalogViewError(CaseBaseError):
    """The on-disk catalog's view over a street's parts cannot be written: a part's Parquet
    footer cannot be read (the catalog is left as it was)."""


def _unreadable_part(root: Path, entries: list[dict]) -> str:
    """Why a view over the parts ``entries`` lists (under ``root``) could not be written, and
    what mends it, in the store's words: the first part missing, of another size than the
    manifest lists, or unlike its CRC-32; else that one of them cannot be read as Parquet
    though it is as listed.

    >>> import tempfile
    >>> _unreadable_part(Path(tempfile.mkdtemp()), [{"file": "cases/flop/part-00000.parquet", "bytes": 10, "crc32": 0}])
    'missing file cases/flop/part-00000.parquet (listed in manifest.json): restore the part from a copy or rebuild the case base with cbr build (cbr casebase verify lists every problem)'
    """
    from cbr.store.parts import verify_part

    mend = "restore the part from a copy or rebuild the case base with cbr build (cbr casebase verify lists every problem)"
    for entry in entries:
        try:
            verify_part(root, entry)
        except CaseBaseError as exc:
            why = str(exc)
            for prefix in (f"{root}: ", f"{root.resolve()}: "):
                why = why[len(prefix):] if why.startswith(prefix) else why
            return f"{why}: {mend}"
    return f"one of them cannot be read as Parquet, though each has the size and CRC-32 the manifest lists: {mend}"


def _quote(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def view_sql(street: str, files: list[str] | str) -> str:
    """``CREATE OR REPLACE VIEW cases_<street>`` over one glob or a list of Parquet files."""
    src = _quote(files) if isinstance(files, str) else "[" + ", ".join(_quote(f) for f in files) + "]"
    return (f"CREATE OR REPLACE VIEW cases_{street} AS "
            f"SELECT * FROM read_parquet({src}, union_by_name = true)")


def _union_sql() -> str:
    parts = [f"SELECT '{s}' AS street, * FROM cases_{s}" for s in STREETS]
    return "CREATE OR REPLACE VIEW cases AS " + " UNION ALL BY NAME ".join(parts)


def connect(directory: str | Path, manifest: Manifest, retained: Mapping[str, pa.Table] | None = None,
            streets: Sequence[str] = STREETS) -> duckdb.DuckDBPyConnection:
    """In-memory DuckDB with the case views of ``streets`` over the parts the manifest lists,
    followed by ``retained``: the cases of the retention log per street (Arrow tables); with
    every street, the view ``cases`` too (:func:`add_union_view`). Views of more streets are
    added with :func:`add_street_view`."""
    con = duck.connect()
    for s in streets:
        add_street_view(con, directory, manifest, s, (retained or {}).get(s))
    if set(streets) == set(STREETS):
        add_union_view(con)
    return con


def add_street_view(con: duckdb.DuckDBPyConnection, directory: str | Path, manifest: Manifest, street: str,
                    retained: pa.Table | None = None) -> None:
    """The view ``cases_<street>`` on ``con``: the street's parts the manifest lists (read by
    absolute path), then ``retained``, the street's cases of the retention log, if any."""
    d = Path(directory).resolve()
    sql = view_sql(street, [str(d / p["file"]) for p in manifest.parts[street]])
    if retained is not None:
        con.register(f"retained_{street}", retained)
        sql += f" UNION ALL BY NAME SELECT * FROM retained_{street}"
    con.execute(sql)


def add_union_view(con: duckdb.DuckDBPyConnection) -> None:
    """The view ``cases`` on ``con``: every street's view (all made already), with a ``street`` column."""
    con.execute(_union_sql())


def write_catalog(directory: str | Path, manifest: Manifest) -> None:
    """(Re)write ``catalog.duckdb`` with relative-path views over the parts ``manifest`` lists."""
    d = Path(directory).resolve()

    def write(tmp: str) -> None:
        import duckdb

        con = duck.connect(tmp)
        try:
            con.execute(f"SET file_search_path = {_quote(str(d))}")
            for s in STREETS:
                files = [p["file"] for p in manifest.parts[s]]
                try:
                    con.execute(view_sql(s, files))
                except duckdb.Error as exc:  # a view reads its parts' footers: one is damaged
                    # said in the store's words (DuckDB's own stay the __cause__, for debugging)
                    raise CatalogViewError(f"{d / CATALOG}: cannot write the view over the {s} parts "
                                           f"({', '.join(files)}): {_unreadable_part(d, manifest.parts[s])}") from exc
            con.execute(_union_sql())
            con.execute("CHECKPOINT")
        finally:
            con.close()

    atomic_write_with(d / CATALOG, write)
