"""PHH (Poker Hand History, TOML) files, read and written: ``.phh`` (one hand) and ``.phhs``
(``[n]`` tables).

Only hold'em is read: ``FT`` (fixed-limit) and ``NT`` (no-limit); every other variant is
skipped with a :class:`ParseIssue` naming it. Players ``p1..pn`` are in blind order
(``p1`` small blind, ``pn`` the button), which is already our position order for three
or more players. Heads-up, PHH (like PokerKit) reverses the blinds: ``p2`` is the button
and small blind and acts first pre-flop, so position 0 = ``p2`` and position 1 = ``p1``,
and ``blinds_or_straddles``/``antes`` (whose entry ``k`` is paid by the *other* player)
keep their order.

``pN cbr X`` is a bet/raise *to* X on the current street, kept as the action's amount in
no-limit (calls carry the street total after the call). Limit ``FT`` tables get the
ACPC raise cap of 4 bets a street (``raise_cap=(3, 4, 4, 4)``, the big blind counting
as the first pre-flop bet); PHH has no cap field and heads-up limit is played uncapped,
so heads-up ``FT`` gets ``raise_cap=(99, 99, 99, 99)``.

Numbers (stacks, blinds, bets, amounts) must be finite and at most :data:`MAX_AMOUNT` in
size (chip sums stay exact in floats); a hand with an absurd one (``inf``, a 5,000-digit
integer) is skipped and reported like any malformed hand.

Payoffs are ``finishing_stacks - starting_stacks`` when given, else ``winnings`` minus
what the player put in (an uncalled bet returned, unless the winnings already count it:
HandHQ hands do both); ``winnings`` of all zeros (HandHQ hands whose result was not
recorded) gives no payoffs. With ``winnings`` the rake makes payoffs sum below zero.

Writing (:class:`PhhLogWriter` to files, :func:`dumps` to text; :func:`loads` reads text
back; https://phh.readthedocs.io): ``variant = 'FT'`` (fixed-limit hold'em; ``'NT'`` for
no-limit), players ``p1..pn`` in blind order (p1 small blind; heads-up p1 is the big
blind and p2 the button, as PokerKit reads it), ``cbr X`` = the actor's total on the
street after the bet. A target ending in ``.phhs`` holds every hand under ``[k]`` tables;
any other target is a directory with one ``<hand>.phh`` file per hand. Unlimited stacks
are written as :data:`UNLIMITED_STACK` chips; the exact game definition goes in the
user field ``_cbr_game`` (JSON).

>>> text = '''variant = 'FT'
... antes = [0, 0]
... blinds_or_straddles = [1, 2]
... small_bet = 2
... big_bet = 4
... starting_stacks = [100, 100]
... actions = ['d dh p1 AhKd', 'd dh p2 ????', 'p2 f']
... finishing_stacks = [101, 99]
... '''
>>> [rec] = PhhParser().parse_text(text, "x.phh")
>>> rec.players, rec.hole_cards[1], rec.actions[0], rec.payoffs
(('p2', 'p1'), (50, 45), Action(street=0, position=0, kind='f', amount=None, all_in=False), (-1.0, 1.0))
"""
from __future__ import annotations

import json
import math
import os
import re
import sys
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

from cbr.errors import LogFormatError, OutputPathError, counted
from cbr.game.actions import Action
from cbr.game.gamedef import MAX_SEATS, STREET_OF_BOARD, STREETS, GameDef
from cbr.logs.output import LogFile, WriterBase, check_output_path
from cbr.logs.record import HandRecord, ParseIssue, hand_issue, text_before_hands
from cbr.logs.source import read_log_text
from evaluator_ext.cards import CARD_NAMES, cards_str
from evaluator_ext.cards import CARD_OF_TEXT as CARD

VARIANTS = {
    "FT": "fixed-limit Texas hold'em", "NT": "no-limit Texas hold'em", "NS": "no-limit short-deck hold'em",
    "PO": "pot-limit Omaha", "FO/8": "fixed-limit Omaha hi-lo", "F7S": "seven card stud",
    "F7S/8": "seven card stud hi-lo", "FR": "razz", "F2L3D": "fixed-limit 2-7 triple draw",
    "N2L1D": "no-limit 2-7 single draw", "FB": "fixed-limit badugi", "PT": "pot-limit Texas hold'em",
}
READ = ("FT", "NT")
_TABLE = re.compile(r"^\[\s*(\d+)\s*\]\s*(#.*)?$", re.M)
#: A line giving one of a hand's fields (text before the first table with one is a hand whose
#: ``[n]`` line was damaged).
_HAND_FIELD = re.compile(r"^(?:variant|antes|blinds_or_straddles|bring_in|small_bet|big_bet|min_bet|"
                         r"starting_stacks|actions|finishing_stacks|winnings|players|hand)\s*=")


def _hand_field(line: str) -> bool:
    """Whether ``line`` gives a field of a PHH hand.

    >>> _hand_field("variant = 'FT'"), _hand_field("# HandHQ export"), _hand_field("title = 'my hands'")
    (True, False, False)
    """
    return _HAND_FIELD.match(line) is not None
_GAMES: dict[tuple, GameDef] = {}
#: The largest stack, blind or amount read (10**15: sums of chips stay exact in float64).
MAX_AMOUNT = 10**15


class _BadHand(Exception):
    """A hand that cannot be read (the message is the reason)."""


def phh_game(variant: str, blinds: tuple[float, ...], antes: tuple[float, ...],
             small_bet: float, big_bet: float) -> GameDef:
    """The (cached) game of a PHH hold'em table; positions in our order (see module doc).

    >>> phh_game("FT", (100, 200, 0, 0, 0), (0,) * 5, 200, 400).first_to_act
    (2, 0, 0, 0)
    """
    key = (variant, blinds, antes, small_bet, big_bet)
    game = _GAMES.get(key)
    if game is None:
        n = len(blinds)
        if n == 2:
            first = (0, 1, 1, 1)
            cap = (99, 99, 99, 99)
        else:
            last_blind = max((i for i, b in enumerate(blinds) if b > 0), default=1)
            first = ((last_blind + 1) % n, 0, 0, 0)
            cap = (3, 4, 4, 4)
        limit = variant == "FT"
        game = GameDef(f"phh.{variant}.{n}p", n, blinds, small_bet, big_bet,
                       cap if limit else (99, 99, 99, 99), first, "limit" if limit else "nolimit",
                       None, antes)
        _GAMES[key] = game
    return game


def _cards(text: str, what: str) -> Optional[tuple[int, ...]]:
    """Cards of a PHH card string; None when any is unknown (``??``)."""
    if "?" in text:
        return None
    if len(text) % 2:
        raise _BadHand(f"bad {what} {text!r}")
    try:
        return tuple(CARD[text[k:k + 2]] for k in range(0, len(text), 2))
    except KeyError as exc:
        raise _BadHand(f"unknown card {exc.args[0]!r} in {what} {text!r}") from None


def _clip(text: str, size: int = 40) -> str:
    """``text`` cut to ``size`` characters for a message (a 5,000-digit number is not shown whole).

    >>> _clip("9" * 50, 10)
    '9999999999... (50 characters)'
    """
    return text if len(text) <= size else f"{text[:size]}... ({len(text)} characters)"


def _amount(value: Any, what: str, shown: Optional[str] = None) -> float:
    """A number of chips as a float: finite and at most :data:`MAX_AMOUNT` in size.

    >>> _amount(10**20, "stack")
    Traceback (most recent call last):
    cbr.logs.phh._BadHand: stack 100000000000000000000 is out of range (at most 10^15 in size)
    """
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x) or abs(x) > MAX_AMOUNT:
        raise _BadHand(f"{what} {_clip(str(value) if shown is None else shown)} is out of range "
                       f"(at most 10^15 in size)")
    return x


def _numbers(data: dict, key: str, n: Optional[int] = None, required: bool = True) -> Optional[tuple[float, ...]]:
    value = data.get(key)
    if value is None:
        if required:
            raise _BadHand(f"field {key!r} is missing")
        return None
    if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in value):
        raise _BadHand(f"field {key!r} must be a list of numbers")
    if n is not None and len(value) != n:
        raise _BadHand(f"field {key!r} has {counted(len(value), 'entry', 'entries')} for {counted(n, 'player')}")
    return tuple(_amount(v, f"field {key!r}: value") for v in value)


def _number(data: dict, key: str, default: Optional[float] = None) -> float:
    value = data.get(key, default)
    if value is None:
        raise _BadHand(f"field {key!r} is missing")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _BadHand(f"field {key!r} must be a number")
    return _amount(value, f"field {key!r}: value")


class PhhParser:
    """Reads PHH hands (``.phh``, ``.phhs``): FT and NT hold'em; other variants are skipped.

    >>> PhhParser().sniff("a.phh", "variant = 'NT'\\nactions = []")
    True
    """

    name = "phh"
    extensions = (".phh", ".phhs")

    def sniff(self, path: str, head: str) -> bool:
        ext = os.path.splitext(path)[1].lower()
        if ext in self.extensions:
            return True
        return bool(re.search(r"^\s*variant\s*=", head, re.M)) and "actions" in head

    def parse(self, path: str) -> Iterator[HandRecord | ParseIssue]:
        """Hands and skipped hands of one ``.phh``/``.phhs`` file."""
        path = os.fspath(path)
        text, issue = read_log_text(path)
        if issue is not None:
            yield issue
        yield from self.parse_text(text, path)

    def parse_text(self, text: str, source: str = "<text>") -> Iterator[HandRecord | ParseIssue]:
        """Hands of PHH text: several ``[n]`` tables (``.phhs``) or one hand (``.phh``)."""
        tables = list(_TABLE.finditer(text))
        if not tables:
            stem = os.path.splitext(os.path.basename(source))[0]
            yield self._chunk(text, source, 1, None, stem)
            return
        # a note or header before the first table is lines skipped (comments are TOML's, not skipped);
        # a hand's fields there are a hand whose [n] line is damaged: a hand skipped
        yield from text_before_hands(source, text[:tables[0].start()].split("\n"), _hand_field, "[n] table",
                                     ignored=lambda line: line.startswith("#"))
        seen: set[str] = set()
        for k, m in enumerate(tables):
            end = tables[k + 1].start() if k + 1 < len(tables) else len(text)
            line = text.count("\n", 0, m.start()) + 1
            key = m.group(1)
            if key in seen:
                yield ParseIssue(source, line, f"table [{key}] appears twice; the second is skipped")
                continue
            seen.add(key)
            yield self._chunk(text[m.end():end], source, line, key, key)

    def _chunk(self, body: str, source: str, line: int, table: Optional[str],
               fallback_id: str) -> HandRecord | ParseIssue:
        try:
            data = tomllib.loads(body)
        except tomllib.TOMLDecodeError as exc:
            return ParseIssue(source, line, f"not valid TOML (truncated or corrupt hand?): {exc}")
        except ValueError:  # an integer longer than Python reads (sys.get_int_max_str_digits)
            return ParseIssue(source, line, f"a number of more than {sys.get_int_max_str_digits()} digits "
                                            f"cannot be read")
        hand_id = table if table is not None else str(data.get("hand", fallback_id))
        try:
            return self.hand_from_dict(data, source, line, hand_id)
        except _BadHand as exc:
            return hand_issue(source, line, str(exc), hand_id)

    def hand_from_dict(self, data: dict[str, Any], source: str, line: int, hand_id: str) -> HandRecord:
        """A :class:`HandRecord` from one hand's TOML fields; raises ``_BadHand``."""
        variant = data.get("variant")
        if variant not in READ:
            if variant is None:
                raise _BadHand("field 'variant' is missing")
            name = VARIANTS.get(str(variant), "unknown variant")
            raise _BadHand(f"variant {variant!r} ({name}) is not limit or no-limit hold'em; hand skipped")
        stacks_p = _numbers(data, "starting_stacks") or ()
        n = len(stacks_p)
        if not 2 <= n <= MAX_SEATS:
            raise _BadHand(f"{counted(n, 'player')}; hold'em tables seat 2 to {MAX_SEATS}")
        blinds = _numbers(data, "blinds_or_straddles", n) or ()
        antes = _numbers(data, "antes", n, required=False) or (0.0,) * n
        if variant == "FT":
            small_bet, big_bet = _number(data, "small_bet"), _number(data, "big_bet")
        else:
            small_bet = big_bet = _number(data, "min_bet", default=max(blinds) or 1.0)
        if small_bet <= 0 or big_bet <= 0:
            raise _BadHand("bet sizes must be positive")
        game = phh_game(variant, blinds, antes, small_bet, big_bet)  # type: ignore[arg-type]
        # position -> PHH player index (heads-up reversed)
        perm = (1, 0) if n == 2 else tuple(range(n))
        pos_of = {p: i for i, p in enumerate(perm)}
        names = data.get("players")
        if names is None:
            names = [f"p{i + 1}" for i in range(n)]
        if not isinstance(names, list) or len(names) != n:
            raise _BadHand(f"field 'players' must list {counted(n, 'name')}")
        stacks = tuple(stacks_p[p] for p in perm)
        actions_text = data.get("actions")
        if not isinstance(actions_text, list) or not all(isinstance(a, str) for a in actions_text):
            raise _BadHand("field 'actions' is missing or not a list of strings")

        limit = variant == "FT"
        holes: list[Optional[tuple[int, int]]] = [None] * n
        board: list[int] = []
        street = 0
        blinds_pos = game.blinds
        posted = tuple(min(b, s) for b, s in zip(blinds_pos, stacks))
        ante_pos = tuple(min(a, s - b) for a, s, b in zip(game.antes, stacks, posted))
        street_c = list(posted)
        total = [a + b for a, b in zip(ante_pos, posted)]
        folded = [False] * n
        all_in = [t >= s for t, s in zip(total, stacks)]
        actions: list[Action] = []
        for k, raw in enumerate(actions_text):
            words = raw.split("#", 1)[0].split()
            if not words:
                continue
            where = f"action {k + 1} {_clip(raw)!r}"
            if words[0] == "d":
                if len(words) < 3:
                    raise _BadHand(f"{where}: incomplete deal")
                if words[1] == "dh":
                    if len(words) != 4:
                        raise _BadHand(f"{where}: expected 'd dh pN CARDS'")
                    pos = self._position(words[2], n, pos_of, where)
                    cards = _cards(words[3], "hole cards")
                    if cards is not None and len(cards) != 2:
                        raise _BadHand(f"{where}: {len(cards)} hole cards, hold'em deals 2")
                    holes[pos] = cards  # type: ignore[assignment]
                elif words[1] == "db":
                    cards = _cards(words[2], "board")
                    if cards is None:
                        raise _BadHand(f"{where}: unknown board cards")
                    want = 3 if not board else 1
                    if len(cards) != want or len(board) >= 5:
                        raise _BadHand(f"{where}: {len(cards)} board cards dealt after {len(board)}")
                    board.extend(cards)
                    street += 1
                    street_c = [0.0] * n
                else:
                    raise _BadHand(f"{where}: unknown dealer action {words[1]!r}")
                continue
            pos = self._position(words[0], n, pos_of, where)
            if len(words) < 2:
                raise _BadHand(f"{where}: no action")
            verb = words[1]
            if verb == "sm":
                if len(words) > 2:
                    shown = _cards(words[2], "shown cards")
                    if shown is not None:
                        if len(shown) != 2:
                            raise _BadHand(f"{where}: shows {counted(len(shown), 'card')}")
                        if holes[pos] is not None and set(holes[pos]) != set(shown):  # type: ignore[arg-type]
                            raise _BadHand(f"{where}: shows cards other than those dealt")
                        holes[pos] = shown  # type: ignore[assignment]
                continue
            if verb not in ("f", "cc", "cbr"):
                raise _BadHand(f"{where}: action {verb!r} does not exist in hold'em")
            if folded[pos]:
                raise _BadHand(f"{where}: {words[0]} acts after folding")
            if all_in[pos]:
                raise _BadHand(f"{where}: {words[0]} acts after going all-in")
            bet = max(street_c)
            if verb == "f":
                folded[pos] = True
                actions.append(Action(street, pos, "f"))
                continue
            if verb == "cc":
                new = min(bet, street_c[pos] + stacks[pos] - total[pos])
                kind = "c"
            else:
                if len(words) < 3:
                    raise _BadHand(f"{where}: bet/raise without an amount")
                try:
                    new = float(words[2])
                except ValueError:
                    raise _BadHand(f"{where}: bad amount {_clip(words[2])!r}") from None
                new = _amount(new, f"{where}: amount", shown=words[2])
                if new <= bet:
                    raise _BadHand(f"{where}: raise to {new:g} is not above the bet of {bet:g}")
                if new - street_c[pos] > stacks[pos] - total[pos] + 1e-9:
                    raise _BadHand(f"{where}: raise to {new:g} is more than {words[0]}'s stack")
                kind = "r"
            total[pos] += new - street_c[pos]
            street_c[pos] = new
            ai = total[pos] >= stacks[pos] - 1e-9
            if ai:
                all_in[pos] = True
            actions.append(Action(street, pos, kind, None if limit else new, ai))  # type: ignore[arg-type]

        dealt = [c for h in holes if h is not None for c in h] + board
        if len(set(dealt)) != len(dealt):
            dup = next(c for i, c in enumerate(dealt) if c in dealt[:i])
            raise _BadHand(f"card {_card_text(dup)} dealt twice")
        players = tuple(str(names[p]) for p in perm)
        holes_pos = tuple(holes)  # already by position
        payoffs = self._payoffs(data, n, perm, stacks, total)
        return HandRecord(source, line, hand_id, game, players, holes_pos, tuple(board), tuple(actions),
                          payoffs, stacks, posted if posted != game.blinds else None, "phh",
                          {"variant": variant, "streets": STREETS[:street + 1]})

    @staticmethod
    def _position(word: str, n: int, pos_of: dict[int, int], where: str) -> int:
        if len(word) < 2 or word[0] != "p" or not (word[1:].isascii() and word[1:].isdigit()) or not 1 <= int(word[1:]) <= n:
            raise _BadHand(f"{where}: unknown player {word!r} (p1..p{n})")
        return pos_of[int(word[1:]) - 1]

    @staticmethod
    def _payoffs(data: dict, n: int, perm: tuple[int, ...], stacks: tuple[float, ...],
                 total: list[float]) -> Optional[tuple[float, ...]]:
        finishing = _numbers(data, "finishing_stacks", n, required=False)
        if finishing is not None:
            return tuple(finishing[p] - s for p, s in zip(perm, stacks))
        winnings = _numbers(data, "winnings", n, required=False)
        if winnings is None or not any(winnings):
            return None
        # An uncalled bet goes back to the player who made it; some sites count it in the
        # winnings (then winnings - paid would win more than was lost: use the totals).
        order = sorted(range(n), key=lambda i: total[i], reverse=True)
        paid = list(total)
        paid[order[0]] = total[order[1]]
        net = tuple(winnings[p] - paid[i] for i, p in enumerate(perm))
        if sum(net) > 1e-6:
            net = tuple(winnings[p] - total[i] for i, p in enumerate(perm))
        return net


def _card_text(card: int) -> str:
    return CARD_NAMES[card]


# ---------------------------------------------------------------------------------- writing
#: Chips written as the starting stack of a game without stacks (PHH needs a number).
UNLIMITED_STACK = 1_000_000


def _num(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def _toml_str(s: str) -> str:
    if "'" not in s and "\n" not in s:
        return f"'{s}'"
    return json.dumps(s)


def _toml_list(values: Sequence[object]) -> str:
    return "[" + ", ".join(_toml_str(v) if isinstance(v, str) else _num(v) for v in values) + "]"  # type: ignore[arg-type]


def phh_player_order(game: GameDef) -> list[int]:
    """Position of each PHH player ``p1..pn`` (PHH lists players in blind order;
    heads-up p1 is the big blind and p2 the small blind/button).

    >>> from cbr.game import preset
    >>> phh_player_order(preset("holdem.limit.2p")), phh_player_order(preset("casper.2p"))
    ([0, 1], [1, 0])
    """
    n = game.n_players
    if n == 2:
        big = 0 if game.blinds[0] >= game.blinds[1] else 1
        return [big, 1 - big]
    if game.first_to_act[1] != 0 or game.first_to_act[0] != 2 % n:
        raise LogFormatError(f"game {game.name!r}: PHH needs positions in blind order "
                             f"(position 0 small blind, 2 first to act pre-flop)")
    return list(range(n))


def phh_hand(record: HandRecord) -> dict[str, object]:
    """The PHH fields of one hand (values as Python data, in PHH's order)."""
    game = record.game
    order = phh_player_order(game)
    pn = {pos: i + 1 for i, pos in enumerate(order)}
    n = game.n_players
    posted = record.posted or game.blinds
    blinds = [posted[pos] for pos in order]
    if n == 2:
        blinds = sorted(blinds)  # PHH/PokerKit heads-up: [small, big], posted reversed
    stacks = record.stacks or tuple(game.stack if game.stack is not None else UNLIMITED_STACK for _ in range(n))
    actions: list[str] = []
    for i, pos in enumerate(order):
        hole = record.hole_cards[pos]
        actions.append(f"d dh p{i + 1} {cards_str(hole) if hole is not None else '????'}")
    board = record.board
    level = max(posted)
    street_total = list(posted)
    street = 0
    folded: set[int] = set()
    for a in record.actions:
        while a.street > street:
            street += 1
            lo, hi = ((0, 3), (3, 4), (4, 5))[street - 1]
            if len(board) < hi:
                raise LogFormatError(f"hand {record.hand_id}: action on street {street} but the board has {counted(len(board), 'card')}")
            actions.append(f"d db {cards_str(board[lo:hi])}")
            level, street_total = 0.0, [0.0] * n
        who = f"p{pn[a.position]}"
        if a.kind == "f":
            folded.add(a.position)
            actions.append(f"{who} f")
        elif a.kind == "c":
            street_total[a.position] = a.amount if a.amount is not None else level
            actions.append(f"{who} cc")
        else:
            to = a.amount if a.amount is not None else level + game.bet_size(street)
            street_total[a.position] = level = float(to)
            actions.append(f"{who} cbr {_num(to)}")
    while street < STREET_OF_BOARD.get(len(board), 0):  # boards dealt after all-ins
        street += 1
        lo, hi = ((0, 3), (3, 4), (4, 5))[street - 1]
        actions.append(f"d db {cards_str(board[lo:hi])}")
    live = [pos for pos in range(n) if pos not in folded]
    if len(live) > 1:
        for pos in _showdown_order(record, live, pn):
            h = record.hole_cards[pos]
            actions.append(f"p{pn[pos]} sm {cards_str(h) if h is not None else ''}".rstrip())
    fields: dict[str, object] = {
        "variant": "FT" if game.betting == "limit" else "NT",
        "ante_trimming_status": True,
        "antes": [game.antes[pos] for pos in order],
        "blinds_or_straddles": blinds,
    }
    if game.betting == "limit":
        fields["small_bet"], fields["big_bet"] = game.small_bet, game.big_bet
    else:
        fields["min_bet"] = game.big_blind
    fields["starting_stacks"] = [stacks[pos] for pos in order]
    fields["actions"] = actions
    fields["hand"] = int(record.hand_id) if record.hand_id.isdigit() else record.hand_id
    fields["players"] = [record.players[pos] for pos in order]
    if record.payoffs is not None:
        fields["finishing_stacks"] = [stacks[pos] + record.payoffs[pos] for pos in order]
    fields["_cbr_game"] = json.dumps(game.to_dict(), separators=(",", ":"))
    return fields


def _showdown_order(record: HandRecord, live: list[int], pn: dict[int, int]) -> list[int]:
    """PokerKit's showdown order: the last bettor/raiser on the river first, else the first
    live player after the button; then around the table."""
    game = record.game
    n = game.n_players
    start = game.first_to_act[3]
    river_raises = [a.position for a in record.actions if a.street == 3 and a.kind == "r"]
    if river_raises:
        start = river_raises[-1]
    seq = [(start + i) % n for i in range(n)]
    return [pos for pos in seq if pos in live]


def phh_text(record: HandRecord) -> str:
    """One hand as PHH TOML text."""
    lines = []
    for key, value in phh_hand(record).items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            text = _toml_list(value)
        elif isinstance(value, str):
            text = _toml_str(value)
        else:
            text = _num(value)  # type: ignore[arg-type]
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


def phhs_table(k: int, text: str) -> str:
    """Hand ``k`` (1, 2, ...) of a ``.phhs`` file: its ``[k]`` table (a blank line before
    every table but the first)."""
    return ("\n" if k > 1 else "") + f"[{k}]\n" + text


class PhhLogWriter(WriterBase):
    """PHH writer: a ``.phhs`` file with ``[1]``, ``[2]``, ... tables, or a directory of
    ``<hand>.phh`` files (each written atomically; an existing one is replaced only with
    ``overwrite``)."""

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = True, make_parents: bool = True) -> None:
        self.path = Path(path)
        self._count = 0
        self._file: Optional[LogFile] = None
        self._written: list[Path] = []
        self.overwrite = overwrite
        if self.path.suffix == ".phhs":
            self._file = LogFile(self.path, overwrite=overwrite, make_parents=make_parents)
        else:
            if os.path.islink(self.path) or (self.path.exists() and not self.path.is_dir()):
                raise OutputPathError(f"{self.path} exists and is not a directory (use a .phhs name for one file)")
            if not self.path.is_dir():
                check_output_path(self.path, overwrite=False, make_parents=make_parents, what="log folder")
                self.path.mkdir()

    def write(self, record: HandRecord) -> None:
        text = phh_text(record)
        self._count += 1
        if self._file is not None:
            self._file.write(phhs_table(self._count, text))
            return
        name = record.hand_id if record.hand_id and all(c.isalnum() or c in "-_." for c in record.hand_id) else str(self._count)
        one = LogFile(self.path / f"{name}.phh", overwrite=self.overwrite, make_parents=False)
        try:
            one.write(text)
            one.commit()
        except BaseException:
            one.abort()
            raise
        self._written.append(one.path)

    def close(self) -> None:
        if self._file is not None:
            self._file.commit()

    def abort(self) -> None:
        if self._file is not None:
            self._file.abort()


def dumps(records: Iterable[HandRecord]) -> str:
    """The text of a ``.phhs`` file of ``records`` (what :class:`PhhLogWriter` writes to one).

    >>> from cbr.game import preset
    >>> rec = HandRecord(source="m", line=0, hand_id="0", game=preset("holdem.limit.2p"),
    ...     players=("a", "b"), hole_cards=((51, 50), (0, 5)), board=(),
    ...     actions=(Action(0, 1, "r"), Action(0, 0, "f")), payoffs=(-10.0, 10.0))
    >>> dumps([rec]).splitlines()[:2]
    ['[1]', "variant = 'FT'"]
    >>> [back] = loads(dumps([rec]))              # PHH numbers heads-up positions from the button
    >>> dict(zip(back.players, back.payoffs)), [back.players[a.position] + a.kind for a in back.actions]
    ({'b': 10.0, 'a': -10.0}, ['br', 'af'])
    """
    return "".join(phhs_table(k, phh_text(r)) for k, r in enumerate(records, start=1))


def loads(text: str, source: str = "<text>") -> list[HandRecord]:
    """The hands of PHH text (one hand, or ``[k]`` tables); raises
    :class:`~cbr.errors.LogFormatError` at the first hand that does not read
    (:class:`PhhParser` skips and reports them instead)."""
    out: list[HandRecord] = []
    for item in PhhParser().parse_text(text, source):
        if isinstance(item, ParseIssue):
            raise LogFormatError(str(item))
        out.append(item)
    return out
