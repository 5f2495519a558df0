"""Cards, game definitions, the table state machine and decision points."""
from cbr.game.gamedef import GameDef, PRESETS, preset

__all__ = ["GameDef", "PRESETS", "preset"]
