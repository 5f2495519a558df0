"""``cbr casebase``: look inside case bases, check and repair them, merge, condense and compare them."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import itertools
from typing import Annotated, Any, Optional

import typer

from cbr.cli._errors import EXIT_ERROR, guarded, usage_error
from cbr.cli._options import (
    check_min_cases,
    check_output,
)
from cbr.cli._output import counted, print_json, rich_table, stderr, stdout

app = typer.Typer(help="Look inside case bases, check and repair them, merge, condense and compare them.", no_args_is_help=True,
                  rich_markup_mode=None)

#: Rows ``cbr casebase inspect --sql`` prints unless told (--limit N, --all).
DEFAULT_SQL_ROWS = 100
#: ``cbr casebase inspect --sql`` lays out a table of at most this many rows; a larger result is
#: written as tab-separated values as DuckDB produces its rows (unless --table): rich lays out a
#: table whole before its first line, about 4 s for 1,000 rows of every column, 100 s for 100,000.
TABLE_ROWS = 1000
#: Rows fetched (and then written) at a time when rows are written as they come.
SQL_BATCH = 5000


def _read_only(sql: str) -> None:
    """--sql runs one query: a statement that could write or change anything, and several
    statements (only the last one's result would show), are a usage error naming --sql, before the case base is opened (:func:`cbr.store.casebase.refuse_writing_sql`)."""
    from cbr.errors import CaseBaseError
    from cbr.store import duck
    from cbr.store.casebase import refuse_writing_sql

    con = duck.connect()
    try:
        refuse_writing_sql(con, sql, single=True)
    except CaseBaseError as exc:
        raise usage_error(str(exc), "--sql") from None
    finally:
        con.close()


@app.command("inspect")
@guarded
def casebase_inspect(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    sql: Annotated[Optional[str], typer.Option("--sql", help="Run SQL on the views `cases` and `cases_<street>`: queries only (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN; nothing that writes).")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", min=0, max=10**9,
                                                 help="With --sql: print at most this many rows (default 100).")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="With --sql: print every row (no --limit).")] = False,
    as_table: Annotated[bool, typer.Option("--table", help=f"With --sql: a table however many rows (the default "
                                                           f"up to {TABLE_ROWS:,} rows).")] = False,
    as_tsv: Annotated[bool, typer.Option("--tsv", help=f"With --sql: tab-separated values, written as they come "
                                                       f"(the default beyond {TABLE_ROWS:,} rows).")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="With --sql: comma-separated values, written as they "
                                                       "come.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Counts per street, action and source, and feature distributions; or run SQL.

    Warns (on stderr) when an action kind is missing or rare (< 1%) on a street: a case base
    built from logs that show cards only at showdown has no folds and can never recommend one.
    With --sql, at most --limit rows (100) are printed unless --all; Ctrl-C stops a query (exit 130).
    A result of up to 1,000 rows is a table; a larger one is written as tab-separated values
    as the rows come (a note on stderr says so), unless --table, --tsv, --csv or --json.
    """
    from cbr.store import CaseBase, inspect, resolve_casebase
    from cbr.store.summary import check_parts

    formats = [flag for flag, given in (("--table", as_table), ("--tsv", as_tsv), ("--csv", as_csv),
                                        ("--json", as_json)) if given]
    if sql is None and (limit is not None or all_rows or len(formats) > (1 if as_json else 0)):
        given = "--limit" if limit is not None else "--all" if all_rows else formats[0]
        raise usage_error("--limit, --all, --table, --tsv and --csv go with --sql", given)
    if limit is not None and all_rows:
        raise usage_error("give --limit N or --all, not both", "--all")
    if len(formats) > 1:
        raise usage_error(f"give one of {', '.join(formats)}, not both" if len(formats) == 2 else
                          f"give one of {', '.join(formats)}", formats[1])
    limit = DEFAULT_SQL_ROWS if limit is None else limit
    if sql is not None:
        _read_only(sql)
    cb = CaseBase.open(resolve_casebase(name))
    try:
        if sql is not None:
            check_parts(cb)  # a query may read any part: checked as inspect checks them, below
            result = cb.sql_stream(sql, None if all_rows else limit)
            _print_sql_rows(result, "json" if as_json else "table" if as_table else "tsv" if as_tsv
                            else "csv" if as_csv else "auto")
            if result.truncated:
                stderr.print(f"(first {counted(limit, 'row')} shown; --limit N or --all for more)", soft_wrap=True)
            return
        info = inspect(cb)
    finally:
        cb.close()
    if as_json:
        print_json(info)
        return
    from rich.markup import escape

    stdout.print(f"[bold]{escape(str(info['name']))}[/bold]  {escape(str(info['path']))}", emoji=False)
    # two lines, each short enough for 80 columns (as one it wrapped, leaving ", " at the end of a line)
    stdout.print(f"schema {info['schema_version']}, features {info['feature_set']}, engine {info['engine_version']}, "
                 f"created {info['created']}", markup=False, highlight=False, soft_wrap=True)
    stdout.print(f"games: {', '.join(g for g in info['games'] if g) or '-'}", markup=False, highlight=False,
                 soft_wrap=True)
    streets = list(info["counts"])
    stdout.print(rich_table(f"{counted(info['total'], 'case')}", ["street", "total", "fold", "check/call", "bet/raise",
                                                        "with outcome", "parts"],
                             [[s, *(f"{c[k]:,}" for k in ("total", "f", "c", "r")), f"{info['outcomes'][s]['known']:,}", info["parts"][s]]
                              for s, c in info["counts"].items()]))
    stdout.print(rich_table("cases per source", ["source", *streets],
                             [[src or "-", *(f"{n[s]:,}" for s in streets)] for src, n in info["sources"].items()]))
    for s, feats in info["features"].items():
        if not info["counts"][s]["total"]:
            continue
        stats = ["min", "q25", "q50", "mean", "q75", "max"]  # --json has q05 and q95 too
        stdout.print(rich_table(f"{s} features", ["feature", *stats],
                                 [[f, *(v[k] for k in stats)] for f, v in feats.items()]))
    for w in info["warnings"]:
        stderr.print(f"warning: {w}", markup=False, highlight=False, soft_wrap=True)


def _print_sql_rows(result: Any, fmt: str) -> None:
    """Print the rows of a query (:class:`cbr.store.casebase.SqlRows`) as ``fmt``: ``json``
    (begun with the first batch), ``table``, ``tsv`` or ``csv`` (each batch written as it
    comes), or ``auto``: a table of up to :data:`TABLE_ROWS` rows, else tab-separated values
    from the first row on (with a note on stderr), so that a large result begins at once."""
    from cbr.cli._output import print_json_list, print_rows

    batches = result.batches(SQL_BATCH)
    if fmt == "json":
        columns = result.columns
        print_json_list([dict(zip(columns, r)) for r in batch] for batch in batches)
        return
    if fmt in ("tsv", "csv"):
        print_rows(result.columns, batches, fmt)
        return
    head: list[Any] = []
    for batch in batches:
        head.extend(batch)
        if fmt == "auto" and len(head) > TABLE_ROWS:
            break
    if fmt == "table" or len(head) <= TABLE_ROWS:
        stdout.print(rich_table(None, result.columns, [list(r) for r in head]))
        return
    stderr.print(f"(more than {counted(TABLE_ROWS, 'row')}: written as tab-separated values as they come; --table "
                 f"lays them out as a table, --csv writes comma-separated values)", soft_wrap=True)
    print_rows(result.columns, itertools.chain([head], batches), "tsv")


@app.command("verify")
@guarded
def casebase_verify(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (also when damaged).")] = False,
) -> None:
    """Check every file of a case base; change nothing.

    Checks the manifest, each Parquet part (size, CRC-32, rows), the similarity file, the
    catalog, each index file and the retention log record by record, and lists the Parquet
    parts the manifest does not list (left by a crash mid-compaction; repair removes them).
    Prints one line per problem on stderr, naming the file and (in the retention log) the byte offset, and exits
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
            logged = f", {counted(log['records'], 'record')} in the retention log" if log else ""
            stdout.print(f"{report.path}: sound ({counted(total, 'case')}{logged})", markup=False, highlight=False,
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
    rewrites a catalog and rebuilds indexes that disagree with the manifest; deletes the
    Parquet parts the manifest does not list (every listed part stays). Interrupted at
    any moment, it leaves the old log or the repaired one. A sound case base is left as it
    is. Damaged parts cannot be repaired (rebuild the case base from its logs, or restore
    them from a copy): they are listed with everything else left, such as the index of their
    street, after the other caches are mended (exit 1). The shipped case bases (default,
    expert) are refused.
    """
    from cbr.store import resolve_casebase
    from cbr.store.verify import repair_casebase

    report = repair_casebase(resolve_casebase(name))
    if as_json:
        print_json(report.to_dict())
    else:
        if report.moved or report.renumbered:
            stdout.print(f"{report.path}: kept {counted(report.records_kept, 'record')} ({counted(report.cases_kept, 'case')}) of "
                         f"{report.log}; set aside {report.lost}", markup=False, highlight=False, soft_wrap=True)
        for mv in report.moved:
            stdout.print(f"{report.path}: moved {mv['bytes']:,} bytes from byte {mv['offset']} to {mv['file']}",
                         markup=False, highlight=False, soft_wrap=True)
        if report.renumbered:
            stdout.print(f"{report.path}: the {counted(report.renumbered, 'case')} kept after the lost ones keep their order; "
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
    warnings = [_merge_warning(w) for w in report.warnings]
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json({**report.to_dict(), "warnings": warnings})
        return
    per = ", ".join(f"{s} {n:,}" for s, n in report.cases_per_street.items())
    stdout.print(f"merged {len(inputs)} case bases into {out}: {counted(report.cases, 'case')} ({per}), {report.seconds:.1f} s",
                 soft_wrap=True)
    if report.dedupe and report.shared_sources:
        names = "; ".join(" = ".join(e["sources"]) for e in report.shared_sources)
        stdout.print(f"--dedupe: dropped {report.duplicates_dropped:,} duplicate cases of {len(report.shared_sources)} "
                     f"shared sources ({names})", soft_wrap=True, markup=False, highlight=False)


def _merge_warning(text: str) -> str:
    """A warning of the merge as the command says it: the library names its parameter for what
    keeps a shared source's cases once, the command its option.

    >>> from cbr.store.merge import DEDUPE_HINT
    >>> _merge_warning(f"the inputs a, b share the source x.log (sha256 0123): ...; {DEDUPE_HINT}")
    'the inputs a, b share the source x.log (sha256 0123): ...; --dedupe keeps them once'
    >>> _merge_warning("another warning")
    'another warning'
    """
    from cbr.store.merge import DEDUPE_HINT

    if text.endswith(DEDUPE_HINT):
        return text[: -len(DEDUPE_HINT)] + "--dedupe keeps them once"
    return text


def _settings(given: Optional[list[str]], option: str) -> dict[str, str]:
    """``KEY=VALUE`` options (``--weight``, ``--measure``) as a dict; a malformed one, or a key
    given twice (``--weight hand_strength=50 --weight hand_strength=60``: which one was
    meant?), is a usage error."""
    out: dict[str, str] = {}
    for text in given or []:
        key, eq, value = text.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise usage_error(f"{option} {text!r}: give FEATURE=VALUE or STREET.FEATURE=VALUE", option)
        if key.strip() in out:
            raise usage_error(f"{option} {text.strip()}: feature {key.strip()!r} given twice "
                              f"({key.strip()}={out[key.strip()]} before); give it once", option)
        out[key.strip()] = value.strip()
    return out


def _measure(text: str) -> tuple[str, dict[str, float]]:
    """``exp:k=1.5`` (a measure name and its parameters) as ``("exp", {"k": 1.5})``; an unknown
    measure, a parameter it does not take or one given twice (``exp:k=2,k=3``: which one
    was meant?) is a usage error naming the ones there are."""
    name, _, rest = text.partition(":")
    params: dict[str, float] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        try:
            number = float(value)
        except ValueError:
            raise usage_error(f"--measure {text!r}: a parameter is NAME=NUMBER, got {item!r}", "--measure") from None
        if not eq:
            raise usage_error(f"--measure {text!r}: a parameter is NAME=NUMBER, got {item!r}", "--measure")
        if key.strip() in params:
            raise usage_error(f"--measure {text!r}: parameter {key.strip()!r} given twice; give it once", "--measure")
        params[key.strip()] = number
    from cbr.errors import ConfigError
    from cbr.similarity.measures import check_measure

    try:  # an unknown measure or parameter is a usage error, as an unknown option is
        check_measure(name.strip(), params)
    except ConfigError as exc:
        raise usage_error(f"--measure {text!r}: {exc}", "--measure") from None
    return name.strip(), params


def _check_min_cases(config: Any, k: Optional[int], min_cases: Optional[int], whose: str) -> None:
    """--min-cases at most --k, where one of them is the similarity's own: a usage error
    naming the option given (the configuration's check names its fields)."""
    if min_cases is not None and k is None and min_cases > config.fallback_k:
        raise usage_error(f"--min-cases {min_cases} is above {whose} k ({config.fallback_k}): give --k {min_cases} "
                          f"or more with it, or a smaller --min-cases", "--min-cases")
    if k is not None and min_cases is None and config.min_cases > k:
        raise usage_error(f"--k {k} is below {whose} min_cases ({config.min_cases}): give --min-cases {k} or less "
                          f"with it, or a larger --k", "--k")


def _check_features(config: Any, given: Optional[list[str]], option: str) -> None:
    """Each ``[STREET.]FEATURE`` of ``--weight``/``--measure`` names a street and a feature of
    the similarity: else a usage error naming the option and the known ones, as an
    out-of-range weight is (the similarity's own check would say it as a plain error). A
    feature on a street named twice, by ``FEATURE`` and ``STREET.FEATURE``, is a usage error
    too: which value it took depended on their order."""
    from cbr.errors import ConfigError

    named: dict[tuple[str, str], str] = {}
    for text in given or []:
        key = text.partition("=")[0].strip()
        try:
            targets = config.targets(key)
        except ConfigError as exc:
            raise usage_error(f"{option} {text.strip()}: {exc}", option) from None
        for street, feature in targets:
            if (street, feature) in named:
                raise usage_error(f"{option} {text.strip()}: feature {feature!r} on the {street} given twice "
                                  f"({named[street, feature]} before); give it once", option)
            named[street, feature] = text.strip()


def _refuse_shipped_similarity(path: Any) -> None:
    """A shipped case base's similarity is never set (:meth:`CaseBase.set_similarity` refuses it):
    refused once the change is checked, with a command that copies that very case base (plain
    ``cbr`` plays another one, so the copy's bot is named by its case base)."""
    from cbr.errors import CaseBaseError
    from cbr.store import is_shipped

    if is_shipped(path):
        raise CaseBaseError(f"the shipped case base {path.name!r} is never written to; set the similarity of a "
                            f"copy of it: copy its folder, {path}, e.g. with cp -r, or let a match make one (its "
                            f"cases and one hand's retained): cbr match --players cbr:casebase={path.name},call "
                            f"--hands 1 --retain-into NAME")


@app.command("similarity")
@guarded
def casebase_similarity(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default' (shown only: it is never written).")],
    weight: Annotated[Optional[list[str]], typer.Option("--weight", metavar="[STREET.]FEATURE=W", help="Set a feature's weight (0..100) on one street, or on every street that has it (repeat for more).")] = None,
    measure: Annotated[Optional[list[str]], typer.Option("--measure", metavar="[STREET.]FEATURE=NAME[:P=V,...]", help="Set a feature's local measure and its parameters, e.g. hand_strength=exp:k=4 or flop.pot_odds=linear (the feature keeps its domain).")] = None,
    threshold: Annotated[Optional[float], typer.Option("--threshold", min=0.0, max=1.0, help="Retrieve every case at least this similar.")] = None,
    k: Annotated[Optional[int], typer.Option("--k", min=1, max=10**6, help="When no case reaches the threshold, retrieve the K most similar (fallback_k).")] = None,
    min_cases: Annotated[Optional[int], typer.Option("--min-cases", min=1, max=10**6, help="Retrieve the K most similar when fewer than this many cases reach the threshold (min_cases; 1, CASPER's rule, falls back only when none does; at most K).")] = None,
    weighted: Annotated[bool, typer.Option("--weighted", help="Weight each retrieved action by its similarity (weighted_triple = true).")] = False,
    unweighted: Annotated[bool, typer.Option("--unweighted", help="Count each retrieved action once (weighted_triple = false).")] = False,
    from_file: Annotated[Optional[str], typer.Option("--from", metavar="FILE.toml", help="Start from this similarity TOML (checked against the case base's features) instead of the case base's own.")] = None,
    no_rebuild: Annotated[bool, typer.Option("--no-rebuild", help="Do not rebuild the saved indexes now (they are rebuilt on next use; --memory-map queries need them rebuilt).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the similarity (after any change) as JSON.")] = False,
) -> None:
    """Show or set a case base's similarity: weights, local measures, threshold and k.

    Without a change, prints the similarity. With one, checks the new configuration as a
    build checks a --similarity file, then switches to it atomically (an interruption at any
    moment leaves the old configuration or the new one, and `cbr casebase verify` finds the
    case base sound) and rebuilds the saved indexes, which were built with the old settings.
    Use this, not an editor: a hand-edited similarity file is damage to verify. Ctrl-C
    during the rebuild keeps the new setting; the indexes are then rebuilt on next use.

    Example: cbr casebase similarity default
    """
    import time

    from cbr.cli._output import busy
    from cbr.store import CaseBase, resolve_casebase

    if weighted and unweighted:
        raise usage_error("give --weighted or --unweighted, not both", "--weighted")
    check_min_cases(k, min_cases)
    weights = {}
    for key, value in _settings(weight, "--weight").items():
        try:
            weights[key] = float(value)
        except ValueError:
            raise usage_error(f"--weight {key}={value}: the weight is a number 0..100", "--weight") from None
        if not 0.0 <= weights[key] <= 100.0:  # as a similarity file's weights (cbr.similarity.config)
            raise usage_error(f"--weight {key}={value}: the weight is a number 0..100", "--weight")
    measures = {key: _measure(value) for key, value in _settings(measure, "--measure").items()}
    change = bool(weights or measures or from_file) or threshold is not None or k is not None or min_cases is not None or weighted \
        or unweighted
    if not change and no_rebuild:
        raise usage_error("--no-rebuild goes with a change of the similarity", "--no-rebuild")
    cb = CaseBase.open(resolve_casebase(name))
    try:
        # a whole new configuration (--from) never reads the current one: it is the way out of a
        # damaged similarity file, as verify and repair advise
        config = None if from_file is not None else cb.similarity()
        rebuilt: list[str] = []
        seconds = 0.0
        if change:
            if from_file is not None:
                from cbr.similarity.config import load_similarity_file

                config = load_similarity_file(from_file, cb.manifest.feature_set)
            _check_min_cases(config, k, min_cases, "the case base's" if from_file is None else "the --from file's")
            _check_features(config, weight, "--weight")
            _check_features(config, measure, "--measure")
            config = config.changed(threshold=threshold, fallback_k=k, min_cases=min_cases,
                                    weighted_triple=True if weighted else (False if unweighted else None),
                                    weights=weights, measures=measures)
            _refuse_shipped_similarity(cb.path)  # (after the change is checked: what is wrong with it comes first)
            t0 = time.perf_counter()
            with busy("setting the similarity and rebuilding the saved indexes", enabled=not as_json):
                rebuilt = cb.set_similarity(config, rebuild_indexes=not no_rebuild)
            seconds = time.perf_counter() - t0
            config = cb.similarity()
    finally:
        cb.close()
    if as_json:
        data = config.to_dict()
        if change:
            data["changed"] = True
            data["indexes_rebuilt"] = rebuilt
        print_json(data)
        return
    rows = []
    for st in config.streets:
        for spec in st.feature_specs:
            params = ", ".join(f"{p}={v:g}" for p, v in spec.params.items())
            rows.append([st.street, spec.name, spec.measure + (f" ({params})" if params else ""), f"{spec.weight:g}",
                         f"{spec.low:g}..{spec.high:g}"])
    title = (f"threshold {config.threshold:g}, k {config.fallback_k}, "
             + (f"min_cases {config.min_cases}, " if config.min_cases != 1 else "")
             + f"{'weighted' if config.weighted_triple else 'unweighted'} triple")
    stdout.print(rich_table(title, ["street", "feature", "measure", "weight", "domain"], rows))
    if change:
        what = (f"rebuilt the saved indexes of {', '.join(rebuilt)}" if rebuilt else
                "the saved indexes are rebuilt on next use" if no_rebuild else "no saved index to rebuild")
        stdout.print(f"similarity of {name} set ({what}; {seconds:.1f} s)", markup=False, highlight=False,
                     soft_wrap=True)


@app.command("condense")
@guarded
def casebase_condense(
    source: Annotated[str, typer.Argument(help="The case base to condense (a directory, a name under ./casebases/, or 'default'/'expert').")],
    out: Annotated[str, typer.Option("--out", "-o", help="The condensed case base to write (a new path; its folder must exist).")],
    method: Annotated[str, typer.Option("--method", help="footprint (competence groups, then a sample of each group's actions), "
                                                         "sample (a sample of each street's actions) or merge (one case per "
                                                         "distinct feature row and action).")] = "footprint",
    keep: Annotated[float, typer.Option("--keep", help="footprint, sample: the share of cases kept, above 0 and at most 1.")] = 0.1,
    k: Annotated[int, typer.Option("--k", min=1, max=1000, help="A case solves another among its K nearest.")] = 10,
    eps: Annotated[float, typer.Option("--eps", min=0.0, max=1.0, help="... when their triples agree within this "
                                                                       "total-variation distance.")] = 0.1,
    floor: Annotated[int, typer.Option("--floor", min=0, max=10**6, help="footprint: try keeping about this many cases "
                                                                         "of every window (the cases a vote counts), more "
                                                                         "than --keep of the sparse ones, each game from its "
                                                                         "own share; a street keeps it where it covers more "
                                                                         "than the flat share. 0: the flat share.")] = 20,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Seed of the samples.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Condense a case base into a new, smaller one that votes as it does.

    Keeps a subset of the cases, unchanged. footprint: the distinct feature rows are grouped
    by a greedy cover (a case solves another when it is among its K nearest and their triples
    agree within --eps), then each group keeps --keep of its cases of each action (more of
    those in sparse windows where that covers more: --floor). Reports
    the cases kept and removed, the coverage per street (the share of the source's cases
    whose vote the condensed base still gives within --eps) and the time. OUT appears only
    when it is complete; an existing OUT, a damaged or foreign SOURCE are one error line.

    Example: cbr casebase condense default -o casebases/default-tenth
    """
    from cbr.query.maintenance import METHODS, condense
    from cbr.store import resolve_casebase

    if method not in METHODS:
        raise usage_error(f"--method {method!r}: choose one of {', '.join(METHODS)}", "--method")
    if not 0.0 < keep <= 1.0:
        raise usage_error("--keep is a share of the cases above 0 (at most 1)", "--keep")
    if not out.strip():
        raise usage_error("-o/--out: the condensed case base needs a name", "--out")
    from pathlib import Path

    from cbr.errors import CaseBaseError

    if Path(out).exists() or Path(out).is_symlink():  # no --overwrite: a condensed base is always new
        raise CaseBaseError(f"{out} already exists; give a new name for the condensed case base")
    check_output(out, what="case base", folder=True)
    from cbr.cli._output import progress_bar

    with progress_bar(f"condensing ({method})", total=4, enabled=not as_json) as advance:
        report = condense(resolve_casebase(source), out, method=method, keep=keep, k=k, eps=eps, seed=seed,
                          floor=floor, progress=lambda street: advance())
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(report.to_dict())
        return
    total = report.kept + report.removed
    stdout.print(f"condensed {source} into {out} ({method}): kept {report.kept:,} of {counted(total, 'case')} "
                 f"({100.0 * report.kept / max(total, 1):.1f}%), {report.seconds:.1f} s",
                 markup=False, highlight=False, soft_wrap=True)
    stdout.print(rich_table("per street", ["street", "kept", "removed", "footprint", "floor", "coverage", "mean TV"],
                             [[s, f"{report.kept_per_street[s]:,}", f"{report.removed_per_street[s]:,}",
                               _count(report.footprint.get(s)), _count(report.floor_per_street.get(s)),
                               report.coverage.get(s, "-"), report.mean_tv.get(s, "-")]
                              for s in report.kept_per_street]))


@app.command("competence")
@guarded
def casebase_competence(
    name: Annotated[str, typer.Argument(help="A case-base directory, a name under ./casebases/, or 'default'/'expert'.")],
    sample: Annotated[int, typer.Option("--sample", min=2, max=10**6, help="Cases sampled a street.")] = 2000,
    k: Annotated[int, typer.Option("--k", min=1, max=1000, help="A case solves another among its K nearest.")] = 10,
    eps: Annotated[float, typer.Option("--eps", min=0.0, max=1.0, help="... when their triples agree within this "
                                                                       "total-variation distance.")] = 0.1,
    top: Annotated[int, typer.Option("--top", min=0, max=1000, help="Show the TOP cases that solve the most.")] = 10,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Seed of the sample.")] = 0,
    plot: Annotated[Optional[str], typer.Option("--plot", metavar="FILE.png", help="Draw reachability and coverage per street (needs matplotlib).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --plot file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Coverage and reachability per street (Smyth & Keane), on a sample of cases.

    A case solves another when it is among its K nearest (the case base's own k-NN) and their
    triples (the case base's vote at each) agree within --eps. Per street: the share of the
    sampled cases another case solves (coverage), the share only they solve (pivotal: removing
    them loses what they answer), the mean reachability, each with its 95% CI; and the cases
    that solve the most (estimated from the sample).

    Example: cbr casebase competence default --sample 500
    """
    from cbr.query.maintenance import competence

    if plot is not None:
        from cbr.cli._plot import check_plot

        check_plot(plot, overwrite)
    from cbr.cli._output import busy

    with busy("measuring competence", enabled=not as_json):
        report = competence(name, sample=sample, k=k, eps=eps, seed=seed, top=top)
    if plot is not None:
        from cbr.cli._plot import plot_competence

        plot_competence(plot, report.reach_sizes, report.cover_sizes, k=k,
                        title=f"competence of {name} (k={k}, eps={eps:g}, {counted(sample, 'case')} a street)")
    if as_json:
        print_json(report.to_dict())
        return
    rows = [[s, f"{v['cases']:,}", f"{v['sample']:,}", _share(v["coverage"], v["coverage_interval"]),
             _share(v["pivotal"], v["pivotal_interval"]), f"{v['reachability']:.2f} ± {v['reachability_ci']:.2f}",
             v["coverage_size"]] for s, v in report.per_street.items()]
    stdout.print(rich_table(f"competence of {name} (k={k}, eps={eps:g})",
                             ["street", "cases", "sample", "coverage", "pivotal", "reachability", "mean coverage set"],
                             rows))
    if report.top:
        stdout.print(rich_table("the cases that solve the most (estimated)",
                                 ["street", "id", "action", "solves", "source#hand"],
                                 [[t["street"], t["case_id"], t["action"], t["coverage"],
                                   f"{t['source'] or '-'}#{t['hand_id'] or '-'}"] for t in report.top]))
    stdout.print(f"{report.seconds:.1f} s", markup=False, highlight=False)
    if plot is not None:
        stdout.print(f"plot written to {plot}", markup=False, highlight=False, soft_wrap=True)


def _share(value: float, interval: list[float]) -> str:
    """A proportion with its 95% Wilson interval: ``0.950 [0.940, 0.959]``."""
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


@app.command("diff")
@guarded
def casebase_diff(
    a: Annotated[str, typer.Argument(help="A case base (a directory, a name under ./casebases/, or 'default'/'expert').")],
    b: Annotated[str, typer.Argument(help="Another case base of the same feature set.")],
    sample: Annotated[int, typer.Option("--sample", min=2, max=10**6, help="Situations sampled a street (half from each base's cases).")] = 1000,
    holdout: Annotated[Optional[list[str]], typer.Option("--holdout", metavar="LOG", help="Sample the situations from the decisions with known cards in these logs instead (repeat for more): held out when the logs are new to both.")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**64 - 1, help="Seed of the sample.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Compare two case bases: counts, cases in one and not the other, and their answers.

    Counts by street and source; the cases (feature row and action) one holds and the other
    does not; on sampled situations, how often the two votes' most likely actions differ and
    how often two bots drawing from them would answer different actions (95% CIs). When one is
    a copy of the other (cbr match --retain-into), says what the matches added.

    Example: cbr casebase diff default expert --sample 200
    """
    from cbr.cli._output import busy
    from cbr.query.maintenance import diff

    with busy("comparing", enabled=not as_json):
        report = diff(a, b, sample=sample, seed=seed, holdout=holdout)
    if as_json:
        print_json(report.to_dict())
        return
    streets = list(report.counts["a"])
    stdout.print(rich_table("cases", ["street", f"A {a}", f"B {b}", "only in A", "only in B"],
                             [[s, *(f"{n:,}" for n in (report.counts["a"][s], report.counts["b"][s], report.only.get(s, {}).get("a", 0),
                                                          report.only.get(s, {}).get("b", 0)))]
                              for s in streets]))
    names = sorted(set(report.sources["a"]) | set(report.sources["b"]))
    stdout.print(rich_table("cases per source", ["source", "A", "B"],
                             [[n, f"{report.sources['a'].get(n, 0):,}", f"{report.sources['b'].get(n, 0):,}"] for n in names]))
    where = "held-out situations" if report.situations == "holdout" else "sampled situations"
    stdout.print(rich_table(f"answers on {where}", ["street", "situations", "most likely differs",
                                                               "drawn differ", "A vs A drawn", "mean TV"],
                             [[s, f"{v['situations']:,}", _share(v["differ_max"], v["differ_max_interval"]),
                               f"{v['differ_drawn']:.3f} ± {v['differ_drawn_ci']:.3f}", f"{v['differ_drawn_a_self']:.3f}",
                               v["mean_tv"]] for s, v in report.answers.items()]))
    for d in report.similarity:
        stdout.print(f"similarity differs: {d['setting']}: A {_setting(d['a'])}, B {_setting(d['b'])}",
                     markup=False, highlight=False, soft_wrap=True)
    sim = ""
    if report.similarity:
        n, names = len(report.similarity), ", ".join(d["setting"] for d in report.similarity[:3])
        more = f" and {n - 3:,} more" if n > 3 else ""
        sim = f"; their similarity differs ({names}{more}), so their answers may differ even on the same cases"
    if report.origin is not None:
        o = report.origin
        copy, base = (b, a) if o["copy"] == "b" else (a, b)
        per = "; ".join(f"{s} " + ", ".join(f"{act} {n:,}" for act, n in v.items()) for s, v in o["retained"].items())
        stdout.print(f"{copy} is a copy of {base}: the matches added {counted(o['retained_cases'], 'case')} in "
                     f"{counted(o['matches'], 'match', 'matches')} ({per or 'none'}){sim}",
                     markup=False, highlight=False, soft_wrap=True)
    elif sim:
        stdout.print(f"{a} and {b} hold the cases counted above{sim}",
                     markup=False, highlight=False, soft_wrap=True)


def _setting(value: object) -> str:
    """A similarity setting's value for `casebase diff`: ``none`` where a base has none."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _count(n: object) -> str:
    """A count for a table cell, with thousands separators; ``-`` where there is none.

    >>> _count(1301), _count(None)
    ('1,301', '-')
    """
    return "-" if n is None else f"{n:,}"
