"""Every DuckDB connection the library opens goes through :func:`connect`.

DuckDB prints a progress bar to the process's *stdout* when a query runs longer than two
seconds, even when stdout is a pipe or a file: a slow compaction on a busy machine would write
bar characters into a bot's ACPC stream or a ``--json`` answer. The library never prints,
so its connections turn the bar off (``enable_progress_bar_print`` also stays off if
someone later sets ``progress_bar_time``, which switches the bar itself back on).

>>> con = connect()
>>> con.execute("SELECT current_setting('enable_progress_bar_print')").fetchone()
(False,)
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

__all__ = ["connect"]


def connect(database: str = ":memory:", *, read_only: bool = False) -> "duckdb.DuckDBPyConnection":
    """``duckdb.connect(database, read_only=...)`` with the progress bar off; raises what
    ``duckdb.connect`` raises (``duckdb.Error``)."""
    import duckdb

    con = duckdb.connect(database, read_only=read_only)
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute("SET enable_progress_bar_print = false")
    except BaseException:
        con.close()
        raise
    return con
