"""Figures the docs quote in more than one place say the same thing everywhere.

Retention's cost is measured by ``bench/bench_retention.py`` (whose ``TARGET`` is the ratio a
3,000-hand match must reach) and recorded in docs/benchmarks.md's Retention section; README,
docs/README.md and the "Cost" paragraph of docs/live-play.md summarise it. They once disagreed
(live-play said 0.46 over 10,000 hands and a 0.70 target, the others 0.43 and 0.62).
"""
from __future__ import annotations

import re

from tests.conftest import REPO

DOCS = REPO / "docs"


def _target() -> str:
    found = re.search(r"^TARGET = ([0-9.]+)$", (REPO / "bench" / "bench_retention.py").read_text(), re.M)
    assert found, "bench_retention.py defines TARGET"
    return found.group(1)


def _latest() -> dict[str, str]:
    """The latest ratios of docs/benchmarks.md's Retention section: the last row of its first
    table (``| code | 3,000 hands | 10,000 hands |``) with a figure in bold in both columns, and
    the floor row's bold figure and interval."""
    text = (DOCS / "benchmarks.md").read_text()
    section = text[text.index("\n## Retention\n"):]
    header = section.index("| code | 3,000 hands | 10,000 hands |")
    rows = []
    for line in section[header:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    both = [r for r in rows if r[1].startswith("**") and r[2].startswith("**")]
    floor = [r for r in rows if r[0].startswith("floor")]
    assert both and len(floor) == 1, rows
    last = both[-1]
    bold = re.compile(r"\*\*([0-9.]+)\*\*")
    floor_value = re.search(r"\*\*([0-9.]+)\*\* \+- ([0-9.]+)", floor[0][2])
    assert floor_value, floor[0]
    return {"3000": bold.match(last[1]).group(1), "10000": bold.match(last[2]).group(1),
            "floor": f"{floor_value.group(1)} +- {floor_value.group(2)}"}


def _cost_paragraph() -> str:
    text = (DOCS / "live-play.md").read_text()
    start = text.index("**Cost.**")
    return text[start:text.index("Figures and where the time goes", start)]


def test_live_play_cost_paragraph_quotes_the_latest_retention_figures() -> None:
    latest, target = _latest(), _target()
    cost = " ".join(_cost_paragraph().split())
    assert f"{latest['3000']} over 3,000 hands" in cost
    assert f"{latest['10000']} over 10,000" in cost
    assert f"{target} target" in cost
    assert latest["floor"] in cost
    assert "0.70" not in cost  # the target before 2026-11-29


def test_readme_and_the_docs_index_quote_the_same_retention_figures() -> None:
    latest, target = _latest(), _target()
    readme = next(line for line in (REPO / "README.md").read_text().splitlines()
                  if "retention on / off" in line)
    assert f"= {latest['10000']} (3,000 hands: {latest['3000']}," in readme
    assert f"target {target} missed" in readme
    assert f"{latest['floor']} at 10,000 hands" in readme
    index = " ".join((DOCS / "README.md").read_text().split())
    low, high = sorted((latest["3000"], latest["10000"]), key=float)
    assert f"retention's share of a match's speed ({low}-{high} of play without it, against {target} at 3,000 hands" \
        in index
    assert f"{latest['floor']} over 10,000 hands" in index


def test_benchmarks_retention_section_states_the_current_target() -> None:
    text = (DOCS / "benchmarks.md").read_text()
    section = text[text.index("\n## Retention\n"):]
    intro = " ".join(section.split("\n\n")[1].split())
    assert f"at {_target()} or more of the speed" in intro


def _floor_ms() -> str:
    """The floor's extra cost a hand, from the floor row of docs/benchmarks.md's first Retention
    table (the features and the grown base, each measured twice), to the nearest 0.05 ms."""
    text = (DOCS / "benchmarks.md").read_text()
    section = text[text.index("\n## Retention\n"):]
    row = next(line for line in section.splitlines() if line.startswith("| floor,"))
    found = re.search(r"the features add ([0-9.]+) and ([0-9.]+), the grown base ([0-9.]+) and ([0-9.]+)\)", row)
    assert found, row
    per_run = sum(float(x) for x in found.groups()) / 2
    return f"{round(per_run / 0.05) * 0.05:.2f}"


def test_the_floors_share_of_retentions_cost_is_one_figure_everywhere() -> None:
    """live-play said "0.55 of it the floor's" and benchmarks "0.55-0.85" and "0.55 of it the
    floor's", while the floor row itself adds up to about 0.85 ms a hand."""
    ms = _floor_ms()
    cost = " ".join(_cost_paragraph().split())
    assert f"about {ms} ms of it the floor's" in cost
    bench = " ".join((DOCS / "benchmarks.md").read_text().split())
    assert f"are about {ms} ms of those 1.9 ms" in bench
    assert f"with about {ms} ms of it the floor's" in bench
    for page in (cost, bench):
        assert "0.55 of it the floor's" not in page and "0.55-0.85" not in page
