"""Case bases shipped with the engine.

``casebases/default/`` is the embedded default case base, used by ``cbr query`` when no
``--casebase`` is given. It is built reproducibly from self-play of the built-in bots by
``python -m casebases.build_default`` (see that module for the recipe).
"""
import re
from pathlib import Path

#: The folder holding the shipped case bases.
HERE = Path(__file__).resolve().parent
DEFAULT = HERE / "default"


def output_root() -> Path:
    """The folder a recipe's default output is relative to: the source checkout holding this
    package when the current folder is inside it (a checkout with the editable install,
    ``pip install -e .``), else the current folder; never the installed package (a recipe run
    after ``pip install .`` wrote into site-packages).

    >>> output_root() in (HERE.parent, Path.cwd().resolve())
    True
    """
    cwd = Path.cwd().resolve()
    checkout = HERE.parent
    if (checkout / "pyproject.toml").is_file() and cwd.is_relative_to(checkout):
        return checkout
    return cwd


def description(doc: str) -> str:
    """A script's ``--help`` description: the first sentence of its docstring (which may run
    over several lines), without reStructuredText's double backticks. The recipes here, the
    scripts of bench/ and experiments/ (``experiments.common.description``) all use it.

    >>> description("The ``cfr`` bot against the\\nothers (issue 10). Writes a JSON.")
    'The cfr bot against the others (issue 10).'
    """
    text = " ".join(doc.split("\n\n")[0].split()).replace("``", "")
    first = re.match(r"(.+?[.?!])(?=\s|$)", text)
    return first.group(1) if first else text.rstrip(":,;") + "."
