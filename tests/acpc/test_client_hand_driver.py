"""The ACPC client drives its hands through the table loop (:func:`cbr.play.table.play_out`)
and ends them as every table does (:func:`cbr.play.table.end_hand`): named players on every
state, retention from the decision records, then the opponent models observe the hand.

An opponent-aware (``casper-opp``) case base plays through the client against the engine's
dealer: every live decision is made with the learned model of ``opponent+1`` (the name its
retained cases carry), and every retained case of the bot has the very row its decision was
made from."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from cbr.acpc.client import play_acpc
from cbr.acpc.dealer import Dealer
from cbr.game import preset
from cbr.game.gamedef import STREETS
from cbr.policies.cbr_policy import CBRPolicy
from cbr.store import CaseBase


@pytest.fixture(scope="module")
def opp_base(tmp_path_factory) -> Path:
    """A small casper-opp case base (300 self-play hands, lag vs rock)."""
    from cbr.build.local import build_casebase
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    folder = tmp_path_factory.mktemp("opp")
    with AcpcLogWriter(folder / "selfplay.log") as w:
        run_match(["lag", "rock"], 300, seed=5, log=w)
    build_casebase([folder / "selfplay.log"], folder / "opp", feature_set="casper-opp")
    return folder / "opp"


def _serve(dealer: Dealer, out: dict) -> None:
    try:
        out["result"] = dealer.run()
    except BaseException as exc:  # the test reports it
        out["error"] = exc
    finally:
        dealer.close()


def test_casper_opp_through_the_client_decides_and_retains_with_the_learned_models(opp_base: Path,
                                                                                   tmp_path: Path) -> None:
    path = tmp_path / "mine"
    shutil.copytree(opp_base, path)
    game = preset("holdem.limit.2p")
    dealer = Dealer(["remote", "lag"], 40, game=game, seed=3, timeout=30)
    _, port = dealer.listen()
    served: dict = {}
    thread = threading.Thread(target=_serve, args=(dealer, served), daemon=True)
    thread.start()
    bot = CBRPolicy(casebase=str(path), seed=1, reuse="probabilistic")
    live = []
    decide = bot.decide

    def keeping(dp, rng=None):
        d = decide(dp, rng)
        models = bot.opponent_models
        seen = {"opponent+1": models.model("opponent+1").hands} if models is not None else {}
        live.append((d, seen))
        return d

    bot.decide = keeping
    try:
        result = play_acpc(("127.0.0.1", port), bot, game, retain=True, timeout=30)
    finally:
        bot.close()
        thread.join(60)
    assert "error" not in served, served.get("error")
    assert len(result.hands) == 40 and result.retained > 0 and live
    # named players on every live state: the client's decisions are "cbr"'s, as its retained cases
    assert all(d.dp.player == "cbr" for d, _ in live)
    # the models learn from the first hand on, and the live decisions use them
    assert live[-1][1]["opponent+1"] >= 30
    with CaseBase.open(path) as cb:
        for street, name in enumerate(STREETS):
            mine = [d for d, _ in live if d.dp.street == street]
            if not mine:
                continue
            (n_own,) = cb.sql(f"SELECT count(*) FROM cases_{name} WHERE source = 'retained' AND player = 'cbr'").fetchone()
            assert n_own == len(mine)
            rows = cb.cases(name)
            ids = [r for (r,) in cb.sql(f"SELECT case_id FROM cases_{name} WHERE source = 'retained' "
                                        f"AND player = 'cbr' ORDER BY case_id").fetchall()]
            at = {int(c): i for i, c in enumerate(rows.case_ids.tolist())}
            stored = rows.features[[at[c] for c in ids]]
            assert np.vstack([d.row for d in mine]).tobytes() == stored.tobytes()
