"""Another package's feature set that raises where a case base is *used*: answering a query
(``cbr query``, the library, the HTTP API) and playing with retention (``cbr match
--retain-into``, ``/retain``). The case base is built with the package's working version; the
version installed later raises (an upgrade with a bug): in ``row()`` always (``bad``), or
after its 10th row of a decision already made (``late``: the bot decides, and retention, which
computes the rows of a shown opponent's decisions, keeps a few hands, then fails). Each use is one line (or one ``detail``) naming the plugin and its package,
exit 1 or 500, and nothing half written: the case base retained into stays sound.

The guard is :class:`cbr.plugins.GuardedFeatureSet` (its build paths are tested in
tests/test_plugins.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cbr import plugins
from tests.conftest import require_module, shared_path

REPO = Path(__file__).resolve().parents[1]

GOOD = '''
import numpy as np


class Flaky:
    """pot_odds and bets_to_call on every street, with its own default similarity."""
    name = "flaky"

    def feature_names(self, street):
        return ["pot_odds", "bets_to_call"]

    def row(self, dp):
        return np.asarray([dp.pot_odds, dp.bets_to_call], np.float32)

    def rows(self, dps):
        dps = list(dps)
        return {s: np.asarray([self.row(dp) for dp in dps if dp.street == s], np.float32).reshape(-1, 2)
                for s in range(4)}

    def default_similarity(self):
        rows = [{"feature": "pot_odds", "measure": "linear", "weight": 50, "low": 0, "high": 1},
                {"feature": "bets_to_call", "measure": "linear", "weight": 50, "low": 0, "high": 4}]
        return {s: rows for s in ("preflop", "flop", "turn", "river")}
'''
ROW = "        return np.asarray([dp.pot_odds, dp.bets_to_call], np.float32)\n"
VERSIONS = {
    "good": GOOD,
    "bad": GOOD.replace(ROW, '        raise RuntimeError("row exploded")\n'),
    "late": GOOD.replace(ROW, '        if dp.action is not None:  # a decision made: its service is asked\n'
                              '            ASKED.append(dp)\n'
                              '            if len(ASKED) > 10:\n'
                              '                raise RuntimeError("its service went away")\n' + ROW)
    .replace("class Flaky:", "ASKED = []\n\n\nclass Flaky:"),
}
LABEL = "feature set 'flaky' (plugin 'flaky' in cbr.features: flakyplug:Flaky, package flakyplug)"
BAD = f"{LABEL} failed in row(): RuntimeError: row exploded"
LATE = f"{LABEL} failed in row(): RuntimeError: its service went away"
SITUATION = ("--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5")


@pytest.fixture(scope="module")
def flaky(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three versions of the package ``flakyplug``, each installed as pip would (a dist-info
    beside the module) in a folder of its own, and a case base built with the good one
    (``"cb"``)."""
    root = tmp_path_factory.mktemp("flaky")
    out: dict[str, Path] = {}
    for version, source in VERSIONS.items():
        site = root / version
        info = site / "flakyplug-0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: flakyplug\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text("[cbr.features]\nflaky = flakyplug:Flaky\n")
        (site / "flakyplug.py").write_text(source)
        out[version] = site
    log = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")
    r = _cli(out["good"], "build", log, "-o", root / "cb", "--feature-set", "flaky", "-j", "1", cwd=root)
    assert r.returncode == 0, r.stderr
    out["cb"] = root / "cb"
    return out


def _cli(site: Path, *args: object, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, flaky: dict[str, Path]):
    """``installed(version)``: that version of ``flakyplug`` on sys.path of this process."""
    def install(version: str) -> None:
        monkeypatch.syspath_prepend(str(flaky[version]))
        sys.modules.pop("flakyplug", None)
        plugins.clear_cache()
    yield install
    sys.modules.pop("flakyplug", None)
    plugins.clear_cache()


def _cases(site: Path, casebase: Path, cwd: Path) -> int:
    """The cases of ``casebase`` after ``cbr casebase verify`` found it sound (read with ``site``)."""
    r = _cli(site, "casebase", "verify", casebase, cwd=cwd)
    assert r.returncode == 0 and r.stdout.strip().startswith(f"{casebase}: sound ("), (r.stdout, r.stderr)
    return int(r.stdout.strip().split(": sound (", 1)[1].split()[0].replace(",", ""))


def test_a_query_over_a_plugin_feature_set_that_raises_is_one_line(flaky: dict[str, Path], tmp_path: Path) -> None:
    for extra in ((), ("--json",)):
        r = _cli(flaky["bad"], "query", "-c", flaky["cb"], *SITUATION, *extra, cwd=tmp_path)
        assert (r.returncode, r.stderr.strip(), r.stdout) == (1, f"error: {BAD}", ""), extra
    r = _cli(flaky["good"], "query", "-c", flaky["cb"], *SITUATION, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr  # the case base is fine: the plugin failed


def test_the_library_s_answer_raises_the_plugin_s_error(flaky: dict[str, Path], installed) -> None:
    from cbr.errors import PluginFailedError
    from cbr.game.situation import situation
    from cbr.query.answer import answer
    from cbr.store import CaseBase

    installed("bad")
    dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5)
    with CaseBase.open(flaky["cb"]) as cb:
        with pytest.raises(PluginFailedError) as info:
            answer(cb, dp)
    assert str(info.value) == BAD and isinstance(info.value.__cause__, RuntimeError)


def test_the_http_api_names_the_plugin_with_500(flaky: dict[str, Path], installed, tmp_path: Path) -> None:
    """``/retrieve`` and ``/reuse`` answered 500 naming the plugin, but an item of
    ``/retrieve/batch`` answered 422, the request's fault, with the plugin's line as a field
    problem: 500 with the same ``detail`` as ``/retrieve``. ``/retain`` with the ``late``
    version answers 500 and writes nothing."""
    require_module("fastapi")
    require_module("httpx")
    from cbr.serve.engine import Engine
    from tests.serve.conftest import TOKEN, make_client

    installed("bad")
    situation = {"casebase": "cb", "hole": "AsAh", "board": "2c7d9h"}
    engine = Engine([str(flaky["cb"])])
    try:
        with make_client(engine) as client:
            r = client.post("/retrieve", json=situation)
            assert (r.status_code, r.json()) == (500, {"detail": BAD}), r.text
            r = client.post("/retrieve/batch", json={"situations": [situation]})
            assert r.status_code == 200, r.text
            assert r.json()["answers"] == [{"error": {"status": 500, "detail": BAD}}], r.text
            r = client.post("/reuse", json={**situation, "policy": "cbr"})
            assert (r.status_code, r.json()) == (500, {"detail": BAD}), r.text
    finally:
        engine.close()

    mine = tmp_path / "mine"
    shutil.copytree(flaky["cb"], mine)
    before = _cases(flaky["good"], mine, tmp_path)
    installed("late")
    hands = tmp_path / "hands.log"
    lines = shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log").read_text().splitlines(True)
    hands.write_text("".join([line for line in lines if line.startswith("#")][:5]
                             + [line for line in lines if line.startswith("STATE")][:10]))
    engine = Engine([str(mine)])
    try:
        with make_client(engine, token=TOKEN) as client:
            r = client.post("/retain", json={"casebase": "mine", "text": hands.read_text()},
                            headers={"Authorization": f"Bearer {TOKEN}"})
            assert (r.status_code, r.json()) == (500, {"detail": LATE}), r.text
    finally:
        engine.close()
    assert _cases(flaky["good"], mine, tmp_path) == before


def _retained_by_hand(casebase: Path) -> dict[str, int]:
    from cbr.store import CaseBase

    with CaseBase.open(casebase) as cb:
        rows = cb.sql("SELECT hand_id, count(*) FROM cases WHERE source = 'retained' GROUP BY hand_id").fetchall()
    return {str(hand): int(n) for hand, n in rows}


@pytest.mark.parametrize("version, line", [("bad", BAD), ("late", LATE)])
def test_live_play_retaining_with_a_plugin_feature_set_that_raises(flaky: dict[str, Path], installed, tmp_path: Path,
                                                                   version: str, line: str) -> None:
    """The ``cbr`` bot playing from the case base, retaining into a copy: ``bad`` fails as the
    bot decides, ``late`` as a hand is retained. One error line naming the plugin, exit 1; the
    copy is sound and holds whole hands only: those retained before the failure, each with the
    cases the same match retains of it when the plugin works (none for ``bad``)."""
    def match(site: str, into: str) -> subprocess.CompletedProcess:
        return _cli(flaky[site], "match", "-p", f"cbr:casebase={flaky['cb']},call", "--hands", "20", "--seed", "3",
                    "--retain-into", f"./{into}", cwd=tmp_path)

    r = match(version, "mine")
    errors = [x for x in r.stderr.splitlines() if not x.startswith("note: ")]
    assert (r.returncode, errors) == (1, [f"error: {line}"]), r.stderr
    assert "Traceback" not in r.stderr
    base = _cases(flaky["good"], flaky["cb"], tmp_path)
    kept = _cases(flaky["good"], tmp_path / "mine", tmp_path)
    r = match("good", "whole")
    assert r.returncode == 0, r.stderr
    installed("good")
    whole, got = _retained_by_hand(tmp_path / "whole"), _retained_by_hand(tmp_path / "mine")
    assert kept - base == sum(got.values())
    if version == "bad":
        assert got == {}
    else:  # a few hands kept, each whole; the hand that failed and the later ones not at all
        assert 0 < len(got) < len(whole) and got == {hand: whole[hand] for hand in got}, (got, whole)
        assert sorted(got, key=int) == sorted(whole, key=int)[:len(got)]
