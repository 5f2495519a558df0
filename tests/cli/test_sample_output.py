"""Sample outputs users are shown, checked against what the command prints now (issue 16,
defect 10: README's sample of ``cbr query --matchstate ... --explain --top 3`` had drifted from
the command's output).

Two sources of samples, both compared line by line with the real ``cbr`` process's stdout at a
fixed width (trailing blanks ignored, as a Markdown block cannot keep them):

- the samples stored here (:data:`SAMPLES`): what README and docs show, kept true by this test;
- README's and ``docs/``'s marked blocks: a fenced block whose info string is ``output``
  (``output COLUMNS=100`` for another width than 80) shows what the last ``cbr`` command of the
  ``bash`` block right above it prints on stdout (:func:`sample_blocks`). A command of a marked
  sample must run on its own (it runs in an empty working directory).
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

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
TIMEOUT = 120  # seconds; a query takes about one


@dataclass(frozen=True)
class Sample:
    """A command (``argv`` after ``cbr``), the width it is shown at and what it prints on stdout."""

    where: str
    argv: tuple[str, ...]
    expected: str
    columns: int = 80


QUERY_EXPLAIN = Sample("the query explanation shown in README", (
    "query", "--matchstate", "MATCHSTATE:1:7:crc/r:|AdQc/3h4cJh", "--explain", "--top", "3"), """\
fold 0.114   check/call 0.481   bet/raise 0.406   (flop, case base default)
572 case(s) with similarity >= 0.97, mean similarity 0.9806
top 3 cases (id: case_id in the SQL tables)
┏━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━┳━━━━━━━━┳━━━━━━━━━┳━━━━━━━━┓
┃    id ┃ similarity ┃ action ┃ hole ┃ board  ┃ betting ┃ player ┃
┡━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━╇━━━━━━━━╇━━━━━━━━━╇━━━━━━━━┩
│ 68665 │      0.998 │ f      │ KhJc │ 8s9s9c │ rc/r    │ simbot │
│ 63276 │     0.9978 │ f      │ JhAd │ Ts3s7h │ rc/r    │ simbot │
│ 43671 │     0.9973 │ r      │ AhQs │ 5h8s3c │ rc/r    │ lag    │
└───────┴────────────┴────────┴──────┴────────┴─────────┴────────┘
┏━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━┓
┃    id ┃ source#hand           ┃
┡━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━┩
│ 68665 │ hu-simbot-lag.log#417 │
│ 63276 │ hu-simbot-hs.log#551  │
│ 43671 │ hu-poki-lag.log#178   │
└───────┴───────────────────────┘
per-feature similarity: each case's value ~ local similarity
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ feature             ┃ weight ┃  query ┃ #68665        ┃ #63276        ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ players_dealt       │     20 │      2 │ 2 ~1          │ 2 ~1          │
│ relative_position   │     30 │      1 │ 1 ~1          │ 1 ~1          │
│ players_in_hand     │     30 │      2 │ 2 ~1          │ 2 ~1          │
│ players_to_act      │     30 │      0 │ 0 ~1          │ 0 ~1          │
│ bets_committed      │     40 │      0 │ 0 ~1          │ 0 ~1          │
│ bets_to_call        │     60 │      1 │ 1 ~1          │ 1 ~1          │
│ pot_odds            │     50 │ 0.1667 │ 0.1667 ~1     │ 0.1667 ~1     │
│ hand_strength       │    100 │ 0.5851 │ 0.5851 ~1     │ 0.574 ~0.989  │
│ positive_potential  │     80 │ 0.2083 │ 0.2029 ~0.995 │ 0.2071 ~0.999 │
│ negative_potential  │     80 │ 0.2737 │ 0.2831 ~0.991 │ 0.2744 ~0.999 │
│ small_bets_in_pot   │     30 │      5 │ 5 ~1          │ 5 ~1          │
│ previous_round_bets │     30 │      2 │ 2 ~1          │ 2 ~1          │
└─────────────────────┴────────┴────────┴───────────────┴───────────────┘
┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃ feature             ┃ #43671        ┃
┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ players_dealt       │ 2 ~1          │
│ relative_position   │ 1 ~1          │
│ players_in_hand     │ 2 ~1          │
│ players_to_act      │ 0 ~1          │
│ bets_committed      │ 0 ~1          │
│ bets_to_call        │ 1 ~1          │
│ pot_odds            │ 0.1667 ~1     │
│ hand_strength       │ 0.5851 ~1     │
│ positive_potential  │ 0.2003 ~0.992 │
│ negative_potential  │ 0.2622 ~0.989 │
│ small_bets_in_pot   │ 5 ~1          │
│ previous_round_bets │ 2 ~1          │
└─────────────────────┴───────────────┘
""")

#: The samples stored here.
SAMPLES = [QUERY_EXPLAIN]


def sample_blocks(text: str, where: str = "README.md") -> list[Sample]:
    """The marked sample outputs of a Markdown text (see the module docstring).

    >>> md = "```bash\\ncbr hand AhKd\\ncbr query --hole AdQc\\n```\\n```output COLUMNS=100\\nfold 0.1\\n```\\n"
    >>> [(s.argv, s.columns, s.expected) for s in sample_blocks(md)]
    [(('query', '--hole', 'AdQc'), 100, 'fold 0.1\\n')]
    >>> sample_blocks("```\\ncbr hand AhKd\\n```\\n```output\\nx\\n```\\n")   # no bash block above: not a sample
    []
    """
    found: list[Sample] = []
    lines = text.splitlines()
    last_command: tuple[str, ...] | None = None   # the last cbr command of the bash block just closed
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(.*)$", lines[i])
        if not fence:
            last_command = None if lines[i].strip() else last_command
            i += 1
            continue
        info = fence.group(1).split()
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        block = lines[i + 1:end]
        if info[:1] == ["output"] and last_command is not None:
            width = next((int(w.split("=", 1)[1]) for w in info[1:] if re.fullmatch(r"COLUMNS=\d+", w)), 80)
            found.append(Sample(f"{where}:{i + 1}", last_command, "".join(f"{line}\n" for line in block), width))
            last_command = None
        elif info[:1] in (["bash"], ["sh"], ["shell"]):
            commands = [shlex.split(line, comments=True) for line in block if line.strip()]
            commands = [c for c in commands if c and c[0] in ("cbr", ".venv/bin/cbr")]
            last_command = tuple(commands[-1][1:]) if commands else None
        else:
            last_command = None
        i = end + 1
    return found


def marked_samples() -> list[Sample]:
    return [s for path in DOCS if path.is_file()
            for s in sample_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))]


def printed(sample: Sample, cwd: Path) -> str:
    """What ``cbr`` prints on stdout for the sample, at its width, through a real process."""
    script = Path(sys.executable).parent / "cbr"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "cli"]
    env = dict(os.environ, COLUMNS=str(sample.columns), NO_COLOR="1", TERM="dumb",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([*command, *sample.argv], cwd=cwd, env=env, text=True, capture_output=True,
                         timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").splitlines()]


@pytest.mark.parametrize("sample", [pytest.param(s, id=s.where) for s in [*SAMPLES, *marked_samples()]])
def test_sample_output_is_what_the_command_prints(sample: Sample, tmp_path: Path) -> None:
    assert _lines(printed(sample, tmp_path)) == _lines(sample.expected)


def test_marked_blocks_are_found_and_unmarked_ones_are_not() -> None:
    md = "\n".join([
        "```bash", "cbr hand AhKd", "cbr query --hole AdQc --board 3h4cJh", "```", "",
        "```output", "fold 0.1", "```",                      # a sample of the query, at 80 columns
        "```bash", "cbr hand AhKd", "```", "Some prose.",
        "```output", "not a sample", "```",                  # prose between: not a sample
        "```", "plain block", "```",
        "```bash", "cbr plugins list", "```",
        "```output COLUMNS=120", "group  name", "```",
    ])
    found = sample_blocks(md, "x.md")
    assert [(s.where, s.argv, s.columns, s.expected) for s in found] == [
        ("x.md:6", ("query", "--hole", "AdQc", "--board", "3h4cJh"), 80, "fold 0.1\n"),
        ("x.md:22", ("plugins", "list"), 120, "group  name\n"),
    ]
