"""Commands loaded on demand: ``cbr query`` imports the query's module, not the other eleven.

Typer builds the click command of every registered command (every option of every
command: their signatures, annotations and help) before it parses the first argument, and
registering a command means importing its module. :class:`LazyGroup` is the root group
instead: it knows each command's name and where it lives (``module:attribute``), and
imports the module and builds that one click command when the command is run or its help
shown. ``cbr --help`` still builds them all (it shows every command's summary), in the
order of the table.

The click command is built exactly as ``app.command(name)(function)`` or
``app.add_typer(sub_app, name=name)`` on the root would have built it (the same typer
functions, the root's settings), so options, help and errors are unchanged; then its
plain options get :func:`cbr.cli._coerce.plain_values` (no pydantic for ``--pot 5``).
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import typer
from typer.core import TyperGroup

from cbr.cli._coerce import plain_values


class _Commands(MutableMapping):
    """Command name -> click command, in the table's order, each built on first access."""

    def __init__(self, table: Mapping[str, str], build: Any) -> None:
        self._table = dict(table)
        self._build = build
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in self._table:
                raise KeyError(name)
            self._built[name] = self._build(name, self._table[name])
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._table.setdefault(name, "")
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._table[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)

    def __contains__(self, name: object) -> bool:
        return name in self._table


class LazyGroup(TyperGroup):
    """The root ``cbr`` group: subcommands from :data:`LazyGroup.table`, built on first use.

    ``table`` maps each command's name to ``"module:attribute"`` (a module of
    :mod:`cbr.cli`): a function becomes a command, a ``typer.Typer`` a group of commands.
    """

    table: Mapping[str, str] = {}

    def __init__(self, *, commands: Any = None, **attrs: Any) -> None:
        super().__init__(commands=None, **attrs)
        # the settings the root Typer passes down to the commands it builds itself (the root
        # keeps typer's default pretty_exceptions_short=True; only a traceback guard reads it)
        self._settings = {"pretty_exceptions_short": True, "rich_markup_mode": self.rich_markup_mode}
        self.commands = _Commands(self.table, self._build)
        plain_values(self, subcommands=False)  # --debug, --version
        for name, command in dict(commands or {}).items():  # any registered eagerly
            self.commands[name] = command

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command's name in the table's order, without building them."""
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        return self.commands[cmd_name] if cmd_name in self.commands else None

    def _build(self, name: str, where: str) -> Any:
        """The click command of ``name`` (``where`` is ``module:attribute``)."""
        module_name, attribute = where.split(":")
        target = getattr(importlib.import_module(f"cbr.cli.{module_name}"), attribute)
        # Register it on a Typer made like the root, then build it with the functions the
        # root uses for its own registrations.
        staging = typer.Typer(add_completion=False, rich_markup_mode=self.rich_markup_mode)
        if isinstance(target, typer.Typer):
            staging.add_typer(target, name=name)
            return plain_values(typer.main.get_group_from_info(
                staging.registered_groups[0], suggest_commands=self.suggest_commands, **self._settings))
        staging.command(name)(target)
        return plain_values(typer.main.get_command_from_info(staging.registered_commands[0], **self._settings))
