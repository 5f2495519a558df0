"""Matches between policies: the dealer loop, duplicate replay and results with confidence intervals.

Seating: ``players[s]`` sits in *seat* ``s``. Positions in a hand are ACPC order (the
game definition's positions: heads-up ``holdem.limit.2p`` position 0 is the big blind,
with 3+ players position 0 is the small blind and ``n-1`` the button). The button moves
one seat per hand: position ``i`` of hand ``k`` is seat ``(i + k) % n``
(:func:`cbr.game.state.seats_for_hand`), so every seat takes every position once per
``n`` hands.

Cards: every deal shuffles a fresh deck with ``random.Random(f"cbr-deal:{seed}:{deal}")``;
position ``i`` gets cards ``2i, 2i+1`` of it, the board the next five. In duplicate mode
deal ``d`` is played ``n`` times in a row (hands ``d*n .. d*n+n-1``): the same cards per
position with the seats rotated, so each seat plays each deal's cards in every position
and card luck cancels. Bots see only their own hole cards.

Results are per seat: chips, small bets per hand (sb/h) and milli-big-blinds per hand
(mbb/h), each with the half-width of a 95% confidence interval (``1.96 * s / sqrt(m)``
over the ``m`` per-hand results, or over the per-deal averages in duplicate mode).
They are kept as running sums (:class:`RunningMean`: count, mean and sum of squared
deviations per seat, plus the current deal's sum), so a match needs no memory per hand;
``keep_payoffs=True`` also keeps every hand's payoffs. At most :data:`MAX_HANDS` hands.

>>> r = run_match(["call", "raise"], 40, seed=1, duplicate=True)
>>> r.hands, r.deals, round(sum(p.total for p in r.players), 6)
(40, 20, 0.0)
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from cbr.errors import GameError
from cbr.game.gamedef import GameDef
from cbr.game.spec import default_game
from cbr.game.state import HandState, seats_for_hand
from cbr.logs.record import HandRecord
from cbr.policies.base import Policy
from cbr.policies.spec import policy_from_spec
from cbr.stats import RunningMean

if TYPE_CHECKING:  # pragma: no cover
    from cbr.logs.writers import HandLogWriter
    from cbr.play.retention import Retainer

PROGRESS_EVERY = 50
#: Most hands one match plays (about a week of play on one core at the bots' speed).
MAX_HANDS = 1_000_000_000


@dataclass(frozen=True)
class PlayerResult:
    """One seat's result. ``*_ci`` are half-widths of 95% confidence intervals."""

    name: str
    policy: str
    hands: int
    total: float
    sb_per_hand: float
    sb_ci: float
    mbb_per_hand: float
    mbb_ci: float

    def to_dict(self) -> dict:
        out = dict(vars(self))
        for key in ("sb_ci", "mbb_ci"):
            if not math.isfinite(out[key]):
                out[key] = None
        return out


@dataclass(frozen=True)
class MatchResult:
    """What :func:`run_match` returns: one :class:`PlayerResult` per seat."""

    game: GameDef
    players: tuple[PlayerResult, ...]
    hands: int
    deals: int
    duplicate: bool
    seed: int
    hand_payoffs: tuple[tuple[float, ...], ...] = field(default=(), repr=False, compare=False)  # keep_payoffs=True
    retained: int = 0  # cases retained (retain=True)
    match_id: str = ""

    def __getitem__(self, name: str) -> PlayerResult:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(f"no player {name!r} in this match ({', '.join(p.name for p in self.players)})")

    def to_dict(self) -> dict:
        """Plain data (``--json``); per-hand payoffs left out."""
        return {
            "game": self.game.name, "hands": self.hands, "deals": self.deals,
            "duplicate": self.duplicate, "seed": self.seed,
            "players": [p.to_dict() for p in self.players],
            **({"retained": self.retained, "match_id": self.match_id} if self.match_id else {}),
        }


def seat_seed(seed: int, seat: int) -> int:
    """The seed of the bot at ``seat`` in a match seeded ``seed`` (the same in ``cbr match``,
    the ACPC dealer and the human table, so they play the same bots on the same deals).

    >>> seat_seed(0, 1), seat_seed(2, 0)
    (1, 2018)
    """
    return seed * 1009 + seat


def resolve_players(players: Sequence[str | Policy], seed: int, *, first_seat: int = 0) -> list[Policy]:
    """Policies for seats ``first_seat``, ``first_seat + 1``, ...: a spec is built with
    :func:`seat_seed`, a :class:`Policy` is used as it is."""
    out: list[Policy] = []
    for i, p in enumerate(players, start=first_seat):
        if isinstance(p, Policy):
            out.append(p)
        elif isinstance(p, str):
            out.append(policy_from_spec(p.strip(), seed=seat_seed(seed, i)))
        else:
            raise ValueError(f"player {i}: expected a policy name or a Policy, got {type(p).__name__}")
    return out


def seat_names(policies: Sequence[Policy]) -> list[str]:
    """One unique name per seat: the policy's name, numbered when it appears twice.

    >>> from cbr.policies.baseline import AlwaysCallPolicy as C, RandomPolicy as R
    >>> seat_names([C(), R(), C()])
    ['call-1', 'random', 'call-3']
    """
    return unique_names([p.name for p in policies])


def unique_names(names: Sequence[str]) -> list[str]:
    """Names numbered by seat where one appears twice.

    >>> unique_names(["remote", "ehs", "remote"])
    ['remote-1', 'ehs', 'remote-3']
    """
    return [f"{nm}-{i + 1}" if names.count(nm) > 1 else nm for i, nm in enumerate(names)]


def deal_cards(seed: int, deal: int, n_players: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Hole cards per position and the five board cards of deal ``deal`` (deterministic).

    >>> holes, board = deal_cards(0, 7, 2)
    >>> len(set(sum(holes, ()) + tuple(board)))
    9
    """
    deck = random.Random(f"cbr-deal:{seed}:{deal}").sample(range(52), 2 * n_players + 5)
    holes = [(deck[2 * i], deck[2 * i + 1]) for i in range(n_players)]
    return holes, deck[2 * n_players : 2 * n_players + 5]


_BOARD_STEPS = ((0, 3), (3, 4), (4, 5))


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
    """Play one hand; ``policies``/``names``/``rngs`` are indexed by *position*.

    Returns the full record (every hole card, as a dealer log shows them). ``decisions``:
    a list that receives every decision point with its action taken (for retention).
    """
    state = HandState(game, players=names, hole_cards=holes, hand_id=hand_id, source=source)
    while not state.is_over:
        if state.needs_board:
            lo, hi = _BOARD_STEPS[state.street]
            state.deal_board(board[lo:hi])
            continue
        pos = state.to_act
        dp = state.decision_point()          # carries the actor's hole cards only
        kind = policies[pos].act(dp, rngs[pos])
        if kind not in dp.legal:
            raise GameError(f"policy {names[pos]!r} chose {kind!r} where only {dp.legal!r} is legal "
                            f"(hand {hand_id}, history {state.history!r})")
        if decisions is not None:
            decisions.append(replace(dp, action=kind))
        state.act(kind)
    payoffs = state.payoffs()
    return HandRecord(
        source=source, line=0, hand_id=hand_id, game=game, players=tuple(names),
        hole_cards=tuple(tuple(h) for h in holes), board=state.board, actions=tuple(state.actions),
        payoffs=payoffs, format="match", extra={"betting": state.history},
    )


def seen_by(record: HandRecord, position: int) -> HandRecord:
    """The record as ``position`` may see it after the hand: its own cards and those shown
    at a showdown (:attr:`HandRecord.showdown`). Bots observe this in ``cbr match``, the ACPC
    dealer and the human table."""
    shown = record.showdown
    holes = tuple(h if p == position or p in shown else None for p, h in enumerate(record.hole_cards))
    return replace(record, hole_cards=holes, extra=dict(record.extra))


def run_match(
    players: Sequence[str | Policy],
    hands: int,
    *,
    game: GameDef | None = None,
    duplicate: bool = False,
    seed: int = 0,
    progress: Optional[Callable[[int], None]] = None,
    log: Optional["HandLogWriter"] = None,
    keep_payoffs: bool = False,
    retain: bool = False,
    retain_into: Optional[str] = None,
) -> MatchResult:
    """Play ``hands`` hands between 2..10 policies (names of ``cbr.policies`` plugins or
    :class:`Policy` objects) and return per-seat results.

    ``duplicate=True`` plays ``ceil(hands / n)`` deals, each ``n`` times with the seats
    rotated (so ``hands`` is rounded up to a multiple of ``n``). ``progress(k)`` is called
    with the number of hands finished since the previous call; ``log`` receives every
    hand's full :class:`HandRecord`. Policies named by string get ``seed=seat_seed(seed, seat)``.
    Results take constant memory; ``keep_payoffs=True`` also returns every hand's payoffs
    (``MatchResult.hand_payoffs``, memory per hand). ``retain=True``: the case-based bots
    keep every hand durably in their case base as it ends (:mod:`cbr.play.retention`; into a
    copy named ``retain_into``, created on first use); ``MatchResult.retained`` counts the
    cases kept; the retention log is compacted into parts when the match ends.
    Players named by string are policy specs (``NAME:KEY=VALUE:...``, :mod:`cbr.policies.spec`);
    the bots built from them are closed (``close()``, if they have one) when the match ends.
    Raises :class:`~cbr.policies.spec.PolicySpecError` (a ``ValueError``; for an unknown name
    also a :class:`~cbr.errors.PluginError`) for bad specs, :class:`~cbr.errors.GameError`
    (a ``ValueError``) for bad counts: 2..10 players, 1..:data:`MAX_HANDS` hands.
    """
    n = len(players)
    if not 2 <= n <= 10:
        raise GameError(f"a match seats 2 to 10 players, got {n}")
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
        raise GameError(f"hands must be a whole number from 1 to {MAX_HANDS:,}, got {hands!r}")
    policies = resolve_players(players, seed)
    try:
        retainers = []
        if retain or retain_into is not None:
            from cbr.play.retention import start_retention

            retainers = start_retention(policies, seat_names(policies), into=retain_into)
        try:
            result = _play_match(policies, hands, game, duplicate, seed, progress, log, keep_payoffs, retainers)
        finally:
            for r in retainers:
                r.close()
        if retainers:
            result = replace(result, retained=sum(r.retained for r in retainers), match_id=retainers[0].match_id)
        return result
    finally:  # the bots built here by name (a case-based bot keeps its case base open)
        for given, p in zip(players, policies):
            close = getattr(p, "close", None)
            if not isinstance(given, Policy) and callable(close):
                close()


def _play_match(policies: list[Policy], hands: int, game: GameDef | None, duplicate: bool, seed: int,
                progress: Optional[Callable[[int], None]], log: Optional["HandLogWriter"],
                keep_payoffs: bool, retainers: Sequence["Retainer"] = ()) -> MatchResult:
    """The dealer loop of :func:`run_match`, on resolved policies."""
    n = len(policies)
    game = game or default_game(n)
    if game.n_players != n:
        raise GameError(f"game {game.name!r} seats {game.n_players} players but {n} were given")
    names = seat_names(policies)
    for p in policies:
        p.reset()
    observers = [type(p).observe is not Policy.observe for p in policies]
    act_rngs = [random.Random(f"cbr-act:{seed}:{s}") for s in range(n)]
    deals = -(-hands // n) if duplicate else hands
    total_hands = deals * n if duplicate else hands

    totals = [0.0] * n                                # chips per seat (whole chips: exact sums)
    stats = [RunningMean() for _ in range(n)]         # per-hand results, or per-deal averages
    deal_sums = [0.0] * n                             # duplicate: the current deal's chips per seat
    kept: list[tuple[float, ...]] = []
    pending = 0
    for k in range(total_hands):
        deal = k // n if duplicate else k
        holes, board = deal_cards(seed, deal, n)
        seats = seats_for_hand(range(n), k)           # position -> seat
        decisions: Optional[list] = [] if retainers else None
        record = play_hand(game, [policies[s] for s in seats], [names[s] for s in seats],
                           [act_rngs[s] for s in seats], holes, board, hand_id=str(k), decisions=decisions)
        for r in retainers:
            r.hand(record, seats, decisions)
        won = [0.0] * n
        for pos, s in enumerate(seats):
            won[s] = float(record.payoffs[pos])  # type: ignore[index]
            if observers[s]:
                policies[s].observe(seen_by(record, pos), pos)
        for s in range(n):
            totals[s] += won[s]
            if duplicate:
                deal_sums[s] += won[s]
            else:
                stats[s].add(won[s])
        if duplicate and k % n == n - 1:
            for s in range(n):
                stats[s].add(deal_sums[s] / n)
                deal_sums[s] = 0.0
        if keep_payoffs:
            kept.append(tuple(won))
        if log is not None:
            log.write(record)
        pending += 1
        if progress is not None and (pending >= PROGRESS_EVERY or k == total_hands - 1):
            progress(pending)
            pending = 0

    results = []
    for s in range(n):
        mean, ci = stats[s].mean, stats[s].ci()
        sb, bb = game.small_bet, game.big_blind
        results.append(PlayerResult(
            name=names[s], policy=policies[s].name, hands=total_hands, total=totals[s],
            sb_per_hand=mean / sb, sb_ci=ci / sb, mbb_per_hand=1000.0 * mean / bb, mbb_ci=1000.0 * ci / bb,
        ))
    per_hand = tuple(kept)
    return MatchResult(game, tuple(results), total_hands, deals, duplicate, seed, per_hand)
