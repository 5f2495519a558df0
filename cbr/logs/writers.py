"""Write hands (match logs) in ACPC dealer-log format or PHH (TOML).

Both writers write to a temporary file beside the target and rename it into place when
closed without an error, so a crash never leaves a half-written log (a failed run leaves
no log). Use them as context managers:

>>> import tempfile, os
>>> from cbr.game import preset
>>> from cbr.logs.record import Action, HandRecord
>>> rec = HandRecord(source="m", line=0, hand_id="0", game=preset("holdem.limit.2p"),
...     players=("a", "b"), hole_cards=((51, 50), (0, 5)), board=(),
...     actions=(Action(0, 1, "r"), Action(0, 0, "f")), payoffs=(-10.0, 10.0))
>>> path = os.path.join(tempfile.mkdtemp(), "m.log")
>>> with AcpcLogWriter(path) as log:
...     log.write(rec)
>>> print(open(path).read().splitlines()[1:])
['STATE:0:rf:AsAh|2c3d:-10|10:a|b', 'SCORE:-10|10:a|b']

ACPC lines are ``STATE:<hand>:<betting>:<hole|hole.../flop/turn/river>:<payoffs>:<players>``
after a first comment line ``# game: <GameDef.to_dict() as compact JSON>`` (so the exact
rules, caps included, read back), and a final ``SCORE:<totals>:<players>``.

PHH (https://phh.readthedocs.io): ``variant = 'FT'`` (fixed-limit hold'em; ``'NT'`` for
no-limit), players ``p1..pn`` in blind order (p1 small blind; heads-up p1 is the big
blind and p2 the button, as PokerKit reads it), ``cbr X`` = the actor's total on the
street after the bet. A target ending in ``.phhs`` holds every hand under ``[k]`` tables;
any other target is a directory with one ``<hand>.phh`` file per hand. Unlimited stacks
are written as ``UNLIMITED_STACK`` chips; the exact game definition goes in the
user field ``_cbr_game`` (JSON).
"""
from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import IO, Optional, Protocol, Sequence

from cbr.errors import LogFormatError, OutputPathError
from cbr.game.gamedef import STREET_OF_BOARD, GameDef
from cbr.logs.record import HandRecord
from evaluator_ext.cards import cards_str

UNLIMITED_STACK = 1_000_000


def _num(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


def acpc_number(x: float) -> str:
    """Chips as the ACPC reference dealer prints them in ``STATE`` and ``SCORE`` lines: six
    decimals, trailing zeros and point removed (a split pot gives halves or thirds).

    >>> acpc_number(20), acpc_number(-2.5), acpc_number(10 / 3)
    ('20', '-2.5', '3.333333')
    """
    text = f"{float(x):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class HandLogWriter(Protocol):
    """What :func:`cbr.play.match.run_match` writes to: ``write`` per hand, ``close`` at the end."""

    def write(self, record: HandRecord) -> None: ...

    def close(self) -> None: ...


def first_non_folder(path: Path) -> Optional[Path]:
    """The nearest existing ancestor of ``path`` that is not a folder (None if there is none)."""
    for parent in reversed(path.parents):
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            return None
        except NotADirectoryError:  # pragma: no cover - caught at the ancestor before
            return parent
        if not stat.S_ISDIR(st.st_mode):
            return parent
    return None


def check_output_path(path: str | os.PathLike[str], *, overwrite: bool = False,
                      make_parents: bool = False, what: str = "log") -> str:
    """Check that a log may be written at ``path``; return ``"new"``, ``"file"`` or ``"fifo"``.

    Accepted: a new name in an existing folder (its parents are created first only with
    ``make_parents``), an existing regular file (only with ``overwrite``; it is replaced
    atomically) and a named pipe (written through, in place). Refused with
    :class:`~cbr.errors.OutputPathError`: a path under a regular file, a missing parent
    folder, a symbolic link, a directory, a device node or a socket (a temp file renamed
    over them would destroy them).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> check_output_path(d / "new.log")
    'new'
    >>> (d / "f").write_text("x")
    1
    >>> check_output_path(d / "f" / "x.log")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cbr.errors.OutputPathError: cannot write the log ... is a file, not a folder
    """
    path = Path(path)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        st = None
    if st is None:
        blocker = first_non_folder(path)
        if blocker is not None:
            raise OutputPathError(f"cannot write the {what} {path}: {blocker} is a file, not a folder")
        parent = path.parent
        if not parent.is_dir():
            if not make_parents:
                missing = parent
                while not missing.parent.is_dir():
                    missing = missing.parent
                raise OutputPathError(f"cannot write the {what} {path}: folder {missing} does not exist "
                                      f"(create it first)")
            parent.mkdir(parents=True, exist_ok=True)
        return "new"
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        raise OutputPathError(f"{path} is a symbolic link; refusing to replace it with the {what} "
                              f"(give the path it points to, or a new name)")
    if stat.S_ISREG(mode):
        if not overwrite:
            raise OutputPathError(f"{path} already exists (--overwrite replaces it)")
        return "file"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISDIR(mode):
        raise OutputPathError(f"{path} is a directory, expected a {what} file name")
    raise OutputPathError(f"{path} is a device or socket, not a regular file; refusing to write the {what} there")


class _AtomicFile:
    """A text file written under a temporary name and moved into place on commit.

    A new name is linked into place (never replacing a file that appeared meanwhile); an
    existing regular file is replaced only with ``overwrite``; a named pipe is written
    through in place (no temp file: its reader sees the hands as they are played, and
    an aborted run stops mid-stream). Everything else is refused (:func:`check_output_path`).
    """

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = True, make_parents: bool = True) -> None:
        self.path = Path(path)
        self.kind = check_output_path(self.path, overwrite=overwrite, make_parents=make_parents)
        self.tmp: Optional[Path] = None
        if self.kind == "fifo":
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    raise OutputPathError(f"named pipe {self.path} has no reader") from None
                raise
            os.set_blocking(fd, True)
        else:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
            self.tmp = Path(tmp)
        self.fh: Optional[IO[str]] = os.fdopen(fd, "w", encoding="utf-8", newline="\n")

    def write(self, text: str) -> None:
        if self.fh is None:
            raise LogFormatError(f"log {self.path} is already closed")
        self.fh.write(text)

    def commit(self) -> None:
        if self.fh is None:
            return
        self.fh.flush()
        if self.tmp is None:  # a named pipe: nothing to move
            self.fh.close()
            self.fh = None
            return
        os.fsync(self.fh.fileno())
        self.fh.close()
        self.fh = None
        os.chmod(self.tmp, 0o644)
        try:
            self._move_into_place(self.tmp)
        except BaseException:
            self.tmp.unlink(missing_ok=True)
            raise
        self.tmp = None

    def _move_into_place(self, tmp: Path) -> None:
        if self.kind == "new":
            try:
                os.link(tmp, self.path)  # fails if the name appeared meanwhile
            except FileExistsError:
                raise OutputPathError(f"{self.path} appeared while the log was written; "
                                      f"not replaced (the log is lost)") from None
            except OSError:  # a file system without hard links: re-check, then rename
                check_output_path(self.path, overwrite=False)
                os.replace(tmp, self.path)
                return
            tmp.unlink()
            return
        check_output_path(self.path, overwrite=True)  # still a regular file (or gone)
        os.replace(tmp, self.path)

    def abort(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None


class _WriterBase:
    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, exc_type, exc, tb) -> None:  # type: ignore[no-untyped-def]
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def close(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def abort(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


# ---------------------------------------------------------------------------------- ACPC
def acpc_betting(record: HandRecord) -> str:
    """The ACPC betting string of a limit hand (``rc/crc/...``), one ``/`` per board dealt.

    Uses ``record.extra["betting"]`` when the producer stored it (no-limit amounts).
    """
    if record.extra.get("betting"):
        return str(record.extra["betting"])
    if record.game.betting != "limit":
        raise LogFormatError(f"hand {record.hand_id}: no-limit betting needs the ACPC string in extra['betting']")
    streets = max([STREET_OF_BOARD.get(len(record.board), 0)] + [a.street for a in record.actions])
    parts = [""] * (streets + 1)
    for a in record.actions:
        parts[a.street] += a.kind
    return "/".join(parts)


def acpc_cards(record: HandRecord) -> str:
    """``hole|hole.../flop/turn/river`` (an unknown hole is left empty)."""
    holes = "|".join(cards_str(h) if h is not None else "" for h in record.hole_cards)
    b = record.board
    board = "".join("/" + cards_str(b[lo:hi]) for lo, hi in ((0, 3), (3, 4), (4, 5)) if len(b) >= hi)
    return holes + board


def acpc_state_line(record: HandRecord) -> str:
    """One ``STATE:`` line."""
    if record.payoffs is None:
        raise LogFormatError(f"hand {record.hand_id}: an ACPC log needs the payoffs")
    for name in record.players:
        if any(ch in name for ch in ":|\n") or not name:
            raise LogFormatError(f"player name {name!r} cannot be written to an ACPC log (':' '|' or empty)")
    return (f"STATE:{record.hand_id}:{acpc_betting(record)}:{acpc_cards(record)}:"
            f"{'|'.join(acpc_number(p) for p in record.payoffs)}:{'|'.join(record.players)}")


class AcpcLogWriter(_WriterBase):
    """ACPC dealer log: ``# game: {...}`` header, one ``STATE:`` line per hand, ``SCORE:`` last.

    The header is written from the first hand's game (or ``game`` if given).
    """

    def __init__(self, path: str | os.PathLike[str], game: GameDef | None = None, *,
                 overwrite: bool = True, make_parents: bool = True) -> None:
        self._file = _AtomicFile(path, overwrite=overwrite, make_parents=make_parents)
        self.path = self._file.path
        self.game = game
        self._header = False
        self._totals: dict[str, float] = {}
        if game is not None:
            self._write_header(game)

    def _write_header(self, game: GameDef) -> None:
        self._file.write("# game: " + json.dumps(game.to_dict(), separators=(",", ":")) + "\n")
        self._header = True
        self.game = game

    def write(self, record: HandRecord) -> None:
        if not self._header:
            self._write_header(record.game)
        elif record.game != self.game:
            raise LogFormatError(f"hand {record.hand_id}: game {record.game.name!r} differs from "
                                 f"the log's {self.game.name!r}")  # type: ignore[union-attr]
        line = acpc_state_line(record)
        for name, pay in zip(record.players, record.payoffs or ()):
            self._totals[name] = self._totals.get(name, 0.0) + pay
        self._file.write(line + "\n")

    def close(self) -> None:
        if self._file.fh is None:
            return
        if self._totals:
            names = list(self._totals)
            self._file.write(f"SCORE:{'|'.join(acpc_number(self._totals[n]) for n in names)}:{'|'.join(names)}\n")
        self._file.commit()

    def abort(self) -> None:
        self._file.abort()


# ---------------------------------------------------------------------------------- PHH
def _toml_str(s: str) -> str:
    if "'" not in s and "\n" not in s:
        return f"'{s}'"
    return json.dumps(s)


def _toml_list(values: Sequence[object]) -> str:
    return "[" + ", ".join(_toml_str(v) if isinstance(v, str) else _num(v) for v in values) + "]"  # type: ignore[arg-type]


def phh_player_order(game: GameDef) -> list[int]:
    """Position of each PHH player ``p1..pn`` (PHH lists players in blind order;
    heads-up p1 is the big blind and p2 the small blind/button).

    >>> from cbr.game import preset
    >>> phh_player_order(preset("holdem.limit.2p")), phh_player_order(preset("casper.2p"))
    ([0, 1], [1, 0])
    """
    n = game.n_players
    if n == 2:
        big = 0 if game.blinds[0] >= game.blinds[1] else 1
        return [big, 1 - big]
    if game.first_to_act[1] != 0 or game.first_to_act[0] != 2 % n:
        raise LogFormatError(f"game {game.name!r}: PHH needs positions in blind order "
                             f"(position 0 small blind, 2 first to act pre-flop)")
    return list(range(n))


def phh_hand(record: HandRecord) -> dict[str, object]:
    """The PHH fields of one hand (values as Python data, in PHH's order)."""
    game = record.game
    order = phh_player_order(game)
    pn = {pos: i + 1 for i, pos in enumerate(order)}
    n = game.n_players
    posted = record.posted or game.blinds
    blinds = [posted[pos] for pos in order]
    if n == 2:
        blinds = sorted(blinds)  # PHH/PokerKit heads-up: [small, big], posted reversed
    stacks = record.stacks or tuple(game.stack if game.stack is not None else UNLIMITED_STACK for _ in range(n))
    actions: list[str] = []
    for i, pos in enumerate(order):
        hole = record.hole_cards[pos]
        actions.append(f"d dh p{i + 1} {cards_str(hole) if hole is not None else '????'}")
    board = record.board
    level = max(posted)
    street_total = list(posted)
    street = 0
    folded: set[int] = set()
    for a in record.actions:
        while a.street > street:
            street += 1
            lo, hi = ((0, 3), (3, 4), (4, 5))[street - 1]
            if len(board) < hi:
                raise LogFormatError(f"hand {record.hand_id}: action on street {street} but the board has {len(board)} cards")
            actions.append(f"d db {cards_str(board[lo:hi])}")
            level, street_total = 0.0, [0.0] * n
        who = f"p{pn[a.position]}"
        if a.kind == "f":
            folded.add(a.position)
            actions.append(f"{who} f")
        elif a.kind == "c":
            street_total[a.position] = a.amount if a.amount is not None else level
            actions.append(f"{who} cc")
        else:
            to = a.amount if a.amount is not None else level + game.bet_size(street)
            street_total[a.position] = level = float(to)
            actions.append(f"{who} cbr {_num(to)}")
    while street < STREET_OF_BOARD.get(len(board), 0):  # boards dealt after all-ins
        street += 1
        lo, hi = ((0, 3), (3, 4), (4, 5))[street - 1]
        actions.append(f"d db {cards_str(board[lo:hi])}")
    live = [pos for pos in range(n) if pos not in folded]
    if len(live) > 1:
        for pos in _showdown_order(record, live, pn):
            h = record.hole_cards[pos]
            actions.append(f"p{pn[pos]} sm {cards_str(h) if h is not None else ''}".rstrip())
    fields: dict[str, object] = {
        "variant": "FT" if game.betting == "limit" else "NT",
        "ante_trimming_status": True,
        "antes": [game.antes[pos] for pos in order],
        "blinds_or_straddles": blinds,
    }
    if game.betting == "limit":
        fields["small_bet"], fields["big_bet"] = game.small_bet, game.big_bet
    else:
        fields["min_bet"] = game.big_blind
    fields["starting_stacks"] = [stacks[pos] for pos in order]
    fields["actions"] = actions
    fields["hand"] = int(record.hand_id) if record.hand_id.isdigit() else record.hand_id
    fields["players"] = [record.players[pos] for pos in order]
    if record.payoffs is not None:
        fields["finishing_stacks"] = [stacks[pos] + record.payoffs[pos] for pos in order]
    fields["_cbr_game"] = json.dumps(game.to_dict(), separators=(",", ":"))
    return fields


def _showdown_order(record: HandRecord, live: list[int], pn: dict[int, int]) -> list[int]:
    """PokerKit's showdown order: the last bettor/raiser on the river first, else the first
    live player after the button; then around the table."""
    game = record.game
    n = game.n_players
    start = game.first_to_act[3]
    river_raises = [a.position for a in record.actions if a.street == 3 and a.kind == "r"]
    if river_raises:
        start = river_raises[-1]
    seq = [(start + i) % n for i in range(n)]
    return [pos for pos in seq if pos in live]


def phh_text(record: HandRecord) -> str:
    """One hand as PHH TOML text."""
    lines = []
    for key, value in phh_hand(record).items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            text = _toml_list(value)
        elif isinstance(value, str):
            text = _toml_str(value)
        else:
            text = _num(value)  # type: ignore[arg-type]
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"


class PhhLogWriter(_WriterBase):
    """PHH writer: a ``.phhs`` file with ``[1]``, ``[2]``, ... tables, or a directory of
    ``<hand>.phh`` files (each written atomically; an existing one is replaced only with
    ``overwrite``)."""

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = True, make_parents: bool = True) -> None:
        self.path = Path(path)
        self._count = 0
        self._file: Optional[_AtomicFile] = None
        self._written: list[Path] = []
        self.overwrite = overwrite
        if self.path.suffix == ".phhs":
            self._file = _AtomicFile(self.path, overwrite=overwrite, make_parents=make_parents)
        else:
            if os.path.islink(self.path) or (self.path.exists() and not self.path.is_dir()):
                raise OutputPathError(f"{self.path} exists and is not a directory (use a .phhs name for one file)")
            if not self.path.is_dir():
                check_output_path(self.path, overwrite=False, make_parents=make_parents, what="log folder")
                self.path.mkdir()

    def write(self, record: HandRecord) -> None:
        text = phh_text(record)
        self._count += 1
        if self._file is not None:
            self._file.write(("\n" if self._count > 1 else "") + f"[{self._count}]\n" + text)
            return
        name = record.hand_id if record.hand_id and all(c.isalnum() or c in "-_." for c in record.hand_id) else str(self._count)
        one = _AtomicFile(self.path / f"{name}.phh", overwrite=self.overwrite, make_parents=False)
        try:
            one.write(text)
            one.commit()
        except BaseException:
            one.abort()
            raise
        self._written.append(one.path)

    def close(self) -> None:
        if self._file is not None:
            self._file.commit()

    def abort(self) -> None:
        if self._file is not None:
            self._file.abort()


def open_log(path: str | os.PathLike[str], fmt: str = "acpc", game: GameDef | None = None, *,
             overwrite: bool = False, make_parents: bool = False) -> AcpcLogWriter | PhhLogWriter:
    """A writer for ``fmt`` (``acpc`` or ``phh``); raises ``ValueError`` for other formats.

    What ``cbr match --log`` uses, with the command line's path rules (checked here, before
    any hand is played; see :func:`check_output_path`): a new name in an existing folder
    (missing folders are not created unless ``make_parents``), an existing regular file
    only with ``overwrite``, or a named pipe (written through); a symbolic link, a device,
    a socket or a path under a regular file is refused with
    :class:`~cbr.errors.OutputPathError`.
    """
    if fmt == "acpc":
        return AcpcLogWriter(path, game, overwrite=overwrite, make_parents=make_parents)
    if fmt == "phh":
        return PhhLogWriter(path, overwrite=overwrite, make_parents=make_parents)
    raise LogFormatError(f"unknown log format {fmt!r}; known: acpc, phh")


__all__ = ["HandLogWriter", "check_output_path", "AcpcLogWriter", "PhhLogWriter", "open_log", "acpc_state_line",
           "acpc_betting", "acpc_cards", "phh_hand", "phh_text", "UNLIMITED_STACK"]
