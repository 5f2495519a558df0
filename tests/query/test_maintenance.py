"""Case-base maintenance (cbr/query/maintenance.py, ``cbr casebase condense | competence | diff``):
a condensed base keeps a subset of the cases, unchanged, and votes as the full one on the
cases it covers; the footprint is a cover; bad input writes nothing; competence and diff agree
with what is computed by hand from the same votes."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cbr.errors import CaseBaseError, CBRError
from cbr.game.gamedef import STREETS
from cbr.query.maintenance import (
    _proportion_ci,
    competence,
    condense,
    diff,
    greedy_footprint,
    keep_shares,
    solvers,
    street_votes,
    systematic_keep,
    tv_distance,
)
from cbr.store import CaseBase, resolve_casebase
from cbr.store.manifest import read_manifest, write_manifest
from cbr.store.writer import CaseBaseWriter
from tests.conftest import REPO, require_module

CLI = [sys.executable, "-c", "import sys; from cli import app; sys.exit(app())"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=_env(), cwd=cwd or REPO, timeout=600)


def rows_of(path: Path) -> dict[str, Counter]:
    """Per street, the multiset of cases: every column but the case id."""
    cb = CaseBase.open(path)
    try:
        out = {}
        for s in STREETS:
            t = cb.table(s).drop(["case_id"])
            out[s] = Counter(zip(*(t.column(c).to_pylist() for c in t.column_names)))
        return out
    finally:
        cb.close()


#: Cases a street taken from the shipped default case base (self-play of the rule bots).
PER_STREET = 6000
TOTAL = 4 * PER_STREET


@pytest.fixture(scope="module")
def default_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 6,000 cases of each street of the shipped default case base, as a case base."""
    from cbr.game.gamedef import GameDef

    out = tmp_path_factory.mktemp("base") / "default-24k"
    src = CaseBase.open(resolve_casebase("default"))
    try:
        m = src.manifest
        with CaseBaseWriter(out, feature_set=m.feature_set, similarity=src.path / m.similarity) as w:
            for g in m.games:
                w.add_game(GameDef.from_dict(g))
            for s in STREETS:
                w.add_table(s, src.table(s).slice(0, PER_STREET))
    finally:
        src.close()
    return out


REPORTS: dict = {}


@pytest.fixture(scope="module")
def thin_flop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """6,000 cases a street of the shipped default case base, but only the first 500 flop cases."""
    from cbr.game.gamedef import GameDef

    out = tmp_path_factory.mktemp("base") / "thin-flop"
    src = CaseBase.open(resolve_casebase("default"))
    try:
        m = src.manifest
        with CaseBaseWriter(out, feature_set=m.feature_set, similarity=src.path / m.similarity) as w:
            for g in m.games:
                w.add_game(GameDef.from_dict(g))
            for s in STREETS:
                w.add_table(s, src.table(s).slice(0, 500 if s == "flop" else PER_STREET))
    finally:
        src.close()
    return out


@pytest.fixture(scope="module")
def condensed(default_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("condense")
    out = {}
    for method in ("footprint", "sample", "merge"):
        out[method] = root / method
        REPORTS[method] = condense(default_copy, out[method], method=method, keep=0.1)
    return out


def test_tv_and_solvers_by_hand() -> None:
    t = np.array([[0.5, 0.5, 0.0], [0.4, 0.6, 0.0], [0.0, 0.0, 1.0]])
    assert tv_distance(t[0], t[1]) == pytest.approx(0.1)
    assert tv_distance(t[0], t[2]) == pytest.approx(1.0)
    ok = solvers(t, np.array([[1, 2], [0, -1], [0, 1]]), 0.1)
    assert ok.tolist() == [[True, False], [True, False], [False, False]]


def test_greedy_footprint_is_a_cover_and_greedy() -> None:
    # row 2 solves 0, 1, 3 and 4; rows 5 and 6 only each other; the greedy picks 2 first, then 5
    nb = np.array([[2], [2], [0], [2], [2], [6], [5]])
    ok = np.ones_like(nb, bool)
    group = greedy_footprint(nb, ok, np.ones(7))
    assert group.tolist() == [2, 2, 2, 2, 2, 5, 5]
    # weights count cases: row 2 is solved by rows 0 and 3, and goes to the one picked first:
    # row 0 (the lower) when rows count alike, row 3 when row 4 weighs 9 cases
    nb = np.array([[0, 0], [0, 0], [0, 3], [3, 3], [3, 3]])
    ok = np.ones_like(nb, bool)
    assert greedy_footprint(nb, ok, np.ones(5)).tolist() == [0, 0, 0, 3, 3]
    assert greedy_footprint(nb, ok, np.array([1, 1, 1, 1, 9])).tolist() == [0, 0, 3, 3, 3]


def test_systematic_keep_keeps_each_groups_action_mix() -> None:
    groups = np.repeat(np.arange(10), 100)
    codes = np.tile(np.repeat(np.array([0, 1, 2], np.int8), [20, 50, 30]), 10)
    kept = systematic_keep(groups, codes, 0.1, seed=3)
    assert len(kept) == 100 and len(set(kept.tolist())) == 100
    for g in range(10):
        mine = kept[groups[kept] == g]
        assert Counter(codes[mine].tolist()) == {0: 2, 1: 5, 2: 3}
    assert systematic_keep(groups, codes, 0.1, seed=3).tolist() == kept.tolist()  # seeded


def test_keep_shares_keep_the_street_share_and_the_floor() -> None:
    hits = np.array([5000] * 900 + [40] * 80 + [0] * 20)  # dense windows, sparse ones, fallbacks
    p = keep_shares(hits, 0.1, 20)
    assert p.sum() == pytest.approx(100.0)
    assert (p[:900] == p[0]).all() and p[0] < 0.1  # the dense windows pay for the sparse ones
    assert p[900] == pytest.approx(0.5) and (p[980:] == 1.0).all()  # 20 of 40; every fallback case
    assert np.allclose(keep_shares(hits, 0.1, 0), 0.1)
    squeezed = keep_shares(np.array([10] * 100), 0.1, 20)  # the floors alone exceed the share
    assert squeezed.sum() == pytest.approx(10.0)
    kept = systematic_keep(np.zeros(1000, int), np.zeros(1000, np.int8), p, seed=1)
    assert len(kept) == 100 and (kept >= 980).sum() == 20


def test_keep_shares_per_stratum_pay_their_floor_from_their_own_budget() -> None:
    hits = np.array([5000] * 900 + [40] * 80 + [3] * 300)  # heads-up windows, then sparse multi-way ones
    games = np.array(["2p"] * 980 + ["9p"] * 300)
    one = keep_shares(hits, 0.1, 20)
    assert one[:980].sum() < 0.1 * 980 / 2  # one budget: the 9-player floors take most of it
    p = keep_shares(hits, 0.1, 20, games)
    assert p[:980].sum() == pytest.approx(98.0) and p[980:].sum() == pytest.approx(30.0)
    assert p[:980].tolist() == keep_shares(hits[:980], 0.1, 20).tolist()  # the heads-up stratum as alone


@pytest.fixture(scope="module")
def mixed_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Heads-up and 9-player cases of the shipped default case base, as its own case base: per
    street the first 3,000 heads-up cases and the first 1,000 of the 9-player log."""
    import pyarrow.compute as pc

    from cbr.game.gamedef import GameDef

    out = tmp_path_factory.mktemp("mixed") / "mixed"
    src = CaseBase.open(resolve_casebase("default"))
    try:
        m = src.manifest
        with CaseBaseWriter(out, feature_set=m.feature_set, similarity=src.path / m.similarity) as w:
            for g in m.games:
                w.add_game(GameDef.from_dict(g))
            for s in STREETS:
                t = src.table(s)
                nine = pc.equal(t.column("game"), "casper.9p")
                w.add_table(s, t.filter(pc.invert(nine)).slice(0, 3000))
                w.add_table(s, t.filter(nine).slice(0, 1000))
    finally:
        src.close()
    return out


def test_footprint_on_a_base_with_multiway_logs_covers_at_least_as_the_flat_share(mixed_copy: Path,
                                                                                  tmp_path: Path) -> None:
    """Before: with the default --floor 20 the sparse 9-player windows took the heads-up cases'
    budget (here 742 of the 1,600 cases kept were 9-player ones, almost one in five of that log),
    and the footprint covered less than its flat share (--floor 0) on every street (pre-flop
    0.621 against 0.812; on the shipped default base it covered less than the sample control
    too, flop 0.555 against 0.747). Now each game pays its floor from its own tenth, and a
    street keeps the floor only where it covers more of the street's cases than the flat share."""
    with CaseBase.open(mixed_copy) as cb:
        assert {g for (g,) in cb.sql("SELECT DISTINCT game FROM cases").fetchall()} == {"holdem.limit.2p", "casper.9p"}
    default = condense(mixed_copy, tmp_path / "footprint")
    flat = condense(mixed_copy, tmp_path / "flat", floor=0)
    control = condense(mixed_copy, tmp_path / "sample", method="sample")
    for s in STREETS:
        assert default.coverage[s] >= flat.coverage[s], (s, default.coverage, flat.coverage)
        assert default.floor_per_street[s] in (0, 20)
    assert default.coverage["flop"] >= control.coverage["flop"], (default.coverage, control.coverage)
    assert default.kept == flat.kept == control.kept
    with CaseBase.open(tmp_path / "footprint") as cb:
        per_game = dict(cb.sql("SELECT game, count(*) FROM cases GROUP BY game").fetchall())
    assert per_game["casper.9p"] <= 0.11 * 4000 and per_game["holdem.limit.2p"] >= 0.09 * 12000, per_game


def test_condensed_cases_are_a_subset_of_the_source(default_copy: Path, condensed: dict[str, Path]) -> None:
    full = rows_of(default_copy)
    for method, path in condensed.items():
        small = rows_of(path)
        for s in STREETS:
            assert not small[s] - full[s], (method, s)  # every kept case is a source case, unchanged
        cb = CaseBase.open(path)
        try:
            origin = cb.manifest.extra["condensed_from"]
            assert origin["method"] == method and origin["cases"] == TOTAL
            assert cb.similarity() == CaseBase.open(default_copy).similarity()
        finally:
            cb.close()


def test_footprint_keeps_a_tenth_and_votes_as_the_full_base(default_copy: Path, condensed: dict[str, Path]) -> None:
    report = REPORTS["footprint"]
    assert report.kept + report.removed == TOTAL
    assert abs(report.kept - TOTAL // 10) <= 4  # a tenth of every street, give or take one
    assert set(report.footprint) == set(STREETS) and all(0 < report.footprint[s] for s in STREETS)
    # coverage recomputed by hand on the source's own case rows, with both bases' own indexes
    full, small = CaseBase.open(default_copy), CaseBase.open(condensed["footprint"])
    try:
        for s in STREETS:
            X = full.cases(s).features
            rng = np.random.default_rng(1)
            pick = X[rng.choice(len(X), 1000, replace=False)]
            tv = tv_distance(street_votes(full, s, pick), street_votes(small, s, pick))
            share = float((tv <= 0.1 + 1e-12).mean())
            assert share == pytest.approx(report.coverage[s], abs=0.06), s
            assert report.coverage[s] >= 0.5, s
    finally:
        full.close()
        small.close()


def test_footprint_votes_closer_than_a_plain_sample(default_copy: Path, condensed: dict[str, Path]) -> None:
    """The competence groups are strata: the footprint's votes are at least as close to the
    full base's as a sample stratified by action only, on every street's mean TV."""
    full = CaseBase.open(default_copy)
    try:
        tvs = {}
        for method in ("footprint", "sample"):
            cb = CaseBase.open(condensed[method])
            try:
                per = []
                for s in STREETS:
                    X = full.cases(s).features
                    pick = X[np.random.default_rng(2).choice(len(X), 1000, replace=False)]
                    per.append(float(tv_distance(street_votes(full, s, pick), street_votes(cb, s, pick)).mean()))
                tvs[method] = per
            finally:
                cb.close()
    finally:
        full.close()
    assert sum(tvs["footprint"]) <= sum(tvs["sample"]) * 1.05, tvs


def test_footprint_is_seeded(default_copy: Path, condensed: dict[str, Path], tmp_path: Path) -> None:
    """The same seed gives the same condensed base (checked on the cases kept)."""
    again = condense(default_copy, tmp_path / "again", method="footprint", keep=0.1)
    assert again.kept_per_street == REPORTS["footprint"].kept_per_street
    assert rows_of(tmp_path / "again") == rows_of(condensed["footprint"])


def test_merge_keeps_one_case_per_row_and_action(default_copy: Path, condensed: dict[str, Path]) -> None:
    full = CaseBase.open(default_copy)
    small = CaseBase.open(condensed["merge"])
    try:
        for s in STREETS:
            keys = {tuple(r) + (a,) for r, a in zip(full.cases(s).features.tolist(), full.cases(s).actions)}
            mine = [tuple(r) + (a,) for r, a in zip(small.cases(s).features.tolist(), small.cases(s).actions)]
            assert len(mine) == len(set(mine)) == len(keys)
    finally:
        full.close()
        small.close()


def test_bad_input_writes_nothing(default_copy: Path, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(CaseBaseError, match="already exists"):
        condense(default_copy, tmp_path / "taken")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not a case base")
    with pytest.raises(CaseBaseError):
        condense(foreign, tmp_path / "out")
    with pytest.raises(CBRError):
        condense(default_copy, tmp_path / "out", keep=0.0)
    with pytest.raises(CBRError):
        condense(default_copy, tmp_path / "out", method="edit")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*before, "foreign"])


def test_damaged_source_writes_nothing(default_copy: Path, tmp_path: Path) -> None:
    src = tmp_path / "damaged"
    shutil.copytree(default_copy, src)
    part = next((src / "cases" / "flop").glob("part-*.parquet"))
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 0xFF
    part.write_bytes(bytes(data))
    proc = run("casebase", "condense", str(src), "-o", str(tmp_path / "out"))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "part-" in lines[0], proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged"]


def test_cli_condense_json_and_errors(default_copy: Path, tmp_path: Path) -> None:
    out = tmp_path / "small"
    proc = run("casebase", "condense", str(default_copy), "-o", str(out), "--method", "sample", "--keep", "0.05", "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["kept"] + rep["removed"] == TOTAL and set(rep["coverage"]) == set(STREETS)
    assert isinstance(rep["seconds"], float)
    assert CaseBase.open(out).manifest.total_cases == rep["kept"]
    again = run("casebase", "condense", str(default_copy), "-o", str(out))
    assert again.returncode == 1 and len(again.stderr.strip().splitlines()) == 1
    assert again.stderr.strip() == f"error: {out} already exists; give a new name for the condensed case base"
    usage = run("casebase", "condense", str(default_copy), "-o", str(tmp_path / "x"), "--method", "edit")
    assert usage.returncode == 2 and not (tmp_path / "x").exists()


def test_condense_refuses_a_street_kept_empty(thin_flop: Path, tmp_path: Path) -> None:
    """A keep that leaves a street of the source with no case (a match would fail at its first
    decision there) is one error line, exit 1, nothing written, naming the keep it needs."""
    out = tmp_path / "k5"
    proc = run("casebase", "condense", str(thin_flop), "-o", str(out), "--keep", "0.0005", "--method", "sample")
    assert proc.returncode == 1 and not out.exists() and not list(tmp_path.iterdir())
    line, = proc.stderr.strip().splitlines()
    assert "keeps no case of the flop (500 cases)" in line and "keep at least 0.002 (1 / 500 cases on the flop)" in line
    # the keep it names is enough: every street keeps a case
    rep = condense(thin_flop, out, method="sample", keep=0.002)
    assert min(rep.kept_per_street.values()) >= 1


def test_condense_fold_warning_says_what_applies(thin_flop: Path, tmp_path: Path) -> None:
    """A condensed street that kept no fold case says the source had them (keep more), not that
    the logs showed cards only at showdown (the IRC database is not involved)."""
    rep = condense(thin_flop, tmp_path / "c", method="sample", keep=0.004)
    assert rep.kept_per_street["flop"] == 2
    folds = [w for w in rep.warnings if "no fold cases" in w]
    assert folds and all("IRC" not in w and "showdown" not in w for w in rep.warnings)
    assert any(w.startswith("flop:") and "the source has 35 fold cases on the flop and none was kept" in w
               for w in folds), folds


def test_competence_by_hand(default_copy: Path) -> None:
    rep = competence(default_copy, sample=300, k=5, eps=0.1, seed=4)
    cb = CaseBase.open(default_copy)
    try:
        s = "turn"
        n = cb.count(s)
        picked = np.sort(np.random.default_rng(4).choice(cb.count("preflop"), 300, replace=False))
        assert rep.per_street["preflop"]["sample"] == 300 and picked.size == 300
        # recompute the turn's reachability for its own sample, by hand, with one query at a time
        st = rep.per_street[s]
        assert st["cases"] == n and 0.0 <= st["pivotal"] == pytest.approx(1 - st["coverage"])
        assert len(rep.reach_sizes[s]) == 300 and max(rep.reach_sizes[s]) <= 5
        assert st["reachability"] == pytest.approx(np.mean(rep.reach_sizes[s]), abs=1e-3)
        assert rep.top and rep.top[0]["coverage"] >= rep.top[-1]["coverage"]
        X = cb.cases(s).features
        j = int(np.where(cb.cases(s).case_ids == rep.top[0]["case_id"])[0][0]) if rep.top[0]["street"] == s else None
        if j is not None:
            assert X[j].shape == (12,)
    finally:
        cb.close()


def test_cli_competence_plot(tmp_path: Path) -> None:
    require_module("matplotlib")
    png = tmp_path / "c.png"
    proc = run("casebase", "competence", "default", "--sample", "200", "--k", "5", "--plot", str(png), "--json")
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert set(rep["per_street"]) == set(STREETS)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = run("casebase", "competence", "default", "--plot", str(tmp_path / "c.txt"))
    assert bad.returncode == 2


def test_cli_competence_plot_says_where(tmp_path: Path) -> None:
    """Like ``cbr match --plot``, the text output says where the plot went."""
    require_module("matplotlib")
    png = tmp_path / "c.png"
    proc = run("casebase", "competence", "default", "--sample", "100", "--k", "5", "--top", "0", "--plot", str(png))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] == f"plot written to {png}"


def test_competence_shares_have_wilson_intervals(default_copy: Path) -> None:
    """A share of 1 (or 0) keeps an interval of positive width inside [0, 1] (Wilson, not the
    normal interval, which is 1.000 ± 0.000 there); the report's intervals hold their shares."""
    share, half, low, high = _proportion_ci(2000, 2000)
    assert (share, high) == (1.0, 1.0) and 0.998 < low < 1.0 and half == pytest.approx((1 - low) / 2)
    share, half, low, high = _proportion_ci(0, 2000)
    assert (share, low) == (0.0, 0.0) and 0.0 < high < 0.002
    rep = competence(default_copy, sample=200, k=5, eps=0.1, seed=1, top=0)
    for st in rep.per_street.values():
        for key in ("coverage", "pivotal"):
            low, high = st[f"{key}_interval"]
            assert 0.0 <= low <= st[key] <= high <= 1.0 and high > low
            assert st[f"{key}_ci"] == pytest.approx((high - low) / 2, abs=1e-4)


def test_diff_counts_and_answers(default_copy: Path, condensed: dict[str, Path]) -> None:
    rep = diff(default_copy, condensed["sample"], sample=400, seed=5)
    small = CaseBase.open(condensed["sample"])
    try:
        for s in STREETS:
            assert rep.counts["a"][s] == CaseBase.open(default_copy).count(s)
            assert rep.counts["b"][s] == small.count(s)
            # the sample is a subset: nothing only in B, and A's extra cases are exactly those removed
            assert rep.only[s] == {"a": rep.counts["a"][s] - rep.counts["b"][s], "b": 0}
            a = rep.answers[s]
            assert a["situations"] == 400 and 0 <= a["differ_max"] <= 1 and a["differ_max_ci"] > 0
    finally:
        small.close()
    assert sum(rep.sources["a"].values()) == TOTAL
    assert rep.origin is None


def test_diff_shares_have_the_wilson_intervals_of_competence() -> None:
    """`cbr casebase diff` showed `0.000 ± 0.000` where the votes never differed (the normal
    interval of a share of 0): the share of situations whose most likely actions differ has the
    Wilson interval competence's shares have, in --json and in the table."""
    rep = diff("default", "default", sample=100, seed=2)
    for s, a in rep.answers.items():
        share, half, low, high = _proportion_ci(0, a["situations"])
        assert a["differ_max"] == 0.0 and a["differ_max_interval"] == [0.0, round(high, 4)] and high > 0.0
        assert a["differ_max_ci"] == round(half, 4) > 0.0
    proc = run("casebase", "diff", "default", "default", "--sample", "100", "--seed", "2")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.lstrip("│ ").startswith(tuple(STREETS)) and "[" in line]
    assert len(rows) == len(rep.answers), proc.stdout
    for line in rows:
        assert "0.000 [0.000, 0.037]" in line and "0.000 ± 0.000" not in line, line


def test_diff_of_a_retained_copy_says_what_the_match_added(tmp_path: Path) -> None:
    proc = run("match", "-p", "cbr:casebase=default,call", "--hands", "20", "--retain-into", "./learned",
               "--seed", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    copy = tmp_path / "learned"
    rep = diff("default", copy, sample=100)
    assert rep.origin is not None and rep.origin["copy"] == "b" and rep.origin["matches"] == 1
    cb = CaseBase.open(copy)
    try:
        retained = cb.sql("SELECT count(*) FROM cases WHERE retained_at IS NOT NULL").fetchone()[0]
    finally:
        cb.close()
    assert rep.origin["retained_cases"] == retained > 0
    assert sum(rep.only[s]["b"] for s in STREETS) == retained and all(rep.only[s]["a"] == 0 for s in STREETS)
    text = run("casebase", "diff", "default", str(copy), "--sample", "50", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    said = " ".join(text.stdout.split())
    assert f"the matches added {retained} cases in 1 match (" in said
    # streets in the order of play, not by name (flop, preflop, river, turn), in --json and the line
    streets = list(rep.origin["retained"])
    assert len(streets) >= 3 and streets == [s for s in STREETS if s in streets]
    line = said[said.index("the matches added"):]
    assert sorted(streets, key=lambda s: re.search(rf"(?<![a-z]){s} ", line).start()) == streets, line
    # installed elsewhere then (the path a `pip install .` gave 'default'): the same case base still
    m = read_manifest(copy)
    m.origin["path"] = str(tmp_path / ".venv" / "site-packages" / "casebases" / "default")
    write_manifest(copy, m)
    moved = diff("default", copy, sample=50)
    assert moved.origin is not None and moved.origin["copy"] == "b" and moved.origin["retained_cases"] == retained


def test_diff_reports_the_similarity_settings_that_differ(tmp_path: Path) -> None:
    """A copy of the default base with another threshold and a flop weight showed no difference
    but the answers (`only in A 0 / only in B 0`): diff names each similarity setting that
    differs, in --json and a line each, and its closing line mentions them."""
    shutil.copytree(resolve_casebase("default"), tmp_path / "X")
    assert diff("default", tmp_path / "X", sample=20).similarity == []
    proc = run("casebase", "similarity", "X", "--threshold", "0.9", "--weight", "flop.pot_odds=70",
               "--no-rebuild", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    base = CaseBase.open(resolve_casebase("default"))
    try:
        old = base.similarity()
    finally:
        base.close()
    weight = old.street("flop").weights[list(old.street("flop").features).index("pot_odds")]
    expected = [{"setting": "threshold", "a": old.threshold, "b": 0.9},
                {"setting": "flop.pot_odds.weight", "a": float(weight), "b": 70.0}]
    assert weight != 70.0 and old.threshold != 0.9
    assert diff("default", tmp_path / "X", sample=20).similarity == expected
    assert diff(tmp_path / "X", "default", sample=20).similarity == [
        {"setting": d["setting"], "a": d["b"], "b": d["a"]} for d in expected]
    js = run("casebase", "diff", "default", "X", "--sample", "20", "--json", cwd=tmp_path)
    assert js.returncode == 0, js.stderr
    assert json.loads(js.stdout)["similarity"] == expected
    text = run("casebase", "diff", "default", "X", "--sample", "20", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    out = " ".join(text.stdout.split())
    assert f"similarity differs: threshold: A {old.threshold}, B 0.9" in out, out
    assert f"similarity differs: flop.pot_odds.weight: A {float(weight)}, B 70.0" in out, out
    assert "their similarity differs (threshold, flop.pot_odds.weight)" in out, out


def test_diff_of_a_retained_copy_names_its_other_similarity(tmp_path: Path) -> None:
    """The closing line of a retained copy said only what the matches added, though its
    threshold was not the base's."""
    proc = run("match", "-p", "cbr:casebase=default,call", "--hands", "5", "--retain-into", "./learned",
               "--seed", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = run("casebase", "similarity", "learned", "--threshold", "0.9", "--no-rebuild", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = run("casebase", "diff", "default", "learned", "--sample", "20", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    out = " ".join(text.stdout.split())
    line = next(ln for ln in text.stdout.splitlines() if "is a copy of default" in ln)
    assert "their similarity differs (threshold)" in line, out


def test_diff_refuses_other_feature_sets(tmp_path: Path) -> None:
    with CaseBaseWriter(tmp_path / "sartre", feature_set="sartre") as w:
        w.add_rows("preflop", np.zeros((3, 3), np.float32), "ccr", source="x")
    with pytest.raises(CaseBaseError, match="feature sets differ"):
        diff("default", tmp_path / "sartre")


def test_diff_on_held_out_situations(default_copy: Path, condensed: dict[str, Path]) -> None:
    """--holdout: the situations are the logs' own known-card decisions, as the feature set
    computes them; each vote is the base's at that row."""
    from tests.conftest import shared_path

    log = shared_path("acpc", "dealer_example_limit") / "2p.limit.h1000.r0.log"
    rep = diff(default_copy, condensed["sample"], sample=200, seed=6, holdout=[str(log)])
    assert rep.situations == "holdout"
    from cbr.query.maintenance import holdout_rows

    full = CaseBase.open(default_copy)
    small = CaseBase.open(condensed["sample"])
    try:
        rows = holdout_rows(full, [str(log)])
        assert sum(len(r) for r in rows.values()) > 1000
        s = "flop"
        # the rng draws the streets in order: recompute the preflop pick first, then the flop's
        rng = np.random.default_rng(6)
        rng.choice(len(rows["preflop"]), 200, replace=False)
        picked = rows[s][np.sort(rng.choice(len(rows[s]), 200, replace=False))]
        ta, tb = street_votes(full, s, picked), street_votes(small, s, picked)
        assert rep.answers[s]["differ_max"] == pytest.approx(float((ta.argmax(1) != tb.argmax(1)).mean()), abs=1e-4)
        assert rep.answers[s]["mean_tv"] == pytest.approx(float(tv_distance(ta, tb).mean()), abs=1e-4)
    finally:
        full.close()
        small.close()
    proc = run("casebase", "diff", str(default_copy), str(condensed["sample"]), "--sample", "50", "--holdout",
               str(log), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["situations"] == "holdout"


def test_cli_condense_table_groups_its_counts(tmp_path: Path) -> None:
    """Every count of the per-street table has thousands separators, the footprint's and the
    floor's too (a footprint of 1301 rows showed as `1301`). The whole default base: its flop
    footprint has thousands of rows (the 24k-case copy's stay under 1,000)."""
    proc = run("casebase", "condense", "default", "-o", str(tmp_path / "fp"))
    assert proc.returncode == 0, proc.stderr
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in proc.stdout.splitlines()
            if line.startswith("│") and line.split("│")[1].strip() in STREETS]
    assert [r[0] for r in rows] == list(STREETS)
    counts = [cell for r in rows for cell in r[1:5]]  # kept, removed, footprint, floor
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", cell) for cell in counts), rows
    footprints = [int(r[3].replace(",", "")) for r in rows]
    assert max(footprints) > 999, footprints  # a footprint large enough to need a separator
