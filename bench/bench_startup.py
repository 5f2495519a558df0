"""Start-up time of the ``cbr`` command: ``cbr --help`` and one ``cbr query`` against the
default case base, each a fresh interpreter (subprocess), beside two floors measured in
the same run: ``python -c pass`` and ``python -c "import numpy"``.

Every command runs once untimed first (bytecode compiled, files in the page cache), then
``--runs`` times; the median and the fastest wall-clock time and the median CPU time
(user + system, which a busy machine inflates less) are printed, with ratios to the floors.
``--importtime`` also lists the slowest imports of the query (``python -X importtime``),
to show where the time goes. Aims (issue 7): ``cbr --help`` under 0.2 s, a query under
0.5 s. The children run with ``PYTHONDONTWRITEBYTECODE`` removed from their environment: with it
set (as in some containers and CI images) no ``.pyc`` is ever written and every start compiles
every module from source, which is not what an installed ``cbr`` does.

    python bench/bench_startup.py --runs 11
    python bench/bench_startup.py --runs 5 --importtime
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUERY = ["query", "--casebase", "default", "--matchstate", "MATCHSTATE:1:0::|AsKs"]


def cbr_command() -> list[str]:
    """The installed ``cbr`` script beside this interpreter, else ``python -c`` on cli.app."""
    script = Path(sys.executable).parent / "cbr"
    if script.is_file():
        return [str(script)]
    found = shutil.which("cbr")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_env() -> dict[str, str]:
    """The environment of the timed commands: bytecode caching on (see the module doc)."""
    env = dict(os.environ, COLUMNS="80")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def time_command(cmd: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU (user + system) seconds of ``runs`` fresh runs of ``cmd``, after
    one untimed run. CPU time is what a busy machine does not inflate."""
    env = child_env()
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr.decode()[-500:]}")
    wall, cpu = [], []
    for _ in range(runs):
        c0, t0 = _children_cpu(), time.perf_counter()
        subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, check=True)
        wall.append(time.perf_counter() - t0)
        cpu.append(_children_cpu() - c0)
    return wall, cpu


def slowest_imports(cmd_args: list[str], top: int = 12) -> list[tuple[float, str]]:
    """(cumulative seconds, module) of the slowest top-level imports of ``cbr cmd_args``."""
    code = "import sys; from cli import app; sys.argv[0] = 'cbr'; app()"
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *cmd_args], cwd=REPO,
                         env=child_env(), capture_output=True, text=True)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if cumulative.isdigit() and not name.startswith(" ") and "." not in name.strip():
            rows.append((int(cumulative) / 1e6, name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="timed runs per command (median reported)")
    parser.add_argument("--importtime", action="store_true", help="list the query's slowest imports")
    args = parser.parse_args()
    cbr = cbr_command()
    cases = [
        ("python -c pass (floor)", [sys.executable, "-c", "pass"], None),
        ("python -c 'import numpy' (floor)", [sys.executable, "-c", "import numpy"], None),
        ("cbr --help", [*cbr, "--help"], 0.2),
        ("cbr query (default case base)", [*cbr, *QUERY], 0.5),
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"start-up, {args.runs} fresh runs each (median, fastest); load average {load:.2f}, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    results = {}
    for name, cmd, _ in cases:
        results[name] = time_command(cmd, args.runs)
    floor = statistics.median(results[cases[0][0]][0])
    numpy_floor = statistics.median(results[cases[1][0]][0])
    print(f"{'command':<34} {'median s':>9} {'fastest s':>9} {'CPU s':>7} {'x pass':>7} {'x numpy':>8}  aim (median)")
    for name, _, aim in cases:
        wall, cpu = results[name]
        med, best = statistics.median(wall), min(wall)
        aim_text = "" if aim is None else f"< {aim} s: {'yes' if med < aim else 'no'}"
        print(f"{name:<34} {med:>9.3f} {best:>9.3f} {statistics.median(cpu):>7.3f} "
              f"{med / floor:>7.1f} {med / numpy_floor:>8.2f}  {aim_text}")
    if args.importtime:
        print("\nslowest top-level imports of the query (cumulative, one run):")
        for seconds, module in slowest_imports(QUERY):
            print(f"  {seconds:7.3f} s  {module}")


if __name__ == "__main__":
    main()
