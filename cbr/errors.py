"""Errors of the engine. All derive from :class:`CBRError`, the project's one base class.

Errors about bad input values also derive from ``ValueError``.
"""
import numbers
from collections.abc import Iterator

from evaluator_ext.errors import CBRError, InvalidCardError


class GameError(CBRError, ValueError):
    """An illegal action or an impossible table state (the message says why)."""


class LogFormatError(CBRError, ValueError):
    """A log line or hand that cannot be read (the message names file and line)."""


class CaseBaseError(CBRError):
    """A case base that is missing, incomplete, or of another schema version."""


class ConfigError(CBRError, ValueError):
    """A similarity or feature configuration that is not valid."""


class PluginError(CBRError):
    """A plugin that cannot be found or fails to load (the message names it)."""


class PluginFailedError(PluginError):
    """Another package's plugin raised an error while the engine used it (a bot deciding, say):
    not the engine's bug. The message names the plugin, its package and what it raised; the
    error it raised is the ``__cause__``."""


class OutputPathError(CBRError, ValueError):
    """An output path that may not be written (missing folder, a file in the way, a link,
    a device, or an existing file without ``overwrite``); the message names the path."""


class ProtocolError(CBRError, ValueError):
    """A poker-protocol peer (ACPC dealer or client) that broke the protocol: a malformed or
    out-of-turn line, a disconnect, no answer in time, or a connection that cannot be made."""


class ModelError(CBRError, ValueError):
    """An opponent-model store that is missing, in use, not a model store, or of another
    schema version (the message names the path and what to do)."""


__all__ = [
    "CBRError",
    "InvalidCardError",
    "GameError",
    "LogFormatError",
    "CaseBaseError",
    "ConfigError",
    "PluginError",
    "PluginFailedError",
    "OutputPathError",
    "ProtocolError",
    "ModelError",
    "exception_chain",
    "counted",
]


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then what caused it (``__cause__``, else ``__context__``), each once.

    >>> try:
    ...     try:
    ...         raise KeyError("inner")
    ...     except KeyError as e:
    ...         raise ConfigError("outer") from e
    ... except ConfigError as e:
    ...     [type(x).__name__ for x in exception_chain(e)]
    ['ConfigError', 'KeyError']
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]


def counted(n: "int | float", word: str, words: "str | None" = None) -> str:
    """``n`` and its noun, grouped and in the singular for one: ``1 source``, ``2,000 hands``
    (the wording of counts in messages, the library's and the commands'; a float, such as a
    number of minutes, as ``%g`` would write it).

    >>> counted(1, "source"), counted(14, "hand"), counted(2000, "file"), counted(0, "entry", "entries")
    ('1 source', '14 hands', '2,000 files', '0 entries')
    >>> counted(1.0, "minute"), counted(0.5, "minute"), counted(2.5, "minute")
    ('1 minute', '0.5 minutes', '2.5 minutes')

    A NumPy integer (a count summed from an array) is an integer too: ``1,234,567``, not ``1.23457e+06``.
    """
    text = f"{int(n):,}" if isinstance(n, numbers.Integral) else f"{n:,g}"
    return f"{text} {word if n == 1 else (words or word + 's')}"
