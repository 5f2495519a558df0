"""Reader for PokerStars text hand histories of fixed-limit hold'em (cash and tournaments).

A file holds one or more hands, each starting with a ``PokerStars Game #`` (older) or
``PokerStars Hand #`` header; blank lines between hands and a UTF-8 BOM are fine. Only
``Hold'em Limit`` hands are read (also inside mixed games, ``Mixed Hold'em (Hold'em
Limit)``); any other variant becomes a :class:`~cbr.logs.record.ParseIssue` "variant X
not supported".

Table shape. The bracket of a limit table gives *small bet / big bet* (``$1/$2``:
bets 1 pre-flop and flop, 2 turn and river); the big blind is the small bet and the
small blind what was actually posted (``$0.05/$0.10`` posts 0.02 / 0.05). Tournament
levels ``Level III (50/100)`` are read the same way. Positions follow the blind order of
:func:`~cbr.game.standard_table`: position 0 the small blind, 1 the big blind, ..., the
button last; heads-up the small blind is position 0 even in 2005 hands where the button
marker sits on the big blind. Without a small blind the big blind is position 0 (the
game then has ``blinds == (bb, 0, ...)`` and ``first_to_act == (1, 0, 0, 0)``).
Players dealt in are the seated players with at least one line in the hand (a post, an
action, a deal); a player who ``is sitting out`` and never acts was not dealt in.

Money. ``posted`` records the blinds actually posted when they differ from the game's
(players posting to come in, short all-in blinds); the dead part of ``posts small & big
blinds`` goes to the pot only and is kept in ``extra["dead"]``. ``stacks`` come from
the seat lines (short all-ins need them). ``payoffs`` are chips collected minus chips
put in (uncalled bets returned), so they are *net of rake*: ``sum(payoffs) == -rake``
(``extra["rake"]``). Each hand must balance: chips put in == total pot == collected +
rake, or it is skipped with the reason. Malformed amounts, cards or lines make the hand
a :class:`~cbr.logs.record.ParseIssue`; ``parse`` raises only for an unreadable path.

Speed: each file is read with one open and one read, and each hand in one pass over its
lines (``python3 bench/bench_parsers.py`` shows hands per second).

>>> PokerStarsParser().sniff("h.txt", "\\ufeffPokerStars Game #1: Hold'em Limit ($1/$2 USD)")
True
"""
from __future__ import annotations

import re
from bisect import bisect_right
from operator import itemgetter
from typing import Iterator, Optional

from cbr.errors import counted
from cbr.game.actions import Action, limit_action
from cbr.game.gamedef import MAX_SEATS, GameDef
from cbr.logs.record import HandRecord, ParseIssue, hand_issue, text_before_hands
from cbr.logs.source import read_log_text
from evaluator_ext.cards import CARD_OF_TEXT, card_str

__all__ = ["PokerStarsParser"]

_HEADER = re.compile(r"^(?:\ufeff)?PokerStars (?:Zoom )?(?:Game|Hand) #(\d+):\s*(.*)$")
_CASH_STAKES = re.compile(r"\(([$€£]?)([\d.,]+)/[$€£]?([\d.,]+)(?: [A-Z]{3})?\)")
_LEVEL = re.compile(r"Level [^(]*\(([\d.,]+)/([\d.,]+)\)")
_TABLE = re.compile(r"^Table '.*' (?:.*?)Seat #(\d+) is the button")
_SEAT = re.compile(r"^Seat (\d+): (.+?) \([$€£]?([\d.,]+) in chips(?:[^)]*)\)(.*)$")
_SEATS = re.compile(_SEAT.pattern, re.M)
_UNCALLED = re.compile(r"^Uncalled bet \([$€£]?([\d.,]+)\) returned to (.+)$")
_COLLECTED = re.compile(r"^(.+?) collected [$€£]?([\d.,]+) from (?:the )?(?:main |side )?pot(?:-\d+)?")
_TOTAL = re.compile(r"^Total pot [$€£]?([\d.,]+).*?\| Rake [$€£]?([\d.,]+)")
_CARDS = re.compile(r"\[([^\]]*)\]")
_AMOUNT = re.compile(r"[$€£]?([\d][\d.,]*)")
#: A line only a hand has (its table, seats, streets, blinds, cards, actions and results): text
#: before the first header with one is a hand whose header was damaged, not a file's header.
_HAND_LINE = re.compile(r"^(?:Table '|Seat \d+: |\*\*\* |Dealt to |Total pot |Uncalled bet |Board \[)"
                        r"|: (?:posts |folds|checks|calls |bets |raises |shows |mucks)| collected ")


def _hand_line(line: str) -> bool:
    """Whether ``line`` is a line of a hand (:data:`_HAND_LINE`).

    >>> _hand_line("Seat 6: Hero ($40 in chips)"), _hand_line("fblm2002: posts small blind $0.50")
    (True, True)
    >>> _hand_line("Hand histories exported 2010-07-03"), _hand_line("# my session notes")
    (False, False)
    """
    return _HAND_LINE.search(line) is not None


#: Lines of a hand that are no play and no player's action, written by the client about the table:
#: joins and leaves, connections, sitting out, chat, tournament finishes (the name before them
#: need not be seated: a player who joins, one sitting out). Any other line that is not a seated
#: player's (``name: ...``), a section, a deal or chips returned or collected is not understood,
#: and the hand is skipped naming it.
_TABLE_NOTE = re.compile(
    r"^.+?(?::)? (?:joins the table at seat #\d+|leaves the table|is connected|is disconnected|has returned"
    r"|has timed out(?: while (?:being )?disconnected)?|is sitting out|sits out|will be allowed to play after the "
    r"button|was removed from the table(?: for failing to post)?|finished the tournament(?: in \d+\w* place)?"
    r"(?: and received .+)?|wins the tournament and receives .+|re-buys and receives .+"
    r"|takes the add-on and receives .+)\.?$"
    r"|^.+ said, \".*\"$|^Betting is capped$")
#: A line written as a player's play (``name: posts|folds|checks|calls|bets|raises|shows``): by a
#: name without a seat line, the hand's seats are damaged (a seat line lost).
_PLAY = re.compile(r"^(.+?): (?:posts |folds|checks|calls |bets |raises |shows \[)")
#: The summary's lines: the pot and rake, the board (of each run), each seat's result.
_SUMMARY_LINE = re.compile(r"^(?:Total pot |Board \[|(?:FIRST|SECOND) Board \[|Seat \d+: |Hand was run twice)")


def _table_note(line: str) -> bool:
    """Whether ``line`` is a harmless note of the client about the table (:data:`_TABLE_NOTE`).

    >>> _table_note("player8 joins the table at seat #8"), _table_note('thewirds said, "yah session"')
    (True, True)
    >>> _table_note("yamofra: sits out"), _table_note("xq#! 12 garbage"), _table_note("Hero: folds")
    (True, False, False)
    """
    return _TABLE_NOTE.match(line) is not None


_GAMES: dict[tuple, GameDef] = {}   # game definitions are immutable: shared by all parsers
_STREETS = {"*** HOLE CARDS ***": 0, "*** FLOP ***": 1, "*** TURN ***": 2, "*** RIVER ***": 3}
_SHOWDOWN = ("*** SHOW DOWN", "*** FIRST", "*** SECOND")
_NOT_BETTING = ("mucks", "doesn't show", "is sitting out", "sits out", "is disconnected", "has timed out",
                "is connected", "has returned", "leaves", "said")
_STREET_NAMES = ("pre-flop", "flop", "turn", "river")
# betting verbs by their first five letters (then checked in full): fold, check, call, bet, raise
_VERBS = {"folds": "f", "check": "k", "calls": "c", "bets ": "b", "raise": "r"}
_CURRENCY = "$€£"
# A limit action as one int, street * _STREET_CODES + 6 * position + 2 * kind (f 0, c 1, r 2)
# + all in, and _ACTIONS[code] its shared Action: a hand's actions are coded without the
# position while the lines are read, and looked up once the positions are known.
_STREET_CODES = 6 * MAX_SEATS
_ACTIONS: list[Action] = [limit_action(street, position, kind, all_in) for street in range(4)  # type: ignore[arg-type]
                          for position in range(MAX_SEATS) for kind in "fcr" for all_in in (False, True)]
_EPS = 1e-6
_INF = float("inf")
_first = itemgetter(0)


class _Bad(Exception):
    """Internal: a hand that cannot be read; the message is the ParseIssue reason, ``at`` the
    index in the hand's lines of the line at fault when the reason is about one line (the issue
    then names that line, not the hand's first)."""

    def __init__(self, reason: str, at: Optional[int] = None) -> None:
        super().__init__(reason)
        self.at = at


def _money(text: str) -> float:
    """Chips from ``1,250`` / ``0.50``; a malformed amount makes the hand unreadable."""
    try:
        x = float(text.replace(",", ""))
    except ValueError:
        raise _Bad(f"unreadable amount {text!r}") from None
    if not 0.0 <= x < _INF:
        raise _Bad(f"unreadable amount {text!r}")
    return x


def _r(x: float) -> float:
    """Chips rounded to the cent (sums of dollar amounts drift in binary)."""
    return round(x + 0.0, 2)


def _hand_starts(text: str, lines: list[str]) -> list[int]:
    """Indexes in ``lines`` (``text`` split at newlines) of the lines that are hand headers."""
    starts: list[int] = []
    pos = 0 if text.startswith("PokerStars ") else text.find("\nPokerStars ") + 1
    if pos == 0 and not text.startswith("PokerStars "):
        return starts
    line_no = counted = 0
    while True:
        line_no += text.count("\n", counted, pos)
        counted = pos
        if _HEADER.match(lines[line_no]):
            starts.append(line_no)
        pos = text.find("\nPokerStars ", pos) + 1
        if pos == 0:
            return starts


class PokerStarsParser:
    """Parser plugin ``pokerstars``: PokerStars limit hold'em text histories.

    >>> PokerStarsParser().name
    'pokerstars'
    """

    name = "pokerstars"

    def __init__(self, *, raise_cap: tuple[int, int, int, int] = (3, 4, 4, 4)) -> None:
        self.raise_cap = tuple(int(c) for c in raise_cap)

    def sniff(self, path: str, head: str) -> bool:
        """True when a line of the head (the first 4 KiB) is a PokerStars hand header.

        Not only the first line: an export whose first line is damaged is still
        recognised, and the damaged text is reported when the file is parsed.

        >>> PokerStarsParser().sniff("x.txt", "garbage\\nPokerStars Hand #1: Hold'em Limit ($1/$2) - x")
        True
        """
        return any(_HEADER.match(line.strip()) for line in head.lstrip("\ufeff").splitlines())

    def parse(self, path: str) -> Iterator[HandRecord | ParseIssue]:
        """Hands of one file in order; bad hands become :class:`ParseIssue` (``file:line``)."""
        text, note = read_log_text(path)
        if note is not None:
            yield note
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = list(map(str.rstrip, text.split("\n")))
        starts = _hand_starts(text, lines)
        first = starts[0] if starts else len(lines)
        # a header or note before the first hand is lines skipped; a hand whose header is damaged, a hand skipped
        yield from text_before_hands(path, lines[:first], _hand_line, "PokerStars Game #")
        seen_ids: set[str] = set()
        starts.append(len(lines))
        for k in range(len(starts) - 1):
            start, end = starts[k], starts[k + 1]
            while end > start and not lines[end - 1]:
                end -= 1
            yield self._one(path, start, lines[start:end], seen_ids)

    def _one(self, path: str, start: int, block: list[str], seen_ids: set[str]) -> HandRecord | ParseIssue:
        try:
            rec = self._hand(path, start + 1, block)
        except _Bad as exc:
            header = _HEADER.match(block[0])
            return hand_issue(path, start + 1 + (exc.at or 0), str(exc), header.group(1) if header else None)
        if rec.hand_id in seen_ids:
            return hand_issue(path, start + 1, "appears twice in the file", rec.hand_id)
        seen_ids.add(rec.hand_id)
        return rec

    # -- one hand --------------------------------------------------------------------
    def _hand(self, path: str, line: int, block: list[str]) -> HandRecord:
        m = _HEADER.match(block[0])
        if m is None:
            raise _Bad("not a PokerStars hand header")
        hand_id, desc = m.group(1), m.group(2)
        if "Hold'em Limit" not in desc:
            variant = desc.split(" - ")[0]
            variant = re.sub(r"^Tournament #\d+, ", "", variant)
            raise _Bad(f"hand #{hand_id}: variant {variant.strip()!r} not supported (only Hold'em Limit)")
        try:
            return self._limit_hand(path, line, block, hand_id, desc)
        except _Bad as exc:
            msg = str(exc)
            raise _Bad(msg if msg.startswith("hand #") else f"hand #{hand_id}: {msg}", exc.at) from None

    def _limit_hand(self, path: str, line: int, block: list[str], hand_id: str, desc: str) -> HandRecord:
        """A ``Hold'em Limit`` hand (see :class:`_LimitHand` for its steps)."""
        return _LimitHand(self, path, line, block, hand_id).read(desc)

    @staticmethod
    def _bad_seat_line(lines: list[str], hand_id: str) -> _Bad:
        """The error naming the first of the seat ``lines`` that does not read."""
        for line in lines:
            sm = _SEAT.match(line)
            try:
                if sm is not None and float(sm.group(3).replace(",", "")) >= 0:
                    continue
            except ValueError:
                pass
            return _Bad(f"hand #{hand_id}: corrupt seat line {line!r}")
        return _Bad(f"hand #{hand_id}: corrupt seat lines")

    @staticmethod
    def _shape_error(block: list[str], k: int, hand_id: str, reason: str) -> _Bad:
        """The error for a malformed line ``k`` of the body; a hand without a summary is
        reported as truncated first (the likelier cause)."""
        for b in block[k + 1:]:
            if b.startswith("*** SUMMARY ***"):
                return _Bad(reason)
        return _Bad(f"hand #{hand_id}: truncated hand (no *** SUMMARY ***)")

    @staticmethod
    def _split_actor(line: str, seats: dict) -> tuple[Optional[str], str]:
        """``name: rest`` for a seated player's line (names may contain ': ')."""
        k = line.find(": ")
        while k != -1:
            if line[:k] in seats:
                return line[:k], line[k + 2:]
            k = line.find(": ", k + 2)
        return None, ""

    @staticmethod
    def _card(text: str, seen: set[int], hand_id: str) -> int:
        c = CARD_OF_TEXT.get(text)  # a card in any letter case ("Ah", "ah", "AH")
        if c is None:
            raise _Bad(f"hand #{hand_id}: unknown card {text!r}")
        if c in seen:
            raise _Bad(f"hand #{hand_id}: card {card_str(c)} dealt twice")
        seen.add(c)
        return c

    def _game(self, n: int, no_small: bool, small_bet: float, big_bet: float,
              caps: tuple[int, ...], sb_amount: Optional[float]) -> GameDef:
        if no_small:
            blinds = (small_bet,) + (0.0,) * (n - 1)
            first = (1 % n, 0, 0, 0)
        else:
            sb = sb_amount if sb_amount is not None else small_bet / 2
            blinds = (sb, small_bet) + (0.0,) * (n - 2)
            first = (0, 1, 1, 1) if n == 2 else (2 % n, 0, 0, 0)
        key = (n, blinds, first, small_bet, big_bet, caps, self.raise_cap)
        game = _GAMES.get(key)
        if game is None:
            cap = "" if caps == self.raise_cap else ".cap-" + "".join(str(c) for c in caps)
            name = f"pokerstars.{small_bet:g}-{big_bet:g}.{n}p" + (".no-sb" if no_small else "") + cap
            game = GameDef(name, n, blinds, small_bet, big_bet, caps, first)
            _GAMES[key] = game
        return game


class _LimitHand:
    """One ``Hold'em Limit`` hand read in the order of its parts: the stakes in the
    header, the table and seat lines, one pass over the body (blinds, streets, actions,
    cards dealt and shown, chips returned and collected), the summary, then the
    positions, the chips' balance and the cards.

    Players are keyed by name while the body is read: positions are known only at the
    end (players dealt in = seated players with a line in the hand). The first betting
    fault is kept in ``wrong`` and raised after the checks of the hand's shape (summary,
    sections, board, total pot, players dealt in), which take precedence when a hand has
    several faults.
    """

    __slots__ = ("parser", "path", "line", "block", "hand_id", "small_bet", "big_bet", "tournament", "button",
                 "seats", "street", "board", "shown", "returned", "collected", "acting", "acts", "at", "put",
                 "posted", "dead", "nominal", "this", "sb_first", "bb_first", "sb_amount", "raises", "level",
                 "size", "wrong", "total_pot", "rake", "unread")

    def __init__(self, parser: "PokerStarsParser", path: str, line: int, block: list[str], hand_id: str) -> None:
        self.parser = parser
        self.path = path
        self.line = line
        self.block = block
        self.hand_id = hand_id
        self.street = -1
        self.board: list[str] = []
        self.shown: dict[str, list[str]] = {}
        self.returned: dict[str, float] = {}
        self.collected: dict[str, float] = {}
        self.acting: set[str] = set()
        self.acts: list[tuple[int, str]] = []            # (action code less the position, name)
        self.at = 0                                     # street * _STREET_CODES
        self.put: dict[str, float] = {}
        self.posted: dict[str, float] = {}
        self.dead: dict[str, float] = {}
        self.nominal: dict[str, float] = {}
        self.this: dict[str, float] = {}
        self.sb_first: Optional[str] = None
        self.bb_first: Optional[str] = None
        self.sb_amount: Optional[float] = None
        self.raises = [0, 0, 0, 0]
        self.level = 0.0
        self.wrong: Optional[str] = None
        #: The first line no play can explain (index in the block, reason, whether it is an
        #: action): an action by a name without a seat line first, else a line not understood.
        self.unread: Optional[tuple[int, str, bool]] = None

    def read(self, desc: str) -> HandRecord:
        """The hand as a record; raises _Bad with the reason."""
        self._stakes(desc)
        body = self._table_and_seats()
        summary = self._body(body)
        self._summary(summary)
        names, no_small = self._positions()
        pos = {nm: p for p, nm in enumerate(names)}
        actions = [_ACTIONS[code + 6 * pos[nm]] for code, nm in self.acts]
        payoffs, stacks, dead_p, notes = self._balance(names, pos)
        board, holes, partial = self._cards(names, pos)
        return self._record(names, pos, no_small, actions, payoffs, stacks, dead_p, notes, board, holes, partial)

    # -- header, table, seats ----------------------------------------------------------
    def _stakes(self, desc: str) -> None:
        """Small and big bet from the header: a tournament level or the cash stakes."""
        lm = _LEVEL.search(desc)
        sm = lm or _CASH_STAKES.search(desc)
        if sm is None:
            raise _Bad(f"hand #{self.hand_id}: no stakes in the header")
        if lm:
            self.small_bet, self.big_bet = _money(lm.group(1)), _money(lm.group(2))
        else:
            self.small_bet, self.big_bet = _money(sm.group(2)), _money(sm.group(3))
        self.tournament = lm is not None
        self.size = self.small_bet

    def _table_and_seats(self) -> int:
        """The button from the table line and every seat line; returns the body's first line."""
        block, hand_id = self.block, self.hand_id
        nb = len(block)
        if nb < 2:
            raise _Bad(f"hand #{hand_id}: truncated hand (header only)")
        tm = _TABLE.match(block[1])
        if tm is None:
            raise _Bad(f"hand #{hand_id}: no table/button line")
        self.button = int(tm.group(1))
        seats: dict[str, tuple[int, float, bool]] = {}   # name -> (seat, stack, sitting out)
        i = 2
        while i < nb and block[i].startswith("Seat "):
            i += 1
        found = _SEATS.findall("\n".join(block[2:i]))      # one match per good line
        try:
            if len(found) != i - 2:
                raise ValueError
            for seat_no, who, chips, tail in found:
                seats[who] = (int(seat_no), float(chips.replace(",", "")), "sitting out" in tail)
        except ValueError:                                  # a line that does not match, or "1.2.3" chips
            raise self.parser._bad_seat_line(block[2:i], hand_id) from None
        if len(seats) < 2:
            raise _Bad(f"hand #{hand_id}: {counted(len(seats), 'player')} seated")
        self.seats = seats
        return i

    # -- the body, in one pass -----------------------------------------------------------
    def _body(self, i: int) -> int:
        """Read the lines from ``i`` to the summary; returns the summary's line."""
        block, seats, hand_id = self.block, self.seats, self.hand_id
        acting, acts, bet = self.acting, self.acts, self._bet
        betting = False                                     # pre-flop .. river
        street, at = -1, 0                                  # copies of self.street, self.at
        for k, b in enumerate(block[i:], i):
            if not b:
                continue
            # the common case first: "name: action" by a seated player
            name, colon, rest = b.partition(": ")
            if not colon or name not in seats:
                if b.startswith("*** "):
                    if b.startswith("*** SUMMARY ***"):
                        return k
                    betting = self._section(k, b)
                    street, at = self.street, self.at
                    continue
                if b.startswith("Dealt to "):
                    self._dealt(b)
                    continue
                if self._chips_line(b):
                    continue
                name, rest = self.parser._split_actor(b, seats)
                if name is None:
                    if not _table_note(b):  # chat, joins/leaves, table messages are no play
                        self._not_understood(k, b)
                    continue
            # a line of a seated player: name, rest
            if betting and (verb := _VERBS.get(rest[:5])) is not None:
                if verb == "f":                     # the commonest lines: a fold, a check
                    acting.add(name)
                    if self.wrong is None:
                        acts.append((at + rest.endswith("and is all-in"), name))
                    continue
                if verb == "k" and rest.startswith("checks") and self.this.get(name, 0.0) + _EPS >= self.level:
                    acting.add(name)
                    if self.wrong is None:
                        acts.append((at + 2 + rest.endswith("and is all-in"), name))
                    continue
                if bet(name, rest, verb):
                    continue
            if street == -1 and rest.startswith("posts "):   # the blinds (and antes)
                self._post(name, rest)
                continue
            if rest.startswith("shows ["):
                cm = _CARDS.search(rest)
                if cm is None:
                    raise self.parser._shape_error(block, k, hand_id, f"hand #{hand_id}: no cards in {b!r}")
                self.shown[name] = cm.group(1).split()
                continue
            if street >= 4 or rest.startswith(_NOT_BETTING):
                continue
            acting.add(name)
            if self.wrong is None:
                self.wrong = (f"hand #{hand_id}: unknown action {name}: {rest}" if street >= 0 else
                              f"hand #{hand_id}: unexpected line before the cards: {name}: {rest}")
        raise _Bad(f"hand #{hand_id}: truncated hand (no *** SUMMARY ***)")

    def _not_understood(self, k: int, b: str) -> None:
        """Keep line ``k`` (``b``), which no seated player, section, deal, chips or note of the
        table explains, as the hand's fault: an action by a player without a seat line before any
        other such line (the seat lines are damaged: the chips would not balance), else the first."""
        play = _PLAY.match(b)
        if play is not None:
            if self.unread is None or not self.unread[2]:
                self.unread = (k, f"hand #{self.hand_id}: an action by {play.group(1)}, who has no seat in the "
                                  f"hand's seat lines: {b!r}", True)
        elif self.unread is None:
            self.unread = (k, f"hand #{self.hand_id}: line not understood: {b!r}", False)

    def _section(self, k: int, b: str) -> bool:
        """A ``*** ... ***`` line: the next street (and its board cards) or the showdown;
        returns whether betting goes on."""
        block, hand_id = self.block, self.hand_id
        if b.startswith(_SHOWDOWN):
            self.street = 4
            return False
        section = b[:b.find(" ***", 3) + 4]       # "*** FLOP ***"
        s = _STREETS.get(section)
        if s is None:
            raise self.parser._shape_error(block, k, hand_id, f"hand #{hand_id}: unknown section {b!r}")
        if s != self.street + 1:
            raise self.parser._shape_error(block, k, hand_id, f"hand #{hand_id}: {section} out of order")
        self.street = s
        self.at = s * _STREET_CODES
        if s == 0:
            self.this = dict(self.posted)
            self.level = max(max(self.nominal.values(), default=0.0), max(self.posted.values(), default=0.0))
        else:
            groups = _CARDS.findall(b)
            new = groups[-1].split() if groups else []
            if len(new) != (3 if s == 1 else 1):
                raise self.parser._shape_error(block, k, hand_id, f"hand #{hand_id}: bad board line {b!r}")
            self.board.extend(new)
            self.this = {}
            self.level = 0.0
            if s == 2:
                self.size = self.big_bet
        return True

    def _dealt(self, b: str) -> None:
        """``Dealt to NAME [cards]``: the hero's hole cards (and he is dealt in)."""
        rest = b[9:]
        name = rest[: rest.rfind(" [")] if " [" in rest else rest
        cm = _CARDS.search(rest, len(name))
        if name in self.seats and cm:
            self.shown[name] = cm.group(1).split()
            self.acting.add(name)

    def _chips_line(self, b: str) -> bool:
        """An uncalled bet returned or a pot collected; False for any other line."""
        um = _UNCALLED.match(b) if b.startswith("Uncalled") else None
        if um:
            who = um.group(2).strip()
            self.returned[who] = self.returned.get(who, 0.0) + _money(um.group(1))
            return True
        cm = _COLLECTED.match(b) if " collected " in b else None
        if cm and cm.group(1) in self.seats:
            self.collected[cm.group(1)] = self.collected.get(cm.group(1), 0.0) + _money(cm.group(2))
            return True
        return False

    def _bet(self, name: str, rest: str, verb: str) -> bool:
        """A check, call, bet or raise line (folds and checks in turn are read by
        ``_body``); False when ``rest`` only looks like one."""
        hand_id, street = self.hand_id, self.street
        this = self.this
        if verb == "k":
            if not rest.startswith("checks"):
                return False
            self.acting.add(name)
            if self.wrong is None:
                if this.get(name, 0.0) + _EPS < self.level:
                    self.wrong = f"hand #{hand_id}: {name} checks facing a bet on the {_STREET_NAMES[street]}"
                else:
                    self.acts.append((self.at + 2 + rest.endswith("and is all-in"), name))
            return True
        if verb == "c":
            if not rest.startswith("calls "):
                return False
            self.acting.add(name)
            if self.wrong is None:
                try:
                    amt = _money(rest[6:].split(None, 1)[0].lstrip(_CURRENCY))
                except _Bad as exc:
                    self.wrong = f"hand #{hand_id}: {exc} in {name}: {rest}"
                    return True
                self.put[name] = self.put.get(name, 0.0) + amt
                now = this[name] = round(this.get(name, 0.0) + amt + 0.0, 2)
                if now > self.level + _EPS:
                    self.wrong = f"hand #{hand_id}: {name} calls more than the bet on the {_STREET_NAMES[street]}"
                else:
                    self.acts.append((self.at + 2 + rest.endswith("and is all-in"), name))
            return True
        if verb == "r" and not rest.startswith("raises "):
            return False
        self.acting.add(name)
        if self.wrong is None:
            self._bet_or_raise(name, rest, verb)
        return True

    def _bet_or_raise(self, name: str, rest: str, verb: str) -> None:
        """Chips of a bet or raise, which must be the limit bet (or less, all in)."""
        all_in = rest.endswith("and is all-in")
        words = rest.split()
        before = self.this.get(name, 0.0)
        try:
            if verb == "b":
                to = round(before + _money(words[1].lstrip(_CURRENCY)) + 0.0, 2)
            else:
                to = _money(words[-4 if all_in else -1].lstrip(_CURRENCY))
        except _Bad as exc:
            self.wrong = f"hand #{self.hand_id}: {exc} in {name}: {rest}"
            return
        full = round(self.level + self.size + 0.0, 2)
        if to > full + _EPS or (to < full - _EPS and not all_in):
            self.wrong = (f"hand #{self.hand_id}: {name} {' '.join(words[:4])} on the "
                          f"{_STREET_NAMES[self.street]}, but the limit bet makes it {full:g}: not limit betting")
            return
        self.put[name] = self.put.get(name, 0.0) + (to - before)
        self.this[name] = to
        if to > self.level + _EPS:
            self.level = to
            self.raises[self.street] += 1
            self.acts.append((self.at + 4 + all_in, name))
        else:
            self.acts.append((self.at + 2 + all_in, name))

    def _post(self, name: str, rest: str) -> None:
        """A blind or ante posted before the cards: live and dead chips."""
        self.acting.add(name)
        if rest.startswith("posts small blind"):
            post = "sb"
            if self.sb_first is None:
                self.sb_first = name
        elif rest.startswith("posts big blind"):
            post = "bb"
            if self.bb_first is None:
                self.bb_first = name
        elif rest.startswith("posts small & big blinds"):
            post = "sb+bb"
        elif rest.startswith("posts the ante"):
            post = "ante"
        else:
            post = ""
        if self.wrong is not None:
            return
        hand_id = self.hand_id
        amounts = _AMOUNT.findall(rest)
        if not amounts:
            self.wrong = f"hand #{hand_id}: unexpected line before the cards: {name}: {rest}"
            return
        try:
            amt = _money(amounts[-1])
        except _Bad as exc:
            self.wrong = f"hand #{hand_id}: {exc} in {name}: {rest}"
            return
        posted, dead = self.posted, self.dead
        if post == "sb":
            posted[name] = posted.get(name, 0.0) + amt
            if name == self.sb_first:
                self.sb_amount = self.nominal[name] = self.small_bet / 2 if rest.endswith("and is all-in") else amt
        elif post == "bb":
            posted[name] = posted.get(name, 0.0) + amt
            if name == self.bb_first:
                self.nominal[name] = self.small_bet
        elif post == "sb+bb":
            live = min(self.small_bet, amt)
            posted[name] = posted.get(name, 0.0) + live
            dead[name] = dead.get(name, 0.0) + _r(amt - live)
        elif post == "ante":
            dead[name] = dead.get(name, 0.0) + amt
        else:
            self.wrong = f"hand #{hand_id}: unknown post {name}: {rest}"
            return
        self.put[name] = self.put.get(name, 0.0) + amt

    # -- after the body --------------------------------------------------------------------
    def _summary(self, summary: int) -> None:
        """Cards shown in the summary's seat lines, the total pot and the rake."""
        total_pot = rake = None
        by_seat: Optional[dict[str, str]] = None
        shown = self.shown
        for k, b in enumerate(self.block[summary + 1:], summary + 1):
            if b and _SUMMARY_LINE.match(b) is None:
                self._not_understood(k, b)
            if b.startswith("Seat "):
                if "showed [" in b or "mucked [" in b:
                    if by_seat is None:
                        by_seat = {str(seat): nm for nm, (seat, _, _) in self.seats.items()}
                    c = b.find(": ")
                    name = by_seat.get(b[5:c]) if c > 5 else None
                    cm = _CARDS.search(b)
                    if name is not None and cm and b.startswith(name + " ", c + 2):
                        shown.setdefault(name, cm.group(1).split())
                continue
            tp = _TOTAL.match(b) if b.startswith("Total pot") else None
            if tp:
                total_pot, rake = _money(tp.group(1)), _money(tp.group(2))
        if total_pot is None or rake is None:
            raise _Bad(f"hand #{self.hand_id}: no 'Total pot ... | Rake ...' line in the summary")
        self.total_pot, self.rake = total_pot, rake

    def _positions(self) -> tuple[list[str], bool]:
        """Players dealt in, in blind order (position 0 the small blind, or the big blind
        when no small blind was posted); and whether it was."""
        hand_id, seats = self.hand_id, self.seats
        if self.unread is not None:  # a line no play explains: what is dealt in may be wrong too
            raise _Bad(self.unread[1], self.unread[0])
        dealt = sorted([(seats[nm][0], nm) for nm in self.acting])     # (seat, name); acting are seated
        n = len(dealt)
        if n < 2:
            raise _Bad(f"hand #{hand_id}: {counted(n, 'player')} dealt in")
        if n > MAX_SEATS:
            raise _Bad(f"hand #{hand_id}: {counted(n, 'player')} dealt; game definitions seat at most {MAX_SEATS}")
        if self.wrong is not None:
            raise _Bad(self.wrong)
        k = bisect_right(dealt, self.button, key=_first)      # the first seat after the button
        after_button = dealt[k:] + dealt[:k]
        if n == 2:
            after_button = after_button[::-1]  # heads-up: the button is the small blind
        names = [nm for _, nm in after_button]
        no_small = False
        if self.sb_first is not None:
            k = names.index(self.sb_first)
            names = names[k:] + names[:k]
        elif self.bb_first is not None:
            k = names.index(self.bb_first)
            names = names[k:] + names[:k]
            no_small = True
        return names, no_small

    def _balance(self, names: list[str], pos: dict[str, int]) -> tuple[tuple[float, ...], list[float],
                                                                         list[float], dict]:
        """Chips must balance (put in - returned == total pot == collected + rake); returns
        the payoffs, the stacks, the dead chips and notes on the chips."""
        hand_id, n = self.hand_id, len(names)
        put, dead, returned, collected = self.put, self.dead, self.returned, self.collected
        total_pot, rake = self.total_pot, self.rake
        put_p = [put.get(nm, 0.0) for nm in names]
        dead_p = [dead.get(nm, 0.0) for nm in names] if dead else [0.0] * n
        stacks = [self.seats[nm][1] for nm in names]
        notes: dict = {}
        put_in = _r(sum(put_p))
        back = _r(sum([returned.get(nm, 0.0) for nm in names]) if returned else 0.0)
        if not returned and put_in - total_pot > 0.005:
            # 2005 histories leave out "Uncalled bet returned": the top contributor's
            # excess over the next one went back to him without a line
            order = sorted(range(n), key=lambda q: put_p[q] - dead_p[q], reverse=True)
            top, second = order[0], order[1]
            excess = _r((put_p[top] - dead_p[top]) - (put_p[second] - dead_p[second]))
            if abs(put_in - total_pot - excess) <= 0.005:
                returned[names[top]] = excess
                back = excess
                notes = {"implicit_uncalled": excess}
        if abs(put_in - back - total_pot) > 0.005:
            raise _Bad(f"hand #{hand_id}: chips put in {put_in:g} - returned {back:g} != total pot {total_pot:g}")
        won = _r(sum(collected.values()))
        if abs(won + rake - total_pot) > 0.005:
            raise _Bad(f"hand #{hand_id}: collected {won:g} + rake {rake:g} != total pot {total_pot:g}")
        if returned:
            over = [p for p in range(n) if put_p[p] - returned.get(names[p], 0.0) > stacks[p] + 0.005]
        else:
            over = [p for p, (x, stack) in enumerate(zip(put_p, stacks)) if x > stack + 0.005]
        if over:
            p = over[0]
            raise _Bad(f"hand #{hand_id}: {names[p]} puts in more than his stack {stacks[p]:g}")
        net = [-x for x in put_p]            # collected + returned - put, to the cent
        for nm in (*collected, *returned):
            p = pos.get(nm, -1)
            if p >= 0:
                net[p] = collected.get(nm, 0.0) + returned.get(nm, 0.0) - put_p[p]
        payoffs = tuple([round(x + 0.0, 2) if x else 0.0 for x in net])
        return payoffs, stacks, dead_p, notes

    def _cards(self, names: list[str], pos: dict[str, int]) -> tuple[tuple[int, ...],
                                                                     list[Optional[tuple[int, int]]],
                                                                     dict[str, str]]:
        """The board, the hole cards shown (by position) and partly shown hands."""
        hand_id, card = self.hand_id, self.parser._card
        seen: set[int] = set()
        board = tuple([card(c, seen, hand_id) for c in self.board])
        holes: list[Optional[tuple[int, int]]] = [None] * len(names)
        partial: dict[str, str] = {}
        for p in sorted([pos[nm] for nm in self.shown if nm in pos]):    # in position order
            cards = self.shown[names[p]]
            if len(cards) == 2:
                holes[p] = (card(cards[0], seen, hand_id), card(cards[1], seen, hand_id))
            else:
                for c in cards:
                    card(c, seen, hand_id)
                partial[names[p]] = " ".join(cards)
        return board, holes, partial

    def _record(self, names: list[str], pos: dict[str, int], no_small: bool, actions: list[Action],
                payoffs: tuple[float, ...], stacks: list[float], dead_p: list[float], notes: dict,
                board: tuple[int, ...], holes: list[Optional[tuple[int, int]]],
                partial: dict[str, str]) -> HandRecord:
        """The record: the game (caps raised where the hand shows more raises), posts, extras."""
        parser, raises = self.parser, self.raises
        n = len(names)
        caps = parser.raise_cap if max(raises) <= min(parser.raise_cap) else tuple(
            [max(c, r) for c, r in zip(parser.raise_cap, raises)])
        game = parser._game(n, no_small, self.small_bet, self.big_bet, caps, self.sb_amount)
        post_l = [0.0] * n
        for nm, x in self.posted.items():                         # the posters are dealt in
            post_l[pos[nm]] = round(x + 0.0, 2)
        post_t = tuple(post_l)
        extra: dict = {"button_seat": self.button, "seats": tuple([self.seats[nm][0] for nm in names]),
                       "rake": self.rake, "total_pot": self.total_pot}
        extra.update(notes)
        if any(dead_p):
            extra["dead"] = tuple(dead_p)
        if partial:
            extra["partial_cards"] = partial
        if self.tournament:
            extra["tournament"] = True
        return HandRecord(
            source=self.path, line=self.line, hand_id=self.hand_id, game=game, players=tuple(names),
            hole_cards=tuple(holes), board=board, actions=tuple(actions), payoffs=payoffs,
            stacks=tuple(stacks), posted=None if post_t == game.blinds else post_t,
            format=parser.name, extra=extra,
        )
