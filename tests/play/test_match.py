"""The match runner: zero-sum results, seat rotation, duplicate replay, CIs, the CLI."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from cbr.errors import PluginError
from cbr.game import standard_table
from cbr.game.spec import default_game
from cbr.logs.record import HandRecord
from cbr.play.match import deal_cards, run_match, seat_names
from cbr.policies import Policy, legal_triple
from cbr.policies.baseline import AlwaysCallPolicy, RandomPolicy
from cbr.stats import mean_ci
from cli import app


class Recorder:
    """A log writer that keeps the records in memory."""

    def __init__(self) -> None:
        self.records: list[HandRecord] = []

    def write(self, record: HandRecord) -> None:
        self.records.append(record)

    def close(self) -> None:
        pass


class Spy(Policy):
    """Random play that remembers every decision point and every observed record."""

    name = "spy"

    def __init__(self, *, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.seen: list = []
        self.observed: list[tuple[HandRecord, int]] = []

    def triple(self, dp):
        self.seen.append(dp)
        return legal_triple((1, 1, 1), dp.legal)

    def observe(self, record, position):
        self.observed.append((record, position))


def test_results_are_zero_sum_hand_by_hand():
    r = run_match(["random", "raise", "call", "random"], 200, seed=4, keep_payoffs=True)
    assert r.hands == 200 and len(r.hand_payoffs) == 200
    for hand in r.hand_payoffs:
        assert math.isclose(sum(hand), 0.0, abs_tol=1e-9)
    assert math.isclose(sum(p.total for p in r.players), 0.0, abs_tol=1e-9)
    assert [p.name for p in r.players] == ["random", "raise", "call", "random#2"]


def test_button_rotates_one_seat_per_hand():
    rec = Recorder()
    run_match(["random", "call", "raise"], 6, seed=1, log=rec)
    names = seat_names([RandomPolicy(), AlwaysCallPolicy(), RandomPolicy()])
    assert names == ["random", "call", "random#2"]
    order = [r.players for r in rec.records]
    assert order[0] == ("random", "call", "raise")
    assert order[1] == ("call", "raise", "random")     # position i of hand k = seat (i + k) % n
    assert order[3] == order[0]


def test_duplicate_replays_every_deal_with_the_seats_rotated():
    rec = Recorder()
    r = run_match(["random", "raise", "call"], 9, seed=5, duplicate=True, log=rec)
    assert (r.hands, r.deals) == (9, 3)
    for d in range(3):
        hands = rec.records[3 * d: 3 * d + 3]
        assert len({h.hole_cards for h in hands}) == 1          # same cards per position
        assert len({h.players for h in hands}) == 3             # different seating each time
        # every seat held every position's cards once
        for name in ("random", "raise", "call"):
            got = {h.hole_cards[h.players.index(name)] for h in hands}
            assert got == set(hands[0].hole_cards)
    assert rec.records[0].hole_cards != rec.records[3].hole_cards


def test_plain_matches_deal_new_cards_every_hand():
    rec = Recorder()
    run_match(["random", "call"], 20, seed=5, log=rec)
    assert len({r.hole_cards for r in rec.records}) == 20


def test_duplicate_rounds_the_hands_up_to_whole_deals():
    r = run_match(["call", "call", "raise"], 10, duplicate=True)
    assert (r.hands, r.deals) == (12, 4)
    assert all(p.hands == 12 for p in r.players)


def test_duplicate_cancels_the_cards_between_identical_players():
    # Two calling stations check every hand down: the same cards in both seats exactly cancel.
    r = run_match(["call", "call"], 400, duplicate=True, seed=9)
    assert all(p.total == 0 and p.sb_ci == 0 for p in r.players)
    plain = run_match(["call", "call"], 400, seed=9)
    assert plain.players[0].sb_ci > 0.05         # +-1 small bet a hand: about 1.96 / sqrt(400)


def test_confidence_intervals_match_the_direct_formula():
    r = run_match(["random", "raise", "call"], 300, seed=3, keep_payoffs=True)
    x = np.array(r.hand_payoffs)                       # hands x seats, in chips
    for s, p in enumerate(r.players):
        col = x[:, s] / r.game.small_bet
        assert p.sb_per_hand == pytest.approx(col.mean())
        assert p.sb_ci == pytest.approx(1.959964 * col.std(ddof=1) / math.sqrt(len(col)), rel=1e-6)
        assert p.mbb_per_hand == pytest.approx(1000 * col.mean() * r.game.small_bet / r.game.big_blind)

    d = run_match(["random", "raise"], 300, seed=3, duplicate=True, keep_payoffs=True)
    y = np.array(d.hand_payoffs)[:, 0].reshape(d.deals, 2).mean(axis=1) / d.game.small_bet
    p = d.players[0]
    assert p.sb_per_hand == pytest.approx(y.mean())
    assert p.sb_ci == pytest.approx(1.959964 * y.std(ddof=1) / math.sqrt(d.deals), rel=1e-6)


def test_units_follow_the_game():
    game = standard_table("x", 2, (5, 10), 20, 40)      # small bet 20, big blind 10
    r = run_match(["random", "call"], 100, game=game, seed=2)
    p = r.players[0]
    assert p.sb_per_hand == pytest.approx(p.total / 100 / 20)
    assert p.mbb_per_hand == pytest.approx(1000 * p.total / 100 / 10)


def test_mean_ci_by_hand():
    values = [2.0, 4.0, 9.0]
    mean, half = mean_ci(values)
    s = math.sqrt(sum((v - 5.0) ** 2 for v in values) / 2)
    assert mean == 5.0 and half == pytest.approx(1.959964 * s / math.sqrt(3))
    assert mean_ci([1.0])[1] == math.inf


def test_same_seed_same_match_other_seed_other_match():
    a = run_match(["random", "raise"], 100, seed=1, keep_payoffs=True)
    b = run_match(["random", "raise"], 100, seed=1, keep_payoffs=True)
    c = run_match(["random", "raise"], 100, seed=2, keep_payoffs=True)
    assert a.hand_payoffs == b.hand_payoffs != c.hand_payoffs


def test_bots_see_only_their_own_hole_cards():
    spy = Spy()
    rec = Recorder()
    run_match([spy, "random", "call"], 60, seed=8, log=rec)
    by_hand = {r.hand_id: r for r in rec.records}
    assert spy.seen
    for dp in spy.seen:
        record = by_hand[dp.hand_id]
        assert dp.hole == record.hole_cards[dp.position]
        others = {c for p, h in enumerate(record.hole_cards) if p != dp.position for c in h}
        assert not others & set(dp.board)
        assert "hole_cards" not in vars(dp)  # a DecisionPoint carries no table of hole cards


def test_observe_hides_cards_that_were_not_shown():
    spy = Spy()
    run_match([spy, "random"], 80, seed=6)
    assert len(spy.observed) == 80
    hidden = 0
    for record, pos in spy.observed:
        assert record.hole_cards[pos] is not None
        folded = {a.position for a in record.actions if a.kind == "f"}
        showdown = record.n_players - len(folded) > 1
        for p, h in enumerate(record.hole_cards):
            if p == pos:
                continue
            if showdown and p not in folded:
                assert h is not None                       # shown down
            else:
                assert h is None
                hidden += 1
    assert hidden > 0


def test_bad_matches_are_refused():
    with pytest.raises(ValueError):
        run_match(["call"], 10)
    with pytest.raises(ValueError):
        run_match(["call", "call"], 0)
    with pytest.raises(ValueError):
        run_match(["call", "call", "call"], 10, game=default_game(2))
    with pytest.raises(PluginError, match="known|installed"):
        run_match(["call", "nobody"], 10)


def test_deals_use_distinct_cards_and_depend_on_the_seed():
    holes, board = deal_cards(3, 0, 10)
    cards = [c for h in holes for c in h] + list(board)
    assert len(cards) == 25 and len(set(cards)) == 25
    assert deal_cards(3, 0, 2) != deal_cards(4, 0, 2)


def test_progress_counts_every_hand():
    ticks: list[int] = []
    run_match(["random", "call"], 123, progress=ticks.append)
    assert sum(ticks) == 123


class CallThenStop(AlwaysCallPolicy):
    """Calls like ``call`` until it is asked to act in hand ``stop`` or later: then Ctrl-C."""

    def __init__(self, stop: int) -> None:
        super().__init__()
        self.stop = stop
        self.stopped_in: int | None = None

    def act(self, dp, rng):
        if int(dp.hand_id) >= self.stop:
            self.stopped_in = int(dp.hand_id)
            raise KeyboardInterrupt
        return super().act(dp, rng)


@pytest.mark.parametrize("duplicate", [False, True])
def test_an_interrupted_match_carries_the_result_of_the_hands_it_finished(duplicate, tmp_path):
    """Ctrl-C in a long match: the exception carries the result so far (whole deals in
    duplicate mode), the same result a match of that many hands gives; the log is not written."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import interrupted_result

    stopper = CallThenStop(37)
    with pytest.raises(KeyboardInterrupt) as caught:
        with AcpcLogWriter(tmp_path / "m.log") as log:
            run_match(["random", "lag", stopper], 90, seed=3, duplicate=duplicate, keep_payoffs=True, log=log)
    partial = interrupted_result(caught.value)
    assert partial is not None and partial.interrupted and partial.to_dict()["interrupted"] is True
    finished = stopper.stopped_in // 3 * 3 if duplicate else stopper.stopped_in
    assert partial.hands == finished > 0 and partial.deals == (finished // 3 if duplicate else finished)
    same = run_match(["random", "lag", AlwaysCallPolicy()], finished, seed=3, duplicate=duplicate, keep_payoffs=True)
    assert partial.players == same.players and partial.hand_payoffs == same.hand_payoffs
    assert "interrupted" not in same.to_dict() and not same.interrupted
    assert list(tmp_path.iterdir()) == []  # a log is whole or not at all


def test_the_hand_strength_bot_beats_the_random_bot():
    # Random folds a third of its hands to any bet and raises trash; the Phase I bot does not.
    r = run_match(["hs", "random"], 2000, duplicate=True, seed=12)
    p = r["hs"]
    assert p.sb_per_hand - p.sb_ci > 0
    assert r["random"].sb_per_hand == pytest.approx(-p.sb_per_hand)


# ---------------------------------------------------------------- the CLI
runner = CliRunner()


def test_cli_match_json():
    res = runner.invoke(app, ["match", "--players", "random,call", "--hands", "50", "--seed", "3", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["hands"] == 50 and [p["name"] for p in data["players"]] == ["random", "call"]
    direct = run_match(["random", "call"], 50, seed=3)
    assert data["players"][0]["total"] == direct.players[0].total


def test_cli_match_json_names_each_seats_policy_spec():
    """Two seats 'cbr:preset=casper' and 'cbr' were both listed as policy 'cbr'."""
    res = runner.invoke(app, ["match", "--players", "ehs:bluff-rate=0.5,ehs", "--hands", "4", "--json"])
    assert res.exit_code == 0, res.output
    assert [(p["name"], p["policy"]) for p in json.loads(res.stdout)["players"]] == [
        ("ehs/bluff-rate=0.5", "ehs:bluff-rate=0.5"), ("ehs", "ehs")]


def test_cli_match_json_says_which_experts_the_adaptive_bot_chose():
    """Plain cbr is the adaptive bot: --json says, for its seat, each expert it chose against the
    opponent, the hand it began, its last and the hands it played, and why (the words of --why),
    the record the bot kept as it played (the same as run_match's); a bot that chooses none has no
    such field."""
    from cbr.policies.adaptive import SAFE_PRESET

    res = runner.invoke(app, ["match", "--players", "cbr,raise", "--hands", "200", "--json"])
    assert res.exit_code == 0, res.output
    cbr, other = json.loads(res.stdout)["players"]
    assert "experts" not in other
    direct = run_match(["cbr", "raise"], 200, seed=0)
    assert cbr["experts"] == [c.to_dict() for c in direct.players[0].experts]
    first, *later = cbr["experts"]
    assert (first["expert"], first["short"], first["opponent"], first["first_hand"]) == (
        f"cbr:preset={SAFE_PRESET}", SAFE_PRESET, "raise", 1)             # the warm-up: the safe expert
    assert first["hands"] >= 50 and later                                   # the default warm-up, then a choice
    for before, after in zip(cbr["experts"], later):                        # always-raise never folds first:
        assert after["first_hand"] == before["last_hand"] + 1               # every hand is one expert's
        assert after["expert"] != before["expert"] and "raise" in after["why"]
    assert sum(c["hands"] for c in cbr["experts"]) == 200 == cbr["experts"][-1]["last_hand"]


def test_an_adaptive_bots_stretches_leave_no_hand_out_against_one_that_folds_first():
    """Against a bot that sometimes ends a hand before the adaptive bot acts (here another
    ``cbr``), one opponent's stretches still cover every hand from 1 on: a hand without a decision
    between two stretches is the first's (``cbr match --players cbr,cbr --hands 100`` read
    ``imitate 1-68; expert 70-76``: hand 69 in none)."""
    experts = run_match(["cbr", "cbr"], 100, seed=0).players[0].experts
    assert len(experts) >= 2 and experts[0].first_hand == 1
    for before, after in zip(experts, experts[1:]):
        assert after.first_hand == before.last_hand + 1, (before, after)
    assert any(c.hands < c.last_hand - c.first_hand + 1 for c in experts)   # hands without a decision: the case
    assert sum(c.hands for c in experts) < experts[-1].last_hand


def test_cli_match_table_says_which_experts_the_adaptive_bot_played():
    """Under the table, one line per adaptive seat: each expert's short name and its hands, as
    --json has them (the table said nothing of them); against one opponent it is not named."""
    res = runner.invoke(app, ["match", "--players", "raise,cbr", "--hands", "200"])
    assert res.exit_code == 0, res.output
    direct = run_match(["raise", "cbr"], 200, seed=0).players[1].experts
    stretches = "; ".join(f"{c.to_dict()['short']} {c.first_hand}-{c.last_hand}" for c in direct)
    assert res.stdout.splitlines()[-1] == f"seat 1 (cbr) played, by hand: {stretches} (--json says why)"
    assert len(direct) >= 2 and "seat 0" not in res.stdout.split("┘")[-1]   # raise chooses no expert
    res = runner.invoke(app, ["match", "--players", "cbr,call,raise", "--hands", "90"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.split("┘")[-1].strip().splitlines()      # several opponents: a line for each
    direct = run_match(["cbr", "call", "raise"], 90, seed=0).players[0].experts
    assert lines[0] == "seat 0 (cbr) played, by hand (--json says why):"
    assert lines[1] == f"  before it knew them: {direct[0].to_dict()['short']} 1" and direct[0].opponent is None
    assert [ln.split(":")[0].strip() for ln in lines[2:]] == [
        f"against {o}" for o in dict.fromkeys(c.opponent for c in direct[1:])]


def test_cli_match_table_and_duplicate():
    res = runner.invoke(app, ["match", "-p", "raise,call,random", "-n", "10", "--duplicate"])
    assert res.exit_code == 0, res.output
    assert "sb/h" in res.stdout and "raise" in res.stdout and "12 hands" in res.stdout


def test_cli_match_unknown_bot_lists_the_known_ones():
    res = runner.invoke(app, ["match", "--players", "ehs,nobody", "--hands", "5"])
    assert res.exit_code == 2                                   # a usage error
    err = res.stderr.strip().splitlines()[-1]
    assert "nobody" in err and "ehs" in err and "call" in err


def test_cli_match_writes_a_log(tmp_path):
    path = tmp_path / "m.log"
    res = runner.invoke(app, ["match", "-p", "random,raise", "-n", "20", "--log", str(path)])
    assert res.exit_code == 0, res.output
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# game: ") and lines[-1].startswith("SCORE:")
    assert sum(line.startswith("STATE:") for line in lines) == 20
    res = runner.invoke(app, ["match", "-p", "random,raise", "-n", "5", "--log", str(tmp_path / "m.phhs"),
                              "--log-format", "phh"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "m.phhs").read_text().count("variant = 'FT'") == 5
    res = runner.invoke(app, ["match", "-p", "random,raise", "-n", "5", "--log", str(path), "--log-format", "xml"])
    assert res.exit_code == 2 and "xml" in res.stderr            # a usage error


def test_cli_match_title_is_one_line_in_a_pipe():
    """The title wrapped to the table's width, mid-phrase (`..., seed` / `123456789`)."""
    res = runner.invoke(app, ["match", "-p", "fold,call,raise", "-n", "3000", "--duplicate", "--seed", "123456789"],
                        env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].rstrip() == ("holdem.limit.3p: 3,000 hands (duplicate, 1,000 deals), "
                                                   "seed 123456789")
    assert res.stdout.splitlines()[1].startswith("┏")


def test_cli_match_json_rates_carry_no_float_noise():
    """`sb_per_hand` came out as 0.4249999999999998 (a sum's rounding), `mbb_per_hand` 424.99999999999983."""
    res = runner.invoke(app, ["match", "--players", "ehs,call", "--hands", "40", "--json"])
    players = json.loads(res.stdout)["players"]
    direct = run_match(["ehs", "call"], 40)
    for shown, p in zip(players, direct.players):
        assert shown["sb_per_hand"] == round(p.total / 40 / direct.game.small_bet, 12)
        assert shown["mbb_per_hand"] == round(p.total / 40 / direct.game.big_blind * 1000, 9)
        for key in ("sb_per_hand", "sb_ci", "mbb_per_hand", "mbb_ci"):
            assert len(repr(shown[key]).lstrip("-").replace(".", "").lstrip("0")) <= 12, (key, shown[key])


def test_cli_dealer_title_is_one_line_in_a_pipe():
    """`cbr serve-dealer`'s title wrapped as the match's did (`..., seed` / `123456789`)."""
    res = runner.invoke(app, ["serve-dealer", "-p", "fold,call", "-n", "300", "--seed", "123456789"],
                        env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].rstrip() == "holdem.limit.2p: 300 hands, seed 123456789" and lines[1].startswith("┏")
    assert lines[-1] == "SCORE:-820|820:fold|call"


def test_a_match_names_its_game_in_full_as_everywhere_else() -> None:
    """`cbr match --players call,raise,fold` named its game `limit.3p` where every other place
    (the presets, --game, ACPC logs) says `holdem.limit.3p`: the default game of 3 players is
    that preset, and of 4-12 players `holdem.limit.Np`, a preset --game takes too. The text,
    --json and --help say the full name."""
    from cbr.game.gamedef import preset
    from cbr.game.spec import load_game

    res = runner.invoke(app, ["match", "--players", "call,raise,fold", "--hands", "10"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].startswith("holdem.limit.3p: 10 hands"), res.stdout
    res = runner.invoke(app, ["match", "--players", "call,raise,fold", "--hands", "10", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["game"] == "holdem.limit.3p", res.output
    res = runner.invoke(app, ["match", "--players", "call,raise,fold,call", "--hands", "4", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["game"] == "holdem.limit.4p", res.output
    assert default_game(3) == preset("holdem.limit.3p")
    for n in range(3, 13):  # the table played before, renamed: the same rules, blinds and bets
        assert default_game(n) == standard_table(f"holdem.limit.{n}p", n, (5, 10), 10, 20)
    for n in range(2, 13):
        game = default_game(n)
        assert game.name == f"holdem.limit.{n}p" and load_game(game.name) == game and game.n_players == n
    assert (default_game(6).blinds, default_game(6).small_bet, default_game(6).big_bet) == ((5, 10, 0, 0, 0, 0), 10, 20)
    res = runner.invoke(app, ["match", "--help"], env={"COLUMNS": "200"})
    text = " ".join(res.stdout.split())
    assert "holdem.limit.2p" in text and "holdem.limit.3p" in text and "limit.3p:" not in text.replace("holdem.", "")
