"""Plain option values without pydantic: ``--pot 5`` becomes ``5.0`` without importing it.

typer 0.29 turns every option's text into its value through a pydantic ``TypeAdapter``
built on first use: importing pydantic and building the adapters of one command's options
is a good part of a ``cbr`` command's start-up. Most of our options are a plain ``str``,
``bool``, ``int`` or ``float`` (or a list of them) whose text is a plain number: those are converted
here, with the same result pydantic gives. Anything else (a value out of the option's
range, a number written in another form, a word where a number is expected, a parser,
a path, a choice...) goes to typer's own coercion, so its values and its error messages
are unchanged.

This reaches into typer's coercion (``typer._coercion``, a parameter's
``_runtime_param``); the version of typer is pinned in ``pyproject.toml``, and with any
other layout :func:`plain_values` leaves the command as typer built it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

try:
    from typer._coercion import RuntimeParam, build_runtime_param
except ImportError:  # pragma: no cover - another typer: its own coercion is used
    RuntimeParam = None  # type: ignore[assignment,misc]

#: Numbers written plainly (no sign but a minus, no leading zero, no space or underscore).
_INT = re.compile(r"-?(0|[1-9][0-9]{0,17})")
_FLOAT = re.compile(r"-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,15})?")
#: What :func:`plain` returns for a value it leaves to typer.
UNSURE = object()


def plain(annotation: Any, value: Any, low: Any = None, high: Any = None) -> Any:
    """``value`` as ``annotation`` (``str``, ``bool``, ``int``, ``float`` or a list of one), or
    :data:`UNSURE` when the value is not written plainly or is out of ``[low, high]``.

    >>> plain(float, "5"), plain(int, "12", 0, 20), plain(list[str], ("a", "b")), plain(bool, False)
    (5.0, 12, ['a', 'b'], False)
    >>> [plain(int, v, 0, 20) is UNSURE for v in ("21", "1.0", " 3", "x", True)]
    [True, True, True, True, True]
    """
    if getattr(annotation, "__origin__", None) is list:
        (item,) = annotation.__args__
        if not isinstance(value, (list, tuple)):
            return UNSURE
        items = [plain(item, v, low, high) for v in value]
        return UNSURE if any(v is UNSURE for v in items) else items
    kind = type(value)
    if annotation is str or annotation is bool:
        return value if kind is annotation else UNSURE
    if annotation is int:
        if kind is str and _INT.fullmatch(value):
            result = int(value)
        elif kind is int:
            result = value
        else:
            return UNSURE
    elif annotation is float:
        if kind is str and _FLOAT.fullmatch(value):
            result = float(value)
        elif kind is float or kind is int:
            result = float(value)
        else:
            return UNSURE
    else:
        return UNSURE
    if (low is not None and result < low) or (high is not None and result > high):
        return UNSURE  # typer says why
    return result


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class PlainValues(RuntimeParam):
        """A parameter's coercion: :func:`plain`, else typer's own (built when first needed)."""

        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            info = self.parameter_info
            result = plain(self.annotation, value, info.min, info.max)
            if result is not UNSURE:
                return result
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


def _simple(descriptor: Any) -> bool:
    """Whether a parameter's values can be plain: str, bool, int, float or a list of one, with no
    parser, clamping, choices, path or file handling."""
    info = descriptor.parameter_info
    annotation = descriptor.annotation
    if getattr(annotation, "__origin__", None) is list:
        annotation = annotation.__args__[0]
    return (annotation in (str, bool, int, float) and info.parser is None and not info.clamp
            and not descriptor.is_choice and not descriptor.is_path and not descriptor.is_file)


def _plain_params(params: Any) -> None:
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None or not _simple(descriptor):
            continue
        param._runtime_param = PlainValues(parameter_info=descriptor.parameter_info,
                                           annotation=descriptor.annotation, descriptor=descriptor)


def plain_values(command: Any, subcommands: bool = True) -> Any:
    """``command`` (and, for a group, its commands unless ``subcommands`` is false) with
    :class:`PlainValues` coercion on every simple parameter, ``--help`` included (made by
    click on first use); returned for chaining."""
    if RuntimeParam is None:  # pragma: no cover
        return command
    _plain_params(command.params)
    make_help = getattr(command, "get_help_option", None)
    if make_help is not None:

        def get_help_option(ctx: Any) -> Any:
            option = make_help(ctx)
            if option is not None:
                _plain_params([option])
            return option

        command.get_help_option = get_help_option
    for sub in (getattr(command, "commands", None) or {}).values() if subcommands else ():
        plain_values(sub)
    return command
