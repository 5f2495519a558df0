"""What commands print: the consoles, ``--json``, progress bars and tables.

rich is imported only by commands that print through it, so ``cbr --help`` starts fast.
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Optional

import typer

from cbr.models.modelfile import json_default


class _LazyConsole:
    """A rich ``Console`` made on first use (rich is imported only by commands that print)."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: Any = None

    def real(self) -> Any:
        """The ``rich.console.Console`` itself."""
        if self._console is None:
            from rich.console import Console

            class _Console(Console):
                def on_broken_pipe(self) -> None:
                    # rich's own exits 1 at once; the reader gone is the command's exit
                    # (cbr.cli._errors.guarded: 141, without a word)
                    self.quiet = True
                    raise BrokenPipeError(32, "Broken pipe")

            self._console = _Console(stderr=self._stderr)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


stdout: Any = _LazyConsole()
stderr: Any = _LazyConsole(stderr=True)


def counted(n: "int | float", word: str, words: Optional[str] = None) -> str:
    """:func:`cbr.errors.counted` (``1 source``, ``2,000 hands``), the library's wording of
    counts, imported when first used: importing ``cbr.errors`` imports the evaluator and numpy,
    which ``cbr --help`` must not.

    >>> counted(1, "hand"), counted(2, "match", "matches")
    ('1 hand', '2 matches')
    """
    from cbr.errors import counted as library_counted

    return library_counted(n, word, words)


def json_text(obj: Any) -> str:
    """``obj`` as the JSON text :func:`print_json` prints (indented by 2; numpy scalars and
    tuples handled; NaN and infinities, which JSON has no numbers for, as null)."""
    try:
        return json.dumps(obj, indent=2, default=json_default, allow_nan=False)
    except ValueError:  # NaN or infinity somewhere: JSON has no such numbers, null stands for them
        return json.dumps(_finite(json.loads(json.dumps(obj, default=json_default))), indent=2, allow_nan=False)


def print_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (numpy scalars and tuples handled)."""
    typer.echo(json_text(obj))


def print_json_list(batches: Iterable[Iterable[Any]]) -> None:
    """Print a JSON list of the items of ``batches`` as they come, batch by batch: the text
    :func:`print_json` prints for the whole list, begun before the last item is known.

    >>> print_json_list([[{"a": 1}], [], [{"a": None}]])
    [
      {
        "a": 1
      },
      {
        "a": null
      }
    ]
    >>> print_json_list([])
    []
    """
    first = True
    for batch in batches:
        items = ["  " + json_text(item).replace("\n", "\n  ") for item in batch]
        if not items:
            continue
        sys.stdout.write(("[\n" if first else ",\n") + ",\n".join(items))
        sys.stdout.flush()
        first = False
    sys.stdout.write("[]\n" if first else "\n]\n")
    sys.stdout.flush()


def data_cell(value: Any) -> str:
    """A value of a query's row as data (``--format tsv``/``csv``): nothing for NULL, a float
    with all its digits (the shortest text that reads back as the same number), else its text.

    >>> [data_cell(v) for v in (None, 0.1, 1 / 3, 7, "KhJc", True)]
    ['', '0.1', '0.3333333333333333', '7', 'KhJc', 'True']
    """
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_line(values: Iterable[Any]) -> str:
    r"""One line of tab-separated values (:func:`data_cell`), a backslash, tab, newline or
    carriage return inside a value written ``\\``, ``\t``, ``\n``, ``\r`` (as PostgreSQL's
    text format has them), so that every row is one line and every column one field.

    >>> tsv_line([1, None, "a\tb", "x\\y", 0.5])
    '1\t\ta\\tb\tx\\\\y\t0.5\n'
    """
    return "\t".join(data_cell(v).translate(_TSV_ESCAPES) for v in values) + "\n"


def print_rows(columns: list[str], batches: Iterable[list[Any]], fmt: str) -> None:
    """Print a header of ``columns`` and then the rows of ``batches`` as they come, as
    tab-separated (``fmt`` ``tsv``: :func:`tsv_line`) or comma-separated values (``csv``:
    RFC 4180 quoting, a line ends in ``\\n``), each batch written and flushed at once."""
    if fmt == "tsv":
        sys.stdout.write(tsv_line(columns))
        for batch in batches:
            sys.stdout.write("".join(tsv_line(row) for row in batch))
            sys.stdout.flush()
        return
    import csv

    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for batch in batches:
        writer.writerows([data_cell(v) for v in row] for row in batch)
        sys.stdout.flush()
    sys.stdout.flush()


#: Significant digits of a derived ratio (a share, a probability, a similarity, a rate) in ``--json``.
RATIO_DIGITS = 6


def json_ratio(x: Any) -> Any:
    """A derived ratio for ``--json``: :data:`RATIO_DIGITS` significant digits (``0.114286``, not
    ``0.11428571428571428``); anything but a finite float (a count, None) as it is.

    >>> json_ratio(0.11428571428571428), json_ratio(2.0 / 3.0), json_ratio(-0.0123456789), json_ratio(7)
    (0.114286, 0.666667, -0.0123457, 7)
    >>> json_ratio(None), json_ratio(float("inf"))
    (None, inf)
    """
    if isinstance(x, float) and math.isfinite(x):
        return float(f"{x:.{RATIO_DIGITS}g}")
    return x


def json_triple(triple: Any) -> list[Any]:
    """A probability triple for ``--json``: :data:`RATIO_DIGITS` decimals that still sum to 1
    (the largest remainders take the last digit: ``0.113636, 0.480769, 0.405595``, not three
    roundings that may miss 1 by 1e-6); a triple that does not sum to 1 is given as
    :func:`json_ratio` gives each number.

    >>> json_triple([0.11363636363636363, 0.4807692307692308, 0.40559440559440557])
    [0.113636, 0.480769, 0.405595]
    >>> json_triple([1 / 3, 1 / 3, 1 / 3]), json_triple([0.0, 1.0, 0.0])
    ([0.333334, 0.333333, 0.333333], [0.0, 1.0, 0.0])
    """
    values = [float(x) for x in triple]
    if not all(math.isfinite(x) and x >= 0 for x in values) or abs(sum(values) - 1.0) > 1e-9:
        return [json_ratio(x) for x in values]
    scale = 10**RATIO_DIGITS
    units = [math.floor(x * scale) for x in values]
    short = scale - sum(units)  # 0 to 3 units to hand out
    by_remainder = sorted(range(len(values)), key=lambda i: (units[i] - values[i] * scale, i))
    for i in by_remainder[:max(0, short)]:
        units[i] += 1
    return [u / scale for u in units]


def half_width(x: float, decimals: int = 3) -> str:
    """A confidence interval's half-width, rounded; ``n/a`` where it is not finite (a match of
    fewer than two hands, one stopped before its first hand).

    >>> half_width(0.06417), half_width(12.6, 0), half_width(float("inf"))
    ('0.064', '13', 'n/a')
    """
    return f"{x:.{decimals}f}" if math.isfinite(x) else "n/a"


def signed(x: float, decimals: int = 0, grouped: bool = False) -> str:
    """``x`` with its sign, rounded; what rounds to zero is ``+0`` (never ``-0``, which a
    seat that lost a fraction of a chip per hand showed beside ``+0`` chips). ``grouped``:
    with thousands separators, for a count such as chips won.

    >>> signed(-1e-9, 3), signed(-0.0), signed(2.5, 1), signed(-12.0), signed(45955.0, grouped=True)
    ('+0.000', '+0', '+2.5', '-12', '+45,955')
    """
    text = f"{x:+.{decimals}f}"
    if float(text) == 0:
        return f"{0.0:+.{decimals}f}"
    return f"{x:+,.{decimals}f}" if grouped else text


def chips(x: float) -> str:
    """Chips won or lost as the ACPC dealer counts them (a split pot leaves fractions, six
    decimals at most), signed, with thousands separators.

    >>> chips(45955), chips(-2.5), chips(0), chips(-1234.5)
    ('+45,955', '-2.5', '0', '-1,234.5')
    """
    from cbr.logs.acpc import acpc_number

    whole, _, frac = acpc_number(x).lstrip("-").partition(".")
    sign = "-" if x < 0 and acpc_number(x) != "0" else "+" if x > 0 else ""
    return f"{sign}{int(whole):,}" + (f".{frac}" if frac else "")


def rescaled(text: str, factor: float, decimals: int = 0, sign: bool = True) -> str:
    """A printed figure (``signed`` or ``half_width`` text) in another unit, ``factor`` times it,
    computed from the printed digits rather than from the exact value, so that two columns of
    one quantity agree: ``+0.263`` sb/h is ``+263`` mbb/h even where 262.5 would round to
    ``+262``; from 1,000 on with thousands separators, as the tables' other big numbers.
    ``n/a`` stays ``n/a``.

    >>> rescaled("+0.263", 1000), rescaled("0.675", 1000, sign=False), rescaled("n/a", 1000)
    ('+263', '675', 'n/a')
    >>> rescaled("-1.500", 1000), rescaled("+12.345", 1000), rescaled("2.160", 1000, sign=False)
    ('-1,500', '+12,345', '2,160')
    """
    if text == "n/a":
        return text
    value = float(text) * factor
    if sign:
        return signed(value, decimals, grouped=True)
    return f"{value:,.{decimals}f}" if math.isfinite(value) else half_width(value, decimals)


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters with an ellipsis in the middle, keeping its start
    and its end (a policy spec's name and its last option); unchanged when it fits.

    >>> shorten("cfr/resolve-gadget=none/resolve-iters=120", 24)
    'cfr/resolve-…e-iters=120'
    >>> shorten("ehs", 24)
    'ehs'
    """
    if len(text) <= width:
        return text
    head = width // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


#: A text column cut by :func:`fit_text_column` is never narrower than this.
SHORTEST_CUT = 20


def fit_text_column(columns: list[str], rows: list[list[str]], index: int,
                    width: Optional[int] = None) -> tuple[list[list[str]], bool]:
    """The rows with the text of column ``index`` cut (:func:`shorten`) to the room the other
    columns leave in ``width`` (the terminal's by default, and at least :data:`SHORTEST_CUT`),
    so every row of the table stays on one line; and whether anything was cut. Nothing is cut
    when the cut texts would no longer differ.

    >>> rows = [["0", "cfr/resolve-gadget=none/resolve-iters=120", "+1.5"], ["1", "ehs", "-1.5"]]
    >>> fit_text_column(["seat", "bot", "sb/h"], rows, 1, width=40)
    ([['0', 'cfr/resolve…-iters=120', '+1.5'], ['1', 'ehs', '-1.5']], True)
    >>> fit_text_column(["seat", "bot", "sb/h"], rows, 1, width=80)[1]
    False
    """
    width = width or stdout.width or 80
    others = sum(max(len(columns[i]), *(len(r[i]) for r in rows)) + 3 for i in range(len(columns)) if i != index)
    room = max(width - 1 - others - 3, SHORTEST_CUT)
    cut = [shorten(r[index], room) for r in rows]
    if cut == [r[index] for r in rows] or len(set(cut)) < len({r[index] for r in rows}):
        return rows, False
    return [[*r[:index], c, *r[index + 1:]] for r, c in zip(rows, cut)], True


def _finite(obj: Any) -> Any:
    """``obj`` (plain JSON data) with every NaN or infinite float replaced by None.

    >>> _finite({"a": [float("nan"), 1.5, {"b": float("inf")}]})
    {'a': [None, 1.5, {'b': None}]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


@contextmanager
def progress_bar(description: str, total: Optional[int] = None, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """Yield a progress callback ``advance(n=1, total=None)``; draws a bar only on a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1, total=None: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=stderr.real(),
        transient=True,
    ) as progress:
        task = progress.add_task(description, total=total)

        def advance(n: int = 1, total: Optional[int] = None) -> None:
            if total is not None:
                progress.update(task, total=total)
            progress.advance(task, n)

        yield advance


@contextmanager
def busy(description: str, enabled: bool = True) -> Iterator[None]:
    """A spinner with ``description`` on stderr while the block runs, for work of unknown
    length (a search); only on a terminal, and gone when the block ends."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    with stderr.real().status(description):
        yield


def _cell(value: Any) -> str:
    return "" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value))


def is_number_cell(text: str) -> bool:
    """Whether a table cell is a number (``1,234``, ``±0.5``, a score with its half-width
    ``0.818 ± 0.034``, or ``n/a`` for a missing one): a number column never folds.

    >>> [is_number_cell(t) for t in ("1,234", "±0.5", "0.818 ± 0.034", "n/a", "KhJc", "2 ~1")]
    [True, True, True, True, False, False]
    """
    if text == "n/a":
        return True
    for part in text.split(" ± ") if " ± " in text else (text,):
        try:
            float(part.replace(",", "").lstrip("±"))
        except ValueError:
            return False
    return True


#: Text columns may fold down to this many characters.
TEXT_FOLD = 16
_BREAKS = "_ -/.:,"


def fold_header(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, broken after ``_``, a space or
    punctuation where one falls in the second half of a line, else anywhere.

    >>> print(fold_header("a_very_long_column_name_indeed", 12))
    a_very_long_
    column_name_
    indeed
    """
    width = max(width, 1)
    lines = []
    while len(text) > width:
        cut = max((i + 1 for i, ch in enumerate(text[:width]) if ch in _BREAKS), default=0)
        if cut <= width // 2:
            cut = width
        lines.append(text[:cut].rstrip() if text[cut - 1] == " " else text[:cut])
        text = text[cut:].lstrip(" ")
    return "\n".join([*lines, text])


def header_word(text: str) -> int:
    """The longest piece of a header that :func:`fold_header` should not split: a word, or
    a part of one up to a break (``_``, ``-``, ``/`` ...), so that a number column stays wide
    enough for ``preflop`` rather than folding it into ``prefl``/``op``.

    >>> header_word("preflop"), header_word("check/call"), header_word("with outcome")
    (7, 6, 7)
    """
    pieces = [p for word in text.split() for p in re.split(r"(?<=[_\-/.:,])", word)]
    return max((len(p) for p in pieces), default=0)


class _Plan:
    """How a table fits in ``width`` columns (:func:`rich_table`, :func:`plain_table`): its
    cells as text, which columns are numbers, each column's unfolded width (``need``), the
    groups of columns of each printed table (the first column repeated in every one) and
    the columns that must fold to a fixed width (``fixed``)."""

    def __init__(self, columns: list[str], rows: list[list[Any]], width: int, measure: Callable[[str], int]) -> None:
        self.cells = [[_cell(v) for v in row] for row in rows]
        n = len(columns)
        self.heads = heads = [str(c) for c in columns]
        self.numeric = numeric = []
        body = []
        for i in range(n):
            values = [row[i] for row in self.cells if i < len(row) and row[i]]
            numeric.append(bool(values) and all(is_number_cell(v) for v in values))
            body.append(max((measure(line) for v in values for line in v.splitlines() or [""]), default=0))
        self.need = need = [max(measure(h), b) for h, b in zip(heads, body)]   # the width unfolded

        def least(i: int) -> int:  # numbers keep their widest number and a header's words whole; text folds
            return max(body[i], min(header_word(heads[i]), TEXT_FOLD), 1) if numeric[i] else min(need[i], TEXT_FOLD)

        # the first column is repeated in every table: full width if the widest other column still fits beside it
        room0 = width - 1 - 3 - max((least(i) + 3 for i in range(1, n)), default=0)
        first = need[0] if not n or need[0] <= room0 else max(room0, least(0))
        cap = width - 1 - (first + 3)  # the room beside the first column

        def cost(i: int) -> int:  # characters a column takes: text may fold down to TEXT_FOLD
            c = (need[i] if numeric[i] else min(need[i], TEXT_FOLD)) + 3
            return c if c <= cap else max(least(i) + 3, cap)

        self.groups: list[list[int]] = []
        current: list[int] = []
        used = 1 + first + 3
        for i in range(1, n):
            if current and used + cost(i) > width:
                self.groups.append(current)
                current, used = [], 1 + first + 3
            current.append(i)
            used += cost(i)
        self.groups.append(current)
        self.fixed = {i: cost(i) - 3 for i in range(1, n) if numeric[i] and cost(i) - 3 < need[i]}
        if n and first < need[0]:
            self.fixed[0] = first


def console_width() -> int:
    """The width commands print tables in, read as rich's ``Console`` reads it (without
    importing rich): ``COLUMNS`` if set, 80 on a dumb terminal, else the terminal's (of
    stdin, stdout or stderr), else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if os.environ.get("TERM", "").lower() in ("dumb", "unknown") and sys.stdout.isatty():
        return 80
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def _plain_width(text: str) -> Optional[int]:
    """The printed width of ``text`` if every character takes one cell (None: a wide or
    combining character, or a control character, which only rich measures right)."""
    for ch in text:
        if not ch.isprintable() or (not ch.isascii() and (unicodedata.east_asian_width(ch) in "WF"
                                                          or unicodedata.combining(ch))):
            return None
    return len(text)


class _NotPlain(Exception):
    """A table :func:`plain_table` leaves to rich."""


def plain_table(title: Optional[str], columns: list[str], rows: list[list[Any]], width: Optional[int] = None,
                style: bool = False) -> Optional[str]:
    """The text of :func:`rich_table` as rich prints it (the same box, widths, title and
    split into tables), made without importing rich, for the tables that need no folding:
    every cell on one line, every column at its full width, narrow characters only. None
    for any other table (print :func:`rich_table` then). ``style``: bold headers and an
    italic title (ANSI), as rich shows them on a terminal.

    >>> for line in plain_table("t", ["id", "hole"], [[1, "AdQc"]]).splitlines():
    ...     print(line.rstrip())
    t
    ┏━━━━┳━━━━━━┓
    ┃ id ┃ hole ┃
    ┡━━━━╇━━━━━━┩
    │  1 │ AdQc │
    └────┴──────┘
    """
    width = width or console_width()

    def measure(text: str) -> int:
        w = _plain_width(text)
        if w is None:
            raise _NotPlain
        return w

    try:
        plan = _Plan(columns, rows, width, measure)
        if title is not None:
            measure(title)
    except _NotPlain:
        return None
    if plan.fixed or not columns or any("\n" in c or "\r" in c for row in plan.cells for c in row):
        return None
    bold, italic, reset = ("\x1b[1m", "\x1b[3m", "\x1b[0m") if style else ("", "", "")
    out = []
    for k, group in enumerate(plan.groups):
        order = [0, *group]
        widths = [plan.need[i] for i in order]
        total = 1 + sum(w + 3 for w in widths)
        if total > width:
            return None

        def line(cells: list[str], bar: str, wrap: str = "") -> str:
            parts = [f" {wrap}{c.rjust(w) if plan.numeric[i] else c.ljust(w)}{reset if wrap else ''} "
                     for c, w, i in zip(cells, widths, order)]
            return bar + bar.join(parts) + bar

        if k == 0 and title is not None:  # on a line of its own, as long as it is (rich_table's)
            if len(title) > width:
                return None
            out.append(f"{italic}{title}{reset}")
        out.append("┏" + "┳".join("━" * (w + 2) for w in widths) + "┓")
        out.append(line([plan.heads[i] for i in order], "┃", bold))
        out.append("┡" + "╇".join("━" * (w + 2) for w in widths) + "┩")
        for row in plan.cells:
            out.append(line([row[i] if i < len(row) else "" for i in order], "│"))
        out.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    return "\n".join(out) + "\n"


def print_table(title: Optional[str], columns: list[str], rows: list[list[Any]]) -> None:
    """Print :func:`rich_table` on stdout; a table that needs no folding is written as
    :func:`plain_table` (the same text, without importing rich: ``cbr query`` starts faster)."""
    styled = sys.stdout.isatty() and os.environ.get("TERM", "").lower() not in ("dumb", "unknown")
    text = plain_table(title, columns, rows, style=styled)
    if text is None:
        stdout.print(rich_table(title, columns, rows))
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def fold_title(title: str, width: int, length: Callable[[str], int] = len) -> str:
    """``title`` folded at spaces into lines of at most ``width`` columns, none ending in a
    space (rich's own wrapping leaves the space it broke at: ``... CI ⏎over hands``); a word
    longer than ``width`` stays whole on its line (rich folds it then).

    >>> fold_title("log-loss ± 95% CI over hands", 18)
    'log-loss ± 95% CI\\nover hands'
    """
    lines: list[str] = []
    for word in title.split(" "):
        if lines and length(lines[-1]) + 1 + length(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(line.rstrip() for line in lines) if length(title) > width else title


def rich_table(title: Optional[str], columns: list[str], rows: list[list[Any]], width: Optional[int] = None) -> Any:
    """A table whose numbers are never cut, wrapped or dropped in ``width`` columns (default:
    the terminal's, 80 in a pipe): a number column is as wide as its widest number, text
    folds onto more lines, and columns that do not fit go to a second table (the first
    column repeated) instead of being cropped. A header wider than the room left folds onto
    more lines (:func:`fold_header`); a number column is never narrower than its widest
    number, nor than its header's longest word (up to :data:`TEXT_FOLD`). The title is a
    line of its own above the table, with no trailing spaces. A cell is shown as written (a
    player's name or an SQL value such as ``[red]x`` or ``:thumbs_up:`` is not rich markup).

    >>> from rich.console import Console
    >>> console = Console(width=40, file=open(os.devnull, "w"), record=True)
    >>> console.print(rich_table(None, ["a_count_with_a_header_far_wider_than_forty_columns"], [[100064]], width=40))
    >>> "100064" in console.export_text()
    True
    """
    from rich.cells import cell_len
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    plan = _Plan(columns, rows, width or stdout.width or 80, cell_len)
    heads, numeric, need, fixed = plan.heads, plan.numeric, plan.need, plan.fixed
    n = len(columns)
    tables = []
    for k, group in enumerate(plan.groups):
        table = Table()
        for i in [0, *group] if n else []:
            if i in fixed:  # narrower than its header (or, the first column, its text): fold to fit
                header = fold_header(heads[i], fixed[i]) if numeric[i] else heads[i]
                table.add_column(Text(header), justify="right" if numeric[i] else "left", no_wrap=numeric[i],
                                 overflow="fold", width=fixed[i])
            elif numeric[i]:
                table.add_column(Text(heads[i]), justify="right", no_wrap=True, min_width=need[i])
            else:
                table.add_column(Text(heads[i]), no_wrap=i == 0, overflow="fold", min_width=need[i] if i == 0 else None)
        for row in plan.cells:  # a cell is shown as it is: text, never rich markup or :emoji: codes
            cells = [row[i] if i < len(row) else "" for i in [0, *group]]
            table.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))
        tables.append(table)
    if title is not None:  # a line of its own, not the table's title, which rich pads to the table's width
        tables.insert(0, Text(fold_title(title, width or stdout.width or 80, cell_len), style="table.title"))
    return tables[0] if len(tables) == 1 else Group(*tables)


def fmt_score(x: Optional[float]) -> str:
    """A score with three decimals, or ``n/a``."""
    return "n/a" if x is None else f"{x:.3f}"


def fmt_score_ci(x: Optional[float], half: Optional[float], digits: int = 3) -> str:
    """A score and the half-width of its 95% confidence interval (``0.818 ± 0.034``); the
    score alone without a half-width, ``n/a`` without a score.

    >>> fmt_score_ci(0.8183, 0.0337), fmt_score_ci(0.8183, None), fmt_score_ci(None, None)
    ('0.818 ± 0.034', '0.818', 'n/a')
    """
    if x is None:
        return "n/a"
    return f"{x:.{digits}f}" if half is None else f"{x:.{digits}f} ± {half:.{digits}f}"


def fmt_change(x: Optional[float], half: Optional[float], digits: int = 4) -> str:
    """A signed change and the half-width of its 95% confidence interval (``-0.0123 ± 0.0045``).

    >>> fmt_change(-0.01234, 0.0045), fmt_change(None, None)
    ('-0.0123 ± 0.0045', 'n/a')
    """
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if half is None else f"{x:+.{digits}f} ± {half:.{digits}f}"


def expert_stretches(experts: Any) -> str:
    """One opponent's stretches of an adaptive bot (:class:`~cbr.policies.adaptive.ExpertChoice`
    items, or their ``to_dict()``) in words: each expert's short name and its hands, a one-hand
    stretch as one number, stretches apart by ``; `` (a count's thousands comma stays readable).

    >>> from cbr.policies.adaptive import ExpertChoice
    >>> expert_stretches([ExpertChoice("raise", "cbr:preset=imitate", 1, 1, 1),
    ...                   ExpertChoice("raise", "cfr:strategy=counter_raise", 2, 1443, 1442)])
    'imitate 1; counter_raise 2-1,443'
    """
    words = []
    for c in experts:
        d = c if isinstance(c, dict) else c.to_dict()
        first, last = d["first_hand"], d["last_hand"]
        words.append(f"{d['short']} {first:,}" + (f"-{last:,}" if last != first else ""))
    return "; ".join(words)


def played_lines(seat: Optional[int], name: str, experts: Any, *, why: Optional[str] = "--json says why") -> list[str]:
    """What an adaptive seat played, by hand, for the lines under a match's table: one line
    against one opponent, else a line for each (the first hand's, before the bot knew who sat
    with it, as "before it knew them"); empty for a bot that chose no experts. ``seat`` None:
    the bot is named alone (an ACPC client does not know its seat at the dealer); ``why``: where
    the reasons are, said in brackets (None: nowhere, for a command without ``--json``).

    >>> from cbr.policies.adaptive import ExpertChoice
    >>> played_lines(0, "cbr", [ExpertChoice("raise", "cbr:preset=imitate", 1, 69, 69),
    ...                         ExpertChoice("raise", "cfr:strategy=counter_raise", 70, 200, 131)])
    ['seat 0 (cbr) played, by hand: imitate 1-69; counter_raise 70-200 (--json says why)']
    >>> played_lines(None, "cbr", [ExpertChoice("raise", "cbr:preset=imitate", 1, 9, 9)], why=None)
    ['cbr played, by hand: imitate 1-9']
    """
    items = [c if isinstance(c, dict) else c.to_dict() for c in experts]
    if not items:
        return []
    who = name if seat is None else f"seat {seat} ({name})"
    hint = f" ({why})" if why else ""
    opponents = list(dict.fromkeys(d["opponent"] for d in items))  # in the order first met
    if len(opponents) == 1:
        return [f"{who} played, by hand: {expert_stretches(items)}{hint}"]
    lines = [f"{who} played, by hand{hint}:"]
    for opp in opponents:
        whom = "before it knew them" if opp is None else f"against {opp}"
        lines.append(f"  {whom}: {expert_stretches([d for d in items if d['opponent'] == opp])}")
    return lines
