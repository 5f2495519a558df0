"""Which parser reads a log, and reading many logs at once.

:func:`detect_format` asks every parser of the plugin store (entry-point group
``cbr.parsers``) whether it recognises a file; :func:`scan_logs` walks files and folders
into :class:`LogSource` entries (each read by a parser, or skipped with the reason);
:func:`read_logs` yields every hand and every skipped hand or file, in order. Files are
opened and decoded only by :mod:`cbr.logs.source` (regular files only, a size limit per
file, UTF-8/UTF-16 with a BOM, latin-1 as a reported fallback).

>>> from cbr.logs.detect import detect_format
>>> detect_format("../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log")
'acpc'
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Optional, Union

from cbr import plugins
from cbr.errors import CBRError, LogFormatError, PluginError
from cbr.logs.record import HandRecord, ParseIssue
from cbr.logs.source import DEFAULT_MAX_FILE_SIZE, HEAD_BYTES, file_problem, file_size_limit, read_head, read_log_text

__all__ = ["DEFAULT_MAX_FILE_SIZE", "HEAD_BYTES", "LogSource", "PathLike", "Progress", "detect_format",
           "log_sources", "parse_source", "parser_for", "parsers_left_out", "read_log_text", "read_logs", "scan_logs"]

Progress = Callable[..., None]
PathLike = Union[str, "os.PathLike[str]"]

# Files that sit beside logs and are never logs (left out silently when a folder is walked).
_NOT_LOGS = {"readme", "readme.md", "readme.txt", "source.md", "license", "license.md", "license.txt",
             "index.md", "copying", "notice", ".gitignore", ".ds_store"}
_NOT_LOG_EXT = {".md", ".rst", ".py", ".json", ".csv", ".parquet", ".zip", ".gz", ".tar", ".png", ".jpg", ".pdf"}


@dataclass(frozen=True)
class LogSource:
    """One file (or database folder) found in the paths given: its parser, or why it is skipped.

    ``format`` is the parser's name (None when skipped); ``problem`` says why the source is
    not read (None when it is).

    >>> LogSource("x.log", "acpc").skipped, LogSource("p", None, "a named pipe").skipped
    (False, True)
    """

    path: str
    format: Optional[str]
    problem: Optional[str] = None

    @property
    def skipped(self) -> bool:
        return self.problem is not None or self.format is None

    def issue(self) -> ParseIssue:
        """The skipped-file entry of a report (line 0: the whole file)."""
        return ParseIssue(self.path, 0, f"{self.problem or 'not a log any parser recognises'}; skipped")


def _parsers(left_out: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """Instances of every parser plugin that loads and can be made; another package's that
    fails to load or to be made is left out (and its error put in ``left_out`` by name, when
    given).

    Raises :class:`PluginError` ``could not load the parsers: ...`` (from the error) when one
    of the engine's own parsers fails to load or to be made, when loading any parser runs out
    of memory (``MemoryError``: the process is short of memory, not the plugin broken), or
    when no parser is installed: detection without them would call every log "not a log any
    parser recognises (formats: )", which hid a ``MemoryError`` under a memory cap.
    """
    found: dict[str, Any] = {}
    names = plugins.available("cbr.parsers")
    if not names:
        raise PluginError("could not load the parsers: none is installed (no entry point in cbr.parsers; "
                          "reinstall cbr-holdem)")
    for name in names:
        try:
            found[name] = _instance(name)
        except MemoryError as exc:
            raise PluginError(f"could not load the parsers: log format {name!r} "
                              f"({plugins.origin('cbr.parsers', name)[1]}): {plugins.failure_text(exc)}") from exc
        except PluginError as exc:
            if plugins.is_own("cbr.parsers", name):
                raise PluginError(f"could not load the parsers: {exc}") from exc
            if left_out is not None:
                left_out[name] = str(exc)
    return found


def parsers_left_out(format: Optional[str] = None) -> list[str]:
    """One note per parser plugin that format detection leaves out, because it fails to load
    or fails when it is made, with its error: what a build's or an inspection's report says
    once (not a line per file). Empty when ``format`` is given: no detection then (``-f NAME``
    names the parser's error itself).

    >>> parsers_left_out()
    []
    """
    if format is not None:
        return []
    left_out: dict[str, str] = {}
    _parsers(left_out)
    return [f"{reason}; left out of format detection, its files are not recognised"
            for _, reason in sorted(left_out.items())]


_INSTANCES: dict[str, Any] = {}


def _instance(name: str) -> Any:
    """The parser ``name``, made once. Another package's parser that raises as it is made
    is a :class:`~cbr.errors.PluginFailedError` naming it (:func:`cbr.plugins.plugin_label`)."""
    if name not in _INSTANCES:
        _INSTANCES[name] = plugins.made_parser(name)
    return _INSTANCES[name]


def parser_for(format: str) -> Any:
    """The parser plugin named ``format``; :class:`PluginError` lists the known names.

    >>> parser_for("acpc").name
    'acpc'
    """
    if format not in plugins.available("cbr.parsers"):  # the known are those that load; the others named apart
        known, broken = plugins.usable("cbr.parsers")
        raise PluginError(f"unknown log format {format!r}; known formats: {', '.join(known)}"
                          f"{plugins.broken_note('cbr.parsers', broken)}")
    return _instance(format)


def _sniff(path: str, parsers: dict[str, Any]) -> Optional[str]:
    head = read_head(path, HEAD_BYTES)
    ext = os.path.splitext(path)[1].lower()
    # Parsers that claim the extension are asked first, then the rest.
    ordered = sorted(parsers.items(), key=lambda kv: ext not in getattr(kv[1], "extensions", ()))
    for name, parser in ordered:
        try:
            if parser.sniff(path, head):
                return name
        except Exception:  # a third-party sniff must never stop the walk  # noqa: BLE001
            continue
    return None


def _diagnose(path: str, parsers: dict[str, Any]) -> Optional[str]:
    """Why a file or folder that looks like a parser's format cannot be read by it, or None.

    Parsers may offer ``diagnose(path) -> str | None`` (the IRC parser names the missing
    ``hroster``); the reason is prefixed with the format's name.
    """
    for name, parser in parsers.items():
        diagnose = getattr(parser, "diagnose", None)
        if diagnose is None:
            continue
        try:
            reason = diagnose(path)
        except Exception:  # noqa: BLE001  (as for sniff)
            continue
        if reason:
            return f"{name}: {reason}"
    return None


def _unrecognised(path: str, parsers: dict[str, Any]) -> str:
    near = _diagnose(path, parsers)
    if near is not None:
        return f"not readable as a log ({near})"
    return f"not a log any parser recognises (formats: {', '.join(sorted(parsers))})"


def detect_format(path: PathLike) -> str:
    """The name of the parser that reads ``path`` (a file, or an IRC database folder).

    Raises ``FileNotFoundError`` for a missing path and :class:`LogFormatError` when no
    parser recognises it or it is not a regular file (a pipe, a device, a symlink loop).
    """
    path = os.fspath(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    parsers = _parsers()
    if not os.path.isdir(path):
        problem = file_problem(path, None)
        if problem is not None:
            raise LogFormatError(f"{path}: {problem}")
    name = _sniff(path, parsers)
    if name is None:
        raise LogFormatError(f"{path}: {_unrecognised(path, parsers)}")
    return name


def _is_candidate(name: str) -> bool:
    low = name.lower()
    return low not in _NOT_LOGS and os.path.splitext(low)[1] not in _NOT_LOG_EXT and not low.startswith(".")


def _named(path: str) -> tuple:
    """What makes two spellings of a skipped path the same input: its name in its resolved
    folder. Two links of other names to one device (``/dev/zero``) stay two inputs, each
    reported; ``logs/a.log`` given alone and found in ``logs/`` is one."""
    return ("named", os.path.join(os.path.realpath(os.path.dirname(path) or "."), os.path.basename(path)))


class _Scan:
    """State of one walk: what was found, and what was already seen (read once)."""

    def __init__(self, parsers: dict[str, Any], format: Optional[str], max_file_size: Optional[int]) -> None:
        self.parsers = parsers
        self.format = format
        self.max_file_size = max_file_size
        self.out: list[LogSource] = []
        self.seen: set[tuple] = set()

    def file(self, path: str) -> None:
        # The same file given twice (a folder's file given by itself too) is listed once, whether
        # it is read (by device and inode: a hard link is read once too) or skipped (by name).
        problem = file_problem(path, self.max_file_size)
        if problem is not None:
            key = _named(path)
            if key not in self.seen:
                self.seen.add(key)
                self.out.append(LogSource(path, None, problem))
            return
        info = os.stat(path)
        key = (info.st_dev, info.st_ino)
        if key in self.seen:
            return
        self.seen.add(key)
        name = self.format or _sniff(path, self.parsers)
        self.out.append(LogSource(path, name, None if name else _unrecognised(path, self.parsers)))

    def folder(self, top: str) -> None:
        """Walk ``top`` depth-first in natural order, without recursion (any depth) or loops."""
        # Items: (path, ancestors) for a folder, (path, None) for a file; popped in walk order.
        stack: list[tuple[str, Optional[tuple[tuple[int, int], ...]]]] = [(top, ())]
        while stack:
            path, ancestors = stack.pop()
            if ancestors is None:
                self.file(path)
                continue
            try:
                info = os.stat(path)
            except OSError:
                key = _named(path)
                if key not in self.seen:
                    self.seen.add(key)
                    self.out.append(LogSource(path, None, file_problem(path) or "cannot be read"))
                continue
            key = (info.st_dev, info.st_ino)
            if key in ancestors:
                self.out.append(LogSource(path, None, "a symlink loop (leads back to a folder "
                                                      "being walked), not followed"))
                continue
            if key in self.seen:        # the same folder given twice, or reached by a symlink: read once
                continue
            self.seen.add(key)
            if os.path.isfile(os.path.join(path, "manifest.json")) and os.path.isdir(os.path.join(path, "cases")):
                self.out.append(LogSource(path, None, "a case base, not logs"))
                continue
            as_whole = self._folder_format(path)
            if as_whole is not None:
                self.out.append(LogSource(path, as_whole))
                continue
            if self.format is None:
                near = _diagnose(path, self.parsers)
                if near is not None:
                    self.out.append(LogSource(path, None, f"not readable as a log ({near})"))
                    continue
            try:
                entries = sorted(os.scandir(path), key=lambda e: _natural_key(e.name))
            except OSError as exc:
                self.out.append(LogSource(path, None, f"folder cannot be listed ({exc.strerror or exc})"))
                continue
            inside = ancestors + (key,)
            items: list[tuple[str, Optional[tuple[tuple[int, int], ...]]]] = []
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                except OSError:         # a symlink loop: not a folder; file() says why
                    is_dir = False
                if is_dir:
                    if not entry.name.startswith("."):
                        items.append((entry.path, inside))
                elif _is_candidate(entry.name):
                    items.append((entry.path, None))
            stack.extend(reversed(items))

    def _folder_format(self, folder: str) -> Optional[str]:
        for name, parser in self.parsers.items():
            try:
                if parser.sniff(folder, ""):
                    return name
            except Exception:  # noqa: BLE001
                continue
        return None


def scan_logs(paths: Iterable[PathLike], format: Optional[str] = None, *,
              max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE) -> list[LogSource]:
    """Expand ``paths`` into :class:`LogSource` entries, folders walked recursively.

    A folder that a parser recognises as a whole (an IRC database: ``hdb`` + ``hroster`` +
    ``pdb/``) is one source. Every file found is either given to a parser or listed with
    the reason it is skipped: no parser recognises it, it is not a regular file (a named
    pipe, a device, a symlink loop), it cannot be read, or it is larger than
    ``max_file_size`` bytes (None: no limit). A case base's folder (``manifest.json`` and
    ``cases/``) is one skipped source, not walked. README/SOURCE/LICENSE files and other
    documents beside logs (by name) are left out. The same file or folder given twice
    (a folder and a file inside it) is read once, or listed once when it is skipped. With
    ``format`` given, every file found is given to that parser. A path that does not exist raises ``FileNotFoundError``.

    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> os.mkfifo(os.path.join(d, "pipe.log"))
    >>> [(os.path.basename(s.path), s.problem) for s in scan_logs([d])]
    [('pipe.log', 'a named pipe, not a regular file; only regular files are read')]
    """
    parsers = _parsers() if format is None else {format: parser_for(format)}
    scan = _Scan(parsers, format, max_file_size)
    for p in paths:
        p = os.fspath(p)
        if not os.path.lexists(p):
            raise FileNotFoundError(f"{p}: no such file or directory")
        if os.path.isdir(p):
            scan.folder(p)
        else:
            scan.file(p)
    return scan.out


def log_sources(paths: Iterable[PathLike], format: Optional[str] = None, *,
                max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE) -> list[tuple[str, Optional[str]]]:
    """``(source, format)`` pairs of :func:`scan_logs` (format None: skipped, with a reason there)."""
    return [(s.path, s.format) for s in scan_logs(paths, format, max_file_size=max_file_size)]


def _natural_key(name: str) -> tuple:
    """Sort ``2.phh`` before ``10.phh``."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name))


def parse_source(source: LogSource, *,
                 max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE) -> Iterator[HandRecord | ParseIssue]:
    """The hands and skipped hands of one source, or one issue for a skipped source.

    A file that cannot be read at all (it vanished, became unreadable, is nested too deeply
    for the parser: ``RecursionError``, or a file of a database folder is larger than
    ``max_file_size``) ends with an issue for the source at line 0; the hands read before
    stay, and the walk goes on with the next source.

    Another package's parser that raises any other error in ``parse()`` (an ``OSError``
    and a ``LogFormatError`` are the file's, as above) is a
    :class:`~cbr.errors.PluginFailedError` naming it and its package, and the file it was
    reading (and the line the last hand it gave starts at, when it gave one): not the engine's bug.
    """
    if source.skipped:
        yield source.issue()
        return
    last_line = 0  # the line the last hand (or skipped line) the parser gave starts at: the error is past it
    try:
        with file_size_limit(max_file_size):
            for item in parser_for(source.format).parse(source.path):  # type: ignore[arg-type]
                last_line = getattr(item, "line", 0) or last_line
                yield item
    except RecursionError:
        yield ParseIssue(source.path, 0, "nested too deeply to be read (recursion limit); skipped")
    except FileNotFoundError:
        yield ParseIssue(source.path, 0, "no such file (it vanished while the logs were read); skipped")
    except LogFormatError as exc:
        reason = str(exc)
        if reason.startswith(source.path + ": "):
            reason = reason[len(source.path) + 2:]
        yield ParseIssue(source.path, 0, f"{reason}; skipped")
    except OSError as exc:
        yield ParseIssue(source.path, 0, f"cannot be read ({exc.strerror or exc}); skipped")
    except (CBRError, MemoryError):
        raise
    except Exception as exc:
        label = plugins.plugin_label("cbr.parsers", source.format, "log format")  # type: ignore[arg-type]
        if label is None:  # the engine's own parser: a bug
            raise
        where = source.path + (f", after line {last_line}" if last_line else "")
        raise plugins.plugin_failed(label, "parse", exc, where) from exc


def read_logs(
    paths: Union[PathLike, Iterable[PathLike]],
    format: Optional[str] = None,
    progress: Optional[Progress] = None,
    *,
    max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE,
) -> Iterator[HandRecord | ParseIssue]:
    """Every hand (:class:`HandRecord`) and every skipped hand or file (:class:`ParseIssue`) in ``paths``.

    Files and folders (see :func:`scan_logs`) are read in order, each by the parser that
    recognises it or by ``format`` (a name from the plugin store; an unknown name raises
    :class:`PluginError`); a skipped file is one issue at line 0 with the reason.
    ``progress(n, total=None)`` is called with the number of sources once, then once per
    source read.

    >>> from cbr.logs.record import HandRecord
    >>> items = list(read_logs(["../shared/data/logs/acpc/dealer_example_limit"]))
    >>> sum(isinstance(h, HandRecord) for h in items), len(items)
    (2000, 2000)
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    sources = scan_logs(paths, format, max_file_size=max_file_size)
    if progress is not None:
        progress(0, total=len(sources))
    for source in sources:
        yield from parse_source(source, max_file_size=max_file_size)
        if progress is not None:
            progress(1)
