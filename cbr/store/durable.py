"""Crash-safe file operations: write to a temp file, fsync, rename, fsync the directory.

A reader sees either the old file or the new one, never a torn write; after the call
returns the new content survives a power cut (as far as the file system honours fsync).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write_bytes(d / "x.json", b"{}")
>>> (d / "x.json").read_bytes()
b'{}'
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
from collections.abc import Callable
from pathlib import Path

__all__ = ["fsync_dir", "atomic_write_bytes", "atomic_write_with", "exchange_or_replace_dir"]


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a directory entry (a rename or a new file inside it) to disk."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def atomic_write_with(path: str | os.PathLike[str], write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` then fsync and rename ``tmp_path`` onto ``path``.

    The temp file sits beside ``path`` (same file system) as ``.<name>.tmp-<pid>`` and is
    removed if ``write`` fails.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        write(str(tmp))
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    fsync_dir(target.parent)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` by ``data`` atomically and durably."""

    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()

    atomic_write_with(path, write)


_RENAME_EXCHANGE = 2  # linux/fs.h


def _renameat2_exchange(a: Path, b: Path) -> bool:
    """Swap two directory entries atomically (Linux renameat2). False when unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD = -100
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    rc = fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def exchange_or_replace_dir(new: Path, target: Path) -> None:
    """Put directory ``new`` at ``target``, replacing an existing ``target``.

    With an existing target, Linux swaps the two entries in one atomic step (renameat2
    with RENAME_EXCHANGE) and then deletes the old tree; elsewhere the old tree is first
    renamed aside (a short window in which ``target`` is absent). Without a target it is a
    plain atomic rename.
    """
    new, target = Path(new), Path(target)
    if not target.exists():
        os.rename(new, target)
        fsync_dir(target.parent)
        return
    if _renameat2_exchange(new, target):
        fsync_dir(target.parent)
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old case base
        return
    aside = target.with_name(f".{target.name}.old-{os.getpid()}")
    os.rename(target, aside)
    os.rename(new, target)
    fsync_dir(target.parent)
    shutil.rmtree(aside, ignore_errors=True)
