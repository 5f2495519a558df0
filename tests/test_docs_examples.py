"""Every command example a user is shown runs as shown: those of README.md and of every page in
``docs/``, and the ``Example: cbr ...`` lines of every command's ``--help``.

What is an example, in a page's fenced blocks:

- every line of a ``bash`` block that runs ``cbr`` (each ``&&`` step of it), and every
  ``$ cbr ...`` line of any other block (plain ``cbr A [B]`` lines there are synopses);
- ``printf 'KEYS' | cbr ...``: the same, with KEYS (``\\n`` escapes) on standard input;
- a block whose first line is ``# not run: REASON`` is shown but not run; its commands are still
  checked against the command tree (the commands and option names exist).

What each must do:

- exit 0;
- a ``$ cbr ...`` line followed by an ``error: ...`` line must exit 1 and print exactly that line
  on stderr (a page shows what a refusal looks like, and the test keeps it true);
- a ```` ```text ```` block right after a ```` ```console ```` block is the exact stdout of the
  console block's last command (at ``COLUMNS=80``; trailing spaces and surrounding blank lines
  ignored). A ``console`` block holds only ``$`` lines and ``error:`` lines, so no output is shown
  that is not checked.

They run as real ``cbr`` processes, page by page, in order, each page in a temporary working
directory of its own with ``../shared`` beside it (a link to the real logs), so examples that
write files (``-o``, ``--log``) write there and an example may use what an earlier example of the
same page built, as a reader following the page would. The ``--help`` examples share one more
directory. Examples that read ``../shared`` (or what was built from it) skip (fail under
CBR_STRICT=1) when the logs are absent.

The pages' other references are checked too: the modules and objects they name
(``cbr.store.casebase``, ``cbr.cfr.policy:CFRPolicy``), the repository paths
(``bench/bench_cfr.py``) and the links between pages and to their headings.
"""
from __future__ import annotations

import difflib
import fcntl
import functools
import importlib
import json
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
DOCS = REPO / "docs"
#: README first, then the docs pages in name order.
PAGES = [README, *sorted(DOCS.glob("*.md"))]
HELP = "--help"  # the page name of the ``--help`` examples
EXAMPLE_TIMEOUT = 240  # seconds; the slowest example (an IRC build) takes about ten
#: The terminal the examples run in: compared output is what an 80-column terminal shows.
ENV = {"COLUMNS": "80", "LINES": "40", "NO_COLOR": "1", "TERM": "dumb"}
NOT_RUN = re.compile(r"^#\s*not run:\s*\S")


@dataclass(frozen=True)
class Example:
    """One command a user is shown: where (for the test id and messages) and its arguments."""

    where: str
    argv: tuple[str, ...]
    error: str | None = None  # the ``error: ...`` line shown under it (exit 1 expected)
    output: str | None = None  # the stdout shown under it (a ```text block after its ```console block)
    stdin: str | None = None  # what ``printf '...' |`` feeds it
    page: str = ""  # the page it is shown on; examples of one page run in one directory

    @property
    def reads_shared(self) -> bool:
        return any("../shared" in a for a in self.argv)

    @property
    def outputs(self) -> tuple[str, ...]:
        """The paths it writes (``-o``/``--output``/``--log``/``--retain-into``/``--store`` values)."""
        written = ("-o", "--output", "--out", "--log", "--retain-into", "--store")
        return tuple(b for a, b in zip(self.argv, self.argv[1:]) if a in written)


def needs_shared(example: Example, examples: list[Example]) -> bool:
    """True when ``example`` reads ../shared, or uses what an earlier example that needs it wrote
    (a page's queries use the case base its build example made from ../shared).

    >>> build, query = Example("a", ("build", "../shared/x", "-o", "cb")), Example("b", ("query", "-c", "cb"))
    >>> needs_shared(query, [build, query]), needs_shared(query, [query])
    (True, False)
    >>> build = Example("a", ("build", "../shared/x", "-o", "casebases/cb"))   # a name under ./casebases/
    >>> needs_shared(query, [build, query])
    True
    >>> match = Example("c", ("match", "--players", "cbr:casebase=cb,call"))  # a case base named in a spec
    >>> needs_shared(match, [build, match])
    True
    """
    made: set[str] = set()  # outputs of the earlier examples that need ../shared (one pass, in order)

    def uses(arg: str, path: str) -> bool:  # the path, its name under ./casebases/, or either inside a spec
        path = path.rstrip("/")
        names = {path, path.removeprefix("casebases/")}
        return any(p.rstrip("/") == n or p.startswith(n + "/") for p in re.split(r"[=:,]", arg) for n in names)

    def needs(e: Example) -> bool:
        return e.reads_shared or any(uses(a, m) for a in e.argv for m in made)

    for earlier in examples:
        if earlier == example:
            break
        if needs(earlier):
            made.update(earlier.outputs)
    return needs(example)


def _command(text: str) -> tuple[tuple[str, ...], str | None] | None:
    """The arguments of a ``cbr`` command line (prompt, venv prefix and comments dropped) and
    what a ``printf '...' |`` before it feeds it.

    >>> _command("$ .venv/bin/cbr hand AcQs 3h4sJd   # category, HS")
    (('hand', 'AcQs', '3h4sJd'), None)
    >>> _command("printf 'c\\\\nq\\\\n' | cbr play --human")
    (('play', '--human'), 'c\\nq\\n')
    >>> _command("python3 -m venv .venv") is None
    True
    """
    words = shlex.split(text.strip().removeprefix("$ "), comments=True)
    stdin = None
    if len(words) > 3 and words[0] == "printf" and words[2] == "|":
        stdin, words = words[1].encode().decode("unicode_escape"), words[3:]
    if words and words[0] in ("cbr", ".venv/bin/cbr"):
        return tuple(words[1:]), stdin
    return None


def _cbr_args(command: str) -> tuple[str, ...] | None:
    """The arguments of a ``cbr`` command line, or None for any other line.

    >>> _cbr_args("$ .venv/bin/cbr hand AcQs 3h4sJd   # category, HS")
    ('hand', 'AcQs', '3h4sJd')
    """
    found = _command(command)
    return found[0] if found else None


@dataclass
class Block:
    """A fenced block of a page: its language, the line number of each of its lines, and where it ends."""

    language: str
    start: int  # line number of the opening fence
    end: int  # line number of the closing fence
    lines: list[tuple[int, str]]

    @property
    def not_run(self) -> bool:
        first = next((text for _, text in self.lines if text.strip()), "")
        return bool(NOT_RUN.match(first.strip()))

    @property
    def text(self) -> str:
        return "\n".join(text for _, text in self.lines)


def fenced_blocks(text: str) -> list[Block]:
    r"""The fenced blocks of a Markdown text, in order (an unclosed block runs to the end).

    >>> [(b.language, b.start, b.end, b.text) for b in fenced_blocks("x\n```bash\ncbr a\n```\n```\ny\n```\n")]
    [('bash', 2, 4, 'cbr a'), ('', 5, 7, 'y')]
    """
    blocks: list[Block] = []
    current: Block | None = None
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            if current is None:
                current = Block(line[3:].strip(), number, number, [])
            else:
                current.end = number
                blocks.append(current)
                current = None
        elif current is not None:
            current.lines.append((number, line))
    if current is not None:
        current.end = len(lines)
        blocks.append(current)
    return blocks


def _follows(blocks: list[Block], i: int, lines: list[str]) -> Block | None:
    """The block right after block ``i`` (only blank lines between), if any."""
    if i + 1 >= len(blocks):
        return None
    between = lines[blocks[i].end:blocks[i + 1].start - 1]
    return blocks[i + 1] if all(not line.strip() for line in between) else None


def page_examples(text: str, page: str = "README.md") -> tuple[list[Example], list[Example], list[str]]:
    """``(examples to run, examples shown but not run, problems)`` of a page's fenced blocks:
    every line of a ``bash`` block (and each ``&&`` step of it), and ``$ cbr`` prompt lines of
    other blocks (plain ``cbr A [B]`` lines there are synopses, not commands).

    >>> md = "```bash\\ncbr hand AhKd\\nx && .venv/bin/cbr --help\\n```\\n```\\ncbr a [-x]\\n$ cbr b\\n```\\n"
    >>> [e.argv for e in page_examples(md)[0]]
    [('hand', 'AhKd'), ('--help',), ('b',)]
    >>> page_examples("```\\n$ cbr c\\nerror: no\\n```\\n")[0][0].error
    'error: no'
    >>> run, _, problems = page_examples("```console\\n$ cbr d\\n```\\n\\n```text\\nout  \\n```\\n")
    >>> run[0].output, problems
    ('out  ', [])
    >>> page_examples("```console\\n$ cbr d\\nout\\n```\\n", "p.md")[2]
    ['p.md:3: a ```console block holds only $ commands and error: lines; show output in a ```text block after it']
    >>> [e.argv for e in page_examples("```bash\\n# not run: needs a dealer\\ncbr play --acpc h:1\\n```\\n")[1]]
    [('play', '--acpc', 'h:1')]
    """
    run: list[Example] = []
    not_run: list[Example] = []
    problems: list[str] = []
    lines = text.splitlines()
    blocks = fenced_blocks(text)
    for i, block in enumerate(blocks):
        found: list[Example] = []
        previous_command = False
        for number, line in block.lines:
            stripped = line.strip()
            if block.language in ("bash", "sh", "shell"):
                steps = line.split("&&")
            elif stripped.startswith("$ "):
                steps = [line]
            else:
                if block.language == "console" and stripped and not NOT_RUN.match(stripped) and not (
                        previous_command and stripped.startswith("error:")):
                    problems.append(f"{page}:{number}: a ```console block holds only $ commands and error: lines; "
                                    "show output in a ```text block after it")
                previous_command = False
                continue
            following = lines[number].strip() if number < len(lines) else ""
            error = following if len(steps) == 1 and following.startswith("error:") else None
            for step in steps:
                command = _command(step)
                if command is not None:
                    found.append(Example(f"{page}:{number}", command[0], error, stdin=command[1], page=page))
            previous_command = True
        after = _follows(blocks, i, lines)
        if block.language == "console" and after is not None and after.language == "text":
            last_command = max((n for n, t in block.lines if t.strip().startswith("$ ")), default=None)
            if not found or found[-1].where != f"{page}:{last_command}":
                problems.append(f"{page}:{after.start}: a ```text block after a ```console block whose last "
                                "command is not a cbr command: nothing to compare it with")
            else:
                last = found.pop()
                found.append(Example(last.where, last.argv, last.error, after.text, last.stdin, page))
        (not_run if block.not_run else run).extend(found)
    return run, not_run, problems


def help_examples() -> list[Example]:
    """``Example: cbr ...`` (or ``$ cbr ...``) lines in the help text of every command and group."""
    found: list[Example] = []

    def walk(command, path: tuple[str, ...]) -> None:
        for line in (command.help or "").splitlines():
            match = re.search(r"(?:Example:|^\s*\$)\s*(cbr\s.*)$", line)
            if match:
                args = _cbr_args(match.group(1))
                if args is not None:
                    found.append(Example(f"cbr {' '.join(path)} --help".replace("  ", " "), args, page=HELP))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            if not getattr(sub, "hidden", False):
                walk(sub, path + (name,))

    from cli import app

    walk(typer.main.get_command(app), ())
    return found


def _name(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


PAGE_TEXT = {_name(p): p.read_text(encoding="utf-8") for p in PAGES}
PARSED = {name: page_examples(text, name) for name, text in PAGE_TEXT.items()}
README_EXAMPLES = PARSED["README.md"][0]
DOCS_EXAMPLES = [e for name, parsed in PARSED.items() if name != "README.md" for e in parsed[0]]
NOT_RUN_EXAMPLES = [e for parsed in PARSED.values() for e in parsed[1]]
HELP_EXAMPLES = help_examples()
ALL_EXAMPLES = README_EXAMPLES + DOCS_EXAMPLES + HELP_EXAMPLES
#: Each page's examples, in order (they run in one directory per page).
BY_PAGE: dict[str, list[Example]] = {}
for _example in ALL_EXAMPLES:
    BY_PAGE.setdefault(_example.page, []).append(_example)


def _cbr_command() -> list[str]:
    """The installed ``cbr`` beside this interpreter, else the same app through ``python -c``."""
    script = Path(sys.executable).parent / "cbr"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"]


def _skipped(example: Example) -> bool:
    return needs_shared(example, BY_PAGE[example.page]) and not LOGS.exists()


def _run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the pages run: a new directory that every pytest-xdist worker of this test run shares,
    else this process's own (see :func:`shared_base`)."""
    root = shared_base(tmp_path_factory.getbasetemp(), os.environ.get("PYTEST_XDIST_WORKER")) / "examples"
    root.mkdir(exist_ok=True)
    return root


def shared_base(base: Path, worker: str | None) -> Path:
    """The base temporary directory of the whole test run: a pytest-xdist worker's own ``base`` is
    ``popen-<worker>`` inside it. Judged by the directory, not by ``PYTEST_XDIST_WORKER`` alone: a
    pytest started inside a worker (the strict-mode tests do) inherits that variable but is a run
    of its own, and must neither read nor leave results outside its own directory.

    >>> shared_base(Path("/t/run-1/popen-gw0"), "gw0").as_posix()
    '/t/run-1'
    >>> shared_base(Path("/t/pytest-of-me/pytest-7"), "gw0").as_posix()   # a pytest inside a worker
    '/t/pytest-of-me/pytest-7'
    >>> shared_base(Path("/t/pytest-of-me/pytest-7"), None).as_posix()
    '/t/pytest-of-me/pytest-7'
    """
    return base.parent if worker and base.name == f"popen-{worker}" else base


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory: pytest.TempPathFactory):
    """``run(example)``: the finished process of ``example``. A page's examples run the first time
    one of them is asked for, all of them, in order, in the page's own directory (so ``-k`` on
    one page runs only that page). Once per test run: the first worker to ask runs the page under
    a lock and leaves what each example did beside it (``PAGE.json``); another worker asking for
    the same page (``-n 2`` deals a page's examples to both) waits for that and reads it."""
    root = _run_dir(tmp_path_factory)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])), **ENV)
    runs: dict[Example, subprocess.CompletedProcess[str]] = {}
    done: set[str] = set()

    def run_examples(page: str, base: Path) -> list[tuple[int, str, str] | None]:
        cwd = base / "work"
        cwd.mkdir(parents=True)
        if SHARED.exists():
            (base / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
        out: list[tuple[int, str, str] | None] = []
        for example in BY_PAGE[page]:
            if _skipped(example):
                out.append(None)
                continue
            try:
                ran = subprocess.run(_cbr_command() + list(example.argv), cwd=cwd, env=env, text=True,
                                     capture_output=True, timeout=EXAMPLE_TIMEOUT,
                                     input=example.stdin if example.stdin is not None else "")
                out.append((ran.returncode, ran.stdout, ran.stderr))
            except subprocess.TimeoutExpired as exc:  # run() has killed the process
                stdout = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
                out.append((-9, stdout, f"timed out after {exc.timeout} s"))
        return out

    def run_page(page: str) -> None:
        base = root / re.sub(r"[^A-Za-z0-9]+", "-", page).strip("-")
        results = base.with_name(base.name + ".json")
        with open(base.with_name(base.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # held while another worker runs the page
            if results.exists():
                found = json.loads(results.read_text(encoding="utf-8"))
            else:
                found = run_examples(page, base)
                partial = results.with_name(results.name + ".part")
                partial.write_text(json.dumps(found), encoding="utf-8")
                partial.replace(results)
        for example, got in zip(BY_PAGE[page], found):
            if got is not None:
                runs[example] = subprocess.CompletedProcess(_cbr_command() + list(example.argv), *got)
        done.add(page)

    def run(example: Example) -> subprocess.CompletedProcess[str]:
        if example.page not in done:
            run_page(example.page)
        return runs[example]

    return run


#: Examples that fail today, each with the reason (fixed on another branch). The marks are
#: strict: once the fix is merged the example passes, the xfail turns into a failure, and its
#: line here must go.
KNOWN_FAILING: dict[tuple[str, ...], str] = {}  # argv -> reason; an example listed here must fail


def _param(example: Example):
    reason = KNOWN_FAILING.get(example.argv)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(example, marks=marks, id=_id(example))


def _id(example: Example) -> str:
    return f"{example.where}: cbr {' '.join(example.argv)}"[:120]


def _lines(text: str) -> list[str]:
    """Lines without trailing spaces, leading and trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def test_examples_were_found() -> None:
    """The extraction itself works: README's tour builds and queries, the docs show commands and
    output to compare, the query help example is there, and every page is read."""
    assert any(e.argv[:1] == ("query",) for e in README_EXAMPLES)
    assert any(e.argv[:1] == ("build",) for e in README_EXAMPLES)
    assert any(e.argv[:1] == ("query",) for e in HELP_EXAMPLES)
    assert any(e.output is not None for e in DOCS_EXAMPLES) and any(e.error is not None for e in DOCS_EXAMPLES)
    assert {"docs/casebases.md", "docs/live-play.md"} <= set(BY_PAGE), sorted(BY_PAGE)


def test_every_top_level_command_shows_an_example() -> None:
    """docs/cli.md: the main commands, every top-level command (not the groups), show an example
    in --help (`build` and `hand` showed none); each runs above, but `serve`'s, which serves until
    Ctrl-C and so says so instead of `Example:`."""
    tree = _command_tree()
    commands = {name: c for name, c in tree.commands.items() if not hasattr(c, "commands")}
    assert {"build", "hand", "query", "match", "exploit", "serve"} <= set(commands), sorted(commands)
    for name, command in commands.items():
        said = "Example (serves until Ctrl-C):" if name == "serve" else "Example:"
        assert re.search(rf"^\s*{re.escape(said)} cbr {re.escape(name)}\s", command.help or "", re.M), name
    run = {e.argv[0] for e in HELP_EXAMPLES}
    assert set(commands) - {"serve"} <= run, sorted(set(commands) - run)


def test_shown_output_is_marked_so_it_is_compared() -> None:
    """No ```console block shows output that the test would not check (see the module docstring)."""
    problems = [p for parsed in PARSED.values() for p in parsed[2]]
    assert problems == []


@pytest.mark.parametrize("example", [_param(e) for e in ALL_EXAMPLES])
def test_command_example_runs_as_shown(example: Example, example_runs) -> None:
    if _skipped(example):
        missing(f"real logs not available: {LOGS} is missing ({example.where} reads ../shared or what was built from it)")
    run = example_runs(example)
    shown = f"{example.where}: `cbr {shlex.join(example.argv)}`"
    if example.error is not None:  # shown as a refusal: exit 1 with exactly that one line
        assert (run.returncode, run.stderr.strip()) == (1, example.error), (
            f"{shown} exited {run.returncode}\nstderr:\n{run.stderr[-2000:]}")
        return
    assert run.returncode == 0, (f"{shown} exited {run.returncode}\n"
                                 f"stdout:\n{run.stdout[-2000:]}\nstderr:\n{run.stderr[-2000:]}")
    if example.output is not None:
        expected, actual = _lines(example.output), _lines(run.stdout)
        diff = "\n".join(difflib.unified_diff(expected, actual, "shown on the page", "printed", lineterm=""))
        assert actual == expected, f"{shown} prints something else than the page shows:\n{diff}"


@functools.cache
def _command_tree():
    """The click command of ``cbr`` (typer builds it anew on each call)."""
    from cli import app

    return typer.main.get_command(app)


def _problems_of_command(argv: tuple[str, ...]) -> list[str]:
    """What is wrong with a command line, checked against the command tree without running it:
    a command that does not exist, or an option the command does not have.

    >>> _problems_of_command(("query", "--hole", "AhKd", "--no-such-option"))
    ['cbr query has no option --no-such-option']
    >>> _problems_of_command(("casebase", "nosuch"))
    ['cbr casebase has no command nosuch']
    >>> _problems_of_command(("--debug", "play", "--acpc", "127.0.0.1:1", "--policy", "cbr"))
    []
    """
    command = _command_tree()
    path = ["cbr"]
    options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
    args = list(argv)
    while hasattr(command, "commands"):  # a group
        while args and args[0] in options:  # the group's own flags (--debug)
            args.pop(0)
        if not args:
            return []
        name = args.pop(0)
        if name not in command.commands:
            return [f"{' '.join(path)} has no command {name}"]
        command = command.commands[name]
        path.append(name)
        options |= {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    return [f"{' '.join(path)} has no option {a.split('=')[0]}" for a in args
            if a.startswith("-") and a != "-" and not re.fullmatch(r"-\d.*", a) and a.split("=")[0] not in options]


def test_examples_not_run_name_real_commands_and_options() -> None:
    """A block marked ``# not run:`` still names commands and options that exist (so it cannot rot
    by a rename); so does every example that runs (a clearer message than its exit code)."""
    problems = [f"{e.where}: {p}" for e in NOT_RUN_EXAMPLES + ALL_EXAMPLES for p in _problems_of_command(e.argv)]
    assert problems == []


# ---- the pages' other references ---------------------------------------------------------------
#: Dotted names the pages mention that are entry-point groups, not modules (from pyproject.toml).
ENTRY_POINT_GROUPS = set(re.findall(r'\[project\.entry-points\."([\w.]+)"\]', (REPO / "pyproject.toml").read_text()))
DOTTED = re.compile(r"`((?:cbr|evaluator_ext|features|casebases)(?:\.\w+)+(?::\w+)?)")
TOP_LEVEL = ("cbr/", "evaluator_ext/", "features/", "casebases/", "tests/", "bench/", "experiments/", "docs/", ".ci/")
PATH = re.compile(r"`((?:" + "|".join(re.escape(t) for t in TOP_LEVEL) + r")[\w./*-]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _resolves(name: str) -> bool:
    """Whether a dotted name (``cbr.store.casebase``, ``cbr.store.CaseBase.open``,
    ``cbr.cfr.policy:CFRPolicy``) is a module or an object of one.

    >>> _resolves("cbr.store.upgrade"), _resolves("cbr.query.answer.answer"), _resolves("cbr.nosuch")
    (True, True, False)
    """
    parts = name.replace(":", ".").split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors for the headings of a Markdown text (outside fenced blocks).

    >>> sorted(heading_anchors("# A page\\n## The ACPC protocol: `cbr play --acpc`\\n```\\n# not a heading\\n```\\n"))
    ['a-page', 'the-acpc-protocol-cbr-play---acpc']
    """
    anchors: set[str] = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", sorted(PAGE_TEXT))
def test_page_names_modules_files_and_links_that_exist(page: str) -> None:
    """Module paths moved in the layout move; a page must not send a reader to one that is gone."""
    text = PAGE_TEXT[page]
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # the names in prose, not in sketches
    problems = [f"no module or object {n}" for n in sorted(set(DOTTED.findall(prose)))
                if n not in ENTRY_POINT_GROUPS and not _resolves(n)]
    for path in sorted(set(PATH.findall(text))):
        clean = path.rstrip(".")
        if "<" in clean or "NNNNN" in clean or not ("." in clean.rsplit("/", 1)[-1] or clean.endswith("/")):
            continue  # a placeholder, or a name of the reader's own (casebases/learned): only files and folders/
        if not (list(REPO.glob(clean)) if "*" in clean else (REPO / clean).exists()):
            problems.append(f"no file {clean}")
    here = (REPO / page).parent
    for target in sorted(set(LINK.findall(prose))):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = (here / file).resolve() if file else REPO / page
        if not path.exists():
            problems.append(f"link to a missing file: {target}")
        elif anchor and path.suffix == ".md" and anchor not in heading_anchors(path.read_text(encoding="utf-8")):
            problems.append(f"link to a missing heading: {target}")
    assert problems == []


def test_user_docs_carry_no_issue_numbers() -> None:
    """Issue numbers belong to the history, not to the user documentation."""
    found = [f"{page}: {m.group(0)}" for page, text in PAGE_TEXT.items()
             for m in re.finditer(r"\b[Ii]ssues? #?\d+", text)]
    assert found == []


# ---- the experiment scripts' commands ----------------------------------------------------------
#: ``experiments/NAME.py ARGS`` in a code span or a line of a fenced block (up to a ``#`` comment).
SCRIPT_COMMAND = re.compile(r"(?:(python3?|\.venv/bin/python) +)?experiments/(\w+)\.py((?: +[^\s#`]+)*)")
#: Every option a script's ``add_argument`` declares (its aliases too), read from its source.
SCRIPT_OPTIONS = {path.stem: set(re.findall(r"[\"'](--?[\w-]+)[\"']", " ".join(
    re.findall(r"add_argument\(([^)]*)", path.read_text(encoding="utf-8"))))) | {"-h", "--help"}
    for path in (REPO / "experiments").glob("*.py")}


def script_commands(text: str) -> list[tuple[str, str, list[str]]]:
    """``(paragraph, script, arguments)`` of every experiment-script command of a page: a code span
    or a fenced line that runs one (``python3 experiments/x.py``) or gives it arguments; a paragraph
    is the text between blank lines (a code span may cross a line end).

    >>> script_commands("Run `python3 experiments/x.py --seed 2\\n--out f.json` (see `experiments/y.py`).")
    [('Run `python3 experiments/x.py --seed 2 --out f.json` (see `experiments/y.py`).', 'x', ['--seed', '2', '--out', 'f.json'])]
    """
    found = []
    for paragraph in re.split(r"\n[ \t]*\n", text):
        flat = re.sub(r"\\?\n", " ", paragraph)
        pieces = re.findall(r"`([^`]+)`", flat) + (paragraph.splitlines() if paragraph.startswith("```") else [])
        for piece in pieces:
            for m in SCRIPT_COMMAND.finditer(piece.split(" #")[0]):
                args = m.group(3).split()
                if m.group(1) or args:
                    found.append((flat, m.group(2), args))
    return found


@pytest.mark.parametrize("page", sorted(PAGE_TEXT))
def test_experiment_commands_name_real_options_and_write_the_file_they_name(page: str) -> None:
    """A page's experiment commands use options their script has, and a command shown beside a
    committed result (``experiments/results/...``) writes that result: it passes ``--out`` (a script
    without it writes into ``experiments/scratch``) or its paragraph says that it writes to scratch.
    Some 28 re-run commands named a committed file and wrote to scratch."""
    problems = []
    for paragraph, script, args in script_commands(PAGE_TEXT[page]):
        if script not in SCRIPT_OPTIONS:
            problems.append(f"{script}: no such script")
            continue
        known = SCRIPT_OPTIONS[script]
        problems += [f"{script} {a}: no such option" for a in args
                     if re.fullmatch(r"--?[a-zA-Z][\w-]*(=.*)?", a) and a.split("=")[0] not in known]
        writes = "--out" in known
        if writes and "experiments/results/" in paragraph and not {"--out", "--results"} & set(args) \
                and "experiments/scratch" not in paragraph:
            problems.append(f"{script} {' '.join(args)}: beside a committed result, without --out")
    assert problems == []


def test_this_module_s_own_examples() -> None:
    """The extraction helpers' docstring examples (this file is not a project module)."""
    import doctest

    assert doctest.testmod(sys.modules[__name__]).failed == 0


def test_the_commands_said_to_take_json_are_those_that_do() -> None:
    """docs/cli.md lists the commands with ``--json``; it left out five of ``cbr casebase`` and
    ``exploit``. The list names every command that has the option, and only those."""
    text = (DOCS / "cli.md").read_text()
    start = text.index("take `--json` for scripts:")
    listed = set(re.findall(r"`([a-z -]+?)(?: --acpc)?`", text[start:text.index("(every command but", start)]))
    listed.discard("--json")
    have: set[str] = set()

    def walk(command, path: tuple[str, ...]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, (*path, name))
        elif any("--json" in p.opts for p in command.params):
            have.add(" ".join(path))

    walk(_command_tree(), ())
    assert listed == have, (sorted(listed - have), sorted(have - listed))
