"""``cbr casebase``: look inside case bases, check and repair them, merge them."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated, Optional

import typer

from cbr.cli._errors import EXIT_ERROR, guarded, usage_error
from cbr.cli._options import (
    check_output,
)
from cbr.cli._output import print_json, rich_table, stderr, stdout

app = typer.Typer(help="Look inside case bases, check and repair them, merge them.", no_args_is_help=True,
                  rich_markup_mode=None)

#: Rows ``cbr casebase inspect --sql`` prints unless told (--limit N, --all).
DEFAULT_SQL_ROWS = 100


@app.command("inspect")
@guarded
def casebase_inspect(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    sql: Annotated[Optional[str], typer.Option("--sql", help="Run SQL on the views `cases` and `cases_<street>`.")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=0, max=10**9,
                                                 help="With --sql: print at most this many rows (default 100).")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="With --sql: print every row (no --limit).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per street, action and source, and feature distributions; or run SQL.

    Warns (on stderr) when an action kind is missing or rare (< 1%) on a street: a case base
    built from logs that show cards only at showdown has no folds and can never recommend one.
    With --sql, at most --limit rows (100) are printed unless --all; Ctrl-C stops a query (exit 130).
    """
    from cbr.store import CaseBase, inspect, resolve_casebase

    if sql is None and (limit is not None or all_rows):
        raise usage_error("--limit and --all go with --sql", "--limit" if limit is not None else "--all")
    if limit is not None and all_rows:
        raise usage_error("give --limit N or --all, not both", "--all")
    limit = DEFAULT_SQL_ROWS if limit is None else limit
    cb = CaseBase.open(resolve_casebase(name))
    try:
        if sql is not None:
            columns, rows, truncated = cb.sql_rows(sql, None if all_rows else limit)
            if as_json:
                print_json([dict(zip(columns, r)) for r in rows])
            else:
                stdout.print(rich_table(None, columns, [list(r) for r in rows]))
            if truncated:
                stderr.print(f"(first {limit} rows shown; --limit N or --all for more)", soft_wrap=True)
            return
        info = inspect(cb)
    finally:
        cb.close()
    if as_json:
        print_json(info)
        return
    stdout.print(f"[bold]{info['name']}[/bold]  {info['path']}")
    stdout.print(f"schema {info['schema_version']}, features {info['feature_set']}, engine {info['engine_version']}, "
                 f"created {info['created']}, games: {', '.join(g for g in info['games'] if g) or '-'}")
    streets = list(info["counts"])
    stdout.print(rich_table(f"{info['total']} cases", ["street", "total", "fold", "check/call", "bet/raise",
                                                        "with outcome", "parts"],
                             [[s, c["total"], c["f"], c["c"], c["r"], info["outcomes"][s]["known"], info["parts"][s]]
                              for s, c in info["counts"].items()]))
    stdout.print(rich_table("cases per source", ["source", *streets],
                             [[src or "-", *(n[s] for s in streets)] for src, n in info["sources"].items()]))
    for s, feats in info["features"].items():
        if not info["counts"][s]["total"]:
            continue
        stats = ["min", "q25", "q50", "mean", "q75", "max"]  # --json has q05 and q95 too
        stdout.print(rich_table(f"{s} features", ["feature", *stats],
                                 [[f, *(v[k] for k in stats)] for f, v in feats.items()]))
    for w in info["warnings"]:
        stderr.print(f"warning: {w}", markup=False, highlight=False, soft_wrap=True)


@app.command("verify")
@guarded
def casebase_verify(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (also when damaged).")] = False,
) -> None:
    """Check every file of a case base; change nothing.

    Checks the manifest, each Parquet part (size, CRC-32, rows), the similarity file, the
    catalog, each index file and the retention log record by record. Prints one line per
    problem on stderr, naming the file and (in the retention log) the byte offset, and exits
    1 when there is any; exits 0 when the case base is sound.

    Example: cbr casebase verify default
    """
    from cbr.store import resolve_casebase
    from cbr.store.verify import verify_casebase

    report = verify_casebase(resolve_casebase(name))
    if as_json:
        print_json(report.to_dict())
    else:
        for note in report.notes:
            stderr.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
        for problem in report.problems:
            typer.echo(f"error: {problem.line(report.path)}", err=True)
        if report.sound:
            total = sum(report.cases.values())
            log = report.log
            logged = f", {log['records']} records in the retention log" if log else ""
            stdout.print(f"{report.path}: sound ({total} cases{logged})", markup=False, highlight=False,
                         soft_wrap=True)
    if not report.sound:
        raise typer.Exit(EXIT_ERROR)


@app.command("repair")
@guarded
def casebase_repair(
    name: Annotated[str, typer.Argument(help="A case-base directory or a name under ./casebases/.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Repair a damaged retention log (and the catalog and indexes, which are caches).

    Keeps every sound record of the retention log, before and after the damage, and moves
    only the damaged bytes, byte for byte, into retained/log-NNNNN.bin.damaged-at-OFFSET
    beside it (never deleted); says the records and cases kept and lost;
    rewrites a catalog and rebuilds indexes that disagree with the manifest. Interrupted at
    any moment, it leaves the old log or the repaired one. A sound case base is left as it
    is. Damaged parts cannot be repaired: they are listed (exit 1). The shipped case bases
    (default, expert) are refused.
    """
    from cbr.store import resolve_casebase
    from cbr.store.verify import repair_casebase

    report = repair_casebase(resolve_casebase(name))
    if as_json:
        print_json(report.to_dict())
    else:
        if report.moved or report.renumbered:
            stdout.print(f"{report.path}: kept {report.records_kept} records ({report.cases_kept} cases) of "
                         f"{report.log}; set aside {report.lost}", markup=False, highlight=False, soft_wrap=True)
        for mv in report.moved:
            stdout.print(f"{report.path}: moved {mv['bytes']} bytes from byte {mv['offset']} to {mv['file']}",
                         markup=False, highlight=False, soft_wrap=True)
        if report.renumbered:
            stdout.print(f"{report.path}: the {report.renumbered} cases kept after the lost ones keep their order; "
                         f"their case ids close the gap", markup=False, highlight=False, soft_wrap=True)
        for note in report.notes:
            stdout.print(f"{report.path}: {note}", markup=False, highlight=False, soft_wrap=True)
        for problem in report.left:
            typer.echo(f"error: cannot repair {problem.line(report.path)}", err=True)
        if not report.repaired and not report.left:
            stdout.print(f"{report.path}: nothing to repair", markup=False, highlight=False, soft_wrap=True)
    if report.left:
        raise typer.Exit(EXIT_ERROR)


@app.command("merge")
@guarded
def casebase_merge(
    inputs: Annotated[list[str], typer.Argument(help="Two or more case bases (directories or names under ./casebases/).")],
    out: Annotated[str, typer.Option("--out", "-o", help="The merged case base to write (its folder must exist).")],
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing case base (atomically, at the end).")] = False,
    dedupe: Annotated[bool, typer.Option("--dedupe", help="Keep the cases of a log that several inputs were built "
                                                          "from once.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Merge case bases of the same feature set, schema and similarity into a new one.

    Streams the cases part by part (never a whole case base in memory); new case ids in
    input order; the indexes are rebuilt. OUT appears only when the merge succeeded.
    Inputs built from a common log (the same file by checksum) would hold its cases once
    per input: a warning names the log; --dedupe keeps each of its decisions once (by
    hand id, player, position, street and the betting before the decision).
    """
    if len(inputs) < 2:
        raise usage_error("give at least two case bases to merge", "INPUTS")
    check_output(out, what="case base", overwrite=overwrite, folder=True)
    from cbr.store import resolve_casebase
    from cbr.store.merge import merge_casebases

    report = merge_casebases([resolve_casebase(i) for i in inputs], out, overwrite=overwrite, dedupe=dedupe)
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    per = ", ".join(f"{s} {n}" for s, n in report.cases_per_street.items())
    stdout.print(f"merged {len(inputs)} case bases into {out}: {report.cases} cases ({per}), {report.seconds:.1f} s",
                 soft_wrap=True)
    if report.dedupe and report.shared_sources:
        names = "; ".join(" = ".join(e["sources"]) for e in report.shared_sources)
        stdout.print(f"--dedupe: dropped {report.duplicates_dropped} duplicate cases of {len(report.shared_sources)} "
                     f"shared sources ({names})", soft_wrap=True, markup=False, highlight=False)
