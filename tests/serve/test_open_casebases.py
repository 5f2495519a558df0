"""The server opens each case base once and hands it to its bots: ``/reuse`` specs that differ
in options share it (memory), the policy cache builds a bot once and closes an evicted one only
when no request uses it (no error, no leaked handle under concurrent requests), and ``cbr`` at
``/reuse`` is the ``cbr`` of ``cbr match`` and the web table (the expert preset on its own
case base)."""
from __future__ import annotations

import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor

from cbr.store import PACKAGED_CASEBASES
from cbr.store.shared import open_count
from tests.conftest import require_module
from tests.store.test_shared import fds_into

require_module("fastapi", module_level=True)

FLOP = {"hole": "AdQc", "board": "3h4cJh", "position": 1, "to_call": 1, "pot": 5, "prev_bets": 2}


def rss_mb() -> float:
    """This process's resident memory in MB (/proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_reuse_cbr_is_the_cbr_of_cbr_match() -> None:
    """No casebase in the request: the bot plays the case base it plays everywhere (expert,
    opened for it though the server serves only default), and the retrieval is over it too."""
    from cbr.policies.cbr_policy import CBRPolicy
    from cbr.serve.engine import Engine

    before = open_count()
    engine = Engine(["default"], warm=False)
    try:
        out = engine.reuse({**FLOP, "policy": "cbr", "seed": 7})
        assert out["casebase"] == "expert"
        with CBRPolicy(preset="imitate") as bot:  # what `cbr match --players cbr` and the web table play first
            d = bot.decide(engine.decision_point(FLOP), random.Random("cbr-serve:7"))
        assert out["decision"]["played"] == {"fold": d.played[0], "check_call": d.played[1], "bet_raise": d.played[2]}
        assert out["action"] == d.action and out["decision"]["case_ids"] == [int(i) for i in d.case_ids[:5]]
        # a served case base named in the request is played with the spec's options
        named = engine.reuse({**FLOP, "casebase": "default", "policy": "cbr:preset=casper", "seed": 7})
        assert named["casebase"] == "default" and named["decision"]["reuse"] == "probabilistic"
    finally:
        engine.close()
    assert open_count() == before


def test_ten_reuse_specs_share_one_case_base() -> None:
    from cbr.serve.engine import Engine

    engine = Engine(["expert"])
    try:
        engine.reuse({**FLOP, "casebase": "expert", "policy": "ehs"})  # the request path itself, warmed
        start = rss_mb()
        for i in range(10):
            out = engine.reuse({**FLOP, "casebase": "expert", "policy": f"cbr:sharpen=4.00{i + 1}", "seed": i})
            assert out["casebase"] == "expert"
        grown = rss_mb() - start
        assert grown <= 60.0, f"10 specs grew the server by {grown:.0f} MB"
        bots = [entry.policy for entry in engine._policies.values() if entry.policy.name == "cbr"]
        assert len(bots) == 10 and all(b.open() is engine.casebases["expert"].cb for b in bots)
    finally:
        engine.close()


def test_concurrent_reuse_with_evictions_no_error_no_leaked_handle(monkeypatch) -> None:
    """100 concurrent /reuse calls over 25 specs (more than the cache keeps), four requests
    at once asking for each new spec: every one answered, each spec built once, no handle
    left open once the server closes."""
    import cbr.policies.spec as spec_module
    from cbr.serve.engine import POLICY_CACHE, Engine

    default = PACKAGED_CASEBASES / "default"
    fds, before = fds_into(default), open_count()
    engine = Engine(["default"], warm=False)
    built: list[str] = []
    build = spec_module.policy_from_spec

    def counted(text, **kw):  # the real builder, counted
        built.append(text)
        return build(text, **kw)

    monkeypatch.setattr(spec_module, "policy_from_spec", counted)
    specs = [f"cbr:preset=casper:sharpen=1.{i:02d}" for i in range(24)] + ["ehs"]
    together = threading.Barrier(4)
    errors: list[BaseException] = []
    sizes: list[int] = []

    def call(i: int) -> str:
        together.wait(timeout=60)
        try:
            out = engine.reuse({**FLOP, "casebase": "default", "policy": specs[i // 4], "seed": i})
            sizes.append(len(engine._policies))
            return out["action"]
        except BaseException as exc:  # every error fails the test
            errors.append(exc)
            raise

    try:
        with ThreadPoolExecutor(8) as pool:
            actions = list(pool.map(call, range(100)))
        assert not errors and len(actions) == 100 and set(actions) <= set("fcr")
        assert max(sizes) <= POLICY_CACHE
        assert len(built) == len(specs)  # four at once: one build each
    finally:
        engine.close()
    assert open_count() == before and fds_into(default) == fds


# ---- the web table's sessions ----------------------------------------------------------------
def test_sessions_created_at_once_never_exceed_the_limit() -> None:
    from cbr.serve.table import TableSessions, TableStateError

    tables = TableSessions(max_sessions=3)
    together = threading.Barrier(12)
    made, refused, errors = [], [], []

    def create() -> None:
        together.wait(timeout=60)
        try:
            made.append(tables.create(["cbr:preset=casper"], seed=1))
        except TableStateError:
            refused.append(1)
        except BaseException as exc:  # every other error fails the test
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(12)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(made) == 3 and len(refused) == 9 and len(tables) == 3
    finally:
        tables.close()


def test_sessions_created_and_expired_at_their_limit() -> None:
    """Sessions created in eight threads while others expire: only refusals, the limit never
    exceeded, every session closed, no handle left."""
    from cbr.serve.table import TableSessions, TableStateError

    default = PACKAGED_CASEBASES / "default"
    fds, before = fds_into(default), open_count()
    tables = TableSessions(max_sessions=4, ttl=0.05)
    made, errors, seen = [], [], []

    def create(i: int) -> None:
        try:
            s = tables.create(["cbr:preset=casper", "call"] if i % 2 else ["call"], seed=i)
            made.append(s)
            if i % 3 == 0:
                with s.lock:
                    s.new_hand()  # a session in a hand, expired by another's request
        except TableStateError:
            pass
        except BaseException as exc:  # every other error fails the test
            errors.append(exc)
        seen.append(len(tables._sessions) + tables._building)

    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(create, range(60)))
        assert not errors and made and max(seen) <= 4
    finally:
        tables.close()
    assert all(s.closed for s in made)
    assert open_count() == before and fds_into(default) == fds


def test_an_expired_session_is_closed_under_its_lock() -> None:
    """A request that holds a session (its lock) finishes before the session, expired meanwhile,
    is closed by another request."""
    import time

    from cbr.serve.table import TableSessions

    tables = TableSessions(max_sessions=4, ttl=0.05)
    try:
        old = tables.create(["call"], seed=1)
        with old.lock:
            time.sleep(0.1)  # expired while in use
            other = threading.Thread(target=lambda: tables.create(["call"], seed=2))
            other.start()
            other.join(timeout=0.5)
            assert not old.closed
        other.join(timeout=30)
        assert old.closed and len(tables) == 1
    finally:
        tables.close()


def test_two_sessions_retaining_into_one_new_name_at_once(tmp_path, monkeypatch) -> None:
    from cbr.serve.table import TableSessions

    monkeypatch.chdir(tmp_path)
    tables = TableSessions(max_sessions=4)
    together = threading.Barrier(2)
    made, errors = [], []

    def create(i: int) -> None:
        together.wait(timeout=60)
        try:
            made.append(tables.create(["cbr:preset=casper"], seed=i, retain_into="same"))
        except BaseException as exc:  # any error fails the test
            errors.append(exc)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(made) == 2
        assert [p.name for p in tmp_path.joinpath("casebases").iterdir()] == ["same"]
        for s in made:
            assert s.policies[0].casebase_path.resolve() == (tmp_path / "casebases" / "same").resolve()
            with s.lock:
                s.new_hand()
    finally:
        tables.close()


def test_a_copy_made_meanwhile_is_an_error_in_one_line_or_taken(tmp_path) -> None:
    """copy_casebase whose target another process made after it looked (the rename fails):
    a CaseBaseError, not a raw OSError; with exist_ok the other's copy is taken."""
    import shutil

    import pytest

    import cbr.play.retention as retention
    import cbr.store.manifest as manifest
    from cbr.errors import CaseBaseError

    real = manifest.write_manifest

    def write_then_race(tmp, m):  # the other process renames its copy into place meanwhile
        real(tmp, m)
        shutil.copytree(tmp, tmp.parent / m.name)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(manifest, "write_manifest", write_then_race)
        with pytest.raises(CaseBaseError, match="made by another process meanwhile"):
            retention.copy_casebase("default", tmp_path / "same")
        assert retention.copy_casebase("default", tmp_path / "other", exist_ok=True) == tmp_path / "other"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "same"]


def test_the_web_table_plays_a_served_case_base_by_its_name(engine) -> None:
    from tests.serve.conftest import TOKEN, make_client

    with make_client(engine, token=TOKEN) as client:
        r = client.post("/table/sessions", json={"bots": ["cbr:casebase=mine:reuse=max-frequency"], "seed": 3})
        assert r.status_code == 201, r.text
        session = client.app.state.tables.get(r.json()["session"])
        bot = session.policies[0]
        assert bot.casebase_path == engine.casebases["mine"].path and bot.case_based.reuse == "max-frequency"
        assert client.post(f"/table/sessions/{session.id}/hand").status_code == 200
        assert bot.open() is engine.casebases["mine"].cb  # the served handle, not another opening
        for spec in ("cbr:casebase=/etc", "cbr:casebase=nosuch"):
            r = client.post("/table/sessions", json={"bots": [spec]})
            assert r.status_code == 422 and "names a file on the server" in r.text and "mine" in r.text


def test_a_bot_that_fails_to_build_leaves_no_case_base_open(monkeypatch) -> None:
    """The build of a bot over a case base opened for it (not served) fails: the error is the
    request's, the case base is let go, and the next request builds the bot."""
    import pytest

    import cbr.policies.spec as spec_module
    from cbr.errors import ConfigError
    from cbr.serve.engine import Engine

    before = open_count()
    engine = Engine(["default"], warm=False)
    served = open_count()
    build = spec_module.policy_from_spec

    def failing(text, **kw):
        if kw.get("casebase") is not None:  # the build (the probe that names the case base passes)
            raise ConfigError("the disk went away")
        return build(text, **kw)

    try:
        with monkeypatch.context() as mp:
            mp.setattr(spec_module, "policy_from_spec", failing)
            with pytest.raises(ConfigError, match="disk went away"):
                engine.reuse({**FLOP, "policy": "cbr:sharpen=2", "seed": 1})
        assert open_count() == served and not engine._policies  # expert, opened for the bot, let go
        assert engine.reuse({**FLOP, "policy": "cbr:sharpen=2", "seed": 1})["casebase"] == "expert"
    finally:
        engine.close()
    assert open_count() == before
