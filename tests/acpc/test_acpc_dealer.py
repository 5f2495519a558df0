"""`cbr serve-dealer` and `cbr play --acpc` as real processes over loopback TCP (issue 8, section 4):
our client against our dealer, dealers of built-in bots only, reversed and normal heads-up blinds."""
from __future__ import annotations

import json
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from cbr.acpc.client import play_acpc
from cbr.acpc.dealer import Dealer, stopped_result
from cbr.errors import GameError, ProtocolError
from cbr.game import preset
from cbr.logs.acpc import AcpcParser
from cbr.play.match import run_match
from cbr.policies.spec import policy_from_spec
from tests.acpc.support import WAIT, Procs, cbr_command, finish

REPO = Path(__file__).resolve().parents[2]

# The ACPC reference server's holdem.limit.2p.reverse_blinds.game: the first player
# (position 0) posts the big blind, position 1 (small blind, button) acts first pre-flop.
REVERSE_BLINDS_GAME = """GAMEDEF
limit
numPlayers = 2
numRounds = 4
blind = 10 5
raiseSize = 10 10 20 20
firstPlayer = 2 1 1 1
maxRaises = 3 4 4 4
numSuits = 4
numRanks = 13
numHoleCards = 2
numBoardCards = 0 3 1 1
END GAMEDEF
"""


def state_lines(log: Path) -> list[list[str]]:
    return [line.split(":") for line in log.read_text().splitlines() if line.startswith("STATE:")]


def check_client_matches_log(client: dict, log: Path, remote: str, hands: int) -> float:
    """Every hand the client reports is the dealer's logged hand, seen from the remote seat."""
    states = state_lines(log)
    assert len(states) == hands and len(client["played"]) == hands
    total = 0.0
    for number, (row, played) in enumerate(zip(states, client["played"]), start=1):
        _, hand, betting, cards, payoffs, names = row
        names_l = names.split("|")
        pos = names_l.index(remote)
        assert played["acpc_hand_number"] == int(hand)   # the dealer's number, from 0
        assert played["hand_number"] == number            # the match's, from 1 (as experts' first_hand)
        assert played["position"] == pos
        assert played["betting"] == betting
        assert played["won"] == float(payoffs.split("|")[pos])
        holes = cards.split("/")[0].split("|")
        assert played["cards"].split("/")[0].split("|")[pos] == holes[pos]
        assert played["cards"].split("/")[1:] == cards.split("/")[1:]
        total += played["won"]
    assert client["total"] == total
    return total


def test_client_against_dealer_over_tcp(procs: Procs, tmp_path: Path) -> None:
    hands = 50
    log = tmp_path / "match.log"
    dealer, port = procs.dealer("--players", "remote,ehs", "--hands", hands, "--seed", 5, "--log", log)
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "hs", "--json")
    code_c, out_c, err_c = finish(client)
    code_d, out_d, err_d = finish(dealer)
    assert (code_c, err_c) == (0, ""), err_c
    assert (code_d, err_d) == (0, ""), err_d
    score = next(line for line in out_d.splitlines() if line.startswith("SCORE:"))
    totals = [float(x) for x in score.split(":")[1].split("|")]
    assert score.split(":")[2] == "remote|ehs"
    assert sum(totals) == 0
    assert log.read_text().splitlines()[-1] == score       # the log's SCORE line is the printed one
    inspect = subprocess.run(cbr_command() + ["logs", "inspect", str(log), "--json"], capture_output=True,
                             text=True, timeout=WAIT)
    report = json.loads(inspect.stdout)
    assert (report["hands_read"], report["hands_skipped"]) == (hands, 0)
    data = json.loads(out_c)
    assert data["hands"] == hands and data["actions"] > 0
    assert check_client_matches_log(data, log, "remote", hands) == totals[0]


def test_dealer_with_built_in_bots_plays_what_cbr_match_plays(tmp_path: Path) -> None:
    for names, hands in ((["ehs", "call"], 40), (["lag", "hs", "random"], 30)):
        result = Dealer(names, hands, seed=3).run()
        expected = run_match(names, hands, seed=3)
        assert list(result.totals) == [p.total for p in expected.players]
        assert sum(result.totals) == 0


def test_an_interrupted_dealer_carries_the_result_of_the_hands_it_dealt() -> None:
    """A KeyboardInterrupt after 7 hands leaves with those 7 hands' result (what `cbr match`
    plays in 7 hands), marked interrupted; an error before dealing carries none."""
    def stop_after(k: int):
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
            if done[0] == k:
                raise KeyboardInterrupt
        return progress

    with pytest.raises(KeyboardInterrupt) as info:
        Dealer(["ehs", "call"], 50, seed=3).run(progress=stop_after(7))
    partial = stopped_result(info.value)
    assert partial is not None and (partial.hands, partial.stopped) == (7, "interrupted")
    assert list(partial.totals) == [p.total for p in run_match(["ehs", "call"], 7, seed=3).players]
    with pytest.raises(ProtocolError) as failed:
        Dealer(["remote", "call"], 5, connect_timeout=0.05).run()
    assert stopped_result(failed.value) is None


def test_dealer_command_without_remote_seats_writes_a_log(procs: Procs, tmp_path: Path) -> None:
    log = tmp_path / "bots.log"
    code, out, err = finish(procs.start("serve-dealer", "-p", "poki,call,raise", "-n", 30, "--log", log))
    assert (code, err) == (0, ""), err
    assert "listening" not in out
    records = list(AcpcParser().parse_lines(log.read_text().splitlines(), str(log)))
    assert len(records) == 30 and all(sum(r.payoffs) == 0 for r in records)
    assert all(r.game.n_players == 3 for r in records)


@pytest.mark.parametrize("game, first_preflop", [("reverse-file", 1), ("holdem.limit.2p.reverse_blinds", 1),
                                                 ("casper.2p", 0)])
def test_heads_up_blinds_both_ways(procs: Procs, tmp_path: Path, game: str, first_preflop: int) -> None:
    """Reversed blinds (ACPC: position 0 big blind, position 1 opens pre-flop) and the usual
    layout (position 0 small blind and first to act): the client acts exactly on its turns."""
    if game == "reverse-file":
        path = tmp_path / "holdem.limit.2p.reverse_blinds.game"
        path.write_text(REVERSE_BLINDS_GAME)
        game = str(path)
    hands = 24
    log = tmp_path / "m.log"
    dealer, port = procs.dealer("-p", "lag,remote", "-n", hands, "--game", game, "--log", log, "--seed", 11)
    client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "random", "--json", "--game", game)
    code_c, out_c, err_c = finish(client)
    code_d, out_d, err_d = finish(dealer)
    assert (code_c, err_c, code_d, err_d) == (0, "", 0, "")
    records = list(AcpcParser().parse_lines(log.read_text().splitlines(), str(log)))
    assert len(records) == hands
    for r in records:
        assert r.actions[0].position == first_preflop
        assert r.game.blinds[first_preflop] == 5.0        # the small blind opens heads-up
    check_client_matches_log(json.loads(out_c), log, "remote", hands)


def test_a_client_beyond_the_seats_is_told_they_are_taken(procs: Procs) -> None:
    """A second `cbr play --acpc` to a dealer whose only remote seat is taken got no message
    and exited 0 with '0 hands': it is told the seat is taken (exit 1) and the match goes on."""
    dealer, port = procs.dealer("--players", "remote,call", "--hands", 3, "--timeout", WAIT)
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as first:
        first.sendall(b"VERSION:2.0.0\r\n")
        assert first.makefile("rb").readline().startswith(b"MATCHSTATE:0:0:")  # seated: the match is on
        code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--timeout", 10))
        assert dealer.poll() is None  # still dealing to the first client
    assert code == 1 and out == "", out
    assert err.startswith(f"error: the dealer at 127.0.0.1:{port} closed the connection before dealing us a hand")
    assert err.count("\n") == 1 and "every remote seat of this match is taken" in err


def test_a_dealer_that_closes_before_dealing_a_hand_is_an_error() -> None:
    """The reference dealer's way with a client it has no seat for: it reads the handshake and
    closes. The client says so in one line and exits 1 (it printed '0 hands' and exited 0)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.makefile("rb").readline()  # the handshake, then nothing

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        run = subprocess.run(cbr_command() + ["play", "--acpc", f"127.0.0.1:{port}"], capture_output=True, text=True,
                             timeout=WAIT)
    finally:
        thread.join(WAIT)
        server.close()
    assert run.returncode == 1 and run.stdout == "", run.stdout
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith(f"error: the dealer at 127.0.0.1:{port} closed the connection before dealing us a hand")


def test_two_remote_seats_at_a_three_player_table(procs: Procs, tmp_path: Path) -> None:
    hands = 15
    log = tmp_path / "3p.log"
    dealer, port = procs.dealer("-p", "remote,ehs,remote", "-n", hands, "--game", "holdem.limit.3p", "--log", log)
    a = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call", "--json", "--game", "holdem.limit.3p")
    b = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "raise", "--json", "--game", "holdem.limit.3p")
    results = [finish(p) for p in (a, b, dealer)]
    assert [(code, err) for code, _, err in results] == [(0, "")] * 3
    totals = [float(x) for x in results[2][1].splitlines()[-2].split(":")[1].split("|")]
    assert sum(totals) == 0
    names = results[2][1].splitlines()[-2].split(":")[2].split("|")
    assert names == ["remote", "ehs", "remote#2"]
    # the clients connected in some order; each one's hands are one remote seat's hands in the log
    clients = [json.loads(out) for _, out, _ in results[:2]]
    seen = sorted(check_client_matches_log(c, log, name, hands) for c, name in
                  zip(clients, _match_seats(clients, log)))
    assert seen == sorted([totals[0], totals[2]])


def _match_seats(clients: list[dict], log: Path) -> list[str]:
    """Which remote seat each client sat in: the one whose position in hand 0 it reports."""
    names = state_lines(log)[0][5].split("|")
    return [names[c["played"][0]["position"]] for c in clients]


def test_usage_errors(procs: Procs) -> None:
    for args in (["play", "--policy", "call"], ["serve-dealer", "-p", "call"],
                 ["serve-dealer", "-p", "call,call", "--overwrite"], ["serve-dealer", "-p", "call,call", "--port", "70000"]):
        code, out, err = finish(procs.start(*args))
        assert code == 2 and "Traceback" not in err, (args, err)


# ---- a heads-up-only bot at a table of 3 or more: refused before any hand, as by cbr match ----

@pytest.mark.parametrize("seats, said", [
    ("cfr,remote,remote", "the cfr bot plays heads-up only: it cannot play at a table of 3"),
    ("remote,call,adapt:safe=emd_256", "the adapt bot's safe expert, emd_256, plays heads-up only: it cannot play "
                                       "at a table of 3"),
    ("call,raise,call,cfr", "the cfr bot plays heads-up only: it cannot play at a table of 4"),
])
def test_a_heads_up_bot_at_a_bigger_dealer_table_is_refused_before_it_listens(procs: Procs, seats: str,
                                                                                said: str) -> None:
    """``cbr serve-dealer --players cfr,remote,remote`` listened, seated the clients and stopped at
    the cfr bot's first decision (exit 1); without remote seats it dealt and stopped alike. It is
    a usage error naming --players now (exit 2), before it listens: no 'listening on' line. The
    library refuses it too (GameError from Dealer), and heads-up the same bots are dealt in."""
    code, out, err = finish(procs.start("serve-dealer", "--port", 0, "--players", seats, "--hands", 3,
                                        "--connect-timeout", 5))
    assert code == 2 and out == "", (out, err)
    assert said in " ".join(err.split()) and "--players" in err and "Traceback" not in err, err
    with pytest.raises(GameError, match=said.replace(".", "[.]")):
        Dealer(seats.split(","), 3, game=preset(f"holdem.limit.{len(seats.split(','))}p"))
    bot = next(s for s in seats.split(",") if s.startswith(("cfr", "adapt")))
    dealer = Dealer([bot, "call"], 2, seed=1)
    try:
        assert dealer.run().hands == 2
    finally:
        dealer.close()


def test_a_heads_up_bot_told_a_bigger_game_never_connects() -> None:
    """``cbr play --acpc HOST:PORT --policy cfr --game holdem.limit.3p`` connected and took a seat
    it could not play: refused now before it connects (a usage error, exit 2; the library's
    play_acpc raises GameError): the listening socket on loopback receives no connection."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        run = subprocess.run(cbr_command() + ["play", "--acpc", f"127.0.0.1:{port}", "--policy", "cfr", "--game",
                                              "holdem.limit.3p", "--timeout", "5"],
                             capture_output=True, text=True, timeout=WAIT)
        assert run.returncode == 2 and run.stdout == "", (run.stdout, run.stderr)
        said = " ".join(run.stderr.split())
        assert "the cfr bot plays heads-up only: it cannot play at a table of 3 (--game holdem.limit.3p)" in said, said
        assert "--policy" in said and "Traceback" not in said
        with pytest.raises(GameError, match="the cfr bot plays heads-up only: it cannot play at a table of 3"):
            play_acpc(("127.0.0.1", port), policy_from_spec("cfr"), preset("holdem.limit.3p"), timeout=5)
        server.settimeout(0.5)
        with pytest.raises(socket.timeout):  # a client that had connected would be waiting in the backlog
            server.accept()
    finally:
        server.close()


def test_a_heads_up_bot_dealt_a_bigger_table_stops_at_the_first_matchstate(procs: Procs) -> None:
    """Told the default 2-player game, the client learns the table from the dealer's first
    MATCHSTATE: at a 3-player dealer the cfr bot stops there, one line saying why (it said the
    MATCHSTATE was bad, about hole-card slots), exit 1, before it answers any action."""
    dealer, port = procs.dealer("--players", "remote,call,call", "--game", "holdem.limit.3p", "--hands", 3,
                                "--timeout", WAIT)
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "cfr", "--timeout", 10))
    assert code == 1 and out == "", out
    assert err.splitlines() == [f"error: the dealer at 127.0.0.1:{port} deals a 3-player game (its first MATCHSTATE "
                                "shows 3 seats): the cfr bot plays heads-up only: it cannot play at a table of 3"], err
    code_d, out_d, err_d = finish(dealer)
    assert code_d == 1 and "0 of 3 hands dealt" in out_d, out_d
    assert "closed the connection" in err_d and "illegal" not in err_d, err_d  # it left; it never acted


def test_a_bot_dealt_a_bigger_table_than_its_game_is_told_which_game_to_pass(procs: Procs) -> None:
    """A bot that can sit at any table, told the default 2-player game by a 3-player dealer:
    one line naming the dealer's game and the --game to pass (it said the dealer sent a bad
    MATCHSTATE, about hole-card slots), exit 1, before it answers any action."""
    dealer, port = procs.dealer("--players", "remote,call,call", "--game", "holdem.limit.3p", "--hands", 3,
                                "--timeout", WAIT)
    code, out, err = finish(procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "call", "--timeout", 10))
    assert code == 1 and out == "", out
    assert err.splitlines() == [f"error: the dealer at 127.0.0.1:{port} deals a 3-player game (its first MATCHSTATE "
                                "shows 3 seats), not 'holdem.limit.2p': pass --game holdem.limit.3p (or its own "
                                "game file)"], err
    finish(dealer)


def test_the_adaptive_seat_says_which_experts_played_as_cbr_match_does(procs: Procs) -> None:
    """`cbr serve-dealer` prints, under its table, what each adaptive seat played by hand, the
    line `cbr match` prints for the same match (same deals, same choices; no `--json` to point
    at); `cbr play --acpc --policy cbr` gives the experts in its `--json` (as `cbr match --json`
    does per seat) and, without it, the same line under its result."""
    from cbr.cli._output import played_lines

    hands = 100
    code, out, err = finish(procs.start("serve-dealer", "--players", "cbr,call", "--hands", hands))
    assert code == 0, err
    expected = run_match(["cbr", "call"], hands, seed=0)
    experts = expected.players[0].experts
    assert experts and all(p.experts == () for p in expected.players[1:])
    want = played_lines(0, "cbr", experts, why=None)
    assert want[0].startswith("seat 0 (cbr) played, by hand: ")
    lines = out.splitlines()
    assert lines[-1].startswith("SCORE:")
    assert lines[-1 - len(want):-1] == want, out

    seen = []
    for as_json in (True, False):
        dealer, port = procs.dealer("--players", "remote,call", "--hands", hands, "--seed", 5)
        client = procs.start("play", "--acpc", f"127.0.0.1:{port}", "--policy", "cbr", *(["--json"] if as_json else []))
        code, out, err = finish(client)
        assert code == 0, err
        assert finish(dealer)[0] == 0
        seen.append(out)
    data = json.loads(seen[0])
    choices = data["experts"]
    assert choices and choices[0]["first_hand"] == 1 and choices[-1]["last_hand"] == hands
    assert sum(c["hands"] for c in choices) == hands and all(c["why"] for c in choices)
    assert [c["first_hand"] for c in choices[1:]] == [c["last_hand"] + 1 for c in choices[:-1]]
    # `played` numbers the hands as `experts` does (from 1); the dealer's own numbers (from 0) apart
    played = data["played"]
    assert [h["hand_number"] for h in played] == list(range(1, hands + 1))
    assert [h["acpc_hand_number"] for h in played] == list(range(hands))
    text = seen[1].splitlines()
    assert text[0].startswith(f"cbr: {hands} hands, ")
    assert text[1:] == played_lines(None, "cbr", choices) and text[1].endswith("(--json says why)")
