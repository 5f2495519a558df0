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
rake, or it is skipped with the reason.

>>> PokerStarsParser().sniff("h.txt", "\\ufeffPokerStars Game #1: Hold'em Limit ($1/$2 USD)")
True
"""
from __future__ import annotations

import os
import re
from typing import Iterator, Optional

from cbr.errors import LogFormatError
from cbr.game.gamedef import MAX_SEATS, GameDef
from cbr.logs.irc import decode_log_bytes
from cbr.logs.record import Action, HandRecord, ParseIssue
from evaluator_ext.cards import RANKS, SUITS, card_str

__all__ = ["PokerStarsParser"]

_CARD = {r + s: i * 4 + j for i, r in enumerate(RANKS) for j, s in enumerate(SUITS)}
_HEADER = re.compile(r"^(?:\ufeff)?PokerStars (?:Zoom )?(?:Game|Hand) #(\d+):\s*(.*)$")
_CASH_STAKES = re.compile(r"\(([$€£]?)([\d.,]+)/[$€£]?([\d.,]+)(?: [A-Z]{3})?\)")
_LEVEL = re.compile(r"Level [^(]*\(([\d.,]+)/([\d.,]+)\)")
_TABLE = re.compile(r"^Table '.*' (?:.*?)Seat #(\d+) is the button")
_SEAT = re.compile(r"^Seat (\d+): (.+?) \([$€£]?([\d.,]+) in chips(?:[^)]*)\)(.*)$")
_UNCALLED = re.compile(r"^Uncalled bet \([$€£]?([\d.,]+)\) returned to (.+)$")
_COLLECTED = re.compile(r"^(.+?) collected [$€£]?([\d.,]+) from (?:the )?(?:main |side )?pot(?:-\d+)?")
_TOTAL = re.compile(r"^Total pot [$€£]?([\d.,]+).*?\| Rake [$€£]?([\d.,]+)")
_CARDS = re.compile(r"\[([^\]]*)\]")
_AMOUNT = re.compile(r"[$€£]?([\d][\d.,]*)")
_GAMES: dict[tuple, GameDef] = {}   # game definitions are immutable: shared by all parsers
_STREETS = {"*** HOLE CARDS ***": 0, "*** FLOP ***": 1, "*** TURN ***": 2, "*** RIVER ***": 3}
_STREET_NAMES = ("pre-flop", "flop", "turn", "river")
_EPS = 1e-6


_ACTIONS: dict[tuple, Action] = {}


def _action(street: int, position: int, kind: str, amount: None, all_in: bool) -> Action:
    """A shared limit Action (they are immutable; thousands of hands reuse a few hundred)."""
    key = (street, position, kind, all_in)
    a = _ACTIONS.get(key)
    if a is None:
        a = _ACTIONS[key] = Action(street, position, kind, None, all_in)  # type: ignore[arg-type]
    return a


class _Bad(Exception):
    """Internal: a hand that cannot be read; the message is the ParseIssue reason."""


def _money(text: str) -> float:
    return float(text.replace(",", ""))


def _r(x: float) -> float:
    """Chips rounded to the cent (sums of dollar amounts drift in binary)."""
    return round(x + 0.0, 2)


class PokerStarsParser:
    """Parser plugin ``pokerstars``: PokerStars limit hold'em text histories.

    >>> PokerStarsParser().name
    'pokerstars'
    """

    name = "pokerstars"

    def __init__(self, *, raise_cap: tuple[int, int, int, int] = (3, 4, 4, 4)) -> None:
        self.raise_cap = tuple(int(c) for c in raise_cap)

    def sniff(self, path: str, head: str) -> bool:
        """True when the text starts (after a BOM and blank lines) with a PokerStars hand header."""
        for line in head.lstrip("\ufeff").splitlines():
            if line.strip():
                return _HEADER.match(line.strip()) is not None
        return False

    def parse(self, path: str) -> Iterator[HandRecord | ParseIssue]:
        """Hands of one file in order; bad hands become :class:`ParseIssue` (``file:line``)."""
        if os.path.isdir(path):
            raise LogFormatError(f"{path}: is a directory, not a PokerStars hand history file")
        with open(path, "rb") as fh:  # FileNotFoundError for a missing path
            text, bad_line = decode_log_bytes(fh.read())
        if bad_line is not None:
            yield ParseIssue(path, bad_line, "not UTF-8 text; read as latin-1")
        lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
        start: Optional[int] = None
        seen_ids: set[str] = set()
        stray = False
        for i, line in enumerate(lines + ["PokerStars Game #0: <end>"]):
            if line.startswith("PokerStars ") and _HEADER.match(line):
                if start is not None:
                    end = i
                    while end > start and not lines[end - 1]:
                        end -= 1
                    yield self._one(path, start, lines[start:end], seen_ids)
                start = i
            elif start is None and line.strip() and not stray:
                stray = True
                yield ParseIssue(path, i + 1, f"text outside a hand: {line.strip()[:60]!r}")
        # (the sentinel header ends the last hand)

    def _one(self, path: str, start: int, block: list[str], seen_ids: set[str]) -> HandRecord | ParseIssue:
        try:
            rec = self._hand(path, start + 1, block)
        except _Bad as exc:
            return ParseIssue(path, start + 1, str(exc))
        if rec.hand_id in seen_ids:
            return ParseIssue(path, start + 1, f"hand #{rec.hand_id} appears twice in the file")
        seen_ids.add(rec.hand_id)
        return rec

    # -- one hand --------------------------------------------------------------------
    def _hand(self, path: str, line: int, block: list[str]) -> HandRecord:
        m = _HEADER.match(block[0])
        assert m is not None
        hand_id, desc = m.group(1), m.group(2)
        if "Hold'em Limit" not in desc:
            variant = desc.split(" - ")[0]
            variant = re.sub(r"^Tournament #\d+, ", "", variant)
            raise _Bad(f"hand #{hand_id}: variant {variant.strip()!r} not supported (only Hold'em Limit)")
        lm = _LEVEL.search(desc)
        sm = lm or _CASH_STAKES.search(desc)
        if sm is None:
            raise _Bad(f"hand #{hand_id}: no stakes in the header")
        if lm:
            small_bet, big_bet = _money(lm.group(1)), _money(lm.group(2))
        else:
            small_bet, big_bet = _money(sm.group(2)), _money(sm.group(3))
        if len(block) < 2:
            raise _Bad(f"hand #{hand_id}: truncated hand (header only)")
        tm = _TABLE.match(block[1])
        if tm is None:
            raise _Bad(f"hand #{hand_id}: no table/button line")
        button = int(tm.group(1))

        seats: dict[str, tuple[int, float, bool]] = {}   # name -> (seat, stack, sitting out)
        i = 2
        while i < len(block) and block[i].startswith("Seat "):
            sm2 = _SEAT.match(block[i])
            if sm2 is None:
                raise _Bad(f"hand #{hand_id}: corrupt seat line {block[i]!r}")
            seat_no, who, chips, tail = sm2.groups()
            seats[who] = (int(seat_no), float(chips.replace(",", "")), "sitting out" in tail)
            i += 1
        by_seat = {str(seat): name for name, (seat, _, _) in seats.items()}
        if len(seats) < 2:
            raise _Bad(f"hand #{hand_id}: {len(seats)} players seated")

        # first pass over the body: who is dealt in, in what order lines come
        body = block[i:]
        at = next((k for k, b in enumerate(body) if b.startswith("*** SUMMARY ***")), None)
        if at is None:
            raise _Bad(f"hand #{hand_id}: truncated hand (no *** SUMMARY ***)")
        events: list[tuple[int, str, str]] = []   # (street, name, rest of line)
        street = -1
        board: list[str] = []
        shown: dict[str, list[str]] = {}
        returned: dict[str, float] = {}
        collected: dict[str, float] = {}
        total_pot = rake = None
        sb_posters: list[str] = []
        bb_posters: list[str] = []
        for b in body[at + 1:]:              # the summary
            if b.startswith("Seat "):
                if "showed [" in b or "mucked [" in b:
                    k = b.find(": ")
                    name = by_seat.get(b[5:k]) if k > 5 else None
                    cm = _CARDS.search(b)
                    if name is not None and cm and b.startswith(name + " ", k + 2):
                        shown.setdefault(name, cm.group(1).split())
                continue
            tp = _TOTAL.match(b) if b.startswith("Total pot") else None
            if tp:
                total_pot, rake = _money(tp.group(1)), _money(tp.group(2))
        for b in body[:at]:
            if not b:
                continue
            # the common case first: "name: action" by a seated player
            k = b.find(": ")
            if k > 0 and b[:k] in seats:
                name, rest = b[:k], b[k + 2:]
            elif b.startswith("*** "):
                if b.startswith("*** SHOW DOWN") or b.startswith("*** FIRST") or b.startswith("*** SECOND"):
                    street = 4
                    continue
                for key, s in _STREETS.items():
                    if b.startswith(key):
                        if s != street + 1:
                            raise _Bad(f"hand #{hand_id}: {key} out of order")
                        street = s
                        if s > 0:
                            groups = _CARDS.findall(b)
                            new = groups[-1].split() if groups else []
                            if len(new) != (3 if s == 1 else 1):
                                raise _Bad(f"hand #{hand_id}: bad board line {b!r}")
                            board.extend(new)
                        break
                else:
                    raise _Bad(f"hand #{hand_id}: unknown section {b!r}")
                continue
            elif b.startswith("Dealt to "):
                rest = b[9:]
                name = rest[: rest.rfind(" [")] if " [" in rest else rest
                cm = _CARDS.search(rest[len(name):])
                if name in seats and cm:
                    shown[name] = cm.group(1).split()
                    events.append((street, name, "dealt"))
                continue
            else:
                um = _UNCALLED.match(b) if b.startswith("Uncalled") else None
                if um:
                    who = um.group(2).strip()
                    returned[who] = returned.get(who, 0.0) + _money(um.group(1))
                    continue
                cm2 = _COLLECTED.match(b) if " collected " in b else None
                if cm2 and cm2.group(1) in seats:
                    collected[cm2.group(1)] = collected.get(cm2.group(1), 0.0) + _money(cm2.group(2))
                    continue
                name, rest = self._split_actor(b, seats)
                if name is None:
                    continue  # chat, joins/leaves, table messages
            if rest.startswith("shows ["):
                shown[name] = _CARDS.search(rest).group(1).split()  # type: ignore[union-attr]
                continue
            if rest.startswith(("mucks", "doesn't show", "is sitting out", "sits out", "is disconnected",
                                "has timed out", "is connected", "has returned", "leaves", "said")):
                continue
            if street >= 4:
                continue
            if street == -1:
                if rest.startswith("posts small blind"):
                    sb_posters.append(name)
                elif rest.startswith("posts big blind"):
                    bb_posters.append(name)
            events.append((street, name, rest))
        if total_pot is None:
            raise _Bad(f"hand #{hand_id}: no 'Total pot ... | Rake ...' line in the summary")

        # players dealt in, in blind order
        acting = {name for _, name, _ in events}
        dealt = sorted((seat, name) for name, (seat, _, _) in seats.items() if name in acting)
        n = len(dealt)
        if n < 2:
            raise _Bad(f"hand #{hand_id}: {n} players dealt in")
        if n > MAX_SEATS:
            raise _Bad(f"hand #{hand_id}: {n} players dealt; game definitions seat at most {MAX_SEATS}")
        after_button = [x for x in dealt if x[0] > button] + [x for x in dealt if x[0] <= button]
        if n == 2:
            after_button = after_button[::-1]  # heads-up: the button is the small blind
        names = [name for _, name in after_button]
        if sb_posters:
            k = names.index(sb_posters[0])
            names = names[k:] + names[:k]
            no_small = False
        elif bb_posters:
            k = names.index(bb_posters[0])
            names = names[k:] + names[:k]
            no_small = True
        else:
            no_small = False
        pos = {name: p for p, name in enumerate(names)}

        # second pass: blinds and actions, with the chips
        posted = [0.0] * n
        dead = [0.0] * n
        put = [0.0] * n
        stacks = [seats[name][1] for name in names]
        nominal = [0.0] * n
        sb_amount = None
        actions: list[Action] = []
        raises = [0, 0, 0, 0]
        this = [0.0] * n
        level = 0.0
        cur = -1
        for s, name, rest in events:
            p = pos[name]
            all_in = rest.endswith("and is all-in")
            if s == -1:
                if rest == "dealt":
                    continue
                amounts = [_money(a) for a in _AMOUNT.findall(rest)]
                if not rest.startswith("posts ") or not amounts:
                    raise _Bad(f"hand #{hand_id}: unexpected line before the cards: {name}: {rest}")
                amt = amounts[-1]
                if rest.startswith("posts small & big blinds"):
                    live = min(small_bet, amt)
                    posted[p] += live
                    dead[p] += _r(amt - live)
                elif rest.startswith("posts the ante"):
                    dead[p] += amt
                elif rest.startswith("posts small blind"):
                    posted[p] += amt
                    if name == (sb_posters[0] if sb_posters else None):
                        nominal[p] = amt if not all_in else small_bet / 2
                        sb_amount = nominal[p]
                elif rest.startswith("posts big blind"):
                    posted[p] += amt
                    if name == (bb_posters[0] if bb_posters else None):
                        nominal[p] = small_bet
                else:
                    raise _Bad(f"hand #{hand_id}: unknown post {name}: {rest}")
                put[p] += amt
                continue
            if rest == "dealt":
                continue
            if s != cur:
                if s == 0:
                    this = posted[:]
                    level = max(max(nominal), max(posted))
                else:
                    this = [0.0] * n
                    level = 0.0
                cur = s
                size = small_bet if s < 2 else big_bet
            if rest.startswith("folds"):
                kind = "f"
            elif rest.startswith("checks"):
                kind = "c"
                if this[p] + _EPS < level:
                    raise _Bad(f"hand #{hand_id}: {name} checks facing a bet on the {_STREET_NAMES[s]}")
            elif rest.startswith("calls "):
                kind = "c"
                amt = _money(rest[6:].split()[0].lstrip("$€£"))
                put[p] += amt
                this[p] = _r(this[p] + amt)
                if this[p] > level + _EPS:
                    raise _Bad(f"hand #{hand_id}: {name} calls more than the bet on the {_STREET_NAMES[s]}")
            elif rest.startswith("bets ") or rest.startswith("raises "):
                kind = "r"
                words = rest.split()
                to = _money(words[-1 if not all_in else -4].lstrip("$€£")) if words[0] == "raises" else None
                if words[0] == "bets":
                    amt = _money(words[1].lstrip("$€£"))
                    to = _r(this[p] + amt)
                assert to is not None
                full = _r(level + size)
                if to > full + _EPS or (to < full - _EPS and not all_in):
                    raise _Bad(f"hand #{hand_id}: {name} {' '.join(words[:4])} on the {_STREET_NAMES[s]}, "
                               f"but the limit bet makes it {full:g}: not limit betting")
                put[p] += to - this[p]
                this[p] = to
                if to > level + _EPS:
                    level = to
                    raises[s] += 1
                else:
                    kind = "c"
            else:
                raise _Bad(f"hand #{hand_id}: unknown action {name}: {rest}")
            actions.append(_ACTIONS.get((s, p, kind, all_in)) or _action(s, p, kind, None, all_in))

        # chips must balance
        extra_notes: dict = {}
        put_in = _r(sum(put))
        back = _r(sum(returned.get(nm, 0.0) for nm in names))
        if not returned and put_in - total_pot > 0.005:
            # 2005 histories leave out "Uncalled bet returned": the top contributor's
            # excess over the next one went back to him without a line
            order = sorted(range(n), key=lambda q: put[q] - dead[q], reverse=True)
            top, second = order[0], order[1]
            excess = _r((put[top] - dead[top]) - (put[second] - dead[second]))
            if abs(put_in - total_pot - excess) <= 0.005:
                returned[names[top]] = excess
                back = excess
                extra_notes = {"implicit_uncalled": excess}
        if abs(put_in - back - total_pot) > 0.005:
            raise _Bad(f"hand #{hand_id}: chips put in {put_in:g} - returned {back:g} != total pot {total_pot:g}")
        won = _r(sum(collected.values()))
        if abs(won + rake - total_pot) > 0.005:
            raise _Bad(f"hand #{hand_id}: collected {won:g} + rake {rake:g} != total pot {total_pot:g}")
        for p in range(n):
            if put[p] - returned.get(names[p], 0.0) > stacks[p] + 0.005:
                raise _Bad(f"hand #{hand_id}: {names[p]} puts in more than his stack {stacks[p]:g}")
        payoffs = tuple(_r(collected.get(nm, 0.0) + returned.get(nm, 0.0) - put[p]) for p, nm in enumerate(names))

        # cards
        seen: set[int] = set()
        board_ints = tuple(self._card(c, seen, hand_id) for c in board)
        holes: list[Optional[tuple[int, int]]] = []
        partial: dict[str, str] = {}
        for nm in names:
            cards = shown.get(nm)
            if cards is None:
                holes.append(None)
            elif len(cards) == 2:
                holes.append((self._card(cards[0], seen, hand_id), self._card(cards[1], seen, hand_id)))
            else:
                for c in cards:
                    self._card(c, seen, hand_id)
                partial[nm] = " ".join(cards)
                holes.append(None)

        caps = tuple(max(c, r) for c, r in zip(self.raise_cap, raises))
        game = self._game(n, nominal, no_small, small_bet, big_bet, caps, sb_amount)
        post_t = tuple(_r(x) for x in posted)
        extra: dict = {"button_seat": button, "seats": tuple(seats[nm][0] for nm in names), "rake": rake,
                       "total_pot": total_pot}
        extra.update(extra_notes)
        if any(dead):
            extra["dead"] = tuple(dead)
        if partial:
            extra["partial_cards"] = partial
        if lm:
            extra["tournament"] = True
        return HandRecord(
            source=path, line=line, hand_id=hand_id, game=game, players=tuple(names),
            hole_cards=tuple(holes), board=board_ints, actions=tuple(actions), payoffs=payoffs,
            stacks=tuple(stacks), posted=None if post_t == game.blinds else post_t,
            format=self.name, extra=extra,
        )

    @staticmethod
    def _split_actor(line: str, seats: dict) -> tuple[Optional[str], str]:
        """``name: rest`` for a seated player's line (names may contain ': ')."""
        k = line.find(": ")
        while k != -1:
            if line[:k] in seats:
                return line[:k], line[k + 2:].rstrip()
            k = line.find(": ", k + 2)
        return None, ""

    @staticmethod
    def _card(text: str, seen: set[int], hand_id: str) -> int:
        c = _CARD.get(text[:1].upper() + text[1:].lower()) if len(text) == 2 else None
        if c is None:
            raise _Bad(f"hand #{hand_id}: unknown card {text!r}")
        if c in seen:
            raise _Bad(f"hand #{hand_id}: card {card_str(c)} dealt twice")
        seen.add(c)
        return c

    def _game(self, n: int, nominal: list[float], no_small: bool, small_bet: float, big_bet: float,
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
