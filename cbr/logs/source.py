"""Reading log files: the one place that opens, checks and decodes them.

Every parser reads its files through :func:`read_log_text` (or :func:`read_log_bytes` +
:func:`decode_log_bytes`), and the folder walk (:mod:`cbr.logs.detect`) sniffs formats
with :func:`read_head` and checks files with :func:`file_problem`. The rules:

- only regular files are read: a named pipe, a device (``/dev/zero``), a socket or a
  symlink loop is refused with a reason, and opening never blocks (``O_NONBLOCK``);
- files larger than a limit per file are not read (:data:`DEFAULT_MAX_FILE_SIZE`,
  256 MiB; ``--max-file-size`` or :func:`file_size_limit` changes it): the folder walk
  skips them, and a parser reading one (a file inside an IRC database) refuses it;
- text is UTF-8 (a BOM is dropped) or UTF-16/UTF-32 with a BOM; other bytes are read as
  latin-1 so parsing can go on, and that is reported with the first bad line.

>>> decode_log_bytes("STATE:0\\n".encode("utf-16"))
('STATE:0\\n', None)
>>> decode_log_bytes(b"ok\\ncaf\\xe9\\n")
('ok\\ncafé\\n', 2)
"""
from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Optional, Union

from cbr.errors import LogFormatError
from cbr.logs.record import ParseIssue

__all__ = ["DEFAULT_MAX_FILE_SIZE", "HEAD_BYTES", "decode_log_bytes", "file_problem", "file_size_limit",
           "format_size", "is_decoding_note", "parse_size", "read_head", "read_log_bytes", "read_log_text"]

PathLike = Union[str, "os.PathLike[str]"]

#: Files larger than this are skipped by the folder walk unless a larger limit is given.
DEFAULT_MAX_FILE_SIZE = 256 * 1024 * 1024
_SIZE = re.compile(r"^(\d+(?:\.\d*)?)\s*([kmgt]?)(?:i?b)?$")
#: How much of a file the format sniffers see.
HEAD_BYTES = 4096

# Longest first: the UTF-32 LE BOM starts with the UTF-16 LE BOM.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_KINDS = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
_NOTE_PREFIXES = ("not UTF-8 text", "not valid UTF-16/UTF-32")
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def format_size(n: int) -> str:
    """Bytes as text for messages.

    >>> format_size(256 * 1024 * 1024), format_size(1536), format_size(12)
    ('256 MiB', '1.5 KiB', '12 bytes')
    """
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} bytes"


def parse_size(text: str) -> int:
    """A size from ``'256M'``, ``'1G'``, ``'500k'``, ``'1.5MiB'`` or a number of bytes.

    Raises :class:`LogFormatError` (a ``ValueError``) for anything else.

    >>> parse_size("256M"), parse_size("1g"), parse_size("4096"), parse_size("1.5KiB")
    (268435456, 1073741824, 4096, 1536)
    """
    m = _SIZE.match(str(text).strip().lower())
    if m is None:
        raise LogFormatError(f"not a file size: {text!r} (examples: 256M, 1G, 500k, 4096)")
    value = float(m.group(1)) * (1 << (10 * "_kmgt".index(m.group(2) or "_")))
    if not 1 <= value < 1 << 62:
        raise LogFormatError(f"file size must be at least 1 byte and below 4 EiB, got {text!r}")
    return int(value)


_SIZE_LIMIT: ContextVar[Optional[int]] = ContextVar("cbr_log_file_size_limit", default=DEFAULT_MAX_FILE_SIZE)


@contextmanager
def file_size_limit(max_size: Optional[int]) -> Iterator[None]:
    """Within the block, parsers read files of at most ``max_size`` bytes (None: no limit).

    >>> import tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "big.log")
    >>> _ = open(p, "w").write("STATE:0\\n" * 10)
    >>> with file_size_limit(16):
    ...     try:
    ...         read_log_bytes(p)
    ...     except LogFormatError as exc:
    ...         print(str(exc).split(": ", 1)[1])
    80 bytes, larger than the 16 bytes limit per file
    >>> len(read_log_bytes(p))
    80
    """
    previous = _SIZE_LIMIT.get()
    _SIZE_LIMIT.set(max_size)
    try:
        yield
    finally:
        _SIZE_LIMIT.set(previous)


def _kind(mode: int) -> Optional[str]:
    """What a non-regular file is ("a named pipe", ...), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink loop (too many levels of symbolic links)"
    if isinstance(exc, PermissionError):
        return f"cannot be read ({exc.strerror or 'permission denied'})"
    if isinstance(exc, FileNotFoundError):
        return "no such file (a dangling symlink, or it vanished)"
    return f"cannot be read ({exc.strerror or exc})"


def file_problem(path: PathLike, max_size: Optional[int] = DEFAULT_MAX_FILE_SIZE) -> Optional[str]:
    """Why ``path`` must not be read as a log file, or None when it can be.

    Follows symlinks (a loop is a problem); refuses anything but a regular file, files
    larger than ``max_size`` bytes (None: no limit) and files that cannot be opened.
    Never blocks: a named pipe is recognised by its type, not opened for reading.

    >>> file_problem("/dev/zero")
    'a character device, not a regular file; only regular files are read'
    """
    path = os.fspath(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        return _os_reason(exc)
    kind = _kind(info.st_mode)
    if kind is not None:
        return f"{kind}, not a regular file; only regular files are read"
    if max_size is not None and info.st_size > max_size:
        return (f"{format_size(info.st_size)}, larger than the {format_size(max_size)} limit per file "
                f"(--max-file-size raises it)")
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return _os_reason(exc)
    os.close(fd)
    return None


def _open_regular(path: str) -> tuple[int, os.stat_result]:
    """A file descriptor and its stat, for a regular file only (never blocks)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except IsADirectoryError:
        raise LogFormatError(f"{path}: is a directory, not a log file") from None
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such file or directory") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LogFormatError(f"{path}: {_os_reason(exc)}") from None
        if isinstance(exc, PermissionError) and os.path.isdir(path):  # Windows refuses to open a directory
            raise LogFormatError(f"{path}: is a directory, not a log file") from None
        raise LogFormatError(f"{path}: {_os_reason(exc)}") from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise LogFormatError(f"{path}: {kind}, not a log file; only regular files are read")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_log_bytes(path: PathLike, max_size: Optional[int] = None) -> bytes:
    """The bytes of the regular file ``path``, in one open.

    Raises ``FileNotFoundError`` for a missing path and :class:`LogFormatError` for a
    directory, a pipe, a device, a symlink loop, an unreadable file ("cannot be read"), or
    a file larger than ``max_size`` bytes (None: the current :func:`file_size_limit`,
    256 MiB unless changed).

    >>> read_log_bytes("/dev/zero")
    Traceback (most recent call last):
    ...
    cbr.errors.LogFormatError: /dev/zero: a character device, not a log file; only regular files are read
    """
    path = os.fspath(path)
    if max_size is None:
        max_size = _SIZE_LIMIT.get()
    fd, info = _open_regular(path)
    try:
        if max_size is not None and info.st_size > max_size:
            raise LogFormatError(f"{path}: {format_size(info.st_size)}, larger than the "
                                 f"{format_size(max_size)} limit per file")
        want = info.st_size + 1
        data = os.read(fd, want)
        if len(data) < want:
            return data                      # a short read of a regular file is its end
        chunks = [data]
        total = len(data)
        while data:                          # the file grew since the stat
            data = os.read(fd, 1 << 20)
            chunks.append(data)
            total += len(data)
            if max_size is not None and total > max_size:
                raise LogFormatError(f"{path}: grew beyond the {format_size(max_size)} limit per file while read")
        return b"".join(chunks)
    except OSError as exc:
        raise LogFormatError(f"{path}: {_os_reason(exc)}") from None
    finally:
        os.close(fd)


def decode_log_bytes(data: bytes) -> tuple[str, Optional[int]]:
    """Text of a log file, and the 1-based line of the first undecodable byte (or None).

    A BOM picks the encoding (UTF-8, UTF-16 or UTF-32, either byte order) and is dropped;
    without one the text is UTF-8, and bytes that are not UTF-8 make the whole file read
    as latin-1 (so parsing can go on; the caller reports the line).

    >>> decode_log_bytes(b"\\xef\\xbb\\xbfhello\\n")
    ('hello\\n', None)
    >>> decode_log_bytes(b"\\xff\\xfeh\\x00i\\x00")
    ('hi', None)
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            body = data[len(bom):]
            try:
                return body.decode(encoding), None
            except UnicodeDecodeError as exc:
                text = body.decode(encoding, errors="replace")
                if encoding == "utf-8":
                    return data[len(bom):].decode("latin-1"), body.count(b"\n", 0, exc.start) + 1
                return text, text.count("\n", 0, max(text.find("\ufffd"), 0)) + 1
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return data.decode("latin-1"), data.count(b"\n", 0, exc.start) + 1


def read_log_text(path: PathLike, max_size: Optional[int] = None) -> tuple[str, Optional[ParseIssue]]:
    """The text of a log file and, when it did not decode cleanly, an issue saying so.

    See :func:`read_log_bytes` (what is refused) and :func:`decode_log_bytes` (encodings).
    The issue (a note: it skips nothing) names the first bad line.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.log")
    >>> _ = open(p, "wb").write(b"\\xef\\xbb\\xbfSTATE:0\\ncaf\\xe9\\n")
    >>> text, issue = read_log_text(p)
    >>> text.splitlines(), issue.line, issue.reason
    (['STATE:0', 'café'], 2, 'not UTF-8 text (first bad byte on this line); file read as latin-1')
    """
    path = os.fspath(path)
    data = read_log_bytes(path, max_size)
    text, bad_line = decode_log_bytes(data)
    if bad_line is None:
        return text, None
    if any(data.startswith(bom) for bom, encoding in _BOMS if encoding != "utf-8"):
        reason = f"{_NOTE_PREFIXES[1]} (first bad character on this line); undecodable bytes replaced"
    else:
        reason = f"{_NOTE_PREFIXES[0]} (first bad byte on this line); file read as latin-1"
    return text, ParseIssue(path, bad_line, reason)


def is_decoding_note(issue: ParseIssue) -> bool:
    """True for the issue :func:`read_log_text` returns (a note: the file was still read).

    >>> is_decoding_note(ParseIssue("x.log", 2, "not UTF-8 text (first bad byte on this line); file read as latin-1"))
    True
    """
    return issue.reason.startswith(_NOTE_PREFIXES)


def read_head(path: PathLike, size: int = HEAD_BYTES) -> str:
    """The first ``size`` bytes of a regular file as text, for format sniffing.

    "" for anything that is not a readable regular file (never blocks on a pipe).

    >>> read_head("/dev/zero")
    ''
    """
    try:
        fd, _ = _open_regular(os.fspath(path))
    except (OSError, LogFormatError):
        return ""
    try:
        raw = os.read(fd, size)
    except OSError:
        return ""
    finally:
        os.close(fd)
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return raw[len(bom):].decode(encoding, errors="replace")
    return raw.decode("utf-8", errors="replace")
