"""The two locks of a case base (``flock``, so they go with the process that holds them):

- the *reader lock*, shared, on the case-base directory: held by every open
  :class:`~cbr.store.CaseBase` until it closes; a writer deletes retired files only when it
  can convert its own into an exclusive one (no other reader open, in any process);
- the *write lock*, exclusive, on ``.write.lock`` inside it: held by every write (appends,
  compaction, index saves, ``cbr casebase repair``), so writes never interleave.

>>> import tempfile
>>> root = tempfile.mkdtemp()
>>> fd = reader_lock(root)
>>> with write_lock(root):
...     no_other_readers(fd)
True
>>> os.close(fd)
"""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from cbr.errors import CaseBaseError

__all__ = ["WRITE_LOCK", "reader_lock", "write_lock", "no_other_readers"]

WRITE_LOCK = ".write.lock"


def reader_lock(path: str | os.PathLike[str]) -> int | None:
    """A shared ``flock`` on the case-base directory (its fd; None where directories cannot
    be locked); raises :class:`CaseBaseError` if the directory does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except FileNotFoundError:
        raise CaseBaseError(f"no case base at {path}: the directory does not exist") from None
    except NotADirectoryError:
        raise CaseBaseError(f"{path} is not a case base: not a directory") from None
    except OSError as exc:
        raise CaseBaseError(f"cannot open the case base {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:  # pragma: no cover - a file system without flock
        os.close(fd)
        return None
    return fd


@contextmanager
def write_lock(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the case base's write lock (waits for the writer holding it)."""
    fd = os.open(os.path.join(path, WRITE_LOCK), os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)  # as open("a+")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def no_other_readers(fd: int | None) -> bool:
    """Whether no other process or handle holds the reader lock beside ``fd`` (this
    handle's own): try to take it exclusively, and give it back as shared."""
    if fd is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:  # a failed conversion may drop the shared lock: take it again
        fcntl.flock(fd, fcntl.LOCK_SH)
