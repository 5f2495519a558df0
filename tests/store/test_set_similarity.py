"""Setting a case base's similarity: `SimilarityConfig.changed`, `CaseBase.set_similarity` (atomic,
killed at every step, saved indexes rebuilt), `cbr casebase similarity` and `cbr query --threshold/--k`."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.errors import CaseBaseError, ConfigError
from cbr.game.gamedef import STREETS
from cbr.game.situation import situation
from cbr.query.answer import answer
from cbr.similarity import default_casper
from cbr.store import CaseBase, CaseBaseWriter
from cbr.store.verify import verify_casebase
from cli import app

REPO = Path(__file__).resolve().parents[2]
DIMS = {"preflop": 8, "flop": 12, "turn": 12, "river": 12}
runner = CliRunner()


def make_casebase(path: Path, n: int = 300, seed: int = 5) -> Path:
    """Cases spread like real ones (features within their domains), every street indexed and saved."""
    rng = np.random.default_rng(seed)
    cfg = default_casper()
    with CaseBaseWriter(path) as w:
        for s in STREETS:
            st = cfg.street(s)
            X = (st.lows + rng.random((n, DIMS[s])) * (st.highs - st.lows)).astype(np.float32)
            w.add_rows(s, np.round(X, 1), list(rng.choice(list("fcr"), size=n)), source=f"log-{s}")
    return path


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return make_casebase(tmp_path / "cb")


def test_set_similarity_is_sound_and_rebuilds_the_saved_indexes(base: Path):
    new = default_casper().changed(threshold=0.9, fallback_k=7, weights={"hand_strength": 40})
    with CaseBase.open(base) as cb:
        old_entries = dict(cb.manifest.index)
        assert cb.set_similarity(new) == list(STREETS)
        assert cb.manifest.similarity == "similarity-1.toml"
    assert not (base / "similarity.toml").exists()             # no other reader: the old file is gone
    report = verify_casebase(base)
    assert report.sound, [p.line() for p in report.problems]
    with CaseBase.open(base, memory_map=True) as cb:          # mapping needs indexes saved with the new settings
        assert cb.similarity() == new
        for s in STREETS:
            assert cb.manifest.index[s]["file"] != old_entries[s]["file"]
            index = cb.index(s)
            assert (index.threshold, index.fallback_k) == (0.9, 7) and index.similarity == new.street(s)
    with CaseBase.open(base) as cb:                           # again: a new file, the last one removed
        cb.set_similarity(default_casper(), rebuild_indexes=False)
        assert cb.manifest.similarity == "similarity-2.toml"
    assert sorted(p.name for p in base.glob("similarity*")) == ["similarity-2.toml"]
    assert verify_casebase(base).sound


def test_the_old_file_stays_while_another_reader_is_open(base: Path):
    other = CaseBase.open(base)
    try:
        with CaseBase.open(base) as cb:
            cb.set_similarity(default_casper(threshold=0.8), rebuild_indexes=False)
        assert (base / "similarity.toml").exists()
        assert other.similarity().threshold == 0.97            # its manifest still names the old file
    finally:
        other.close()
    with CaseBase.open(base) as cb:                           # the next commit with no other reader collects it
        cb.set_similarity(default_casper(threshold=0.7))
    assert sorted(p.name for p in base.glob("similarity*")) == ["similarity-2.toml"]


def test_a_bad_configuration_changes_nothing(base: Path):
    before = (base / "manifest.json").read_bytes()
    with pytest.raises(ConfigError, match="no feature 'nothing'"):
        default_casper().changed(weights={"flop.nothing": 3})
    with pytest.raises(ConfigError, match="weight must be within 0..100"):
        default_casper().changed(weights={"hand_strength": 300})
    with pytest.raises(ConfigError):
        default_casper().changed(measures={"pot_odds": ("no-such-measure", {})})
    with CaseBase.open(base) as cb, pytest.raises(ConfigError, match="covers"):
        from cbr.similarity import default_sartre

        cb.set_similarity(default_sartre())
    assert (base / "manifest.json").read_bytes() == before


def test_shipped_case_bases_are_refused():
    from cbr.store import resolve_casebase

    with CaseBase.open(resolve_casebase("default")) as cb, pytest.raises(CaseBaseError, match="never written"):
        cb.set_similarity(default_casper(threshold=0.5))


@pytest.mark.parametrize("shipped", ["default", "expert"])
def test_the_refusal_of_a_shipped_case_base_names_a_command_that_copies_it(shipped: str, tmp_path: Path):
    """`cbr casebase similarity default --threshold 0.9` advised `cbr match --players cbr,call ...
    --retain-into NAME`, which copies the expert base (plain `cbr` plays it), not default. The
    command it names, run as written, copies the case base named, whose similarity can then be set."""
    import shlex

    from cbr.store import resolve_casebase
    from cbr.store.manifest import read_manifest

    result = runner.invoke(app, ["casebase", "similarity", shipped, "--threshold", "0.9"])
    assert result.exit_code == 1, result.output
    line = result.output.strip()
    assert line.startswith(f"error: the shipped case base {shipped!r} is never written to") and "\n" not in line
    command = shlex.split(line[line.index("cbr match "):].rstrip(")"))
    assert command[0] == "cbr" and command[-1] == "NAME", command
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-m", "cli", *command[1:-1], "mine"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    origin = read_manifest(tmp_path / "casebases" / "mine").origin
    assert origin is not None and (origin["name"], origin["path"]) == (shipped, str(resolve_casebase(shipped)))
    result = runner.invoke(app, ["casebase", "similarity", str(tmp_path / "casebases" / "mine"), "--threshold",
                                 "0.9", "--no-rebuild", "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["threshold"] == 0.9, result.output


SET_KILLED = textwrap.dedent("""
    import os, signal, sys
    from cbr.similarity import default_casper
    from cbr.store import CaseBase
    limit, calls = int(sys.argv[2]), [0]

    def dying(call):
        def step(*args, **kwargs):
            calls[0] += 1
            if calls[0] == limit:
                os.kill(os.getpid(), signal.SIGKILL)
            return call(*args, **kwargs)
        return step

    cb = CaseBase.open(sys.argv[1])
    for name in ("open", "fsync", "replace", "rename", "unlink", "ftruncate"):
        setattr(os, name, dying(getattr(os, name)))
    cb.set_similarity(default_casper(threshold=0.5, fallback_k=3), rebuild_indexes=False)
    print(calls[0], flush=True)
""")


def test_killed_at_every_step_leaves_the_old_or_the_new_similarity(tmp_path: Path):
    """SIGKILLed before each of its file-system calls in turn: the case base is sound, with the
    old similarity or the new one (a similarity file rewritten in place was damage to verify)."""
    template = make_casebase(tmp_path / "template", n=20)
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    def run(copy: Path, limit: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", SET_KILLED, str(copy), str(limit)], env=env,
                              capture_output=True, text=True, timeout=120)

    full = run(shutil.copytree(template, tmp_path / "full"), 0)
    assert full.returncode == 0, full.stderr
    steps = int(full.stdout.split()[-1])
    seen = set()
    for limit in range(1, steps + 1):
        copy = shutil.copytree(template, tmp_path / f"k{limit}")
        killed = run(copy, limit)
        assert killed.returncode == -signal.SIGKILL, (limit, killed.stderr)
        report = verify_casebase(copy)
        assert report.sound, (limit, [p.line() for p in report.problems])
        with CaseBase.open(copy) as cb:
            threshold = cb.similarity().threshold
            assert threshold in (0.97, 0.5), limit
            seen.add(threshold)
            cb.set_similarity(default_casper(threshold=0.6))   # and it can be set again, leftovers collected
        assert len(list(copy.glob("similarity*.toml"))) == 1 and verify_casebase(copy).sound
    assert seen == {0.97, 0.5}


def _dp():
    return situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5)


def test_query_threshold_and_k_are_what_setting_them_gives(base: Path, tmp_path: Path):
    other = Path(shutil.copytree(base, tmp_path / "other"))
    with CaseBase.open(other) as cb:
        cb.set_similarity(default_casper(threshold=0.8, fallback_k=4))
    for threshold, k in ((0.8, 4), (1.0, 4)):
        with CaseBase.open(base) as cb:
            got = answer(cb, _dp(), threshold=threshold, k=k).to_dict()
            assert cb.similarity().threshold == 0.97                # the case base is unchanged
        with CaseBase.open(other) as cb:
            want = answer(cb, _dp(), threshold=None if threshold == 0.8 else threshold).to_dict()
        got.pop("casebase"), want.pop("casebase")
        assert got == want and got["retrieved"] > 0
    with CaseBase.open(base) as cb:
        assert answer(cb, _dp(), threshold=1.0, k=4).retrieved == 4
        plain = answer(cb, _dp())
        assert plain.threshold == 0.97 and plain.retrieved != 4
    args = ["query", "-c", str(base), "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1",
            "--pot", "5", "--json"]
    result = runner.invoke(app, [*args, "--threshold", "1", "--k", "4"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["threshold"] == 1.0 and data["retrieved"] == 4 and data["fallback"] is True
    assert runner.invoke(app, [*args, "--threshold", "1.5"]).exit_code == 2
    assert runner.invoke(app, [*args, "--k", "0"]).exit_code == 2


def test_min_cases_for_one_query_and_for_good(base: Path, tmp_path: Path):
    """``--min-cases`` of ``cbr query`` and ``cbr casebase similarity``: a threshold only the few
    most similar reach keeps them; with ``--min-cases`` the ``--k`` most similar instead (the same
    answer as a case base set that way), said in the text; more than ``--k`` is one line, exit 1."""
    args = ["query", "-c", str(base), "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1",
            "--pot", "5"]
    with CaseBase.open(base) as cb:
        sims = answer(cb, _dp(), threshold=0.0).explanation.similarities
    threshold = float(sims[1])  # the two most similar reach it
    assert sims[2] < threshold
    few = json.loads(runner.invoke(app, [*args, "--json", "--threshold", repr(threshold)]).output)
    assert (few["retrieved"], few["fallback"], few["min_cases"]) == (2, False, 1)
    result = runner.invoke(app, [*args, "--json", "--threshold", repr(threshold), "--k", "6", "--min-cases", "6"])
    assert result.exit_code == 0, result.output
    more = json.loads(result.output)
    assert (more["retrieved"], more["fallback"], more["min_cases"]) == (6, True, 6)
    assert more["passed_threshold"] == 2  # the two that reached it, among the six
    assert {c["id"] for c in few["cases"]} < {c["id"] for c in more["cases"]}
    top1 = json.loads(runner.invoke(app, [*args, "--json", "--threshold", repr(threshold), "--k", "6",
                                          "--min-cases", "6", "--top", "1"]).output)
    assert top1["passed_threshold"] == 2  # counted, not read off the one case listed
    text = runner.invoke(app, [*args, "--threshold", repr(threshold), "--k", "6", "--min-cases", "6"]).output
    assert f"fewer than 6 cases reached similarity {threshold} (2 did); the 6 most similar were used" in text
    result = runner.invoke(app, [*args, "--k", "6", "--min-cases", "7"])  # a usage error: exit 2, nothing read
    assert result.exit_code == 2 and "--min-cases 7 is above --k 6" in result.output, result.output
    other = Path(shutil.copytree(base, tmp_path / "other"))
    result = runner.invoke(app, ["casebase", "similarity", str(other), "--threshold", repr(threshold), "--k", "6",
                                 "--min-cases", "6"])
    assert result.exit_code == 0 and "min_cases 6" in result.output, result.output
    with CaseBase.open(other) as cb:
        assert cb.similarity().min_cases == 6
    assert verify_casebase(other).sound
    again = json.loads(runner.invoke(app, ["query", "-c", str(other), *args[3:], "--json"]).output)
    again.pop("casebase"), more.pop("casebase")
    assert again == more
    # --k below the base's min_cases: a usage error (exit 2) naming the option, its value and the
    # minimum, as `casebase similarity` words it (it said "min_cases 6 (the case base's) is above
    # k 4 ... (give min_cases too)", the library's words, naming no option; then exit 1)
    result = runner.invoke(app, ["query", "-c", str(other), *args[3:], "--k", "4"])
    assert result.exit_code == 2, result.output
    assert ("Invalid value for '--k': --k 4 is below the case base's min_cases (6): give --k 6 or more, "
            "or --min-cases 4 or less with it") in " ".join(result.output.replace("│", " ").split()), result.output
    result = runner.invoke(app, ["query", "-c", str(other), *args[3:], "--min-cases", "7"])  # above its k (6)
    assert result.exit_code == 2, result.output
    assert ("Invalid value for '--min-cases': --min-cases 7 is above the case base's k (6): give --min-cases 6 "
            "or less, or --k 7 or more with it") in " ".join(result.output.replace("│", " ").split()), result.output
    assert runner.invoke(app, ["query", "-c", str(other), *args[3:], "--k", "4", "--min-cases", "4"]).exit_code == 0
    result = runner.invoke(app, ["casebase", "similarity", str(other), "--k", "4", "--min-cases", "5"])
    assert result.exit_code == 2 and "--min-cases 5 is above --k 4" in result.output, result.output


def test_cli_shows_sets_and_refuses(base: Path, tmp_path: Path):
    result = runner.invoke(app, ["casebase", "similarity", str(base), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["threshold"] == 0.97
    result = runner.invoke(app, ["casebase", "similarity", str(base), "--weight", "flop.hand_strength=55",
                                 "--measure", "pot_odds=exp:k=3", "--threshold", "0.95", "--k", "9", "--weighted"])
    assert result.exit_code == 0, result.output
    assert "rebuilt the saved indexes of preflop, flop, turn, river" in result.output
    with CaseBase.open(base) as cb:
        cfg = cb.similarity()
    assert (cfg.threshold, cfg.fallback_k, cfg.weighted_triple) == (0.95, 9, True)
    assert float(cfg.street("flop").weights[7]) == 55.0 and float(cfg.street("turn").weights[7]) == 100.0
    assert {cfg.street(s).feature_specs[6].measure for s in STREETS} == {"exp"}
    assert cfg.street("river").feature_specs[6].params == {"k": 3.0}
    assert verify_casebase(base).sound
    toml = tmp_path / "sim.toml"
    toml.write_text(default_casper(threshold=0.91).to_toml())
    result = runner.invoke(app, ["casebase", "similarity", str(base), "--from", str(toml), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["threshold"] == 0.91
    before = (base / "manifest.json").read_bytes()
    for args, code, says in (
            # an unknown feature or street: a usage error naming the option and the known features
            # (it was exit 1 while an out-of-range weight was exit 2)
            (["--weight", "flop.nothing=3"], 2, "Invalid value for '--weight': --weight flop.nothing=3: no feature "
                                                "'nothing' on the flop; its features: players_dealt, "),
            (["--weight", "nothing=50"], 2, "Invalid value for '--weight': --weight nothing=50: no feature 'nothing' "
                                            "on any street; the features: players_dealt, relative_position, "),
            (["--weight", "river2.pot_odds=50"], 2, "--weight river2.pot_odds=50: unknown street 'river2'; streets: "
                                                    "preflop, flop, turn, river"),
            (["--measure", "nothing=linear"], 2, "Invalid value for '--measure': --measure nothing=linear: no feature "
                                                 "'nothing' on any street; the features: players_dealt, "),
            (["--weight", "hand_strength=x"], 2, "is a number"),
            (["--weight", "hand_strength"], 2, "FEATURE=VALUE"),
            (["--measure", "pot_odds=nope"], 2, "--measure 'nope': unknown similarity measure 'nope' (known: equity, exact, "),
            (["--measure", "pot_odds=exp:q=4"], 2, "measure 'exp' has no parameter 'q' (its parameters: k)"),
            (["--measure", "pot_odds=exp:k"], 2, "NAME=NUMBER"),
            (["--weighted", "--unweighted"], 2, "not both"),
            (["--no-rebuild"], 2, "--no-rebuild"),
            # out of range: a usage error naming the option as given, not one street's field
            (["--weight", "hand_strength=200"], 2, "Invalid value for '--weight': --weight hand_strength=200: the weight "
                                                   "is a number 0..100"),
            (["--weight", "flop.pot_odds=-1"], 2, "--weight flop.pot_odds=-1: the weight is a number 0..100"),
            (["--min-cases", "50"], 2, f"Invalid value for '--min-cases': --min-cases 50 is above the case base's k "
                                       f"({default_casper().fallback_k})"),
            (["--from", str(toml), "--min-cases", "50"], 2, "--min-cases 50 is above the --from file's k")):
        result = runner.invoke(app, ["casebase", "similarity", str(base), *args])
        assert result.exit_code == code and says in result.output, (args, result.output)
    assert (base / "manifest.json").read_bytes() == before
    result = runner.invoke(app, ["casebase", "similarity", "default", "--threshold", "0.5"])
    assert result.exit_code == 1 and "never written" in result.output


def test_a_damaged_similarity_file_is_mended_as_verify_advises(base: Path, tmp_path: Path):
    """A similarity file edited by hand is damage (verify says so, a query refuses in one
    line), and the way out verify advises, `cbr casebase similarity NAME --from FILE`, works:
    it used to refuse with the same damage error, since opening checked the file."""
    good = tmp_path / "good.toml"
    shutil.copy(base / "similarity.toml", good)
    with open(base / "similarity.toml", "a") as f:
        f.write("# edited\n")
    report = verify_casebase(base)
    assert not report.sound and "similarity.toml" in json.dumps(report.to_dict())
    with CaseBase.open(base) as cb, pytest.raises(CaseBaseError, match="similarity.toml is damaged"):
        answer(cb, _dp())
    r = CliRunner().invoke(app, ["casebase", "similarity", str(base), "--from", str(good)])
    assert r.exit_code == 0, r.output
    assert verify_casebase(base).sound
    with CaseBase.open(base) as cb:
        assert cb.manifest.similarity == "similarity-1.toml" and answer(cb, _dp()).retrieved > 0
