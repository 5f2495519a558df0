"""A human at the table: a text game of limit hold'em against bots (``cbr play --human``).

The library never prints and never reads a terminal: :func:`play_human` sends every line
to show to a ``show(line)`` callback and asks ``read(prompt)`` for each of the human's
actions (``None`` = end of input, which quits). Keys: ``f`` fold, ``c`` check/call,
``r`` bet/raise (only the legal ones are offered), ``q`` quit; the words ``fold``,
``check``, ``call``, ``bet``, ``raise``, ``quit`` work too. An illegal key shows one
error line and is asked again.

The hands are played at the table loop of :mod:`cbr.play.table`, as ``cbr match`` plays
them: the human sits in seat 0 and the bots in seats 1.., positions rotate one seat per
hand (:func:`~cbr.game.state.seats_for_hand`), deal ``k`` of seed ``S`` has the cards
:func:`~cbr.play.table.deal_cards` gives, and the bots (policy specs) get the seeds and
action streams :func:`~cbr.play.match.run_match` gives, so a human game is a real match.

Quitting (``q`` or end of input) in the middle of a hand ends the session with that hand:
facing a bet it folds the human out of it; where checking is free it checks, and so on to
the hand's end (checking while it is free, folding to a bet), as ``f`` is refused there: a
quit never throws away a hand that costs nothing to keep. The bots finish the hand, which
counts (it is not retained); quitting between hands stops at once. The result
keeps every decision the human made as ``(DecisionPoint, action)`` pairs, for retention.

>>> keys = iter(["c", "c", "c", "c"])              # call pre-flop, then check it down
>>> lines: list[str] = []
>>> r = play_human(["call"], 1, seed=3, read=lambda prompt: next(keys, None), show=lines.append)
>>> r.hands, r.names, sum(r.totals)
(1, ('you', 'call'), 0.0)
>>> [a for _, a in r.decisions]
['c', 'c', 'c', 'c']
>>> lines[-1].startswith("Result after 1 hand: you ")
True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from cbr.errors import GameError, counted
from cbr.game.actions import ACTION_NAMES, KIND_OF_WORD
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.game.spec import default_game
from cbr.game.state import HandState
from cbr.logs.record import HandRecord
from cbr.play.table import (
    LEAVE,
    MAX_HANDS,
    PolicySeat,
    Seat,
    Table,
    Watcher,
    act_rng,
    check_seats,
    resolve_players,
    seat_names,
)
from cbr.policies.base import Policy
from evaluator_ext.cards import cards_str

__all__ = ["HumanResult", "QUIT", "parse_key", "key_hint", "play_human", "position_labels", "action_text", "why_lines"]

#: What :func:`parse_key` returns for a quit.
QUIT = "q"
_WORDS = {**KIND_OF_WORD, "q": QUIT, "quit": QUIT, "exit": QUIT}  # the action words: cbr.game.actions
_CHECK_WORDS = ("check", "k")  # the words of "c" that say check, never call

Reader = Callable[[str], Optional[str]]
Shower = Callable[[str], None]


@dataclass
class HumanResult:
    """What :func:`play_human` returns. ``totals`` are chips per seat (seat 0 is the human),
    zero-sum; ``decisions`` are the human's decisions in order, as ``(DecisionPoint, kind)``."""

    names: tuple[str, ...]
    small_bet: float
    hands: int = 0
    totals: list[float] = field(default_factory=list)
    decisions: list[tuple[DecisionPoint, str]] = field(default_factory=list)
    records: list[HandRecord] = field(default_factory=list, repr=False)
    quit: bool = False
    retained: int = 0  # cases kept with retention on

    def small_bets(self, seat: int = 0) -> float:
        """Chips of ``seat`` in small bets."""
        return self.totals[seat] / self.small_bet

    def sb_per_hand(self, seat: int = 0) -> float:
        """Small bets per hand of ``seat`` (0.0 before the first hand)."""
        return self.small_bets(seat) / self.hands if self.hands else 0.0


def parse_key(text: str, legal: str, to_call: float = 0.0) -> str:
    """The action kind (``f``/``c``/``r``) or :data:`QUIT` a typed key or word means, for a
    player with ``to_call`` chips to call.

    ``c`` is check or call, whichever the spot is; the word ``call`` (or ``c``) with nothing
    to call is a check (a call of 0, as poker players say it), but the word ``check`` (or
    ``k``) facing a bet is refused, as ``fold`` is with nothing to call: neither puts chips in
    or throws away a hand the player did not mean to. ``bet`` and ``raise`` are the one action
    ``r``. Raises :class:`GameError` (a ``ValueError``) with a sentence for an unknown key or
    an action that is not legal here; the sentence names no keys to type (the terminal table
    adds them, :func:`key_hint`; the web table offers its buttons).

    >>> parse_key(" Call ", "fcr"), parse_key("q", "cr"), parse_key("bet", "cr"), parse_key("call", "cr")
    ('c', 'q', 'r', 'c')
    >>> parse_key("f", "cr")
    Traceback (most recent call last):
    cbr.errors.GameError: cannot fold: nothing to call, check instead
    >>> parse_key("check", "fcr", to_call=10)
    Traceback (most recent call last):
    cbr.errors.GameError: cannot check: 10 to call; call, raise or fold
    >>> parse_key("check", "fc", to_call=10)
    Traceback (most recent call last):
    cbr.errors.GameError: cannot check: 10 to call; call or fold
    >>> parse_key("x", "fc")
    Traceback (most recent call last):
    cbr.errors.GameError: unknown key 'x'
    """
    word = text.strip().lower()
    kind = _WORDS.get(word)
    if kind is None:
        raise GameError(f"unknown key {text.strip()!r}")
    if kind != QUIT and kind not in legal:
        raise GameError("cannot fold: nothing to call, check instead" if kind == "f"
                        else "cannot raise: betting is capped" if kind == "r" else f"cannot {ACTION_NAMES[kind].verb} here")
    if word in _CHECK_WORDS and to_call > 0:
        raise GameError(f"cannot check: {to_call:g} to call; {'call, raise or fold' if 'r' in legal else 'call or fold'}")
    return kind


def key_hint(legal: str) -> str:
    """The keys the terminal table names after a refused one.

    >>> key_hint("cr")
    '(type c, r or q)'
    """
    return f"(type {', '.join(legal)} or q)"


#: The names of the seats between the big blind and the button, by how many there are (the
#: first acts first before the flop); more than four: UTG+1, UTG+2, ... after UTG.
_MIDDLE_LABELS = {1: ("UTG",), 2: ("UTG", "CO"), 3: ("UTG", "HJ", "CO"), 4: ("UTG", "MP", "HJ", "CO")}


def position_labels(state: HandState) -> list[str]:
    """Position labels: BB, SB and BTN (heads-up the button is the small blind), and at 4 seats
    and more the seats between the big blind and the button, in their order before the flop:
    UTG first, CO right before the button, HJ and MP before it (UTG+1, ... beyond 7 seats). The
    web table (:mod:`cbr.serve.table`) shows them too.

    >>> from cbr.game.spec import default_game
    >>> [position_labels(HandState(default_game(n))) for n in (2, 4, 6)]
    [['BB', 'SB/BTN'], ['SB', 'BB', 'UTG', 'BTN'], ['SB', 'BB', 'UTG', 'HJ', 'CO', 'BTN']]
    """
    n = state.n_players
    blinds = state.game.blinds
    out = [""] * n
    big = max(blinds)
    for p in range(n):
        if big > 0 and blinds[p] == big:
            out[p] = "BB"
        elif blinds[p] > 0:
            out[p] = "SB"
    b = state.button
    out[b] = "BTN" if not out[b] else out[b] + "/BTN"
    if "BB" in out:  # the seats from the big blind's left round to the button's right
        middle = []
        p = (out.index("BB") + 1) % n
        while p != b and not out[p]:
            middle.append(p)
            p = (p + 1) % n
        k = len(middle)
        names = _MIDDLE_LABELS.get(k) or ("UTG", *(f"UTG+{i}" for i in range(1, k - 3)), "MP", "HJ", "CO")
        for p, name in zip(middle, names):
            out[p] = name
    return out


def action_text(state: HandState, kind: str) -> str:
    """How the action ``kind`` of the player to act reads (before it is taken): ``calls 10``,
    ``raises to 30``; the web table (:mod:`cbr.serve.table`) words its history so too."""
    to_call = state.to_call
    if kind == "f":
        return "folds"
    if kind == "c":
        return f"calls {to_call:g}" if to_call > 0 else "checks"
    word = "bets" if state.street_bets == 0 else "raises"
    p = state.to_act
    assert p is not None
    target = state.committed[p] + to_call + state.game.bet_size(state.street)
    return f"{word} to {target:g}"


def _key_help(state: HandState, legal: str) -> str:
    to_call = state.to_call
    words = {"f": "fold",
             "c": f"call {to_call:g}" if to_call > 0 else "check",
             "r": "bet" if state.street_bets == 0 else "raise"}
    return ", ".join(f"{ACTION_NAMES[k].words[0]}={words[k]}" for k in ACTION_NAMES if k in legal) + ", q=quit"


def _table(state: HandState, you: int, labels: list[str], told: list[list[str]]) -> list[str]:
    """The lines showing the table to the human at position ``you``."""
    n = state.n_players
    lines = [f"-- {STREETS[state.street]} --",
             f"Your cards: {cards_str(state.hole_cards[you] or (), ' ')}",
             f"Board: {cards_str(state.board, ' ') if state.board else '(none)'}",
             f"Pot: {state.pot:g}"]
    for p in range(n):
        status = " (folded)" if state.folded[p] else ""
        stack = state.stacks[p]
        stack_txt = f", stack {stack:g}" if stack != float("inf") else ""
        mark = "*" if p == you else " "
        label = f" [{labels[p]}]" if labels[p] else ""
        lines.append(f" {mark} {state.players[p]}{label}: in the pot {state.total_committed[p]:g}{stack_txt}{status}")
    for street, said in enumerate(told):
        if said:
            lines.append(f"{STREETS[street].capitalize()}: " + "; ".join(said))
    return lines


def play_human(
    bots: Sequence[str | Policy],
    hands: int,
    *,
    read: Reader,
    show: Shower,
    seed: int = 0,
    name: str = "you",
    retain: bool = False,
    retain_into: Optional[str] = None,
    why: int = 0,
) -> HumanResult:
    """Play up to ``hands`` hands with a human (seat 0) against 1..9 ``bots`` (policy specs
    or :class:`Policy` objects); see the module docstring for the keys and quitting.

    ``read(prompt)`` returns the next line typed (``None`` at end of input); ``show(line)``
    gets every line to display. Raises :class:`GameError` for bad counts and for a bot that
    cannot play at a table of that many (:func:`~cbr.play.table.seat_refusal`: the cfr bot
    with two bots or more), before any hand, and
    :class:`~cbr.policies.spec.PolicySpecError` for bad specs (both ``ValueError``).
    ``retain``/``retain_into``: as in :func:`~cbr.play.match.run_match`; the human's decisions are
    kept too (a person teaches the bot by playing it), in the first case-based bot's case base
    (a hand the human quits in the middle is not kept). ``why``: after each hand, show every
    decision a case-based bot made in it, from its decision record (:func:`why_lines`), with
    its ``why`` most similar cases.

    >>> play_human([], 1, read=lambda p: None, show=print)
    Traceback (most recent call last):
    cbr.errors.GameError: a human game seats 1 to 9 bots, got 0
    """
    if not 1 <= len(bots) <= 9:
        raise GameError(f"a human game seats 1 to 9 bots, got {len(bots)}")
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
        raise GameError(f"hands must be a whole number from 1 to {MAX_HANDS:,}, got {hands!r}")
    policies = resolve_players(bots, seed, first_seat=1)
    try:
        check_seats(policies, len(policies) + 1)  # before any hand, as a match
        retainers = []
        if retain or retain_into is not None:
            from cbr.play.retention import start_retention

            retainers = start_retention([None, *policies], [name, *seat_names(policies)],  # type: ignore[list-item]
                                        into=retain_into, extra_seats=[0])
        try:
            result = _play(policies, hands, read, show, seed, name, retainers, why)
        finally:
            for r in retainers:
                r.close()
        result.retained = sum(r.retained for r in retainers)
        return result
    finally:
        for given, p in zip(bots, policies):
            close = getattr(p, "close", None)
            if not isinstance(given, Policy) and callable(close):
                close()


class _Person(Seat, Watcher):
    """The human's seat at the table, and the table as the human sees it: every line to
    ``show``, every action asked with ``read``."""

    def __init__(self, hands: int, read: Reader, show: Shower, result: HumanResult) -> None:
        self.hands, self.read, self.show, self.result = hands, read, show, result
        self.state: HandState
        self.you = 0
        self.labels: list[str] = []
        self.told: list[list[str]] = []
        self.quitting: Callable[[], None] = lambda: None  # told once, when the human quits

    # ---- the seat
    def act(self, state: HandState, dp: DecisionPoint) -> str:
        if self.result.quit:  # quit earlier this hand where checking was free: check, or fold to a bet
            return "c" if state.to_call == 0 and "c" in dp.legal else self._leave(state, "You fold (you quit).")
        for line in _table(state, self.you, self.labels, self.told):
            self.show(line)
        kind = _ask(state, dp.legal, self.read, self.show)
        if kind == QUIT:
            self.result.quit = True
            self.quitting()
            if state.to_call == 0 and "c" in dp.legal:  # folding would give away a free hand ('f' is refused)
                self.show("You quit: you check, and fold to a bet, until this hand ends.")
                return "c"
            return self._leave(state, "You quit: you fold this hand.")  # the bots finish the hand
        self.result.decisions.append((dp, kind))
        return kind

    def _leave(self, state: HandState, line: str) -> str:
        self.show(line)
        self.told[state.street].append(f"{state.players[self.you]} leaves (folds)")
        return LEAVE

    # ---- the table
    def dealt(self, k: int, state: HandState, seats: Sequence[int]) -> None:
        self.state = state
        self.you = seats.index(0)
        self.labels = position_labels(state)
        self.told = [[] for _ in STREETS]
        self.show("")
        self.show(f"=== Hand {k + 1} of {self.hands} (you are {self.labels[self.you] or 'position ' + str(self.you)}) ===")

    def acting(self, state: HandState, position: int, kind: str) -> None:
        verb, _, rest = action_text(state, kind).partition(" ")
        said = f"{state.players[position]} {verb[:-1] if position == self.you else verb}" + (f" {rest}" if rest else "")
        self.told[state.street].append(said)
        self.show(said)

    def board(self, state: HandState) -> None:
        self.show(f"{STREETS[state.street].capitalize()}: {cards_str(state.board, ' ')}")


class _Explained(PolicySeat):
    """A bot's seat that keeps the case-based decisions of the hand in play, for :func:`why_lines`."""

    def __init__(self, policy: Policy, rng: Any, name: str, kept: list) -> None:
        super().__init__(policy, rng)
        self.name, self.kept = name, kept

    def decide(self, state: HandState, dp: DecisionPoint) -> Any:
        d = super().decide(state, dp)
        if getattr(d, "vote", None) is not None or getattr(d, "expert", None) is not None:
            self.kept.append((self.name, d))  # the case-based bot's vote, or the adaptive bot's choice
        return d


def why_lines(name: str, decision: Any, top: int = 3) -> list[str]:
    """A case-based bot's decision in words, from its record alone (nothing retrieved again):
    where and what, the triple and the triple played, the vote, and the ``top`` most similar
    cases it counted.

    >>> from cbr.game.situation import situation
    >>> from cbr.policies.cbr_policy import CBRPolicy
    >>> with CBRPolicy(preset="casper", seed=1) as bot:
    ...     lines = why_lines("cbr", bot.decide(situation(hole="AdQc", board="3h4cJh", to_call=1, pot=5)), top=2)
    >>> lines[0], len(lines)
    ("cbr on the flop with Ad Qc, betting 'rc/r': call", 5)
    """
    from cbr.query.answer import explain_decision

    dp = decision.dp
    word = {"f": "fold", "c": "check" if dp.to_call == 0 else "call", "r": "bet" if dp.street_bets == 0 else "raise"}
    if getattr(decision, "vote", None) is None:  # the adaptive bot's choice of another expert: no cases voted
        return [f"{name} on the {STREETS[dp.street]} with {cards_str(dp.hole, ' ')}, betting {dp.history!r}: "
                f"{word[decision.action]}",
                f"  played by {decision.expert}, the adaptive bot's choice: {decision.reason}"]
    ans = explain_decision(decision, top=top)
    t, p = decision.triple, decision.played
    out = [f"{name} on the {decision.street} with {cards_str(dp.hole, ' ')}, betting {dp.history!r}: "
           f"{word[decision.action]}",
           f"  {decision.explanation}" + ("" if p == t else f"; played fold {p[0]:.2f} call {p[1]:.2f} raise {p[2]:.2f}"),
           f"  {counted(ans.retrieved, 'case')} {'(the most similar: none reached ' if ans.fallback else 'at similarity >= '}"
           f"{ans.threshold:g}{')' if ans.fallback else ''}, mean similarity {ans.mean_similarity:.4f}"]
    if getattr(decision, "kept", ""):  # the adaptive bot's case base decided: why no other expert
        out.insert(1, f"  played by its case base, the adaptive bot's choice: {decision.kept}")
    for cid, c in zip(ans.case_ids, ans.to_dict()["cases"]):
        prov = c.get("provenance", {})
        out.append(f"  case {cid}: similarity {c['similarity']:.4f}, {c['action']} with {prov.get('hole', '?')} "
                   f"on {prov.get('board') or '-'}, betting {prov.get('history', '?')!r} "
                   f"({prov.get('player', '?')}, {prov.get('source', '?')}#{prov.get('hand_id', '?')})")
    return out


def _play(bots: list[Policy], hands: int, read: Reader, show: Shower, seed: int, name: str,
          retainers: Sequence[Any] = (), why: int = 0) -> HumanResult:
    n = len(bots) + 1
    game = default_game(n)
    names = [name, *seat_names(bots)]
    if name in names[1:]:
        names[0] = f"{name} (human)"
    for p in bots:
        p.reset()
    result = HumanResult(names=tuple(names), small_bet=game.small_bet, totals=[0.0] * n)
    person = _Person(hands, read, show, result)
    explained: list = []  # the case-based bots' decisions of the hand in play (with why)
    seats = [_Explained(p, act_rng(seed, s), names[s], explained) if why else PolicySeat(p, act_rng(seed, s))
             for s, p in enumerate(bots, start=1)]
    if why and not any(getattr(p, "can_retain", False) for p in bots):
        show("(--why explains the decisions of case-based bots; none of these bots retrieves cases)")
    table = Table(game, [person, *seats], names, seed=seed, source="human", retainers=retainers, watcher=person)

    def keep_nothing() -> None:  # a hand the human quits is not retained, though it may end without a fold
        table.retainers = []

    person.quitting = keep_nothing
    sb = game.small_bet
    for k in range(hands):
        if result.quit:
            break
        record, _, won = table.play(k)
        result.records.append(record)
        state, you, payoffs = person.state, person.you, record.payoffs or ()
        live = [p for p in range(n) if not state.folded[p]]
        if len(live) > 1:
            show(f"Showdown, board {cards_str(state.board, ' ')}:")
            for p in live:
                show(f"  {state.players[p]} {'show' if p == you else 'shows'} {cards_str(record.hole_cards[p], ' ')}")  # type: ignore[arg-type]
        for p in range(n):
            if payoffs[p] > 0:
                show(f"{state.players[p]} {'win' if p == you else 'wins'} {payoffs[p] + state.total_committed[p]:g} "
                     f"(net {payoffs[p]:+g})")
        for s in range(n):
            result.totals[s] += won[s]
        result.hands += 1
        show(f"Hand {k + 1}: you {payoffs[you] / sb:+g} sb; running total {result.small_bets(0):+g} sb "
             f"over {counted(result.hands, 'hand')}")
        if explained:
            show("Why the bots did what they did:")
            for who, d in explained:
                for line in why_lines(who, d, why):
                    show(line)
            explained.clear()
    show("")
    parts = [f"{names[s]} {result.totals[s] / sb:+g} sb" for s in range(n)]
    show(f"Result after {counted(result.hands, 'hand')}: " + ", ".join(parts)
         + (f" (you: {result.sb_per_hand(0):+.3f} sb/h)" if result.hands else ""))
    return result


def _ask(state: HandState, legal: str, read: Reader, show: Shower) -> str:
    """Read keys until one is legal here (or a quit); end of input is a quit."""
    prompt = f"Your move ({_key_help(state, legal)}): "
    while True:
        line = read(prompt)
        if line is None:
            return QUIT
        if not line.strip():
            continue
        try:
            return parse_key(line, legal, state.to_call)
        except GameError as exc:
            show(f"error: {exc} {key_hint(legal)}")
