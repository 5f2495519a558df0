"""Cards, game definitions, the table state machine and decision points."""
from cbr.game.decision import DecisionPoint
from cbr.game.gamedef import GameDef, PRESETS, preset, standard_table

_STATE_NAMES = ("HandState", "button_position", "seats_for_hand")


def __getattr__(name: str):  # lazy: cbr.game.state imports cbr.logs.record, which imports cbr.game
    if name in _STATE_NAMES:
        from cbr.game import state

        return getattr(state, name)
    raise AttributeError(f"module 'cbr.game' has no attribute {name!r}")

__all__ = ["DecisionPoint", "GameDef", "HandState", "PRESETS", "button_position", "preset",
           "seats_for_hand", "standard_table"]
