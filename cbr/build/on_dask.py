"""Case-base builds on Dask (``cbr build --scheduler ADDRESS|local``): the per-file work
(parse, replay, hand features) runs as one ``dask.distributed`` task per log file; this
process writes the rows in input order, so the case base is the same, case for case and id
for id, as a build without Dask (:func:`cbr.build.local.build_casebase`).

Each file's rows are cut back into the local build's chunks of hands (chunks run across
files), so even the Parquet parts match. A worker that dies is replaced and its files are
recomputed by the scheduler (Dask's ``allowed-failures``); a task that fails, or a file
whose worker died too often, fails the build, which then leaves no case base.

``"local"`` starts a ``LocalCluster`` of worker processes (one thread each) that is closed
at the end and whose workers die with this process, even on SIGKILL. With an address, the
workers must be able to import ``cbr`` and read the log files at the same paths (a shared
file system). Dask is imported only here, and this module only when ``--scheduler`` is given.

>>> from cbr.store.parts import build_table
>>> rows = {0: build_table(["x"], 0, np.zeros((3, 1), np.float32), "ccr", hand_id=["a", "b", "c"])}
>>> fr = FileResult(records=3, hands=3, decisions=3, skipped=[], games=[], names=set(),
...                 rows=rows, hand_of_row={0: np.array([0, 1, 2])})
>>> out = []
>>> cutter = _Rechunker(2, out.append)
>>> cutter.feed(fr); cutter.close()
>>> [r.rows[0].column("hand_id").to_pylist() for r in out]
[['a', 'b'], ['c']]
"""
from __future__ import annotations

import logging
import os
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from cbr.build.local import BuildReport, ChunkResult, build_casebase, cases_of_hands, keeps_game
from cbr.build.parent import die_with_parent
from cbr.build.pools import check_started, start_step
from cbr.errors import CBRError
from cbr.game.gamedef import STREETS, GameDef
from cbr.logs.detect import LogSource, parse_source
from cbr.logs.record import HandRecord, ParseIssue
from cbr.plugins import load_feature_set
from cbr.store.parts import build_table

__all__ = ["FileResult", "file_cases", "build_on_dask", "build_casebase_on_dask", "LOCAL", "dask_client", "arm_worker",
           "kill_workers"]

LOCAL = "local"
TASK_PREFIX = "cbr-file-"       # the keys of a build's tasks
_FEATURES: dict[str, Any] = {}   # per worker process: feature sets loaded by name
_ARMED: set[int] = set()         # per worker process: die_with_parent armed for these parents


@dataclass
class FileResult:
    """What one task returns for one log file: its cases per street as Arrow tables (ids
    from 0, renumbered by the writer; cheap to send), ``hand_of_row``: the index among the
    file's hand records of each row's hand; counts, issues, games, player names."""

    records: int
    hands: int
    decisions: int
    skipped: list[ParseIssue]
    games: list[GameDef]
    names: set[str]
    rows: dict[int, pa.Table]
    hand_of_row: dict[int, np.ndarray]
    left_out: dict[str, int] = field(default_factory=dict)  # hands per game that only_games left out


class _QuietTaskFailures(logging.Filter):
    """Drops a worker's ``Compute Failed`` block (seven lines with a traceback, on the build's
    stderr) for a task of a build: the build raises that error again, and the command line
    says it in its one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        return not (str(record.msg).startswith("Compute Failed") and args
                    and str(args[0]).startswith(TASK_PREFIX))


def arm_worker(parent: Optional[int]) -> None:
    """In a worker of a local cluster: die with the building process, and leave the words on
    a failed task of the build to it (:class:`_QuietTaskFailures`; armed once), with the start
    guard of the process pools' workers (:func:`~cbr.build.pools.start_step`): what made the
    arming fail (``die_with_parent``'s watchdog thread that cannot start under an address-space
    limit, above all) is kept, not raised here, and raised by every task of the worker
    (:func:`~cbr.build.pools.check_started`, here and at the start of :func:`file_cases`), so the
    build fails with it in one line, as a process pool's does. Called by ``client.run`` once
    the cluster is up (which then raises nothing) and at the start of each task."""
    if parent is not None and parent not in _ARMED and os.getppid() == parent:
        worker_log = logging.getLogger("distributed.worker")  # first: a failed arming's task is quiet too
        if not any(isinstance(f, _QuietTaskFailures) for f in worker_log.filters):
            worker_log.addFilter(_QuietTaskFailures())
        with start_step():
            die_with_parent(parent)
        _ARMED.add(parent)  # armed once, or failed once: its tasks raise what failed
    check_started()


def _arm_worker_quietly(parent: int) -> None:
    """:func:`arm_worker` as ``client.run`` calls it on every worker once the cluster is up: what
    made a worker's arming fail is raised by its tasks, not here, as a process pool's worker's
    start failure is (one path for both, whichever arms a worker first: this, or its first task
    when it replaced a worker that died)."""
    with start_step():
        arm_worker(parent)


def file_cases(source: LogSource, feature_set: Any, players: Optional[frozenset[str]],
               max_file_size: Optional[int], parent: Optional[int] = None, chunk_hands: int = 250,
               only_games: Optional[frozenset[str]] = None) -> FileResult:
    """The task: parse one source, replay its hands, compute the rows of its cases (a pure
    function of the file, what ``cases_of_hands`` computes chunk by chunk); the hands of
    games ``only_games`` does not keep are counted, not read on (:func:`keeps_game`)."""
    arm_worker(parent)
    if isinstance(feature_set, str):
        fs = _FEATURES.get(feature_set)
        if fs is None:
            fs = _FEATURES[feature_set] = load_feature_set(feature_set)
    else:
        fs = feature_set
    records: list[HandRecord] = []
    issues: list[ParseIssue] = []
    games: dict[str, GameDef] = {}
    names: set[str] = set()
    left_out: dict[str, int] = {}
    for item in parse_source(source, max_file_size=max_file_size):
        if isinstance(item, ParseIssue):
            issues.append(item)
            continue
        if not keeps_game(item.game, only_games):
            left_out[item.game.name] = left_out.get(item.game.name, 0) + 1
            continue
        records.append(item)
        games.setdefault(item.game.name, item.game)
        names.update(item.players)
    # chunk by chunk, as the local build: the feature set's batch (prepare) and its cache
    # are sized for a chunk; a whole file at once would overflow the cache and recompute
    pieces: dict[int, list[pa.Table]] = {}
    where: dict[int, list[np.ndarray]] = {}
    hands = decisions = 0
    for start in range(0, len(records), chunk_hands):
        result = cases_of_hands(records[start:start + chunk_hands], fs, players)
        hands += result.hands
        decisions += result.decisions
        issues.extend(result.skipped)
        for street, (X, meta) in result.rows.items():
            actions = meta.pop("actions")
            pieces.setdefault(street, []).append(
                build_table(list(fs.feature_names(STREETS[street])), 0, X, actions, **meta))
            where.setdefault(street, []).append(result.hand_of_row[street] + start)
    tables = {s: pa.concat_tables(p) for s, p in pieces.items()}
    return FileResult(len(records), hands, decisions, issues, list(games.values()), names, tables,
                      {s: np.concatenate(w) for s, w in where.items()}, left_out)


class _Rechunker:
    """Cut file results back into the local build's chunks of ``size`` hand records (a
    chunk may span files) and pass each chunk's rows to ``emit`` as a ``ChunkResult``."""

    def __init__(self, size: int, emit: Callable[[ChunkResult], None]) -> None:
        self.size = size
        self.emit = emit
        self.count = 0
        self.pieces: dict[int, list[pa.Table]] = {}

    def feed(self, fr: FileResult) -> None:
        start = 0
        while start < fr.records:
            end = start + min(self.size - self.count, fr.records - start)
            for street, table in fr.rows.items():
                h = fr.hand_of_row[street]
                a, b = np.searchsorted(h, start, "left"), np.searchsorted(h, end, "left")
                if b > a:
                    self.pieces.setdefault(street, []).append(table.slice(int(a), int(b - a)))
            self.count += end - start
            start = end
            if self.count == self.size:
                self._flush()

    def _flush(self) -> None:
        rows = {street: pieces[0] if len(pieces) == 1 else pa.concat_tables(pieces)
                for street, pieces in self.pieces.items()}
        self.pieces = {}
        self.count = 0
        if rows:
            self.emit(ChunkResult(rows, 0, 0, []))

    def close(self) -> None:
        if self.count:
            self._flush()


#: Dask settings of the local cluster a build starts. Without them an idle cluster burns about
#: 0.1 CPU second per second: each process's event loop ticks every 20 ms to watch for a blocked
#: loop, each worker samples its own stack every 10 ms for the dashboard's profile, checks its
#: memory every 100 ms and every process samples its CPU, memory and disk every 500 ms for the
#: dashboard, which a build never shows. With them about 0.01 (docs/scale-out.md); the memory
#: limits are still enforced, checked once a second.
QUIET_CLUSTER = {"distributed.admin.tick.interval": "1s", "distributed.worker.profile.enabled": False,
                 "distributed.worker.memory.monitor-interval": "1s",
                 "distributed.admin.system-monitor.interval": "5s", "distributed.admin.system-monitor.disk": False}


def dask_client(scheduler: str, dask_workers: int, what: str = "a build") -> tuple[Any, Any]:
    """``(client, cluster)``: a client of the scheduler at ``scheduler``, or of a new local
    cluster (``cluster`` is then to be closed, else None). ``what`` names the work in the
    error when Dask is missing (``"a build"``, ``"a league"``)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise CBRError(f"{what} on a scheduler needs Dask ({exc}); install it: pip install 'cbr-holdem[dask]'",
                       field="scheduler") from None
    if scheduler == LOCAL:
        if dask_workers < 1:
            raise ValueError(f"dask_workers must be at least 1, got {dask_workers}")
        # loopback only; no dashboard, and its HTTP server (health checks) on a free port
        import dask

        try:
            with dask.config.set(QUIET_CLUSTER):  # read when the cluster and its workers start
                cluster = LocalCluster(n_workers=dask_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                       silence_logs=logging.ERROR)
        except Exception as exc:  # e.g. a worker process that cannot start
            raise CBRError(f"the local Dask cluster did not start: {exc}") from None
        try:
            return Client(cluster), cluster
        except BaseException:
            cluster.close()
            raise
    _probe(scheduler)
    try:
        return Client(scheduler, timeout="20s"), None
    except (OSError, TimeoutError, ValueError) as exc:
        raise CBRError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from None


def _probe(scheduler: str) -> None:
    """Fail at once when nothing listens at a ``tcp://HOST:PORT`` scheduler address (Dask's
    client retries a refused connection until its 20 s timeout, saying only "Timed out")."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(scheduler)
    if parts.scheme != "tcp":
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is not a number: Dask says what is wrong
        return
    if not host or port is None:
        return
    try:
        socket.create_connection((host, port), timeout=5).close()
    except ConnectionRefusedError:
        raise CBRError(f"cannot reach the Dask scheduler {scheduler}: connection refused (is it running?)") from None
    except OSError:
        return  # a slow or filtered network: Dask's own timeout decides


def build_casebase_on_dask(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
                           scheduler: str, dask_workers: int = 2, **options: Any) -> BuildReport:
    """:func:`cbr.build.local.build_casebase` with the per-file work on Dask: ``scheduler`` is a
    scheduler address or ``"local"`` (a local cluster of ``dask_workers`` processes);
    ``options`` are ``build_casebase``'s. The case base is the same, id for id."""
    if dask_workers < 1:
        raise ValueError(f"dask_workers must be at least 1, got {dask_workers}")

    def runner(sources: Sequence[LogSource], feature_set: Any, players: Optional[frozenset[str]], writer: Any,
               consume: Callable[[ChunkResult], None], names: set[str], **kw: Any) -> None:
        build_on_dask(scheduler, sources, feature_set, players, writer, consume, names,
                      dask_workers=dask_workers, **kw)

    return build_casebase(paths, out, runner=runner, **options)


def build_on_dask(scheduler: str, sources: Sequence[LogSource], feature_set: Any,
                  players: Optional[frozenset[str]], writer: Any, consume: Callable[[ChunkResult], None],
                  names: set[str], *, dask_workers: int = 2,
                  chunk_hands: int = 250, max_file_size: Optional[int] = None,
                  only_games: Optional[frozenset[str]] = None, left_out: Optional[dict[str, int]] = None) -> None:
    """Run :func:`file_cases` for every source on Dask, at most two files per worker in
    flight, and hand the rows to ``consume`` (and games to ``writer``) in input order."""
    client, cluster = dask_client(scheduler, dask_workers)
    parent = os.getpid() if cluster is not None else None
    pending: deque[Any] = deque()
    finished = False
    try:
        from distributed import KilledWorker

        if not isinstance(feature_set, str):  # one copy per worker, not one per task
            feature_set = client.scatter(feature_set, broadcast=True, hash=False)
        if parent is not None:
            client.run(_arm_worker_quietly, parent)
        window = 2 * max(1, sum(client.nthreads().values()) or dask_workers)
        cutter = _Rechunker(chunk_hands, consume)
        todo = iter(enumerate(sources))
        run = uuid.uuid4().hex  # task keys unique to this build on a shared scheduler

        def submit() -> None:
            for i, src in todo:
                pending.append(client.submit(file_cases, src, feature_set, players, max_file_size, parent,
                                             chunk_hands, only_games,
                                             key=f"{TASK_PREFIX}{i}-{run}", pure=False))
                return

        for _ in range(window):
            submit()
        while pending:
            future = pending.popleft()
            try:
                fr: FileResult = future.result()
            except KilledWorker as exc:
                raise CBRError(f"the Dask workers computing a log file died too often ({exc}); "
                               f"out of memory? Nothing was written") from None
            submit()
            for game in fr.games:
                writer.add_game(game)
            names.update(fr.names)
            for name, n in fr.left_out.items():
                if left_out is not None:
                    left_out[name] = left_out.get(name, 0) + n
            cutter.feed(fr)
            consume(ChunkResult({}, fr.decisions, fr.hands, fr.skipped, records=fr.records))
        cutter.close()
        finished = True
    finally:
        if cluster is not None and not finished:  # an error or Ctrl-C/SIGTERM: stop the workers now
            kill_workers(cluster)
        for future in pending:
            future.cancel()
        client.close()
        if cluster is not None:
            cluster.close()


def kill_workers(cluster: Any) -> None:
    """SIGKILL the worker processes of a local cluster (a busy worker would finish its file
    before a graceful close)."""
    import signal

    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(nanny, "pid", None)
        if isinstance(pid, int) and pid > 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # already gone
                pass
