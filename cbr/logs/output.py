"""Where output goes: the one output-path rule of every command, and the plumbing the log
writers share (the :class:`HandLogWriter` protocol, the log file, the context manager).

The rule (:func:`check_output_path`), the same for every ``-o/--out/--log`` of ``cbr``:

- the folder the output goes in must exist (missing folders are never created, except
  ``./casebases``, the home of case bases, for a case base written straight into it), and
  no part of the path may be a regular file (``file.txt/out`` is refused);
- an existing output is replaced only with ``--overwrite`` (``overwrite=True``);
- a file output may not be a directory, a symbolic link, a device or a socket (a named
  pipe is written through); a folder output (a case base, an abstraction) may not be a
  regular file or a link.

Every refusal is an :class:`~cbr.errors.OutputPathError` naming the path (one ``error:``
line and exit 1 on the command line), raised before any work starts.

A log is written under a temporary name beside the target and moved into place when it
is closed without an error (:class:`cbr.store.durable.AtomicFile`), so a crash never
leaves a half-written log (a failed run leaves no log). The writers themselves live with
the readers of their format: :class:`cbr.logs.acpc.AcpcLogWriter`,
:class:`cbr.logs.phh.PhhLogWriter`; :func:`cbr.logs.writers.open_log` picks one by format name
(this module sits below the formats and imports none of them).

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> check_output_path(d / "new.log"), check_output_path(d / "cb", folder=True)
('new', 'new')
>>> check_output_path(d / "missing" / "x.log")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cbr.errors.OutputPathError: cannot write the log .../missing/x.log: folder .../missing does not exist (create it first)
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Optional, Protocol

from cbr.errors import LogFormatError, OutputPathError
from cbr.logs.record import HandRecord
from cbr.store.durable import AtomicFile

__all__ = ["HandLogWriter", "LogFile", "WriterBase", "check_output_path", "first_non_folder"]


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


def check_output_path(path: str | os.PathLike[str], *, overwrite: bool = False, make_parents: bool = False,
                      what: str = "log", folder: bool = False, home: Optional[str | os.PathLike[str]] = None) -> str:
    """Check that output may be written at ``path`` (the module docstring's rule); return
    ``"new"``, ``"file"`` (an existing regular file, with ``overwrite``), ``"fifo"`` (a named
    pipe) or ``"folder"`` (an existing folder output, with ``overwrite``).

    ``what`` names the output in messages; ``folder``: the output is a folder (a case base,
    an abstraction) rather than a file. ``home``: a folder that is created when the output
    goes straight into it (``./casebases``, the home of case bases named by a bare name);
    ``make_parents`` creates any missing folder first instead of refusing (library callers
    only; the command line never does). Raises :class:`~cbr.errors.OutputPathError`.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> (d / "f").write_text("x")
    1
    >>> check_output_path(d / "f" / "x.log")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cbr.errors.OutputPathError: cannot write the log ... is a file, not a folder
    >>> check_output_path(d / "f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cbr.errors.OutputPathError: .../f already exists; overwrite to replace it
    >>> check_output_path(d, folder=True, what="case base")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cbr.errors.OutputPathError: ... already exists; overwrite to replace it
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
        if not parent.is_dir() and home is not None and parent.absolute() == Path(home).absolute() \
                and parent.parent.is_dir():
            parent.mkdir(exist_ok=True)
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
    if folder:
        if not stat.S_ISDIR(mode):
            raise OutputPathError(f"cannot write the {what} {path}: it is a file, not a folder")
        if not overwrite:
            raise OutputPathError(f"{path} already exists; overwrite to replace it", field="overwrite")
        return "folder"
    if stat.S_ISREG(mode):
        if not overwrite:
            raise OutputPathError(f"{path} already exists; overwrite to replace it", field="overwrite")
        return "file"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISDIR(mode):
        raise OutputPathError(f"{path} is a directory; give a file name for the {what}")
    raise OutputPathError(f"{path} is a device or socket, not a regular file; refusing to write the {what} there")


class LogFile:
    """A log's text file: written under a temporary name and moved into place on commit
    (:class:`~cbr.store.durable.AtomicFile`).

    A new name is linked into place (never replacing a file that appeared meanwhile); an
    existing regular file is replaced only with ``overwrite``; a named pipe is written
    through in place (no temp file: its reader sees the hands as they are played, and
    an aborted run stops mid-stream). Everything else is refused (:func:`check_output_path`).
    """

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = True, make_parents: bool = True) -> None:
        self.path = Path(path)
        self.kind = check_output_path(self.path, overwrite=overwrite, make_parents=make_parents)
        self._atomic: Optional[AtomicFile] = None
        self._pipe: Optional[IO[str]] = None
        if self.kind == "fifo":
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    raise OutputPathError(f"named pipe {self.path} has no reader") from None
                raise
            os.set_blocking(fd, True)
            self._pipe = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        else:
            self._atomic = AtomicFile(self.path, replace=self.kind != "new")

    @property
    def open(self) -> bool:
        """Whether the log still takes lines (not yet committed or aborted)."""
        return self._pipe is not None or (self._atomic is not None and self._atomic.fh is not None)

    def write(self, text: str) -> None:
        if self._pipe is not None:
            self._pipe.write(text)
        elif self._atomic is not None and self._atomic.fh is not None:
            self._atomic.write(text)
        else:
            raise LogFormatError(f"log {self.path} is already closed")

    def commit(self) -> None:
        if self._pipe is not None:  # a named pipe: nothing to move
            pipe, self._pipe = self._pipe, None
            pipe.close()
            return
        if self._atomic is None or self._atomic.fh is None:
            return
        try:
            if self.kind != "new":
                check_output_path(self.path, overwrite=True)  # still a regular file (or gone)
            self._atomic.commit()
        except FileExistsError:
            raise OutputPathError(f"{self.path} appeared while the log was written; "
                                  f"not replaced (the log is lost)") from None
        finally:
            self._atomic.abort()  # after a commit: nothing left to do; after a refusal: the temp file goes

    def abort(self) -> None:
        if self._pipe is not None:
            pipe, self._pipe = self._pipe, None
            pipe.close()
        if self._atomic is not None:
            self._atomic.abort()


class WriterBase:
    """A log writer as a context manager: closed (committed) on success, aborted on an error."""

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
