"""The log writers by format name: what ``cbr match --log`` and ``cbr serve-dealer --log`` open.

The writers live with the readers of their format (:mod:`cbr.logs.acpc`,
:mod:`cbr.logs.phh`) on top of the shared plumbing of :mod:`cbr.logs.output`; choosing one
by name needs them all, so it sits above them (the plumbing imports no format).

>>> LOG_FORMATS
('acpc', 'phh')
>>> open_log("x.xml", "xml")
Traceback (most recent call last):
...
cbr.errors.LogFormatError: unknown log format 'xml'; known: acpc, phh
"""
from __future__ import annotations

import os

from cbr.errors import LogFormatError
from cbr.game.gamedef import GameDef
from cbr.logs.acpc import AcpcLogWriter
from cbr.logs.phh import PhhLogWriter

__all__ = ["LOG_FORMATS", "open_log"]

#: The formats :func:`open_log` writes.
LOG_FORMATS = ("acpc", "phh")


def open_log(path: str | os.PathLike[str], fmt: str = "acpc", game: GameDef | None = None, *,
             overwrite: bool = False, make_parents: bool = False) -> AcpcLogWriter | PhhLogWriter:
    """A writer for ``fmt`` (``acpc`` or ``phh``); raises :class:`~cbr.errors.LogFormatError`
    (a ``ValueError``) for other formats.

    The command line's path rule is checked here, before any hand is played (see
    :func:`cbr.logs.output.check_output_path`): a new name in an existing folder (missing
    folders are not created unless ``make_parents``), an existing regular file only with
    ``overwrite``, or a named pipe (written through); a symbolic link, a device, a socket or
    a path under a regular file is refused with :class:`~cbr.errors.OutputPathError`.
    """
    if fmt == "acpc":
        return AcpcLogWriter(path, game, overwrite=overwrite, make_parents=make_parents)
    if fmt == "phh":
        return PhhLogWriter(path, overwrite=overwrite, make_parents=make_parents)
    raise LogFormatError(f"unknown log format {fmt!r}; known: {', '.join(LOG_FORMATS)}")
