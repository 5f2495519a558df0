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


#: Nouns a count says ("1 hand", "3 cases"): ``f"{n} hands"`` says "1 hands" when n is 1.
COUNT_NOUNS = frozenset("""
    actions bases blocks boards bots buckets cards cases chunks clients clusters columns connections decisions
    deals entries errors evaluations experiments features fields files folders games hands holdings issues items lines
    logs matches minutes models names opponents outcomes pairings parts players plugins points positions
    processes queries records repeats requests rounds rows runouts runs samples seats seconds sessions shards
    situations sources spots steps streets tables tasks trials triples values workers iterations
""".split())

#: Where a placeholder before a count noun is no count, or its count is never one: (file, the
#: placeholder's expression, the noun) and why. Each must still be there (a stale one fails).
NOT_COUNTS = {
    ("cbr/game/situation.py", "game.name", "seats"): "a verb: the game seats N players",
    ("cbr/acpc/client.py", "ch.peer", "deals"): "a verb: the peer deals a game",
    ("cbr/cli/play.py", "seed", "deals"): "a verb: --seed N deals these cards again",
    ("cbr/cli/play.py", "game", "seats"): "a verb: --game NAME seats N players",
    ("cbr/serve/engine.py", "said", "names"): "a verb: the field names a file",
    ("cbr/policies/cbr_policy.py", "street", "cases"): "a street's name: no flop cases",
    ("cbr/query/answer.py", "street", "cases"): "a street's name: no flop cases",
    ("cbr/query/evaluate.py", "name", "cases"): "a street's name: no flop cases",
    ("cbr/store/casebase.py", "s", "cases"): "a street's name: the flop cases asked for",
    ("cbr/cli/casebase.py", "s", "features"): "a street's name: a table of the flop features",
    ("cbr/cli/casebase.py", "TABLE_ROWS", "rows"): "a constant, 1,000, never one (help text: counted would load numpy for --help)",
    ("cbr/store/catalog.py", "s", "parts"): "a street's name: the view over the flop parts",
    ("cbr/store/verify.py", "street", "cases"): "a street's name: rebuilt from the flop cases",
    ("cbr/abstraction/distribution.py", "s", "buckets"): "a street's name: flop buckets must be 1..65534",
    ("cbr/cli/abstraction.py", "abstraction.kind", "buckets"): "the kind of buckets (EHS, EMD)",
    ("cbr/cfr/headsup.py", "probs.shape", "entries"): "an array's shape, not a count",
    ("cbr/store/retention_log.py", "sound", "records"): "the count is more than one here (one is said apart)",
    ("cbr/serve/table.py", "seconds", "seconds"): "below one second: 0.5 seconds",
    ("bench/acpc_reference_interop.py", "fields[1]", "hands"): "a field of a peer's output, as text",
    ("experiments/predictor_in_play.py", "opponent", "models"): "a verb: the opponent models",
}


def _source(node: ast.AST, source: str) -> str:
    return ast.get_source_segment(source, node) or ast.unparse(node)


def count_plurals(source: str) -> list[tuple[int, str, str]]:
    """Where an f-string writes a formatted value then a space and a count noun (:data:`COUNT_NOUNS`):
    ``f"{n:,} hands"``, which says "1 hands"; ``counted(n, "hand")`` says "1 hand". A value
    written with ``!r`` (a name, quoted) and a rate (``hands/s``, ``hands per second``) are not
    counts. Each as (line, the value's expression, the noun).

    >>> count_plurals('a = f"retained {n:,} cases"\\nb = f"{len(x)} hands read, {y} hands/s"')
    [(1, 'n', 'cases'), (2, 'len(x)', 'hands')]
    >>> count_plurals("c = f'{counted(n, WORD)} read, {name!r} names {k} hand'")
    []
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.JoinedStr):
            continue
        for value, after in zip(node.values, node.values[1:]):
            if not (isinstance(value, ast.FormattedValue) and value.conversion == -1 and _text(after)):
                continue
            word = re.match(r" ([a-z]+)(?![a-z/]| per )", _text(after) or "")
            if word and word.group(1) in COUNT_NOUNS:
                found.append((node.lineno, ast.unparse(value.value), word.group(1)))
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


def _script_files() -> list[Path]:
    return sorted([*(REPO / "cbr").rglob("*.py"), REPO / "cli.py", *(REPO / "bench").rglob("*.py"),
                   *(REPO / "experiments").rglob("*.py"), *(REPO / "casebases").rglob("*.py")])


def test_counts_in_messages_say_one_in_the_singular() -> None:
    """``retained {n:,} cases``, ``over {hands:,} hands``, ``{n} hands read`` said "1 cases" and
    "1 hands": an f-string's count before its noun is ``counted(n, "case")``, in the library,
    the commands, the scripts and the recipes, but where :data:`NOT_COUNTS` says why not."""
    seen = set()
    found = []
    for path in _script_files():
        rel = str(path.relative_to(REPO))
        for line, expr, noun in count_plurals(path.read_text(encoding="utf-8")):
            if (rel, expr, noun) in NOT_COUNTS:
                seen.add((rel, expr, noun))
            else:
                found.append(f"{rel}:{line}: {{{expr}}} {noun}")
    assert found == [], "\n".join(found)
    assert sorted(set(NOT_COUNTS) - seen) == [], "exceptions no longer needed"


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
