"""Per-player statistics of logs (``cbr logs stats``): the numbers a player tracker shows.

Every hand is replayed through the rules engine (:func:`cbr.logs.replay.replay_hand`), as
``cbr logs inspect`` does; a hand the engine rejects is skipped (listed in ``skipped``).
For each player name, over the hands the player was dealt into:

- ``vpip``: the share of hands in which the player put money in the pot voluntarily pre-flop
  (a call of a bet, the small blind's completion, or a raise; the big blind's check is not);
- ``pfr``: the share of hands with a pre-flop bet or raise;
- ``aggression``: the aggression factor after the flop, (bets + raises) / calls (a check is
  neither; None without a call);
- ``wtsd``: went to showdown, the share of the hands in which the player saw the flop that
  ended in a showdown with the player in it; ``wsd``: won at showdown, the share of those
  showdowns in which the player won chips;
- ``sb_per_hand`` and ``sb_ci``: the mean result in small bets per hand and the half-width
  of its 95% confidence interval (:func:`cbr.stats.mean_ci`), over the hands whose result
  is known (the log's payoffs, or the replay's); ``cumulative`` keeps the running sum of
  those results, hand by hand, for a plot of each player's result.

>>> report = log_stats(["../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log"])
>>> p1 = report["p1"]
>>> p1.hands, round(p1.vpip, 3), round(p1.pfr, 3)
(1000, 0.795, 0.487)
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from cbr.errors import CBRError
from cbr.logs.detect import PathLike, Progress, parse_source, scan_logs
from cbr.logs.record import HandRecord, ParseIssue, skipped_hand
from cbr.logs.source import DEFAULT_MAX_FILE_SIZE, is_decoding_note
from cbr.stats import mean_ci

__all__ = ["PlayerStats", "StatsReport", "log_stats", "hand_counts"]


@dataclass
class PlayerStats:
    """One player's counts over the logs read, and the statistics made of them (properties)."""

    name: str
    hands: int = 0
    vpip_hands: int = 0
    pfr_hands: int = 0
    postflop_aggressive: int = 0    # bets and raises on the flop, turn and river
    postflop_calls: int = 0         # calls (of a bet) on the flop, turn and river
    saw_flop: int = 0
    showdowns: int = 0
    showdowns_won: int = 0
    results: list[float] = field(default_factory=list, repr=False)  # small bets per hand, results known

    @staticmethod
    def _share(part: int, whole: int) -> Optional[float]:
        return part / whole if whole else None

    @property
    def vpip(self) -> Optional[float]:
        return self._share(self.vpip_hands, self.hands)

    @property
    def pfr(self) -> Optional[float]:
        return self._share(self.pfr_hands, self.hands)

    @property
    def aggression(self) -> Optional[float]:
        """(bets + raises) / calls after the flop; None with no call."""
        return self._share(self.postflop_aggressive, self.postflop_calls)

    @property
    def wtsd(self) -> Optional[float]:
        return self._share(self.showdowns, self.saw_flop)

    @property
    def wsd(self) -> Optional[float]:
        return self._share(self.showdowns_won, self.showdowns)

    @property
    def hands_with_result(self) -> int:
        return len(self.results)

    @property
    def sb_per_hand(self) -> Optional[float]:
        return mean_ci(self.results)[0] if self.results else None

    @property
    def sb_ci(self) -> Optional[float]:
        """Half-width of the 95% confidence interval of :attr:`sb_per_hand` (None below 2 results)."""
        half = mean_ci(self.results)[1] if self.results else math.inf
        return half if math.isfinite(half) else None

    def cumulative(self) -> list[float]:
        """The running total of the player's results, in small bets, hand by hand."""
        out, total = [], 0.0
        for r in self.results:
            total += r
            out.append(total)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain data (``--json``): the counts and the statistics (None where undefined)."""
        return {"player": self.name, "hands": self.hands, "vpip": self.vpip, "pfr": self.pfr,
                "aggression": self.aggression, "wtsd": self.wtsd, "wsd": self.wsd,
                "sb_per_hand": self.sb_per_hand, "sb_ci": self.sb_ci, "hands_with_result": self.hands_with_result,
                "counts": {"vpip": self.vpip_hands, "pfr": self.pfr_hands,
                           "postflop_bets_raises": self.postflop_aggressive, "postflop_calls": self.postflop_calls,
                           "saw_flop": self.saw_flop, "showdowns": self.showdowns,
                           "showdowns_won": self.showdowns_won}}


@dataclass
class StatsReport:
    """What :func:`log_stats` found: the players (most hands first), hands read and skipped."""

    players: dict[str, PlayerStats] = field(default_factory=dict)
    sources: int = 0
    hands_read: int = 0
    skipped: list[ParseIssue] = field(default_factory=list)
    games: dict[str, int] = field(default_factory=dict)  # "limit" / "no-limit" -> hands read

    @property
    def hands_skipped(self) -> int:
        """Hands skipped (a file not read is not a hand: :attr:`files_not_read`)."""
        return sum(1 for i in self.skipped if i.hand_skipped)

    @property
    def lines_skipped(self) -> int:
        """Lines that are no hand at all (text a parser cannot take for one): not hands skipped."""
        return sum(1 for i in self.skipped if i.not_a_hand and not i.whole_file)

    @property
    def files_not_read(self) -> int:
        """Files (or folders) not read at all: too large, not a log, unreadable."""
        return sum(1 for i in self.skipped if i.whole_file)

    @property
    def mixed(self) -> bool:
        """Whether limit and no-limit hands were both read (their sb/h mix bets of a fixed size with
        the big blind of a no-limit table)."""
        return len(self.games) > 1

    def __getitem__(self, name: str) -> PlayerStats:
        try:
            return self.players[name]
        except KeyError:
            raise KeyError(f"no player {name!r} in these logs") from None

    def ranked(self) -> list[PlayerStats]:
        """The players, most hands first (then by name)."""
        return sorted(self.players.values(), key=lambda p: (-p.hands, p.name))

    def to_dict(self) -> dict[str, Any]:
        return {"sources": self.sources, "hands_read": self.hands_read, "hands_skipped": self.hands_skipped,
                "lines_skipped": self.lines_skipped, "files_not_read": self.files_not_read, "games": dict(self.games),
                "skipped": [i.to_dict() for i in self.skipped],
                "players": [p.to_dict() for p in self.ranked()]}


def hand_counts(record: HandRecord, decisions: Iterable[Any], payoffs: Optional[tuple[float, ...]],
                into: dict[str, PlayerStats]) -> None:
    """Add one replayed hand to the players' counts in ``into`` (``decisions``: its decision
    points, :func:`cbr.logs.replay.replay`; ``payoffs``: net chips per position, or None)."""
    n = record.n_players
    vpip = [False] * n
    pfr = [False] * n
    folded_preflop = [False] * n
    aggressive = [0] * n
    calls = [0] * n
    for d in decisions:
        p = d.position
        if d.street == 0:
            if d.action == "r":
                vpip[p] = pfr[p] = True
            elif d.action == "c" and d.to_call > 0:
                vpip[p] = True
            elif d.action == "f":
                folded_preflop[p] = True
        elif d.action == "r":
            aggressive[p] += 1
        elif d.action == "c" and d.to_call > 0:
            calls[p] += 1
    for a in record.actions:  # a fold out of turn (a player who left) is no decision
        if a.street == 0 and a.kind == "f":
            folded_preflop[a.position] = True
    showdown = record.showdown
    flop = len(record.board) >= 3
    sb = record.game.small_bet
    for p, name in enumerate(record.players):
        st = into.get(name)
        if st is None:
            st = into[name] = PlayerStats(name)
        st.hands += 1
        st.vpip_hands += vpip[p]
        st.pfr_hands += pfr[p]
        st.postflop_aggressive += aggressive[p]
        st.postflop_calls += calls[p]
        if flop and not folded_preflop[p]:
            st.saw_flop += 1
            if p in showdown:
                st.showdowns += 1
                if payoffs is not None and payoffs[p] > 0:
                    st.showdowns_won += 1
        if payoffs is not None:
            st.results.append(payoffs[p] / sb)


def log_stats(
    paths: Union[PathLike, Iterable[PathLike]],
    format: Optional[str] = None,
    progress: Optional[Progress] = None,
    *,
    max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE,
) -> StatsReport:
    """Read and replay every hand in ``paths`` (files or folders, any supported format) and
    count each player's statistics (see the module docstring). ``format`` forces a parser;
    ``progress(n, total=None)`` is called once with the number of sources, then once per
    source. Hands the parser or the rules engine rejects are in ``skipped``."""
    from cbr.logs.replay import replay_hand

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    sources = scan_logs(paths, format, max_file_size=max_file_size)
    report = StatsReport(sources=len(sources))
    if progress is not None:
        progress(0, total=len(sources))
    for source in sources:
        for item in parse_source(source, max_file_size=max_file_size):
            if isinstance(item, ParseIssue):
                if not is_decoding_note(item):
                    report.skipped.append(item)
                continue
            try:
                replayed = replay_hand(item)
            except (CBRError, ValueError) as exc:
                report.skipped.append(skipped_hand(item, exc))
                continue
            payoffs = item.payoffs if item.payoffs is not None else replayed.payoffs
            hand_counts(item, replayed.decisions, payoffs, report.players)
            report.hands_read += 1
            kind = "limit" if item.game.betting == "limit" else "no-limit"
            report.games[kind] = report.games.get(kind, 0) + 1
        if progress is not None:
            progress(1)
    return report
