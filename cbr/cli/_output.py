"""What commands print: the consoles, ``--json``, progress bars and tables.

rich is imported only by commands that print through it, so ``cbr --help`` starts fast.
"""
from __future__ import annotations

import json
import os  # noqa: F401  (docstring examples)
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Optional

import typer


class _LazyConsole:
    """A rich ``Console`` made on first use (rich is imported only by commands that print)."""

    def __init__(self, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: Any = None

    def real(self) -> Any:
        """The ``rich.console.Console`` itself."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=self._stderr)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


stdout: Any = _LazyConsole()
stderr: Any = _LazyConsole(stderr=True)


def print_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (numpy scalars and tuples handled)."""

    def default(o: Any) -> Any:
        if hasattr(o, "tolist"):
            return o.tolist()
        if hasattr(o, "__dict__"):
            return vars(o)
        return str(o)

    typer.echo(json.dumps(obj, indent=2, default=default))


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


def rich_table(title: Optional[str], columns: list[str], rows: list[list[Any]], width: Optional[int] = None) -> Any:
    """A table whose numbers are never cut, wrapped or dropped in ``width`` columns (default:
    the terminal's, 80 in a pipe): a number column is as wide as its widest number, text
    folds onto more lines, and columns that do not fit go to a second table (the first
    column repeated) instead of being cropped. A header wider than the room left folds onto
    more lines (:func:`fold_header`); a number column is never narrower than its widest
    number.

    >>> from rich.console import Console
    >>> console = Console(width=40, file=open(os.devnull, "w"), record=True)
    >>> console.print(rich_table(None, ["a_count_with_a_header_far_wider_than_forty_columns"], [[100064]], width=40))
    >>> "100064" in console.export_text()
    True
    """
    from rich.cells import cell_len
    from rich.console import Group
    from rich.table import Table

    cells = [[_cell(v) for v in row] for row in rows]
    n = len(columns)
    heads = [str(c) for c in columns]
    numeric = []
    body = []
    for i in range(n):
        values = [row[i] for row in cells if i < len(row) and row[i]]
        numeric.append(bool(values) and all(is_number_cell(v) for v in values))
        body.append(max((cell_len(line) for v in values for line in v.splitlines() or [""]), default=0))
    need = [max(cell_len(h), b) for h, b in zip(heads, body)]   # the width unfolded
    width = width or stdout.width or 80

    def least(i: int) -> int:  # numbers keep their widest number; text (and a header) folds
        return max(body[i], 1) if numeric[i] else min(need[i], TEXT_FOLD)

    # the first column is repeated in every table: full width if the widest other column still fits beside it
    room0 = width - 1 - 3 - max((least(i) + 3 for i in range(1, n)), default=0)
    first = need[0] if not n or need[0] <= room0 else max(room0, least(0))
    cap = width - 1 - (first + 3)  # the room beside the first column

    def cost(i: int) -> int:  # characters a column takes: text may fold down to TEXT_FOLD
        c = (need[i] if numeric[i] else min(need[i], TEXT_FOLD)) + 3
        return c if c <= cap else max(least(i) + 3, cap)

    groups: list[list[int]] = []
    current: list[int] = []
    used = 1 + first + 3
    for i in range(1, n):
        if current and used + cost(i) > width:
            groups.append(current)
            current, used = [], 1 + first + 3
        current.append(i)
        used += cost(i)
    groups.append(current)
    fixed = {i: cost(i) - 3 for i in range(1, n) if numeric[i] and cost(i) - 3 < need[i]}
    if n and first < need[0]:
        fixed[0] = first
    tables = []
    for k, group in enumerate(groups):
        table = Table(title=title if k == 0 else None, title_justify="left")
        for i in [0, *group] if n else []:
            if i in fixed:  # narrower than its header (or, the first column, its text): fold to fit
                header = fold_header(heads[i], fixed[i]) if numeric[i] else heads[i]
                table.add_column(header, justify="right" if numeric[i] else "left", no_wrap=numeric[i],
                                 overflow="fold", width=fixed[i])
            elif numeric[i]:
                table.add_column(heads[i], justify="right", no_wrap=True, min_width=need[i])
            else:
                table.add_column(heads[i], no_wrap=i == 0, overflow="fold", min_width=need[i] if i == 0 else None)
        for row in cells:
            table.add_row(*(row[i] if i < len(row) else "" for i in [0, *group]))
        tables.append(table)
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
