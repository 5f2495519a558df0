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
import functools
import os
import re
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Optional

__all__ = ["fsync_dir", "fsync_file", "temp_path", "move_into_place", "atomic_write_bytes", "atomic_write_with",
           "AtomicFile", "exchange_or_replace_dir", "rename_noreplace", "pid_alive", "remove_dead_temp",
           "remove_dead_builds"]

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


def temp_path(target: str | os.PathLike[str], *, unique: bool = False) -> Path:
    """The temp name a write of ``target`` goes through: ``.<name>.tmp-<pid>`` beside it
    (same file system, so the final rename is atomic), ``.<name>.tmp-<pid>-<hex>`` when
    ``unique`` (several writers of one name in one process). :func:`remove_dead_temp`
    recognises both once their process is dead.

    >>> temp_path("/data/m.log").name == f".m.log.tmp-{os.getpid()}"
    True
    >>> bool(TEMP_RE.match(temp_path("m.log", unique=True).name))
    True
    """
    target = Path(target)
    tail = f"-{os.urandom(4).hex()}" if unique else ""  # secrets.token_hex, without importing it
    return target.with_name(f".{target.name}.tmp-{os.getpid()}{tail}")


def fsync_file(path: str | os.PathLike[str]) -> None:
    """Flush a written file's data to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def move_into_place(tmp: str | os.PathLike[str], target: str | os.PathLike[str], *, replace: bool = True) -> None:
    """Rename the written, fsync'd file ``tmp`` onto ``target`` and flush the directory.

    ``replace=False`` never replaces a ``target`` that exists (one that appeared while
    ``tmp`` was written): ``FileExistsError``, ``tmp`` left for the caller to remove.
    """
    if replace:
        os.replace(tmp, target)
    else:
        try:
            os.link(tmp, target)  # fails if the name exists
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links
            rename_noreplace(tmp, target)
            return
        os.unlink(tmp)
    fsync_dir(Path(target).parent)


def atomic_write_with(path: str | os.PathLike[str], write: Callable[[str], None]) -> None:
    """Call ``write(tmp_path)`` then fsync and rename ``tmp_path`` onto ``path``.

    The temp file sits beside ``path`` (same file system) as ``.<name>.tmp-<pid>``
    (:func:`temp_path`) and is removed if ``write`` fails.
    """
    target = Path(path)
    tmp = temp_path(target)
    try:
        write(str(tmp))
        fsync_file(tmp)
        move_into_place(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise


class AtomicFile:
    """A text file written as it goes under a unique temp name (:func:`temp_path`) and moved
    onto ``path`` by :meth:`commit` (fsync'd, then renamed; a reader sees no file or the
    whole file). ``replace=False``: the commit never replaces a file that appeared at
    ``path`` meanwhile (``FileExistsError``). :meth:`abort`, or leaving a ``with`` block by
    an exception, removes the temp file; so does a commit that fails.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> with AtomicFile(d / "hands.log") as f:
    ...     f.write("STATE:0:f:AsAh|2c3d:5|-5:a|b\\n")
    >>> os.listdir(d), (d / "hands.log").read_text()[:5]
    (['hands.log'], 'STATE')
    """

    def __init__(self, path: str | os.PathLike[str], *, replace: bool = True) -> None:
        self.path = Path(path)
        self.replace = replace
        self.tmp: Optional[Path] = temp_path(self.path, unique=True)
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self.fh: Optional[IO[str]] = os.fdopen(fd, "w", encoding="utf-8", newline="\n")

    def write(self, text: str) -> None:
        if self.fh is None:
            raise ValueError(f"{self.path} is already committed or aborted")
        self.fh.write(text)

    def commit(self) -> None:
        """Flush, fsync and move the file into place (once; later calls do nothing)."""
        if self.fh is None or self.tmp is None:
            return
        fh, tmp = self.fh, self.tmp
        self.fh = None
        try:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            move_into_place(tmp, self.path, replace=self.replace)
        except BaseException:
            fh.close()
            tmp.unlink(missing_ok=True)
            self.tmp = None
            raise
        self.tmp = None

    def abort(self) -> None:
        """Drop what was written (the target is untouched)."""
        if self.fh is not None:
            self.fh.close()
            self.fh = None
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)
            self.tmp = None

    def __enter__(self) -> "AtomicFile":
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


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

    with interrupts_held():  # a Ctrl-C inside zipfile's write became "Can't close the ZIP file" (exit 3)
        atomic_write_with(path, write)
    return Path(path)


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back while the block runs, then deliver the first that
    came to the handler in place before (a ``KeyboardInterrupt`` as usual). For short writes an
    exception in the middle would garble: ``zipfile`` turns a ``KeyboardInterrupt`` raised
    while it writes into a ``ValueError`` when it closes. Only in the main thread (signals go
    there); elsewhere it does nothing.

    >>> seen = []
    >>> before = signal.signal(signal.SIGINT, lambda sig, frame: seen.append("delivered"))
    >>> with interrupts_held():
    ...     signal.raise_signal(signal.SIGINT); seen.append("block done")
    >>> _ = signal.signal(signal.SIGINT, before)
    >>> seen
    ['block done', 'delivered']
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    before = {sig: signal.signal(sig, lambda s, _frame: came.append(s)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        if came:
            signal.raise_signal(came[0])  # the handler in place again does what it does


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


@functools.lru_cache(maxsize=1)
def _renameat2_function() -> Optional[Callable[..., int]]:
    """libc's renameat2, looked up once (finding libc runs a subprocess); None without it."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return None
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def _renameat2(a: Path, b: Path, flags: int) -> int | None:
    """Linux renameat2: 0 on success, else the errno; None when unsupported."""
    fn = _renameat2_function()
    if fn is None:
        return None
    AT_FDCWD = -100
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
