"""Cards, game definitions, actions, the table state machine and decision points."""
from cbr.game.actions import Action, ActionKind, limit_action
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import PRESETS, GameDef, preset, standard_table
from cbr.game.state import HandState, button_position, seats_for_hand

__all__ = ["Action", "ActionKind", "DecisionPoint", "GameDef", "HandState", "PRESETS", "button_position",
           "limit_action", "preset", "seats_for_hand", "standard_table"]
