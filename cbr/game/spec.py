"""A game from what a user typed: a preset name, inline GameDef JSON, a GameDef JSON file
or an ACPC ``.game`` file; and the default game for a number of players.

Every problem is one :class:`~cbr.errors.ConfigError` naming the file, with ``field``
``"game"`` (the command line names it ``--game``, the server ``'game'``).

>>> load_game("holdem.limit.2p").n_players
2
>>> default_game(6).blinds[:3]
(5.0, 10.0, 0.0)
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cbr.errors import ConfigError
from cbr.game.gamedef import GameDef, preset, standard_table

__all__ = ["load_game", "game_from_dict", "default_game", "MAX_GAME_FILE"]

#: The most bytes of a game file read: a game definition is a few lines.
MAX_GAME_FILE = 64 * 1024


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def default_game(n_players: int) -> GameDef:
    """The preset ``holdem.limit.<N>p``: heads-up the ACPC game ``holdem.limit.2p``, 3 players
    the ACPC's ``holdem.limit.3p``, 4 or more the same table with more seats (blinds 5/10, bets
    10/20).

    >>> default_game(2).name, default_game(3).name, default_game(6).name, default_game(6).blinds[:3]
    ('holdem.limit.2p', 'holdem.limit.3p', 'holdem.limit.6p', (5.0, 10.0, 0.0))
    """
    name = f"holdem.limit.{n_players}p"
    try:
        return preset(name)
    except ConfigError:  # more seats than any preset: the GameDef says why it is refused
        return standard_table(name, n_players, (5, 10), 10, 20)


def load_game(spec: str, *, files: bool = True) -> GameDef:
    """A game from a preset name, inline GameDef JSON (``{...}``), a GameDef JSON file or an
    ACPC ``.game`` file; every problem is one :class:`ConfigError` naming the file, about
    the field ``game``. ``files=False`` reads no file: only a preset name or inline JSON
    (what a server accepts from its clients).

    >>> load_game("holdem.limit.2p").n_players
    2
    >>> load_game(json.dumps(load_game("holdem.limit.2p").to_dict())).name    # inline JSON
    'holdem.limit.2p'
    >>> try:
    ...     load_game("{nope")
    ... except ConfigError as exc:
    ...     exc.field, str(exc).split(" (")[0]
    ('game', 'the inline game JSON is not valid JSON')
    """
    try:
        return _load_game(spec, files)
    except ConfigError as exc:
        if not exc.fields:
            exc.fields = ("game",)
        raise


def _load_game(spec: str, files: bool) -> GameDef:
    text = spec.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"the inline game JSON is not valid JSON ({exc})") from None
        return game_from_dict(data, "the inline game JSON")
    if not files:
        return preset(text)
    path = Path(spec)
    if path.exists():
        if path.is_dir():
            raise ConfigError(f"game file {path} is a directory")
        try:
            with path.open("rb") as fh:
                raw = fh.read(MAX_GAME_FILE + 1)  # bounded: /dev/zero is a file too
        except OSError as exc:
            raise ConfigError(f"cannot read the game file {path}: {exc.strerror or exc}") from None
        if len(raw) > MAX_GAME_FILE:
            raise ConfigError(f"game file {path} is larger than {MAX_GAME_FILE // 1024} KiB: "
                              "not a game definition (a few lines)")
        try:
            body = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError(f"game file {path} is not UTF-8 text") from None
        if path.suffix.lower() == ".json" or body.lstrip().startswith("{"):
            try:
                data = json.loads(body)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"game file {path}: not JSON ({exc})") from None
            return game_from_dict(data, f"game file {path}")
        try:
            return GameDef.from_acpc_game(body, name=path.stem)
        except (ValueError, TypeError, KeyError, IndexError) as exc:  # CBR errors are ValueErrors too
            raise ConfigError(f"game file {path}: not an ACPC game definition ({_one_line(exc)})") from None
    try:
        return preset(spec)
    except ConfigError as exc:
        if any(sep in spec for sep in "/\\") or path.suffix.lower() in (".json", ".game"):
            raise ConfigError(f"unknown game {spec!r}: no such game file, and no preset of that name") from None
        raise exc from None


def game_from_dict(data: Any, where: str) -> GameDef:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object (a GameDef), got {type(data).__name__}")
    try:
        return GameDef.from_dict(data)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ConfigError(f"{where}: not a game definition ({_one_line(exc)})") from None
