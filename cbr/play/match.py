"""Matches between policies: duplicate replay and results with confidence intervals, played
at one :class:`~cbr.play.table.Table` (the table loop the ACPC dealer and the human table use).

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

A match stopped by ``KeyboardInterrupt`` (Ctrl-C; ``cbr`` turns SIGTERM into one too) still
has a result: the exception leaves :func:`run_match` carrying the result of the hands
finished (whole deals in duplicate mode), marked ``interrupted`` (:func:`interrupted_result`).

>>> r = run_match(["call", "raise"], 40, seed=1, duplicate=True)
>>> r.hands, r.deals, round(sum(p.total for p in r.players), 6)
(40, 20, 0.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from cbr.errors import GameError, counted
from cbr.game.gamedef import GameDef
from cbr.game.spec import default_game
from cbr.play.table import (
    MAX_HANDS,
    PolicySeat,
    Table,
    act_rng,
    check_seats,
    deal_cards,
    expert_choices,
    play_hand,
    resolve_players,
    seat_names,
    seat_refusal,
    seat_seed,
    seen_by,
    unique_names,
)
from cbr.policies.base import Policy
from cbr.stats import RunningMean

if TYPE_CHECKING:  # pragma: no cover
    from cbr.logs.output import HandLogWriter
    from cbr.play.retention import Retainer

__all__ = ["MAX_HANDS", "PROGRESS_EVERY", "MatchResult", "PlayerResult", "run_match", "interrupted_result", "seat_refusal",
           # the table's helpers, long imported from here
           "deal_cards", "play_hand", "resolve_players", "seat_names", "seat_seed", "seen_by", "unique_names"]

PROGRESS_EVERY = 50


def json_rate(x: float) -> Optional[float]:
    """A rate or a CI's half-width for JSON: 12 significant digits, so a sum's float noise does
    not show (``0.425``, not ``0.4249999999999998``); None where it is not finite.

    >>> json_rate(1.2100000000000004), json_rate(math.inf)
    (1.21, None)
    """
    return float(f"{x:.12g}") if math.isfinite(x) else None


@dataclass(frozen=True)
class PlayerResult:
    """One seat's result: ``policy`` is the seat's policy spec as given (``cbr:preset=casper``),
    or the policy's name when it was given as an object. ``*_ci`` are half-widths of 95%
    confidence intervals. ``experts``: for an adaptive bot (plain ``cbr``, ``adapt``), the experts
    it chose, in the order they began (its :attr:`~cbr.policies.adaptive.AdaptivePolicy.expert_choices`);
    empty for any other bot."""

    name: str
    policy: str
    hands: int
    total: float
    sb_per_hand: float
    sb_ci: float
    mbb_per_hand: float
    mbb_ci: float
    experts: tuple = ()

    def to_dict(self) -> dict:
        """Plain data; the rates to 12 significant digits, so a sum's float noise does not show
        (``0.425``, not ``0.4249999999999998``); an infinite CI is None; ``experts`` only for a
        bot that chose experts, each a dict (:meth:`~cbr.policies.adaptive.ExpertChoice.to_dict`).

        >>> d = PlayerResult("a", "call", 40, 170.0, 0.4249999999999998, math.inf, 424.99999999999983, 3.5).to_dict()
        >>> d["sb_per_hand"], d["sb_ci"], d["mbb_per_hand"], d["mbb_ci"]
        (0.425, None, 425.0, 3.5)
        """
        out = dict(vars(self))
        if self.experts:
            out["experts"] = [c.to_dict() for c in self.experts]
        else:
            del out["experts"]
        for key in ("sb_per_hand", "sb_ci", "mbb_per_hand", "mbb_ci"):
            out[key] = json_rate(out[key])
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
    retain_skipped: int = 0  # decisions the retention gate skipped as near-duplicates (retain_gate)
    memory_changed: int = 0  # decisions the adaptive bots' table memories changed (retention that adapts)
    match_id: str = ""
    interrupted: bool = False  # stopped by Ctrl-C or SIGTERM: the hands (whole deals) finished before

    def __getitem__(self, name: str) -> PlayerResult:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(f"no player {name!r} in this match ({', '.join(p.name for p in self.players)})")

    def curves(self) -> dict[str, tuple[list[float], list[float]]]:
        """Each seat's learning curve from ``hand_payoffs`` (``keep_payoffs=True``): its running
        total in small bets after each hand (after each deal in duplicate mode, each deal's
        total averaged over its ``n`` rotations) and the half-width of the 95% confidence
        interval of that total (``count * `` the half-width of the running mean, ``inf`` before
        two points). Empty without kept payoffs.

        >>> r = run_match(["call", "raise"], 4, seed=1, keep_payoffs=True)
        >>> total, half = r.curves()["raise"]
        >>> len(total), total[-1] == r["raise"].total / r.game.small_bet, math.isinf(half[0])
        (4, True, True)
        """
        n = len(self.players)
        step = n if self.duplicate else 1
        sb = self.game.small_bet
        out: dict[str, tuple[list[float], list[float]]] = {}
        if not self.hand_payoffs:
            return out
        for s, p in enumerate(self.players):
            acc = RunningMean()
            totals: list[float] = []
            halves: list[float] = []
            total = 0.0
            for start in range(0, len(self.hand_payoffs) - step + 1, step):
                unit = sum(self.hand_payoffs[k][s] for k in range(start, start + step)) / sb
                total += unit
                acc.add(unit / step)
                totals.append(total)
                halves.append(acc.count * step * acc.ci())
            out[p.name] = (totals, halves)
        return out

    def to_dict(self) -> dict:
        """Plain data (``--json``); per-hand payoffs left out."""
        return {
            "game": self.game.name, "hands": self.hands, "deals": self.deals,
            "duplicate": self.duplicate, "seed": self.seed,
            "players": [p.to_dict() for p in self.players],
            **({"retained": self.retained, "match_id": self.match_id} if self.match_id else {}),
            **({"retain_skipped": self.retain_skipped} if self.retain_skipped else {}),
            **({"memory_changed": self.memory_changed} if self.match_id else {}),
            **({"interrupted": True} if self.interrupted else {}),
        }


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
    progress_every: int = PROGRESS_EVERY,
    retain_gate: Optional[float] = None,
) -> MatchResult:
    """Play ``hands`` hands between 2..10 policies (names of ``cbr.policies`` plugins or
    :class:`Policy` objects) and return per-seat results.

    ``duplicate=True`` plays ``ceil(hands / n)`` deals, each ``n`` times with the seats
    rotated (so ``hands`` is rounded up to a multiple of ``n``). ``progress(k)`` is called
    with the number of hands finished since the previous call (every ``progress_every`` hands,
    and at the end); ``log`` receives every
    hand's full :class:`HandRecord`. Policies named by string get ``seed=seat_seed(seed, seat)``.
    Results take constant memory; ``keep_payoffs=True`` also returns every hand's payoffs
    (``MatchResult.hand_payoffs``, memory per hand). ``retain=True``: the case-based bots
    keep every hand durably in their case base as it ends (:mod:`cbr.play.retention`; into a
    copy named ``retain_into``, created on first use); ``MatchResult.retained`` counts the
    cases kept; the retention log is compacted into parts when the match ends.
    ``retain_gate``: skip retaining a decision when the case base holds a case of the same
    action at least that similar (:class:`~cbr.play.retention.Retainer`; None keeps every one).
    Players named by string are policy specs (``NAME:KEY=VALUE:...``, :mod:`cbr.policies.spec`);
    the bots built from them are closed (``close()``, if they have one) when the match ends.
    Raises :class:`~cbr.policies.spec.PolicySpecError` (a ``ValueError``; for an unknown name
    also a :class:`~cbr.errors.PluginError`) for bad specs, :class:`~cbr.errors.GameError`
    (a ``ValueError``) for bad counts: 2..10 players, 1..:data:`MAX_HANDS` hands, and for a
    bot that cannot play at a table of that many (:func:`seat_refusal`), before any hand.
    """
    n = len(players)
    if not 2 <= n <= 10:
        raise GameError(f"a match seats 2 to 10 players, got {n}")
    if isinstance(hands, bool) or not isinstance(hands, int) or not 1 <= hands <= MAX_HANDS:
        raise GameError(f"hands must be a whole number from 1 to {MAX_HANDS:,}, got {hands!r}")
    policies = resolve_players(players, seed)
    try:
        check_seats(policies, n)  # before any hand: the cfr bot failed at its first decision
        retainers = []
        if retain or retain_into is not None:
            from cbr.play.retention import start_retention

            retainers = start_retention(policies, seat_names(policies), into=retain_into, gate=retain_gate)
        try:
            result = _play_match(policies, hands, game, duplicate, seed, progress, log, keep_payoffs, retainers,
                                 progress_every)
        except KeyboardInterrupt as exc:
            partial = interrupted_result(exc)
            if partial is not None and retainers:
                exc.match_result = _with_retained(partial, retainers, policies)  # type: ignore[attr-defined]
            raise
        finally:
            for r in retainers:
                r.close()
        return _with_retained(result, retainers, policies)
    finally:  # the bots built here by name (a case-based bot keeps its case base open)
        for given, p in zip(players, policies):
            close = getattr(p, "close", None)
            if not isinstance(given, Policy) and callable(close):
                close()


def _with_retained(result: MatchResult, retainers: Sequence["Retainer"], policies: Sequence[Policy] = ()) -> MatchResult:
    if not retainers:
        return result
    return replace(result, retained=sum(r.retained for r in retainers), match_id=retainers[0].match_id,
                   retain_skipped=sum(r.skipped for r in retainers),
                   memory_changed=sum(getattr(p, "memory_changed", 0) for p in policies))


def _play_match(policies: list[Policy], hands: int, game: GameDef | None, duplicate: bool, seed: int,
                progress: Optional[Callable[[int], None]], log: Optional["HandLogWriter"],
                keep_payoffs: bool, retainers: Sequence["Retainer"] = (),
                progress_every: int = PROGRESS_EVERY) -> MatchResult:
    """The match loop of :func:`run_match` on resolved policies, at one :class:`~cbr.play.table.Table`.

    A ``KeyboardInterrupt`` leaves with ``match_result`` set on it: the result of the hands
    finished (of the deals finished, in duplicate mode), marked ``interrupted``.
    """
    n = len(policies)
    game = game or default_game(n)
    if game.n_players != n:
        raise GameError(f"game {game.name!r} seats {counted(game.n_players, 'player')} but {n} were given")
    names = seat_names(policies)
    for p in policies:
        p.reset()
    table = Table(game, [PolicySeat(p, act_rng(seed, s)) for s, p in enumerate(policies)], names, seed=seed,
                  retainers=retainers, log=log)
    deals = -(-hands // n) if duplicate else hands
    total_hands = deals * n if duplicate else hands

    totals = [0.0] * n                                # chips per seat (whole chips: exact sums)
    stats = [RunningMean() for _ in range(n)]         # per-hand results, or per-deal averages
    deal_sums = [0.0] * n                             # duplicate: the current deal's chips per seat
    kept: list[tuple[float, ...]] = []
    pending = 0
    # What an interruption reports: (hands, totals, stats) after the last hand (whole deal)
    # fully counted, rebound in one step, so a Ctrl-C in the middle of the counting is safe.
    so_far: tuple[int, list[float], list[tuple[int, float, float]], list[tuple]] = (
        0, list(totals), [(0, 0.0, 0.0)] * n, [() for _ in range(n)])
    try:
        for k in range(total_hands):
            won = table.play(k, k // n if duplicate else k).won
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
            if not duplicate or k % n == n - 1:
                so_far = (k + 1, totals.copy(), [(m.count, m.mean, m.m2) for m in stats], expert_choices(policies))
            pending += 1
            if progress is not None and (pending >= progress_every or k == total_hands - 1):
                progress(pending)
                pending = 0
    except KeyboardInterrupt as exc:
        done, done_totals, done_stats, done_choices = so_far
        partial = []
        for count, mean, m2 in done_stats:
            m = RunningMean()
            m.count, m.mean, m.m2 = count, mean, m2
            partial.append(m)
        exc.match_result = MatchResult(  # type: ignore[attr-defined]
            game, _players(game, names, policies, done, done_totals, partial, done_choices), done,
            done // n if duplicate else done, duplicate, seed, tuple(kept[:done]), interrupted=True)
        raise
    return MatchResult(game, _players(game, names, policies, total_hands, totals, stats, expert_choices(policies)),
                       total_hands, deals, duplicate, seed, tuple(kept))


def _players(game: GameDef, names: Sequence[str], policies: Sequence[Policy], hands: int, totals: Sequence[float],
             stats: Sequence[RunningMean], choices: Sequence[tuple] = ()) -> tuple[PlayerResult, ...]:
    """Each seat's :class:`PlayerResult` from its chips and its running mean."""
    sb, bb = game.small_bet, game.big_blind
    out = []
    for s, m in enumerate(stats):
        mean, ci = m.mean, m.ci()
        out.append(PlayerResult(
            name=names[s], policy=getattr(policies[s], "spec", policies[s].name), hands=hands, total=totals[s],
            sb_per_hand=mean / sb, sb_ci=ci / sb, mbb_per_hand=1000.0 * mean / bb, mbb_ci=1000.0 * ci / bb,
            experts=tuple(choices[s]) if choices else (),
        ))
    return tuple(out)


def interrupted_result(exc: BaseException) -> Optional[MatchResult]:
    """The result :func:`run_match` had when ``exc`` (a ``KeyboardInterrupt``: Ctrl-C, or a
    SIGTERM the caller turned into one) stopped it: the hands finished (whole deals in
    duplicate mode), marked ``interrupted``; None when ``exc`` did not come from a match.

    >>> interrupted_result(KeyboardInterrupt()) is None
    True
    """
    result = getattr(exc, "match_result", None)
    return result if isinstance(result, MatchResult) else None
