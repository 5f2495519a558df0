"""The PNG figures of ``--plot`` (``cbr match``, ``cbr logs stats``, ``cbr league``).

matplotlib is the optional ``plots`` extra (``pip install 'cbr-holdem[plots]'``): a command
asks for it (:func:`need_pyplot`) and checks the output path (:func:`check_plot`) before it
starts its work, so a missing extra or a bad path costs nothing. A figure is drawn with the
file-only Agg backend and written atomically (a temporary file renamed over the path).
"""
from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from cbr.errors import CBRError

PLOTS_HINT = "--plot needs matplotlib: pip install 'cbr-holdem[plots]'"


def need_pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or a :class:`CBRError` saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CBRError(PLOTS_HINT) from None
    return plt


def check_plot(path: str, overwrite: bool) -> None:
    """The output-path rule for a ``--plot`` file (a ``.png``), checked before the work starts."""
    from cbr.cli._errors import usage_error
    from cbr.cli._options import check_output

    if not str(path).lower().endswith(".png"):
        raise usage_error(f"the plot is a PNG: give a file name ending in .png, got {path!r}", "--plot")
    check_output(path, what="plot", overwrite=overwrite)
    need_pyplot()


def _save(fig: Any, path: str) -> None:
    from cbr.store.durable import atomic_write_bytes

    plt = need_pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=110)
    finally:
        plt.close(fig)
    p = Path(path)
    if p.is_fifo():
        with open(p, "wb") as fh:
            fh.write(buf.getvalue())
    else:
        atomic_write_bytes(p, buf.getvalue())


def plot_cumulative(path: str, series: Mapping[str, Sequence[float]], *, title: str, xlabel: str, ylabel: str,
                    band: Optional[Mapping[str, Sequence[float]]] = None, step: int = 1) -> None:
    """One line per name of ``series`` (its running total from ``(0, 0)``; point ``i`` at ``x =
    (i + 1) * step``), with a shaded band of half-width ``band[name][i]`` around point ``i``
    where given (a 95% confidence interval). More than ten lines take the line styles in turn
    as well as the colours, so no two look alike."""
    plt = need_pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.8))
    styles = ["-", "--", ":", "-."]
    for k, (name, ys) in enumerate(series.items()):
        xs = [0] + [(i + 1) * step for i in range(len(ys))]
        line, = ax.plot(xs, [0.0, *ys], label=name, linewidth=1.2, linestyle=styles[(k // 10) % len(styles)],
                        marker="o" if len(ys) == 1 else None)
        half = (band or {}).get(name)
        if half is not None:
            lo = [0.0] + [y - h if math.isfinite(h) else y for y, h in zip(ys, half)]
            hi = [0.0] + [y + h if math.isfinite(h) else y for y, h in zip(ys, half)]
            ax.fill_between(xs, lo, hi, color=line.get_color(), alpha=0.18, linewidth=0)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if series:
        ax.legend(loc="best", fontsize="small")
    fig.tight_layout()
    _save(fig, path)


def plot_leaderboard(path: str, names: Sequence[str], values: Sequence[float], halves: Sequence[Optional[float]], *,
                     title: str, xlabel: str) -> None:
    """A horizontal bar per name (best on top) with its 95% confidence interval as an error bar."""
    plt = need_pyplot()
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * max(len(names), 1)))
    order = list(range(len(names)))[::-1]  # the first name (the leader) at the top
    ys = range(len(names))
    errs = [halves[i] if halves[i] is not None and math.isfinite(halves[i]) else 0.0 for i in order]
    colours = ["tab:green" if values[i] >= 0 else "tab:red" for i in order]
    ax.barh(list(ys), [values[i] for i in order], xerr=errs, color=colours, alpha=0.75, capsize=4,
            error_kw={"elinewidth": 1.2})
    ax.set_yticks(list(ys), [names[i] for i in order])
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    _save(fig, path)


def plot_competence(path: str, reach: Mapping[str, Sequence[int]], cover: Mapping[str, Sequence[float]], *,
                    k: int, title: str) -> None:
    """``cbr casebase competence --plot``: per street, the sampled cases' reachability sizes (how
    many of their ``k`` nearest solve them; 0 = pivotal) as a histogram, and beside it the cases'
    estimated coverage sizes, largest first (log scale): how few cases carry the street."""
    plt = need_pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    streets = list(reach)
    width = 0.8 / max(len(streets), 1)
    for n, s in enumerate(streets):
        sizes = list(reach[s])
        counts = [sizes.count(v) / max(len(sizes), 1) for v in range(k + 1)]
        left.bar([v + (n - (len(streets) - 1) / 2) * width for v in range(k + 1)], counts, width=width, label=s)
        ys = list(cover.get(s, ()))
        if ys:
            right.plot(range(1, len(ys) + 1), ys, label=s, linewidth=1.2)
    left.set_title("reachability (0 = pivotal)")
    left.set_xlabel(f"cases among the {k} nearest that solve a case")
    left.set_ylabel("share of the sampled cases")
    left.grid(axis="y", alpha=0.3)
    left.legend(fontsize="small")
    right.set_title("coverage, largest first")
    right.set_xlabel("case (rank)")
    right.set_ylabel("estimated cases solved")
    right.set_xscale("log")
    right.set_yscale("log")
    right.grid(alpha=0.3)
    right.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
