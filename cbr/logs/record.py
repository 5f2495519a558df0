"""The one model every log parser produces.

A :class:`HandRecord` is a hand as the log tells it: the table's rules (a
:class:`~cbr.game.GameDef` whose positions are the hand's seats in ACPC order), who sat
where, the hole cards that are known, the board, every action in order, and the
result. Replaying it through the rules engine (``cbr.logs.replay``) checks it and turns
it into decision points.

>>> from cbr.game import preset
>>> rec = HandRecord(source="x.log", line=1, hand_id="0", game=preset("holdem.limit.2p"),
...                  players=("p1", "p2"), hole_cards=((51, 50), None), board=(),
...                  actions=(Action(0, 1, "f"),), payoffs=(5.0, -5.0))
>>> rec.known_hole_cards
1
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Protocol, Sequence

from cbr.game.actions import Action, ActionKind, limit_action
from cbr.game.gamedef import GameDef

# Action, ActionKind and limit_action live in cbr.game.actions; re-exported here for old imports.
__all__ = ["Action", "ActionKind", "HandRecord", "LogParser", "ParseIssue", "ParseResult", "limit_action",
           "no_hand_read", "text_before_hands"]


@dataclass(frozen=True)
class HandRecord:
    """A hand as read from a log. Positions index ``players``, ``hole_cards``, ``payoffs``.

    - ``source``/``line``: file and 1-based line where the hand starts (for reports).
    - ``hole_cards[i]``: a pair of card ints, or None when the log does not show them.
    - ``board``: the board cards dealt (0, 3, 4 or 5).
    - ``payoffs``: net chips won (+) or lost (-) per position, if the log says.
    - ``stacks``: chips each position had at the start (None when unknown/unlimited).
    - ``posted``: blinds actually posted per position, when the log says and it differs
      from ``game.blinds`` (IRC hands with one blind; PokerStars dead blinds).
    - ``quits``: positions that left mid-hand (IRC ``Q``/``K``), treated as folds.
    """

    source: str
    line: int
    hand_id: str
    game: GameDef
    players: tuple[str, ...]
    hole_cards: tuple[Optional[tuple[int, int]], ...]
    board: tuple[int, ...]
    actions: tuple[Action, ...]
    payoffs: Optional[tuple[float, ...]] = None
    stacks: Optional[tuple[float, ...]] = None
    posted: Optional[tuple[float, ...]] = None
    format: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def n_players(self) -> int:
        return len(self.players)

    @property
    def known_hole_cards(self) -> int:
        """How many players' hole cards the log shows."""
        return sum(h is not None for h in self.hole_cards)

    @property
    def where(self) -> str:
        """``file:line`` for reports."""
        return f"{self.source}:{self.line}"

    @property
    def showdown(self) -> frozenset[int]:
        """Positions that did not fold, when more than one was left at the end: the
        players whose cards the table sees after the hand. Empty when one player won
        uncontested.

        >>> from dataclasses import replace
        >>> from cbr.game import preset
        >>> rec = HandRecord(source="x", line=1, hand_id="0", game=preset("holdem.limit.2p"),
        ...     players=("a", "b"), hole_cards=((51, 50), (0, 1)), board=(), actions=(Action(0, 0, "f"),))
        >>> rec.showdown, replace(rec, actions=()).showdown
        (frozenset(), frozenset({0, 1}))
        """
        folded = {a.position for a in self.actions if a.kind == "f"}
        live = frozenset(p for p in range(self.n_players) if p not in folded)
        return live if len(live) > 1 else frozenset()


@dataclass(frozen=True)
class ParseIssue:
    """A hand (or line) that was skipped, and why. ``where`` is ``file:line``."""

    source: str
    line: int
    reason: str
    #: The line is no hand at all (an ACPC log's line that is no ``STATE:``, ``SCORE:``, comment
    #: or empty line, as every line of a PHH file read as ACPC; a line of text before a
    #: PokerStars or PHH file's first hand, :func:`text_before_hands`), not a hand that was
    #: skipped: counted as lines. (Text there that holds a hand's lines is a hand whose header
    #: was damaged: a hand skipped.)
    not_a_hand: bool = False
    #: The id of the hand skipped, when the log gave it (``reason`` then does not repeat it):
    #: every report names the hand by it after ``file:line`` (:attr:`text`).
    hand_id: Optional[str] = None

    @property
    def text(self) -> str:
        """The reason, after the hand's id when it is known: ``(hand ID): reason``, the one form
        of a skipped hand in every report (``cbr build``, ``cbr logs inspect``, the trainers).

        >>> ParseIssue("a.log", 3, "more than 3 raises", hand_id="20").text, ParseIssue("a.log", 3, "x").text
        ('(hand 20): more than 3 raises', 'x')
        """
        return self.reason if self.hand_id is None else f"(hand {self.hand_id}): {self.reason}"

    def to_dict(self) -> dict[str, str]:
        """``where`` and ``reason`` (:attr:`text`, the id in it), as the JSON reports list an issue.

        >>> ParseIssue("a.log", 3, "x", hand_id="7").to_dict()
        {'where': 'a.log:3', 'reason': '(hand 7): x'}
        """
        return {"where": self.where, "reason": self.text}

    @property
    def where(self) -> str:
        """``file:line``; just ``file`` for an issue about a whole file (line 0).

        >>> ParseIssue("a.log", 3, "x").where, ParseIssue("pipe", 0, "a named pipe").where
        ('a.log:3', 'pipe')
        """
        return f"{self.source}:{self.line}" if self.line else self.source

    @property
    def whole_file(self) -> bool:
        """Whether the issue is about a whole file (or folder) not read, not a hand skipped.

        >>> ParseIssue("a.log", 3, "x").whole_file, ParseIssue("notes.txt", 0, "not a log").whole_file
        (False, True)
        """
        return not self.line

    @property
    def hand_skipped(self) -> bool:
        """Whether the issue is a hand skipped: neither a whole file nor a line that is no hand.

        >>> ParseIssue("a.log", 3, "x").hand_skipped, ParseIssue("a.log", 3, "x", not_a_hand=True).hand_skipped
        (True, False)
        """
        return bool(self.line) and not self.not_a_hand

    def __str__(self) -> str:
        """``file:line: (hand ID): reason`` (:attr:`text`), how every command names a skipped hand.

        >>> str(ParseIssue("a.log", 3, "x", hand_id="7")), str(ParseIssue("a.log", 0, "not a log"))
        ('a.log:3: (hand 7): x', 'a.log: not a log')
        """
        return f"{self.where}: {self.text}"


def hand_issue(source: str, line: int, reason: str, hand_id: Optional[str]) -> ParseIssue:
    """A hand a parser skips, with its id when the log gave one (None: not known, as for a line
    too damaged to name it); a reason that starts with the id as the parser wrote it (``hand 20:``,
    ``hand #20:``) loses it, since every report puts it after ``file:line``
    (:meth:`ParseIssue.__str__`).

    >>> str(hand_issue("a.log", 4, "hand #20: more than 3 raises", "20")), str(hand_issue("a.log", 4, "x", None))
    ('a.log:4: (hand 20): more than 3 raises', 'a.log:4: x')
    """
    if hand_id is not None:
        for prefix in (f"hand #{hand_id}: ", f"hand {hand_id}: ", f"(hand {hand_id}): "):
            if reason.startswith(prefix):
                reason = reason[len(prefix):]
                break
    return ParseIssue(source, line, reason, hand_id=hand_id)


def skipped_hand(record: HandRecord, exc: BaseException) -> ParseIssue:
    """A hand the rules engine refused, as the issue every command reports: ``file:line: (hand
    N): problem`` (:meth:`ParseIssue.__str__`).

    The engine names the hand as ``file:line (hand N): problem``; the issue keeps ``problem`` as
    its reason and the record's id as its ``hand_id``, so a skipped hand reads the same wherever it
    is shown (``cbr build``, ``cbr logs inspect``, ``cbr train predictor``, ``cbr players fill``).

    >>> from types import SimpleNamespace
    >>> rec = SimpleNamespace(source="f.log", line=5, where="f.log:5", hand_id="0")
    >>> str(skipped_hand(rec, ValueError("f.log:5 (hand 0): payoffs do not match")))
    'f.log:5: (hand 0): payoffs do not match'
    """
    reason = str(exc)
    for prefix in (f"{record.where}: ", f"{record.where} "):
        if reason.startswith(prefix):
            reason = reason[len(prefix):]
            break
    return hand_issue(record.source, record.line, reason, record.hand_id)


def text_before_hands(source: str, lines: Sequence[str], hand_line: Callable[[str], bool], header: str, *,
                      ignored: Callable[[str], bool] = lambda line: False) -> Iterator[ParseIssue]:
    """What the text before a file's first hand is (``lines``, from the file's line 1): each
    paragraph (lines between blank ones) holding a line of a hand (``hand_line``) is a hand whose
    ``header`` line was damaged or lost, one hand skipped at its first line; every other line
    that is neither blank nor ``ignored`` (a comment) is a line skipped, not a hand (a file
    header, a note), as a line of an ACPC log that is no hand is.

    >>> hand = lambda line: line.startswith("Seat ")
    >>> for issue in text_before_hands("x.txt", ["exported by a tool", "", "Seat 1: A", "A: folds"], hand,
    ...                                "PokerStars Game #"):
    ...     print(issue, issue.not_a_hand)
    x.txt:1: text before the first hand, not a hand: 'exported by a tool' True
    x.txt:3: a hand without its PokerStars Game # line (damaged?): 'Seat 1: A' False
    """
    paragraph: list[tuple[int, str]] = []
    for i, raw in enumerate([*lines, ""], start=1):
        text = raw.strip().lstrip("\ufeff")
        if text:
            paragraph.append((i, text))
            continue
        if any(hand_line(t) for _, t in paragraph):
            line, first = paragraph[0]
            yield ParseIssue(source, line, f"a hand without its {header} line (damaged?): {first[:60]!r}")
        else:
            for line, t in paragraph:
                if not ignored(t):
                    yield ParseIssue(source, line, f"text before the first hand, not a hand: {t[:60]!r}",
                                     not_a_hand=True)
        paragraph = []


def no_hand_read(paths: Sequence[Any], first: Optional[str], skipped: int) -> str:
    """The error of logs that gave no hand, as every command words it: the paths, then the
    first hand or file skipped and why (``first``, ``where: reason``) and how many more of the
    ``skipped``; with nothing skipped, that there was no log file at all.

    >>> no_hand_read(["a", "b"], "a: not a log; skipped", 2)
    'no hand could be read from a, b: a: not a log; skipped (and 1 more skipped; cbr logs inspect lists them)'
    >>> no_hand_read(["empty"], None, 0)
    'no hand could be read from empty (no log file there)'
    """
    if first is None:
        why = "" if skipped else " (no log file there)"
    else:
        more = f" (and {skipped - 1} more skipped; cbr logs inspect lists them)" if skipped > 1 else ""
        why = f": {first}{more}"
    return f"no hand could be read from {', '.join(str(p) for p in paths)}{why}"


@dataclass
class ParseResult:
    """What a parser read from one source: the hands, and the hands it skipped."""

    hands: list[HandRecord] = field(default_factory=list)
    issues: list[ParseIssue] = field(default_factory=list)


class LogParser(Protocol):
    """What a parser plugin (entry-point group ``cbr.parsers``) provides.

    ``name`` is the format's name (``acpc``, ``phh``, ``irc``, ``pokerstars``).
    ``sniff(path, head)`` says whether the file looks like this format (``head`` is its
    first 4 KiB as text). ``parse(path)`` yields hands and issues; it never raises on bad
    data in the file (only on an unreadable path).
    """

    name: str

    def sniff(self, path: str, head: str) -> bool: ...

    def parse(self, path: str) -> Iterator[HandRecord | ParseIssue]: ...
