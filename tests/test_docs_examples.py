"""Every command example a user is shown runs as shown: README's (``cbr ...`` lines of
fenced ``bash`` blocks, ``$ cbr ...`` lines of any block, ``... && .venv/bin/cbr ...``) and the
``Example: cbr ...`` lines of every command's ``--help``. Each exits 0, except a ``$ cbr ...``
line that README shows followed by an ``error: ...`` line: that one must exit 1 and print exactly
that line on stderr (README shows what a refusal looks like, and the test keeps it true).

They run as real ``cbr`` processes, in order, in one temporary working directory that has
``../shared`` beside it (a link to the real logs), so examples that write files (``-o``,
``--log``) write there and a query may use the case base an earlier example built, as a
reader following README would. Examples that read ``../shared`` skip (fail under
CBR_STRICT=1) when the logs are absent.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main

from tests.conftest import LOGS, REPO, SHARED, missing

README = REPO / "README.md"
EXAMPLE_TIMEOUT = 240  # seconds; the slowest README example (an IRC build) takes a few seconds


@dataclass(frozen=True)
class Example:
    """One command a user is shown: where (for the test id and messages) and its arguments."""

    where: str
    argv: tuple[str, ...]
    error: str | None = None  # the ``error: ...`` line README shows under it (exit 1 expected)

    @property
    def reads_shared(self) -> bool:
        return any("../shared" in a for a in self.argv)

    @property
    def outputs(self) -> tuple[str, ...]:
        """The paths it writes (``-o``/``--output``/``--log`` values)."""
        return tuple(b for a, b in zip(self.argv, self.argv[1:]) if a in ("-o", "--output", "--out", "--log"))


def needs_shared(example: Example, examples: list[Example]) -> bool:
    """True when ``example`` reads ../shared, or uses what an earlier example that needs it wrote
    (README's queries use the case base its build example made from ../shared).

    >>> build, query = Example("a", ("build", "../shared/x", "-o", "cb")), Example("b", ("query", "-c", "cb"))
    >>> needs_shared(query, [build, query]), needs_shared(query, [query])
    (True, False)
    """
    made: set[str] = set()  # outputs of the earlier examples that need ../shared (one pass, in order)

    def needs(e: Example) -> bool:
        return e.reads_shared or any(a.rstrip("/") == m or a.startswith(m.rstrip("/") + "/")
                                     for a in e.argv for m in made)

    for earlier in examples:
        if earlier == example:
            break
        if needs(earlier):
            made.update(earlier.outputs)
    return needs(example)


def _cbr_args(command: str) -> tuple[str, ...] | None:
    """The arguments of a ``cbr`` command line (prompt, venv prefix and comments dropped).

    >>> _cbr_args("$ .venv/bin/cbr hand AcQs 3h4sJd   # category, HS")
    ('hand', 'AcQs', '3h4sJd')
    >>> _cbr_args("python3 -m venv .venv") is None
    True
    """
    words = shlex.split(command.strip().removeprefix("$ "), comments=True)
    if words and words[0] in ("cbr", ".venv/bin/cbr"):
        return tuple(words[1:])
    return None


def readme_examples(text: str) -> list[Example]:
    """The ``cbr`` commands of README's fenced blocks: every line of a ``bash`` block (and each
    ``&&`` step of it), and ``$ cbr`` prompt lines of other blocks (plain ``cbr A [B]`` lines
    there are synopses, not commands).

    >>> md = "```bash\\ncbr hand AhKd\\nx && .venv/bin/cbr --help\\n```\\n```\\ncbr a [-x]\\n$ cbr b\\n```\\n"
    >>> [e.argv for e in readme_examples(md)]
    [('hand', 'AhKd'), ('--help',), ('b',)]
    >>> readme_examples("```\\n$ cbr c\\nerror: no\\n```\\n")[0].error
    'error: no'
    """
    found: list[Example] = []
    language: str | None = None
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            language = line[3:].strip() if language is None else None
            continue
        if language is None:
            continue
        if language in ("bash", "sh", "shell"):
            steps = line.split("&&")
        elif line.lstrip().startswith("$ "):
            steps = [line]
        else:
            continue
        following = lines[number].strip() if number < len(lines) else ""
        error = following if len(steps) == 1 and following.startswith("error:") else None
        for step in steps:
            args = _cbr_args(step)
            if args is not None:
                found.append(Example(f"README.md:{number}", args, error))
    return found


def help_examples() -> list[Example]:
    """``Example: cbr ...`` (or ``$ cbr ...``) lines in the help text of every command and group."""
    found: list[Example] = []

    def walk(command, path: tuple[str, ...]) -> None:
        for line in (command.help or "").splitlines():
            match = re.search(r"(?:Example:|^\s*\$)\s*(cbr\s.*)$", line)
            if match:
                args = _cbr_args(match.group(1))
                if args is not None:
                    found.append(Example(f"cbr {' '.join(path)} --help".replace("  ", " "), args))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, path + (name,))

    from cli import app

    walk(typer.main.get_command(app), ())
    return found


README_EXAMPLES = readme_examples(README.read_text(encoding="utf-8"))
HELP_EXAMPLES = help_examples()
ALL_EXAMPLES = README_EXAMPLES + HELP_EXAMPLES


def _cbr_command() -> list[str]:
    """The installed ``cbr`` beside this interpreter, else the same app through ``python -c``."""
    script = Path(sys.executable).parent / "cbr"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"]


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[Example, subprocess.CompletedProcess[str]]:
    """Run every example once, in order, in one temporary cwd with ``../shared`` beside it."""
    root = tmp_path_factory.mktemp("examples")
    cwd = root / "work"
    cwd.mkdir()
    if SHARED.exists():
        (root / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               COLUMNS="100", NO_COLOR="1", TERM="dumb")
    runs: dict[Example, subprocess.CompletedProcess[str]] = {}
    for example in ALL_EXAMPLES:
        if needs_shared(example, ALL_EXAMPLES) and not LOGS.exists():
            continue
        try:
            runs[example] = subprocess.run(_cbr_command() + list(example.argv), cwd=cwd, env=env, text=True,
                                           capture_output=True, timeout=EXAMPLE_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:  # run() has killed the process
            runs[example] = subprocess.CompletedProcess(exc.cmd, -9, exc.stdout or "", f"timed out after {exc.timeout} s")
    return runs


#: Examples that fail today, each with the part of issue 7 that fixes it (on another branch). The
#: marks are strict: once the fix is merged the example passes, the xfail turns into a failure,
#: and its line here must go.
KNOWN_FAILING: dict[tuple[str, ...], str] = {}  # argv -> reason; an example listed here must fail


def _param(example: Example):
    reason = KNOWN_FAILING.get(example.argv)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(example, marks=marks, id=_id(example))


def _id(example: Example) -> str:
    return f"{example.where}: cbr {' '.join(example.argv)}"[:120]


def test_examples_were_found() -> None:
    """The extraction itself works: README's Quickstart query and the query help example are there."""
    assert any(e.argv[:1] == ("query",) for e in README_EXAMPLES)
    assert any(e.argv[:1] == ("build",) for e in README_EXAMPLES)
    assert any(e.argv[:1] == ("query",) for e in HELP_EXAMPLES)


@pytest.mark.parametrize("example", [_param(e) for e in ALL_EXAMPLES])
def test_command_example_exits_0(example: Example, example_runs: dict) -> None:
    if needs_shared(example, ALL_EXAMPLES) and not LOGS.exists():
        missing(f"real logs not available: {LOGS} is missing ({example.where} reads ../shared or what was built from it)")
    run = example_runs[example]
    if example.error is not None:  # shown as a refusal: exit 1 with exactly that one line
        assert (run.returncode, run.stderr.strip()) == (1, example.error), (
            f"{example.where}: `cbr {shlex.join(example.argv)}` exited {run.returncode}\nstderr:\n{run.stderr[-2000:]}")
        return
    assert run.returncode == 0, (f"{example.where}: `cbr {shlex.join(example.argv)}` exited {run.returncode}\n"
                                 f"stdout:\n{run.stdout[-2000:]}\nstderr:\n{run.stderr[-2000:]}")


def test_this_module_s_own_examples() -> None:
    """The extraction helpers' docstring examples (this file is not a project module)."""
    import doctest

    assert doctest.testmod(sys.modules[__name__]).failed == 0
