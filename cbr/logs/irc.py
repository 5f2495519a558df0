"""Reader for the University of Alberta IRC poker database (limit hold'em, $10/$20).

A *source* is one month's database directory, as the UofA tarball lays it out::

    IRCdata/holdem/199504/hdb          one line per hand (timestamp, pots per round, board)
    IRCdata/holdem/199504/hroster      one line per hand (timestamp, players, nicks)
    IRCdata/holdem/199504/pdb/pdb.NICK one line per hand the player was dealt into

The three are joined by timestamp; a hand's pdb lines sorted by ``position`` (1..n, in
order of dealing) give the hand's seats, which are already in blind order: position 1
posts the small blind, position 2 the big blind, position 3 opens pre-flop and the
first player still in opens every later round. That holds heads-up too (the IRC server
used ring order with two players: position 1 posts the small blind and acts first on
every street - the betting letters show it), so heads-up hands get a game definition
with ``first_to_act == (0, 0, 0, 0)``.

The pdb lines give each player's betting *letters* per round (``Bk``, ``b``, ``kc``)
without amounts; :class:`IrcParser` merges them into one action sequence in turn order,
re-walking the table after every bet or raise, with the fixed bet sizes (10 pre-flop and
flop, 20 turn and river; blinds 5 and 10 from the ``B`` letters). The result is checked
against the hdb pot and player counts at the start of each round and the pdb ``action``
(chips put in) and ``winnings`` columns; a hand that does not add up is skipped as a
:class:`~cbr.logs.record.ParseIssue` naming the hdb line.

Quits and kicks (``Q``/``K``) are folds: the hdb stops counting the quitter at once and
quitters never collect. The letters do not say *when* a player left, so when the player
to act has no letter left, or quits too but collected chips, the others whose next
letter is a quit left first, out of turn: they are folded at that point (an out-of-turn
``f`` by a position in ``extra["quits"]``; :func:`cbr.logs.replay.replay_hand` replays it
with :meth:`HandState.fold_out`), which ends the hand if one player is left.

``sniff`` says True for the database directory, and for a file named ``hdb`` (meaning
its directory); ``hroster`` and ``pdb.*`` files alone say False.

>>> IrcParser().sniff("/nonexistent/dir", "")
False
"""
from __future__ import annotations

import os
from collections import defaultdict
from typing import Iterator, Optional

from cbr.errors import LogFormatError, counted
from cbr.game.actions import Action, limit_action
from cbr.game.gamedef import BOARD_SIZES, MAX_SEATS, GameDef
from cbr.logs.record import HandRecord, ParseIssue, hand_issue
from cbr.logs.source import read_log_text
from evaluator_ext.cards import CARD_OF_TEXT, card_str

__all__ = ["IrcParser"]

_STREET_NAMES = ("pre-flop", "flop", "turn", "river")
_QUIT = frozenset("QK")


class _Corrupt(Exception):
    """Internal: a hand that cannot be read; the message is the ParseIssue reason."""


class _PdbRow:
    __slots__ = ("nick", "pos", "letters", "bankroll", "action", "winnings", "cards", "where")

    def __init__(self, nick: str, pos: int, letters: list[str], bankroll: int, action: int,
                 winnings: int, cards: Optional[tuple[str, str]], where: str) -> None:
        self.nick = nick
        self.pos = pos
        self.letters = letters
        self.bankroll = bankroll
        self.action = action
        self.winnings = winnings
        self.cards = cards
        self.where = where


class IrcParser:
    """Parser plugin ``irc``: the UofA IRC database directory -> HandRecords and ParseIssues.

    Raise cap: the server capped a round at ``raise_cap`` bets/raises (3 pre-flop after
    the big blind, 4 later) while more than two players were in the hand, and lifted the
    cap when two were left: in the April 1995 data all 230 bets/raises beyond the cap
    (45 rounds, up to 53 on one river) come with two players left, while 156 rounds with
    more players stop exactly at the cap. So raises between the last two players are
    read however many; ``max_raises`` bounds the raises made while more than two players
    are in (more is reported as corrupt). Each hand's game has the usual ``raise_cap``
    or, where the hand shows more raises, that many.

    >>> p = IrcParser()
    >>> p.name, p.small_bet, p.big_bet, p.blinds
    ('irc', 10.0, 20.0, (5.0, 10.0))
    """

    name = "irc"

    def __init__(self, *, max_raises: int = 8, small_bet: float = 10.0, big_bet: float = 20.0,
                 blinds: tuple[float, float] = (5.0, 10.0),
                 raise_cap: tuple[int, int, int, int] = (3, 4, 4, 4)) -> None:
        if max_raises < 1:
            raise ValueError(f"max_raises must be at least 1, got {max_raises}")
        self.max_raises = int(max_raises)
        self.small_bet = float(small_bet)
        self.big_bet = float(big_bet)
        self.blinds = (float(blinds[0]), float(blinds[1]))
        self.raise_cap = tuple(int(c) for c in raise_cap)
        self._games: dict[tuple, GameDef] = {}

    # -- plugin protocol -------------------------------------------------------------
    def sniff(self, path: str, head: str) -> bool:
        """True for an IRC database directory (``hdb`` + ``hroster`` + ``pdb/``) or its ``hdb``."""
        directory = _database_dir(path)
        return directory is not None

    def diagnose(self, path: str) -> Optional[str]:
        """Why ``path`` looks like an IRC database but cannot be read as one, or None.

        A folder with ``hdb`` (or that ``hdb`` file) whose ``hroster`` or ``pdb/`` is missing.

        >>> IrcParser().diagnose("/nonexistent/hdb") is None
        True
        """
        directory = path if os.path.isdir(path) else os.path.dirname(path) or "." \
            if os.path.basename(path) == "hdb" else None
        if directory is None or not os.path.isfile(os.path.join(directory, "hdb")) or _database_dir(path):
            return None
        missing = [name for name, there in (("hroster", os.path.isfile(os.path.join(directory, "hroster"))),
                                            ("pdb/", os.path.isdir(os.path.join(directory, "pdb")))) if not there]
        return (f"an IRC poker database needs hdb, hroster and pdb/ in one folder; "
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing in {directory}")

    def parse(self, path: str) -> Iterator[HandRecord | ParseIssue]:
        """Hands of one database directory (or of the directory of an ``hdb`` file), in hdb order.

        Raises :class:`FileNotFoundError` for a missing path and :class:`LogFormatError` for
        a path that is not an IRC database; bad hands become :class:`ParseIssue`.
        """
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file or directory")
        directory = _database_dir(path)
        if directory is None:
            raise LogFormatError(f"{path}: not an IRC poker database (needs hdb, hroster and pdb/ in one directory)")
        hdb_path = os.path.join(directory, "hdb")
        issues: list[ParseIssue] = []
        roster = self._read_roster(os.path.join(directory, "hroster"), issues)
        pdb = self._read_pdb(os.path.join(directory, "pdb"), issues)
        text, note = read_log_text(hdb_path)
        if note is not None:
            issues.append(note)
        yield from issues
        for lineno, raw in enumerate(text.split("\n"), 1):
            fields = raw.split()
            if not fields:
                continue
            try:
                yield self._hand(hdb_path, lineno, fields, roster, pdb)
            except _Corrupt as exc:  # an hdb line of 8 fields or more names its hand first
                yield hand_issue(hdb_path, lineno, str(exc), fields[0] if len(fields) >= 8 else None)

    # -- reading the three files -----------------------------------------------------
    def _read_roster(self, path: str, issues: list[ParseIssue]) -> dict[str, list[str]]:
        roster: dict[str, list[str]] = {}
        if not os.path.exists(path):
            return roster
        text, note = read_log_text(path)
        if note is not None:
            issues.append(note)
        for lineno, raw in enumerate(text.split("\n"), 1):
            fields = raw.split()
            if not fields:
                continue
            if len(fields) < 2 or not (fields[1].isascii() and fields[1].isdigit()) or len(fields) != int(fields[1]) + 2:
                issues.append(ParseIssue(path, lineno, f"corrupt roster line: {raw.strip()!r}"))
                continue
            roster[fields[0]] = fields[2:]
        return roster

    def _read_pdb(self, directory: str, issues: list[ParseIssue]) -> dict[str, list[_PdbRow]]:
        """All player lines of the month, by timestamp (read once per source)."""
        by_time: dict[str, list[_PdbRow]] = defaultdict(list)
        if not os.path.isdir(directory):
            return by_time
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            if not entry.name.startswith("pdb.") or not entry.is_file():
                continue
            text, note = read_log_text(entry.path)
            if note is not None:
                issues.append(note)
            for lineno, raw in enumerate(text.split("\n"), 1):
                f = raw.split()
                if not f:
                    continue
                try:
                    if len(f) not in (11, 13):
                        raise ValueError(f"{counted(len(f), 'field')}")
                    cards = (f[11], f[12]) if len(f) == 13 else None
                    row = _PdbRow(f[0], int(f[3]), f[4:8], int(f[8]), int(f[9]), int(f[10]), cards,
                                  f"{entry.path}:{lineno}")
                except ValueError as exc:
                    issues.append(ParseIssue(entry.path, lineno, f"corrupt player line ({exc}): {raw.strip()!r}"))
                    continue
                by_time[f[1]].append(row)
        return by_time

    # -- one hand --------------------------------------------------------------------
    def _hand(self, source: str, line: int, f: list[str], roster: dict[str, list[str]],
              pdb: dict[str, list[_PdbRow]]) -> HandRecord:
        if len(f) < 8:
            raise _Corrupt(f"corrupt hdb line ({counted(len(f), 'field')}, need at least 8)")
        ts = f[0]
        try:
            n = int(f[3])
            rounds = [tuple(int(x) for x in col.split("/")) for col in f[4:8]]
        except ValueError:
            raise _Corrupt(f"corrupt hdb line: {' '.join(f)!r}") from None
        if any(len(r) != 2 for r in rounds):
            raise _Corrupt(f"corrupt hdb line (round columns must be players/pot): {' '.join(f[4:8])!r}")
        if not 2 <= n <= 23:
            raise _Corrupt(f"hand {ts}: {counted(n, 'player')} dealt")
        board_text = f[8:]
        if len(board_text) not in BOARD_SIZES:
            raise _Corrupt(f"board has {counted(len(board_text), 'card')}: {' '.join(board_text)!r}")
        nicks = roster.get(ts)
        if nicks is None:
            raise _Corrupt(f"hand {ts}: no hroster line")
        if len(nicks) != n:
            raise _Corrupt(f"hand {ts}: hroster lists {counted(len(nicks), 'player')}, hdb says {n}")
        rows = pdb.get(ts, [])
        if len(rows) != n or sorted(r.nick for r in rows) != sorted(nicks):
            have = sorted(r.nick for r in rows)
            missing = sorted(set(nicks) - set(have))
            dup = sorted({x for x in have if have.count(x) > 1})
            extra = sorted(set(have) - set(nicks))
            detail = "; ".join(s for s in (
                f"missing {', '.join(missing)}" if missing else "",
                f"duplicated {', '.join(dup)}" if dup else "",
                f"not on roster {', '.join(extra)}" if extra else "") if s)
            raise _Corrupt(f"hand {ts}: {len(rows)} pdb records for {counted(n, 'player')} ({detail or 'mismatch'})")
        rows = sorted(rows, key=lambda r: r.pos)
        if [r.pos for r in rows] != list(range(1, n + 1)):
            raise _Corrupt(f"hand {ts}: positions {[r.pos for r in rows]} are not 1..{n}")

        # cards: board as dealt, hole cards of players who showed
        seen: set[int] = set()
        board = tuple(self._card(c, seen, ts) for c in board_text)
        holes: list[Optional[tuple[int, int]]] = []
        for r in rows:
            holes.append(None if r.cards is None else
                         (self._card(r.cards[0], seen, ts), self._card(r.cards[1], seen, ts)))

        actions, contributed, posted, nominal, first_pre, caps, per_round, quits = self._betting(rows, ts)

        # checks against the hdb and pdb columns
        for s in range(3):
            want_players, want_pot = rounds[s]
            got_players, got_pot, betting = per_round[s]
            if (want_players, want_pot) != (got_players, got_pot) and not (want_players == 0 and not betting):
                raise _Corrupt(f"hand {ts}: at the start of the {_STREET_NAMES[s + 1]} the hdb says "
                               f"{counted(want_players, 'player')} / pot {want_pot}, the betting gives "
                               f"{got_players} / {got_pot:g}")
        final_pot = sum(contributed)
        if rounds[3][1] != final_pot:
            raise _Corrupt(f"hand {ts}: final pot {final_pot:g} from the betting, hdb says {rounds[3][1]}")
        for r, c in zip(rows, contributed):
            if r.action != c:
                raise _Corrupt(f"hand {ts}: {r.nick} put in {c:g} by the betting letters, pdb says {r.action}")
        if sum(r.winnings for r in rows) != final_pot:
            raise _Corrupt(f"hand {ts}: winnings {sum(r.winnings for r in rows)} do not add up to the pot {final_pot:g}")
        last = max((a.street for a in actions), default=0)
        if len(board) < BOARD_SIZES[last]:
            raise _Corrupt(f"hand {ts}: board has {counted(len(board), 'card')} but betting reached the "
                           f"{_STREET_NAMES[last]}")

        if n > MAX_SEATS:
            raise _Corrupt(f"hand {ts}: {counted(n, 'player')} dealt; game definitions seat at most {MAX_SEATS}")
        game = self._game(n, nominal, first_pre, caps)
        standard = tuple(self.blinds) + (0.0,) * (n - 2)
        return HandRecord(
            source=source, line=line, hand_id=ts, game=game,
            players=tuple(r.nick for r in rows), hole_cards=tuple(holes), board=board,
            actions=tuple(actions), payoffs=tuple(float(r.winnings - r.action) for r in rows),
            stacks=tuple(float(r.bankroll) for r in rows),
            posted=None if tuple(posted) == standard else tuple(posted),
            format=self.name,
            extra={"hand_number": f[2], "dealer": f[1], "quits": tuple(quits),
                   "winnings": tuple(r.winnings for r in rows)},
        )

    @staticmethod
    def _card(text: str, seen: set[int], ts: str) -> int:
        c = CARD_OF_TEXT.get(text)
        if c is None:
            raise _Corrupt(f"hand {ts}: unknown card {text!r}")
        if c in seen:
            raise _Corrupt(f"hand {ts}: card {card_str(c)} dealt twice")
        seen.add(c)
        return c

    def _game(self, n: int, posted: list[float], first_pre: int, caps: tuple[int, ...]) -> GameDef:
        key = (n, tuple(posted), first_pre, caps)
        game = self._games.get(key)
        if game is None:
            sb, bb = self.blinds
            kind = "" if tuple(posted[:2]) == (sb, bb) and not any(posted[2:]) else ".blinds-" + "-".join(
                f"{p:g}" for p in posted)
            cap = "" if caps == self.raise_cap else ".cap-" + ("" if max(caps) < 10 else "-").join(
                str(c) for c in caps)
            game = GameDef(f"irc.{self.small_bet:g}-{self.big_bet:g}.{n}p{kind}{cap}", n, tuple(posted),
                           self.small_bet, self.big_bet, caps, (first_pre, 0, 0, 0))
            self._games[key] = game
        return game

    # -- merging the letters ---------------------------------------------------------
    def _betting(self, rows: list[_PdbRow], ts: str):
        """Replay the per-player letters in turn order (see :class:`_Betting`).

        Returns (actions, chips put in per position, blinds posted, nominal blinds,
        pre-flop opener, raise caps, [(players, pot, betting) at the start of flop/turn/river],
        quitters).
        """
        hand = _Betting(self, rows, ts)
        first_pre = hand.post_blinds()
        for street in range(4):
            hand.play_round(street, first_pre)
        return (hand.actions, hand.put, hand.posted, hand.nominal, first_pre, tuple(hand.caps),
                hand.per_round, hand.quits)

    @staticmethod
    def _leave_out_of_turn(p: int, street: int, rest: list[str], idx: list[int], folded: list[bool],
                           all_in: list[bool], quit_pending: list[bool], quits: list[int], to_act: set[int],
                           actions: list[Action], live: int) -> int:
        """Fold, out of turn, every other player still betting whose next letter is a quit
        (or who quit earlier and waits for his turn); returns the players left."""
        n = len(rest)
        for k in range(1, n):
            q = (p + k) % n
            if folded[q] or all_in[q]:
                continue
            j = idx[q]
            if quit_pending[q]:
                quit_pending[q] = False
            elif j < len(rest[q]) and rest[q][j] in _QUIT:
                idx[q] = j + 1
            else:
                continue
            folded[q] = True
            live -= 1
            quits.append(q)
            to_act.discard(q)
            actions.append(limit_action(street, q, "f"))
            if live <= 1:
                break
        return live

    @staticmethod
    def _leftovers(rest: list[str], idx: list[int], ts: str, street: int, folded: list[bool],
                   quit_pending: list[bool], quits: list[int], rows: Optional[list[_PdbRow]] = None) -> None:
        """Letters not used by the round: only quits/kicks may remain (they fold later)."""
        for p, s in enumerate(rest):
            tail = s[idx[p]:]
            if not tail:
                continue
            if set(tail) <= _QUIT:
                if not folded[p]:
                    quit_pending[p] = True
                continue
            who = rows[p].nick if rows else f"position {p + 1}"
            raise _Corrupt(f"hand {ts}: {who}'s letters {tail!r} on the {_STREET_NAMES[street]} "
                           f"are left over after the round")


class _Betting:
    """One hand's betting, rebuilt from the players' letters: the blinds, then each round.

    The letters have no amounts: a round is walked in turn order from the pre-flop opener
    (or the first player still in), each player taking his next letter, and walked again
    after every bet or raise until everyone still able to bet has answered it. Chips follow
    the fixed bet sizes, limited by each player's bankroll (an all-in).

    Raise cap: the IRC server capped a round at ``raise_cap`` bets and raises while more
    than two players were in the hand, and lifted the cap once only two were left
    (heads-up raising wars). So the raises made while more than two players are in are
    bounded by the parser's ``max_raises``; the raises between the last two are not.
    """

    __slots__ = ("parser", "rows", "ts", "n", "stack", "put", "folded", "all_in", "quit_pending", "quits",
                 "actions", "letters", "posted", "nominal", "caps", "per_round",
                 # the round being played
                 "street", "rest", "idx", "this", "level", "size", "to_act", "live", "raises", "crowded")

    def __init__(self, parser: "IrcParser", rows: list[_PdbRow], ts: str) -> None:
        n = len(rows)
        self.parser = parser
        self.rows = rows
        self.ts = ts
        self.n = n
        self.stack = [float(r.bankroll) for r in rows]
        self.put = [0.0] * n
        self.folded = [False] * n
        self.all_in = [False] * n
        self.quit_pending = [False] * n
        self.quits: list[int] = []
        self.actions: list[Action] = []
        self.letters = [[("" if r.letters[s] == "-" else r.letters[s]) for r in rows] for s in range(4)]
        self.posted = [0.0] * n
        self.nominal = [0.0] * n
        self.caps = list(parser.raise_cap)
        self.per_round: list[tuple[int, float, bool]] = []

    def _corrupt(self, what: str) -> _Corrupt:
        return _Corrupt(f"hand {self.ts}: {what}")

    def post_blinds(self) -> int:
        """Post the leading ``B`` letters (small then big; one ``B`` alone is the big blind);
        returns the pre-flop opener."""
        n, pre, stack = self.n, self.letters[0], self.stack
        posters = [p for p in range(n) if pre[p].startswith("B")]
        if len(posters) > 2:
            raise self._corrupt(f"{len(posters)} blinds posted")
        blinds = self.parser.blinds
        amounts = {2: blinds, 1: (blinds[1],), 0: ()}[len(posters)]
        for p, amt in zip(posters, amounts):
            self.nominal[p] = amt
            pay = min(amt, stack[p])
            self.posted[p] = pay
            stack[p] -= pay
            self.put[p] += pay
            rest = pre[p][1:]
            if rest.startswith("A"):
                rest = rest[1:]
            if stack[p] <= 0:
                self.all_in[p] = True
            pre[p] = rest
        if any("B" in pre[p] for p in range(n)):
            raise self._corrupt("a blind letter B in the middle of the betting")
        return (posters[-1] + 1) % n if posters else 0

    def play_round(self, street: int, first: int) -> None:
        """One betting round: the table at its start (for the hdb checks), the turns, and
        what the round leaves over. ``first`` opens the pre-flop round."""
        n, folded, all_in = self.n, self.folded, self.all_in
        self.street = street
        self.live = n - sum(folded)
        self.rest = self.letters[street]
        if self.live <= 1:                  # the hand is over: only quits may be left
            if street > 0:
                self.per_round.append((0, 0, False))
            self.parser._leftovers(self.rest, [0] * n, self.ts, street, folded, self.quit_pending, self.quits)
            return
        self.idx = [0] * n
        self.this = self.posted[:] if street == 0 else [0.0] * n
        self.level = max(self.nominal) if street == 0 else 0.0
        self.size = self.parser.small_bet if street < 2 else self.parser.big_bet
        self.raises = self.crowded = 0
        to_act = self.to_act = {p for p in range(n) if not folded[p] and not all_in[p]}
        if len(to_act) == 1 and all(self.this[p] >= self.level for p in to_act):
            to_act.clear()  # everyone else all-in and matched: no betting
        if street > 0:
            # the hdb counts players still in (a quitter waiting for his turn is out);
            # it writes 0/0 for a round without betting (all but one all-in)
            waiting = sum(1 for q in range(n) if self.quit_pending[q] and not folded[q])
            self.per_round.append((self.live - waiting, sum(self.put), bool(to_act)))
        p = first if street == 0 else 0
        turn = self._turn
        while True:
            to_act = self.to_act        # a bet or raise makes a new set
            if not to_act or self.live <= 1:
                break
            while p not in to_act:      # the next player in turn order who must act
                p = p + 1 if p + 1 < n else 0
            if not turn(p):
                break
            p = p + 1 if p + 1 < n else 0
        if self.crowded > self.parser.max_raises:
            raise self._corrupt(f"{self.raises} bets/raises on the {_STREET_NAMES[street]}, {self.crowded} "
                                f"with more than two players in the hand (more than "
                                f"{self.parser.max_raises}): corrupt")
        # preflop the big blind is not counted by ACPC caps; bets/raises are 'r' actions
        self.caps[street] = max(self.caps[street], self.raises)
        self.parser._leftovers(self.rest, self.idx, self.ts, street, folded, self.quit_pending, self.quits,
                               self.rows)

    def _turn(self, p: int) -> bool:
        """Player ``p`` acts on his next letter; False when the hand ended before his turn."""
        s, i = self.rest[p], self.idx[p]
        if i < len(s) and s[i] not in _QUIT:
            letter = s[i]                   # the usual case: his next letter, no one leaving
            self.idx[p] = i = i + 1
        else:
            letter = self._next_letter(p)
            if letter is None:
                return False
            i = self.idx[p]
        flag = False
        if letter in _QUIT or letter == "f":
            self.folded[p] = True
            self.live -= 1
            if letter != "f":
                self.quits.append(p)
                self.quit_pending[p] = False
            kind = "f"
        else:
            if letter == "k" and self.this[p] >= self.level:
                kind = "c"                  # a check: no chips
            else:
                kind = self._put_in(p, letter)
            if i < len(s) and s[i] == "A":
                self.idx[p] = i + 1
                flag = True
            if self.stack[p] <= 0:
                flag = True
                self.all_in[p] = True
        self.actions.append(limit_action(self.street, p, kind, flag))  # type: ignore[arg-type]
        self.to_act.discard(p)
        return True

    def _next_letter(self, p: int) -> Optional[str]:
        """The letter ``p`` plays now (a quitter waiting for his turn plays ``Q``); None
        when the others' leaving ended the hand first."""
        s, i = self.rest[p], self.idx[p]
        quitting = s[i] in _QUIT if i < len(s) else self.quit_pending[p]
        if (i >= len(s) and not quitting) or (quitting and self.rows[p].winnings > 0):
            # p has no letter left, or left too but collected chips (so he did not fold
            # first): whoever else left the table left before p's turn, out of turn, and
            # was folded at once, which ended the hand when one player was left. (The
            # letters do not say who left first; the pdb does.)
            self.live = self.parser._leave_out_of_turn(p, self.street, self.rest, self.idx, self.folded,
                                                       self.all_in, self.quit_pending, self.quits, self.to_act,
                                                       self.actions, self.live)
            if self.live <= 1:
                return None
        if i < len(s):
            self.idx[p] = i + 1
            return s[i]
        if self.quit_pending[p]:
            return "Q"
        raise self._corrupt(f"{self.rows[p].nick} (position {p + 1}) has no letter left for his turn on the "
                            f"{_STREET_NAMES[self.street]}")

    def _put_in(self, p: int, letter: str) -> str:
        """Chips for a check, call, bet or raise; the action's kind (``r`` only when the
        bet level went up: a short all-in raise is a call)."""
        this, level = self.this, self.level
        if letter == "c":
            need = level - this[p]
            if need <= 0:
                raise self._corrupt(f"{self.rows[p].nick} calls with nothing to call {self._on()}")
            self._pay(p, need)
            return "c"
        if letter == "k":
            if level - this[p] > 0:
                raise self._corrupt(f"{self.rows[p].nick} checks facing a bet {self._on()}")
            return "c"
        if letter == "b" or letter == "r":
            self._check_bet(p, letter)
            self._pay(p, level + self.size - this[p])
            if this[p] <= level:
                return "c"
            self.level = this[p]
            self.raises += 1
            self.crowded += self.live > 2
            # everyone else who can still bet must answer it
            folded, all_in = self.folded, self.all_in
            self.to_act = {q for q in range(self.n) if not folded[q] and not all_in[q]}
            return "r"
        raise self._corrupt(f"unexpected letter {letter!r} in {self.rows[p].nick}'s "
                            f"{_STREET_NAMES[self.street]} betting {self.rest[p]!r}")

    def _check_bet(self, p: int, letter: str) -> None:
        """A bet needs no bet before it, a raise one, and both someone who could call."""
        if letter == "b" and self.level > 0:
            raise self._corrupt(f"{self.rows[p].nick} bets into a bet {self._on()}")
        if letter == "r" and self.level == 0:
            raise self._corrupt(f"{self.rows[p].nick} raises with no bet {self._on()}")
        folded, all_in = self.folded, self.all_in
        if not any(q != p and not folded[q] and not all_in[q] for q in range(self.n)):
            raise self._corrupt(f"{self.rows[p].nick} {'bets' if letter == 'b' else 'raises'} {self._on()} "
                                f"when every other player has folded or is all-in (no one could call)")

    def _on(self) -> str:
        return f"on the {_STREET_NAMES[self.street]}"

    def _pay(self, p: int, amount: float) -> None:
        """``p`` puts in ``amount``, or what is left of his bankroll."""
        stack = self.stack
        pay = amount if amount < stack[p] else stack[p]
        stack[p] -= pay
        self.put[p] += pay
        self.this[p] += pay


def _database_dir(path: str) -> Optional[str]:
    """The database directory meant by ``path`` (itself or the directory of its hdb), or None."""
    if os.path.isdir(path):
        directory = path
    elif os.path.basename(path) == "hdb":
        directory = os.path.dirname(path) or "."
    else:
        return None
    if (os.path.isfile(os.path.join(directory, "hdb")) and os.path.isfile(os.path.join(directory, "hroster"))
            and os.path.isdir(os.path.join(directory, "pdb"))):
        return directory
    return None
