"""Large outputs of the command line: a reader that goes away in the middle of one (``| head -1``)."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cli import app
from tests.conftest import REPO

#: The ``cbr`` program in a process of its own, as the console script runs it (:func:`cbr.cli.main`).
PROGRAM = "import sys; from cli import main; sys.argv = ['cbr', *sys.argv[1:]]; main()"
#: Far more than a pipe holds (64 KiB): the reader can leave while the command is still writing.
WIDE = ["casebase", "inspect", "default", "--sql", "select * from cases", "--limit", "300"]  # rich folds it
NARROW = ["casebase", "inspect", "default", "--sql",
          "select street, case_id, players_dealt, relative_position, players_in_hand from cases",
          "--limit", "1000"]  # fits 80 columns: written without rich


def first_line_then_close(args: list[str], env: dict[str, str]) -> tuple[bytes, int, str]:
    """Run ``cbr ARGS``, read its stdout up to the end of the first line, a few hundred bytes
    at a time (so the command is still in the middle of its first large write), close the
    pipe as ``head -1`` does, and give the line, the exit code and stderr."""
    proc = subprocess.Popen([sys.executable, "-c", PROGRAM, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        got = b""
        while b"\n" not in got:
            chunk = os.read(proc.stdout.fileno(), 256)
            if not chunk:
                break
            got += chunk
        proc.stdout.close()
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:  # pragma: no cover - the command hung
            proc.kill()
            proc.wait()
    return got.split(b"\n")[0], proc.returncode, err.decode()


@pytest.mark.parametrize("args", [WIDE, NARROW], ids=["rich", "plain"])
@pytest.mark.parametrize("unbuffered", [True, False], ids=["unbuffered", "buffered"])
def test_a_reader_gone_in_the_middle_of_a_large_write_is_a_quiet_exit_141(args: list[str], unbuffered: bool) -> None:
    """``cbr casebase inspect ... --limit 1000 | head -1`` exited 0 and still said "(first 1000
    rows shown ...)" under ``PYTHONUNBUFFERED=1``: the unbuffered stdout dropped what the write
    cut short by the closed pipe left over, without an error. Now the exit of a program killed by
    SIGPIPE (141), nothing on stderr, as when the reader is gone before the first write."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["COLUMNS"] = "80"
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    line, code, err = first_line_then_close(args, env)
    assert line.startswith("┏━━".encode()), line  # the table had begun
    assert (code, err) == (141, "")


def test_an_unbuffered_stdout_still_writes_everything() -> None:
    """The stream that replaces an unbuffered stdout (:func:`cbr.cli._errors.whole_writes`)
    loses nothing with a reader that reads it all: the same bytes as a buffered one."""
    outputs = []
    for unbuffered in (True, False):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
        env["COLUMNS"] = "80"
        if unbuffered:
            env["PYTHONUNBUFFERED"] = "1"
        done = subprocess.run([sys.executable, "-c", PROGRAM, *NARROW], cwd=REPO, capture_output=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n") > 1000  # the header, 1,000 rows and the box


# ---- a large --sql result begins at once ------------------------------------------------------
runner = CliRunner()


def cbr(*args: object, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def test_a_large_sql_result_is_written_as_tab_separated_values() -> None:
    """``cbr casebase inspect default --sql 'select * from cases' --all`` printed nothing for
    ~100 s while rich laid out a table of 100,000 rows: a result of more than TABLE_ROWS rows
    is now written as tab-separated values (a note on stderr says so), the same values as --json."""
    from cbr.cli.casebase import TABLE_ROWS

    n = TABLE_ROWS + 500
    sql = f"SELECT case_id, street, hand_strength, nullif(board, '') AS board FROM cases ORDER BY case_id LIMIT {n}"
    rows = json.loads(cbr("casebase", "inspect", "default", "--sql", sql, "--all", "--json").stdout)
    assert len(rows) == n
    got = cbr("casebase", "inspect", "default", "--sql", sql, "--all")
    assert got.exit_code == 0, got.output
    assert f"more than {TABLE_ROWS:,} rows: written as tab-separated values" in got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].split("\t") == ["case_id", "street", "hand_strength", "board"]
    expected = [[str(r["case_id"]), r["street"], repr(r["hand_strength"]), r["board"] or ""] for r in rows]
    assert [line.split("\t") for line in lines[1:]] == expected
    assert any(r["board"] is None for r in rows) and any(r["board"] for r in rows)  # NULLs and texts both met


def test_a_small_sql_result_stays_a_table_and_the_formats_can_be_chosen() -> None:
    from cbr.cli.casebase import TABLE_ROWS

    sql = "SELECT case_id, street FROM cases ORDER BY case_id"
    table = cbr("casebase", "inspect", "default", "--sql", sql, "--limit", TABLE_ROWS)
    assert table.exit_code == 0, table.output
    assert table.stdout.startswith("┏━") and "tab-separated" not in table.stderr
    assert table.stdout.count("\n") == TABLE_ROWS + 4  # the head (3 lines), the rows, the foot
    forced = cbr("casebase", "inspect", "default", "--sql", sql, "--limit", TABLE_ROWS + 1, "--table")
    assert forced.exit_code == 0 and forced.stdout.startswith("┏━") and "tab-separated" not in forced.stderr
    assert forced.stdout.count("\n") == TABLE_ROWS + 5
    tsv = cbr("casebase", "inspect", "default", "--sql", sql, "--limit", 3, "--tsv")
    assert tsv.exit_code == 0, tsv.output
    ids = [r["case_id"] for r in json.loads(cbr("casebase", "inspect", "default", "--sql", sql, "--limit", 3,
                                                "--json").stdout)]
    assert tsv.stdout.splitlines()[0] == "case_id\tstreet" and len(tsv.stdout.splitlines()) == 4
    assert [int(line.split("\t")[0]) for line in tsv.stdout.splitlines()[1:]] == ids
    assert "first 3 rows shown" in tsv.stderr and "tab-separated" not in tsv.stderr


def test_tsv_and_csv_keep_every_row_on_its_own_line() -> None:
    """A tab or a newline inside a value is escaped in --tsv (``\\t``, ``\\n``) and quoted in --csv."""
    sql = "SELECT 'a' || chr(9) || 'b' AS tab, 'x,' || chr(10) || 'y' AS comma_newline, NULL AS nothing, 2.5::DOUBLE AS d"
    tsv = cbr("casebase", "inspect", "default", "--sql", sql, "--tsv")
    assert tsv.exit_code == 0, tsv.output
    assert tsv.stdout == "tab\tcomma_newline\tnothing\td\na\\tb\tx,\\ny\t\t2.5\n"
    csv_out = cbr("casebase", "inspect", "default", "--sql", sql, "--csv")
    assert csv_out.exit_code == 0, csv_out.output
    import csv
    import io

    assert list(csv.reader(io.StringIO(csv_out.stdout))) == [["tab", "comma_newline", "nothing", "d"],
                                                              ["a\tb", "x,\ny", "", "2.5"]]


@pytest.mark.parametrize("args", [["--tsv"], ["--csv", "--json"], ["--sql", "select 1", "--tsv", "--csv"],
                                  ["--sql", "select 1", "--table", "--json"]])
def test_output_formats_are_usage_errors_without_sql_or_together(args: list[str]) -> None:
    got = cbr("casebase", "inspect", "default", *args)
    assert got.exit_code == 2, got.output
    assert "go with --sql" in got.output or "give one of" in got.output, got.output


def test_rows_are_written_batch_by_batch_as_they_are_fetched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each batch is on stdout before the next is fetched from DuckDB: the output of a large
    result begins with its first rows, not after its last."""
    import cbr.cli.casebase as casebase
    from cbr.store import CaseBase, resolve_casebase

    monkeypatch.setattr(casebase, "SQL_BATCH", 700)
    seen: list[int] = []  # the rows on stdout when each batch was fetched
    out = io.StringIO()

    class Watched:
        """The real rows of a query, noting what had been written when each batch came."""

        def __init__(self, rows: object) -> None:
            self.rows = rows
            self.columns = rows.columns

        @property
        def truncated(self) -> bool:
            return self.rows.truncated

        def batches(self, size: int):
            for batch in self.rows.batches(size):
                seen.append(out.getvalue().count("\n"))
                yield batch

    monkeypatch.setattr(sys, "stdout", out)
    with CaseBase.open(resolve_casebase("default")) as cb:
        n = casebase.TABLE_ROWS * 3
        result = cb.sql_stream(f"SELECT case_id FROM cases ORDER BY case_id LIMIT {n}")
        casebase._print_sql_rows(Watched(result), "auto")
    monkeypatch.undo()
    lines = out.getvalue().splitlines()
    assert lines[0] == "case_id" and len(lines) == n + 1
    # the first two batches decide (more than TABLE_ROWS rows), then each is written before the next
    assert seen[:2] == [0, 0]
    assert seen[2:] == [1 + 700 * k for k in range(2, len(seen))]
    assert len(seen) == -(-n // 700)


def test_json_rows_are_the_same_text_as_one_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """--json with --sql is written batch by batch, and its text is what the whole list printed
    at once was (print_json), also across batches and for no rows."""
    import cbr.cli.casebase as casebase
    from cbr.cli._output import json_text

    monkeypatch.setattr(casebase, "SQL_BATCH", 7)
    from cbr.store import CaseBase, resolve_casebase

    for sql in ("SELECT case_id, street, hand_strength, board FROM cases ORDER BY case_id LIMIT 30",
                "SELECT case_id FROM cases WHERE false"):
        got = cbr("casebase", "inspect", "default", "--sql", sql, "--json")
        assert got.exit_code == 0, got.output
        with CaseBase.open(resolve_casebase("default")) as cb:
            columns, rows, _ = cb.sql_rows(sql)
        assert got.stdout == json_text([dict(zip(columns, r)) for r in rows]) + "\n"
