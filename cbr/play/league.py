"""Leagues (``cbr league``): every pairing of a set of bots plays a duplicate heads-up match.

A *round-robin* plays every pair of the bots once; a *gauntlet* plays one bot (the hero)
against each of the others. Each pairing is :func:`cbr.play.match.run_match` with
``duplicate=True`` (every deal played twice, seats swapped, so card luck cancels), and its
result is the first bot's sb/h with a 95% confidence interval. Pairing ``i`` (in the order of
:func:`pairings_of`) deals from seed ``seed + i``: the pairings are independent and the
league is the same whatever runs it (one process, worker processes, a Dask cluster).

The standings rank the bots by their mean result over their pairings; the half-width of
that mean is ``sqrt(sum h_i^2) / m`` over the ``m`` pairings' half-widths ``h_i``
(independent estimates).

A league stopped by ``KeyboardInterrupt`` (Ctrl-C; ``cbr`` turns SIGTERM into one) keeps the
pairings finished: the exception carries their :class:`LeagueResult`, marked ``interrupted``
(:func:`interrupted_league`).

>>> r = run_league(["call", "raise", "ehs"], 20)
>>> [(p.a, p.b) for p in r.pairings]
[('call', 'raise'), ('call', 'ehs'), ('raise', 'ehs')]
>>> [s.bot for s in r.standings()][0]
'ehs'
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from cbr.errors import CBRError, ConfigError, GameError

__all__ = ["Pairing", "Standing", "LeagueResult", "pairings_of", "play_pairing", "run_league", "interrupted_league"]


@dataclass(frozen=True)
class Pairing:
    """One pairing's duplicate match: ``a``'s result against ``b`` in small bets (and milli
    big blinds) per hand, with 95% half-widths; ``b``'s is its negative."""

    a: str
    b: str
    hands: int
    seed: int
    sb_per_hand: float
    sb_ci: float
    mbb_per_hand: float
    mbb_ci: float

    def to_dict(self) -> dict[str, Any]:
        """Plain data; the rates as :func:`cbr.play.match.json_rate` gives them (12 significant
        digits, None for an infinite CI), as ``cbr match --json`` prints them."""
        from cbr.play.match import json_rate

        out = dict(vars(self))
        for key in ("sb_per_hand", "sb_ci", "mbb_per_hand", "mbb_ci"):
            out[key] = json_rate(out[key])
        return out


@dataclass(frozen=True)
class Standing:
    """A bot's place in the standings: its mean sb/h over its pairings and the half-width of
    that mean's 95% interval; ``won``/``lost``: pairings whose interval lies above / below 0."""

    bot: str
    pairings: int
    sb_per_hand: float
    sb_ci: float
    won: int
    lost: int

    def to_dict(self) -> dict[str, Any]:
        from cbr.play.match import json_rate

        out = dict(vars(self))
        for key in ("sb_per_hand", "sb_ci"):
            out[key] = json_rate(out[key])
        return out


@dataclass
class LeagueResult:
    """The pairings played (in the order of :func:`pairings_of`) and what they make."""

    bots: tuple[str, ...]
    hero: Optional[str]
    hands: int                   # per pairing, as played (as asked, rounded up to whole deals of 2)
    seed: int
    planned: int                 # pairings in the league
    pairings: list[Pairing] = field(default_factory=list)
    interrupted: bool = False

    @property
    def mode(self) -> str:
        return "gauntlet" if self.hero else "round-robin"

    def standings(self) -> list[Standing]:
        """Every bot with at least one pairing played, best mean first (then by name)."""
        results: dict[str, list[tuple[float, float]]] = {b: [] for b in self.bots}
        for p in self.pairings:
            results[p.a].append((p.sb_per_hand, p.sb_ci))
            results[p.b].append((-p.sb_per_hand, p.sb_ci))
        out = []
        for bot, rs in results.items():
            if not rs:
                continue
            m = len(rs)
            mean = math.fsum(v for v, _ in rs) / m
            half = math.sqrt(math.fsum(h * h for _, h in rs)) / m
            out.append(Standing(bot, m, mean, half, sum(1 for v, h in rs if v - h > 0),
                                sum(1 for v, h in rs if v + h < 0)))
        return sorted(out, key=lambda s: (-s.sb_per_hand, s.bot))

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "bots": list(self.bots), **({"hero": self.hero} if self.hero else {}),
                "hands_per_pairing": self.hands, "seed": self.seed, "pairings_planned": self.planned,
                "pairings_played": len(self.pairings), "pairings": [p.to_dict() for p in self.pairings],
                "standings": [s.to_dict() for s in self.standings()],
                **({"interrupted": True} if self.interrupted else {})}


def pairings_of(bots: Sequence[str], hero: Optional[str] = None) -> list[tuple[str, str]]:
    """The pairings of a round-robin of ``bots`` (every pair once, in the bots' order), or of
    a gauntlet of ``hero`` against each of ``bots``.

    >>> pairings_of(["a", "b", "c"]), pairings_of(["b", "c"], hero="a")
    ([('a', 'b'), ('a', 'c'), ('b', 'c')], [('a', 'b'), ('a', 'c')])
    """
    if hero is not None:
        return [(hero, b) for b in bots]
    return [(a, b) for i, a in enumerate(bots) for b in bots[i + 1:]]


def play_pairing(a: str, b: str, hands: int, seed: int, progress: Optional[Callable[[int], None]] = None) -> Pairing:
    """One pairing: a duplicate heads-up match of ``hands`` hands between policy specs ``a`` and
    ``b``; ``progress(n)`` as :func:`~cbr.play.match.run_match` calls it."""
    from cbr.play.match import run_match

    r = run_match([a, b], hands, duplicate=True, seed=seed, progress=progress)
    p = r.players[0]
    return Pairing(a, b, r.hands, seed, p.sb_per_hand, p.sb_ci, p.mbb_per_hand, p.mbb_ci)


def _check(bots: Sequence[str], hero: Optional[str], hands: int) -> None:
    from cbr.play.match import MAX_HANDS
    from cbr.policies.spec import policy_from_spec

    everyone = [*bots, *([hero] if hero is not None else [])]
    if len(set(everyone)) != len(everyone):
        seen: set[str] = set()
        twice = [b for b in everyone if b in seen or seen.add(b)]  # type: ignore[func-returns-value]
        raise GameError(f"a bot plays once in a league: {', '.join(dict.fromkeys(twice))} given twice")
    if len(everyone) < 2:
        raise GameError(f"a league needs at least two bots, got {len(everyone)}")
    if isinstance(hands, bool) or not isinstance(hands, int) or not 2 <= hands <= MAX_HANDS:
        raise GameError(f"hands per pairing must be a whole number from 2 to {MAX_HANDS:,}, got {hands!r}")
    for spec in everyone:  # a bad name or option now, not in a worker
        policy_from_spec(spec)


_HANDS_DONE: Any = None  # in a worker process: the queue its hands played go to (the parent's progress)


def _init_worker(parent: int, hands_done: Any) -> None:
    """A worker process: dies with the league's process; Ctrl-C and SIGTERM are the parent's to
    handle (:func:`~cbr.build.pools.worker_started`); the hands it plays are counted into
    ``hands_done`` (a queue the parent reads). Raises nothing: what failed is raised by the
    worker's pairings (:func:`~cbr.build.pools.start_step`)."""
    global _HANDS_DONE
    from cbr.build.pools import worker_started

    worker_started(parent)
    _HANDS_DONE = hands_done


def _worker_pairing(a: str, b: str, hands: int, seed: int) -> Pairing:
    """:func:`play_pairing` in a worker process, its hands counted as they are played."""
    return play_pairing(a, b, hands, seed, progress=_HANDS_DONE.put if _HANDS_DONE is not None else None)


def league_processes(pairings: int, workers: int, scheduler: Optional[str], dask_workers: int) -> int:
    """How many processes may play the ``pairings`` at once: ``workers`` (no more than the
    pairings), ``dask_workers`` on a local Dask cluster, and 2 (more than one) on a Dask scheduler
    elsewhere, whose workers are not known here.

    >>> league_processes(3, 8, None, 2), league_processes(1, 8, None, 2), league_processes(3, 1, "local", 1)
    (3, 1, 1)
    >>> league_processes(3, 1, "tcp://host:8786", 2)
    2
    """
    if scheduler is None:
        return min(workers, pairings)
    return min(dask_workers, pairings) if scheduler == "local" else min(2, pairings)


def run_league(
    bots: Sequence[str],
    hands: int,
    *,
    hero: Optional[str] = None,
    seed: int = 0,
    workers: int = 1,
    scheduler: Optional[str] = None,
    dask_workers: int = 2,
    progress: Optional[Callable[..., None]] = None,
) -> LeagueResult:
    """Play every pairing of ``bots`` (policy specs; with ``hero``, a gauntlet of ``hero``
    against each of them), each a duplicate match of ``hands`` hands.

    ``workers`` > 1 plays pairings in that many worker processes (they die with this process);
    ``scheduler`` (a Dask scheduler's address, or ``"local"`` for a local cluster of
    ``dask_workers`` processes; the ``dask`` extra) plays them as Dask tasks instead. The
    result is the same either way. ``progress(n, total=None)`` is called with the total hands
    first, then with the hands played since its last call (on Dask: each pairing's hands as
    it ends). Raises
    :class:`~cbr.errors.GameError` for bots given twice, fewer than two bots or a bad count,
    :class:`~cbr.policies.spec.PolicySpecError` for a bad spec, :class:`~cbr.errors.ConfigError`
    for a bot playing from a model store (``store=PATH``) in more than one process
    (:func:`league_processes`, :func:`~cbr.policies.spec.store_clash`).
    """
    from cbr.policies.spec import store_clash

    bots = list(bots)
    _check(bots, hero, hands)
    pairs = pairings_of(bots, hero)
    clash = store_clash(([hero] if hero else []) + bots, league_processes(len(pairs), workers, scheduler, dask_workers))
    if clash:  # the second worker would stop the league mid-way: "model store P is in use by another process"
        raise ConfigError(f"{clash}: play this league in one process (workers=1, no scheduler)", field="workers")
    per = hands + (hands % 2)  # a heads-up duplicate match plays whole deals of two hands
    result = LeagueResult(tuple(([hero] if hero else []) + bots), hero, per, seed, len(pairs))
    if progress is not None:
        progress(0, total=per * len(pairs))
    done: dict[int, Pairing] = {}

    def finish(i: int, p: Pairing) -> None:
        done[i] = p

    def finish_counted(i: int, p: Pairing) -> None:  # Dask: the hands are counted when the pairing ends
        done[i] = p
        if progress is not None:
            progress(p.hands)

    try:
        if scheduler is not None:
            _on_dask(pairs, hands, seed, scheduler, dask_workers, finish_counted)
        elif workers > 1 and len(pairs) > 1:
            _in_processes(pairs, hands, seed, min(workers, len(pairs)), finish, progress)
        else:
            for i, (a, b) in enumerate(pairs):
                finish(i, play_pairing(a, b, hands, seed + i, progress=progress))
    except KeyboardInterrupt as exc:
        result.pairings = [done[i] for i in sorted(done)]
        result.interrupted = True
        exc.league_result = result  # type: ignore[attr-defined]
        raise
    result.pairings = [done[i] for i in sorted(done)]
    return result


def _in_processes(pairs: Sequence[tuple[str, str]], hands: int, seed: int, workers: int,
                  finish: Callable[[int, Pairing], None], progress: Optional[Callable[..., None]]) -> None:
    import queue
    from concurrent.futures.process import BrokenProcessPool

    from cbr.build.pools import WorkerPool, first_done, pool_context, stop_pool, workers_starting

    context = pool_context()
    hands_done = context.Queue()

    counted = [0, 0]  # hands reported by the workers, hands of the pairings finished

    def count(wait_for_all: bool = False) -> None:
        """Pass on the hands the workers reported; at the end, wait (briefly) for the last reports
        still in the queue's pipe, so the bar ends at the total."""
        while True:
            try:
                n = hands_done.get(timeout=1.0) if wait_for_all and counted[0] < counted[1] else hands_done.get_nowait()
            except queue.Empty:
                return
            counted[0] += n
            if progress is not None:
                progress(n)

    pool = WorkerPool(workers, mp_context=context, initializer=_init_worker,
                      initargs=(os.getpid(), hands_done))
    try:
        with workers_starting(context.get_start_method()):
            pending = {pool.submit(_worker_pairing, a, b, hands, seed + i): i for i, (a, b) in enumerate(pairs)}
        while pending:
            finished = first_done(pending, pool, timeout=0.25)
            count()
            for future in finished:
                pairing = future.result()
                counted[1] += pairing.hands
                finish(pending.pop(future), pairing)
        count(wait_for_all=True)
    except BrokenProcessPool as exc:
        stop_pool(pool)
        raise CBRError(f"a worker process of the league died ({exc}); killed from outside, or out of memory?") from None
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _on_dask(pairs: Sequence[tuple[str, str]], hands: int, seed: int, scheduler: str, dask_workers: int,
             finish: Callable[[int, Pairing], None]) -> None:
    import uuid

    from cbr.build.on_dask import arm_worker, dask_client, kill_workers

    client, cluster = dask_client(scheduler, dask_workers, what="a league")
    parent = os.getpid() if cluster is not None else None
    finished = False
    futures: dict[Any, int] = {}
    try:
        from distributed import KilledWorker, as_completed

        if parent is not None:
            client.run(arm_worker, parent)
        run = uuid.uuid4().hex  # task keys unique to this league on a shared scheduler
        futures = {client.submit(play_pairing, a, b, hands, seed + i, key=f"cbr-pairing-{i}-{run}", pure=False): i
                   for i, (a, b) in enumerate(pairs)}
        for future in as_completed(list(futures)):
            try:
                pairing = future.result()
            except KilledWorker as exc:
                raise CBRError(f"the Dask workers playing a pairing died too often ({exc}); out of memory?") from None
            finish(futures[future], pairing)
        finished = True
    finally:
        if cluster is not None and not finished:
            kill_workers(cluster)
        for future in futures:
            future.cancel()
        client.close()
        if cluster is not None:
            cluster.close()


def interrupted_league(exc: BaseException) -> Optional[LeagueResult]:
    """The pairings finished when ``exc`` (a ``KeyboardInterrupt``) stopped :func:`run_league`,
    marked ``interrupted``; None when ``exc`` did not come from a league.

    >>> interrupted_league(KeyboardInterrupt()) is None
    True
    """
    result = getattr(exc, "league_result", None)
    return result if isinstance(result, LeagueResult) else None
