"""answer(): the probability triple of a situation, checked against brute force.

The brute force here takes every case of the street, scores it with
cbr.similarity.global_similarity (the definition), keeps those at or above the threshold
or else the fallback_k best (ties by case id), and counts their actions.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cbr.acpc.matchstate import from_matchstate
from cbr.build.local import build_casebase
from cbr.errors import CaseBaseError
from cbr.game.gamedef import STREETS
from cbr.game.situation import situation
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.detect import read_logs
from cbr.logs.replay import replay
from cbr.play.match import run_match
from cbr.query.answer import QueryAnswer, answer
from cbr.similarity import default_casper, global_similarity
from cbr.store import CaseBase
from features.casper import CasperFeatures

ACTIONS = "fcr"


@pytest.fixture(scope="module")
def casebase(tmp_path_factory) -> CaseBase:
    """A small case base with real CASPER features from generated heads-up and 3p matches."""
    folder = tmp_path_factory.mktemp("q")
    with AcpcLogWriter(folder / "logs" / "hu.log") as log:
        run_match(["random", "raise"], 80, seed=21, log=log)
    with AcpcLogWriter(folder / "logs" / "p3.log") as log:
        run_match(["random", "call", "lag"], 80, seed=22, log=log)
    build_casebase([folder / "logs"], folder / "cb")
    cb = CaseBase.open(folder / "cb")
    yield cb
    cb.close()


@pytest.fixture(scope="module")
def queries() -> list:
    """Decision points of hands the case base has never seen (other seeds), all streets."""
    folder_dps = []
    for players, seed in ((["raise", "random"], 31), (["lag", "random", "call"], 32)):
        records: list = []

        class Keep:
            def write(self, record):
                records.append(record)

        run_match(players, 12, seed=seed, log=Keep())  # type: ignore[arg-type]
        for r in records:
            folder_dps.extend(replay(r))
    return [dp for dp in folder_dps if dp.hole is not None]


def brute_force(cb: CaseBase, dp, weighted: bool) -> tuple[np.ndarray, tuple[float, float, float], bool]:
    street = STREETS[dp.street]
    config = cb.similarity()
    q = CasperFeatures().row(dp)
    cases = cb.cases(street)
    sims = global_similarity(config.street(street), q, cases.features)
    ids = np.arange(len(sims))
    keep = sims >= config.threshold
    fallback = not keep.any()
    if fallback:
        order = np.lexsort((ids, -sims))[: config.fallback_k]
    else:
        chosen = ids[keep]
        order = chosen[np.lexsort((chosen, -sims[chosen]))]
    acts = cases.actions[order]
    w = sims[order] if weighted else np.ones(len(order))
    totals = [float(w[acts == a].sum()) for a in ACTIONS]
    total = sum(totals)
    return order, (totals[0] / total, totals[1] / total, totals[2] / total), fallback


def check(cb: CaseBase, dp, weighted: bool) -> QueryAnswer:
    ans = answer(cb, dp, weighted=weighted)
    ids, triple, fallback = brute_force(cb, dp, weighted)
    assert ans.fallback == fallback
    np.testing.assert_array_equal(ans.explanation.ids, ids)
    assert ans.triple == pytest.approx(triple, abs=1e-12)
    assert sum(ans.triple) == pytest.approx(1.0)
    assert ans.retrieved == len(ids)
    assert ans.passed == (0 if fallback else len(ids))
    return ans


def test_casebase_has_every_street(casebase: CaseBase) -> None:
    assert all(casebase.count(s) > 20 for s in STREETS)
    assert casebase.similarity() == default_casper()


@pytest.mark.parametrize("weighted", [False, True])
def test_triples_equal_brute_force(casebase: CaseBase, queries: list, weighted: bool) -> None:
    modes = {False: 0, True: 0}
    streets = set()
    for dp in queries:
        ans = check(casebase, dp, weighted)
        modes[ans.fallback] += 1
        streets.add(dp.street)
    assert streets == {0, 1, 2, 3}
    assert modes[False] > 0 and modes[True] > 0, modes  # both retrieval modes were exercised


def test_threshold_mode_on_a_known_case(casebase: CaseBase) -> None:
    """A decision replayed from the case base's own log finds itself with similarity 1."""
    src = Path(casebase.manifest.sources[0]["source"])
    record = next(r for r in read_logs([src]) if len(r.board) >= 3)
    dp = next(d for d in replay(record) if d.street == 1 and d.hole is not None)
    ans = check(casebase, dp, weighted=False)
    assert not ans.fallback and ans.passed >= 1
    top = ans.explanation.to_dict()["cases"][0]
    assert top["similarity"] == pytest.approx(1.0)
    assert all(v == pytest.approx(1.0) for v in top["local"].values())
    # the case that is itself: same hand, player and board
    assert any(p["hand_id"] == record.hand_id and p["player"] == dp.player and p["source"] == str(src)
               for p in ans.explanation.provenance)


def test_fallback_mode_on_an_unseen_table(casebase: CaseBase) -> None:
    """Ten players dealt: no 2-3 player case can reach 0.97 (players_dealt alone costs 20/360)."""
    dp = situation(hole="AhKh", board="2c7d9s", players=10, position=3, to_call=1, pot=12)
    ans = check(casebase, dp, weighted=False)
    assert ans.fallback and ans.passed == 0
    assert ans.retrieved == casebase.similarity().fallback_k
    assert 0 < ans.mean_similarity < ans.threshold


def test_weighted_and_unweighted_differ_as_the_formula_says(casebase: CaseBase) -> None:
    dp = situation(hole="7c2d", board="AsKsQs", players=6, position=0, pot=9)
    plain = answer(casebase, dp, weighted=False)
    heavy = answer(casebase, dp, weighted=True)
    np.testing.assert_array_equal(plain.explanation.ids, heavy.explanation.ids)
    sims = heavy.explanation.similarities
    acts = np.array(heavy.explanation.actions)
    expect_w = tuple(float(sims[acts == a].sum() / sims.sum()) for a in ACTIONS)
    expect_u = tuple(float((acts == a).mean()) for a in ACTIONS)
    assert heavy.triple == pytest.approx(expect_w, abs=1e-12)
    assert plain.triple == pytest.approx(expect_u, abs=1e-12)
    # default = the case base's weighted_triple setting (CASPER default: unweighted)
    assert answer(casebase, dp).triple == plain.triple
    assert heavy.to_dict()["weighted"] is True and plain.to_dict()["weighted"] is False


def test_explanation_carries_provenance(casebase: CaseBase, queries: list) -> None:
    dp = next(d for d in queries if d.street == 2)
    ans = answer(casebase, dp)
    table = casebase.table("turn")
    prov = ans.explanation.provenance
    assert prov is not None and len(prov) == ans.retrieved
    for case_id, p, action in zip(ans.explanation.ids, prov, ans.explanation.actions):
        row = table.slice(int(case_id), 1).to_pylist()[0]
        for col in ("source", "hand_id", "player", "position", "hole", "board", "history"):
            assert p[col] == row[col]
        assert action == row["action"]
        assert len(p["board"].replace(" ", "")) == 8  # four cards on the turn
    d = ans.to_dict(top=3)
    assert len(d["cases"]) == min(3, ans.retrieved)
    assert set(d["triple"]) == {"fold", "check_call", "bet_raise"}
    assert d["features"] == pytest.approx(dict(zip(CasperFeatures().feature_names(2),
                                                  CasperFeatures().row(dp).tolist())))
    json.dumps(ans.to_dict())  # plain data


def test_matchstate_and_situation_answer_alike(casebase: CaseBase) -> None:
    a = answer(casebase, from_matchstate("MATCHSTATE:1:0:crc/r:|AdQc/3h4cJh", casebase.games()[0]))
    # the same moment by numbers: flop, last to act, facing one bet, 5 small bets in the pot
    b = answer(casebase, situation(hole="AdQc", board="3h4cJh", players=2, position=1, to_call=1, pot=5,
                                   previous_round_bets=2, game=casebase.games()[0]))
    assert a.features == b.features
    assert a.triple == b.triple


def test_empty_street_is_a_case_base_error(tmp_path: Path) -> None:
    log = tmp_path / "preflop.log"
    log.write_text("STATE:0:rf:AsKs|2c3d:-10|10:p1|p2\nSTATE:1:f:7h2c|QdQs:10|-10:p2|p1\n")
    build_casebase([log], tmp_path / "cb")
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.count("preflop") == 2 and cb.count("flop") == 0
        assert answer(cb, situation(hole="AsKs")).retrieved == 2
        with pytest.raises(CaseBaseError, match="has no flop cases"):
            answer(cb, situation(hole="AsKs", board="2c7d9s"))


def test_query_and_the_cbr_bot_take_one_path(casebase: CaseBase, queries: list) -> None:
    """`cbr query` and the cbr bot retrieve the same cases and vote the same triple (the bot's
    made legal), on every street, in both retrieval modes."""
    from cbr.policies.base import legal_triple
    from cbr.policies.cbr_policy import CBRPolicy

    modes = set()
    with CBRPolicy(casebase=str(casebase.path), reuse="max-frequency") as bot:
        for dp in queries[::3]:
            ans = answer(casebase, dp)
            d = bot.decide(dp)
            assert d.triple == legal_triple(ans.triple, dp.legal)
            assert tuple(int(i) for i in d.case_ids) == ans.case_ids
            assert d.fallback == ans.fallback and d.retrieved == ans.retrieved
            modes.add(ans.fallback)
    assert modes == {False, True}


@pytest.mark.parametrize("top", [0, 1, 7])
def test_top_explains_fewer_cases_with_the_same_numbers(top: int) -> None:
    """answer(top=k) (what cbr query and cbr serve ask for) is answer() cut after k cases."""
    from cbr.store import resolve_casebase

    dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5, previous_round_bets=2)
    with CaseBase.open(resolve_casebase("default")) as cb:
        full, cut = answer(cb, dp).to_dict(), answer(cb, dp, top=top).to_dict()
    assert full["retrieved"] > 7 and len(cut["cases"]) == top
    assert cut["cases"] == full["cases"][:top]
    for key in ("triple", "retrieved", "passed_threshold", "features", "weights", "fallback"):
        assert cut[key] == full[key], key
    # with top the mean comes from the aggregate's similarity sum, added in another order
    assert cut["mean_similarity"] == pytest.approx(full["mean_similarity"], rel=1e-12, abs=0)
