"""The web table's endpoints through FastAPI's test client: hands played to their end and
checked against the table's own record, what the person may see, the cases panel, the logs,
retention into a named copy, and the refusals (422, 404, 409, 401, 403)."""
from __future__ import annotations

import pytest

from tests.conftest import require_module
from tests.serve.conftest import TOKEN, make_client

require_module("fastapi", module_level=True)
require_module("httpx", module_level=True)


@pytest.fixture(scope="module")
def client(engine):
    with make_client(engine, token=TOKEN) as c:
        yield c


def tables(client):
    return client.app.state.tables


def start(client, bots=("call",), seed=3, **extra):
    r = client.post("/table/sessions", json={"bots": list(bots), "seed": seed, **extra})
    assert r.status_code == 201, r.text
    return r.json()["session"]


def play_hand(client, sid, choose=lambda legal, turn: legal[min(1, len(legal) - 1)]["kind"]):
    """Deal a hand and play it to its end; returns every view the person got."""
    r = client.post(f"/table/sessions/{sid}/hand")
    assert r.status_code == 200, r.text
    views = [r.json()]
    turn = 0
    while not views[-1]["hand"]["over"]:
        hand = views[-1]["hand"]
        assert hand["your_turn"] and hand["legal"]
        r = client.post(f"/table/sessions/{sid}/action", json={"action": choose(hand["legal"], turn)})
        assert r.status_code == 200, r.text
        views.append(r.json())
        turn += 1
        assert turn < 40
    return views


def final_pot(record) -> float:
    """The pot at the end of ``record``, replayed by the rules engine."""
    from cbr.game.state import HandState
    from cbr.play.table import BOARD_STEPS

    state = HandState(record.game, players=record.players, hole_cards=record.hole_cards)
    for a in record.actions:
        while state.needs_board:
            lo, hi = BOARD_STEPS[state.street]
            state.deal_board(record.board[lo:hi])
        state.act(a.kind)
    return state.pot


@pytest.mark.parametrize("bots", [("call",), ("ehs", "call", "lag")])
def test_hands_match_the_tables_record(client, bots) -> None:
    sid = start(client, bots, seed=11)
    session = tables(client).get(sid)
    total = 0.0
    for k in range(4):
        choose = (lambda legal, turn: legal[-1]["kind"]) if k % 2 else (lambda legal, turn: "c")
        views = play_hand(client, sid, choose)
        end = views[-1]
        record = session.results[-1].record
        hand = end["hand"]
        assert hand["number"] == k + 1 and hand["over"]
        assert len(hand["seats"]) == len(bots) + 1
        # the pot, the betting, the board and the result are the table's own
        assert hand["pot"] == final_pot(record)
        assert hand["betting"] == record.extra["betting"]
        said = [a["action"] for street in hand["history"] for a in street["actions"]]
        assert said == [a.kind for a in record.actions]
        you = list(record.players).index(end["names"][0])
        assert hand["result"]["you"] == record.payoffs[you]
        total += record.payoffs[you]
        assert end["result"]["hands"] == k + 1
        assert end["result"]["chips"] == total
        assert end["result"]["sb"] == pytest.approx(total / end["small_bet"])
        won = {s["seat"]: s["session_chips"] for s in hand["seats"]}
        assert won[0] == total and sum(won.values()) == 0  # each seat's chips over the session
        # the person's cards are always shown, the bots' only at a showdown
        for v in views:
            for s in v["hand"]["seats"]:
                if s["you"]:
                    assert len(s["cards"]) == 2
                elif not v["hand"]["over"] or s["position"] not in record.showdown:
                    assert s["cards"] == [], (s, v["hand"]["over"])
                else:
                    assert len(s["cards"]) == 2 and s["hand_name"]
    ci = end["result"]["ci95"]
    assert ci is not None and ci > 0
    assert len(end["result"]["per_hand_sb"]) == 4


def test_bots_hole_cards_never_sent_before_the_showdown(client) -> None:
    sid = start(client, ("call",), seed=5)
    session = tables(client).get(sid)
    r = client.post(f"/table/sessions/{sid}/hand")
    state = session._person.state
    bot_pos = 1 - session._person.you
    from evaluator_ext.cards import card_str

    secret = [card_str(c) for c in state.hole_cards[bot_pos]]
    text = r.text.replace(sid, "")  # the random session id may hold "Kd" by chance (a flaky test before)
    assert not any(c in text for c in secret if c not in r.json()["hand"]["board"] + sum(
        (s["cards"] for s in r.json()["hand"]["seats"] if s["you"]), []))
    r = client.get(f"/table/sessions/{sid}")
    assert all(s["cards"] == [] for s in r.json()["hand"]["seats"] if not s["you"])


def test_sessions_are_isolated(client) -> None:
    a, b = start(client, ("call",), seed=1), start(client, ("call",), seed=1)
    assert a != b and len(a) >= 30
    play_hand(client, a)
    va, vb = client.get(f"/table/sessions/{a}").json(), client.get(f"/table/sessions/{b}").json()
    assert va["result"]["hands"] == 1 and vb["result"]["hands"] == 0 and vb["hand"] is None


def test_cases_panel_of_a_cbr_decision(client) -> None:
    sid = start(client, ("cbr:preset=casper",), seed=2)
    r = client.post(f"/table/sessions/{sid}/hand")
    hand = r.json()["hand"]
    while not hand["over"]:
        if hand["decisions"]:  # the reasons wait for the end of the hand
            d = hand["decisions"][0]
            assert not d["explained"]
            assert client.get(f"/table/sessions/{sid}/decisions/{d['id']}").status_code == 409
        hand = client.post(f"/table/sessions/{sid}/action", json={"action": "call"}).json()["hand"]
    assert hand["decisions"] and all(d["explained"] for d in hand["decisions"])
    d = hand["decisions"][-1]
    r = client.get(f"/table/sessions/{sid}/decisions/{d['id']}", params={"top": 7})
    assert r.status_code == 200, r.text
    e = r.json()
    assert e["action"] == d["action"] and e["street"] == d["street"] and e["casebase"] == "default"
    assert sum(e["triple"].values()) == pytest.approx(1.0)
    assert e["why"] and e["reuse"] == "probabilistic" and e["retrieved"] >= 1
    assert 1 <= len(e["cases"]) <= 7
    sims = [c["similarity"] for c in e["cases"]]
    assert sims == sorted(sims, reverse=True)
    for c in e["cases"]:
        assert set(c["local"]) == set(e["weights"]) and all(0 <= v <= 1 for v in c["local"].values())
        assert c["action"] in "fcr" and c["source"] and len(c["hole"]) == 4
    # the same retrieval as the library's answer for the bot's decision point
    from cbr.query.answer import answer

    bd = tables(client).get(sid).bot_decisions[d["id"]]
    want = answer(bd.policy.open(), bd.dp, top=7).to_dict(top=7)
    assert [c["id"] for c in e["cases"]] == [c["id"] for c in want["cases"]]
    assert client.get(f"/table/sessions/{sid}/decisions/999").status_code == 404
    # a rule bot's decision has no cases
    sid2 = start(client, ("call",), seed=2)
    views = play_hand(client, sid2)
    other = views[-1]["hand"]["decisions"][0]
    assert not other["explained"]
    assert client.get(f"/table/sessions/{sid2}/decisions/{other['id']}").status_code == 404


@pytest.mark.parametrize("fmt", ["acpc", "phh"])
def test_log_download_reads_back(client, fmt) -> None:
    from cbr.logs import acpc, phh

    sid = start(client, ("ehs",), seed=9)
    session = tables(client).get(sid)
    for _ in range(3):
        play_hand(client, sid)
    r = client.get(f"/table/sessions/{sid}/log", params={"format": fmt})
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    back = (acpc.loads if fmt == "acpc" else phh.loads)(r.text)
    assert len(back) == 3
    for got, want in zip(back, (h.record for h in session.results)):
        # (PHH lists the players from the small blind: compare by name)
        assert dict(zip(got.players, got.payoffs)) == dict(zip(want.players, want.payoffs))
        assert [a.kind for a in got.actions] == [a.kind for a in want.actions]
        seen = {n: (h if p == list(want.players).index(session.names[0]) or p in want.showdown else None)
                for p, (n, h) in enumerate(zip(want.players, want.hole_cards))}
        assert dict(zip(got.players, got.hole_cards)) == seen  # the log is the person's view
    r = client.get(f"/table/sessions/{sid}/log", params={"format": "csv"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "format"]


def test_null_bots_is_left_out_and_the_mismatch_is_a_field_error(client) -> None:
    """``"bots": null`` is documented as the field left out (the schema's description, as for
    ``seed``): ``players`` when given, else ``["cbr"]``. The bots/players mismatch had pydantic's
    type ``value_error`` where every other refusal of a field has ``FieldError``."""
    r = client.post("/table/sessions", json={"bots": None, "players": ["call"], "seed": 1})
    assert r.status_code == 201, r.text
    assert r.json()["bots"] == ["call"]
    assert client.delete(f"/table/sessions/{r.json()['session']}").status_code == 200
    r = client.post("/table/sessions", json={"bots": None, "players": None, "seed": 1})
    assert r.status_code == 201, r.text
    assert r.json()["bots"] == ["cbr"]
    assert client.delete(f"/table/sessions/{r.json()['session']}").status_code == 200
    r = client.post("/table/sessions", json={"bots": ["ehs"], "players": ["call"]})
    assert r.status_code == 422, r.text
    assert r.json()["detail"] == [{"loc": ["body", "players"], "type": "FieldError",
                                   "msg": "bots and players name the same seats: give one of them "
                                          "(bots ['ehs'], players ['call'])"}]
    r = client.post("/table/sessions", json={"bots": ["nosuchbot"]})  # the same shape
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "FieldError", r.text


def test_refusals(client) -> None:
    post = client.post
    r = post("/table/sessions", json={"bots": ["nosuchbot"]})  # a bad value of the field, as any bad spec
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "bots"]
    assert r.json()["detail"][0]["msg"].startswith("unknown policy 'nosuchbot'")
    r = post("/table/sessions", json={"bots": ["cbr:casebase=/etc"]})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "bots"]
    assert post("/table/sessions", json={"bots": ["cbr:reuse=greedy"]}).status_code == 422
    assert post("/table/sessions", json={"bots": ["call"] * 6}).status_code == 422
    assert post("/table/sessions", json={"bots": []}).status_code == 422
    assert post("/table/sessions", json={"bots": ["call"], "seed": -1}).status_code == 422
    assert post("/table/sessions", json={"bots": ["call"], "extra": 1}).status_code == 422
    assert post("/table/sessions", content=b"{not json", headers={"Content-Type": "application/json"}
                ).status_code == 422
    assert client.get("/table/sessions/nope").status_code == 404
    assert post("/table/sessions/nope/hand").status_code == 404
    sid = start(client, ("call",))
    assert post(f"/table/sessions/{sid}/action", json={"action": "c"}).status_code == 409  # no hand yet
    hand = post(f"/table/sessions/{sid}/hand").json()["hand"]
    assert post(f"/table/sessions/{sid}/hand").status_code == 409  # one hand at a time
    legal = ", ".join(a["kind"] for a in hand["legal"])
    r = post(f"/table/sessions/{sid}/action", json={"action": "x"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "action"]
    assert r.json()["detail"][0]["msg"] == f"unknown action 'x' (use {legal})"
    if "f" not in [a["kind"] for a in hand["legal"]]:
        r = post(f"/table/sessions/{sid}/action", json={"action": "f"})
        assert r.status_code == 422 and r.json()["detail"][0]["msg"] == "cannot fold: nothing to call, check instead"
    for quit_word in ("q", "quit"):  # the terminal's quit is no action at the web table
        r = post(f"/table/sessions/{sid}/action", json={"action": quit_word})
        assert r.status_code == 422 and r.json()["detail"][0]["msg"] == f"unknown action {quit_word!r} (use {legal})"
    assert post(f"/table/sessions/{sid}/action", json={}).status_code == 422
    r = client.get(f"/table/sessions/{sid}/decisions/0", params={"top": 0})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "top"]
    # the session survives every refusal
    assert post(f"/table/sessions/{sid}/action", json={"action": "call"}).status_code == 200
    assert client.delete(f"/table/sessions/{sid}").status_code == 200
    assert client.get(f"/table/sessions/{sid}").status_code == 404
    assert client.delete(f"/table/sessions/{sid}").status_code == 404


def test_check_facing_a_bet_is_refused_and_changes_nothing(client) -> None:
    # Seed 7 against the raise bot: the person is the big blind facing its raise to 20.
    sid = start(client, ("raise",), seed=7)
    hand = client.post(f"/table/sessions/{sid}/hand").json()["hand"]
    assert hand["your_turn"] and hand["to_call"] == 10
    before = client.get(f"/table/sessions/{sid}").json()
    for word in ("check", "k"):
        r = client.post(f"/table/sessions/{sid}/action", json={"action": word})
        assert r.status_code == 422, r.text
        assert r.json()["detail"] == [{"loc": ["body", "action"], "msg": "cannot check: 10 to call; call, raise or fold",
                                       "type": "FieldError"}]  # the reason alone: no terminal keys to type
    assert client.get(f"/table/sessions/{sid}").json() == before  # nothing moved
    # "call" of 10 calls; on the flop the big blind acts first: "call" with nothing to call checks
    flop = client.post(f"/table/sessions/{sid}/action", json={"action": "call"}).json()["hand"]
    assert flop["street"] == "flop" and flop["to_call"] == 0 and flop["your_turn"]
    after = client.post(f"/table/sessions/{sid}/action", json={"action": "call"}).json()["hand"]
    said = [a["text"] for a in after["history"][1]["actions"]]
    assert said[0] == "you check", said
    assert client.delete(f"/table/sessions/{sid}").status_code == 200


@pytest.mark.parametrize("name", ["default", "expert"])
def test_retention_into_a_shipped_case_base_is_refused_in_plain_words(client, monkeypatch, name) -> None:
    """From the folder beside the shipped case bases (an editable install), ``retain_into:
    "default"`` is the shipped default: it was refused as "no copy of it" of the bots' case base,
    naming the command line's --retain-into and a server path; every shipped base is refused
    alike, in words that name no command-line option, and nothing is written."""
    from cbr.store import PACKAGED_CASEBASES

    monkeypatch.chdir(PACKAGED_CASEBASES.parent)
    shipped = PACKAGED_CASEBASES / name
    before = {p.name: p.stat().st_mtime_ns for p in shipped.rglob("*") if p.is_file()}
    r = client.post("/table/sessions", json={"bots": ["cbr"], "seed": 4, "retain_into": name},
                    headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 403, r.text
    detail = r.json()["detail"]
    assert f"the shipped case base {name!r} is never written to" in detail and "--" not in detail, detail
    assert {p.name: p.stat().st_mtime_ns for p in shipped.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("name", ["styles", "cfr", "selfplay"])
def test_retention_into_a_shipped_folder_is_refused_without_a_server_path(client, monkeypatch, name) -> None:
    """``retain_into: "styles"`` beside the shipped data was a 403 naming the server's
    ``.../casebases/styles`` as no case base; it is the shipped-folder refusal, no server path."""
    from cbr.store import PACKAGED_CASEBASES

    monkeypatch.chdir(PACKAGED_CASEBASES.parent)
    before = sorted(p.name for p in (PACKAGED_CASEBASES / name).rglob("*"))
    r = client.post("/table/sessions", json={"bots": ["cbr"], "seed": 4, "retain_into": name},
                    headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 403, r.text
    detail = r.json()["detail"]
    assert detail.startswith(f"retention refused: casebases/{name} is the shipped folder {name!r}, which is never "
                             "written to"), detail
    assert str(PACKAGED_CASEBASES.parent) not in detail and "--" not in detail, detail
    assert sorted(p.name for p in (PACKAGED_CASEBASES / name).rglob("*")) == before


def test_retention_needs_the_token_and_a_copy(client, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    body = {"bots": ["cbr:preset=casper"], "seed": 4, "retain_into": "taught"}
    assert client.post("/table/sessions", json=body).status_code == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = client.post("/table/sessions", json={**body, "retain_into": "../x"}, headers=auth)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "retain_into"]
    r = client.post("/table/sessions", json={**body, "bots": ["call"]}, headers=auth)
    assert r.status_code == 403  # no case-based bot: nothing to retain into
    assert not (tmp_path / "casebases" / "taught").exists()
    r = client.post("/table/sessions", json=body, headers=auth)
    assert r.status_code == 201, r.text
    sid = r.json()["session"]
    from cbr.store import CaseBase

    target = tmp_path / "casebases" / "taught"
    with CaseBase.open(target) as cb:
        before = cb.count()
    person, decisions = 0, []
    for _ in range(3):
        views = play_hand(client, sid)
        person += len(views) - 1
        decisions += views[-1]["hand"]["decisions"]
    retained = views[-1]["retained"]
    assert views[-1]["retain_into"] == "taught" and retained >= person > 0
    # the cases panel is the decision's own vote: never the case it was retained as afterwards
    from evaluator_ext.cards import cards_str

    explained = [d for d in decisions if d["explained"]]
    assert explained
    for d in explained:
        e = client.get(f"/table/sessions/{sid}/decisions/{d['id']}", params={"top": 20}).json()
        bd = tables(client).get(sid).bot_decisions[d["id"]]
        assert [c["id"] for c in e["cases"]] == [int(i) for i in bd.decision.case_ids[:len(e["cases"])]]
        own = (cards_str(bd.dp.hole), cards_str(bd.dp.board), bd.dp.history)
        assert not any(c["source"] == "retained" and (c["hole"], c["board"], c["betting"]) == own for c in e["cases"])
    assert client.delete(f"/table/sessions/{sid}").status_code == 200  # compacts
    with CaseBase.open(target) as cb:
        assert cb.count() - before == retained
        _, rows, _ = cb.sql_rows("SELECT seat FROM cases WHERE source = 'retained'")
        seats = [row[0] for row in rows]
    assert seats.count(0) == person  # every decision of the person was kept


def test_session_limit_and_expiry(engine) -> None:
    with make_client(engine, max_sessions=2, session_ttl=0.5) as c:
        a = start(c)
        start(c)
        r = c.post("/table/sessions", json={"bots": ["call"]})
        assert r.status_code == 409 and r.json()["detail"].startswith("the server has 2 table sessions open")
        assert "a session ends 0.5 seconds after its last request" in r.json()["detail"]
        import time

        time.sleep(0.6)
        start(c)  # the old ones expired
        assert c.get(f"/table/sessions/{a}").status_code == 404


def test_case_based_bots_are_shared_yet_each_session_plays_its_own_game(client) -> None:
    a, b = start(client, ("cbr:preset=casper", "call"), seed=8), start(client, ("cbr:preset=casper", "call"), seed=8)
    sa, sb = tables(client).get(a), tables(client).get(b)
    assert sa.policies[0] is sb.policies[0]            # one open case base for both
    assert sa.policies[1] is not sb.policies[1]        # a rule bot is each session's own
    for _ in range(3):  # interleaved, hand by hand: the same seed gives the same game
        va, vb = play_hand(client, a), play_hand(client, b)
        assert va[-1]["hand"]["betting"] == vb[-1]["hand"]["betting"]
        assert va[-1]["hand"]["result"] == vb[-1]["hand"]["result"]
    assert client.delete(f"/table/sessions/{a}").status_code == 200
    play_hand(client, b)  # the shared bot outlives a session that used it


def test_every_seat_has_its_position_label_at_four_seats_and_more(client) -> None:
    """Issue 35, defect 8: at 4 seats and more only SB, BB and BTN were named; the others showed
    no label. The labels move round the table with the button, hand by hand."""
    from cbr.game.spec import default_game
    from cbr.game.state import HandState
    from cbr.play.human import position_labels

    for bots, names in ((["call"] * 3, {"SB", "BB", "UTG", "BTN"}),
                        (["call"] * 5, {"SB", "BB", "UTG", "HJ", "CO", "BTN"})):
        sid = start(client, bots=bots, seed=9)
        seen = []
        for _ in range(3):
            hand = play_hand(client, sid)[-1]["hand"]
            labels = {s["seat"]: s["label"] for s in hand["seats"]}
            assert set(labels.values()) == names, labels
            by_position = [s["label"] for s in sorted(hand["seats"], key=lambda s: s["position"])]
            assert by_position == position_labels(HandState(default_game(len(bots) + 1)))
            seen.append(labels[0])
        assert len(set(seen)) == 3  # the person's label moves with the button
        client.delete(f"/table/sessions/{sid}")


def test_reports_name_the_retained_into_copy_without_a_server_path(client, tmp_path, monkeypatch) -> None:
    """The adaptive bot of a session with ``retain_into`` plays from the copy ./casebases/NAME on
    the server, and names the spec each expert plays as (``played_by``, ``why``): after the fix
    that names the copy, a session must show it by the name the client gave it, never by its
    path on the server (nor by a served case base's path)."""
    monkeypatch.chdir(tmp_path)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = client.post("/table/sessions", json={"bots": ["cbr"], "seed": 4, "retain_into": "taught"}, headers=auth)
    assert r.status_code == 201, r.text
    session = tables(client).get(r.json()["session"])
    bot = session.policies[0]
    copy = (tmp_path / "casebases" / "taught").resolve()
    assert bot.played_spec(bot.safe) == f"cbr:preset=imitate:casebase={copy}"  # the bot's own report: the copy
    assert session._named(bot.played_spec(bot.safe)) == "cbr:preset=imitate:casebase=taught"
    assert session._named(f"its fallback, {bot.played_spec(bot.fallback)}: x") == \
        "its fallback, cbr:preset=expert:casebase=taught: x"
    client.delete(f"/table/sessions/{r.json()['session']}")


def test_the_default_bot_adapts_per_session_and_says_which_bot_played(client) -> None:
    """Plain `cbr` is the adaptive bot: each session has its own (it learns the person it plays),
    on the server's one open expert base; after the warm-up against a person who always raises
    it plays the bot its style cases rate best against a maniac, and the hand's decisions say so
    (no cases panel for those)."""
    sid = start(client, ("cbr",), seed=4)
    other = start(client, ("cbr",), seed=4)
    bot, bot2 = tables(client).get(sid).policies[0], tables(client).get(other).policies[0]
    assert type(bot).__name__ == "AdaptivePolicy" and bot is not bot2
    assert bot.open() is bot2.open() and bot._table_lock is bot2._table_lock       # one open base, one lock
    raise_ = lambda legal, turn: next((a["kind"] for a in legal if a["kind"] == "r"), legal[-1]["kind"])  # noqa: E731
    played_by = []
    for _ in range(70):
        views = play_hand(client, sid, raise_)
        played_by += [d for d in views[-1]["hand"]["decisions"] if d.get("played_by")]
    rates = dict(zip(bot.cases.experts, bot.cases.values[bot.cases.names.index("raise")]))
    best = max(rates, key=rates.get)
    assert played_by and {d["played_by"] for d in played_by} == {best}
    assert all("nearest the style case 'raise'" in d["why"] and not d["explained"] for d in played_by)
    r = client.get(f"/table/sessions/{sid}/decisions/{played_by[-1]['id']}")
    assert r.status_code == 404 and f"played {best} here" in r.text
    assert {e for _, e in bot2.chosen} <= {"cbr:preset=expert"}      # the other session learned nothing


@pytest.mark.parametrize("ttl, said", [(5, "5 seconds"), (120, "2 minutes"), (5400, "1 hour 30 minutes"),
                                       (3600, "1 hour"), (86400 + 61, "1 day 1 minute 1 second")])
def test_a_full_server_says_how_long_a_session_lasts_in_words(engine, ttl, said) -> None:
    with make_client(engine, max_sessions=1, session_ttl=ttl) as c:
        start(c)
        r = c.post("/table/sessions", json={"bots": ["call"]})
        assert r.status_code == 409
        assert r.json()["detail"] == (f"the server has 1 table session open: try again later (a session ends {said} "
                                      "after its last request, or when it is closed)")


def test_retain_into_a_served_case_base_retains_into_it_and_refuses_a_clash_without_paths(tmp_path,
                                                                                           monkeypatch) -> None:
    """``cbr serve --casebase ./q3``: ``retain_into: "q3"`` with bots on ``cbr:casebase=q3``
    answered 201 but made ``./casebases/q3``, a copy the bot then played from: ``/retrieve``,
    ``/retain`` and ``/casebases/q3`` never saw the hands. Now the served name is the served case
    base: the hands go into it. Bots playing from another case base are refused (403) in words
    that name case bases by their served names, without a server path, suggesting a spec the API
    takes; so is an existing copy of another case base (it suggested ``cbr:casebase=/path``)."""
    from cbr.play.retention import copy_casebase
    from cbr.serve.engine import Engine

    q3 = copy_casebase("default", tmp_path / "q3")
    monkeypatch.chdir(tmp_path)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    eng = Engine([str(q3)])
    try:
        with make_client(eng, token=TOKEN) as c:
            before = c.get("/casebases/q3").json()["total"]
            r = c.post("/table/sessions", json={"bots": ["cbr:casebase=q3"], "seed": 4, "retain_into": "q3"},
                       headers=auth)
            assert r.status_code == 201, r.text
            sid = r.json()["session"]
            for _ in range(2):
                views = play_hand(c, sid)
            retained = views[-1]["retained"]
            assert views[-1]["retain_into"] == "q3" and retained > 0
            assert c.get("/casebases/q3").json()["total"] == before + retained  # seen at once
            assert not (tmp_path / "casebases").exists()  # no copy made
            assert c.delete(f"/table/sessions/{sid}").status_code == 200

            r = c.post("/table/sessions", json={"bots": ["cbr"], "seed": 4, "retain_into": "q3"}, headers=auth)
            assert r.status_code == 403, r.text
            detail = r.json()["detail"]
            assert "'q3'" in detail and "'expert'" in detail and "seat cbr:casebase=q3" in detail, detail
            assert "/" not in detail and "--" not in detail, detail
            assert not (tmp_path / "casebases").exists()

            copy_casebase("default", tmp_path / "casebases" / "p3")  # not served: a copy of default
            r = c.post("/table/sessions", json={"bots": ["cbr"], "seed": 4, "retain_into": "p3"}, headers=auth)
            assert r.status_code == 403, r.text
            detail = r.json()["detail"]
            assert "a copy of case base 'default'" in detail and "'expert'" in detail, detail
            assert "/" not in detail and "casebase=" not in detail, detail
            assert c.get("/casebases/q3").json()["total"] == before + retained
    finally:
        eng.close()


def test_a_bot_that_fails_mid_hand_is_said_in_words_without_a_class_name(client, failing_bot) -> None:
    """The session's ``error`` began with the Python class of what was raised
    (``PluginFailedError: bot 'fails_mid_hand' ... failed in triple(): ...``); the person sees
    the message alone."""
    sid = start(client, (failing_bot,), seed=5)
    r = client.post(f"/table/sessions/{sid}/hand")
    assert r.status_code == 200, r.text
    view = r.json()
    for _ in range(4):  # the bot's first turn: at once, or after the person's action
        if view["error"] is not None or not view["hand"]["your_turn"]:
            break
        r = client.post(f"/table/sessions/{sid}/action", json={"action": "c"})
        assert r.status_code == 200, r.text
        view = r.json()
    error = view["error"]
    assert error is not None and view["hand"]["over"], view
    assert error.startswith(f"bot '{failing_bot}' (plugin '{failing_bot}' in cbr.policies: failsmid:Bot"), error
    assert error.endswith("failed in triple(): RuntimeError: its service went away"), error
    assert "PluginFailedError" not in error and "CBRError" not in error, error
    assert client.get(f"/table/sessions/{sid}").json()["error"] == error  # the view keeps saying it
