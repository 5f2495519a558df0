"""Builds at scale: peak memory, throughput and bytes written of `cbr build` on generated logs.

Run:  python3 bench/bench_scale_build.py --hands 100000 [--modes local dask1 dask2] [--logs DIR]

The logs are rule-bot self-play (:func:`cbr.play.selfplay.write_selfplay_logs`, files of
5,000 hands ``selfplay-NNNNN.log``, generated once into ``--logs``, default
``cbr-selfplay-<hands>`` in the temporary folder (``$TMPDIR``, else ``/tmp``), and found there by later runs). ``--logs`` must be a folder that
exists and holds those logs (those missing for ``--hands`` are generated), or an empty one to
generate them into. A folder holding other files beside them (logs or anything else ``cbr
build`` would read or list as skipped; a README does not count) is one ``error:`` line naming
one, exit 1, before anything is written: the build would read them too. Logs made for another ``--hands`` are not reused: the folder's
``selfplay.json`` records the run, and a folder of another run is one ``error:`` line naming both
(a folder of 20 hands was taken for ``--hands 10``, and the build read 20). Each
mode runs ``cbr build`` as a child process and samples, every 0.1 s, the resident memory of
that process and all of its children (the local cluster's workers included), so the peak
is the whole build's:

- ``local``: ``cbr build -j 1`` (no Dask); ``local2``: ``-j 2`` (a process pool);
- ``dask1`` / ``dask2``: ``cbr build --scheduler local --dask-workers 1 / 2``.

Printed per mode: wall seconds, hands/s, peak RSS of the tree (and of the largest single
process), case-base bytes, bytes per million hands (all, Parquet parts, faiss indexes),
cases per hand; and an extrapolation
to 10,000,000 hands (time at the measured rate; memory per worker stays flat, the index
grows with the cases). CPU seconds of the whole process tree are sampled too (the machine
may be shared: CPU per hand is the figure to size a cluster with). ``--json FILE`` writes
the figures.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cbr.errors import counted

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MODES = {
    "local": ["-j", "1"],
    "local2": ["-j", "2"],
    "dask1": ["--scheduler", "local", "--dask-workers", "1"],
    "dask2": ["--scheduler", "local", "--dask-workers", "2"],
}


def tree_rss(proc: "psutil.Process", cpu: dict[int, float]) -> tuple[int, int]:  # noqa: F821
    """(sum, max) of the resident memory of ``proc`` and its descendants, in bytes; the
    CPU seconds (user + system) of each process are kept in ``cpu`` by pid."""
    import psutil

    total = biggest = 0
    try:
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    for p in procs:
        try:
            with p.oneshot():
                rss = p.memory_info().rss
                t = p.cpu_times()
        except psutil.Error:
            continue
        cpu[p.pid] = t.user + t.system
        total += rss
        biggest = max(biggest, rss)
    return total, biggest


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def run(mode: str, logs: Path, hands: int) -> dict:
    import psutil

    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        out = Path(tmp) / "cb"
        cmd = [sys.executable, "-c", "import sys; from cli import app; sys.exit(app())",
               "build", str(logs), "-o", str(out), "--json", *MODES[mode]]
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
        proc = psutil.Process(child.pid)
        peak = peak_one = 0
        samples: list[tuple[float, int]] = []
        cpu: dict[int, float] = {}
        while child.poll() is None:
            total, one = tree_rss(proc, cpu)
            peak, peak_one = max(peak, total), max(peak_one, one)
            samples.append((time.perf_counter() - t0, total))
            time.sleep(0.1)
        stdout, stderr = child.communicate()
        wall = time.perf_counter() - t0
        if child.returncode != 0:
            raise SystemExit(f"{mode}: cbr build failed ({child.returncode}): {stderr.strip()[-500:]}")
        report = json.loads(stdout)
        size = du(out)
        parts, index = du(out / "cases"), du(out / "index")
    return {"mode": mode, "hands": report["hands"], "cases": report["cases"], "wall_s": round(wall, 1),
            "hands_per_s": round(report["hands"] / wall, 1),
            # CPU seconds of the whole tree (sampled every 0.1 s): less sensitive to other load than wall time
            "cpu_s": round(sum(cpu.values()), 1), "cpu_ms_per_hand": round(sum(cpu.values()) / report["hands"] * 1e3, 2),
            "peak_rss_mb": round(peak / 2**20),
            "peak_rss_largest_process_mb": round(peak_one / 2**20), "casebase_bytes": size,
            "mb_per_million_hands": round(size / report["hands"] * 1e6 / 2**20, 1),
            "parts_mb_per_million_hands": round(parts / report["hands"] * 1e6 / 2**20, 1),
            "index_mb_per_million_hands": round(index / report["hands"] * 1e6 / 2**20, 1),
            "cases_per_hand": round(report["cases"] / report["hands"], 2),
            # the tree's RSS (MB) at each tenth of the wall time: flat, or growing with the hands read?
            "rss_mb_by_tenth": [round(max((r for t, r in samples if t <= wall * k / 10), default=0) / 2**20)
                                for k in range(1, 11)]}


def logs_folder(text: str) -> Path:
    """``--logs``' type: a folder that exists and holds this script's self-play logs (or the record of
    their run, :data:`~cbr.play.selfplay.RUN_FILE`), or is empty
    (any path was taken: a file ended in a traceback, and a folder of other files got the logs
    written among them)."""
    from cbr.play.selfplay import RUN_FILE

    folder = Path(text)
    if not folder.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such folder (give a folder holding selfplay-NNNNN.log files "
                                         "of an earlier run, or an empty one to generate them into)")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder")
    if any(folder.iterdir()) and not any(folder.glob("selfplay-[0-9]*.log")) and not (folder / RUN_FILE).exists():
        raise argparse.ArgumentTypeError(f"{text} holds no self-play logs (selfplay-NNNNN.log): give a folder of an "
                                         "earlier run, or an empty one to generate them into")
    return folder


def foreign_file(folder: Path) -> "Path | None":
    """The first file in ``folder`` that ``cbr build FOLDER`` would read (or list as skipped)
    but that is not one of this script's self-play logs (``selfplay-NNNNN.log`` at its top, with
    the run's record :data:`~cbr.play.selfplay.RUN_FILE`); None when there is none. Files
    ``cbr build`` leaves out (README, hidden files) do not count; self-play logs of another run
    are :func:`~cbr.play.selfplay.write_selfplay_logs`' to refuse."""
    import re

    from cbr.logs.detect import scan_logs
    from cbr.play.selfplay import RUN_FILE

    for source in scan_logs([folder], max_file_size=None):
        path = Path(source.path)
        if path.parent != folder or not (re.fullmatch(r"selfplay-[0-9]+\.log", path.name) or path.name == RUN_FILE):
            return path
    return None


def main() -> None:
    from native_guard import help_format, json_file, parse_args, positive_int

    from casebases import description

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--hands", type=positive_int, default=100_000, help="self-play hands built from")
    ap.add_argument("--modes", nargs="+", default=["local", "dask1", "dask2"], choices=sorted(MODES), metavar="MODE",
                    help="the builds timed: local (-j 1), local2 (-j 2), dask1 or dask2 (a local Dask cluster of 1 or 2 workers)")
    ap.add_argument("--logs", type=logs_folder, default=None,
                    help="a folder holding the self-play logs, or an empty one to generate them into "
                         f"(default: cbr-selfplay-HANDS in the temporary folder, {tempfile.gettempdir()})")
    ap.add_argument("--json", type=json_file, default=None, help="also write the figures to this JSON file")
    args = parse_args(ap)
    from cbr.play.selfplay import write_selfplay_logs

    # absolute: cbr build runs in the checkout (a relative --logs was "no such file or directory")
    logs = (args.logs or Path(tempfile.gettempdir()) / f"cbr-selfplay-{args.hands}").resolve()
    other = foreign_file(logs) if logs.is_dir() else None
    if other is not None:  # the build would read it too, and the figures be of other hands than --hands
        from cbr.errors import ConfigError

        raise ConfigError(f"{logs} holds other files than this benchmark's self-play logs ({other}); cbr build "
                          f"would read them too: give a folder of self-play logs only, or an empty one")
    t0 = time.perf_counter()
    files = write_selfplay_logs(logs, args.hands)
    size = sum(f.stat().st_size for f in files)
    print(f"logs: {counted(len(files), 'file')}, {counted(args.hands, 'hand')}, {size / 2**20:.1f} MB in {logs} "
          f"({time.perf_counter() - t0:.0f} s to generate or find)", flush=True)
    results = []
    for mode in args.modes:
        r = run(mode, logs, args.hands)
        results.append(r)
        print(json.dumps(r), flush=True)
    print("\nextrapolation to 10,000,000 hands (same machine, rates as measured):")
    for r in results:
        secs = 10_000_000 / r["hands_per_s"]
        print(f"  {r['mode']:7s} {secs / 3600:6.1f} h, case base ~{r['mb_per_million_hands'] * 10 / 1024:.1f} GB, "
              f"~{r['cases_per_hand'] * 10:.0f}M cases")
    if args.json:
        args.json.write_text(json.dumps({"hands": args.hands, "log_bytes": size, "results": results}, indent=1))


if __name__ == "__main__":
    import native_guard  # its run, not this script's own run()

    native_guard.run(main)
