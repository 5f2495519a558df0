"""Synthetic ACPC logs of any size for builds at scale: rule-bot self-play
(:func:`cbr.play.match.run_match` written by :class:`~cbr.logs.acpc.AcpcLogWriter`), so every
hand is a real, legal limit hold'em hand with both hole cards shown and payoffs.

Files of ``hands_per_file`` hands, named ``selfplay-00000.log`` ...; the pairing of bots
rotates by file and each file has its own seed, so the folder is the same for the same
arguments. An existing file with the right name is kept (a generation can be resumed), but only
logs of the same run: ``selfplay.json`` beside them records it (hands, hands a file, seed), and
logs of another run are a :class:`~cbr.errors.ConfigError` naming both, never reused (a folder
of 20 hands was reused for 10, and a build from it read 20). Logs written before the record
existed are reused when their files hold exactly the hands this run would write (counted).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> [p.name for p in write_selfplay_logs(folder, 30, hands_per_file=20)]
['selfplay-00000.log', 'selfplay-00001.log']
>>> sum(line.startswith("STATE:") for p in write_selfplay_logs(folder, 30, hands_per_file=20)
...     for line in open(p))
30
>>> write_selfplay_logs(folder, 20, hands_per_file=20)  # doctest: +ELLIPSIS
Traceback (most recent call last):
cbr.errors.ConfigError: .../selfplay.json: the logs here are of another run (30 hands, 20 a file, seed 0), not of 20 hands, 20 a file, seed 0: give an empty folder
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from cbr.errors import ConfigError, counted

__all__ = ["write_selfplay_logs", "PAIRS", "RUN_FILE"]

#: Bot pairings, one per file in turn (fast rule bots: about 1,000 hands/s on one core).
PAIRS: tuple[tuple[str, str], ...] = (("lag", "station"), ("station", "lag"), ("hs", "lag"))
#: The file beside the logs that records the run they are of (not a log: ``.json`` is not read by a build).
RUN_FILE = "selfplay.json"


def _said(run: dict[str, Any]) -> str:
    hands = run.get("hands")  # a run file of another version may lack it: said as it is
    said = counted(hands, "hand") if isinstance(hands, int) else f"{hands!r} hands"
    return f"{said}, {run.get('hands_per_file')} a file, seed {run.get('seed')}"


def _check_earlier(out: Path, run: dict[str, Any]) -> bool:
    """Whether ``out`` holds logs of ``run`` already (True: its record is there); a
    :class:`~cbr.errors.ConfigError` when it holds those of another run."""
    record = out / RUN_FILE
    if record.exists():
        try:
            earlier = json.loads(record.read_text())
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{record}: cannot be read ({exc}): give an empty folder") from None
        if not isinstance(earlier, dict):
            raise ConfigError(f"{record}: not a record of a self-play run: give an empty folder")
        if earlier != run:
            raise ConfigError(f"{record}: the logs here are of another run ({_said(earlier)}), not of {_said(run)}: "
                              "give an empty folder")
        return True
    found = sorted(out.glob("selfplay-[0-9]*.log"))
    if not found:
        return False
    # logs without a record (written before it existed): reused only if they hold this run's hands
    hands, per = run["hands"], run["hands_per_file"]
    want = {f"selfplay-{i:05d}.log": min(per, hands - start) for i, start in enumerate(range(0, hands, per))}
    for path in found:
        with open(path, encoding="utf-8", errors="replace") as f:
            n = sum(line.startswith("STATE:") for line in f)
        if path.name not in want:
            raise ConfigError(f"{path}: a run of {_said(run)} writes {counted(len(want), 'file')}, not this one: these logs are "
                              "of another run; give an empty folder")
        if want[path.name] != n:
            raise ConfigError(f"{path}: {counted(n, 'hand')}, where a run of {_said(run)} writes {want[path.name]}: these logs "
                              "are of another run; give an empty folder")
    return True


def write_selfplay_logs(folder: str | os.PathLike[str], hands: int, *, hands_per_file: int = 5000,
                        seed: int = 0) -> list[Path]:
    """Write ``hands`` self-play hands as ACPC logs under ``folder`` (missing ones only, the run
    recorded in :data:`RUN_FILE`); returns the files. Logs of another run in ``folder`` are a
    :class:`~cbr.errors.ConfigError`, nothing written."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    if hands < 1 or hands_per_file < 1:
        raise ValueError(f"hands and hands_per_file must be at least 1, got {hands} and {hands_per_file}")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    run = {"hands": hands, "hands_per_file": hands_per_file, "seed": seed}
    if not _check_earlier(out, run):  # a folder without logs: the record first (a resumed run checks it)
        (out / RUN_FILE).write_text(json.dumps(run) + "\n")
    files = []
    for i, start in enumerate(range(0, hands, hands_per_file)):
        path = out / f"selfplay-{i:05d}.log"
        files.append(path)
        if path.exists():
            continue
        with AcpcLogWriter(path) as log:
            run_match(list(PAIRS[i % len(PAIRS)]), min(hands_per_file, hands - start),
                      seed=seed * 1_000_003 + i, log=log)
    return files
