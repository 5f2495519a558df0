"""ACPC dealer logs, read and written: one ``STATE:`` line per hand.

``STATE:<hand>:<betting>:<cards>:<payoffs>:<players>``, e.g.
``STATE:3:rrrc/rrf:4s8s|6hJd/QhJs9d:-50|50:p2|p1``. Betting is ``f``/``c``/``r`` with
``/`` between rounds; limit raises are a bare ``r``, no-limit raises ``rN`` = raise *to*
N chips in the whole hand (converted here to the actor's total on the street). The
players are listed in this hand's positions (ACPC order), so positions need no mapping.
The betting is played on :class:`~cbr.game.state.HandState`, the one betting engine: this
reader splits the tokens and words the faults of a log (turn order, caps, minimum raises).

The game comes from, in order of precedence: a ``# game: {json}`` comment (written by
our own match runner), the ``# name/game/hands/seed`` header's game file
(``holdem.limit.2p.reverse_blinds.game`` -> preset ``holdem.limit.2p``; a file of another
name is read when it is found from the log's folder, as the dealer was given it: only for a
log file read with :meth:`AcpcParser.parse`, never for text, whose header a sender controls), or, for
continuation files without a header, the line itself: bare ``r`` = limit with the ACPC
2p/3p layout, ``rN`` = no-limit 50/100 with the 6-max layout, no raise at all = limit
when every payoff is below 50 chips (a no-limit hand always moves a 50 blind).

All-in EV: match logs of the ACPC 2017 competition pay a no-limit hand whose players were
all in before the river at its all-in expected value, not by the cards dealt. A hand whose
payoffs are not the showdown result but are, to their printed precision, that exact
equity (every run-out enumerated, :func:`all_in_ev`) is read with the showdown result as
``payoffs``, the log's figures in ``extra["logged_payoffs"]`` and a note in
``extra["notes"]``; other wrong payoffs are left for the rules engine to reject. A last
line without a line end whose final player name is new to the file was cut off: skipped.

Writing (:class:`AcpcLogWriter` to a file, :func:`dumps` to text; :func:`loads` reads text
back): a first comment line ``# game: <GameDef.to_dict() as compact JSON>`` (so the exact
rules, caps included, read back), one ``STATE:<hand>:<betting>:<hole|hole.../flop/turn/river>:
<payoffs>:<players>`` line per hand, chips as the reference dealer prints them
(:func:`acpc_number`), and a final ``SCORE:<totals>:<players>``.

>>> p = AcpcParser()
>>> [rec] = p.parse_lines(["STATE:0:cc/crc/cc/cc:5d5c|9hQd/8dAs8s/4h/6d:20|-20:p1|p2"], "x.log")
>>> rec.game.name, len(rec.actions), rec.board, rec.payoffs
('holdem.limit.2p', 9, (25, 51, 27, 10, 17), (20.0, -20.0))
>>> rec.actions[2]            # the big blind (position 0) opens the flop
Action(street=1, position=0, kind='c', amount=None, all_in=False)
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Optional

from cbr.errors import CBRError, GameError, LogFormatError, counted
from cbr.game.actions import Action
from cbr.game.gamedef import BOARD_SIZES, MAX_SEATS, PRESETS, STREET_OF_BOARD, STREETS, GameDef, standard_table
from cbr.game.state import HandState
from cbr.logs.output import LogFile, WriterBase
from cbr.logs.record import HandRecord, ParseIssue, hand_issue
from cbr.logs.source import read_log_text
from evaluator_ext.cards import CARD_NAMES, CARD_OF_TEXT, cards_str

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

CARD = CARD_OF_TEXT   # the project's one card table (evaluator_ext.cards)
# Two-card holdings by text ("AhKd" -> (50, 45)); ordered pairs of distinct cards.
HOLE = {a + b: (CARD[a], CARD[b]) for a in CARD_NAMES for b in CARD_NAMES if a != b}
BOARD: dict[str, tuple[int, ...]] = {"": ()}   # board texts seen, memoised by _board

# ACPC game files we know -> game definitions.
_NL2 = GameDef("acpc.nolimit.2p", 2, (100, 50), 100, 100, (99, 99, 99, 99), (1, 0, 0, 0), "nolimit", 20_000)
_NL3 = GameDef("acpc.nolimit.3p", 3, (50, 100, 0), 100, 100, (99, 99, 99, 99), (2, 0, 0, 0), "nolimit", 20_000)
GAME_FILES: dict[str, GameDef] = {
    "holdem.limit.2p.reverse_blinds": PRESETS["holdem.limit.2p"],
    "holdem.limit.3p": PRESETS["holdem.limit.3p"],
    "holdem.nolimit.6p": PRESETS["holdem.nolimit.6p"],
    "holdem.nolimit.2p.reverse_blinds": _NL2,
    "holdem.nolimit.3p": _NL3,
}
_INFERRED: dict[tuple[str, int], GameDef] = {}


def inferred_game(betting: str, n_players: int) -> GameDef:
    """The game assumed for a line without header: ACPC layouts by player count.

    >>> inferred_game("limit", 3).name, inferred_game("nolimit", 6).name
    ('holdem.limit.3p', 'holdem.nolimit.6p')
    """
    key = (betting, n_players)
    game = _INFERRED.get(key)
    if game is None:
        n = n_players
        if betting == "limit":
            game = {2: PRESETS["holdem.limit.2p"], 3: PRESETS["holdem.limit.3p"]}.get(n) or \
                standard_table(f"acpc.limit.{n}p", n, (5, 10), 10, 20)
        elif n == 6:
            game = PRESETS["holdem.nolimit.6p"]
        elif n == 2:
            game = _NL2
        else:
            game = GameDef(f"acpc.nolimit.{n}p", n, (50, 100) + (0,) * (n - 2), 100, 100, (99, 99, 99, 99),
                           (2 % n, 0, 0, 0), "nolimit", 10_000)
        _INFERRED[key] = game
    return game


class _BadHand(Exception):
    """A hand that cannot be read (the message is the reason)."""


def betting_actions(game: GameDef, betting: str) -> tuple[tuple[Action, ...], int, bool]:
    """Actions of an ACPC betting string, the last street reached, and whether the hand
    ended with at most one player able to bet (all-in run-out or everyone folded).

    Follows the turn order of ``game``; raises ``ValueError`` for an impossible sequence.

    >>> from cbr.game import preset
    >>> acts, last, _ = betting_actions(preset("holdem.nolimit.6p"), "ffr225fff")
    >>> acts[2], last
    (Action(street=0, position=4, kind='r', amount=225.0, all_in=False), 0)
    """
    try:
        return _betting_actions(game, betting)
    except _BadHand as exc:
        raise ValueError(str(exc)) from None


_ACTIONS: dict[tuple, Action] = {}


def _action(street: int, p: int, kind: str, amount: Optional[float] = None, all_in: bool = False) -> Action:
    """A shared Action (they are immutable; a log repeats a few thousand distinct ones)."""
    key = (street, p, kind, amount, all_in)
    a = _ACTIONS.get(key)
    if a is None:
        if len(_ACTIONS) > 200_000:
            _ACTIONS.clear()
        a = _ACTIONS[key] = Action(street, p, kind, amount, all_in)  # type: ignore[arg-type]
    return a




# Board cards dealt to the betting-only table of :func:`_betting_actions` (it knows no hole
# cards, so any distinct cards do; the record keeps the log's board).
_NO_BOARD = {1: (0, 1, 2), 2: (3,), 3: (4,)}


def _betting_actions(game: GameDef, betting: str) -> tuple[tuple[Action, ...], int, bool]:
    """The betting string played on a :class:`~cbr.game.state.HandState` (the one betting
    engine): this reader only splits the tokens and words the log's faults."""
    rounds = betting.split("/")
    if len(rounds) > 4:
        raise _BadHand("more than four betting rounds")
    state = HandState(game)
    limit = game.betting == "limit"
    out: list[Action] = []
    append = out.append
    for street, rnd in enumerate(rounds):
        if street:
            if state.folded.count(False) <= 1:
                raise _BadHand("betting goes on after all but one player folded")
            state.deal_board(_NO_BOARD[street])
        i, length = 0, len(rnd)
        while i < length:
            if state.to_act is None:
                raise _BadHand(f"action {rnd[i]!r} on the {STREETS[street]} after the betting round was over")
            ch = rnd[i]
            i += 1
            amount: Optional[float] = None
            if ch == "f":
                # a fold with nothing to call is a player leaving (replay flags it)
                a = state.fold_out()
                append(_ACTIONS.get((street, a.position, "f", None, False)) or _action(street, a.position, "f"))
                continue
            if ch == "r":
                j = i
                while j < length and (rnd[j].isdigit() or rnd[j] == "."):
                    j += 1
                if limit:
                    if j > i:
                        raise _BadHand(f"raise with an amount ({rnd[i - 1:j]}) in a limit game")
                    cap = game.raise_cap[street]
                    if state.raises >= cap:
                        raise _BadHand(f"more than {cap} raises on the {STREETS[street]} (cap {cap})")
                else:
                    amount = _raise_to(state, rnd[i:j])
                    i = j
            elif ch != "c":
                raise _BadHand(f"unknown action {ch!r} in betting {betting!r}")
            try:
                a = state.act(ch, amount)
            except GameError as exc:
                raise _BadHand(f"action {ch!r} on the {STREETS[street]}: {exc}") from None
            append(_ACTIONS.get((street, a.position, a.kind, a.amount, a.all_in))
                   or _action(street, a.position, a.kind, a.amount, a.all_in))
        if state.to_act is not None:
            if street == len(rounds) - 1:
                raise _BadHand(f"the hand stops in the middle of the {STREETS[street]} betting (truncated?)")
            raise _BadHand(f"the {STREETS[street]} betting round ends before every player has acted")
    last = len(rounds) - 1
    free = sum(not f and not ai for f, ai in zip(state.folded, state.all_in))
    settled = state.folded.count(False) <= 1 or free <= 1
    if not settled and last < 3:
        raise _BadHand(f"betting stops after the {STREETS[last]} with players still betting (truncated?)")
    return tuple(out), last, settled


def _raise_to(state: HandState, text: str) -> float:
    """The street total of a no-limit ``r<text>`` (ACPC: raise *to* ``text`` in the whole hand)
    for the player to act; raises _BadHand for an amount the log cannot mean."""
    if not text:
        raise _BadHand("no-limit raise without an amount")
    try:
        to = float(text)
    except ValueError:
        raise _BadHand(f"bad raise amount {text!r}") from None
    p = state.to_act
    assert p is not None
    new = to - (state.total_committed[p] - state.committed[p])
    if new <= state.bet_level:
        raise _BadHand(f"raise to {to:g} is not above the bet to call")
    stack = state.starting_stacks[p]
    if to > stack:
        raise _BadHand(f"raise to {to:g} is more than the stack of {stack:g}")
    least = state.min_raise_to()
    if least is not None and new < least:
        raise _BadHand(f"raise to {to:g} is less than the minimum raise, to {to - new + least:g} (unless all-in)")
    return new


def _parse_game_header(line: str, source: str = "", game_files: bool = False) -> Optional[GameDef]:
    """The game named by a ``#`` header line, or None (other comments).

    A ``name/game/hands/seed`` header names the game file the dealer read, as given on its
    command line: a file name we know maps to its game; with ``game_files`` (a log file read
    from disk) another one is read when it is found (the path as written, taken from the log's
    folder when relative, or its file name in the log's folder), else the game is inferred from
    the hands. Without ``game_files`` (text, e.g. a request's) no file is read, whatever
    ``source`` is named.

    >>> _parse_game_header("# name/game/hands/seed x ../outside/odd.game 1 1", "request") is None
    True
    """
    body = line[1:].strip()
    if body.startswith("game:"):
        try:
            return GameDef.from_dict(json.loads(body[5:]))
        except (ValueError, CBRError) as exc:
            raise _BadHand(f"bad '# game:' header: {exc}") from None
    if body.startswith("name/game/hands/seed"):
        fields = body.split()
        if len(fields) >= 3:
            base = os.path.basename(fields[2])
            if base.endswith(".game"):
                base = base[:-5]
            return GAME_FILES.get(base) or (_game_file(fields[2], source) if game_files else None)
    return None


def _game_file(path: str, source: str) -> Optional[GameDef]:
    """The ACPC ``.game`` file a log header names, read if it is found next to the log."""
    if not path.endswith(".game") or not os.path.isfile(source):
        return None          # log text that is not a file has no folder to look in
    folder = os.path.dirname(os.path.abspath(source))
    for candidate in (os.path.join(folder, path), os.path.join(folder, os.path.basename(path))):
        try:
            if os.path.isfile(candidate) and os.path.getsize(candidate) <= 65536:
                with open(candidate, encoding="ascii", errors="replace") as f:
                    return GameDef.from_acpc_game(f.read(), os.path.basename(path)[:-5])
        except (OSError, CBRError) as exc:
            raise _BadHand(f"cannot read the game file {path!r} the header names: {exc}") from None
    return None


class AcpcParser:
    """Reads ACPC dealer logs (``STATE:`` lines), limit and no-limit, 2 to 12 players (``MAX_SEATS``).

    >>> AcpcParser().sniff("x.log", "# comment\\nSTATE:0:f:AhKd|2c2d:5|-5:a|b\\n")
    True
    """

    name = "acpc"
    extensions = (".log",)

    def __init__(self) -> None:
        self._memo: dict[int, tuple[GameDef, dict[str, object]]] = {}

    def sniff(self, path: str, head: str) -> bool:
        for line in head.splitlines()[:50]:
            if line.startswith("STATE:") or line.startswith("# name/game/hands/seed") or \
                    line.startswith("# game:"):
                return True
        return False

    def parse(self, path: str) -> Iterator[HandRecord | ParseIssue]:
        """Hands and skipped hands of one log file."""
        path = os.fspath(path)
        text, issue = read_log_text(path)
        if issue is not None:
            yield issue
        yield from self.parse_text(text, path, game_files=True)

    def parse_text(self, text: str, source: str = "<text>", *, game_files: bool = False,
                   game: Optional[GameDef] = None, game_from: str = "the given game") -> Iterator[HandRecord | ParseIssue]:
        """Hands and skipped hands of log text (tests, benchmarks, a request's hands).

        Text that does not end with a line end may have been cut off: see ``parse_lines``.
        ``game_files``, ``game`` and ``game_from``: see ``parse_lines``.
        """
        return self.parse_lines(text.splitlines(), source, unterminated=_unterminated(text), game_files=game_files,
                                game=game, game_from=game_from)

    def parse_lines(self, lines: Iterable[str], source: str, *, unterminated: bool = False,
                    game_files: bool = False, game: Optional[GameDef] = None,
                    game_from: str = "the given game") -> Iterator[HandRecord | ParseIssue]:
        """Hands and skipped hands of an iterable of lines (numbered from 1).

        ``game_files``: the lines are those of the log file ``source``, so a header naming a
        game file of an unknown name reads it from the log's folder (:meth:`parse` sets it);
        otherwise no file is read (a header's path is the text's sender's to choose).

        ``unterminated``: the last line had no line end. The dealer ends every line, so
        such a last ``STATE:`` line whose final player name is not a name of the file's
        other hands was cut off (``...|Alic``): it is skipped with the reason.

        ``game``: the lines' game, as a ``# game:`` header before them would give it (a
        request's hands in the game it names), without moving the lines' numbers;
        ``game_from`` is how a hand the game does not seat names it (``the request's game``;
        a header's game is ``the header's game``).

        >>> text = "STATE:0:f:AhKd|2c2d:5|-5:Alice|Bob\\nSTATE:1:f:AhKd|2c2d:5|-5:Bob|Alic"
        >>> [str(x) for x in AcpcParser().parse_text(text, "t.log")][1]
        "t.log:2: (hand 1): truncated last line: it has no line end and its last player 'Alic' plays no other hand of the file (cut off?)"
        """
        header_game: Optional[GameDef] = game
        header_from = game_from  # where header_game came from, as a refusal names it
        json_game: Optional[GameDef] = game
        named_game: Optional[GameDef] = None
        file_betting: Optional[str] = None
        seen: dict[str, int] = {}
        names: set[str] = set()
        if unterminated and not isinstance(lines, list):
            lines = list(lines)
        last = len(lines) if unterminated else -1   # type: ignore[arg-type]
        for lineno, line in enumerate(lines, 1):
            if line.startswith("STATE:"):
                try:
                    rec = self._hand(line.rstrip(), source, lineno, header_game, file_betting, header_from)
                except _BadHand as exc:
                    number = line.split(":", 2)[1] if line.count(":") >= 2 else ""
                    yield hand_issue(source, lineno, str(exc), number if number.isascii() and number.isdigit()
                                     else None)
                    continue
                if lineno == last and names and rec.players[-1] not in names:
                    yield hand_issue(source, lineno, f"truncated last line: it has no line end and its last "
                                                     f"player {rec.players[-1]!r} plays no other hand of the "
                                                     f"file (cut off?)", rec.hand_id)
                    continue
                if unterminated:
                    names.update(rec.players)
                k = seen.get(rec.hand_id, 0) + 1
                seen[rec.hand_id] = k
                if k > 1:  # a repeated hand number (concatenated sessions): keep ids unique
                    object.__setattr__(rec, "hand_id", f"{rec.hand_id}.{k}")
                file_betting = rec.game.betting
                yield rec
            elif line.startswith("#"):
                try:
                    given = _parse_game_header(line, source, game_files)
                except _BadHand as exc:
                    yield ParseIssue(source, lineno, str(exc))
                    continue
                if given is None:
                    continue
                if line[1:].lstrip().startswith("game:"):
                    json_game = given          # our own runner's exact game wins
                named_game = given if not line[1:].lstrip().startswith("game:") else named_game
                header_game = json_game or named_game
                header_from = "the header's game"
            elif line.startswith("SCORE:") or not line.strip():
                continue
            else:
                shown = line if len(line) <= 60 else line[:57] + "..."
                yield ParseIssue(source, lineno, f"not an ACPC log line: {shown!r}", not_a_hand=True)

    def _game_for(self, n: int, header: Optional[GameDef], betting: str, payoffs: list[float],
                  file_betting: Optional[str], header_from: str = "the header's game") -> GameDef:
        if header is not None:
            if header.n_players != n:
                raise _BadHand(f"{counted(n, 'player')} but {header_from} {header.name!r} seats {header.n_players}")
            return header
        has_r = "r" in betting
        if has_r:
            i = betting.index("r") + 1
            kind = "nolimit" if i < len(betting) and betting[i].isdigit() else "limit"
        elif file_betting is not None:
            kind = file_betting
        else:
            kind = "limit" if max(abs(x) for x in payoffs) < 50 else "nolimit"
        return inferred_game(kind, n)

    def _hand(self, line: str, source: str, lineno: int, header: Optional[GameDef],
              file_betting: Optional[str], header_from: str = "the header's game") -> HandRecord:
        parts = line.split(":")
        if len(parts) != 6:
            raise _BadHand(f"corrupt or truncated STATE line ({counted(len(parts), 'field')}, expected 6)")
        _, hand_id, betting, cards, pay_text, names = parts
        if not (hand_id.isascii() and hand_id.isdigit()):
            raise _BadHand(f"hand number {hand_id!r} is not a number")
        players = tuple(names.split("|"))
        n = len(players)
        if not 2 <= n <= MAX_SEATS:
            raise _BadHand(f"{counted(n, 'player')}; hold'em tables seat 2 to {MAX_SEATS}")
        if "" in players:
            raise _BadHand(f"empty player name in {names!r} (truncated?)")
        try:
            payoffs = tuple(map(float, pay_text.split("|")))
        except ValueError:
            raise _BadHand(f"bad payoffs {pay_text!r}") from None
        if len(payoffs) != n:
            raise _BadHand(f"{len(payoffs)} payoffs for {counted(n, 'player')}")
        game = self._game_for(n, header, betting, payoffs, file_betting, header_from)
        # cards: holes separated by |, then /flop/turn/river
        holes_text, _, board_text = cards.partition("/")
        holes = holes_text.split("|")
        if len(holes) != n:
            raise _BadHand(f"{len(holes)} hole-card entries for {counted(n, 'player')}")
        hole_cards = tuple(map(HOLE.get, holes))
        if None in hole_cards:
            for h in holes:
                if h and h not in HOLE:
                    raise _BadHand(f"bad hole cards {h!r} (two known cards like 'AhKd')")
        board = BOARD.get(board_text)
        if board is None:
            board = _board(board_text)
        dealt = [c for h in hole_cards if h is not None for c in h]
        dealt.extend(board)
        if len(set(dealt)) != len(dealt):
            seen: set[int] = set()
            dup = next(c for c in dealt if c in seen or seen.add(c))  # type: ignore[func-returns-value]
            raise _BadHand(f"card {CARD_NAMES[dup]} dealt twice")
        actions, last, settled = self._actions(game, betting)
        need = BOARD_SIZES[last]
        if len(board) != need and not (settled and len(board) > need):
            raise _BadHand(f"{len(board)} board cards for a hand that reached the {STREETS[last]}")
        stacks = None if game.betting == "limit" or not game.stack else (float(game.stack),) * n
        rec = HandRecord(source, lineno, hand_id, game, players, hole_cards, board, actions,
                         payoffs, stacks, None, "acpc")
        if settled and len(board) == 5 and actions and actions[-1].street < 3 and \
                sum(a.kind == "f" for a in actions) < n - 1:
            rec = _all_in_ev_convention(rec, pay_text) or rec   # an all-in before the river
        return rec

    def _actions(self, game: GameDef, betting: str) -> tuple[tuple[Action, ...], int, bool]:
        entry = self._memo.get(id(game))
        if entry is None:
            entry = self._memo[id(game)] = (game, {})
        memo = entry[1]
        got = memo.get(betting)
        if got is None:
            try:
                got = _betting_actions(game, betting)
            except _BadHand as exc:
                got = str(exc)
            if len(memo) > 200_000:
                memo.clear()
            memo[betting] = got
        if isinstance(got, str):
            raise _BadHand(got)
        return got  # type: ignore[return-value]


def _unterminated(text: str) -> bool:
    """Whether ``text`` ends without a line end (its last line may have been cut off)."""
    return bool(text) and text[-1] not in "\n\r"


def _board(text: str) -> tuple[int, ...]:
    """Board cards of ``flop/turn/river`` text (memoised); raises _BadHand."""
    parts = text.split("/")
    if len(parts) > 3 or any(len(b) != w for b, w in zip(parts, (6, 2, 2))):
        raise _BadHand(f"bad board {text!r} (flop, turn, river of 3, 1, 1 cards)")
    flat = "".join(parts)
    try:
        board = tuple(CARD[flat[k:k + 2]] for k in range(0, len(flat), 2))
    except KeyError as exc:
        raise _BadHand(f"unknown card {exc.args[0]!r}") from None
    if len(BOARD) < 500_000:
        BOARD[text] = board
    return board


# -- all-in EV payoffs ---------------------------------------------------------------
# The dealer of the ACPC 2017 competition paid a hand whose players were all in before
# the river at its all-in expected value: each pot split by the equity of the players
# over every run-out of the remaining board cards, not by the cards that were dealt.

def _all_in_ev_convention(rec: HandRecord, pay_text: str) -> Optional[HandRecord]:
    """``rec`` read under the all-in EV convention, or None when it does not apply.

    Applies when the log's payoffs are not the showdown result but are, to their printed
    precision, the exact all-in equity (:func:`all_in_ev`) with the deck less the hole
    cards of the players still in (or less every hole card the log shows). The record
    then carries the showdown result as ``payoffs`` (what the rules engine replays), the
    log's figures as ``extra["logged_payoffs"]`` and a note in ``extra["notes"]``.
    """
    from cbr.logs.replay import replay_hand  # the rules engine, only for these rare hands

    if rec.payoffs is None or rec.game.betting == "limit":
        return None
    live = [p for p in range(rec.n_players) if not any(a.kind == "f" and a.position == p for a in rec.actions)]
    if any(rec.hole_cards[p] is None for p in live):
        return None
    committed = _committed(rec)
    dead = [c for p in live for c in rec.hole_cards[p]]  # type: ignore[union-attr]
    cards = all_in_ev([rec.hole_cards[p] for p in live], live, rec.board, committed, dead)
    if all(abs(a - b) <= 1e-6 for a, b in zip(rec.payoffs, cards)):
        return None                   # paid by the cards: the usual case, no replay needed
    try:
        replay_hand(rec)
        return None                   # paid by the cards to the odd chip
    except (CBRError, ValueError):
        pass
    try:
        replayed = replay_hand(rec, check_payoffs=False)
    except (CBRError, ValueError):
        return None                   # rejected for another reason: the engine will say why
    state, showdown = replayed.state, replayed.payoffs
    live = [p for p in range(rec.n_players) if not state.folded[p]]
    if showdown is None or len(live) < 2 or rec.payoffs is None:
        return None
    logged = rec.payoffs
    tolerance = [0.5 * 10.0 ** -(len(t) - t.index(".") - 1 if "." in t else 0) + 1e-9
                 for t in pay_text.split("|")]
    known = BOARD_SIZES[rec.actions[-1].street]
    shown = [p for p in range(rec.n_players) if rec.hole_cards[p] is not None]
    for deck_less, who in (("the hole cards of the players in the hand", live),
                           ("every hole card the log shows", shown)):
        dead = [c for p in who for c in rec.hole_cards[p]]  # type: ignore[union-attr]
        ev = all_in_ev([rec.hole_cards[p] for p in live], live, rec.board[:known], state.total_committed,
                       dead)
        if all(abs(a - b) <= t for a, b, t in zip(logged, ev, tolerance)):
            note = (f"payoffs are the all-in expected value (ACPC 2017 convention): all in on the "
                    f"{STREETS[rec.actions[-1].street]}, equity over every run-out of the deck less "
                    f"{deck_less}; showdown result {list(showdown)} used as payoffs")
            extra = dict(rec.extra)
            extra["notes"] = tuple(extra.get("notes", ())) + (note,)
            extra["logged_payoffs"] = logged
            extra["payoffs_convention"] = "all-in EV"
            return HandRecord(rec.source, rec.line, rec.hand_id, rec.game, rec.players, rec.hole_cards,
                              rec.board, rec.actions, tuple(showdown), rec.stacks, rec.posted, rec.format,
                              extra)
    return None


def _committed(rec: HandRecord) -> list[float]:
    """Chips each position put in a no-limit hand: the blind, or its last street total
    pre-flop, plus its last street total on every later street.

    >>> [rec] = AcpcParser().parse_text("STATE:1:r300c/r900f:AhKd|QsQc/2c7d9h:300|-300:a|b")
    >>> _committed(rec)              # pre-flop 300 each; on the flop position 0 bets 600
    [900.0, 300.0]
    """
    totals: dict[tuple[int, int], float] = {}
    for a in rec.actions:
        if a.amount is not None:
            totals[(a.street, a.position)] = a.amount
    return [totals.get((0, p), float(rec.game.blinds[p])) + sum(totals.get((s, p), 0.0) for s in (1, 2, 3))
            for p in range(rec.n_players)]


def all_in_ev(holes: list, live: list[int], board: tuple[int, ...], committed: tuple[float, ...],
              dead: list[int]) -> tuple[float, ...]:
    """Net chips per position when every pot is split by the players' equity, exactly.

    ``holes[i]`` are the hole cards of position ``live[i]`` (the players still in),
    ``board`` the cards dealt when the betting ended, ``committed`` every position's chips
    in the pot, ``dead`` the cards out of the deck besides the board. Every run-out of the
    missing board cards is scored with ``evaluator_ext.evaluate_batch``; side pots go to
    the best hand among the players who matched them, ties split.

    >>> ev = all_in_ev([(51, 50), (47, 46)], [0, 1], (), (100.0, 100.0), [51, 50, 47, 46])
    >>> round(ev[0], 2), abs(ev[0] + ev[1]) < 1e-9    # AsAh against KsKh, all in pre-flop: 82.6%
    (65.27, True)
    """
    need = 5 - len(board)
    if need == 0:                     # the showdown of the dealt board: one run-out
        from evaluator_ext import evaluate

        value = [evaluate((*hole, *board)) for hole in holes]
        won = [0.0] * len(committed)
        for pot, eligible in _pots(live, committed):
            top = max(value[i] for i in eligible)
            winners = [live[i] for i in eligible if value[i] == top]
            for p in winners:
                won[p] += pot / len(winners)
        return tuple(w - c for w, c in zip(won, committed))

    import numpy as np

    from evaluator_ext import evaluate_batch

    out = set(dead) | set(board)
    deck = np.array([c for c in range(52) if c not in out], dtype=np.uint8)
    runouts = deck[_combinations(len(deck), need)]
    rows = len(runouts)
    values = np.empty((len(live), rows), dtype=np.int32)
    hand = np.empty((rows, 7), dtype=np.uint8)
    hand[:, 2:2 + len(board)] = board
    hand[:, 2 + len(board):] = runouts
    for i, hole in enumerate(holes):
        hand[:, :2] = hole
        values[i] = evaluate_batch(hand)
    won = [0.0] * len(committed)
    for pot, eligible in _pots(live, committed):
        if len(eligible) == 1:
            won[live[eligible[0]]] += pot
        else:
            v = values[eligible]
            best = v == v.max(axis=0)
            share = (best / best.sum(axis=0)).sum(axis=1) / rows
            for i, sh in zip(eligible, share.tolist()):
                won[live[i]] += pot * sh
    return tuple(w - c for w, c in zip(won, committed))


def _pots(live: list[int], committed: tuple[float, ...] | list[float]) -> list[tuple[float, list[int]]]:
    """The main pot and side pots: (chips, indexes into ``live`` of the players who matched it).

    >>> _pots([0, 1], [100.0, 40.0, 10.0])        # position 2 folded after 10 chips
    [(90.0, [0, 1]), (60.0, [0])]
    """
    out = []
    below = 0.0
    for level in sorted({committed[p] for p in live}):
        pot = sum(min(c, level) - min(c, below) for c in committed)
        out.append((pot, [i for i, p in enumerate(live) if committed[p] >= level]))
        below = level
    return out


def _combinations(n: int, k: int) -> "np.ndarray":
    """Every k-subset of range(n), one sorted row each, in lexicographic order.

    >>> _combinations(4, 2).tolist()
    [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]
    """
    import numpy as np

    if k == 0:
        return np.zeros((1, 0), dtype=np.int64)
    rows = np.arange(n - k + 1, dtype=np.int64).reshape(-1, 1)
    for j in range(1, k):
        last = rows[:, -1]
        counts = np.maximum(0, n - (k - j) + 1 - (last + 1))
        total = int(counts.sum())
        first = np.repeat(last + 1, counts)
        step = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = np.column_stack([np.repeat(rows, counts, axis=0), first + step])
    return rows


def acpc_game(spec: Optional[str], n_players: int) -> GameDef:
    """The game of an ACPC command's ``--game``: a game-file name the reference dealer ships
    (``holdem.limit.2p.reverse_blinds``, with or without ``.game``), or anything
    :func:`cbr.game.spec.load_game` reads; ``None``: the default game of ``n_players``.

    >>> acpc_game("holdem.limit.2p.reverse_blinds.game", 2).name
    'holdem.limit.2p'
    >>> acpc_game(None, 3).n_players
    3
    """
    from cbr.game.spec import default_game, load_game

    if spec is None:
        return default_game(n_players)
    stem = spec[:-5] if spec.endswith(".game") else spec
    if stem in GAME_FILES and not os.path.exists(spec):
        return GAME_FILES[stem]
    return load_game(spec)


# ---------------------------------------------------------------------------------- writing
def acpc_header(game: GameDef) -> str:
    """The first line of our logs: ``# game: <GameDef as compact JSON>`` (the exact rules,
    caps included, read back by :class:`AcpcParser`).

    >>> from cbr.game import preset
    >>> acpc_header(preset("holdem.limit.2p"))[:24]
    '# game: {"name":"holdem.'
    """
    return "# game: " + json.dumps(game.to_dict(), separators=(",", ":"))


def acpc_number(x: float) -> str:
    """Chips as the ACPC reference dealer prints them in ``STATE`` and ``SCORE`` lines: six
    decimals, trailing zeros and point removed (a split pot gives halves or thirds).

    >>> acpc_number(20), acpc_number(-2.5), acpc_number(10 / 3)
    ('20', '-2.5', '3.333333')
    """
    text = f"{float(x):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def acpc_betting(record: HandRecord) -> str:
    """The ACPC betting string of a limit hand (``rc/crc/...``), one ``/`` per board dealt.

    Uses ``record.extra["betting"]`` when the producer stored it (no-limit amounts).
    """
    if record.extra.get("betting"):
        return str(record.extra["betting"])
    if record.game.betting != "limit":
        raise LogFormatError(f"hand {record.hand_id}: no-limit betting needs the ACPC string in extra['betting']")
    streets = max([STREET_OF_BOARD.get(len(record.board), 0)] + [a.street for a in record.actions])
    parts = [""] * (streets + 1)
    for a in record.actions:
        parts[a.street] += a.kind
    return "/".join(parts)


def acpc_cards(record: HandRecord) -> str:
    """``hole|hole.../flop/turn/river`` (an unknown hole is left empty)."""
    holes = "|".join(cards_str(h) if h is not None else "" for h in record.hole_cards)
    b = record.board
    board = "".join("/" + cards_str(b[lo:hi]) for lo, hi in ((0, 3), (3, 4), (4, 5)) if len(b) >= hi)
    return holes + board


def acpc_state_line(record: HandRecord) -> str:
    """One ``STATE:`` line."""
    if record.payoffs is None:
        raise LogFormatError(f"hand {record.hand_id}: an ACPC log needs the payoffs")
    for name in record.players:
        if any(ch in name for ch in ":|\n") or not name:
            raise LogFormatError(f"player name {name!r} cannot be written to an ACPC log (':' '|' or empty)")
    return (f"STATE:{record.hand_id}:{acpc_betting(record)}:{acpc_cards(record)}:"
            f"{'|'.join(acpc_number(p) for p in record.payoffs)}:{'|'.join(record.players)}")


class AcpcLines:
    """The lines of an ACPC log, hand by hand: the header before the first ``STATE:`` line,
    the running totals per player for the closing ``SCORE:`` line. The one formatter of
    :class:`AcpcLogWriter` and :func:`dumps`."""

    def __init__(self, game: GameDef | None = None) -> None:
        self.game = game
        self._header = False
        self._totals: dict[str, float] = {}

    def hand(self, record: HandRecord) -> str:
        """The text one hand adds (with the header before the first hand): whole lines."""
        head = ""
        if not self._header:
            self.game = self.game or record.game
            head = acpc_header(self.game) + "\n"
            self._header = True
        if record.game != self.game:
            raise LogFormatError(f"hand {record.hand_id}: game {record.game.name!r} differs from "
                                 f"the log's {self.game.name!r}")  # type: ignore[union-attr]
        line = acpc_state_line(record)
        for name, pay in zip(record.players, record.payoffs or ()):
            self._totals[name] = self._totals.get(name, 0.0) + pay
        return head + line + "\n"

    def header(self) -> str:
        """The header line now, when the game is known (an empty match still names its game)."""
        if self._header or self.game is None:
            return ""
        self._header = True
        return acpc_header(self.game) + "\n"

    def score(self) -> str:
        """The closing ``SCORE:<totals>:<players>`` line ("" before any hand)."""
        if not self._totals:
            return ""
        names = list(self._totals)
        return f"SCORE:{'|'.join(acpc_number(self._totals[n]) for n in names)}:{'|'.join(names)}\n"


class AcpcLogWriter(WriterBase):
    """ACPC dealer log: ``# game: {...}`` header, one ``STATE:`` line per hand, ``SCORE:`` last.

    The header is written from the first hand's game (or ``game`` if given). The file
    appears when the writer is closed (:class:`~cbr.logs.output.LogFile`); ``overwrite``
    and ``make_parents`` as in :func:`~cbr.logs.output.check_output_path`.
    """

    def __init__(self, path: str | os.PathLike[str], game: GameDef | None = None, *,
                 overwrite: bool = True, make_parents: bool = True) -> None:
        self._file = LogFile(path, overwrite=overwrite, make_parents=make_parents)
        self.path = self._file.path
        self._lines = AcpcLines(game)
        if game is not None:
            self._file.write(self._lines.header())

    @property
    def game(self) -> GameDef | None:
        return self._lines.game

    def write(self, record: HandRecord) -> None:
        self._file.write(self._lines.hand(record))

    def close(self) -> None:
        if not self._file.open:
            return
        self._file.write(self._lines.score())
        self._file.commit()

    def abort(self) -> None:
        self._file.abort()


def dumps(records: Iterable[HandRecord], game: GameDef | None = None) -> str:
    """The text of an ACPC log of ``records`` (what :class:`AcpcLogWriter` writes).

    >>> from cbr.game import preset
    >>> rec = HandRecord(source="m", line=0, hand_id="0", game=preset("holdem.limit.2p"),
    ...     players=("a", "b"), hole_cards=((51, 50), (0, 5)), board=(),
    ...     actions=(Action(0, 1, "r"), Action(0, 0, "f")), payoffs=(-10.0, 10.0))
    >>> dumps([rec]).splitlines()[1:]
    ['STATE:0:rf:AsAh|2c3d:-10|10:a|b', 'SCORE:-10|10:a|b']
    >>> [back] = loads(dumps([rec]))
    >>> back.actions == rec.actions and back.payoffs == rec.payoffs
    True
    """
    lines = AcpcLines(game)
    text = [lines.header()] + [lines.hand(r) for r in records]
    return "".join(text) + lines.score()


def loads(text: str, source: str = "<text>") -> list[HandRecord]:
    """The hands of an ACPC log's text; raises :class:`~cbr.errors.LogFormatError` at the
    first hand that does not read (:class:`AcpcParser` skips and reports them instead)."""
    out: list[HandRecord] = []
    for item in AcpcParser().parse_text(text, source):
        if isinstance(item, ParseIssue):
            raise LogFormatError(str(item))
        out.append(item)
    return out
