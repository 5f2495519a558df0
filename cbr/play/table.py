"""One table loop: deal from the seeded deck, ask each seat for its action, apply it, settle.

The match runner (:mod:`cbr.play.match`), the ACPC dealer (:mod:`cbr.acpc.dealer`) and the
human table (:mod:`cbr.play.human`) all play their hands here, so the same seed gives the
same deals and the same bots' actions at every table.

- **Seats.** ``seats[s]`` is a :class:`Seat`: a policy (:class:`PolicySeat`, its own
  action stream :func:`act_rng`), a remote ACPC client (the dealer's seat) or the person
  (the human table's seat). A seat answers ``f``, ``c`` or ``r`` for the decision point it
  is shown, or :data:`LEAVE` to be folded out of the hand (a person who quits).
- **Positions.** The button moves one seat per hand: position ``i`` of hand ``k`` is seat
  ``(i + k) % n`` (:func:`cbr.game.state.seats_for_hand`).
- **Cards.** Deal ``d`` shuffles a fresh deck with ``random.Random(f"cbr-deal:{seed}:{d}")``
  (:func:`deal_cards`): position ``i`` gets cards ``2i, 2i+1``, the board the next five.
- **After the hand.** The retainers keep it (unless a seat left it in the middle), the
  seats that learn observe it as they may see it (:func:`seen_by`), the log gets the full
  record, in that order.
- **Watching.** A :class:`Watcher` hears the table's events (hand dealt, a seat's turn, an
  action about to be taken, board cards dealt, an action taken): the dealer sends its
  ``MATCHSTATE`` lines from them, the human table its text.

>>> from cbr.game import preset
>>> from cbr.policies.baseline import AlwaysCallPolicy, AlwaysRaisePolicy
>>> seats = [PolicySeat(AlwaysCallPolicy(), act_rng(0, 0)), PolicySeat(AlwaysRaisePolicy(), act_rng(0, 1))]
>>> table = Table(preset("holdem.limit.2p"), seats, ["call", "raise"], seed=0)
>>> hand = table.play(0)
>>> hand.record.extra["betting"], hand.seats, sum(hand.won)
('rc/crc/crc/crc', (0, 1), 0.0)
"""
from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple, Optional, Sequence

from cbr.errors import GameError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, GameDef
from cbr.game.state import HandState, seats_for_hand
from cbr.logs.record import HandRecord
from cbr.policies.base import Decision, Policy
from cbr.policies.spec import policy_from_spec

if TYPE_CHECKING:  # pragma: no cover
    from cbr.logs.output import HandLogWriter
    from cbr.play.retention import Retainer

__all__ = ["MAX_HANDS", "LEAVE", "Seat", "PolicySeat", "Watcher", "Table", "PlayedHand", "act_rng", "deal_cards",
           "check_seats", "dealt_decisions", "end_hand", "expert_choices", "play_hand", "play_out", "resolve_players", "seat_label",
           "seat_refusal", "seat_names", "seat_seed", "seen_by", "unique_names"]

#: Most hands one match plays (about a week of play on one core at the bots' speed).
MAX_HANDS = 1_000_000_000
#: What a seat answers to be folded out of the hand (a person who quits in the middle).
LEAVE = "leave"
#: Board cards dealt after each street's betting: ``board[lo:hi]``.
BOARD_STEPS = ((0, 3), (3, 4), (4, 5))

Settle = Callable[[HandState], tuple[float, ...]]


# ---------------------------------------------------------------------- seeds, cards, names
def seat_seed(seed: int, seat: int) -> int:
    """The seed of the bot at ``seat`` in a match seeded ``seed`` (the same in ``cbr match``,
    the ACPC dealer and the human table, so they play the same bots on the same deals).

    >>> seat_seed(0, 1), seat_seed(2, 0)
    (1, 2018)
    """
    return seed * 1009 + seat


def act_rng(seed: int, seat: int) -> random.Random:
    """The stream a policy at ``seat`` draws its actions from in a match seeded ``seed``.

    >>> act_rng(0, 1).random() == act_rng(0, 1).random() != act_rng(0, 0).random()
    True
    """
    return random.Random(f"cbr-act:{seed}:{seat}")


def deal_cards(seed: int, deal: int, n_players: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Hole cards per position and the five board cards of deal ``deal`` (deterministic).

    >>> holes, board = deal_cards(0, 7, 2)
    >>> len(set(sum(holes, ()) + tuple(board)))
    9
    """
    deck = random.Random(f"cbr-deal:{seed}:{deal}").sample(range(52), 2 * n_players + 5)
    holes = [(deck[2 * i], deck[2 * i + 1]) for i in range(n_players)]
    return holes, deck[2 * n_players : 2 * n_players + 5]


def dealt_decisions(game: GameDef, seed: int, deal: int) -> Iterator[tuple[HandState, DecisionPoint]]:
    """The decision points of deal ``deal`` of ``seed`` (:func:`deal_cards`), the board dealt as
    the betting reaches each street: yields ``(state, decision point)``; the caller acts on
    ``state`` before asking for the next (what a bench or an experiment that drives one seat's
    decisions by hand needs).

    >>> from cbr.game.gamedef import preset
    >>> streets = []
    >>> for state, dp in dealt_decisions(preset("holdem.limit.2p"), 0, 7):
    ...     streets.append(dp.street)
    ...     _ = state.act("c")
    >>> streets
    [0, 0, 1, 1, 2, 2, 3, 3]
    """
    holes, board = deal_cards(seed, deal, game.n_players)
    state = HandState(game, hole_cards=holes, hand_id=str(deal))
    while not state.is_over:
        while state.needs_board:
            state.deal_board(board[len(state.board): BOARD_SIZES[state.street + 1]])
        if state.is_over:
            return
        yield state, state.decision_point()


def resolve_players(players: Sequence[str | Policy], seed: int, *, first_seat: int = 0) -> list[Policy]:
    """Policies for seats ``first_seat``, ``first_seat + 1``, ...: a spec is built with
    :func:`seat_seed` (and kept as the policy's ``spec``: results name a seat's policy by it,
    options included), a :class:`Policy` is used as it is."""
    out: list[Policy] = []
    for i, p in enumerate(players, start=first_seat):
        if isinstance(p, Policy):
            out.append(p)
        elif isinstance(p, str):
            policy = policy_from_spec(p.strip(), seed=seat_seed(seed, i))
            policy.spec = p.strip()  # type: ignore[attr-defined]
            out.append(policy)
        else:
            raise ValueError(f"player {i}: expected a policy name or a Policy, got {type(p).__name__}")
    return out


def seat_refusal(policy: Policy, players: int) -> str:
    """Why ``policy`` cannot play at a table of ``players``, empty when it can: a bot of the
    two-player game (``heads_up_only``: the cfr bot) at a bigger table, or what the bot says
    itself (``refuses_table``: the adaptive bot, whose safe expert may play heads-up only).

    >>> from cbr.policies.spec import policy_from_spec
    >>> seat_refusal(policy_from_spec("cfr"), 2), seat_refusal(policy_from_spec("cfr"), 3)
    ('', 'the cfr bot plays heads-up only: it cannot play at a table of 3')
    """
    own = getattr(policy, "refuses_table", None)
    if callable(own):
        return own(players)
    if players > 2 and getattr(policy, "heads_up_only", False):
        return f"the {policy.name} bot plays heads-up only: it cannot play at a table of {players}"
    return ""


def check_seats(policies: Sequence[Optional[Policy]], players: int) -> None:
    """Raise :class:`GameError` with the first :func:`seat_refusal` among ``policies`` (None:
    a seat no bot of ours plays, e.g. a dealer's remote seat) at a table of ``players``:
    every table (a match, a dealer, a person's game, an ACPC client) asks before its first hand.

    >>> from cbr.policies.spec import policy_from_spec
    >>> check_seats([policy_from_spec("cfr"), None], 2)
    >>> check_seats([policy_from_spec("call"), None, policy_from_spec("cfr")], 3)
    Traceback (most recent call last):
    cbr.errors.GameError: the cfr bot plays heads-up only: it cannot play at a table of 3
    """
    for p in policies:
        refusal = "" if p is None else seat_refusal(p, players)
        if refusal:
            raise GameError(refusal)


def expert_choices(policies: Sequence[Optional[Policy]]) -> list[tuple]:
    """Each seat's adaptive choices so far (:attr:`~cbr.policies.adaptive.AdaptivePolicy.expert_choices`,
    immutable records: a copy of the list is a snapshot), empty for a bot that chooses none and
    for a seat no bot of ours plays (None). ``cbr match``, the ACPC dealer and the ACPC client
    report them the same way.

    >>> from cbr.policies.spec import policy_from_spec
    >>> expert_choices([policy_from_spec("call"), None])
    [(), ()]
    """
    return [tuple(getattr(p, "expert_choices", ())) for p in policies]


def seat_label(policy: Policy) -> str:
    """A seat's label: the policy spec it was built from (``cbr:preset=expert``), its ``:``
    written ``/`` (a log's player names hold no ``:`` or ``|``), or the policy's name when it
    was given as an object. Labels name the seats in results, plots, logs, the retained cases'
    ``opponents`` and the opponent models alike.

    >>> from cbr.policies.spec import policy_from_spec
    >>> seat_label(policy_from_spec("cbr:preset=expert")), seat_label(policy_from_spec(" ehs "))
    ('cbr/preset=expert', 'ehs')
    """
    spec = getattr(policy, "spec", None)
    if not isinstance(spec, str) or not spec.strip():
        return policy.name
    return "/".join(part.strip() for part in spec.strip().replace("|", ":").split(":"))


def seat_names(policies: Sequence[Policy]) -> list[str]:
    """One unique label per seat (:func:`seat_label`), ``#2``, ``#3``... on a label's second,
    third... seat.

    >>> from cbr.policies.spec import policy_from_spec as spec
    >>> seat_names([spec("call"), spec("cfr:strategy=counter_raise"), spec("call")])
    ['call', 'cfr/strategy=counter_raise', 'call#2']
    """
    return unique_names([seat_label(p) for p in policies])


def unique_names(names: Sequence[str]) -> list[str]:
    """Names made unique at a table: a name's second seat gets ``#2``, its third ``#3``...

    >>> unique_names(["remote", "ehs", "remote"])
    ['remote', 'ehs', 'remote#2']
    """
    out: list[str] = []
    for nm in names:
        label, k = nm, 1
        while label in out:
            k += 1
            label = f"{nm}#{k}"
        out.append(label)
    return out


def seen_by(record: HandRecord, position: int) -> HandRecord:
    """The record as ``position`` may see it after the hand: its own cards and those shown
    at a showdown (:attr:`HandRecord.showdown`). Bots observe this in ``cbr match``, the ACPC
    dealer and the human table."""
    shown = record.showdown
    holes = tuple(h if p == position or p in shown else None for p, h in enumerate(record.hole_cards))
    return replace(record, hole_cards=holes, extra=dict(record.extra))


# ---------------------------------------------------------------------------------- seats
class Seat:
    """A chair at the table. :meth:`decide` answers the seat's decision at the decision point
    ``dp`` of ``state`` (the seat's turn) as a :class:`~cbr.policies.base.Decision` record;
    a seat that only says its action overrides :meth:`act` instead (``f``, ``c``, ``r`` or
    :data:`LEAVE`). A seat that learns sets ``observes`` and gets every finished hand in
    :meth:`observe`."""

    observes: bool = False

    def act(self, state: HandState, dp: DecisionPoint) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def decide(self, state: HandState, dp: DecisionPoint) -> Decision:
        """The decision record of :meth:`act`'s action."""
        kind = self.act(state, dp)
        return Decision(dp=dp if kind == LEAVE else dp.taken(kind), action=kind)

    def observe(self, record: HandRecord, position: int) -> None:
        """The finished hand as this seat may see it (:func:`seen_by`)."""


class PolicySeat(Seat):
    """A policy in a seat, drawing its actions from ``rng`` (:func:`act_rng`)."""

    __slots__ = ("policy", "rng", "observes")

    def __init__(self, policy: Policy, rng: random.Random) -> None:
        self.policy = policy
        self.rng = rng
        self.observes = type(policy).observe is not Policy.observe

    def act(self, state: HandState, dp: DecisionPoint) -> str:
        return self.policy.decide(dp, self.rng).action

    def decide(self, state: HandState, dp: DecisionPoint) -> Decision:
        return self.policy.decide(dp, self.rng)

    def observe(self, record: HandRecord, position: int) -> None:
        self.policy.observe(record, position)


class Watcher:
    """Hears what happens at the table; every method does nothing unless overridden.

    ``dealt(k, state, seats)``: hand ``k`` is dealt (``seats[pos]`` sits at position
    ``pos``); ``turn(state, position)``: ``position`` is about to be asked;
    ``acting(state, position, kind)``: ``kind`` is about to be applied (``state`` still
    shows the moment of the decision); ``board(state)``: board cards were dealt;
    ``moved(state)``: an action was applied and the board cards it called for dealt.
    """

    def dealt(self, k: int, state: HandState, seats: Sequence[int]) -> None:
        pass

    def turn(self, state: HandState, position: int) -> None:
        pass

    def acting(self, state: HandState, position: int, kind: str) -> None:
        pass

    def board(self, state: HandState) -> None:
        pass

    def moved(self, state: HandState) -> None:
        pass


# ---------------------------------------------------------------------------------- hands
def _deal_boards(state: HandState, board: Sequence[int], watcher: Optional[Watcher]) -> None:
    while state.needs_board and not state.is_over:
        lo, hi = BOARD_STEPS[state.street]
        state.deal_board(board[lo:hi])
        if watcher is not None:
            watcher.board(state)


def play_out(state: HandState, seats: Sequence[Seat], board: Sequence[int], *,
             decisions: Optional[list] = None, watcher: Optional[Watcher] = None) -> bool:
    """Play ``state`` to its end: ``seats`` and ``board`` are indexed by *position*.

    ``decisions`` receives every decision's record (:class:`~cbr.policies.base.Decision`: the
    decision point with its action taken, and for a case-based bot the feature row and the
    vote), for retention and explanations. Returns whether a seat left the hand
    (:data:`LEAVE`). Raises :class:`GameError` when a seat chooses an action that is not legal.
    """
    left = False
    if state.needs_board:
        _deal_boards(state, board, watcher)
    while not state.is_over:
        pos = state.to_act
        if watcher is not None:
            watcher.turn(state, pos)  # type: ignore[arg-type]
        dp = state.decision_point()          # carries the actor's hole cards only
        decision = seats[pos].decide(state, dp)  # type: ignore[index]
        kind = decision.action
        if kind not in dp.legal:
            if kind != LEAVE:
                raise GameError(f"policy {state.players[pos]!r} chose {kind!r} where only {dp.legal!r} is legal "  # type: ignore[index]
                                f"(hand {state.hand_id}, history {state.history!r})")
            left = True
            state.fold_out(pos)
        else:
            if decisions is not None:
                decisions.append(decision)
            if watcher is not None:
                watcher.acting(state, pos, kind)  # type: ignore[arg-type]
            state.act(kind)
        if state.needs_board:
            _deal_boards(state, board, watcher)
        if watcher is not None:
            watcher.moved(state)
    return left


def end_hand(record: HandRecord, seats: Sequence[Seat], order: Sequence[int], decisions: Optional[Sequence[Decision]],
             *, retainers: Sequence["Retainer"] = (), log: Optional["HandLogWriter"] = None, left: bool = False) -> int:
    """After a hand, in the one order of every table (the match runner, the ACPC dealer and
    client, the human and web tables): the retainers keep it (unless a seat ``left`` it in
    the middle) from its decision records, then the seats that learn observe it as they may
    see it (:func:`seen_by`; ``seats`` by position), then the log gets it. ``order[pos]``: the
    seat at position ``pos``. Returns the cases kept."""
    kept = 0
    if not left:  # a hand a seat left in the middle is not kept
        for r in retainers:
            kept += r.hand(record, order, decisions)
    for pos, seat in enumerate(seats):
        if seat.observes:
            seat.observe(seen_by(record, pos), pos)
    if log is not None:
        log.write(record)
    return kept


def _record(state: HandState, holes: Sequence[tuple[int, int]], payoffs: tuple[float, ...]) -> HandRecord:
    """The full record of a finished hand (every hole card, as a dealer log shows them)."""
    return HandRecord(
        source=state.source, line=0, hand_id=state.hand_id, game=state.game, players=tuple(state.players),
        hole_cards=tuple(tuple(h) for h in holes), board=state.board, actions=tuple(state.actions),
        payoffs=payoffs, format="match", extra={"betting": state.history},
    )


def play_hand(
    game: GameDef,
    policies: Sequence[Policy],
    names: Sequence[str],
    rngs: Sequence[random.Random],
    holes: Sequence[tuple[int, int]],
    board: Sequence[int],
    hand_id: str = "",
    source: str = "match",
    decisions: Optional[list] = None,
) -> HandRecord:
    """Play one hand between policies; ``policies``/``names``/``rngs`` are indexed by *position*.

    Returns the full record (every hole card, as a dealer log shows them). ``decisions``:
    a list that receives every decision's record (for retention).

    >>> from cbr.game import preset
    >>> from cbr.policies.baseline import AlwaysCallPolicy
    >>> rec = play_hand(preset("holdem.limit.2p"), [AlwaysCallPolicy()] * 2, ["a", "b"],
    ...                 [random.Random(0)] * 2, [(0, 1), (2, 3)], [4, 5, 6, 7, 8])
    >>> rec.extra["betting"], rec.payoffs
    ('cc/cc/cc/cc', (0.0, 0.0))
    """
    state = HandState(game, players=names, hole_cards=holes, hand_id=hand_id, source=source)
    play_out(state, [PolicySeat(p, r) for p, r in zip(policies, rngs)], board, decisions=decisions)
    return _record(state, holes, state.payoffs())


class PlayedHand(NamedTuple):
    """One hand played at a :class:`Table`: its full record, the seat at each position and
    the chips each *seat* won."""

    record: HandRecord
    seats: tuple[int, ...]
    won: list[float]


class Table:
    """``seats`` (2..10, by seat) named ``names`` playing ``game`` on the deals of ``seed``.

    ``source``: the records' source; ``settle``: a finished hand's payoffs per position
    (default :meth:`HandState.payoffs`, whole chips; the ACPC dealer splits pots exactly);
    ``retainers``: keep every hand (:class:`~cbr.play.retention.Retainer`); ``log``: gets
    every hand's full record; ``watcher``: hears every event (:class:`Watcher`).
    """

    def __init__(self, game: GameDef, seats: Sequence[Seat], names: Sequence[str], *, seed: int = 0,
                 source: str = "match", settle: Optional[Settle] = None, retainers: Sequence["Retainer"] = (),
                 log: Optional["HandLogWriter"] = None, watcher: Optional[Watcher] = None) -> None:
        n = len(seats)
        if game.n_players != n:
            raise GameError(f"game {game.name!r} seats {counted(game.n_players, 'player')} but {n} were given")
        if len(names) != n:
            raise GameError(f"{counted(n, 'seat')} need {counted(n, 'name')}, got {len(names)}")
        self.game = game
        self.seats = list(seats)
        self.names = list(names)
        self.seed = seed
        self.source = source
        self.settle: Settle = settle or HandState.payoffs
        self.retainers = list(retainers)
        self.log = log
        self.watcher = watcher
        self._observes = any(seat.observes for seat in seats)
        self._range = range(n)

    def play(self, k: int, deal: Optional[int] = None) -> PlayedHand:
        """Play hand ``k`` (positions rotated ``k`` seats) on the cards of deal ``deal``
        (default ``k``), then retain, observe and log it."""
        n = len(self.seats)
        holes, board = deal_cards(self.seed, k if deal is None else deal, n)
        order = seats_for_hand(self._range, k)            # position -> seat
        state = HandState(self.game, players=[self.names[s] for s in order], hole_cards=holes, hand_id=str(k),
                          source=self.source)
        decisions: Optional[list] = [] if self.retainers else None
        watcher = self.watcher
        if watcher is not None:
            watcher.dealt(k, state, order)
        left = play_out(state, [self.seats[s] for s in order], board, decisions=decisions, watcher=watcher)
        payoffs = self.settle(state)
        record = _record(state, holes, payoffs)
        end_hand(record, [self.seats[s] for s in order] if self._observes else (), order, decisions,
                 retainers=self.retainers, log=self.log, left=left)
        won = [0.0] * n
        for pos, s in enumerate(order):
            won[s] = float(payoffs[pos])
        return PlayedHand(record, order, won)
