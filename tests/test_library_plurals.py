"""The library and the commands count with the one singular/plural rule, ``cbr.errors.counted``
(``1 hand``, ``2 hands``, ``0 hands``), the rule ``tests/test_bench_scripts.py`` holds the bench
and experiment scripts to. They built about fifteen plurals of their own
(``hand{'' if n == 1 else 's'}``, ``case{'s' * (n != 1)}``, ``field{'s' if n > 1 else ''}``, which
said ``0 field``), and a table header said ``opponent(s)``."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cbr.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]

#: the two sides of a home-made plural ending: ``'' if n == 1 else 's'`` and the like
ENDINGS = {frozenset({"", "s"}), frozenset({"", "es"}), frozenset({"y", "ies"})}


def _text(node: ast.AST) -> "str | None":
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def own_plurals(source: str) -> list[tuple[int, str]]:
    """Where ``source`` builds a plural ending of its own, or writes ``word(s)``, in what it says
    (string literals and f-strings' text; not docstrings, not comments).

    >>> own_plurals("x = f\\"{n} hand{'' if n == 1 else 's'}\\"\\ny = f\\"{n} case{'s' * (n != 1)}\\"")
    [(1, "'' if / 's'"), (2, "'s' * ...")]
    >>> own_plurals("z = 'entr' + ('y' if n == 1 else 'ies')\\nw = '| opponent(s) |'")
    [(1, "'y' if / 'ies'"), (2, "'| opponent(s) |'")]
    >>> own_plurals('def f():\\n    \\"\\"\\"f(s) and g(s)\\"\\"\\"\\n    return counted(n, \\"hand\\"), "s" if suited else "o"')
    []
    """
    tree = ast.parse(source)
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp) and frozenset({_text(node.body), _text(node.orelse)}) in ENDINGS:
            found.append((node.lineno, f"{_text(node.body)!r} if / {_text(node.orelse)!r}"))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and _text(node.left) in ("s", "es"):
            found.append((node.lineno, f"{_text(node.left)!r} * ..."))
        elif _text(node) is not None and id(node) not in docstrings and re.search(r"[A-Za-z]\(s\)", _text(node) or ""):
            found.append((node.lineno, repr(_text(node))[:80]))
    return sorted(found)


def test_the_library_and_commands_count_with_the_one_plural_rule() -> None:
    """The library, the commands, and (as tests/test_bench_scripts.py reads their tokens, which
    missed ``{'' if n == 1 else 's'}``) the scripts and recipes."""
    files = sorted([*(REPO / "cbr").rglob("*.py"), REPO / "cli.py", *(REPO / "bench").rglob("*.py"),
                    *(REPO / "experiments").rglob("*.py"), *(REPO / "casebases").rglob("*.py")])
    assert sum(path.is_relative_to(REPO / "cbr") for path in files) > 100  # the whole library, not an empty glob
    found = [f"{path.relative_to(REPO)}:{line}: {what}"
             for path in files for line, what in own_plurals(path.read_text(encoding="utf-8"))]
    assert found == [], "\n".join(found)


def test_messages_that_had_their_own_plurals_say_one_and_none_right() -> None:
    """A few of the messages rewritten: one and none, which the rules of their own got wrong
    (``missing field first_to_act`` had no count; ``0 file``) or which they must keep right."""
    from cbr.build.local import no_case_built
    from cbr.game.gamedef import GameDef
    from cbr.policies.adaptive import _hands

    assert no_case_built(1, []).startswith("no cases: 1 hand read,")
    assert no_case_built(0, []).startswith("no cases: 0 hands read,")
    assert (_hands(1.2), _hands(0.2), _hands(1234)) == ("1 hand", "0 hands", "1,234 hands")
    with pytest.raises(ConfigError) as one:
        GameDef.from_dict({"name": "x", "n_players": 2, "blinds": [10, 5], "small_bet": 10, "big_bet": 20})
    assert str(one.value).endswith(": missing 1 field: first_to_act"), one.value
    with pytest.raises(ConfigError) as five:
        GameDef.from_dict({"name": "x"})
    assert str(five.value).endswith(": missing 5 fields: n_players, blinds, small_bet, big_bet, first_to_act")
