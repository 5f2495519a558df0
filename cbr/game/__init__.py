"""Cards, game definitions, the table state machine and decision points."""
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import GameDef, PRESETS, preset, standard_table

__all__ = ["DecisionPoint", "GameDef", "PRESETS", "preset", "standard_table"]
