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
import errno
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

__all__ = ["fsync_dir", "atomic_write_bytes", "atomic_write_with", "exchange_or_replace_dir", "rename_noreplace",
           "pid_alive", "remove_dead_temp", "remove_dead_builds"]

#: Temp names carry the writer's pid: ``.<name>.tmp-<pid>``, ``.<name>.building-<pid>-<hex>``,
#: ``.<name>.old-<pid>``, ``.tmp-<street>-<pid>-<hex>`` (index scratch directories), and the
#: ``.wal`` DuckDB leaves beside a catalog being written.
TEMP_RE = re.compile(r"^\.(?:.+\.(?:tmp|building|old)|tmp-[a-z]+)-(\d+)(?:-[0-9a-f]+)?(?:\.wal)?$")


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


def atomic_savez(path: str | os.PathLike[str], compress: bool = False, **arrays: object) -> Path:
    """``numpy.savez`` (``savez_compressed`` with ``compress``) of ``arrays`` onto ``path``
    through :func:`atomic_write_with`: a reader sees the old file or the new one, whole.

    >>> import tempfile, numpy as np
    >>> p = atomic_savez(Path(tempfile.mkdtemp()) / "a.npz", x=np.arange(3))
    >>> np.load(p)["x"].tolist()
    [0, 1, 2]
    """
    import numpy as np

    def write(tmp: str) -> None:
        with open(tmp, "wb") as fh:  # a file object: savez would add ".npz" to a name
            (np.savez_compressed if compress else np.savez)(fh, **arrays)

    atomic_write_with(path, write)
    return Path(path)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a live process of another user counts).

    >>> pid_alive(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's live process
        return True
    return True


BUILD_TEMP_RE = re.compile(r"^\..+\.(?:building-(\d+)-[0-9a-f]+|old-(\d+))$")


def remove_dead_builds(parent: str | os.PathLike[str]) -> list[str]:
    """Delete the temp folders of case-base builds in ``parent`` (``.<name>.building-<pid>-<hex>``,
    ``.<name>.old-<pid>``) whose process is dead; only folders, only those names."""
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for e in entries:
        m = BUILD_TEMP_RE.match(e.name)
        if not m or not e.is_dir(follow_symlinks=False):
            continue
        pid = int(m.group(1) or m.group(2))
        if pid == os.getpid() or pid_alive(pid):
            continue
        shutil.rmtree(e.path, ignore_errors=True)
        removed.append(e.name)
    return sorted(removed)


def remove_dead_temp(directory: str | os.PathLike[str]) -> list[str]:
    """Delete the temp files and folders in ``directory`` (see ``TEMP_RE``) whose writing
    process is dead (a crash or SIGKILL left them); returns their names. Live writers'
    temps, and this process's, are kept.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / ".manifest.json.tmp-999999999").write_text("{}")
    >>> remove_dead_temp(d), os.listdir(d)
    (['.manifest.json.tmp-999999999'], [])
    """
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for e in entries:
        m = TEMP_RE.match(e.name)
        if not m or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
        except OSError:  # gone meanwhile, or not ours to delete: leave it
            continue
        removed.append(e.name)
    return sorted(removed)


_RENAME_NOREPLACE = 1  # linux/fs.h
_RENAME_EXCHANGE = 2


def _renameat2(a: Path, b: Path, flags: int) -> int | None:
    """Linux renameat2: 0 on success, else the errno; None when unsupported."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return None
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    AT_FDCWD = -100
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    rc = fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), flags)
    if rc == 0:
        return 0
    err = ctypes.get_errno()
    return None if err in (errno.ENOSYS, errno.EINVAL) else err


def _renameat2_exchange(a: Path, b: Path) -> bool:
    """Swap two directory entries atomically (Linux renameat2). False when unsupported."""
    return _renameat2(a, b, _RENAME_EXCHANGE) == 0


def rename_noreplace(new: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Rename directory ``new`` to ``target`` only if ``target`` does not exist, in one
    atomic step (renameat2 RENAME_NOREPLACE; elsewhere ``os.rename``, which refuses an
    existing non-empty directory). Raises ``FileExistsError`` if ``target`` exists.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / "a").mkdir(); (d / "b").mkdir(); (d / "b" / "x").touch()
    >>> rename_noreplace(d / "a", d / "b")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    FileExistsError: ...
    """
    new, target = Path(new), Path(target)
    rc = _renameat2(new, target, _RENAME_NOREPLACE)
    if rc is None:
        if target.exists() and not target.is_dir():
            rc = errno.EEXIST
        else:
            try:
                os.rename(new, target)  # refuses a non-empty directory; an empty one is replaced
                rc = 0
            except OSError as exc:
                rc = exc.errno or errno.EEXIST
    if rc in (errno.EEXIST, errno.ENOTEMPTY):
        raise FileExistsError(errno.EEXIST, f"{target} appeared while this was being written", str(target))
    if rc:
        raise OSError(rc, os.strerror(rc), str(target))
    fsync_dir(target.parent)


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
