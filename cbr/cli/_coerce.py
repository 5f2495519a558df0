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


def number_problem(annotation: Any, value: Any, low: Any = None, high: Any = None) -> str | None:
    """Why ``value`` (text) is no ``int`` or ``float`` of ``[low, high]``, in the words of the
    rest of the command line (one line), or None when it is one (or not a number option). NaN
    is no number of a range; an option without a range takes any float (``nan``, ``inf``: the
    command says why it cannot use one).
    typer's own coercion answers with pydantic's texts ("Input should be a valid number,
    unable to parse string as a number"); these say what was typed and what is wanted.

    >>> number_problem(float, "abc"), number_problem(float, "nan", 0.0, 1.0), number_problem(int, "1.5")
    ("'abc' is not a number", "'nan' is not a number", "'1.5' is not a whole number")
    >>> number_problem(float, "2", 0.0, 1.0), number_problem(int, "-1", 1), number_problem(float, "inf", 0.001)
    ('2 is not in the range 0.0<=x<=1.0', '-1 is not in the range x>=1', None)
    >>> number_problem(int, "12", 0, 20) is None, number_problem(float, "nan") is None, number_problem(str, "x") is None
    (True, True, True)
    """
    import math

    if getattr(annotation, "__origin__", None) is list:
        (item,) = annotation.__args__
        for v in value if isinstance(value, (list, tuple)) else ():
            problem = number_problem(item, v, low, high)
            if problem is not None:
                return problem
        return None
    if annotation not in (int, float) or not isinstance(value, str):
        return None
    text = value.strip()
    try:
        number: float = int(text) if annotation is int else float(text)
    except ValueError:
        return f"{value!r} is not {'a whole number' if annotation is int else 'a number'}"
    if low is None and high is None:  # the command checks the rest (e.g. a pot must be finite)
        return None
    if math.isnan(number):
        return f"{value!r} is not a number"
    if (low is not None and number < low) or (high is not None and number > high):
        shown = text if len(text) <= 24 else text[:21] + "..."
        bounds = (f"{low}<=x<={high}" if low is not None and high is not None  # as --help shows it
                  else f"x>={low}" if low is not None else f"x<={high}")
        return f"{shown} is not in the range {bounds}"
    return None


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
            problem = number_problem(self.annotation, value, info.min, info.max)
            if problem is not None:
                import typer

                raise typer.BadParameter(problem, ctx=ctx, param=param)
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
