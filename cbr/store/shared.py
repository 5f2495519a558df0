"""Case bases opened once per process and shared: one handle (reader and retention writer)
for every user of a case base, counted, closed when the last user lets it go.

A server holds many bots over one case base (a ``/reuse`` spec per option set, the web
table's bots); each opening of the expert base costs about 150 MB. :func:`open_shared`
opens a case base by its resolved path the first time and hands the same
:class:`~cbr.store.casebase.CaseBase` to every later caller, each through a
:class:`SharedCaseBase` reference of its own; :meth:`SharedCaseBase.release` drops the
reference, and the last one closes the case base. A :class:`~cbr.store.casebase.CaseBase`
is not safe for two threads at once: every use of a shared one takes its :attr:`~SharedCaseBase.lock`
(re-entrant), which the readers and the writer of that case base in the process share.

>>> from cbr.store import PACKAGED_CASEBASES
>>> a = open_shared("default")
>>> b = open_shared(PACKAGED_CASEBASES / "default")
>>> a.cb is b.cb, open_count()
(True, 1)
>>> a.release(); b.cb.count() > 0
True
>>> b.release(); open_count(), b.released
(0, True)
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cbr.errors import CaseBaseError, counted

if TYPE_CHECKING:  # pragma: no cover
    from cbr.store.casebase import CaseBase

__all__ = ["SharedCaseBase", "open_shared", "open_count"]


class _Entry:
    """One open case base of the process and its users."""

    __slots__ = ("key", "cb", "lock", "refs", "extras")

    def __init__(self, key: tuple[Path, bool], cb: "CaseBase") -> None:
        self.key = key
        self.cb: "CaseBase | None" = cb
        self.lock = threading.RLock()
        self.refs = 0
        self.extras: dict[Any, Any] = {}


_entries: dict[tuple[Path, bool], _Entry] = {}
_registry_lock = threading.Lock()


class SharedCaseBase:
    """One user's reference to a case base open once in the process (:func:`open_shared`).

    ``cb``: the open :class:`~cbr.store.casebase.CaseBase` (the same object for every
    reference to it); ``lock``: the lock every use of it takes; :meth:`share`: another
    reference; :meth:`release` (or leaving a ``with`` block): this one let go, the case base
    closed with the last. Using a released reference raises
    :class:`~cbr.errors.CaseBaseError`."""

    def __init__(self, entry: _Entry) -> None:
        self._entry = entry
        self.released = False

    def __repr__(self) -> str:
        state = "released" if self.released else counted(self._entry.refs, "user")
        return f"SharedCaseBase({str(self._entry.key[0])!r}, {state})"

    def _live(self) -> _Entry:
        if self.released:
            raise CaseBaseError(f"the shared case base {self._entry.key[0]} was released by this user")
        return self._entry

    @property
    def cb(self) -> "CaseBase":
        """The open case base (take :attr:`lock` to use it)."""
        cb = self._live().cb
        assert cb is not None  # (a live reference keeps it open)
        return cb

    @property
    def lock(self) -> threading.RLock:
        """The lock every user of this case base in the process takes around its use."""
        return self._entry.lock

    @property
    def path(self) -> Path:
        """The case base's resolved path."""
        return self._entry.key[0]

    @property
    def memory_map(self) -> bool:
        return self._entry.key[1]

    def share(self) -> "SharedCaseBase":
        """Another reference to this case base (reopened if every reference was let go)."""
        return open_shared(self.path, memory_map=self.memory_map)

    def extra(self, key: Any, make: Callable[[], Any]) -> Any:
        """What the users of this case base share beside it (what they prepare from it once),
        made by ``make`` for the first asker of ``key``; dropped with the case base. Call it
        with :attr:`lock` held."""
        extras = self._live().extras
        if key not in extras:
            extras[key] = make()
        return extras[key]

    def release(self) -> None:
        """Let go of this reference (again: nothing); the last one closes the case base."""
        with _registry_lock:
            if self.released:
                return
            self.released = True
            entry = self._entry
            entry.refs -= 1
            last = entry.refs == 0
            if last:
                del _entries[entry.key]
        if last:
            with entry.lock:
                entry.extras.clear()
                cb, entry.cb = entry.cb, None  # its indexes' files go with it, whoever keeps a handle
                cb.close()

    def __enter__(self) -> "SharedCaseBase":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def open_shared(path: str | os.PathLike[str], *, memory_map: bool = False) -> SharedCaseBase:
    """A reference to the case base at ``path`` (a name or a path,
    :func:`~cbr.store.resolve_casebase`), opened now if this process does not hold it open
    yet (every spelling of one folder is one case base; ``memory_map`` opens a second one).
    Raises what :meth:`~cbr.store.casebase.CaseBase.open` raises; two threads opening one
    case base at once open it once."""
    from cbr.store import resolve_casebase
    from cbr.store.casebase import CaseBase

    key = (resolve_casebase(path).resolve(), bool(memory_map))
    with _registry_lock:  # held while opening: a second opener waits and shares it
        entry = _entries.get(key)
        if entry is None:
            entry = _Entry(key, CaseBase.open(key[0], memory_map=memory_map))
            _entries[key] = entry
        entry.refs += 1
        return SharedCaseBase(entry)


def open_count() -> int:
    """How many case bases the process holds open through :func:`open_shared`."""
    with _registry_lock:
        return len(_entries)
