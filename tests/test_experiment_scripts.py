"""What a first-time user meets in every experiment script before it runs anything: a
``--help`` whose description is a whole sentence and whose options all say what they are,
and a bad value refused as a usage error (one ``error:`` line, exit 2) before any work starts
or any file or folder is made (docs/experiments.md)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PARSE_AND_STOP, require_module, require_native

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in REPO.glob("experiments/*.py") if p.name != "common.py")

#: Runs a script up to its ``parse_args`` and prints its parser's description and options' help.
PARSER = """
import argparse, json, runpy, sys
def shown(self, args=None, namespace=None):
    print(json.dumps({"description": self.description,
                      "options": {(a.option_strings or [a.dest])[0]: a.help for a in self._actions}}))
    raise SystemExit(0)
""" + PARSE_AND_STOP


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_every_script_is_checked() -> None:
    assert len(SCRIPTS) >= 29, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_help_is_whole_sentences_and_every_option_says_what_it_is(script: Path, tmp_path: Path) -> None:
    p = run(["-c", PARSER, str(script)], tmp_path)
    assert p.returncode == 0, p.stderr
    parser = json.loads(p.stdout.strip().splitlines()[-1])
    text = parser["description"]
    assert text and text[0].isupper() and text.endswith((".", "?")), text  # a question is a whole sentence too
    assert "``" not in text, text
    assert "\n" not in text, text
    unexplained = [option for option, help in parser["options"].items() if not help]
    assert unexplained == []


#: (script, arguments with a bad value): every ``--hands 0`` here once ran, or failed with a traceback.
BAD = [*((name, ["--hands", "0"]) for name in (
    "ehs_strength", "counter_strategies", "tune_ehs", "teacher", "exploit_table", "exploit_validation",
    "learned_weights", "predictor_in_play", "cfr_aggression", "adaptation_matrix", "adaptive", "bot_table",
    "cfr_vs_bots", "retention", "phase3", "condense", "opponent_aware", "reuse_policies", "casper_table")),
    ("exploit_abstract", ["--iterations", "abc"]), ("exploit_abstract", ["--iterations", "10,-1"]),
    ("exploit_table", ["--budget", "0"]), ("bot_table", ["--lbr-budget", "-1"]), ("ochs_river", ["--lbr-minutes", "nan"]),
    ("resolve_river", ["--part", "lbr", "--minutes", "0"]), ("cfr_curve", ["run", "--workers", "0"]),
    ("teacher", ["--seed", "-1"]), ("cfr_table2", ["--pairs", "0"])]


@pytest.mark.parametrize("name, bad", BAD, ids=[f"{n} {' '.join(b)}" for n, b in BAD])
def test_a_bad_value_is_one_usage_error_before_anything_is_made(name: str, bad: list[str], tmp_path: Path) -> None:
    """``--hands 0`` gave tracebacks, an empty ``--out`` folder (bot_table, exploit_table, teacher),
    a trained predictor file (predictor_in_play) or 1,000 hands (cfr_vs_bots)."""
    work = tmp_path / "work"
    work.mkdir()
    script = REPO / "experiments" / f"{name}.py"
    assert script.is_file()
    p = run([str(script), *bad, "--out", str(work / "out")], work)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert "error: argument " in last and ("out of range" in last or "not a number" in last), last
    assert p.stdout == ""
    assert list(work.iterdir()) == []


#: (script, contradictory options, what argparse says): each pair ran, one of the two ignored.
CONTRADICTIONS = [
    ("cfr_table2", ["--no-match", "--limit-hands", "4"], "argument --limit-hands: not allowed with argument --no-match"),
    ("casper_table", ["--no-table", "--table-cap", "100"], "argument --table-cap: not allowed with argument --no-table"),
]


@pytest.mark.parametrize("name, args, said", CONTRADICTIONS, ids=[n for n, _, _ in CONTRADICTIONS])
def test_contradictory_options_are_one_usage_error_naming_both(name: str, args: list[str], said: str,
                                                               tmp_path: Path) -> None:
    """``cfr_table2.py --no-match --limit-hands 4`` skipped the match its hands were for, and
    ``casper_table.py --no-table --table-cap 100`` the table: one is a usage error, exit 2, naming
    both options, before anything is made (as ``bench_retention.py --skip-match --only-match``,
    ``tests/test_bench_options.py``)."""
    work = tmp_path / "work"
    work.mkdir()
    p = run([str(REPO / "experiments" / f"{name}.py"), *args, "--out", str(work / "out")], work)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines()[-1] == f"{name}.py: error: {said}", p.stderr
    assert p.stdout == "" and list(work.iterdir()) == []


def test_ochs_river_without_its_runs_says_what_to_train_first(tmp_path: Path) -> None:
    p = run([str(REPO / "experiments" / "ochs_river.py"), "--ochs", str(tmp_path / "ochs"), "--hs",
             str(tmp_path / "hs"), "--out", str(tmp_path / "out.json")], tmp_path)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {tmp_path / 'ochs'} holds no trained strategy (--ochs)"), lines
    assert "python -m casebases.build_cfr_ochs --iterations 8000000 --threads 1" in lines[0]
    assert sorted(tmp_path.iterdir()) == []



#: (script, arguments of a run that fails at run time at once, what its last line names): logs
#: that are not there, a CFR run folder without snapshots (a bot that does not exist is a usage
#: error now, before any work: :data:`UNKNOWN_BOT`).
FAILS = [("predictor_in_play", ["--logs", "missing.log"], "missing.log"),
         ("cfr_curve", ["run"], "no snapshots to measure")]


@pytest.mark.parametrize("name, args, said", FAILS, ids=[n for n, _, _ in FAILS])
def test_a_run_that_fails_leaves_no_out_folder(name: str, args: list[str], said: str, tmp_path: Path) -> None:
    """These scripts made their ``--out`` folder (or the folder of their ``--out`` file) before any
    work; a run that failed left it there, empty. The folder of a file must exist now (checked with
    the arguments: tests/test_experiment_out.py), and a folder is made when the first result is
    written: a run that fails writes nothing."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "abstraction.npz").touch()   # cfr_curve's run folder: no snapshots in it
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / ("predictor_in_play.json" if name == "predictor_in_play" else "results")
    p = run([str(REPO / "experiments" / f"{name}.py"), *args, "--out", str(out)], tmp_path)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert said in p.stderr.strip().splitlines()[-1], p.stderr
    assert list((tmp_path / "out").iterdir()) == []


#: (script, an option naming bots given one that does not exist): every option of every script
#: that takes policy specs (:func:`test_every_option_naming_bots_is_checked` finds them).
UNKNOWN_BOT = [("adaptation_matrix", ["--experts", "nosuchbot"]), ("adaptation_matrix", ["--opponents", "ehs,nosuchbot"]),
               ("adaptive", ["--opponents", "call>nosuchbot"]), ("adaptive", ["--fixed", "nosuchbot"]),
               ("adaptive", ["--bot", "nosuchbot"]), ("bot_table", ["--bots", "ehs,nosuchbot"]),
               ("bot_table", ["--opponents", "nosuchbot"]), ("casper_table", ["--bot", "nosuchbot"]),
               ("casper_table", ["--opponents", "nosuchbot"]), ("cfr_aggression", ["--bots", "nosuchbot"]),
               ("cfr_aggression", ["--self-bots", "nosuchbot"]), ("cfr_vs_bots", ["--bot", "nosuchbot"]),
               ("cfr_vs_bots", ["--opponents", "nosuchbot"]), ("exploit_table", ["--bots", "nosuchbot"]),
               ("predictor_in_play", ["--opponents", "nosuchbot"]), ("raise_frontier", ["--extra", "nosuchbot"]),
               ("resolve_river", ["--part", "lbr", "--bot", "nosuchbot"]), ("retention", ["--opponent", "nosuchbot"]),
               ("retention", ["--bot", "nosuchbot"]), ("reuse_policies", ["--bot", "nosuchbot"]),
               ("reuse_policies", ["--also", "nosuchbot"]), ("teacher", ["--opponents", "nosuchbot"])]


@pytest.mark.parametrize("name, args", UNKNOWN_BOT, ids=[f"{n} {a[-2]}" for n, a in UNKNOWN_BOT])
def test_an_unknown_bot_is_one_usage_error_before_anything_is_made(name: str, args: list[str], tmp_path: Path) -> None:
    """``--bot nosuchbot`` ended in a traceback (``UnknownPolicyError``) when the bot was first
    built: after the other matches of the run (adaptive.py, in a worker), or with an exit 1 and
    the spec's error as the last of many lines. Now it is a usage error naming the unknown bot
    and the known ones, exit 2, before any work (the script's ``--out`` never made)."""
    work = tmp_path / "work"
    work.mkdir()
    p = run([str(REPO / "experiments" / f"{name}.py"), *args, "--out", str(work / "out")], work)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{name}.py: error: "), last
    assert "nosuchbot" in last and all(known in last for known in ("call", "ehs", "raise")), last
    if name == "casper_table" and args[-2] == "--opponents":  # the table's columns, named as such
        assert "error: argument --opponents: unknown opponent 'nosuchbot'; choose from poki, ehs," in last, last
    else:
        assert f"error: argument {args[-2]}: unknown policy 'nosuchbot'; known policies: adapt, call, cbr," in last
    assert p.stdout == ""
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("name, args, said", [
    ("bot_table", ["--bots", "call,,raise"], "argument --bots: entry 2 of 'call,,raise' is empty"),
    ("cfr_vs_bots", ["--opponents", "call, ,ehs"], "argument --opponents: entry 2 of 'call, ,ehs' is empty"),
])
def test_an_empty_entry_of_a_bot_list_is_a_usage_error(name: str, args: list[str], said: str, tmp_path: Path) -> None:
    """``--bots call,,raise`` dropped the empty entry and ran the whole table. Now: argparse's
    usage, then the error, exit 2, nothing made (unknown parts: tests/test_experiment_parts.py)."""
    work = tmp_path / "work"
    work.mkdir()
    p = run([str(REPO / "experiments" / f"{name}.py"), *args, "--out", str(work / "out")], work)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert lines[0].startswith("usage: ") and "Traceback" not in p.stderr, p.stderr
    assert lines[-1].startswith(f"{name}.py: error: ") and said in lines[-1], lines[-1]
    assert list(work.iterdir()) == []


#: An option and the rest of its line; it names bots by its name, or by a help saying it takes specs.
OPTION = re.compile(r"""add_argument\("(--[a-z-]+)"([^\n]*)""")
BOT_OPTIONS = {"--bot", "--bots", "--opponent", "--opponents", "--experts", "--fixed", "--also", "--extra",
               "--self-bots", "--players", "--policy"}


def test_every_option_naming_bots_is_checked() -> None:
    """Every option of ``experiments/`` that takes policy specs is in :data:`UNKNOWN_BOT`."""
    found = sorted((path.stem, m.group(1)) for path in SCRIPTS for m in OPTION.finditer(path.read_text(encoding="utf-8"))
                   if m.group(1) in BOT_OPTIONS or re.search(r"\bspecs?\b", m.group(2)))
    assert found == sorted((name, args[-2]) for name, args in UNKNOWN_BOT)


def test_a_bot_the_script_cannot_play_is_a_usage_error_too(tmp_path: Path) -> None:
    """The check builds the bot as the script will play it: ``retention --bot ehs`` (played over a
    copy of the case base, so it must take one) and ``reuse_policies --bot ehs`` (played with
    each re-use policy) were tracebacks at run time."""
    for name, args, said in (("retention", ["--bot", "ehs"], "argument --bot: policy 'ehs' has no option 'casebase'"),
                             ("reuse_policies", ["--bot", "ehs"], "argument --bot: policy 'ehs' has no option 'reuse'"),
                             ("bot_table", ["--bots", "lag:stab-rate=2"], "argument --bots: policy spec 'lag:stab-rate=2': ")):
        p = run([str(REPO / "experiments" / f"{name}.py"), *args, "--out", str(tmp_path / "out")], tmp_path)
        assert p.returncode == 2, (name, p.stderr)
        assert "Traceback" not in p.stderr
        assert said in p.stderr.strip().splitlines()[-1], p.stderr
        assert list(tmp_path.iterdir()) == []



@pytest.mark.parametrize("bot", [[], ["--bot", "cbr"]], ids=["casper", "bot"])
@pytest.mark.parametrize("base", ["nosuchbase", "notacasebase"])
def test_an_unknown_case_base_is_the_cli_s_one_line_exit_1(tmp_path: Path, base: str, bot: list[str]) -> None:
    """``retention.py --casebase nosuchbase`` was a usage error (argparse's usage and ``error:
    argument --casebase: ...``, exit 2), and with ``--bot`` the line named a spec the user never
    wrote, while ``cbr query -c nosuchbase`` says one ``error:`` line, exit 1 (a bad input, not a
    malformed option). The script now says the CLI's line, exit 1, with nothing made; so it does
    for a folder that is no case base (now opened before any work: the check passed it, and the
    copy for the first match refused it)."""
    work = tmp_path / "work"
    work.mkdir()
    if base == "notacasebase":
        (work / base).mkdir()
    cbr = Path(sys.executable).with_name("cbr")
    said = subprocess.run([str(cbr), "query", "-c", base, "--hole", "AdQc"], cwd=work, capture_output=True, text=True,
                          timeout=120)
    assert said.returncode == 1 and said.stderr.startswith("error: ") and len(said.stderr.splitlines()) == 1, said
    before = sorted(work.iterdir())
    p = run([str(REPO / "experiments" / "retention.py"), "--casebase", base, *bot, "--out", str(work / "out")], work)
    assert (p.returncode, p.stdout, p.stderr) == (1, "", said.stderr)
    assert sorted(work.iterdir()) == before


def test_a_bot_whose_file_is_bad_is_the_cli_s_error_exit_1_not_a_usage_error(tmp_path: Path) -> None:
    """``--bot cbr:casebase=/nonexistent`` was a usage error (argparse's usage and ``error:
    argument --bot: ...``, exit 2) while ``cbr match`` says the same spec is a bad input, exit 1
    (usage errors are malformed options). The script now says the line ``cbr match`` says, exit 1,
    before any work and with nothing made; a malformed option stays a usage error."""
    cbr = Path(sys.executable).with_name("cbr")
    spec = "cbr:casebase=/nonexistent"
    work = tmp_path / "work"
    work.mkdir()
    said = subprocess.run([str(cbr), "match", "-p", f"{spec},call", "--hands", "2"], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert said.returncode == 1 and said.stderr.startswith(f"error: policy spec {spec!r}: option 'casebase': "), \
        said.stderr
    p = run([str(REPO / "experiments" / "cfr_vs_bots.py"), "--bot", spec, "--hands", "2",
             "--out", str(work / "out.json")], work)
    assert (p.returncode, p.stdout, p.stderr) == (1, "", said.stderr)
    assert list(work.iterdir()) == []
    p = run([str(REPO / "experiments" / "cfr_vs_bots.py"), "--bot", "cbr:nosuchopt=1", "--hands", "2",
             "--out", str(work / "out.json")], work)
    assert p.returncode == 2 and "error: argument --bot: policy 'cbr' has no option 'nosuchopt'" in p.stderr, p.stderr
    assert list(work.iterdir()) == []

def test_a_switching_opponent_of_three_bots_is_one_usage_error(tmp_path: Path) -> None:
    """``adaptive.py --opponents "call>raise>ehs"`` passed the check (each side a bot) and crashed in
    a worker, ``ValueError: too many values to unpack``: a switching opponent is two bots."""
    work = tmp_path / "work"
    work.mkdir()
    p = run([str(REPO / "experiments" / "adaptive.py"), "--opponents", "call>raise>ehs", "--hands", "2",
             "--out", str(work / "out")], work)
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == (
        "adaptive.py: error: argument --opponents: 'call>raise>ehs' switches more than once: a switching "
        "opponent is two bots, a>b")
    assert list(work.iterdir()) == []

@pytest.mark.parametrize("name", ["common", "bot_table", "adaptive"])
def test_the_examples_of_the_scripts_modules_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The docstring examples of the argument types (``policy_spec``, ``policy_specs``, ...) and of
    bot_table's chart, adaptive's switching opponent (tests/test_doctests.py walks the packages, not experiments/)."""
    import doctest
    import importlib

    require_native()
    monkeypatch.chdir(REPO)
    monkeypatch.syspath_prepend(str(REPO / "experiments"))  # the scripts import common as a script does
    fresh = {n for n in ("common", name) if n not in sys.modules}
    try:
        module = importlib.import_module(name)
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    finally:
        for n in fresh:  # no module named common left behind for another test's own
            sys.modules.pop(n, None)
    assert result.attempted > 0 and result.failed == 0, result


def test_every_message_a_script_exits_with_starts_with_error() -> None:
    """The house style of a failure is one line ``error: ...`` and exit 1 (as ``cbr`` says it):
    five scripts and recipes exited with a bare message (``raise SystemExit("no self-play logs
    ...")``). Every ``SystemExit`` with a message in ``experiments/`` and ``casebases/``."""
    exits = re.compile(r"""(?:SystemExit|sys\.exit)\(\s*f?(["'])(.*?)\1""")
    bare = [f"{path.relative_to(REPO)}: {m.group(2)[:60]}"
            for path in sorted([*REPO.glob("experiments/*.py"), *REPO.glob("casebases/*.py")])
            for m in exits.finditer(path.read_text(encoding="utf-8")) if not m.group(2).startswith("error: ")]
    assert bare == []


def test_a_report_of_other_runs_is_one_error_line(tmp_path: Path) -> None:
    """``adaptive.py --fixed-from`` a report of another seed: one ``error:`` line, exit 1, before
    any match (it said the file's name and the mismatch, without ``error:``)."""
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"seed": 1, "hands": 10, "fixed": {}}))
    p = run([str(REPO / "experiments" / "adaptive.py"), "--seed", "2", "--hands", "10", "--fixed-from", str(old),
             "--out", str(tmp_path / "out.json")], tmp_path)
    assert (p.returncode, p.stdout) == (1, ""), p.stderr
    assert p.stderr.strip().splitlines() == [f"error: {old}: seed 1, 10 hands; not 2, 10"]
    assert sorted(tmp_path.iterdir()) == [old]


def test_a_short_adaptive_run_says_n_a_for_hands_it_did_not_play(tmp_path: Path) -> None:
    """``adaptive.py --hands 20`` printed ``after 2,000 +0.00`` and a ``2,001+`` column of
    ``+0.00`` for hands that were never dealt; now ``n/a`` there and ``null`` in the JSON, and
    the first 500 (here all 20) measured."""
    require_module("matplotlib")
    out = tmp_path / "a.json"
    p = run([str(REPO / "experiments" / "adaptive.py"), "--hands", "20", "--opponents", "call", "--fixed", "ehs",
             "-j", "1", "--out", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    row = [ln for ln in p.stdout.splitlines() if ln.startswith("call")]
    assert len(row) == 1 and row[0].split()[-1] == "n/a" and row[0].split()[-2] != "n/a", p.stdout
    assert "after 2,000 n/a" in p.stderr, p.stderr
    adapt = json.loads(out.read_text())["adapt"]["call"]
    assert adapt["after_2000"] is None and len(adapt["first_500"]) == 2


def test_bot_table_without_lbr_draws_the_matches_it_measured(tmp_path: Path) -> None:
    """``bot_table --skip lbr`` wrote its JSON, then crashed drawing the chart (``max() arg is an
    empty sequence``: the LBR column was scaled by the bots that had an LBR, and none had). The
    chart shows what was measured: here the matches against ``raise``, one row a bot."""
    require_module("matplotlib")
    out = tmp_path / "out"
    p = run([str(REPO / "experiments" / "bot_table.py"), "--skip", "lbr,time", "--bots", "call,hs",
             "--opponents", "raise", "--hands", "4", "--workers", "1", "--out", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == f"wrote {out / 'bot-table-seed2.png'} (2 bots: against raise)"
    assert sorted(f.name for f in out.iterdir()) == ["bot-table-seed2.json", "bot-table-seed2.png"]
    assert (out / "bot-table-seed2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = json.loads((out / "bot-table-seed2.json").read_text())["rows"]
    assert {b: sorted(r) for b, r in rows.items()} == {"call": ["raise"], "hs": ["raise"]}
    assert [line.split(" | ")[1] for line in p.stdout.splitlines()[2:]] == ["-", "-"]  # no LBR cells


def _strict_json(text: str) -> object:
    """JSON as every reader but Python's takes it: ``Infinity`` and ``NaN`` are errors."""
    def refuse(word: str) -> None:
        raise AssertionError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_bot_table_of_a_match_too_short_for_a_ci_says_n_a_and_writes_null(tmp_path: Path) -> None:
    """A first-time user's report: ``--hands 2`` (one duplicate deal) printed ``+1.250 ± inf`` and
    wrote ``"ci": Infinity``, which no JSON reader takes. A CI that cannot be computed is null in
    the JSON and ``n/a`` in the text, as ``cbr match --json`` (``sb_ci: null``) and the LBR cell say it;
    a results file an earlier run wrote so is read with that CI as null and written whole."""
    require_module("matplotlib")
    out = tmp_path / "out"
    args = [str(REPO / "experiments" / "bot_table.py"), "--bots", "hs", "--opponents", "call", "--hands", "2",
            "--lbr-hands", "2", "--skip", "time", "--workers", "1", "--out", str(out)]
    p = run([*args, "--redo"], tmp_path)
    assert p.returncode == 0, p.stderr
    row = _strict_json((out / "bot-table-seed2.json").read_text())["rows"]["hs"]  # type: ignore[index]
    assert row["call"]["ci"] is None and row["call"]["hands"] == 2 and row["lbr"]["ci"] is None
    assert "inf" not in p.stdout + p.stderr
    assert "hs vs call: +1.250 ± n/a sb/h" in p.stderr.splitlines(), p.stderr
    cells = p.stdout.strip().splitlines()[-1].split(" | ")
    assert cells[2] == f"{row['call']['sb_per_hand']:+.3f} ± n/a", p.stdout

    written = (out / "bot-table-seed2.json").read_text()
    (out / "bot-table-seed2.json").write_text(written.replace('"ci": null', '"ci": Infinity'))
    again = run([*args, "--opponents", "call,raise"], tmp_path)  # keeps the cells, measures `raise`
    assert again.returncode == 0, again.stderr
    rows = _strict_json((out / "bot-table-seed2.json").read_text())["rows"]["hs"]  # type: ignore[index]
    assert rows["call"]["ci"] is None and rows["call"]["sb_per_hand"] == row["call"]["sb_per_hand"]
    assert rows["raise"]["ci"] is None and rows["raise"]["hands"] == 2


def test_write_json_refuses_a_number_json_cannot_hold_and_says_where(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard of the whole class: a script that lets ``inf`` or ``nan`` through gets one error
    naming where it is, and no file, instead of a file no JSON reader takes."""
    monkeypatch.syspath_prepend(str(REPO / "experiments"))
    fresh = "common" not in sys.modules
    try:
        import common

        from cbr.errors import CBRError

        for bad in (float("inf"), float("nan"), -float("inf")):
            with pytest.raises(CBRError) as err:
                common.write_json(tmp_path / "r.json", {"rows": {"hs": {"call": {"ci": 0.1, "deals": [1.0, bad]}}}})
            assert str(err.value) == (f"cannot write {tmp_path / 'r.json'}: rows.hs.call.deals[1] is not a finite "
                                      "number, which JSON cannot hold (a value that could not be measured is null)")
            assert not (tmp_path / "r.json").exists()
        common.write_json(tmp_path / "r.json", {"ci": common.finite(float("inf")), "sb": 0.5})
        assert _strict_json((tmp_path / "r.json").read_text()) == {"ci": None, "sb": 0.5}
    finally:
        if fresh:
            sys.modules.pop("common", None)


def test_bot_table_with_nothing_to_draw_says_so_in_one_line(tmp_path: Path) -> None:
    """Only the decision times measured (no LBR, no match): no chart, one line saying why, exit 0."""
    require_module("matplotlib")
    out = tmp_path / "out"
    p = run([str(REPO / "experiments" / "bot_table.py"), "--skip", "lbr,matches", "--bots", "call",
             "--time-hands", "2", "--out", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == ("no chart: no bot has an LBR or a match result to draw, so no "
                                                 "bot-table-seed2.png was written")
    assert sorted(f.name for f in out.iterdir()) == ["bot-table-seed2.json"]
    assert list(json.loads((out / "bot-table-seed2.json").read_text())["rows"]["call"]) == ["time"]


def test_bot_table_with_too_few_lbr_hands_for_a_ci_says_it_is_not_available(tmp_path: Path) -> None:
    """``bot_table --lbr-hands 2`` (one duplicate deal: a mean, no confidence interval) printed a
    traceback formatting the CI (None); the LBR is shown with its CI as ``n/a``, in the JSON as
    null, and drawn without an error bar. Always-fold loses exactly 750 mbb/g a deal to LBR."""
    require_module("matplotlib")
    out = tmp_path / "out"
    p = run([str(REPO / "experiments" / "bot_table.py"), "--skip", "matches,time", "--bots", "fold",
             "--lbr-hands", "2", "--redo", "--workers", "1", "--out", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert "fold: LBR 750 ± n/a mbb/g (2 hands: too few for a CI)" in p.stderr.splitlines(), p.stderr
    assert p.stdout.splitlines()[-1] == "| `fold` | 750 ± n/a (2 h) | - | - | - | - |"
    lbr = json.loads((out / "bot-table-seed2.json").read_text())["rows"]["fold"]["lbr"]
    assert (lbr["mbb"], lbr["ci"], lbr["hands"]) == (750.0, None, 2)
    assert (out / "bot-table-seed2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("content, said", [
    (None, "{path}: no such file"),
    ("{}", "{path} is not a report of adaptive.py: it has no 'opponents'"),
    ("[1, 2]", "{path} is not a report of adaptive.py: it holds a list, not an object"),
    ("{torn", "{path} is not JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
    ('{"opponents": ["call"], "adapt": {"call": {"deals": [0.5]}}, "best": {}, "fixed": {}, "hands": 2}',
     "{path} is not a report of adaptive.py: its 'adapt' of 'call' has no 'choices'"),
], ids=["missing", "empty", "a list", "not json", "no choices"])
def test_replotting_what_is_not_a_report_is_one_usage_error(content: str | None, said: str, tmp_path: Path) -> None:
    """``adaptive.py --replot`` of a file that is not there was a FileNotFoundError traceback, of
    ``{}`` a KeyError 'opponents' one. Now one usage line naming the file and what is wrong, exit 2,
    before anything is drawn."""
    report = tmp_path / "report.json"
    if content is not None:
        report.write_text(content)
    p = run([str(REPO / "experiments" / "adaptive.py"), "--replot", str(report)], tmp_path)
    assert (p.returncode, p.stdout) == (2, ""), p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines()[-1] == f"adaptive.py: error: argument --replot: {said.format(path=report)}"
    assert sorted(tmp_path.iterdir()) == ([report] if content is not None else [])


def test_replot_draws_a_report_again(tmp_path: Path) -> None:
    """The report a short run wrote is drawn again beside itself (the two PNGs), and nothing is played."""
    require_module("matplotlib")
    out = tmp_path / "a.json"
    p = run([str(REPO / "experiments" / "adaptive.py"), "--hands", "20", "--opponents", "call", "--fixed", "ehs",
             "-j", "1", "--out", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    pngs = [tmp_path / "a.png", tmp_path / "a-choices.png"]
    for png in pngs:
        png.unlink()
    p = run([str(REPO / "experiments" / "adaptive.py"), "--replot", str(out)], tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (0, "", ""), p.stderr
    assert all(png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for png in pngs)
    assert sorted(tmp_path.iterdir()) == sorted([out, *pngs])


#: Runs a script up to its ``parse_args`` and prints its ``--help`` (as argparse formats it at
#: the terminal's width) and each option's default the help shows (not where its help says it in words).
HELP_AND_DEFAULTS = """
import argparse, json, runpy, sys
def shown(self, args=None, namespace=None):
    print(json.dumps({"help": self.format_help(),
                      "defaults": {a.option_strings[0]: a.default for a in self._actions
                                   if a.option_strings and isinstance(a.default, str) and a.default
                                   and a.default != argparse.SUPPRESS and "(default: " not in (a.help or "")}}))
    raise SystemExit(0)
""" + PARSE_AND_STOP


#: Every script whose ``--help`` is checked line by line: the experiments and the benchmarks.
HELP_SCRIPTS = [*SCRIPTS, *sorted(p for p in REPO.glob("bench/*.py") if "ArgumentParser(" in p.read_text(encoding="utf-8"))]


def test_every_benchmark_s_help_is_checked_too() -> None:
    assert len(HELP_SCRIPTS) - len(SCRIPTS) >= 30
    assert {REPO / "bench" / "bench_state.py", REPO / "bench" / "bench_scale_build.py"} <= set(HELP_SCRIPTS)


@pytest.mark.parametrize("script", HELP_SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_help_breaks_lines_between_words_only(script: Path, tmp_path: Path) -> None:
    """``adaptive.py --help`` at 80 columns cut its defaults mid-word (``ca`` / ``ll``,
    ``cfr:str`` / ``ategy=emd_256``): argparse's wrapping breaks a word longer than the line, and
    at hyphens. Now a line breaks at spaces and after a list's commas only: every word of every
    default is whole in the help (a list read across its line breaks), and no line of the help
    runs past the 80 columns where it could break (breaking at spaces only, a list of 246
    characters did): an option's, the usage's (``bench_scale_build.py --modes`` showed its
    choices twice in one unbreakable group of 97 columns), and the description's
    (``casper_table.py`` and ``reuse_policies.py`` kept their one-sentence description on one
    line of 94 and 95 columns, ``bench_state.py`` its docstring's lines of up to 92)."""
    import re

    p = subprocess.run([sys.executable, "-c", HELP_AND_DEFAULTS, str(script)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60, env={**os.environ, "COLUMNS": "80"})
    assert p.returncode == 0, p.stderr
    shown = json.loads(p.stdout.strip().splitlines()[-1])
    # a line past 80 columns only where one word, with no comma to break after, is longer than
    # the room (a default path in a deep checkout)
    long = [line for line in shown["help"].splitlines() if len(line) > 80]
    assert [line for line in long if len(line.split()) > 1 or "," in line.strip()[:-1]] == []
    words = set(re.sub(r",\n\s+", ",", shown["help"]).split())
    cut = {option: word for option, default in shown["defaults"].items() for word in default.split()
           if not any(word in w for w in words)}
    assert cut == {}


def test_cfr_exploitability_writes_its_curves(tmp_path: Path) -> None:
    """The script put its curves in the variable holding the --out folder, and ended in a
    TypeError (``list / str``) at its first write: it wrote nothing, with or without --out."""
    require_native()
    out = tmp_path / "results"
    p = run([str(REPO / "experiments" / "cfr_exploitability.py"), "--iterations", "1", "--nolimit-iterations", "1",
             "--out", str(out)], tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads((out / "cfr_exploitability.json").read_text())
    assert [c["game"] for c in data["curves"]] == ["holdem.limit.2p", "nolimit.fcpa"]
    assert all(c["rows"] and c["rows"][-1]["iterations"] == 1 for c in data["curves"]), data["curves"]


#: Runs a script up to its ``parse_args`` and prints, for its parser and each subcommand's, every
#: option that takes a value and is not required: its default and its help as the formatter
#: renders it (on one line).
RENDERED = """
import argparse, json, runpy, sys
def shown(self, args=None, namespace=None):
    parsers = [("", self)]
    for action in self._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += [(name + " ", p) for name, p in action.choices.items()]
    out = {}
    for prefix, parser in parsers:
        formatter = parser._get_formatter()
        for a in parser._actions:
            if a.option_strings and a.nargs != 0 and not a.required and a.help is not argparse.SUPPRESS:
                out[prefix + a.option_strings[-1]] = [repr(a.default), " ".join(formatter._format_action(a).split())]
    print(json.dumps(out))
    raise SystemExit(0)
""" + PARSE_AND_STOP

#: The options that have no default: not given, the script leaves something out or plays its own
#: way (``--json`` writes no file, ``--skip`` skips nothing, ``--bot`` plays CASPER's bot). Their
#: default is None or empty, and their help says what they do when given. Every other option
#: shows its default, ``(default: ...)``.
OFF_UNLESS_GIVEN = {
    "experiments/adaptive.py": {"--fixed-from", "--tag", "--replot"},
    "experiments/bot_table.py": {"--skip"},
    "experiments/condense.py": {"--full-from", "--tag"},
    "experiments/opponent_aware.py": {"--weights"},
    "experiments/retention.py": {"--bot"},
    "experiments/teacher.py": {"--snapshots", "--skip"},
    "experiments/tune_ehs.py": {"--only"},
    "bench/acpc_reference_interop.py": {"--dealer", "--reference-sources", "--retain-into", "--dealer-args"},
    "bench/bench_resolve.py": {"--json"},
    "bench/bench_scale_build.py": {"--json"},
    "bench/bench_startup.py": {"--baseline"},
    "bench/make_preflop_table.py": {"--classes"},
}

#: A default said in another form than ``(default: X)``: ``(default 4)``, ``(... ; default 1000)``,
#: ``off by default``, ``(default)``. (The word alone is no default: ``the default case base``.)
ODD_DEFAULT = re.compile(r"\(default\b(?!: )|; default\b|\bby default\b")


@pytest.mark.parametrize("script", HELP_SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_option_shows_its_default_in_one_form(script: Path, tmp_path: Path) -> None:
    """``cfr_table2.py --help`` showed no default for ``--threshold-boards``, ``--game-boards``,
    ``--limit-iterations`` and ``--nolimit-iterations`` (their default is None, the value taken
    from the settings later), and ``(default 4)`` beside ``(default: 2)``; so did
    ``cfr_strategies.py``, ``casper_table.py --hands`` and ``bench_cfr.py --abstraction``. The
    checks before skipped an option whose default is None, and any whose help held the word
    "default". Now every option that takes a value shows its default as ``(default: X)`` (a
    computed one in its help: ``(default: 1000; 3 with --quick)``), unless it is listed as having
    none, and no help says a default another way."""
    p = run(["-c", RENDERED, str(script)], tmp_path)
    assert p.returncode == 0, p.stderr
    options = json.loads(p.stdout.strip().splitlines()[-1])
    name = str(script.relative_to(REPO))
    off = OFF_UNLESS_GIVEN.get(name, set())
    assert off <= set(options), off - set(options)  # the list names options that exist
    odd = {option: help for option, (_, help) in options.items() if ODD_DEFAULT.search(help)}
    assert odd == {}
    unsaid = {option: help for option, (_, help) in options.items()
              if option not in off and help.count("(default: ") != 1}
    assert unsaid == {}
    said_anyway = {option: default for option, (default, _) in options.items()
                   if option in off and default not in ("None", "''")}
    assert said_anyway == {}
