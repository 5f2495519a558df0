"""Replay a logged hand through the rules engine: check it, and turn it into decision points.

Every action of a :class:`~cbr.logs.record.HandRecord` becomes one
:class:`~cbr.game.DecisionPoint`: the table just before it, with ``action``/``amount`` set
and ``hole`` = the actor's hole cards, or None when the log does not show them (those
decisions are kept; they are flagged by ``hole is None``). Impossible sequences raise
:class:`~cbr.errors.GameError` naming the hand (``record.where``) and the problem.

>>> from cbr.game import preset
>>> from cbr.logs.record import Action, HandRecord
>>> rec = HandRecord(source="x.log", line=7, hand_id="3", game=preset("holdem.limit.2p"),
...     players=("a", "b"), hole_cards=(None, (51, 47)), board=(),
...     actions=(Action(0, 1, "r"), Action(0, 0, "f")), payoffs=(-10.0, 10.0))
>>> [(d.player, d.action, d.to_call, d.hole) for d in replay(rec)]
[('b', 'r', 5.0, (51, 47)), ('a', 'f', 10.0, None)]
>>> replay_hand(rec).payoffs
(-10.0, 10.0)
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Optional, Sequence

from cbr.errors import GameError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import BOARD_SIZES, STREETS
from cbr.game.state import HandState
from cbr.logs.record import HandRecord
from evaluator_ext.cards import card_str


@dataclass
class ReplayedHand:
    """The result of :func:`replay_hand`.

    - ``decisions``: one decision point per action that was a decision.
    - ``state``: the final :class:`HandState`.
    - ``payoffs``: net chips per position as replayed, or None when they cannot be known
      (a showdown whose cards the log does not show, or a log that stops early).
    - ``flags``: notes on tolerated irregularities (e.g. a player folding with nothing to
      call, which the engine treats as leaving the hand and which yields no decision).
    """

    record: HandRecord
    decisions: list[DecisionPoint]
    state: HandState
    payoffs: Optional[tuple[float, ...]]
    flags: list[str] = field(default_factory=list)


def _fail(record: HandRecord, problem: str) -> GameError:
    return GameError(f"{record.where} (hand {record.hand_id}): {problem}")


def _deal_next(state: HandState, record: HandRecord) -> None:
    street = state.street + 1
    have, need = len(record.board), BOARD_SIZES[street]
    if have < need:
        raise _fail(record, f"too few board cards for the streets played: the log shows {have}, "
                            f"the {STREETS[street]} needs {need}")
    try:
        state.deal_board(record.board[BOARD_SIZES[street - 1]:need])
    except GameError as exc:
        raise _fail(record, str(exc)) from None


def _check_cards(record: HandRecord) -> None:
    seen: dict[int, str] = {}
    for p, hole in enumerate(record.hole_cards):
        for c in hole or ():
            if c in seen:
                raise _fail(record, f"card {card_str(c)} dealt twice ({seen[c]} and position {p}'s hole)")
            seen[c] = f"position {p}'s hole"
    for c in record.board:
        if c in seen:
            raise _fail(record, f"card {card_str(c)} dealt twice ({seen[c]} and the board)")
        seen[c] = "the board"
    if len(record.board) > 5:
        raise _fail(record, f"{len(record.board)} board cards; hold'em has 5")


def replay_hand(
    record: HandRecord,
    *,
    evaluate: Callable[[Sequence[int]], int] | None = None,
    check_payoffs: bool = True,
    strict_folds: bool = False,
) -> ReplayedHand:
    """Replay ``record``; see :class:`ReplayedHand`.

    ``evaluate`` (7 cards -> int) scores showdowns (default ``evaluator_ext.evaluate``).
    With ``check_payoffs`` the log's payoffs must match the replayed ones when they can be
    computed; a pot split is allowed to differ by the odd chip, and when the log's payoffs
    sum below zero (rake) the winners may get up to the rake less than replay gives them.
    A fold with nothing to call is replayed as the player leaving the hand (a quit) and
    flagged, or raises with ``strict_folds``. A fold out of turn by a player listed in
    ``record.extra["quits"]`` is a player leaving the table while another is to act
    (IRC logs): he is folded at once (:meth:`HandState.fold_out`), flagged, no decision.
    """
    game = record.game
    if record.n_players != game.n_players:
        raise _fail(record, f"{counted(record.n_players, 'player')} seated at a {game.n_players}-player game")
    if len(record.hole_cards) != record.n_players:
        raise _fail(record, f"hole cards for {counted(len(record.hole_cards), 'position')}, {counted(record.n_players, 'player')}")
    _check_cards(record)
    try:
        state = HandState(game, players=record.players, stacks=record.stacks, posted=record.posted,
                          hole_cards=record.hole_cards, hand_id=record.hand_id, source=record.source)
    except GameError as exc:
        raise _fail(record, str(exc)) from None

    decisions: list[DecisionPoint] = []
    flags: list[str] = []
    for i, a in enumerate(record.actions):
        while state.needs_board and not state.is_over:
            _deal_next(state, record)
        what = f"action {i + 1} ({a.kind!r} by position {a.position} on the {STREETS[a.street] if 0 <= a.street < 4 else a.street})"
        if state.is_over:
            raise _fail(record, f"{what} comes after the hand ended")
        if a.street != state.street:
            raise _fail(record, f"{what}: the betting is on the {STREETS[state.street]}")
        if a.position != state.to_act:
            if a.kind == "f" and a.position in record.extra.get("quits", ()):
                try:
                    state.fold_out(a.position)   # left the table out of turn: not a decision
                except GameError as exc:
                    raise _fail(record, f"{what}: {exc}") from None
                flags.append(f"{what}: left the table out of turn")
                continue
            raise _fail(record, f"{what} is out of turn: position {state.to_act} is to act")
        if a.kind == "f" and not state.can("f") and not state.is_over and state.to_call <= 0:
            if strict_folds:
                raise _fail(record, f"{what}: cannot fold: nothing to call, check instead")
            state.fold_out()
            flags.append(f"{what}: folded with nothing to call; replayed as leaving the hand")
            continue
        dp = state.decision_point()
        try:
            done = state.act(a.kind, a.amount)
        except GameError as exc:
            raise _fail(record, f"{what}: {exc}") from None
        decisions.append(replace(dp, action=a.kind, amount=done.amount))

    # all-in run-outs (no betting left): deal what the log shows
    while state.needs_board and not state.is_over and len(record.board) > len(state.board):
        _deal_next(state, record)
    if not state.is_over:
        if state.needs_board:
            _deal_next(state, record)  # raises: too few board cards
        raise _fail(record, f"the log's actions stop before the hand ends (position {state.to_act} "
                            f"to act on the {STREETS[state.street]})")

    payoffs = _payoffs(state, evaluate)
    if check_payoffs and record.payoffs is not None:
        if payoffs is not None:
            _compare_payoffs(record, payoffs, state)
        else:  # a showdown whose cards the log does not show: the pot still bounds what is won
            _bound_payoffs(record, state)
    return ReplayedHand(record, decisions, state, payoffs, flags)


def _payoffs(state: HandState, evaluate) -> Optional[tuple[float, ...]]:
    live = [p for p in range(state.n_players) if not state.folded[p]]
    if len(live) > 1 and (len(state.board) < 5 or any(state.hole_cards[p] is None for p in live)):
        return None
    return state.payoffs(evaluate=evaluate)


def _odd_chip(state: HandState) -> float:
    """What the odd chip of a split pot may move: one chip, or a cent for fractional amounts."""
    return 1.0 if all(float(t).is_integer() for t in state.total_committed) else 0.01


def _compare_payoffs(record: HandRecord, ours: tuple[float, ...], state: HandState) -> None:
    logged = record.payoffs
    assert logged is not None
    if len(logged) != len(ours):
        raise _fail(record, f"payoffs for {counted(len(logged), 'position')}, {counted(len(ours), 'player')}")
    rake = max(0.0, -sum(logged))
    odd = _odd_chip(state)
    for p, (o, g) in enumerate(zip(ours, logged)):
        diff = o - g  # > 0: the log paid less than replay (rake, or the odd chip elsewhere)
        if not (-odd - 1e-6 <= diff <= rake + odd + 1e-6):
            raise _fail(record, f"payoffs do not match: the log says {list(logged)}, the replayed "
                                f"result is {list(ours)} (position {p})")


def _bound_payoffs(record: HandRecord, state: HandState) -> None:
    """The log's payoffs of a hand whose result cannot be replayed (a showdown without every
    hole card) must still be possible: no one loses more than they put in, a folded player
    wins nothing, no one wins more than the pots they can win, and no chips come from nowhere
    (rake may take some)."""
    logged = record.payoffs
    assert logged is not None
    n = state.n_players
    if len(logged) != n:
        raise _fail(record, f"payoffs for {counted(len(logged), 'position')}, {counted(n, 'player')}")
    put = state.total_committed
    can_win = [0.0] * n
    for chips, eligible in state.pots():
        for p in eligible:
            can_win[p] += chips
    slack = _odd_chip(state) + 1e-6
    for p, got in enumerate(logged):
        low, high = -put[p], can_win[p] - put[p]
        if not low - slack <= got <= high + slack:
            raise _fail(record, f"payoffs do not match: the log says {list(logged)}, but position {p} "
                                f"can win or lose only {low:g} to {high:+g} from a pot of {state.pot:g} "
                                f"(the showdown's cards are not all shown)")
    if sum(logged) > slack:
        raise _fail(record, f"payoffs do not match: the log's payoffs {list(logged)} add up to "
                            f"{sum(logged):+g}: chips won that no one lost")


def replay(record: HandRecord, **options) -> list[DecisionPoint]:
    """One :class:`DecisionPoint` per action of ``record`` (see :func:`replay_hand`)."""
    return replay_hand(record, **options).decisions


@dataclass
class ReplayedLogs:
    """Every hand of log files replayed, and what was not: iterate it for ``(record,
    decisions)`` pairs. It counts the ``hands`` read (those ``keep`` turned down included),
    lists hands that do not parse or replay in ``skipped`` and files not read in
    ``files_skipped``, and keeps both in ``issues`` in the order met (the first says why nothing
    was read: :meth:`nothing_read`). ``progress`` goes to :func:`cbr.logs.detect.read_logs`.

    >>> logs = ReplayedLogs(["../shared/data/logs/acpc/dealer_example_limit"])
    >>> sum(len(dps) for _, dps in logs), logs.hands, logs.skipped, logs.nothing_read()
    (25833, 2000, [], None)
    """

    paths: Sequence[str]
    log_format: Optional[str] = None
    progress: Optional[Callable[..., None]] = None
    keep: Optional[Callable[[HandRecord], bool]] = None
    hands: int = 0
    skipped: list[str] = field(default_factory=list)
    files_skipped: list[str] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[tuple[HandRecord, list[DecisionPoint]]]:
        from cbr.errors import CBRError
        from cbr.logs.detect import read_logs
        from cbr.logs.record import skipped_hand

        for item in read_logs(list(self.paths), self.log_format, self.progress):
            if not isinstance(item, HandRecord):
                (self.files_skipped if item.whole_file else self.skipped).append(str(item))
                self.issues.append(str(item))
                continue
            if self.keep is not None and not self.keep(item):
                self.hands += 1
                continue
            try:
                dps = replay(item)
            except CBRError as exc:
                said = str(skipped_hand(item, exc))  # as every command shows a skipped hand
                self.skipped.append(said)
                self.issues.append(said)
                continue
            self.hands += 1
            yield item, dps

    def nothing_read(self) -> Optional[str]:
        """None when a hand was read, else why not, as every command words it
        (:func:`cbr.logs.record.no_hand_read`)."""
        from cbr.logs.record import no_hand_read

        if self.hands:
            return None
        return no_hand_read(self.paths, self.issues[0] if self.issues else None, len(self.issues))
