"""What is in a set of logs: hands read and skipped (with why), decisions, players.

Every hand is replayed through the rules engine (:func:`cbr.logs.replay.replay`); a hand
the engine rejects is a skipped hand with the engine's reason, like a hand the parser
could not read.

>>> report = inspect_logs(["../shared/data/logs/acpc/dealer_example_limit"])
>>> report.hands_read, report.decisions_known
(2000, 25833)
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from cbr.errors import CBRError
from cbr.game.gamedef import STREETS
from cbr.logs.detect import PathLike, Progress, parse_source, parsers_left_out, scan_logs
from cbr.logs.record import ParseIssue, skipped_hand
from cbr.logs.source import DEFAULT_MAX_FILE_SIZE, is_decoding_note


@dataclass
class LogReport:
    """Counts over the logs read. ``skipped`` lists every skipped hand (``file:line`` and why)
    and every skipped file (line 0: not a log, not a regular file, too large, cannot be
    read...); ``notes`` are issues that skipped nothing (a file read as latin-1); ``warnings``
    say once each parser plugin that format detection left out (it fails to load or to be
    made: :func:`cbr.logs.detect.parsers_left_out`), whose files are then skipped as no log."""

    sources: int = 0
    hands_read: int = 0
    skipped: list[ParseIssue] = field(default_factory=list)
    notes: list[ParseIssue] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    decisions: int = 0
    decisions_known: int = 0
    players: int = 0
    actions_per_street: dict[str, dict[str, int]] = field(
        default_factory=lambda: {s: {"f": 0, "c": 0, "r": 0} for s in STREETS})
    per_format: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def hands_skipped(self) -> int:
        """Hands skipped (a ``file:line`` each)."""
        return sum(1 for i in self.skipped if i.hand_skipped)

    @property
    def lines_skipped(self) -> int:
        """Lines that are no hand at all (a ``file:line`` each): not counted as hands skipped."""
        return sum(1 for i in self.skipped if i.not_a_hand and not i.whole_file)

    @property
    def files_skipped(self) -> int:
        """Files (or folders) not read at all (line 0)."""
        return sum(1 for i in self.skipped if i.whole_file)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``--json``."""
        return {
            "sources": self.sources,
            "hands_read": self.hands_read,
            "hands_skipped": self.hands_skipped,
            "lines_skipped": self.lines_skipped,
            "files_skipped": self.files_skipped,
            "skipped": [i.to_dict() for i in self.skipped],
            "notes": [i.to_dict() for i in self.notes],
            "warnings": list(self.warnings),
            "decisions": self.decisions,
            "decisions_with_known_hole_cards": self.decisions_known,
            "players": self.players,
            "actions_per_street": self.actions_per_street,
            "per_format": self.per_format,
        }


def inspect_logs(
    paths: Union[PathLike, Iterable[PathLike]],
    format: Optional[str] = None,
    progress: Optional[Progress] = None,
    *,
    max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE,
) -> LogReport:
    """Read and replay every hand in ``paths`` (files or folders) and count what is there.

    ``format`` forces a parser (a name from the plugin store); ``progress(n, total=None)``
    is called once with the number of sources, then once per source. Files are found as
    :func:`cbr.logs.detect.scan_logs` finds them (``max_file_size`` bytes at most per
    file, None for no limit); each file skipped is in ``skipped`` with the reason.
    """
    from cbr.logs.replay import replay  # the rules engine; imported when used

    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    sources = scan_logs(paths, format, max_file_size=max_file_size)
    report = LogReport(sources=len(sources), warnings=parsers_left_out(format))
    names: set[str] = set()
    streets = [report.actions_per_street[s] for s in STREETS]
    if progress is not None:
        progress(0, total=len(sources))
    for source in sources:
        counts = report.per_format.setdefault(source.format or "unknown", {"sources": 0, "hands": 0, "skipped": 0})
        counts["sources"] += 1
        for item in parse_source(source, max_file_size=max_file_size):
            if isinstance(item, ParseIssue):
                if is_decoding_note(item):
                    report.notes.append(item)
                else:
                    report.skipped.append(item)
                    if item.whole_file:  # counted apart from skipped hands
                        counts["not_read"] = counts.get("not_read", 0) + 1
                    elif item.not_a_hand:  # a line that is no hand: not a hand skipped
                        counts["lines"] = counts.get("lines", 0) + 1
                    else:
                        counts["skipped"] += 1
                continue
            try:
                points = replay(item)
            except (CBRError, ValueError) as exc:
                report.skipped.append(skipped_hand(item, exc))
                counts["skipped"] += 1
                continue
            report.hands_read += 1
            counts["hands"] += 1
            for note in item.extra.get("notes", ()):      # read, with a remark (ACPC all-in EV)
                report.notes.append(ParseIssue(item.source, item.line, note))
            report.decisions += len(points)
            report.decisions_known += sum(p.hole is not None for p in points)
            names.update(item.players)
            for a in item.actions:
                streets[a.street][a.kind] += 1
        if progress is not None:
            progress(1)
    report.players = len(names)
    return report
