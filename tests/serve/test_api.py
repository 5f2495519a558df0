"""The HTTP API through FastAPI's TestClient: the numbers of ``cbr query --json`` (which gives
its derived numbers to 6 digits, the API in full), the batch, re-use, retention
(token, shipped case bases, atomicity), the case bases, evaluation, policies, and every error status (422 naming the field, 404, 401, 403, 413, 503)."""
from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cbr.cli._output import json_ratio, json_triple
from cbr.game.gamedef import STREETS, preset
from cbr.store import CaseBase, resolve_casebase
from cli import app as cli_app
from tests.conftest import require_module
from tests.serve.conftest import TOKEN, make_client

require_module("fastapi", module_level=True)
require_module("httpx", module_level=True)

AUTH = {"Authorization": f"Bearer {TOKEN}"}

# (request fields, the same situation as cbr query options)
SITUATIONS = [
    ({"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2},
     ["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5", "--prev-bets", "2"]),
    ({"hole": "7c2d", "dealt": 3, "position": 0, "weighted": True},
     ["--hole", "7c2d", "--dealt", "3", "--position", "0", "--weighted"]),
    ({"hole": "KsKd", "board": "2c7h9dJs", "in_hand": 2, "weighted": False},
     ["--hole", "KsKd", "--board", "2c7h9dJs", "--in-hand", "2", "--unweighted"]),
    ({"matchstate": "MATCHSTATE:1:0:crc/r:|AsKs/Qh7h2c", "game": "holdem.limit.2p"},
     ["--matchstate", "MATCHSTATE:1:0:crc/r:|AsKs/Qh7h2c", "--game", "holdem.limit.2p"]),
]


def six(values: dict) -> dict:
    """``values`` as ``cbr query --json`` gives them: a triple to 6 decimals that sum to 1, other
    derived numbers to 6 significant digits."""
    if list(values) == ["fold", "check_call", "bet_raise"]:
        return dict(zip(values, json_triple(values.values())))
    return {k: json_ratio(v) for k, v in values.items()}


def cli_query(args: list[str]) -> dict:
    result = CliRunner().invoke(cli_app, ["query", *args, "--json", "--explain"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def decisions_in(state_lines: str) -> int:
    """Decisions in ACPC STATE lines: one per action letter of the betting field."""
    n = 0
    for line in state_lines.splitlines():
        if line.startswith("STATE:"):
            n += sum(line.split(":")[2].count(k) for k in "fcr")
    return n


def counts(path) -> dict[str, int]:
    with CaseBase.open(path) as cb:
        return {s: cb.count(s) for s in STREETS}


# ---- /retrieve -----------------------------------------------------------------------------
@pytest.mark.parametrize(("fields", "args"), SITUATIONS)
def test_retrieve_gives_the_numbers_of_cbr_query_json_explain(client, fields, args) -> None:
    r = client.post("/retrieve", json={**fields, "top": None})
    assert r.status_code == 200, r.text
    got, want = r.json(), cli_query(args)
    assert six(got["triple"]) == want["triple"]
    assert six(got["features"]) == want["features"]
    assert got["weights"] == want["weights"]
    assert json_ratio(got["mean_similarity"]) == want["mean_similarity"]
    for key in ("street", "retrieved", "passed_threshold", "fallback", "threshold", "weighted", "warnings"):
        assert got[key] == want[key], key
    assert len(got["cases"]) == len(want["cases"]) == want["retrieved"]
    for a, b in zip(got["cases"], want["cases"]):
        assert (a["id"], json_ratio(a["similarity"]), a["action"]) == (b["id"], b["similarity"], b["action"])
        assert six(a["local"]) == b["local"] and six(a["features"]) == b["features"]
        assert a["provenance"] == b["provenance"]


def test_retrieve_top_limits_the_cases_not_the_triple(client) -> None:
    fields = SITUATIONS[0][0]
    full = client.post("/retrieve", json={**fields, "top": None}).json()
    three = client.post("/retrieve", json={**fields, "top": 3}).json()
    none = client.post("/retrieve", json={**fields, "top": 0}).json()
    assert full["retrieved"] > 3
    assert three["cases"] == full["cases"][:3] and none["cases"] == []
    assert three["triple"] == none["triple"] == full["triple"]
    # each case says why it was near: a local similarity and a weight per feature
    assert set(three["cases"][0]["local"]) == set(full["weights"]) == set(full["features"])


def test_weighted_changes_the_vote_as_the_flag_does(client) -> None:
    base = SITUATIONS[0][0]
    w = client.post("/retrieve", json={**base, "weighted": True}).json()
    u = client.post("/retrieve", json={**base, "weighted": False}).json()
    assert w["weighted"] is True and u["weighted"] is False
    # /retrieve (top 5) sums the similarities without listing the hits, --explain (top null) over
    # the listed hits: the same weighted triple to float rounding; the unweighted counts are equal
    # exactly; cbr query --json --explain gives the listed hits' triple to 6 significant digits
    listed = client.post("/retrieve", json={**base, "weighted": True, "top": None}).json()["triple"]
    want = cli_query([*SITUATIONS[0][1], "--weighted"])["triple"]
    assert w["triple"].keys() == want.keys() == listed.keys()
    assert all(w["triple"][k] == pytest.approx(listed[k], rel=1e-12, abs=1e-15) for k in want)
    assert six(listed) == want
    unweighted = client.post("/retrieve", json={**base, "weighted": False, "top": None}).json()["triple"]
    assert u["triple"] == unweighted
    assert six(u["triple"]) == cli_query([*SITUATIONS[0][1], "--unweighted"])["triple"]


# ---- /retrieve/batch ----------------------------------------------------------------------
def test_batch_answers_each_situation_as_retrieve_does(client) -> None:
    items = [{**f, "top": 2} for f, _ in SITUATIONS]
    r = client.post("/retrieve/batch", json={"situations": items})
    assert r.status_code == 200, r.text
    answers = r.json()["answers"]
    assert len(answers) == len(items)
    for item, ans in zip(items, answers):
        assert ans == client.post("/retrieve", json=item).json()


def test_a_bad_situation_is_an_error_in_its_place_of_the_batch(client) -> None:
    items = [SITUATIONS[0][0], {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 4},
             {"hole": "AdQc", "casebase": "nope"}, SITUATIONS[1][0]]
    answers = client.post("/retrieve/batch", json={"situations": items}).json()["answers"]
    assert answers[0]["triple"] and answers[3]["triple"]
    assert answers[1]["error"]["status"] == 422
    assert answers[1]["error"]["detail"][0]["loc"] == ["body", "situations", 1, "pot"]
    assert answers[2]["error"]["status"] == 404
    bad_board = client.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "board": "3h4c"}]})
    assert bad_board.json()["answers"][0]["error"]["detail"][0]["loc"] == ["body", "situations", 0, "board"]


def test_batch_is_bounded(client) -> None:
    from cbr.serve.schemas import MAX_BATCH

    r = client.post("/retrieve/batch", json={"situations": [{"hole": "AdQc"}] * (MAX_BATCH + 1)})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "situations"]
    assert client.post("/retrieve/batch", json={"situations": []}).status_code == 422


def test_the_cases_a_batch_asks_for_are_bounded_before_any_work(engine) -> None:
    """256 situations of top 100,000 (a 7 KB body) made the server use 0.7 GB more and answer
    503 at 12.6 s against a 10 s limit; with a flop board, 200 with a 147 MB body. Now the
    situations' top summed is at most MAX_BATCH_CASES, refused at once with 422 naming the
    situation's top that goes over, before anything is retrieved."""
    from cbr.serve.schemas import MAX_BATCH, MAX_BATCH_CASES

    calls = []
    retrieve = engine.retrieve
    engine.retrieve = lambda situation: calls.append(1) or retrieve(situation)  # counts the work done
    try:
        with make_client(engine) as c:
            for board in (None, "3h4cJh"):
                spot = {"hole": "AdQc", "top": 100_000, **({"board": board} if board else {})}
                start = time.monotonic()
                r = c.post("/retrieve/batch", json={"situations": [spot] * MAX_BATCH})
                assert time.monotonic() - start < 2.0
                assert r.status_code == 422, r.status_code
                (problem,) = r.json()["detail"]
                assert problem["loc"] == ["body", "situations", 0, "top"] and problem["type"] == "FieldError"
                assert f"at most {MAX_BATCH_CASES:,} cases" in problem["msg"] and "100,000" in problem["msg"]
            # the situation that goes over is named; a top of null counts as the whole cap
            share = MAX_BATCH_CASES // 4
            r = c.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": share}] * 5})
            assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "situations", 4, "top"]
            r = c.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": 0},
                                                               {"hole": "AdQc", "top": None},
                                                               {"hole": "AdQc", "top": 1}]})
            assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "situations", 2, "top"]
            assert calls == []
            # up to the cap: answered
            r = c.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": share}] * 4})
            assert r.status_code == 200 and len(r.json()["answers"]) == 4 and len(calls) == 4
            r = c.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": None},
                                                               {"hole": "AdQc", "top": 0}]})
            assert r.status_code == 200 and r.json()["answers"][0]["cases"] != []
    finally:
        del engine.retrieve


def test_one_situation_is_bounded_as_a_batch_is(engine) -> None:
    """A single ``/retrieve`` (or ``/reuse``) was not capped as a batch is: ``top`` 100,000 was
    taken, and ``top`` null with ``k`` and ``min_cases`` at a million answered a whole street (the
    default case base's 32,875 preflop cases, 20 MB). Now ``top`` is at most MAX_BATCH_CASES,
    refused before any work with 422 on ``top`` as a batch's; ``top`` null lists at most as many
    and is refused (422 on ``top``, saying how many were retrieved) when more were retrieved."""
    from cbr.game.situation import situation
    from cbr.query.answer import answer
    from cbr.serve.schemas import MAX_BATCH_CASES
    from cbr.store import resolve_casebase

    calls = []
    described = engine.decision_point  # where /retrieve and /reuse start their work: counted
    engine.decision_point = lambda situation: calls.append(1) or described(situation)
    whole = {"hole": "AdQc", "top": None, "k": 1_000_000, "min_cases": 1_000_000}
    try:
        with make_client(engine) as c:
            for url, extra in (("/retrieve", {}), ("/reuse", {"policy": "call", "casebase": "default"})):
                calls.clear()
                start = time.monotonic()
                r = c.post(url, json={"hole": "AdQc", "top": MAX_BATCH_CASES + 1, **extra})
                assert time.monotonic() - start < 2.0
                assert r.status_code == 422, r.text[:300]
                (problem,) = r.json()["detail"]
                assert problem["loc"] == ["body", "top"] and problem["type"] == "FieldError", problem
                assert f"at most {MAX_BATCH_CASES:,} cases" in problem["msg"] and "10,001" in problem["msg"], problem
                assert calls == []
                # every retrieved case, more of them than an answer lists: refused, on top
                r = c.post(url, json={**whole, **extra})
                assert r.status_code == 422, r.text[:300]
                (problem,) = r.json()["detail"]
                with CaseBase.open(resolve_casebase("default")) as cb:
                    preflop = cb.count("preflop")
                assert preflop > MAX_BATCH_CASES
                assert problem["loc"] == ["body", "top"] and problem["type"] == "FieldError", problem
                assert f"{preflop:,} were retrieved" in problem["msg"], problem
                assert f"at most {MAX_BATCH_CASES:,} cases" in problem["msg"], problem
            # up to the cap: answered, top null listing every retrieved case as the library does
            r = c.post("/retrieve", json={"hole": "AdQc", "top": MAX_BATCH_CASES})
            assert r.status_code == 200 and len(r.json()["cases"]) == r.json()["retrieved"] < MAX_BATCH_CASES
            spot = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}
            r = c.post("/retrieve", json={**spot, "top": None})
            assert r.status_code == 200, r.text
            with CaseBase.open(resolve_casebase("default")) as cb:
                want = answer(cb, situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5,
                                            previous_round_bets=2)).to_dict(top=None)
            got = r.json()
            assert got["retrieved"] == want["retrieved"] == len(got["cases"]) > 5
            assert [(x["id"], x["similarity"]) for x in got["cases"]] == [(x["id"], x["similarity"]) for x in want["cases"]]
            # in a batch, such a situation is an error in its place (its top null counts as the cap)
            r = c.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": 0}, whole]})
            assert r.status_code == 200, r.text[:300]
            first, second = r.json()["answers"]
            assert first["retrieved"] > 0 and second["error"]["status"] == 422
            assert second["error"]["detail"][0]["loc"] == ["body", "situations", 1, "top"], second
    finally:
        del engine.decision_point


# ---- /reuse --------------------------------------------------------------------------------
def test_reuse_max_frequency_plays_the_most_likely_legal_action(client) -> None:
    fields = SITUATIONS[0][0]
    r = client.post("/reuse", json={**fields, "casebase": "default", "policy": "cbr:reuse=max-frequency", "seed": 1})
    assert r.status_code == 200, r.text
    body = r.json()
    d = body["decision"]
    assert d["reuse"] == "max-frequency" and d["why"]
    assert body["action"] == d["action"] == max(zip(d["triple"].values(), "fcr"))[1]
    assert d["played"][{"f": "fold", "c": "check_call", "r": "bet_raise"}[body["action"]]] == 1.0
    # the decision retrieves what /retrieve retrieves (a spot where every action is legal)
    assert d["triple"] == body["triple"] == client.post("/retrieve", json=fields).json()["triple"]
    assert d["retrieved"] == body["retrieved"]
    # the bot's most similar cases are the ones /retrieve shows (top: 5 by default)
    assert d["case_ids"] == [c["id"] for c in body["cases"]] and len(d["case_ids"]) == 5


def test_reuse_says_when_the_decisions_case_ids_are_fewer_than_asked(client) -> None:
    """``decision.case_ids`` with ``top`` null (every retrieved case) or over what a decision
    records (its 100 most similar cases) listed 100 of the 572 cases the decision retrieved
    and said nothing; ``top`` null of a bot retrieving a whole street (32,875 preflop cases,
    over the 10,000 an answer lists) was cut without a word too. ``case_ids_cut`` says so;
    it is null when ``case_ids`` lists what was asked."""
    from cbr.policies.cbr_policy import DECISION_CASES

    fields = {**SITUATIONS[0][0], "casebase": "default", "policy": "cbr:reuse=max-frequency", "seed": 1}
    body = client.post("/reuse", json={**fields, "top": None}).json()
    d = body["decision"]
    assert d["retrieved"] == body["retrieved"] > DECISION_CASES, d["retrieved"]
    # the decision's most similar cases, the first of every case the retrieval lists
    assert d["case_ids"] == [c["id"] for c in body["cases"][:DECISION_CASES]]
    assert d["case_ids_cut"] == (f"the {DECISION_CASES} most similar of the {d['retrieved']:,} cases the decision "
                                 f"retrieved: a decision records at most its {DECISION_CASES} most similar (its "
                                 "triple and counts come from all of them)"), d["case_ids_cut"]
    for top, cut in ((5, False), (DECISION_CASES, False), (DECISION_CASES + 50, True)):
        d = client.post("/reuse", json={**fields, "top": top}).json()["decision"]
        assert len(d["case_ids"]) == min(top, DECISION_CASES)
        assert (d["case_ids_cut"] is not None) == cut, (top, d["case_ids_cut"])
    # a bot that retrieves a whole street (threshold 0), the request's own retrieval a few cases
    r = client.post("/reuse", json={"hole": "AdQc", "casebase": "default", "policy": "cbr:threshold=0",
                                    "top": None, "threshold": 1.0, "k": 1})
    assert r.status_code == 200, r.text
    d = r.json()["decision"]
    with CaseBase.open(resolve_casebase("default")) as cb:
        assert d["retrieved"] == cb.count("preflop") > 10_000
    assert len(d["case_ids"]) == DECISION_CASES
    assert f"of the {d['retrieved']:,} cases the decision retrieved" in d["case_ids_cut"], d["case_ids_cut"]
    # a decision that retrieved fewer than it records lists them all
    d = client.post("/reuse", json={"hole": "AdQc", "casebase": "default", "policy": "cbr:threshold=1:fallback_k=7",
                                    "top": None}).json()["decision"]
    assert len(d["case_ids"]) == d["retrieved"] <= DECISION_CASES and d["case_ids_cut"] is None, d


def test_reuse_same_seed_same_action_and_seeds_draw_from_the_triple(client) -> None:
    fields = {**SITUATIONS[0][0], "policy": "cbr", "top": 0}
    first = [client.post("/reuse", json={**fields, "seed": s}).json()["action"] for s in range(30)]
    again = [client.post("/reuse", json={**fields, "seed": s}).json()["action"] for s in range(30)]
    assert first == again
    # the triple gives each action at least 10%: 30 draws show more than one of them
    assert len(set(first)) > 1 and set(first) <= set("fcr")


def test_reuse_other_policies(client) -> None:
    r = client.post("/reuse", json={"hole": "AsAh", "policy": "ehs", "top": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["policy"] == "ehs" and body["action"] in "fcr"
    t = body["decision"]["triple"]
    assert abs(sum(t.values()) - 1.0) < 1e-9


def test_reuse_errors(client) -> None:
    # an unknown policy is a bad value of the field (was 404): 422 on `policy`, the shape of the
    # web table's refusal of an unknown bot
    r = client.post("/reuse", json={"hole": "AsAh", "policy": "nosuchbot"})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == [{"loc": ["body", "policy"], "type": "FieldError",
                                   "msg": r.json()["detail"][0]["msg"]}]
    assert r.json()["detail"][0]["msg"].startswith("unknown policy 'nosuchbot'; known policies: ")
    r = client.post("/reuse", json={"hole": "AsAh", "policy": "cbr:casebase=/etc"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "policy"]
    r = client.post("/reuse", json={"hole": "AsAh", "policy": "cbr:reuse=greedy"})
    assert r.status_code == 422 and "greedy" in r.json()["detail"][0]["msg"]
    assert r.json()["detail"][0]["loc"] == ["body", "policy"]
    assert "'cbr:reuse=greedy'" in r.json()["detail"][0]["msg"] and "casebase=" not in r.json()["detail"][0]["msg"]


# ---- /retain -------------------------------------------------------------------------------
def test_retain_needs_the_token(client, casebase_copy, acpc_hands) -> None:
    before = counts(casebase_copy)
    body = {"casebase": "mine", "text": acpc_hands}
    r = client.post("/retain", json=body)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    r = client.post("/retain", json=body, headers={"Authorization": "Bearer wrong-token-0123456789"})
    assert r.status_code == 401
    assert counts(casebase_copy) == before


def test_retain_keeps_every_decision_durably(client, casebase_copy, acpc_hands) -> None:
    before = counts(casebase_copy)
    r = client.post("/retain", json={"casebase": "mine", "text": acpc_hands}, headers=AUTH)
    assert r.status_code == 200, r.text
    body = r.json()
    expected = decisions_in(acpc_hands)
    assert expected > 0 and body["cases"] == expected and body["hands"] == 10
    after = counts(casebase_copy)  # a new handle: what is on disk
    assert sum(after.values()) - sum(before.values()) == expected
    assert {s: after[s] - before[s] for s in STREETS} == body["added"]
    with CaseBase.open(casebase_copy) as cb:
        n, = cb.sql(f"SELECT count(*) FROM cases WHERE source = 'retained' "
                    f"AND match_id = '{body['match_id']}'").fetchone()
    assert n == expected
    # the server's own handle sees them too
    listed = {c["name"]: c for c in client.get("/casebases").json()["casebases"]}
    assert listed["mine"]["counts"] == after


def test_retain_phh_and_a_given_game(client, casebase_copy, acpc_hands) -> None:
    from cbr.logs.acpc import AcpcParser
    from cbr.logs.phh import phh_text, phhs_table

    records = [h for h in AcpcParser().parse_text(acpc_hands, "x") if hasattr(h, "hand_id")][:2]
    before = sum(counts(casebase_copy).values())
    phh = "".join(phhs_table(k, phh_text(rec)) for k, rec in enumerate(records, 1))
    r = client.post("/retain", json={"casebase": "mine", "format": "phh", "text": phh}, headers=AUTH)
    assert r.status_code == 200, r.text
    states = "\n".join(line for line in acpc_hands.splitlines() if line.startswith("STATE:"))
    r2 = client.post("/retain", json={"casebase": "mine", "text": states, "game": "holdem.limit.2p"}, headers=AUTH)
    assert r2.status_code == 200, r2.text
    want = decisions_in("\n".join(states.splitlines()[:2])) + decisions_in(states)
    assert r.json()["cases"] + r2.json()["cases"] == want
    assert sum(counts(casebase_copy).values()) - before == want


def test_retain_refuses_the_shipped_case_base(client, acpc_hands) -> None:
    from cbr.store import resolve_casebase

    path = resolve_casebase("default")
    before = counts(path)
    r = client.post("/retain", json={"casebase": "default", "text": acpc_hands}, headers=AUTH)
    assert r.status_code == 403
    # the web table's plain words: served names only, no server path, no shell command over HTTP
    assert r.json()["detail"] == ("retention refused: the shipped case base 'default' is never written to; retain "
                                  "into a writable case base this server serves (mine)")
    assert counts(path) == before


def test_a_bad_hand_fails_the_whole_request_and_writes_nothing(client, casebase_copy, acpc_hands) -> None:
    before = counts(casebase_copy)
    good = [line for line in acpc_hands.splitlines() if line.startswith("STATE:")]
    bad = good[0].replace("|", "|XxYy", 1)  # an unknown card
    r = client.post("/retain", json={"casebase": "mine", "text": "\n".join([*good[:3], bad])}, headers=AUTH)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body"]
    assert ":4:" in r.json()["detail"][0]["msg"]  # names the line
    assert counts(casebase_copy) == before


def test_a_hand_whose_payoffs_contradict_its_cards_is_refused(client, casebase_copy) -> None:
    """ThQh's pair of queens beats 6hJc's pair of jacks: a log that pays 6hJc would store
    wrong outcomes, which the cbr bot weights its votes by."""
    before = counts(casebase_copy)
    wrong = "STATE:7:crc/cc/cc/rc:ThQh|6hJc/7s4s9h/Jd/Qd:-40|40:a|b\n"
    r = client.post("/retain", json={"casebase": "mine", "text": wrong}, headers=AUTH)
    assert r.status_code == 422 and "payoffs do not match" in r.json()["detail"][0]["msg"], r.text
    assert counts(casebase_copy) == before
    right = wrong.replace("-40|40", "40|-40")
    assert client.post("/retain", json={"casebase": "mine", "text": right}, headers=AUTH).status_code == 200


def test_a_showdown_that_omits_a_hole_card_is_held_to_its_pot(client, casebase_copy) -> None:
    """Issue 35: without p2's cards the payoff check was skipped, and a pot of 40 paid +1000
    (stored as an outcome of +100 small bets)."""
    before = counts(casebase_copy)
    wrong = "STATE:0:cc/crc/cc/cc:5d5c|/8dAs8s/4h/6d:1000|-1000:p1|p2\n"
    r = client.post("/retain", json={"casebase": "mine", "text": wrong}, headers=AUTH)
    assert r.status_code == 422 and "payoffs do not match" in r.json()["detail"][0]["msg"], r.text
    assert "from a pot of 40" in r.json()["detail"][0]["msg"]
    assert counts(casebase_copy) == before
    right = wrong.replace("1000|-1000", "20|-20")
    r = client.post("/retain", json={"casebase": "mine", "text": right}, headers=AUTH)
    assert r.status_code == 200 and r.json()["cases"] > 0, r.text


def test_retain_reads_no_game_file_a_header_names(client, casebase_copy, acpc_hands, tmp_path, monkeypatch) -> None:
    """Issue 35, defect 18: a `/retain` text whose ACPC header named a game file
    (`# name/game/hands/seed x ../outside/odd.game`) made the server read that file when a file
    named `request` (the text's source name) was in its working folder: a client chose a path
    the server read. Now a request's text reads no file; the game is inferred from the lines."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "request").write_text("")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "odd.game").write_text("GAMEDEF\nlimit\nnumPlayers = 2\nEND GAMEDEF\n")  # unreadable as a game
    monkeypatch.chdir(work)
    states = [line for line in acpc_hands.splitlines() if line.startswith("STATE:")][:2]
    text = "\n".join(["# name/game/hands/seed x ../outside/odd.game 2 1", *states]) + "\n"
    before = sum(counts(casebase_copy).values())
    r = client.post("/retain", json={"casebase": "mine", "text": text}, headers=AUTH)
    assert r.status_code == 200, r.text  # before: 422 "cannot read the game file '../outside/odd.game'"
    assert r.json()["cases"] == decisions_in(text) and "odd.game" not in r.text
    assert sum(counts(casebase_copy).values()) - before == decisions_in(text)


def test_retain_unknown_case_base_and_a_server_without_token(client, engine, acpc_hands) -> None:
    r = client.post("/retain", json={"casebase": "nope", "text": acpc_hands}, headers=AUTH)
    assert r.status_code == 404
    with make_client(engine) as no_token:
        r = no_token.post("/retain", json={"casebase": "mine", "text": acpc_hands}, headers=AUTH)
        assert r.status_code == 403 and "takes no writes" in r.json()["detail"], r.text


# ---- errors --------------------------------------------------------------------------------
#: The heads-up game with a NaN small blind (pot odds came out 0 where the spot has 0.25).
NAN_BLIND_GAME = json.dumps({**preset("holdem.limit.2p").to_dict(), "blinds": [10.0, math.nan]})

@pytest.mark.parametrize(("fields", "loc", "word"), [
    ({"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 4}, ["body", "pot"], "pot"),
    ({"hole": "AdQx"}, ["body", "hole"], "Qx"),
    ({"hole": "AdQc", "board": "3h4cZz"}, ["body", "board"], "Zz"),
    ({"hole": "AdQc", "dealt": 99}, ["body", "dealt"], "12"),
    ({"hole": "AdQc", "board": "3h4c"}, ["body", "board"], "board"),
    ({"hole": "AdQc", "board": "3h4cAd"}, ["body", "board"], "Ad"),
    ({"hole": "AdQc", "colour": "red"}, ["body", "colour"], "xtra"),
    ({"hole": "AdQc", "matchstate": "MATCHSTATE:0:0::AsKs|"}, ["body", "matchstate"], "matchstate"),
    ({"board": "3h4cJh"}, ["body", "hole"], "hole"),
    ({"matchstate": "MATCHSTATE:0:0:zz:AsKs|"}, ["body", "matchstate"], "zz"),
    ({"hole": "AdQc", "game": "/etc/passwd"}, ["body", "game"], "game"),
    ({"hole": "AdQc", "game": NAN_BLIND_GAME}, ["body", "game"], "blind nan"),
    ({"hole": "AdQc", "game": NAN_BLIND_GAME.replace("NaN", "1e308")}, ["body", "game"], "blind 1e+308"),
])
def test_bad_input_is_422_with_the_field_and_the_reason(client, fields, loc, word) -> None:
    r = client.post("/retrieve", json=fields)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"][0]
    assert detail["loc"] == loc
    assert word.lower() in detail["msg"].lower()


def test_our_own_checks_name_their_field_without_pydantics_prefix(client) -> None:
    """The MATCHSTATE errors pointed at the body (``loc ["body"]``), not the field, and our own
    checks' messages kept pydantic's ``Value error, `` prefix."""
    for body, loc, msg in [
        ({"hole": "AdQc", "matchstate": "MATCHSTATE:0:0::AsKs|"}, ["body", "matchstate"],
         "a matchstate describes the whole situation: leave out hole"),
        ({"board": "3h4cJh"}, ["body", "hole"], "no situation: give hole (and board, to_call, ...) or matchstate"),
        ({"matchstate": "MATCHSTATE:0:0:zz:AsKs|"}, ["body", "matchstate"], "betting 'zz': unexpected 'z' at character 1"),
    ]:
        r = client.post("/retrieve", json=body)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == loc, r.text
        assert r.json()["detail"][0]["msg"] == msg, r.text
        assert r.json()["detail"][0]["type"] == "FieldError", r.text  # not pydantic's value_error
    r = client.post("/retrieve/batch", json={"situations": [{"hole": "AdQc"}, {"hole": "AdQc", "matchstate": "x"}]})
    detail = r.json()["detail"][0]
    assert r.status_code == 422 and detail["loc"][-1] == "matchstate" and not detail["msg"].startswith("Value error")


def test_retain_with_a_game_names_the_line_of_the_text(client, casebase_copy) -> None:
    """``/retain`` with ``"game"`` reported ``request:2 (hand 0)`` for a one-line text: the game
    was put before the text as a header line."""
    bad = "STATE:0:cc/cc/cc/cc:AhKh|QdQc/2c3c4c/5c/6c:40|-40:a|b"  # a showdown whose payoffs are wrong
    r = client.post("/retain", json={"casebase": "mine", "text": bad, "game": "holdem.limit.2p"}, headers=AUTH)
    assert r.status_code == 422, r.text
    msg = r.json()["detail"][0]["msg"]
    assert "request:1" in msg and "request:2" not in msg, msg


def test_a_refused_retain_hand_is_named_as_every_command_names_a_skipped_hand(client, casebase_copy,
                                                                            tmp_path) -> None:
    """``/retain`` named a hand that does not replay ``request:2 (hand 7): ...``, the engine's
    words, while every command names a skipped hand ``FILE:LINE: (hand N): ...``
    (:func:`cbr.logs.record.skipped_hand`): the request's text is the file, ``request``, its
    line where the hand starts and the hand's own number in the log, as ``cbr build`` says it."""
    from cbr.logs.replay import ReplayedLogs

    good = "STATE:0:f:AhKh|QdQc:5|-5:a|b"
    bad = "STATE:7:cc/cc/cc/cc:AhKh|QdQc/2c3c4c/5c/6c:40|-40:a|b"  # a showdown whose payoffs are wrong
    before = counts(casebase_copy)
    r = client.post("/retain", json={"casebase": "mine", "text": f"{good}\n{bad}\n"}, headers=AUTH)
    assert r.status_code == 422, r.text
    (detail,) = r.json()["detail"]
    assert detail["loc"] == ["body"], detail
    assert detail["msg"].startswith("request:2: (hand 7): payoffs do not match: "), detail
    assert counts(casebase_copy) == before  # all or nothing: the good hand is not kept either
    # the same text read from a file by the commands' replay: the same words after the file's name
    log = tmp_path / "request"
    log.write_text(f"{good}\n{bad}\n")
    logs = ReplayedLogs([str(log)])
    assert sum(1 for _ in logs) == 1
    (said,) = logs.skipped
    assert said.replace(str(log), "request", 1) == detail["msg"]


def test_retain_with_a_game_of_other_seats_names_the_requests_game(client, casebase_copy) -> None:
    """The game of a ``/retain`` request's ``game`` field was called "the header's game", though
    the text has no header: the refusal names where the game came from."""
    hand = "STATE:0:f:AhKh|QdQc:5|-5:a|b"  # two players
    before = counts(casebase_copy)
    r = client.post("/retain", json={"casebase": "mine", "text": hand, "game": "holdem.limit.3p"}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["msg"] == "request:1: (hand 0): 2 players but the request's game 'holdem.limit.3p' seats 3"
    header = "# name/game/hands/seed dealer holdem.limit.3p.game 1 1\n"  # the ACPC dealer's header
    r = client.post("/retain", json={"casebase": "mine", "text": header + hand}, headers=AUTH)
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["msg"] == "request:2: (hand 0): 2 players but the header's game 'holdem.limit.3p' seats 3"
    assert r.json()["detail"][0]["loc"] == ["body"]  # the text's own header: not the field game
    assert counts(casebase_copy) == before


def test_a_wrong_game_at_retain_is_422_on_the_game_field(client, casebase_copy) -> None:
    """A ``/retain`` game the hands do not fit (other seats, a game for PHH text, which names its
    own) was 422 on ``["body"]``; it is on ``["body", "game"]``, as an unknown game is and as
    ``/retrieve`` locates its ``game``."""
    hand = "STATE:0:f:AhKh|QdQc:5|-5:a|b"  # two players
    phh = 'variant = "FT"\nantes = [0, 0]\nblinds_or_straddles = [5, 10]\nmin_bet = 10\n'
    before = counts(casebase_copy)
    for body, msg in (
        ({"text": hand, "game": "holdem.limit.3p"}, "request:1: (hand 0): 2 players but the request's game 'holdem.limit.3p' "
                                                    "seats 3"),
        ({"text": hand, "game": "nosuch"}, "unknown game 'nosuch'; known: "),
        ({"text": phh, "format": "phh", "game": "holdem.limit.2p"},
         "a PHH hand names its own game (variant, blinds): leave out game"),
    ):
        r = client.post("/retain", json={"casebase": "mine", **body}, headers=AUTH)
        assert r.status_code == 422, r.text
        detail = r.json()["detail"]
        assert len(detail) == 1 and detail[0]["loc"] == ["body", "game"] and detail[0]["type"] == "FieldError", detail
        assert detail[0]["msg"].startswith(msg), detail
    r = client.post("/retrieve", json={"hole": "AdQc", "game": "nosuch"})
    assert r.json()["detail"][0]["loc"] == ["body", "game"] and r.json()["detail"][0]["msg"].startswith(
        "unknown game 'nosuch'; known: ")  # the same words at both endpoints
    assert counts(casebase_copy) == before


def test_not_json_is_422_and_unknown_names_404(client) -> None:
    r = client.post("/retrieve", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json() == {"detail": [{"loc": ["body"], "msg": "the body is not JSON: Expecting property name enclosed "
                                    "in double quotes at line 1 column 2", "type": "json_invalid"}]}
    assert client.post("/retrieve", json={"hole": "AdQc", "casebase": "nope"}).status_code == 404
    assert client.get("/casebases/nope").status_code == 404
    assert client.post("/evaluate", json={"casebase": "nope"}).status_code == 404
    assert client.get("/no/such/path").status_code == 404


def test_a_body_that_is_not_json_is_a_sentence_on_body_at_every_post_endpoint(client) -> None:
    """``{bad json`` was answered with FastAPI's bare ``{"loc": ["body", 1], "msg": "JSON decode
    error"}``: now a sentence saying what and where (line and column), on ``["body"]``, as the
    server's other refusals of the body as a whole, on every endpoint that reads a body."""
    from fastapi.routing import APIRoute

    paths = sorted(r.path for r in client.app.routes
                   if isinstance(r, APIRoute) and "POST" in r.methods and r.body_field is not None)
    assert {"/retrieve", "/retrieve/batch", "/reuse", "/retain", "/evaluate", "/table/sessions",
            "/table/sessions/{session_id}/action"} <= set(paths), paths
    sid = client.post("/table/sessions", json={"bots": ["call"], "seed": 1}).json()["session"]
    for path in paths:
        url = path.replace("{session_id}", sid)
        for body, msg in [(b"{bad json", "Expecting property name enclosed in double quotes at line 1 column 2"),
                          (b'{"hole": "AdQc",\n "pot": }', "Expecting value at line 2 column 9"),
                          (b'{"hole": "AdQc"} x', "Extra data at line 1 column 18")]:
            r = client.post(url, content=body, headers={"content-type": "application/json", **AUTH})
            assert r.status_code == 422, (path, r.text)
            assert r.json() == {"detail": [{"loc": ["body"], "msg": f"the body is not JSON: {msg}",
                                            "type": "json_invalid"}]}, path
    assert client.delete(f"/table/sessions/{sid}").status_code == 200


@pytest.mark.parametrize("body, msg", [
    (b'{"hole": "AdQc", "x": ' + b"[" * 20000 + b"]" * 20000 + b"}",
     "the body is not JSON that can be read (nested too deeply)"),
    (b"[" * 100000, "the body is not JSON that can be read (nested too deeply)"),
    # was "the body is not JSON that can be read (UnicodeDecodeError)": a class name, not a sentence
    (b'{"hole": "Ad\xffQc"}', "the body is not UTF-8 text (byte 0xff at position 12)"),
    (b'\xe9', "the body is not UTF-8 text (byte 0xe9 at position 0)"),
])
def test_a_body_json_cannot_read_is_422_as_the_docs_say(client, body, msg) -> None:
    """JSON nested thousands deep was answered `400 There was an error parsing the body`."""
    for path in ("/retrieve", "/retain"):
        r = client.post(path, content=body, headers={"content-type": "application/json", **AUTH})
        assert r.status_code == 422, r.text
        assert r.json()["detail"] == [{"loc": ["body"], "msg": msg, "type": "json_invalid"}]
    assert client.get("/no/such/path").json() == {"detail": "Not Found"}  # other HTTP errors as before


def test_an_empty_case_base_name_is_422_on_every_endpoint(client, casebase_copy) -> None:
    """`"casebase": ""` was answered from `default` by /retrieve and /reuse but 404 by /evaluate and
    /retain: one rule now, an empty name is no name."""
    before = counts(casebase_copy)
    for path, body in [("/retrieve", {"hole": "AdQc"}), ("/reuse", {"hole": "AdQc"}),
                       ("/evaluate", {"max_decisions": 5}), ("/retain", {"text": "STATE:0:f:AsKs|2c3d:-5|5:a|b"})]:
        r = client.post(path, json={**body, "casebase": ""}, headers=AUTH)
        assert r.status_code == 422, (path, r.text)
        assert r.json()["detail"][0]["loc"] == ["body", "casebase"], (path, r.text)
    assert counts(casebase_copy) == before


def test_body_over_the_limit_is_413_and_the_server_goes_on(engine) -> None:
    with make_client(engine, max_body_bytes=2048) as c:
        r = c.post("/retrieve", content=json.dumps({"hole": "AdQc", "pad": "x" * 5000}),
                   headers={"content-type": "application/json"})
        assert r.status_code == 413 and "2048" in r.json()["detail"]

        def chunks():  # no Content-Length: counted while read
            yield b'{"hole": "AdQc", "game": "'
            for _ in range(10):
                yield b"x" * 1000
            yield b'"}'

        r = c.post("/retrieve", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413
        assert c.post("/retrieve", json={"hole": "AdQc"}).status_code == 200


def test_over_the_time_limit_is_503_and_a_late_retain_writes_nothing(engine, casebase_copy, acpc_hands) -> None:
    with make_client(engine, time_limit=1e-6, token=TOKEN) as c:
        r = c.post("/evaluate", json={"casebase": "default", "folds": 2, "max_decisions": 50})
        assert r.status_code == 503 and "time limit" in r.json()["detail"]
        before = counts(casebase_copy)
        r = c.post("/retain", json={"casebase": "mine", "text": acpc_hands}, headers=AUTH)
        assert r.status_code == 503
        time.sleep(1.0)  # the worker thread stopped before its write
        assert counts(casebase_copy) == before
        assert c.get("/health").status_code == 200


def test_a_batch_over_the_time_limit_is_503_every_time(engine) -> None:
    """256 situations asking for every retrieved case (now over the batch's cap of cases: as many
    as it allows): answered 503 at 10 s twice, then 200 at
    16-18 s, since the JSON was written on the event loop, outside the limit. Now the JSON is
    written in the pool under the limit, and the work checks the limit between situations."""
    from cbr.serve.schemas import MAX_BATCH_CASES

    big = {"situations": [{"hole": "AdQc", "top": MAX_BATCH_CASES // 256}] * 256}
    calls = []
    retrieve = engine.retrieve
    engine.retrieve = lambda situation: calls.append(1) or retrieve(situation)  # counts the work done
    try:
        with make_client(engine, time_limit=1e-6) as c:
            for _ in range(3):
                r = c.post("/retrieve/batch", json=big)
                assert r.status_code == 503 and "time limit" in r.json()["detail"], r.status_code
            seen, end = -1, time.monotonic() + 60
            while len(calls) != seen and time.monotonic() < end:  # until the workers are idle
                seen = len(calls)
                time.sleep(1.0)
        assert len(calls) < 3 * 256 / 10, len(calls)  # before: every situation of every batch was answered
    finally:
        del engine.retrieve
    with make_client(engine) as c:
        r = c.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "top": 1}] * 2})
        assert r.status_code == 200 and [len(a["cases"]) for a in r.json()["answers"]] == [1, 1]


# ---- the rest ------------------------------------------------------------------------------
def test_health_and_openapi(client) -> None:
    h = client.get("/health").json()
    assert h["status"] == "ok" and h["casebases"] == ["default", "mine"] and h["writes"] is True
    spec = client.get("/openapi.json").json()
    for path in ("/retrieve", "/retrieve/batch", "/reuse", "/retain", "/casebases", "/casebases/{name}",
                 "/evaluate", "/policies", "/health"):
        assert path in spec["paths"], path
    assert {"401", "403", "422"} <= set(spec["paths"]["/retain"]["post"]["responses"])
    assert spec["components"]["schemas"]["Situation"]["properties"]["hole"]
    assert client.get("/docs").status_code == 200


def test_casebases_list_and_inspect(client) -> None:
    from cbr.store import inspect, resolve_casebase

    listed = {c["name"]: c for c in client.get("/casebases").json()["casebases"]}
    assert listed["default"]["shipped"] is True and listed["default"]["writable"] is False
    assert listed["mine"]["shipped"] is False and listed["mine"]["writable"] is True
    info = client.get("/casebases/default").json()
    with CaseBase.open(resolve_casebase("default")) as cb:
        want = inspect(cb)
        threshold = cb.similarity().threshold
    assert info["counts"] == want["counts"] and info["sources"] == want["sources"]
    assert info["feature_set"] == "casper"
    assert info["similarity_config"]["threshold"] == pytest.approx(threshold)
    flop = [f["feature"] for f in info["similarity_config"]["streets"]["flop"]]
    assert flop == list(info["features"]["flop"])


def test_inspect_names_the_case_base_not_its_path_on_the_server(client, casebase_copy) -> None:
    """``GET /casebases/{name}`` answered the case base's folder on the server (``path``) and
    where each source log was read, as ``cbr casebase inspect --json`` prints them; an HTTP
    answer names a case base by its served name."""
    from cbr.store import resolve_casebase

    for name, folder in (("mine", casebase_copy), ("default", resolve_casebase("default"))):
        r = client.get(f"/casebases/{name}")
        assert r.status_code == 200, r.text
        info = r.json()
        assert info["name"] == name and "path" not in info, sorted(info)
        assert all("path" not in e and e["source"] for e in info["source_files"]), info["source_files"]
        assert str(Path(folder).resolve()) not in r.text and str(Path(folder).resolve().parent) not in r.text


def test_the_list_of_case_bases_names_no_path_on_the_server(client, casebase_copy) -> None:
    """``GET /casebases`` listed each case base's folder on the server (``path``) after
    ``GET /casebases/{name}`` had stopped giving it: the list names them by their served names."""
    from cbr.store import resolve_casebase

    r = client.get("/casebases")
    assert r.status_code == 200, r.text
    listed = r.json()["casebases"]
    assert [c["name"] for c in listed] == ["default", "mine"]
    for entry in listed:
        assert "path" not in entry, sorted(entry)
        assert set(entry) == {"name", "feature_set", "counts", "total", "shipped", "writable"}, sorted(entry)
    for folder in (casebase_copy, resolve_casebase("default")):
        assert str(Path(folder).resolve().parent) not in r.text and str(Path(folder).parent) not in r.text


def test_evaluate_is_bounded(client) -> None:
    r = client.post("/evaluate", json={"casebase": "default", "folds": 2, "max_decisions": 30, "seed": 1})
    assert r.status_code == 200, r.text
    ev = r.json()
    assert ev["max_decisions"] == 30 and ev["folds"] == 2
    assert [s["street"] for s in ev["streets"]] == [*STREETS, "all"]
    assert all(s["decisions"] <= 30 for s in ev["streets"][:-1])
    r = client.post("/evaluate", json={"casebase": "default", "max_decisions": 10**9})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "max_decisions"]


def test_an_evaluation_with_the_ann_stops_at_its_time_limit(engine) -> None:
    """Issue 35, defect 17: `/evaluate` with the ANN was answered 503 at its time limit but kept
    training in the server's worker pool for tens of seconds, starving `/retrieve`. Now it runs in
    a process of its own, killed at the limit: nothing of it is left working after the 503."""
    import multiprocessing

    with make_client(engine, time_limit=3.0) as c:
        r = c.post("/evaluate", json={"casebase": "default", "folds": 3, "max_decisions": 200, "ann": True})
        assert r.status_code == 503 and "time limit" in r.json()["detail"], r.text
        time.sleep(0.5)
        assert not multiprocessing.active_children()
        cpu = time.process_time()
        time.sleep(3.0)
        assert time.process_time() - cpu < 0.5  # before: a core busy training (3 s of CPU in 3 s)
        start = time.monotonic()
        assert c.post("/retrieve", json={"hole": "AdQc", "top": 0}).status_code == 200
        assert time.monotonic() - start < 2.0


@pytest.fixture(scope="module")
def small_casebase(tmp_path_factory):
    """A small casper case base (250 self-play hands, ehs vs lag)."""
    from cbr.build.local import build_casebase
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    folder = tmp_path_factory.mktemp("small")
    with AcpcLogWriter(folder / "selfplay.log") as w:
        run_match(["ehs", "lag"], 250, seed=11, log=w)
    build_casebase([folder / "selfplay.log"], folder / "small")
    return folder / "small"


def test_an_evaluation_with_the_ann_answers_the_librarys_report(small_casebase) -> None:
    """The evaluation in its own process is the library's, number for number; a second one while
    one runs is refused (one at a time: each is a process)."""
    import threading

    from cbr.query.evaluate import evaluate_casebase
    from cbr.serve.app import _json_text
    from cbr.serve.engine import Engine

    eng = Engine([str(small_casebase)], warm=False)
    try:
        with make_client(eng, time_limit=120.0) as c:
            body = {"casebase": "small", "folds": 2, "max_decisions": 60, "seed": 3, "ann": True}
            answers: list = []
            first = threading.Thread(target=lambda: answers.append(c.post("/evaluate", json=body)))
            first.start()
            time.sleep(0.3)
            second = c.post("/evaluate", json=body)
            first.join()
        # whichever started first is answered; the other is refused while it runs
        done, refused = sorted([answers[0], second], key=lambda r: r.status_code)
        assert done.status_code == 200, done.text
        assert refused.status_code == 503 and "one at a time" in refused.json()["detail"], refused.text
        with CaseBase.open(small_casebase) as cb:
            want = evaluate_casebase(cb, folds=2, seed=3, max_decisions=60, ann=True).to_dict()
        assert done.json() == json.loads(_json_text(want))
        assert any(s["ann"] for s in done.json()["streets"])
    finally:
        eng.close()


def test_policies_are_the_installed_bots(client) -> None:
    from cbr.plugins import available

    listed = client.get("/policies").json()["policies"]
    assert [p["name"] for p in listed] == available("cbr.policies")
    cbr = next(p for p in listed if p["name"] == "cbr")
    assert cbr["options"]["preset"] == "adaptive" and "reuse" in cbr["options"]   # the rest come from the preset
    assert "casebase" not in cbr["options"] and "casebase" in cbr["server_only"]  # a request may not name files


def test_a_bug_is_a_500_in_json_and_the_server_goes_on(client, engine, monkeypatch) -> None:
    def broken() -> list:
        raise RuntimeError("a bug")

    monkeypatch.setattr(engine, "list_casebases", broken)
    r = client.get("/casebases")
    assert r.status_code == 500 and r.json()["detail"] == "internal error: RuntimeError: a bug"
    monkeypatch.undo()
    assert client.get("/casebases").status_code == 200


def test_a_wrong_method_is_405_and_the_docs_status_table_lists_every_status(client) -> None:
    """docs/serve.md's table of statuses had no 405, which a wrong method gets (``GET /retrieve``):
    every status the OpenAPI description gives an endpoint, and 405, has its row."""
    import re

    from tests.conftest import REPO

    for method, path, allow in (("GET", "/retrieve", "POST"), ("DELETE", "/retain", "POST"),
                                ("POST", "/health", "GET"), ("PUT", "/casebases", "GET")):
        r = client.request(method, path)
        assert r.status_code == 405 and r.json() == {"detail": "Method Not Allowed"}, (method, path, r.text)
        assert r.headers["allow"] == allow
    # a path of several routes (each of its own method): Allow lists the methods of them all
    # (Starlette's named those of the first route only: "GET" for a table session's path)
    for method, path, allow in (("POST", "/table/sessions/abc", "DELETE, GET"),
                                ("PUT", "/table/sessions/abc", "DELETE, GET"),
                                ("GET", "/table/sessions", "POST")):
        r = client.request(method, path)
        assert r.status_code == 405 and r.json() == {"detail": "Method Not Allowed"}, (method, path, r.text)
        assert r.headers["allow"] == allow, (method, path, r.headers["allow"])
        for other in allow.split(", "):  # each one listed is answered (not 405)
            assert client.request(other, path).status_code != 405, (other, path)
    errors = (REPO / "docs" / "serve.md").read_text().split("## Errors", 1)[1]
    documented = {int(code) for code in re.findall(r"^\| (\d{3}) \|", errors, re.M)}
    answered = {int(code) for op in client.get("/openapi.json").json()["paths"].values() for spec in op.values()
                for code in spec.get("responses", {}) if code.isdigit() and int(code) >= 400}
    assert answered | {405} <= documented, sorted((answered | {405}) - documented)


def test_the_docs_status_table_shows_the_body_of_a_500(client, engine, failing_bot, monkeypatch) -> None:
    """docs/serve.md's row for 500 said when, not what the body looks like: it shows the bodies a
    500 has, each as the server answers it (another package's bot that failed; a bug; and a case
    base whose files are damaged, which tests/serve/test_storage_faults.py answers word for word)."""
    import re

    from tests.conftest import REPO

    errors = (REPO / "docs" / "serve.md").read_text().split("## Errors", 1)[1]
    (row,) = re.findall(r"^\| 500 \|.*$", errors, re.M)
    shown = [json.loads(body) for body in re.findall(r"`(\{\"detail\": .*?\})`", row)]
    r = client.post("/reuse", json={"hole": "AdQc", "policy": failing_bot})
    assert r.status_code == 500, r.text
    assert r.json() in shown, (r.json(), shown)  # the plugin's failure, word for word

    def broken() -> list:
        raise RuntimeError("a bug")

    monkeypatch.setattr(engine, "list_casebases", broken)
    r = client.get("/casebases")
    assert r.status_code == 500 and r.json() in shown, (r.json(), shown)
    assert len(shown) == 3, shown


# ---- opponent models (a casper-opp case base) ------------------------------------------------
@pytest.fixture(scope="module")
def opp_client(tmp_path_factory):
    """A server over a small casper-opp case base (400 self-play hands, lag vs rock)."""
    from cbr.build.local import build_casebase
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match
    from cbr.serve.engine import Engine

    folder = tmp_path_factory.mktemp("opp")
    with AcpcLogWriter(folder / "selfplay.log") as w:
        run_match(["lag", "rock"], 400, seed=5, log=w)
    build_casebase([folder / "selfplay.log"], folder / "opp", feature_set="casper-opp")
    engine = Engine([str(folder / "opp")])
    with make_client(engine) as c:
        yield c, folder / "opp"
    engine.close()


OPP_SPOT = {"casebase": "opp", "hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5,
            "prev_bets": 2, "top": None}


def test_retrieve_with_opponent_models_gives_the_numbers_of_cbr_query(opp_client) -> None:
    """``opponents`` is ``cbr query --opponent AGG,TIGHT,RISK``: the same triple, features and
    cases; other values give another row to retrieve with."""
    client, path = opp_client
    args = ["--casebase", str(path), "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1",
            "--pot", "5", "--prev-bets", "2"]
    answers = {}
    for model in ((0.9, 0.1, 0.8), (0.05, 0.95, 0.1)):
        r = client.post("/retrieve", json={**OPP_SPOT, "opponents": [list(model)]})
        assert r.status_code == 200, r.text
        got, want = r.json(), cli_query([*args, "--opponent", ",".join(map(str, model))])
        assert six(got["triple"]) == want["triple"] and six(got["features"]) == want["features"]
        assert [c["id"] for c in got["cases"]] == [c["id"] for c in want["cases"]]
        answers[model] = got
    first, second = answers.values()
    assert first["features"] != second["features"]


def test_opponent_models_that_do_not_apply_are_a_422_naming_the_field(opp_client, client) -> None:
    opp, _ = opp_client
    for c, body in ((opp, {**OPP_SPOT, "opponents": [[0.5, 1.5, 0.5]]}),  # outside 0..1
                    (opp, {**OPP_SPOT, "opponents": [[0.5, 0.5, 0.5]] * 2}),  # heads-up: one opponent
                    (client, {**OPP_SPOT, "casebase": "default", "opponents": [[0.5, 0.5, 0.5]]}),  # not casper-opp
                    (opp, {**OPP_SPOT, "policy": "cbr", "opponents": [[0.5, 0.5, 0.5]]})):
        url = "/reuse" if "policy" in body else "/retrieve"
        r = c.post(url, json=body)
        assert r.status_code == 422, (url, body, r.text)
        assert "opponents" in json.dumps(r.json()), r.text
    r = opp.post("/retrieve", json={**OPP_SPOT, "opponents": [[0.5, 0.5]]})  # two values: the schema says so
    assert r.status_code == 422 and "opponents" in json.dumps(r.json())


@pytest.mark.parametrize("opponents, loc", [([[0.5, 1.5, 0.5]], [0, 1]), ([[0.5, 0.5, 0.5], [0.2, 0.3, -0.1]], [1, 2])])
def test_an_opponent_value_outside_0_1_is_422_on_that_number(opp_client, client, opponents, loc) -> None:
    """An out-of-range value was a 422 on ``["body", "opponents"]`` (the library's check, after the
    case base was chosen) while a value of the wrong type names its number (``["body",
    "opponents", 0, 1]``): the range is now the schema's too, and names the number, whatever
    the case base, on every endpoint that takes the field."""
    opp, _ = opp_client
    for c, path, body in ((opp, "/retrieve", OPP_SPOT), (client, "/retrieve", {**OPP_SPOT, "casebase": "default"}),
                          (client, "/retrieve/batch", {"situations": [{**OPP_SPOT, "casebase": "default"}]}),
                          (client, "/reuse", {**OPP_SPOT, "casebase": "default"})):
        if path.endswith("batch"):
            body = {"situations": [{**body["situations"][0], "opponents": opponents}]}
            where = ["body", "situations", 0, "opponents", *loc]
        else:
            body, where = {**body, "opponents": opponents}, ["body", "opponents", *loc]
        r = c.post(path, json=body)
        assert r.status_code == 422, (path, r.text)
        (problem,) = r.json()["detail"]
        assert problem["loc"] == where, (path, problem)
        assert problem["type"] in ("greater_than_equal", "less_than_equal")
        assert problem["msg"].startswith("Input should be "), problem


# ---- --memory-map ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mapped_copy(tmp_path_factory):
    """A writable copy of the default case base of its own (``mapped``): its saved indexes
    cover every case (the package's ``mine`` may have grown in other tests)."""
    from cbr.play.retention import copy_casebase

    return copy_casebase("default", tmp_path_factory.mktemp("mapped") / "mapped")


@pytest.fixture(scope="module")
def mapped_client(mapped_copy):
    """A server over the default case base and a writable copy, memory-mapped (``--memory-map``)."""
    from cbr.serve.engine import Engine

    engine = Engine(["default", str(mapped_copy)], memory_map=True)
    assert all(loaded.cb.memory_map for loaded in engine.casebases.values())
    with make_client(engine, token=TOKEN) as c:
        yield c
    engine.close()


@pytest.mark.parametrize(("fields", "args"), SITUATIONS)
def test_memory_mapped_retrieve_gives_the_numbers_of_the_loaded_server(mapped_client, client, fields, args) -> None:
    got = mapped_client.post("/retrieve", json={**fields, "top": None})
    want = client.post("/retrieve", json={**fields, "top": None})
    assert got.status_code == want.status_code == 200, got.text
    a, b = got.json(), want.json()
    for key in ("triple", "features", "weights", "street", "retrieved", "passed_threshold", "fallback"):
        assert a[key] == b[key], key
    assert [(c["id"], c["similarity"], c["action"], c["local"]) for c in a["cases"]] == \
           [(c["id"], c["similarity"], c["action"], c["local"]) for c in b["cases"]]


def test_memory_mapped_server_refuses_what_needs_the_cases_in_memory(mapped_client, mapped_copy,
                                                                     acpc_hands) -> None:
    spot = dict(SITUATIONS[0][0])
    before = counts(mapped_copy)
    for url, body in (("/retain", {"casebase": "mapped", "text": acpc_hands}),
                      ("/evaluate", {"casebase": "default", "folds": 2, "max_decisions": 10}),
                      ("/reuse", {**spot, "policy": "cbr"})):
        r = mapped_client.post(url, json=body, headers=AUTH)
        assert r.status_code == 403, (url, r.text)
        # in an API user's words: what the server does and what the request needs, no CLI option
        detail = r.json()["detail"]
        assert "memory-mapped" in detail and "answers only /retrieve" in detail, (url, detail)
        assert "--" not in detail and "cbr serve" not in detail, (url, detail)
    assert counts(mapped_copy) == before
    r = mapped_client.post("/reuse", json={**spot, "policy": "call"})  # a rule bot needs no cases
    assert r.status_code == 200 and r.json()["action"] == "c", r.text


def test_a_case_base_is_served_under_its_folders_name(tmp_path) -> None:
    """A `cp -r` copy of the default case base keeps "default" in its manifest: it was refused as a
    second "default". Two folders of one name are still refused."""
    import shutil

    from cbr.errors import CaseBaseError
    from cbr.serve.engine import Engine
    from cbr.store import resolve_casebase

    shutil.copytree(resolve_casebase("default"), tmp_path / "mine")
    eng = Engine(["default", str(tmp_path / "mine")], warm=False)
    try:
        assert sorted(eng.casebases) == ["default", "mine"]
    finally:
        eng.close()
    shutil.copytree(resolve_casebase("default"), tmp_path / "other" / "default")
    with pytest.raises(CaseBaseError, match="two case bases are named 'default'"):
        Engine(["default", str(tmp_path / "other" / "default")], warm=False)
    again = str(tmp_path / "other" / ".." / "mine")                 # one folder, spelled twice
    with pytest.raises(CaseBaseError, match="is given twice") as given:
        Engine([str(tmp_path / "mine"), again], warm=False)
    assert str(given.value).endswith(f" is given twice ({str(tmp_path / 'mine')!r} and {again!r}): give each case "
                                     "base once"), given.value


def test_a_body_that_is_not_a_json_object_says_json_is_expected(client) -> None:
    """Issue 35, defect 10: a body without `Content-Type: application/json` (curl -d sends a form's)
    was answered "Input should be a valid dictionary or object to extract fields from"."""
    body = b'{"hole": "AdQc", "top": 0}'
    for headers, had in (({}, "had no Content-Type"), ({"content-type": "application/x-www-form-urlencoded"},
                                                         "had Content-Type: application/x-www-form-urlencoded")):
        r = client.post("/retrieve", content=body, headers=headers)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body"]
        msg = r.json()["detail"][0]["msg"]
        assert msg == f"the body must be a JSON object sent with the header 'Content-Type: application/json' (this request {had})"
    r = client.post("/retrieve", content=b"[1, 2]", headers={"content-type": "application/json"})
    assert r.json()["detail"][0]["msg"] == 'the body must be a JSON object ({"field": value, ...}), not an array'
    r = client.post("/table/sessions/x/action", content=b'{"action": "call"}', headers={"content-type": "text/plain"})
    assert r.status_code == 422 and "'Content-Type: application/json'" in r.json()["detail"][0]["msg"]
    assert client.post("/retrieve", content=body, headers={"content-type": "application/json"}).status_code == 200


def test_a_case_base_is_inspected_under_the_name_it_is_listed_under(tmp_path) -> None:
    """Issue 35, defect 9: `GET /casebases` listed `mine`, but `GET /casebases/mine` answered the
    manifest's name (the name the copied case base was built under)."""
    import shutil

    from cbr.serve.engine import Engine
    from cbr.store import resolve_casebase

    shutil.copytree(resolve_casebase("default"), tmp_path / "mine")
    eng = Engine([str(tmp_path / "mine")], warm=False)
    try:
        with make_client(eng) as c:
            assert [x["name"] for x in c.get("/casebases").json()["casebases"]] == ["mine"]
            info = c.get("/casebases/mine").json()
        with CaseBase.open(tmp_path / "mine") as cb:
            built = cb.manifest.name
        assert built != "mine" and info["name"] == "mine" and info["built_as"] == built
    finally:
        eng.close()


def test_the_error_examples_of_the_docs_are_what_the_server_answers(client) -> None:
    """Issue 35, defect 9: docs/serve.md showed `change the pot (--pot)` where the server says
    `('pot')`. Each `curl ... -d '{...}'` of its Errors section is sent, and the answer compared
    with the one printed under it."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text()
    section = text[text.index("## Errors"):text.index("## Limits")]
    examples = re.findall(r"-d '(\{.*?\})'\n(\{.*?\})\n", section)
    assert len(examples) == 2, examples
    for body, answer in examples:
        r = client.post("/retrieve", json=json.loads(body))
        assert r.json() == json.loads(answer), (r.text, answer)


def test_errors_name_the_request_fields_not_the_command_line_options(client) -> None:
    """'change the pot (--pot)' and '--game: inline JSON ...' named cbr query's options in an
    HTTP answer. The library's errors carry their field; the server names it its own way
    (``previous_round_bets`` is ``prev_bets`` here), in the answer and in a batch alike."""
    r = client.post("/retrieve", json={"hole": "AdQc", "board": "3h4cJh", "pot": 0.5})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "pot"]
    msg = r.json()["detail"][0]["msg"]
    assert msg.endswith("change the pot ('pot')") and "--" not in msg, msg
    r = client.post("/retrieve", json={"hole": "AdQc", "to_call": 5})
    assert r.json()["detail"][0]["loc"] == ["body", "to_call"]
    assert r.json()["detail"][0]["msg"].endswith("('to_call')") and "--" not in r.json()["detail"][0]["msg"]
    r = client.post("/retrieve", json={"hole": "AdQc", "board": "3h4cJh", "committed": 3, "to_call": 3})
    assert r.json()["detail"][0]["loc"] == ["body", "to_call"]
    assert r.json()["detail"][0]["msg"].endswith("change the bets to call or committed ('to_call', 'committed')")
    r = client.post("/retrieve", json={"hole": "AdQc", "prev_bets": 2})
    assert r.json()["detail"][0]["loc"] == ["body", "prev_bets"]
    assert r.json()["detail"][0]["msg"].endswith("('prev_bets')"), r.json()
    r = client.post("/retrieve", json={"hole": "AdQc", "game": "{nope"})
    detail = r.json()["detail"][0]
    assert detail["loc"] == ["body", "game"] and "--" not in detail["msg"] and "inline game JSON" in detail["msg"]
    r = client.post("/retrieve/batch", json={"situations": [{"hole": "AdQc", "prev_bets": 2}]})
    detail = r.json()["answers"][0]["error"]["detail"][0]
    assert detail["loc"] == ["body", "situations", 0, "prev_bets"] and detail["msg"].endswith("('prev_bets')")


def test_bots_over_an_opponent_aware_case_base_keep_their_own_handles(opp_client) -> None:
    """A casper-opp case base's feature set carries one bot's player models: its bots at /reuse
    and at the web table play from handles of their own, not the served one (which two bots
    would otherwise share, models and all)."""
    client, _ = opp_client
    engine, tables = client.app.state.engine, client.app.state.tables
    served = engine.casebases["opp"].cb
    for spec in ("cbr:preset=casper", "cbr:preset=casper:sharpen=2"):
        r = client.post("/reuse", json={**OPP_SPOT, "top": 3, "policy": spec})
        assert r.status_code == 200, r.text
    bots = [e.policy for e in engine._policies.values()]
    assert len(bots) == 2 and len({id(b.open()) for b in bots} | {id(served)}) == 3
    r = client.post("/table/sessions", json={"bots": ["cbr:casebase=opp:preset=casper"], "seed": 1})
    assert r.status_code == 201, r.text
    session = tables.get(r.json()["session"])
    assert client.post(f"/table/sessions/{session.id}/hand").status_code == 200
    assert 1 not in session.shared and session.policies[0].open() is not served
    assert client.delete(f"/table/sessions/{session.id}").status_code in (200, 204)


def test_retrieve_takes_the_threshold_and_k_of_cbr_query(client) -> None:
    """`cbr query --threshold/--k` for one query; /retrieve had neither (422 extra inputs)."""
    spot = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2, "top": 3}
    plain = client.post("/retrieve", json=spot).json()
    wide = client.post("/retrieve", json={**spot, "threshold": 0.9}).json()
    assert wide["threshold"] == 0.9 and wide["retrieved"] > plain["retrieved"]
    want = cli_query(["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5",
                      "--prev-bets", "2", "--threshold", "0.9"])
    assert six(wide["triple"]) == want["triple"] and wide["retrieved"] == want["retrieved"]
    none = client.post("/retrieve", json={**spot, "threshold": 1.0, "k": 7}).json()
    assert none["fallback"] and none["retrieved"] == 7
    bad = client.post("/retrieve", json={**spot, "threshold": 1.5})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "threshold"]
    # min_cases (cbr query --min-cases): a threshold only the best case reaches, then never fewer than 4
    best = client.post("/retrieve", json={**spot, "threshold": 0.0, "top": 2}).json()["cases"]
    assert best[1]["similarity"] < best[0]["similarity"]
    one = client.post("/retrieve", json={**spot, "threshold": best[0]["similarity"]}).json()
    assert (one["retrieved"], one["fallback"], one["min_cases"]) == (1, False, 1)
    four = client.post("/retrieve", json={**spot, "threshold": best[0]["similarity"], "k": 4, "min_cases": 4}).json()
    assert (four["retrieved"], four["fallback"], four["min_cases"]) == (4, True, 4)
    bad = client.post("/retrieve", json={**spot, "k": 4, "min_cases": 5})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "min_cases"], bad.json()
    assert "min_cases 5 is above k 4" in bad.json()["detail"][0]["msg"]


SPOT = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}


@pytest.mark.parametrize(("path", "body", "loc", "kind"), [
    ("/retrieve", {**SPOT, "min_cases": True}, ["body", "min_cases"], "int_type"),
    ("/retrieve", {**SPOT, "min_cases": "20"}, ["body", "min_cases"], "int_type"),
    ("/retrieve", {**SPOT, "k": "4"}, ["body", "k"], "int_type"),
    ("/retrieve", {**SPOT, "k": 4.0}, ["body", "k"], "int_type"),
    ("/retrieve", {**SPOT, "top": True}, ["body", "top"], "int_type"),
    ("/retrieve", {"hole": "AdQc", "dealt": "3"}, ["body", "dealt"], "int_type"),
    ("/retrieve", {"hole": "AdQc", "in_hand": False}, ["body", "in_hand"], "int_type"),
    ("/retrieve", {**SPOT, "position": "1"}, ["body", "position"], "int_type"),
    ("/retrieve", {"hole": "AdQc", "to_act": True}, ["body", "to_act"], "int_type"),
    ("/retrieve", {**SPOT, "prev_bets": "2"}, ["body", "prev_bets"], "int_type"),
    ("/retrieve", {**SPOT, "pot": "5"}, ["body", "pot"], "float_type"),
    ("/retrieve", {**SPOT, "to_call": True}, ["body", "to_call"], "float_type"),
    ("/retrieve", {"hole": "AdQc", "committed": "0"}, ["body", "committed"], "float_type"),
    ("/retrieve", {**SPOT, "threshold": "0.9"}, ["body", "threshold"], "float_type"),
    ("/retrieve", {**SPOT, "weighted": 1}, ["body", "weighted"], "bool_type"),
    ("/retrieve", {**SPOT, "weighted": "true"}, ["body", "weighted"], "bool_type"),
    ("/retrieve", {**SPOT, "opponents": [[True, 0.5, 0.5]]}, ["body", "opponents", 0, 0], "float_type"),
    ("/retrieve", {**SPOT, "opponents": [[0.4, "0.8", 0.6]]}, ["body", "opponents", 0, 1], "float_type"),
    ("/retrieve/batch", {"situations": [SPOT, {**SPOT, "min_cases": True}]},
     ["body", "situations", 1, "min_cases"], "int_type"),
    ("/reuse", {**SPOT, "seed": "7"}, ["body", "seed"], "int_type"),
    ("/reuse", {**SPOT, "seed": True}, ["body", "seed"], "int_type"),
    ("/evaluate", {"folds": "2"}, ["body", "folds"], "int_type"),
    ("/evaluate", {"max_decisions": True}, ["body", "max_decisions"], "int_type"),
    ("/evaluate", {"seed": "1"}, ["body", "seed"], "int_type"),
    ("/evaluate", {"ann": 1}, ["body", "ann"], "bool_type"),
    ("/evaluate", {"ann": "false"}, ["body", "ann"], "bool_type"),
    ("/table/sessions", {"bots": ["call"], "seed": "3"}, ["body", "seed"], "int_type"),
    ("/table/sessions", {"bots": ["call"], "seed": True}, ["body", "seed"], "int_type"),
])
def test_a_string_or_boolean_where_a_number_is_asked_is_422_naming_the_field(client, path, body, loc, kind) -> None:
    """`"min_cases": true` and `"min_cases": "20"` were taken as 1 and 20 (pydantic's lax mode
    turns booleans and numeric strings into numbers): every request body is strict for numbers
    and booleans, and the answer names the field."""
    r = client.post(path, json=body)
    assert r.status_code == 422, r.text
    assert [(d["loc"], d["type"]) for d in r.json()["detail"]] == [(loc, kind)], r.json()


def test_an_integer_where_a_float_is_asked_is_still_taken(client) -> None:
    """Strict numbers do not refuse a JSON integer for a float field (`"pot": 5`, `"threshold": 1`):
    the answer is the one for the same float."""
    ints = client.post("/retrieve", json={**SPOT, "to_call": 1, "pot": 5, "committed": 0, "threshold": 1})
    floats = client.post("/retrieve", json={**SPOT, "to_call": 1.0, "pot": 5.0, "committed": 0.0, "threshold": 1.0})
    assert ints.status_code == 200, ints.text
    assert ints.json() == floats.json()


def test_policies_say_what_each_option_means(client) -> None:
    """/policies listed the options without what they mean: each bot's ``option_help`` gives
    the one line of its ``OPTION_HELP`` table (the lines ``cbr plugins list`` shows) for every
    option it lists, those a request may give and the server-only ones alike."""
    from cbr.policies.spec import policy_option_help

    listed = client.get("/policies").json()["policies"]
    for p in listed:
        if "error" in p:
            continue
        helps = {k.replace("_", "-"): v for k, v in policy_option_help(p["name"]).items()}
        assert list(p["option_help"]) == [*p["options"], *p.get("server_only", [])], p["name"]
        assert p["option_help"] == {k: helps[k] for k in p["option_help"]}, p["name"]
    cbr = next(p for p in listed if p["name"] == "cbr")
    assert "max-frequency" in cbr["option_help"]["reuse"] and cbr["option_help"]["casebase"]
    assert cbr["options"]["preset"] == "adaptive"  # the existing keys stay as they were
    lag = next(p for p in listed if p["name"] == "lag")
    assert lag["option_help"]["stab-rate"] == "chance of a bet with nothing to call after the flop, whatever the hand"


def test_policies_carry_the_presets_as_plugins_list_does(client) -> None:
    """``GET /policies`` lacked the ``cbr`` bot's presets that ``cbr plugins list --json`` gives
    (what each ``preset=NAME`` sets); a bot without presets has no ``presets`` key, as there."""
    import json as _json

    from typer.testing import CliRunner

    from cli import app as cli_app

    listed = {p["name"]: p for p in client.get("/policies").json()["policies"]}
    rows = _json.loads(CliRunner().invoke(cli_app, ["plugins", "list", "--json"]).stdout)
    rows = rows if isinstance(rows, list) else [r for group in rows.values() for r in group]
    plugins = {r["name"]: r for r in rows if r.get("group") == "cbr.policies"}
    assert listed["cbr"]["presets"] == plugins["cbr"]["presets"] and {"expert", "casper"} <= set(listed["cbr"]["presets"])
    for name, p in listed.items():
        assert p.get("presets") == plugins[name].get("presets"), name


def test_retain_reports_what_its_own_request_added_while_another_writer_appends(acpc_hands, tmp_path) -> None:
    """With ``cbr serve --workers 2`` a reply's ``added`` was the case base's counts after the
    write less those before, so it took in another worker's write landing in between (9 cases
    reported as 18 added). Another writer appends here, a real second handle on the same folder,
    just before this request writes: ``added`` is still this request's cases, street by street."""
    require_module("fastapi")
    from cbr.play.retention import Retainer, copy_casebase
    from cbr.serve.engine import Deadline, Engine
    from cbr.store import CaseBase

    path = copy_casebase("default", tmp_path / "mine")
    other = CaseBase.open(path)

    class OtherWriterFirst(Deadline):
        def begin_write(self) -> None:
            Retainer(other, keep=range(32), names=()).retain_hands(parse(acpc_hands))
            super().begin_write()

    from cbr.serve.engine import _parse_hands as parse_text

    def parse(text: str):
        return parse_text(text, "acpc", None)

    eng = Engine([str(path)])
    try:
        reply = eng.retain("mine", acpc_hands, deadline=OtherWriterFirst(60.0))
        assert reply["cases"] > 0 and sum(reply["added"].values()) == reply["cases"], reply
        alone = Retainer(other, keep=range(32), names=()).replay_hands(parse(acpc_hands))
        per_street = {s: 0 for s in reply["added"]}
        for dp in alone.dps:
            per_street[list(per_street)[dp.street]] += 1
        assert reply["added"] == per_street
        fresh = CaseBase.open(path)  # both writes are in the counts
        try:
            assert reply["counts"] == {s: fresh.count(s) for s in reply["counts"]}
        finally:
            fresh.close()
    finally:
        eng.close()
        other.close()


@pytest.fixture
def missing_boom(tmp_path, monkeypatch):
    """An entry-point bot, ``missing_boom``, whose module fails to import (installed as pip
    would: a dist-info with its entry points beside the module, on sys.path)."""
    import sys

    from cbr import plugins

    site = tmp_path / "site"
    info = site / "missingboom-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: missingboom\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.policies]\nmissing_boom = missingboom:Bot\n")
    (site / "missingboom.py").write_text("import libmissing_nowhere  # noqa\n")
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    yield "missing_boom"
    plugins.clear_cache()
    sys.modules.pop("missingboom", None)


def test_a_bot_plugin_that_fails_to_load_is_refused_on_its_field(client, missing_boom) -> None:
    """``/reuse {"policy": "missing_boom"}`` and ``/table/sessions {"bots": ["missing_boom"]}``
    were 422 on ``["body"]`` with the type PluginError; docs/serve.md says every refusal of a
    bot names ``policy``, ``bots`` or ``players``."""
    r = client.post("/reuse", json={"hole": "AdQc", "policy": missing_boom})
    assert r.status_code == 422, r.text
    (problem,) = r.json()["detail"]
    assert problem["loc"] == ["body", "policy"] and problem["type"] == "FieldError", problem
    assert "missing_boom" in problem["msg"] and "libmissing_nowhere" in problem["msg"], problem
    for field in ("bots", "players"):
        r = client.post("/table/sessions", json={field: [missing_boom], "seed": 1})
        assert r.status_code == 422, r.text
        (problem,) = r.json()["detail"]
        assert problem["loc"] == ["body", field] and problem["type"] == "FieldError", problem
        assert "missing_boom" in problem["msg"], problem


#: A command line in a text: an option (``--token-file``) or a ``cbr`` command.
COMMAND_LINE = re.compile(r"--[a-z]|\bcbr (serve|query|match|play|casebase|plugins|build|evaluate)\b")


def test_http_answers_name_no_command_line_option(engine, acpc_hands, missing_boom) -> None:
    """The 503 over the time limit said ``(cbr serve --time-limit)``, a write to a server without
    a token ``it was started without --token-file``, a new table session on a server of several
    processes ``start cbr serve without --workers``, an unknown bot beside one that fails to load
    ``(see cbr plugins list)``, and the OpenAPI document's fields ``cbr query --threshold`` and
    the like: an API user has no shell on the server. Each now says what the server does and
    what a request can do."""
    with make_client(engine, time_limit=1e-6) as c:
        r = c.post("/evaluate", json={"casebase": "default", "folds": 2, "max_decisions": 50})
        assert r.status_code == 503, r.text
        detail = r.json()["detail"]
        assert "time limit of 1e-06 s" in detail and not COMMAND_LINE.search(detail), detail
    with make_client(engine) as no_token:
        r = no_token.post("/retain", json={"casebase": "mine", "text": acpc_hands}, headers=AUTH)
        assert r.status_code == 403, r.text
        detail = r.json()["detail"]
        assert "takes no writes" in detail and not COMMAND_LINE.search(detail), detail
    with make_client(engine, tables=False) as several:
        r = several.post("/table/sessions", json={"bots": ["call"], "seed": 1})
        assert r.status_code == 409, r.text
        detail = r.json()["detail"]
        assert "one process" in detail and not COMMAND_LINE.search(detail), detail
    with make_client(engine) as c:
        for url, field in (("/reuse", "policy"), ("/table/sessions", "bots")):
            body = {"hole": "AdQc", "policy": "no_such_bot"} if field == "policy" else {"bots": ["no_such_bot"]}
            r = c.post(url, json=body)
            assert r.status_code == 422, r.text
            (problem,) = r.json()["detail"]
            assert problem["loc"] == ["body", field], problem
            assert "no_such_bot" in problem["msg"] and "cbr.policies:missing_boom" in problem["msg"], problem
            assert "GET /policies" in problem["msg"] and not COMMAND_LINE.search(problem["msg"]), problem
        # /policies, which the message points at, lists the bot that fails with its reason
        listed = {p["name"]: p for p in c.get("/policies").json()["policies"]}
        assert "libmissing_nowhere" in listed[missing_boom]["error"], listed[missing_boom]
        # the API's description: its endpoints, fields and models (the title is the server's name)
        spec = c.get("/openapi.json").json()
        spec["info"].pop("title")
        text = json.dumps(spec)
        assert not COMMAND_LINE.search(text), COMMAND_LINE.search(text)
