"""Which parser reads a log, and reading many logs at once.

:func:`detect_format` asks every parser of the plugin store (entry-point group
``cbr.parsers``) whether it recognises a file; :func:`read_logs` walks files and
directories and yields every hand and every skipped hand, in order;
:func:`read_log_text` is the one way parsers decode a file (UTF-8, BOM removed,
latin-1 as a fallback that is reported).

>>> from cbr.logs.detect import detect_format
>>> detect_format("../shared/data/logs/acpc/dealer_example_limit/2p.limit.h1000.r0.log")
'acpc'
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Optional, Union

from cbr import plugins
from cbr.errors import LogFormatError, PluginError
from cbr.logs.record import HandRecord, ParseIssue

Progress = Callable[..., None]
PathLike = Union[str, "os.PathLike[str]"]

HEAD_BYTES = 4096
# Files that sit beside logs and are never logs (skipped silently when a folder is walked).
_NOT_LOGS = {"readme", "readme.md", "readme.txt", "source.md", "license", "license.md", "license.txt",
             "index.md", "copying", "notice", ".gitignore", ".ds_store"}
_NOT_LOG_EXT = {".md", ".rst", ".py", ".json", ".csv", ".parquet", ".zip", ".gz", ".tar", ".png", ".jpg", ".pdf"}


def read_log_text(path: PathLike) -> tuple[str, Optional[ParseIssue]]:
    """The text of a log file and, when it is not valid UTF-8, an issue saying so.

    UTF-8 (a BOM is dropped) is tried first; bytes that are not UTF-8 are read as latin-1
    so parsing can go on, and the returned :class:`ParseIssue` names the first bad line.
    Raises ``FileNotFoundError``/:class:`LogFormatError` only when the path cannot be read.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.log")
    >>> _ = open(p, "wb").write(b"\\xef\\xbb\\xbfSTATE:0\\ncaf\\xe9\\n")
    >>> text, issue = read_log_text(p)
    >>> text.splitlines(), issue.line
    (['STATE:0', 'café'], 2)
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise LogFormatError(f"{path}: is a directory, not a log file") from None
    except PermissionError as exc:
        raise LogFormatError(f"{path}: cannot be read ({exc.strerror})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        issue = ParseIssue(path, line, f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); file read as latin-1")
        return data.decode("latin-1"), issue


def _head(path: str) -> str:
    """First 4 KiB of a file as text ("" for a directory or an unreadable file)."""
    if os.path.isdir(path):
        return ""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(HEAD_BYTES)
    except OSError:
        return ""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", errors="replace")


def _parsers() -> dict[str, Any]:
    """Instances of every parser plugin that loads (a broken plugin is left out)."""
    found: dict[str, Any] = {}
    for name in plugins.available("cbr.parsers"):
        try:
            found[name] = _instance(name)
        except PluginError:
            continue
    return found


_INSTANCES: dict[str, Any] = {}


def _instance(name: str) -> Any:
    if name not in _INSTANCES:
        obj = plugins.load("cbr.parsers", name)
        _INSTANCES[name] = obj() if isinstance(obj, type) else obj
    return _INSTANCES[name]


def parser_for(format: str) -> Any:
    """The parser plugin named ``format``; :class:`PluginError` lists the known names.

    >>> parser_for("acpc").name
    'acpc'
    """
    known = plugins.available("cbr.parsers")
    if format not in known:
        raise PluginError(f"unknown log format {format!r}; known formats: {', '.join(known)}")
    return _instance(format)


def _sniff(path: str, parsers: dict[str, Any]) -> Optional[str]:
    head = _head(path)
    ext = os.path.splitext(path)[1].lower()
    # Parsers that claim the extension are asked first, then the rest.
    ordered = sorted(parsers.items(), key=lambda kv: ext not in getattr(kv[1], "extensions", ()))
    for name, parser in ordered:
        try:
            if parser.sniff(path, head):
                return name
        except Exception:  # a sniff must never stop the walk  # noqa: BLE001
            continue
    return None


def detect_format(path: PathLike) -> str:
    """The name of the parser that reads ``path`` (a file, or an IRC database folder).

    Raises ``FileNotFoundError`` for a missing path and :class:`LogFormatError` when no
    parser recognises it.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    name = _sniff(path, _parsers())
    if name is None:
        raise LogFormatError(f"{path}: not a log any parser recognises "
                             f"(formats: {', '.join(plugins.available('cbr.parsers'))})")
    return name


def _is_candidate(name: str) -> bool:
    low = name.lower()
    return low not in _NOT_LOGS and os.path.splitext(low)[1] not in _NOT_LOG_EXT and not low.startswith(".")


def log_sources(paths: Iterable[PathLike], format: Optional[str] = None) -> list[tuple[str, Optional[str]]]:
    """Expand ``paths`` into ``(source, format)`` pairs, directories walked recursively.

    A folder that a parser recognises as a whole (an IRC database: ``hdb`` + ``hroster`` +
    ``pdb/``) is one source. Files no parser recognises are left out when found in a
    folder, and kept with format None when named explicitly (the reader reports them).
    With ``format`` given, every file found is given to that parser.
    """
    parsers = _parsers() if format is None else {format: parser_for(format)}
    out: list[tuple[str, Optional[str]]] = []
    for p in paths:
        p = os.fspath(p)
        if not os.path.exists(p):
            raise FileNotFoundError(f"{p}: no such file or directory")
        if not os.path.isdir(p):
            out.append((p, format or _sniff(p, parsers)))
            continue
        _walk(p, parsers, format, out)
    return out


def _walk(folder: str, parsers: dict[str, Any], format: Optional[str], out: list) -> None:
    as_whole = _sniff_dir(folder, parsers)
    if as_whole is not None:
        out.append((folder, as_whole))
        return
    try:
        entries = sorted(os.scandir(folder), key=lambda e: _natural_key(e.name))
    except OSError as exc:
        raise LogFormatError(f"{folder}: cannot be listed ({exc.strerror})") from None
    for entry in entries:
        if entry.is_dir():
            if not entry.name.startswith("."):
                _walk(entry.path, parsers, format, out)
        elif _is_candidate(entry.name):
            name = format or _sniff(entry.path, parsers)
            if name is not None:
                out.append((entry.path, format or name))


def _sniff_dir(folder: str, parsers: dict[str, Any]) -> Optional[str]:
    for name, parser in parsers.items():
        try:
            if parser.sniff(folder, ""):
                return name
        except Exception:  # noqa: BLE001
            continue
    return None


def _natural_key(name: str) -> tuple:
    """Sort ``2.phh`` before ``10.phh``."""
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def read_logs(
    paths: Union[PathLike, Iterable[PathLike]],
    format: Optional[str] = None,
    progress: Optional[Progress] = None,
) -> Iterator[HandRecord | ParseIssue]:
    """Every hand (:class:`HandRecord`) and every skipped hand (:class:`ParseIssue`) in ``paths``.

    Files and folders (walked recursively; README/SOURCE/LICENSE and other non-logs are
    skipped) are read in order, each by the parser that recognises it or by ``format``
    (a name from the plugin store; an unknown name raises :class:`PluginError`).
    ``progress(n, total=None)`` is called with the number of sources once, then once per
    source read.

    >>> from cbr.logs.record import HandRecord
    >>> items = list(read_logs(["../shared/data/logs/acpc/dealer_example_limit"]))
    >>> sum(isinstance(h, HandRecord) for h in items), len(items)
    (2000, 2000)
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    sources = log_sources(paths, format)
    if progress is not None:
        progress(0, total=len(sources))
    for source, name in sources:
        if name is None:
            yield ParseIssue(source, 0, "not a log any parser recognises; file skipped")
        else:
            yield from _instance(name).parse(source)
        if progress is not None:
            progress(1)
