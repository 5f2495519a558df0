"""Every docstring example of the project's modules runs: cbr, features, evaluator_ext,
casebases and cli.py (one test per module, so a failure names it).

Examples run from the repository root as the working directory, the place README's commands
assume; so do the ``>>>`` sessions of README and of the pages in docs/ (one test per page).
Examples that read ``../shared/data/logs`` skip (fail under CBR_STRICT=1) when it is absent; one
that genuinely cannot run here (a user's own file, a slow build) is marked
``# doctest: +SKIP`` in its docstring. ``python -m pytest tests/test_doctests.py -k cbr.query.answer`` runs one module.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from tests.conftest import REPO, missing, require_module

PACKAGES = ("evaluator_ext", "cbr", "features", "casebases")
TOP_LEVEL_MODULES = ("cli",)
#: Examples name the real logs as README does: ../shared/data/logs from the repository root.
SHARED_IN_EXAMPLES = "../shared/data/logs"
#: Modules that need an optional extra (``serve``): without it they skip (fail under CBR_STRICT=1).
NEEDS = {"cbr.serve.app": "fastapi", "cbr.serve.schemas": "pydantic"}


def project_modules() -> list[str]:
    """Dotted names of every module of the project (packages walked recursively, sorted).

    >>> {"cli", "cbr.query.answer", "evaluator_ext.reference"} <= set(project_modules())
    True
    """
    names = list(TOP_LEVEL_MODULES)
    for package in PACKAGES:
        names.append(package)
        path = REPO / package
        for info in pkgutil.walk_packages([str(path)], prefix=f"{package}."):
            if not info.name.endswith(("._native", "._cfr", "._mccfr", "._retrieval", "._resolve")):  # the C extensions: no Python source, no docstrings to run
                names.append(info.name)
    return sorted(names)


def test_the_walk_finds_every_source_file() -> None:
    """No module escapes the doctest run (a file the walk missed would never be checked)."""
    on_disk = {"cli"}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            rel = path.relative_to(REPO).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            on_disk.add(".".join(parts))
    assert on_disk == set(project_modules())


@pytest.mark.parametrize("name", project_modules())
def test_docstring_examples(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    if name in NEEDS:
        require_module(NEEDS[name])
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    tests = finder.find(module, name, globs=dict(vars(module)))
    if any("../shared" in ex.source for t in tests for ex in t.examples) and not (REPO / SHARED_IN_EXAMPLES).exists():
        missing(f"real logs not available: {REPO / SHARED_IN_EXAMPLES} is missing (the examples of {name} read them)")
    for test in tests:
        runner.run(test, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)



#: The pages whose ``>>>`` sessions run: README and every page in docs/.
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def markdown_python_sessions(text: str) -> list[tuple[int, str]]:
    r"""``(line, block)`` for each fenced ``python`` block of a page that is an interactive
    session (``>>>`` lines); the other python blocks are sketches with placeholder names.

    >>> markdown_python_sessions("x\n```python\n>>> 1 + 1\n2\n```\n```python\nf(x)\n```\n")
    [(2, '>>> 1 + 1\n2\n')]
    """
    sessions, block, start = [], None, 0
    for number, line in enumerate(text.splitlines(), 1):
        if block is None and line.strip() == "```python":
            block, start = [], number
        elif block is not None and line.startswith("```"):
            if any(b.lstrip().startswith(">>> ") for b in block):
                sessions.append((start, "\n".join(block) + "\n"))
            block = None
        elif block is not None:
            block.append(line)
    return sessions


def test_readme_has_python_sessions() -> None:
    """README shows the engine from Python too (and its sessions run below)."""
    assert markdown_python_sessions((REPO / "README.md").read_text(encoding="utf-8")), "README has no >>> example"


@pytest.mark.parametrize("page", [p.relative_to(REPO).as_posix() for p in PAGES])
def test_page_python_sessions(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page's ``>>>`` examples give the output the page shows (run from the repository root)."""
    monkeypatch.chdir(REPO)
    sessions = markdown_python_sessions((REPO / page).read_text(encoding="utf-8"))
    if any("../shared" in block for _, block in sessions) and not (REPO / SHARED_IN_EXAMPLES).exists():
        missing(f"real logs not available: {REPO / SHARED_IN_EXAMPLES} is missing (the examples of {page} read them)")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for line, block in sessions:
        test = doctest.DocTestParser().get_doctest(block, {}, f"{page}:{line}", page, line)
        runner.run(test, out=report.append)
    assert runner.summarize(verbose=False).failed == 0, "".join(report)


def test_this_module_s_own_examples() -> None:
    import sys

    assert doctest.testmod(sys.modules[__name__]).failed == 0
