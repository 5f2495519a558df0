"""Start-up time of the ``cbr`` command: ``cbr --help``, one ``cbr query`` against the
default case base and one ``cbr hand``, each a fresh interpreter (subprocess), beside two
floors measured in the same run: ``python -c pass`` and ``python -c "import numpy"``.

Every command runs once untimed first (bytecode compiled, files in the page cache), then
``--runs`` rounds, each round running every command once (so a change in the machine's
load touches all of them alike); the median and the fastest wall-clock time and the median
CPU time (user + system, which a busy machine inflates less) are printed, with ratios to
the floors. ``--baseline DIR`` also times the same commands from another checkout (e.g.
``git worktree add /tmp/before HEAD~1``, its C extensions built) in the same rounds, for a
before/after on the same load; both checkouts then run as ``python -c`` in their directory. ``--importtime`` also lists the slowest imports of the query
(``python -X importtime``), to show where the time goes. Aims: ``cbr --help`` under 0.2 s,
the query under 0.35 s (medians, on an idle machine). The children run with
``PYTHONDONTWRITEBYTECODE`` removed from their environment: with it set (as in some
containers and CI images) no ``.pyc`` is ever written and every start compiles every
module from source, which is not what an installed ``cbr`` does.

    python bench/bench_startup.py --runs 11
    python bench/bench_startup.py --runs 5 --importtime
    python bench/bench_startup.py --runs 21 --baseline /tmp/before
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
QUERY = ["query", "--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5"]
HAND = ["hand", "AdQc", "3h4cJh"]
#: ``cbr`` run from a checkout's directory (``cli.py`` at its root): its ``main`` (the console
#: script), or ``app`` in a checkout from before ``main`` existed.
RUN_CLI = "import sys, cli; sys.argv[0] = 'cbr'; getattr(cli, 'main', cli.app)()"


def cbr_command() -> list[str]:
    """The installed ``cbr`` script beside this interpreter, else ``python -c`` on cli.app."""
    script = Path(sys.executable).parent / "cbr"
    if script.is_file():
        return [str(script)]
    found = shutil.which("cbr")
    if found:
        return [found]
    return [sys.executable, "-c", RUN_CLI]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def child_env() -> dict[str, str]:
    """The environment of the timed commands: bytecode caching on (see the module doc)."""
    env = dict(os.environ, COLUMNS="80")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def time_commands(cases: list[tuple[str, list[str], Path]], runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Wall-clock and CPU (user + system) seconds of ``runs`` fresh runs of each command
    (``name, argv, cwd``), after one untimed run each; the runs go in rounds, every command
    once per round. CPU time is what a busy machine does not inflate."""
    env = child_env()
    for name, cmd, cwd in cases:
        out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True)
        if out.returncode != 0:
            raise SystemExit(f"{name}: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.decode()[-500:]}")
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in cases}
    for _ in range(runs):
        for name, cmd, cwd in cases:
            c0, t0 = _children_cpu(), time.perf_counter()
            subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
            times[name][0].append(time.perf_counter() - t0)
            times[name][1].append(_children_cpu() - c0)
    return times


def slowest_imports(cmd_args: list[str], top: int = 12) -> list[tuple[float, str]]:
    """(cumulative seconds, module) of the slowest top-level imports of ``cbr cmd_args``."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", RUN_CLI, *cmd_args], cwd=REPO,
                         env=child_env(), capture_output=True, text=True)
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = (part.strip() for part in line[len("import time:"):].split("|"))
        if cumulative.isdigit() and not name.startswith(" ") and "." not in name.strip():
            rows.append((int(cumulative) / 1e6, name.strip()))
    return sorted(rows, reverse=True)[:top]


def built_checkout(text: str) -> Path:
    """``--baseline``'s type: a checkout with its C extension built (without it the baseline
    runs the pure-Python evaluator: not a fair peer), checked with the other arguments, before
    this tree's extensions."""
    path = Path(text)
    if not list((path / "evaluator_ext").glob("_native*.so")):
        raise argparse.ArgumentTypeError(f"{text} has no built C extension: run `python setup.py build_ext --inplace` "
                                         "there")
    return path


def main() -> None:
    from native_guard import help_format, parse_args, positive_int

    from casebases import description

    parser = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    parser.add_argument("--runs", type=positive_int, default=11, help="timed runs per command (median reported)")
    parser.add_argument("--baseline", type=built_checkout,
                        help="another checkout whose cbr is timed in the same rounds (its C extension built)")
    parser.add_argument("--importtime", action="store_true", help="list the query's slowest imports")
    args = parse_args(parser)
    # with a baseline both checkouts run the same way (python -c in their directory)
    cbr = [sys.executable, "-c", RUN_CLI] if args.baseline is not None else cbr_command()
    aims = {"cbr --help": 0.2, "cbr query": 0.35}
    cases = [
        ("python -c pass (floor)", [sys.executable, "-c", "pass"], REPO),
        ("python -c 'import numpy' (floor)", [sys.executable, "-c", "import numpy"], REPO),
        ("cbr --help", [*cbr, "--help"], REPO),
        ("cbr query", [*cbr, *QUERY], REPO),
        ("cbr hand", [*cbr, *HAND], REPO),
    ]
    if args.baseline is not None:
        base = [sys.executable, "-c", RUN_CLI]
        cases += [("baseline: cbr --help", [*base, "--help"], args.baseline),
                  ("baseline: cbr query", [*base, *QUERY], args.baseline),
                  ("baseline: cbr hand", [*base, *HAND], args.baseline)]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"start-up, {args.runs} fresh runs each (median, fastest); load average {load:.2f}, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"  cbr query = cbr {' '.join(QUERY)}\n  cbr hand = cbr {' '.join(HAND)}")
    results = time_commands(cases, args.runs)
    floor = statistics.median(results[cases[0][0]][0])
    numpy_floor = statistics.median(results[cases[1][0]][0])
    print(f"{'command':<34} {'median s':>9} {'fastest s':>9} {'CPU s':>7} {'x pass':>7} {'x numpy':>8}  aim (median)")
    for name, _, _ in cases:
        wall, cpu = results[name]
        med, best = statistics.median(wall), min(wall)
        aim = aims.get(name)
        aim_text = "" if aim is None else f"< {aim} s: {'yes' if med < aim else 'no'}"
        print(f"{name:<34} {med:>9.3f} {best:>9.3f} {statistics.median(cpu):>7.3f} "
              f"{med / floor:>7.1f} {med / numpy_floor:>8.2f}  {aim_text}")
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at the end {load_after:.2f}")
    if args.importtime:
        print("\nslowest top-level imports of the query (cumulative, one run):")
        for seconds, module in slowest_imports(QUERY):
            print(f"  {seconds:7.3f} s  {module}")


if __name__ == "__main__":
    from native_guard import run

    run(main)
