"""Case bases shipped with the engine.

``casebases/default/`` is the embedded default case base, used by ``cbr query`` when no
``--casebase`` is given. It is built reproducibly from self-play of the built-in bots by
``python -m casebases.build_default`` (see that module for the recipe).
"""
from pathlib import Path

#: The folder holding the shipped case bases.
HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "default"
