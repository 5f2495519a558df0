"""The benchmarks' options naming bots are checked when the arguments are parsed, as the
experiment scripts' are (``experiments.common.policy_specs``): a bot that does not exist is a
usage error (argparse's usage, then one ``error:`` line, exit 2), not a traceback when the bot is
first built; and a ``--help`` made of paragraphs keeps them."""
from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from tests.conftest import require_native

REPO = Path(__file__).resolve().parents[1]

#: (script, arguments with an unknown bot, what the error line says after "error: ").
UNKNOWN_BOT = [
    ("bench_adaptive", ["--opponents", "call,nosuchbot"], "argument --opponents: unknown policy 'nosuchbot'"),
    ("bench_exploit", ["--bots", "nosuchbot"], "argument --bots: unknown policy 'nosuchbot'"),
    ("bench_rule_triples", ["--bots", "ehs,nosuchbot"], "argument --bots: unknown policy 'nosuchbot'"),
    ("bench_rule_triples", ["--bots", "ehs,call"], "argument --bots: 'call' is not a rule bot"),
    ("acpc_reference_interop", ["--dealer", sys.executable, "--policies", "nosuchbot,call"],
     "argument --policies: unknown policy 'nosuchbot'"),
    ("bench_retention", ["--bots", "cbr,nosuchbot"], "argument --bots: 1 unknown bot: nosuchbot; use cbr, casper"),
    ("bench_retention", ["--bots", "nob1,cbr,nob2"], "argument --bots: 2 unknown bots: nob1, nob2; use cbr, casper"),
]
#: A count of hands out of range is a usage error too, not the game's traceback.
BAD_HANDS = [
    ("bench_adaptive", ["--hands", "0"], "argument --hands: 0 is out of range: give 1 or more"),
    ("bench_exploit", ["--bots", "call", "--hands", "-3"], "argument --hands: -3 is out of range: give 2 or more"),
    ("bench_retention", ["--only-match", "--hands", "0"], "argument --hands: 0 is out of range: give 1 or more"),
]


@pytest.mark.parametrize("name, args, said", BAD_HANDS, ids=[f"{n} {' '.join(a)}" for n, a, _ in BAD_HANDS])
def test_hands_out_of_range_is_one_usage_error(name: str, args: list[str], said: str, tmp_path: Path) -> None:
    require_native()
    p = subprocess.run([sys.executable, str(REPO / "bench" / f"{name}.py"), *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines()[-1] == f"{name}.py: error: {said}"


@pytest.mark.parametrize("name, args, said", UNKNOWN_BOT, ids=[f"{n} {' '.join(a[-2:])}" for n, a, _ in UNKNOWN_BOT])
def test_an_unknown_bot_is_one_usage_error(name: str, args: list[str], said: str, tmp_path: Path) -> None:
    require_native()
    p = subprocess.run([sys.executable, str(REPO / "bench" / f"{name}.py"), *args], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert lines[0].startswith(f"usage: {name}.py "), lines
    assert lines[-1].startswith(f"{name}.py: error: {said}"), lines[-1]
    if "unknown policy" in said:
        assert "known policies: adapt, call, cbr," in lines[-1], lines[-1]
    assert p.stdout == ""
    assert list(tmp_path.iterdir()) == []


#: An option and the rest of its line (as tests/test_experiment_scripts.py finds the experiments').
OPTION = re.compile(r"""add_argument\("(--[a-z-]+)"([^\n]*)""")
BOT_OPTIONS = {"--bot", "--bots", "--opponent", "--opponents", "--experts", "--fixed", "--policy", "--policies"}
#: Types of a count (tests/test_bench_options.py checks those options).
COUNT_TYPES = ("type=int", "type=positive_int", "type=number(")


def test_every_option_naming_bots_is_checked() -> None:
    """Every option of ``bench/`` naming bots is in :data:`UNKNOWN_BOT` (``--opponents`` of
    make_preflop_table is a count of opponents, not bots)."""
    found = sorted((path.stem, m.group(1)) for path in (REPO / "bench").glob("*.py")
                   for m in OPTION.finditer(path.read_text(encoding="utf-8"))
                   if m.group(1) in BOT_OPTIONS and not m.group(2).lstrip(", ").startswith(COUNT_TYPES))
    assert found == sorted({(name, args[-2]) for name, args, _ in UNKNOWN_BOT})


def test_bench_state_help_keeps_its_paragraphs() -> None:
    """``bench_state.py --help`` ran its docstring's paragraphs and numbered list into one block
    (argparse reflows a description): the list items start their own lines now."""
    p = subprocess.run([sys.executable, str(REPO / "bench" / "bench_state.py"), "--help"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    for start in ("Run:  python3 bench/bench_state.py", "1. Random legal play", "2. Replay of the ACPC limit",
                  "Prints figures and the ratio"):
        assert any(line.startswith(start) for line in lines), (start, p.stdout)


def test_scripts_count_with_the_one_plural_rule() -> None:
    """The scripts wrote counts as ``hand(s)``, ``3 thread(s)``, ``unknown bot(s)``, or with rules of
    their own (``cell{'s' * (n > 1)}``); they count with ``cbr.errors.counted`` (``1 thread``,
    ``2 threads``), the rule of the library and the commands: no text a bench or experiment script
    writes (its string literals, f-strings included; not its comments) has a word ending in ``(s)``
    or an f-string's own plural ending."""
    found = []
    for path in sorted([*(REPO / "bench").rglob("*.py"), *(REPO / "experiments").rglob("*.py")]):
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
        for tok in tokens:
            text = tok.string
            while tok.type == tokenize.STRING and re.search(r"\{[^{}]*\}", text):  # an f-string's code is no text
                text = re.sub(r"\{[^{}]*\}", "", text)
            if tok.type == tokenize.STRING and re.search(r"[A-Za-z]\(s\)", text):
                found.append(f"{path.relative_to(REPO)}:{tok.start[0]}: {tok.string[:80]}")
            elif tok.type == tokenize.STRING and re.search(r"\{['\"]e?s['\"] (\*|if )", tok.string):  # a rule of its own
                found.append(f"{path.relative_to(REPO)}:{tok.start[0]}: {tok.string[:80]}")
    assert found == [], "\n".join(found)
