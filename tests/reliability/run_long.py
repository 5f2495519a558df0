"""The reliability suite's long form, with a summary of what was tried and what held.

    python -m tests.reliability.run_long                 # every fault test, 20x the rounds
    python -m tests.reliability.run_long --rounds 500    # exactly 500 rounds wherever a test asks
    python -m tests.reliability.run_long --short -k store    # the short form of some tests

Run from the repository root (the venv's python). It sets ``CBR_RELIABILITY=long`` (or
``CBR_RELIABILITY_ROUNDS``), runs ``pytest tests/reliability`` in this process (extra
arguments go to pytest), then prints one line per test: held / broke / not run, its time,
and what it tried (the first line of its docstring). The exit code is pytest's.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
OUTCOME_WORDS = {"passed": "held", "failed": "BROKE", "skipped": "not run"}


@dataclass
class Outcome:
    """What happened to one test: 'held', 'BROKE' or 'not run', seconds, what it tried, why."""

    tried: str = ""
    result: str = "not run"
    seconds: float = 0.0
    detail: str = ""


@dataclass
class SummaryPlugin:
    """A pytest plugin that records each test's outcome for the summary."""

    outcomes: dict[str, Outcome] = field(default_factory=dict)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            doc = (getattr(getattr(item, "obj", None), "__doc__", None) or "").strip()
            self.outcomes[item.nodeid] = Outcome(tried=doc.splitlines()[0] if doc else item.name)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = self.outcomes.setdefault(report.nodeid, Outcome(tried=report.nodeid))
        outcome.seconds += report.duration
        if report.when == "call" or report.outcome != "passed":
            if outcome.result != "BROKE":  # a failure in setup/call/teardown is what is kept
                outcome.result = OUTCOME_WORDS[report.outcome]
            if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
                outcome.detail = str(report.longrepr[2])
            elif report.outcome == "failed":
                lines = (report.longreprtext or "").strip().splitlines()
                outcome.detail = lines[-1] if lines else ""


def summary(outcomes: dict[str, Outcome], mode: str, seconds: float) -> str:
    """The report as text (markdown table), counts first.

    >>> print(summary({"t.py::a": Outcome("fuzz 5 logs", "held", 1.25)}, "long (x20)", 2.0))
    reliability suite, long (x20): 1 held, 0 broke, 0 not run, 2.0 s
    <BLANKLINE>
    | result | seconds | test | what it tried |
    |---|---|---|---|
    | held | 1.2 | t.py::a | fuzz 5 logs |
    """
    counts = {word: sum(o.result == word for o in outcomes.values()) for word in ("held", "BROKE", "not run")}
    lines = [f"reliability suite, {mode}: {counts['held']} held, {counts['BROKE']} broke, "
             f"{counts['not run']} not run, {seconds:.1f} s", "",
             "| result | seconds | test | what it tried |", "|---|---|---|---|"]
    for nodeid, o in outcomes.items():
        tried = o.tried + (f" ({o.detail})" if o.detail else "")
        lines.append(f"| {o.result} | {o.seconds:.1f} | {nodeid} | {tried.replace('|', '/')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.run_long", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--rounds", type=int, help="exact round count wherever a test asks for its default")
    group.add_argument("--short", action="store_true", help="the short form (as in the normal suite)")
    args, pytest_args = parser.parse_known_args(argv)
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be at least 1")
    os.environ.pop("CBR_RELIABILITY_ROUNDS", None)
    os.environ.pop("CBR_RELIABILITY", None)
    if args.rounds is not None:
        os.environ["CBR_RELIABILITY_ROUNDS"] = str(args.rounds)
        mode = f"{args.rounds} rounds"
    elif args.short:
        mode = "short form"
    else:
        os.environ["CBR_RELIABILITY"] = "long"
        from tests.reliability import LONG_FACTOR

        mode = f"long form (x{LONG_FACTOR} rounds)"
    plugin = SummaryPlugin()
    start = time.monotonic()
    code = pytest.main(["-q", "-p", "no:cacheprovider", str(HERE), *pytest_args], plugins=[plugin])
    print()
    print(summary(plugin.outcomes, mode, time.monotonic() - start))
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
