"""Synthetic ACPC logs of any size for builds at scale: rule-bot self-play
(:func:`cbr.play.match.run_match` written by :class:`~cbr.logs.acpc.AcpcLogWriter`), so every
hand is a real, legal limit hold'em hand with both hole cards shown and payoffs.

Files of ``hands_per_file`` hands, named ``selfplay-00000.log`` ...; the pairing of bots
rotates by file and each file has its own seed, so the folder is the same for the same
arguments. An existing file with the right name is kept (a generation can be resumed).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> [p.name for p in write_selfplay_logs(folder, 30, hands_per_file=20)]
['selfplay-00000.log', 'selfplay-00001.log']
>>> sum(line.startswith("STATE:") for p in write_selfplay_logs(folder, 30, hands_per_file=20)
...     for line in open(p))
30
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_selfplay_logs", "PAIRS"]

#: Bot pairings, one per file in turn (fast rule bots: about 1,000 hands/s on one core).
PAIRS: tuple[tuple[str, str], ...] = (("lag", "station"), ("station", "lag"), ("hs", "lag"))


def write_selfplay_logs(folder: str | os.PathLike[str], hands: int, *, hands_per_file: int = 5000,
                        seed: int = 0) -> list[Path]:
    """Write ``hands`` self-play hands as ACPC logs under ``folder``; returns the files."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    if hands < 1 or hands_per_file < 1:
        raise ValueError(f"hands and hands_per_file must be at least 1, got {hands} and {hands_per_file}")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
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
