"""Retained writes: the cases a case base keeps from play, appended durably to its
retention log (:mod:`cbr.store.retention_log`), and the following of what other
processes append.

One write path: :meth:`RetainedWrites.append_streets` validates the rows of one or more
streets, numbers them and commits them as ONE log record (all or none survive a crash;
one ``write`` and at most one ``fsync``, whatever the size of the case base). Two thin
wrappers name the two ways callers hold cases: :meth:`~RetainedWrites.append` (rows of one
street: tests, benchmarks, scripts) and :meth:`~RetainedWrites.retain_hand` (a hand's
decision points, through the case base's own feature set: what play retains).

The log is followed, never reread: each handle reads the records committed since it last
looked (:meth:`~RetainedWrites.refresh`, and before every append, under the write lock),
and after another process's compaction it follows the next log generation when that
generation starts exactly where its own reading ended; anything else makes it read the
case base anew.

>>> import tempfile, numpy as np
>>> from cbr.store import CaseBase
>>> from cbr.store.writer import CaseBaseWriter
>>> root = tempfile.mkdtemp()
>>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
...     ids = w.add_rows("preflop", np.ones((2, 8), np.float32), ["c", "r"])
>>> cb = CaseBase.open(f"{root}/demo")
>>> cb.append("flop", np.zeros(12, np.float32), "f", outcome=-1.0).tolist()
[2]
>>> cb.cases("flop").outcomes.tolist(), cb.cases("flop").table.column("source").to_pylist()
([-1.0], ['retained'])

:class:`RetainedWrites` is a layer of :class:`~cbr.store.CaseBase` (the one object users
open), above :class:`~cbr.store.compaction.Compaction` (an append compacts when the log has
grown long) and :class:`~cbr.store.loaded.LoadedCaseBase`: it works on the loaded state (the
logs read, the tables, arrays and indexes loaded) and the commit primitives (``_lock``,
``_collect``).
"""
from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cbr.errors import CaseBaseError, counted
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import STREETS
from cbr.store.compaction import Compaction
from cbr.store.manifest import MANIFEST, Manifest, read_manifest, write_manifest
from cbr.store.parts import RowBatch, checked_features, checked_meta, decision_meta, row_batch, street_name
from cbr.store.retention_log import Chunk, RetentionLog, start_log

__all__ = ["RetainedWrites"]

#: Rows of one street to append: ``(features, actions, meta)`` as :meth:`RetainedWrites.append` takes them.
Rows = tuple[Any, Any, dict[str, Any]]


class RetainedWrites(Compaction):
    """The writes of play and the following of the retention log (a layer of ``CaseBase``)."""

    #: Seconds between ``fsync`` calls of retained records (0: every commit); a killed
    #: process loses at most the hand in flight either way, see :mod:`cbr.store.retention_log`.
    sync_every: float = 1.0
    #: Records after which an append compacts the retention log into parts (so reading it
    #: on open stays quick; amortised, a compaction costs about as much as the appends it moves).
    compact_every: int = 2000

    def append_streets(self, batches: Mapping[str, Rows]) -> dict[str, np.ndarray]:
        """Append cases of one or more streets as ONE durable commit (a hand's decisions):
        all or none survive a crash. ``batches``: street -> ``(features, actions, meta)``
        as in :meth:`append` (``source`` defaults to ``"retained"``); returns the case ids
        per street. Cost: one record and at most one ``fsync``, whatever the size of the
        case base. Loaded indexes are extended in memory and saved on :meth:`close`.

        >>> import tempfile, numpy as np
        >>> from cbr.store import CaseBase
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
        ...     ids = w.add_rows("preflop", np.ones((2, 8), np.float32), ["c", "r"])
        >>> cb = CaseBase.open(f"{root}/demo")
        >>> ids = cb.append_streets({"preflop": (np.zeros(8), "c", {}), "flop": (np.zeros((2, 12)), "rf", {})})
        >>> {s: v.tolist() for s, v in ids.items()}, cb.count()
        ({'preflop': [2], 'flop': [3, 4]}, 5)
        """
        checked = {}
        for s, (features, actions, meta) in batches.items():
            name = street_name(s)
            checked[name] = row_batch(self.manifest.features[name], features, actions, **{"source": "retained", **meta})
        return self._append_batches(checked)

    def _append_batches(self, batches: dict[str, RowBatch]) -> dict[str, np.ndarray]:
        """:meth:`append_streets` of validated batches (street name -> rows): numbered and
        committed as one log record; returns the case ids per street, in the order given."""
        with self._lock():
            log = self._writable_log()
            next_id = log.next_id
            chunks: dict[str, Chunk] = {}
            for s in sorted(batches, key=STREETS.index):
                b = batches[s]
                chunks[s] = (np.arange(next_id, next_id + len(b), dtype=np.int64), b)
                next_id += len(b)
            log.append(chunks)
        for s, chunk in chunks.items():
            self._absorb(s, chunk)
        if log.records >= self.compact_every:
            self.compact(catalog=False)  # the DuckDB catalog (~0.2 s to write) once, on close
        return {s: chunks[s][0] for s in batches}

    def append(self, street: int | str, features: np.ndarray, actions: Sequence[str] | str,
               **meta: Any) -> np.ndarray:
        """Append rows of one street durably (:meth:`append_streets` with one street);
        returns their case ids.

        ``features``: one row (d,) or rows (n, d); ``actions``: ``'f'/'c'/'r'`` per row;
        ``meta`` as in :meth:`~cbr.store.writer.CaseBaseWriter.add_rows` (source defaults to ``"retained"``;
        ``outcome``: the hand's result in small bets per row or for all rows, None/NaN = unknown;
        ``match_id``, ``seat``, ``opponents``, ``retained_at``: provenance of play).
        """
        s = street_name(street)
        return self.append_streets({s: (features, actions, meta)})[s]

    def retain_hand(self, dps: Sequence[DecisionPoint], outcomes: Sequence[float | None] | None = None,
                    source: str | None = None, rows: Sequence[np.ndarray | None] | None = None,
                    **provenance: Any) -> list[int]:
        """Append decisions made in play (``dp.action`` set; usually one hand's) as one
        durable commit, features from this case base's own feature set (:meth:`append_streets`);
        returns their case ids in the order given. ``outcomes``: one per decision, the
        hand's net result for the player who acted in small bets of ``dp.game`` (None =
        unknown, e.g. the hand is still in play); ``source``: for every case (default: each
        decision's own, else ``"retained"``); ``rows``: one per decision, its feature row
        when the caller already computed it (it must be ``feature_set().row(dp)``, e.g. what
        the bot computed to decide), or None to compute it here; ``provenance``: scalar or
        per-decision ``match_id``, ``seat``, ``opponents``, ``retained_at``."""
        if not dps:
            return []
        n = len(dps)
        fs = self.feature_set()
        outs = list(outcomes) if outcomes is not None else [None] * n
        if len(outs) != n:
            raise ValueError(f"outcomes: {counted(len(outs), 'value')} for {counted(n, 'decision')}")
        given = list(rows) if rows is not None else [None] * n
        if len(given) != n:
            raise ValueError(f"rows: {counted(len(given), 'row')} for {counted(n, 'decision')}")
        meta = decision_meta(dps)  # the whole hand's columns, validated once
        actions = meta.pop("actions")
        meta["source"] = [source or dp.source or "retained" for dp in dps]
        meta["outcome"] = outs
        meta.update(provenance)
        acts, cols, outcome, times = checked_meta(n, actions, meta)
        by_street: dict[str, list[int]] = {}
        for i, dp in enumerate(dps):
            by_street.setdefault(STREETS[dp.street], []).append(i)
        batches: dict[str, RowBatch] = {}
        for s, idx in by_street.items():
            X = checked_features(self.manifest.features[s],
                                 np.vstack([fs.row(dps[i]) if given[i] is None else given[i] for i in idx]))
            a, b = idx[0], idx[-1] + 1
            if b - a == len(idx):  # a hand's decisions come street by street: each street a slice
                batches[s] = RowBatch(X, acts[a:b], outcome[a:b], {k: v[a:b] for k, v in cols.items()}, times[a:b])
            else:
                batches[s] = RowBatch(X, [acts[i] for i in idx], outcome[idx],
                                      {k: [v[i] for i in idx] for k, v in cols.items()}, [times[i] for i in idx])
        ids = self._append_batches(batches)
        out = [0] * n
        for s, idx in by_street.items():
            for i, cid in zip(idx, ids[s].tolist()):
                out[i] = int(cid)
        return out

    def refresh(self) -> int:
        """Read the cases other processes retained since this object last looked (new
        records of the retention log; after another process's compaction, the next log
        generation); returns how many. Costs the new records only.

        >>> import tempfile, numpy as np
        >>> from cbr.store import CaseBase
        >>> from cbr.store.writer import CaseBaseWriter
        >>> root = tempfile.mkdtemp()
        >>> with CaseBaseWriter(f"{root}/demo", build_index=False) as w:
        ...     ids = w.add_rows("flop", np.ones((2, 12), np.float32), "cr")
        >>> reader, writer = CaseBase.open(f"{root}/demo"), CaseBase.open(f"{root}/demo")
        >>> _ = reader.count("flop"); _ = writer.append("flop", np.zeros(12), "f")
        >>> reader.count("flop"), reader.refresh(), reader.count("flop")
        (2, 1, 3)
        """
        before = self.count()
        self._read_logs()
        try:
            m = self._manifest_if_replaced()
        except (OSError, CaseBaseError):
            m = None
        if m is not None:
            self._follow_generation(m)
        return self.count() - before

    # ---- following the log --------------------------------------------------------------
    def _writable_log(self) -> RetentionLog:
        """The log to append to (see :meth:`_follow_log`), with this object's ``sync_every``."""
        log = self._follow_log()
        log.sync_every = self.sync_every
        return log

    def _follow_log(self) -> RetentionLog:
        """The log to append to, after reading what other processes committed (write lock
        held): starts the first log generation, or follows a compaction by another process."""
        self._read_logs()
        m = self._manifest_if_replaced()
        if m is None and self._retention_logs():
            return self._retention_logs()[-1]  # the manifest is as we left it: only the log could grow
        if m is None:
            m = read_manifest(self.path)
        if self._follow_generation(m):
            return self._retention_logs()[-1]
        if m.log is not None or m.next_case_id != self.next_case_id:
            # cases were added that we have not read (parts written meanwhile): read anew
            self.manifest = m
            self._forget_loaded()
            return self._follow_log()
        self._collect(m)  # the first retention: start a log (one manifest commit)
        m.log = start_log(self.path)
        write_manifest(self.path, m)  # the parts are unchanged, and so is the catalog over them
        self.manifest = copy.deepcopy(m)
        self._follow_generation(m)
        return self._retention_logs()[-1]

    def _read_logs(self) -> None:
        """Take the records committed to the logs this object reads since it last looked."""
        for log in self._retention_logs():
            self._read_log(log)

    def _manifest_if_replaced(self) -> Manifest | None:
        """The manifest, if it was replaced since this object last read it here (every
        commit writes a new file: a new inode), else None."""
        st = os.stat(self.path / MANIFEST)
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return None
        m = read_manifest(self.path)
        self._stamp = stamp
        return m

    def _follow_generation(self, m: Manifest) -> bool:
        """Whether the log ``m`` names is the one this object reads, or the next generation
        (another process compacted exactly what we have read into parts), which is then read."""
        logs = self._retention_logs()
        if m.log is None:
            return False
        if logs and logs[-1].path == self.path / m.log:
            return True
        if m.next_case_id != self.next_case_id:
            return False
        log = RetentionLog(self.path / m.log, m.next_case_id)
        self._read_log(log)
        logs.append(log)
        return True
