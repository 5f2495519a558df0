"""Every numeric option of every script in bench/ is checked when the arguments are parsed, as
the experiment scripts' are (``experiments/common.py``'s types, through ``bench/native_guard.py``):
a count must be 1 or more (0 or more where 0 means something its ``--help`` says), a seed 0 or
more, a duration more than 0, a list of counts at least one count. A bad value is argparse's
usage error (one ``error: argument --X: ...`` line, exit 2) before any work: no line on stdout,
no file. Before, ``bench_match.py --hands 0`` printed ``evaluator: native`` and ended in the
game's traceback, ``bench_cfr.py --budget -1`` in a ZeroDivisionError, ``bench_store.py
--cases -1`` in numpy's negative dimensions, and ``bench_exploit.py --seed -1`` or
``bench_parsers.py --repeat -1`` ran the whole benchmark."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from cbr.game.gamedef import MAX_SEATS
from tests.conftest import require_native

REPO = Path(__file__).resolve().parents[1]

COUNT = "0 is out of range: give 1 or more"
SEED = "-1 is out of range: give 0 or more"
DURATION = "0 is out of range: give more than 0"
#: What a script needs on its command line before its options (positionals, a subcommand).
BEFORE = {"bench_condensed": ["default", "default"], "golden_decisions": ["check"],
          "acpc_reference_interop": ["--dealer", sys.executable]}

#: (script, option, bad value, what argparse says after "argument OPTION: "); bench_pcs's options
#: belong to its subcommands (the option is then "SUBCOMMAND --option").
BAD = [
    ("acpc_reference_interop", "--hands", "0", COUNT),
    ("acpc_reference_interop", "--seed", "-1", SEED),
    ("acpc_reference_interop", "--timeout", "0", DURATION),
    ("acpc_reference_interop", "--limit", "0", DURATION),
    ("bench_abstraction", "--samples", "-1", "-1 is out of range: give 1 or more"),
    ("bench_adaptive", "--hands", "0", COUNT),
    ("bench_adaptive", "--seed", "-1", SEED),
    ("bench_build", "--workers", "0", COUNT),
    ("bench_build", "--repeat", "0", COUNT),
    ("bench_cfr", "--target", "0", DURATION),
    ("bench_cfr", "--budget", "-1", "-1 is out of range: give more than 0"),
    ("bench_condense", "--cases", "9", "9 is out of range: give 10 or more"),  # condense keeps a tenth
    ("bench_condense", "--seed", "-1", SEED),
    ("bench_condensed", "--queries", "0", COUNT),
    ("bench_condensed", "--repeat", "0", COUNT),
    ("bench_condensed", "--seed", "-1", SEED),
    ("bench_decision", "--decisions", "0", COUNT),
    ("bench_decision", "--cases", "0", COUNT),
    ("bench_exploit", "--hands", "1", "1 is out of range: give 2 or more"),  # LBR plays 2 or more
    ("bench_exploit", "--seed", "-1", SEED),
    ("bench_fallback", "--queries", "0", COUNT),
    ("bench_fallback", "--k", "0", COUNT),
    ("bench_fallback", "--threshold", "2", "2 is out of range: give 0 to 1"),
    ("bench_fallback", "--seed", "-1", SEED),
    ("bench_match", "--hands", "0", COUNT),
    ("bench_match", "--ehs-hands", "0", COUNT),
    ("bench_parsers", "--repeat", "-1", "-1 is out of range: give 1 or more"),
    ("bench_pcs", "speed --repeats", "0", COUNT),
    ("bench_pcs", "speed --threads", "0", COUNT),
    ("bench_pcs", "train --cpu-minutes", "0", DURATION),
    ("bench_pcs", "train --seed", "-1", SEED),
    ("bench_pcs", "train --threads", "0", COUNT),
    ("bench_pcs", "lbr --hands", "0", COUNT),
    ("bench_pcs", "lbr --seed", "-1", SEED),
    ("bench_pcs", "lbr --minutes", "-1", "-1 is out of range: give 0 or more"),
    ("bench_potentials", "--flops", "0", COUNT),
    ("bench_potentials", "--turns", "0", COUNT),
    ("bench_potentials", "--seed", "-1", SEED),
    ("bench_resolve", "--hands", "0", COUNT),
    ("bench_resolve", "--seed", "-1", SEED),
    ("bench_retention", "--decisions", "3", "3 is out of range: give 4 or more"),
    ("bench_retention", "--hands", "0", COUNT),
    ("bench_retention", "--pairs", "0", COUNT),
    ("bench_retrieval", "--cases", "19", "19 is out of range: give 20 or more"),  # the top-20 searches
    ("bench_retrieval", "--queries", "0", COUNT),
    ("bench_retrieval", "--brute-queries", "0", COUNT),
    ("bench_retrieval", "--batch", "0", COUNT),
    ("bench_retrieval", "--top", "0", COUNT),
    ("bench_retrieval_engines", "--sizes", "1000,19", "19 is out of range: give 20 or more"),
    ("bench_retrieval_engines", "--queries", "0", COUNT),
    ("bench_retrieval_engines", "--seed", "-1", SEED),
    ("bench_retrieval_scale", "--sizes", ",", "',' names no number"),
    ("bench_retrieval_scale", "--queries", "0", COUNT),
    ("bench_retrieval_scale", "--brute-queries", "-1", "-1 is out of range: give 0 or more"),
    ("bench_retrieval_scale", "--top", "0", COUNT),
    ("bench_rule_triples", "--spots", "0", COUNT),
    ("bench_scale_build", "--hands", "0", COUNT),
    ("bench_serve", "--seconds", "0", DURATION),
    ("bench_serve", "--clients", "1,-1", "-1 is out of range: give 1 or more"),
    ("bench_serve", "--situations", "-1", "-1 is out of range: give 1 or more"),
    ("bench_serve", "--process-samples", "0", COUNT),
    ("bench_serve", "--threads", "0", COUNT),
    ("bench_serve", "--workers", "0", COUNT),
    ("bench_serve", "--seed", "-1", SEED),
    ("bench_simbot", "--hands", "-1", "-1 is out of range: give 1 or more"),
    ("bench_simbot", "--trials", "0", COUNT),
    ("bench_simbot", "--seed", "-1", SEED),
    ("bench_startup", "--runs", "0", COUNT),
    ("bench_state", "--hands", "-1", "-1 is out of range: give 1 or more"),
    ("bench_state", "--players", str(MAX_SEATS + 1), f"{MAX_SEATS + 1} is out of range: give 2 to {MAX_SEATS}"),
    ("bench_store", "--cases", "0", COUNT),
    ("bench_store", "--appends", "-1", "-1 is out of range: give 1 or more"),
    ("bench_teacher", "--decisions", "0", COUNT),
    ("bench_teacher", "--boards", "-1", "-1 is out of range: give 1 or more"),
    ("bench_triples", "--spots", "-1", "-1 is out of range: give 1 or more"),
    ("golden_decisions", "--pairings", "0", COUNT),
    ("load_serve", "--clients", "0", COUNT),
    ("load_serve", "--requests", "0", COUNT),
    ("load_serve", "--threads", "0", COUNT),
    ("load_serve", "--seed", "-1", SEED),
    ("load_serve", "--max-growth-mb", "0", DURATION),
    ("make_preflop_table", "--opponents", "0", COUNT),
    ("make_preflop_table", "--trials", "-1", "-1 is out of range: give 1 or more"),
    ("make_preflop_table", "--seed", "-1", SEED),
]
#: Other values refused the same way: above a top, not a number, a file whose folder is missing.
MORE = [
    ("bench_match", ["--hands", "abc"], "argument --hands: 'abc' is not a number"),
    ("bench_simbot", ["--trials", "100001"], "argument --trials: 100001 is out of range: give 1 to 100000"),
    ("bench_state", ["--players", "2", "1"], "argument --players: 1 is out of range: give 2 or more"),
    ("golden_decisions", ["check", "--pairings", "1000"], "argument --pairings: 1000 is out of range: give 1 to"),
    ("make_preflop_table", ["--opponents", "23"], "argument --opponents: 23 is out of range: give 1 to 22"),
    ("bench_cfr", ["--budget", "nan"], "argument --budget: nan is out of range: give more than 0"),
    ("bench_resolve", ["--json", "no/such/folder/r.json"], "argument --json: no/such/folder/r.json: its folder "
                                                           "does not exist"),
    ("bench_scale_build", ["--json", "."], "argument --json: . is a folder; give a file name"),
    ("bench_startup", ["--baseline", "."], "argument --baseline: . has no built C extension"),
    ("bench_condense", ["--method", "nosuch"], "argument --method: invalid choice: 'nosuch'"),
    ("bench_triples", ["--reuse", "nosuch"], "argument --reuse: invalid choice: 'nosuch'"),
    # not numbers, but checked where they were read after minutes of work (or in a traceback)
    ("bench_condense", ["--base", "nosuch"], "argument --base: no case base 'nosuch'"),
    ("make_preflop_table", ["--classes", "AA", "XYZ"], "argument --classes: unknown pre-flop class 'XYZ'"),
    # a case base or an abstraction that is not there: a traceback, bench_cfr's after its first part
    ("bench_condensed", ["nosuch", "default"], "argument full: no case base 'nosuch'"),
    ("bench_condensed", ["default", "nosuch"], "argument condensed: no case base 'nosuch'"),
    ("bench_cfr", ["--abstraction", "nosuch"], "argument --abstraction: nosuch: no such folder"),
    ("bench_cfr", ["--abstraction", "."], "argument --abstraction: abstraction.json: no abstraction here"),
    # taken and then dropped, rounded or written into
    ("bench_serve", ["--clients", "1,,2"], "argument --clients: entry 2 of '1,,2' is empty"),
    ("bench_retrieval_scale", ["--sizes", "1000,"], "argument --sizes: entry 2 of '1000,' is empty"),
    ("bench_retention", ["--decisions", "6"], "argument --decisions: 6 is not a multiple of 4: part 1 commits whole "
                                              "hands of 4 decisions, one a street (give 4 or 8)"),
    ("bench_scale_build", ["--logs", "nosuch"], "argument --logs: nosuch: no such folder"),
    # contradictory options: --skip-match --only-match ran the match part, --classes --write wrote nothing
    ("bench_retention", ["--skip-match", "--only-match"], "argument --only-match: not allowed with argument "
                                                          "--skip-match"),
    ("bench_retention", ["--floor", "--bounds"], "argument --bounds: not allowed with argument --floor"),
    ("bench_retention", ["--only-match", "--breakdown"], "argument --breakdown: not allowed with argument --only-match"),
    ("make_preflop_table", ["--classes", "AA", "--write"], "argument --write: not allowed with argument --classes"),
    ("bench_scale_build", ["--logs", str(REPO / "README.md")], f"argument --logs: {REPO / 'README.md'} is not a folder"),
    ("bench_scale_build", ["--logs", str(REPO / "docs")], f"argument --logs: {REPO / 'docs'} holds no self-play logs"),
]


def command(name: str, option: str, value: str) -> tuple[list[str], str]:
    """The arguments of a run with ``option value``, and the program name argparse says."""
    *sub, flag = option.split()
    return [*BEFORE.get(name, []), *sub, flag, value], " ".join([f"{name}.py", *sub])


def refused(name: str, args: list[str], prog: str, said: str, folder: Path) -> None:
    p = subprocess.run([sys.executable, str(REPO / "bench" / f"{name}.py"), *args], cwd=folder,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == "", (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert lines[0].startswith(f"usage: {prog} "), lines
    assert lines[-1].startswith(f"{prog}: error: {said}"), lines[-1]
    assert list(folder.iterdir()) == []  # nothing written where it ran


@pytest.mark.parametrize("name, option, value, said", BAD, ids=[f"{n} {o} {v}" for n, o, v, _ in BAD])
def test_a_bad_number_is_one_usage_error_before_any_work(name: str, option: str, value: str, said: str,
                                                         tmp_path: Path) -> None:
    require_native()  # with the extensions: the script would start its work if the value passed
    args, prog = command(name, option, value)
    refused(name, args, prog, f"argument {option.split()[-1]}: {said}", tmp_path)


@pytest.mark.parametrize("name, args, said", MORE, ids=[f"{n} {' '.join(a[-2:])}" for n, a, _ in MORE])
def test_other_bad_values_are_usage_errors(name: str, args: list[str], said: str, tmp_path: Path) -> None:
    require_native()
    refused(name, args, f"{name}.py", said, tmp_path)


#: An option with a type, and the rest of its line.
TYPED = re.compile(r"""(\w+)\.add_argument\("(--[a-z-]+)"([^\n]*)""")
#: Options whose type reads no number: files, folders and names (in :data:`MORE`, but --logs: any folder;
#: bench_pcs.py train --out in tests/test_folder_options.py).
NOT_NUMBERS = ("--json", "--baseline", "--logs", "--base", "--classes", "--abstraction", "--out")
#: Types of options naming bots (tests/test_bench_scripts.py checks them).
BOT_TYPES = ("type=policy_specs(", "type=match_bots")


def test_every_numeric_option_is_checked() -> None:
    """Every option of bench/ given a ``type=`` (but bots, and a choice among numbers) is in
    :data:`BAD`: a new ``type=int`` option needs its row, and the row's test fails until the
    option's type refuses a bad value."""
    found = set()
    for path in sorted((REPO / "bench").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        subs = dict(re.findall(r"""(\w+) = sub\.add_parser\("(\w+)"[,)]""", text))
        for owner, option, rest in TYPED.findall(text):
            if "type=" not in rest or rest.lstrip(", ").startswith(BOT_TYPES) or "choices=" in rest:
                continue
            if option in NOT_NUMBERS:
                continue
            found.add((path.stem, f"{subs[owner]} {option}" if owner in subs else option))
    assert found == {(name, option) for name, option, _, _ in BAD}


def test_a_folder_that_is_no_case_base_is_one_error_line(tmp_path: Path) -> None:
    """``bench_condensed.py`` of a folder that exists but holds no case base: the library's
    ``CaseBaseError`` when it is opened, one ``error:`` line and exit 1 (``native_guard.run``), not
    its traceback."""
    require_native()
    (tmp_path / "empty").mkdir()
    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_condensed.py"), "default", "empty"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == ["error: empty is not a case base: manifest.json is missing"], p.stderr
    assert p.stdout == ""


@pytest.fixture(scope="module")
def condensed_pair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``c`` (``cbr casebase condense default``, a 2% sample) and ``copy`` (a
    copy of the default case base: as built, not condensed)."""
    require_native()
    from cbr.play.retention import copy_casebase
    from cbr.query.maintenance import condense
    from cbr.store import resolve_casebase

    folder = tmp_path_factory.mktemp("condensed")
    condense(resolve_casebase("default"), folder / "c", method="sample", keep=0.02, seed=0)
    copy_casebase("default", folder / "copy")
    return folder


def _condensed(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "bench" / "bench_condensed.py"), *args, "--queries", "5",
                           "--repeat", "1"], cwd=folder, capture_output=True, text=True, timeout=300)


@pytest.mark.time_limit(300)
def test_bench_condensed_refuses_a_pair_that_is_not_full_and_condensed(condensed_pair: Path) -> None:
    """``bench_condensed.py default p3 --queries 5`` (p3 built from a log) ran and printed ratios
    of two unrelated bases. The second base's manifest must say it was condensed from the first
    (``extra.condensed_from.path``, as ``cbr casebase condense`` records it), else one ``error:``
    line, exit 1, nothing on stdout."""
    p = _condensed(condensed_pair, "default", "copy")  # a base as built: never condensed
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        "error: copy was not condensed from a case base (its manifest has no condensed_from; built by cbr build): "
        "give one `cbr casebase condense default` wrote"], p.stderr
    assert p.stdout == ""
    p = _condensed(condensed_pair, "copy", "c")  # condensed, but from another base (the default, not its copy)
    assert p.returncode == 1, (p.stdout, p.stderr)
    full = (condensed_pair / "copy").resolve()
    assert p.stderr.strip().splitlines() == [
        f"error: c was condensed from {resolve_default()}, not from copy ({full})"], p.stderr
    assert p.stdout == ""
    p = _condensed(condensed_pair, "default", "c")  # the pair it is for: the table
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["street", "full", "cases", "condensed", "full", "us", "cond", "us", "ratio"]
    assert [line.split()[0] for line in lines[1:6]] == ["preflop", "flop", "turn", "river", "all"]


def resolve_default() -> Path:
    from cbr.store import resolve_casebase

    return resolve_casebase("default").resolve()
