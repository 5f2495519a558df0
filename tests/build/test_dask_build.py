"""Builds on Dask (``cbr build --scheduler``, cbr/build/on_dask.py): the same case base, case
for case and id for id, as the local build of a real log folder; a worker killed with
SIGKILL mid-build is replaced and its file recomputed; a failing build leaves nothing; the
local cluster never outlives the build; without ``--scheduler`` Dask is not imported."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cbr.build.local import build_casebase
from cbr.build.on_dask import build_casebase_on_dask
from cbr.errors import CBRError
from cbr.game.gamedef import STREETS
from cbr.store import CaseBase
from features.casper import CasperFeatures
from tests.conftest import REPO, require_module, shared_path

CLI = [sys.executable, "-c", "import sys; from cli import app; sys.exit(app())"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _logs() -> Path:
    return shared_path("acpc", "dealer_example_limit")


def assert_same_casebase(a: Path, b: Path) -> None:
    """Every street's cases (ids, features, action, provenance), the parts and the counts agree."""
    ca, cb = CaseBase.open(a), CaseBase.open(b)
    for s in STREETS:
        ta, tb = ca.table(s), cb.table(s)
        assert ta.num_rows == tb.num_rows, s
        assert ta.equals(tb), f"{s}: the cases differ"
        assert [(p["rows"], p["crc32"]) for p in ca.manifest.parts[s]] == \
               [(p["rows"], p["crc32"]) for p in cb.manifest.parts[s]], s
    assert ca.manifest.counts == cb.manifest.counts
    assert ca.manifest.games == cb.manifest.games
    assert ca.manifest.next_case_id == cb.manifest.next_case_id


@pytest.fixture(scope="module")
def local_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("local") / "cb"
    build_casebase([_logs()], out, workers=1)
    return out


def test_local_cluster_build_is_the_local_build(local_build: Path, tmp_path: Path) -> None:
    psutil = require_module("psutil")
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    report = build_casebase_on_dask([_logs()], tmp_path / "cb", scheduler="local", dask_workers=2)
    assert report.cases == sum(report.cases_per_street.values()) > 0
    assert_same_casebase(local_build, tmp_path / "cb")
    # the local cluster is torn down with the build: no worker process is left
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
                and "resource_tracker" not in " ".join(p.cmdline())
                and p.status() != psutil.STATUS_ZOMBIE]
        if not left:
            break
        time.sleep(0.2)
    assert not left, f"processes outlived the build: {left}"


def test_worker_killed_mid_build_is_retried(local_build: Path, tmp_path: Path) -> None:
    distributed = require_module("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        outcome: dict[str, object] = {}

        def run() -> None:
            try:
                outcome["report"] = build_casebase_on_dask([_logs()], tmp_path / "cb",
                                                           scheduler=cluster.scheduler_address)
            except BaseException as exc:  # reported to the main thread
                outcome["error"] = exc

        builder = threading.Thread(target=run)
        builder.start()
        victim = None
        deadline = time.monotonic() + 60
        while victim is None and builder.is_alive() and time.monotonic() < deadline:
            busy = [w for w, tasks in client.processing().items() if any("cbr-file" in str(t) for t in tasks)]
            if busy:
                victim = pids[busy[0]]
                os.kill(victim, signal.SIGKILL)
            else:
                time.sleep(0.01)
        builder.join(120)
        assert victim is not None, "no file task was seen running: nothing was killed"
        assert "error" not in outcome, outcome.get("error")
        with pytest.raises(ProcessLookupError):
            os.kill(victim, 0)
    assert_same_casebase(local_build, tmp_path / "cb")


class ExplodingFeatures(CasperFeatures):
    """A feature set (a plugin of the test) that fails on the first row it computes."""

    def row(self, dp):  # type: ignore[no-untyped-def]
        raise CBRError("feature computation failed on purpose")


def test_failing_build_leaves_no_casebase(tmp_path: Path) -> None:
    with pytest.raises(CBRError, match="failed on purpose"):
        build_casebase_on_dask([_logs()], tmp_path / "cb", feature_set=ExplodingFeatures(), scheduler="local",
                               dask_workers=1)
    assert os.listdir(tmp_path) == []
    with pytest.raises(CBRError, match="none of the players to keep"):
        build_casebase_on_dask([_logs()], tmp_path / "cb", players=["nobody"], scheduler="local", dask_workers=1)
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_cli_build_with_local_cluster(local_build: Path, tmp_path: Path) -> None:
    r = subprocess.run([*CLI, "build", str(_logs()), "-o", str(tmp_path / "cb"), "--scheduler", "local",
                        "--dask-workers", "2", "--json"], capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cases"] == CaseBase.open(local_build).manifest.next_case_id
    assert_same_casebase(local_build, tmp_path / "cb")


def test_cli_scheduler_usage_and_errors(tmp_path: Path) -> None:
    r = subprocess.run([*CLI, "build", str(_logs()), "-o", str(tmp_path / "x"), "--dask-workers", "2"],
                       capture_output=True, text=True, env=_env(), timeout=60)
    assert r.returncode == 2 and "--scheduler local" in r.stderr
    r = subprocess.run([*CLI, "build", str(_logs()), "-o", str(tmp_path / "x"), "--scheduler", "local", "-j", "2"],
                       capture_output=True, text=True, env=_env(), timeout=60)
    assert r.returncode == 2 and "--workers" in r.stderr
    r = subprocess.run([*CLI, "build", str(_logs()), "-o", str(tmp_path / "x"), "--scheduler", "tcp://127.0.0.1:9"],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "scheduler" in r.stderr and not (tmp_path / "x").exists()


def _cluster_workers(proc: subprocess.Popen, psutil, deadline: float) -> list:
    """The local cluster's worker processes under ``proc`` (at least 2), waiting for them
    until ``deadline``; multiprocessing's resource tracker is not a worker."""
    workers: list = []
    while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
        workers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                   if "resource_tracker" not in " ".join(p.cmdline())]
        time.sleep(0.05)
    assert len(workers) >= 2, "the local cluster's workers never started"
    return workers


def test_local_cluster_dies_with_a_killed_build(tmp_path: Path) -> None:
    psutil = require_module("psutil")
    proc = subprocess.Popen([*CLI, "build", str(_logs()), "-o", str(tmp_path / "cb"), "--scheduler", "local",
                             "--dask-workers", "2", "--json"], env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers = _cluster_workers(proc, psutil, time.monotonic() + 60)
        time.sleep(1.0)  # workers busy with the files
        proc.kill()
        proc.wait(10)
        gone, alive = psutil.wait_procs(workers, timeout=10)
        assert not alive, f"workers outlived the killed build: {alive}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert not (tmp_path / "cb").exists()


def test_no_dask_import_without_scheduler(tmp_path: Path) -> None:
    code = ("import sys; from cbr.build.local import build_casebase; "
            f"build_casebase([{str(_logs() / '2p.limit.h1000.r0.log')!r}], {str(tmp_path / 'cb')!r}, workers=1); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_index_built_in_batches_is_the_index_built_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming builds fill the faiss lists in batches: the index (its k-means sample,
    lists, bounds) and every answer are those of the one-shot fill."""
    import numpy as np

    from cbr.retrieval import faiss_backend
    from cbr.retrieval.index import CaseIndex
    from cbr.similarity import default_casper

    st = default_casper().street("flop")
    rng = np.random.default_rng(7)
    lows, highs = np.asarray(st.lows), np.asarray(st.highs)
    X = (lows + rng.random((20000, len(st.features))) * (highs - lows)).astype(np.float32)
    X[:, -1] = rng.integers(0, 4, len(X))
    whole = CaseIndex(similarity=st).fit(X).backend_
    monkeypatch.setattr(faiss_backend, "BUILD_BATCH", 3000)
    batched = CaseIndex(similarity=st).fit(X).backend_
    for name in ("_centroids", "_lo", "_hi", "_radius", "_sizes"):
        assert np.array_equal(getattr(whole, name), getattr(batched, name)), name
    Q = X[rng.choice(len(X), 50, replace=False)] + np.float32(0.01)
    for a, b in zip(whole.retrieve_batch(Q), batched.retrieve_batch(Q)):
        assert a.ids.tolist() == b.ids.tolist() and np.array_equal(a.similarities, b.similarities)


#: Copies of a 1,000-hand log the SIGTERM test builds from: about 200 CPU-seconds of features on
#: this 2-core machine, far more than any machine computes before the test stops the build.
SIGTERM_COPIES = 200


def test_sigterm_stops_a_local_cluster_build_at_once(tmp_path: Path) -> None:
    """SIGTERM while the workers compute: exit 143 with one line, every worker gone, nothing
    written. The workers are frozen (SIGSTOP) before the signal, so the build cannot end on its
    own whatever the machine's speed, and a build that waited for them to finish or to answer
    a graceful close would never stop: only killing them ends it."""
    psutil = require_module("psutil")
    logs, target = tmp_path / "logs", tmp_path / "target"
    logs.mkdir()
    target.mkdir()
    one = _logs() / "2p.limit.h1000.r0.log"
    for i in range(SIGTERM_COPIES):
        shutil.copyfile(one, logs / f"copy-{i:03d}.log")
    proc = subprocess.Popen([*CLI, "build", str(logs), "-o", str(target / "cb"), "--scheduler", "local",
                             "--dask-workers", "2"], env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    workers: list = []
    try:
        deadline = time.monotonic() + 120
        workers = _cluster_workers(proc, psutil, deadline)

        def worker_cpu() -> float:
            total = 0.0
            for p in workers:
                try:
                    t = p.cpu_times()
                    total += t.user + t.system
                except psutil.Error:
                    pass
            return total

        while worker_cpu() < 4.0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)  # started, imported, and computing features
        for p in workers:
            p.suspend()
        assert proc.poll() is None, "the build ended before it could be stopped"
        while not all(p.status() == psutil.STATUS_STOPPED for p in workers):  # SIGSTOP is delivered
            assert time.monotonic() < deadline, [(p.pid, p.status()) for p in workers]
            time.sleep(0.01)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        stopped = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for p in workers:
            try:
                p.kill()
            except psutil.Error:
                pass
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "terminated"
    assert stopped < 8, f"took {stopped:.1f} s to stop"   # tear-down only: the frozen workers do no work
    _, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive
    assert os.listdir(target) == []


def test_opponent_aware_feature_sets_are_refused_on_dask(tmp_path: Path) -> None:
    """Player models must see the hands in order; a distributed build says so in one line."""
    r = subprocess.run([*CLI, "build", str(_logs()), "-o", str(tmp_path / "x"), "--scheduler", "local",
                        "--feature-set", "casper-opp"], capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "in order" in r.stderr and "without a scheduler (--scheduler)" in r.stderr and not (tmp_path / "x").exists()


def _settings() -> dict[str, object]:
    import dask

    from cbr.build.on_dask import QUIET_CLUSTER

    return {key: dask.config.get(key) for key in QUIET_CLUSTER}


def test_the_local_cluster_runs_quiet_and_leaves_the_callers_settings_alone() -> None:
    """The cluster a build starts ticks once a second, samples no profile, checks its memory once
    a second and samples the machine every 5 s in its workers (the idle CPU they cost, see
    docs/scale-out.md); the process that started it keeps its own Dask settings."""
    require_module("distributed")
    from cbr.build.on_dask import QUIET_CLUSTER, dask_client

    before = _settings()
    client, cluster = dask_client("local", 1)
    try:
        seen = client.run(_settings)
        assert list(seen.values()) == [QUIET_CLUSTER]
        assert all(before[key] != value for key, value in QUIET_CLUSTER.items()) and _settings() == before
    finally:
        client.close()
        cluster.close()


def test_a_scheduler_address_where_nothing_listens_is_refused_at_once(tmp_path: Path) -> None:
    """Dask's client retried a refused connection for its whole 20 s timeout, then said
    'Timed out'. A port no one listens on: one error line naming the address."""
    require_module("distributed")
    import socket

    with socket.socket() as s:  # a free port, closed again: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    with pytest.raises(CBRError, match=f"cannot reach the Dask scheduler {address}: connection refused"):
        build_casebase_on_dask([_logs() / "2p.limit.h1000.r0.log"], tmp_path / "cb", scheduler=address)
    assert not (tmp_path / "cb").exists()



#: A Dask worker preload (``distributed.worker.preload``, run in each worker process as it
#: starts), for a local cluster of one worker. The first worker is SIGKILLed as its first task
#: starts (its arming by the build's ``client.run`` went well); the scheduler gives the task to
#: the worker that replaces it, which no ``client.run`` armed: its first task arms it. That
#: worker finds no room left for a new thread's stack once its first task is handed to its task
#: thread (started before, with what the build runs there imported): an address-space limit
#: just above what it has mapped and a stack larger than that, as under a memory cap
#: (tests/reliability/test_memory_cap.py does so to the process pools' workers).
CAPPED_WORKER = """
import os
import resource
import signal
import threading

import cbr.build.on_dask  # noqa: F401

MARK = {mark!r}


def dask_setup(worker):
    executor = worker.executors["default"]
    executor.submit(int).result()  # the task thread, started before the cap
    replaced = os.path.exists(MARK)
    open(MARK, "a").close()
    submit = executor.submit

    def first_task(*args, **kwargs):
        executor.submit = submit
        if not replaced:
            os.kill(os.getpid(), signal.SIGKILL)
        threading.stack_size(64 << 20)
        with open("/proc/self/status") as fh:
            used = next(int(line.split()[1]) << 10 for line in fh if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (used + (16 << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))
        return submit(*args, **kwargs)

    executor.submit = first_task
"""


@pytest.mark.time_limit(120)
def test_a_dask_worker_whose_watchdog_cannot_start_fails_the_build_quietly(tmp_path: Path,
                                                                           capfd: pytest.CaptureFixture) -> None:
    """A worker of the build's local cluster arms itself to die with the build
    (``die_with_parent``: a watchdog thread) without the start guard the process pools' workers
    have. A worker that replaces one that died is armed by its first task: a watchdog that could
    not start raised there before the filter that quiets a build task's failure was added, so
    the worker logged a ``Compute Failed`` block with its traceback on the build's stderr. Now
    the failure is kept (``start_step``) and raised by every task of the worker
    (``check_started``), quietly: the build fails with it, as a process pool's does, nothing on
    stderr, no case base."""
    require_module("distributed")
    import dask

    preload = tmp_path / "capped_worker.py"
    mark = tmp_path / "first-worker-started"
    preload.write_text(CAPPED_WORKER.format(mark=str(mark)))
    out = tmp_path / "out"
    out.mkdir()
    with dask.config.set({"distributed.worker.preload": [str(preload)]}):
        with pytest.raises(RuntimeError, match="^can't start new thread$"):
            build_casebase_on_dask([_logs()], out / "cb", scheduler="local", dask_workers=1)
    assert mark.exists() and os.listdir(out) == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Failed" not in err, err
