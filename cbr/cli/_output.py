"""What commands print: the consoles, ``--json``, progress bars and tables.

rich is imported only by commands that print through it, so ``cbr --help`` starts fast.
"""
from __future__ import annotations

import json
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
    try:
        float(text.replace(",", "").lstrip("±"))
    except ValueError:
        return False
    return True


def rich_table(title: Optional[str], columns: list[str], rows: list[list[Any]], width: Optional[int] = None) -> Any:
    """A table whose numbers are never cut, wrapped or dropped in ``width`` columns (default:
    the terminal's, 80 in a pipe): a number column is as wide as its widest number, text
    folds onto more lines, and columns that do not fit go to a second table (the first
    column repeated) instead of being cropped.
    """
    from rich.console import Group
    from rich.table import Table

    cells = [[_cell(v) for v in row] for row in rows]
    n = len(columns)
    numeric = []
    need = []
    for i, c in enumerate(columns):
        values = [row[i] for row in cells if i < len(row) and row[i]]
        numeric.append(bool(values) and all(is_number_cell(v) for v in values))
        need.append(max([len(str(c)), *(len(v) for v in values)]))
    width = width or stdout.width or 80

    def cost(i: int) -> int:  # characters a column takes: text may fold down to 16
        return (need[i] if numeric[i] or i == 0 else min(need[i], 16)) + 3

    groups: list[list[int]] = []
    current: list[int] = []
    used = 1 + cost(0)
    for i in range(1, n):
        if current and used + cost(i) > width:
            groups.append(current)
            current, used = [], 1 + cost(0)
        current.append(i)
        used += cost(i)
    groups.append(current)
    tables = []
    for k, group in enumerate(groups):
        table = Table(title=title if k == 0 else None, title_justify="left")
        for i in [0, *group] if n else []:
            if numeric[i]:
                table.add_column(str(columns[i]), justify="right", no_wrap=True, min_width=need[i])
            else:
                table.add_column(str(columns[i]), no_wrap=i == 0, overflow="fold",
                                 min_width=need[i] if i == 0 else None)
        for row in cells:
            table.add_row(*(row[i] if i < len(row) else "" for i in [0, *group]))
        tables.append(table)
    return tables[0] if len(tables) == 1 else Group(*tables)


def fmt_score(x: Optional[float]) -> str:
    """A score with three decimals, or ``n/a``."""
    return "n/a" if x is None else f"{x:.3f}"
