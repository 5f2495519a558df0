"""Imports point one way: DESIGN.md's layering, checked on the import graph of the repo.

The layers, bottom to top (a module may import its own layer and the layers below)::

    0  evaluator_ext, cbr.errors, cbr.stats        (the evaluator; the kernel's errors and CIs)
    1  cbr.game                                    (cards, rules, actions, table state, decisions)
    2  features                                    (feature sets: pure functions, no storage)
    3  cbr.plugins, cbr.logs, cbr.similarity, cbr.retrieval, cbr.store
    4  cbr.build, cbr.query, cbr.policies, cbr.models, cbr.abstraction, cbr.cfr
    5  cbr.play, cbr.acpc, cbr.exploit, cbr.serve
    6  cbr.cli                                     (the command line)
    7  cli (the console script's entry point), casebases (recipes)

Rules asserted here (every ``import`` statement counts: module level, inside functions,
and under ``if TYPE_CHECKING``, because each one is a dependency someone can trip on):

- ``evaluator_ext`` imports nothing of ours outside ``evaluator_ext``. The project's one
  exception base class ``CBRError`` lives there (``evaluator_ext/errors.py``) for that reason.
- ``cbr.errors`` re-exports ``CBRError`` and adds the subclasses; it imports only
  ``evaluator_ext.errors``. ``cbr.stats`` imports nothing of ours.
- ``cbr.game`` imports only ``evaluator_ext``, ``cbr.errors`` and itself; ``features`` only
  those and itself (no storage, no plugin store: loading a feature set by name is in
  ``cbr.plugins``).
- Every other import points to the same layer or a lower one; within a layer the packages
  form no cycle (each package of ``cbr`` is one node), and no modules form a cycle, inside a
  package or across packages (each module is one node).
- The root of ``cbr`` holds only the kernel (``errors``, ``plugins``, ``stats``);
  ``cbr/__init__.py`` imports nothing (importing ``cbr.game`` must not pull in the engine).
- Nothing imports ``cli``; only ``cli`` imports ``cbr.cli``; only ``cbr.cli`` (and ``cli``)
  import typer or rich.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
OURS = ("evaluator_ext", "cbr", "features", "cli", "casebases")
PRODUCT = ("evaluator_ext", "cbr", "features", "casebases")
#: Modules allowed at the root of ``cbr``: the kernel.
KERNEL = {"cbr.errors", "cbr.plugins", "cbr.stats"}
#: Third-party packages only the command line may import.
CLI_ONLY = ("typer", "rich", "click")


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for the product's packages and ``cli.py`` under ``root``."""
    found: dict[str, Path] = {}
    for top in PRODUCT:
        for path in sorted((root / top).rglob("*.py")) if (root / top).is_dir() else ():
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    if (root / "cli.py").is_file():
        found["cli"] = root / "cli.py"
    return found


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, known: Iterable[str], ours: tuple[str, ...] = OURS) -> set[str]:
    """Modules of ours (or of the top-level packages ``ours``) that ``module`` imports anywhere in its file.

    ``from a.b import c`` counts as ``a.b.c`` when that is a module, else ``a.b``.
    """
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path.name == "__init__.py", node)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        out.update(n for n in names if n.split(".")[0] in ours)
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> modules of ours it imports, for every module under ``root``."""
    files = module_files(root)
    return {m: imports_of(m, p, files) for m, p in files.items()}


#: The layer of each node (see the module docstring).
LAYERS: Mapping[str, int] = {
    "evaluator_ext": 0, "cbr.errors": 0, "cbr.stats": 0, "cbr": 0,
    "cbr.game": 1,
    "features": 2,
    "cbr.plugins": 3, "cbr.logs": 3, "cbr.similarity": 3, "cbr.retrieval": 3, "cbr.store": 3,
    "cbr.build": 4, "cbr.query": 4, "cbr.policies": 4, "cbr.models": 4, "cbr.abstraction": 4, "cbr.cfr": 4,
    "cbr.play": 5, "cbr.acpc": 5, "cbr.exploit": 5, "cbr.serve": 5,
    "cbr.cli": 6,
    "cli": 7, "casebases": 7,
}


def layer(module: str) -> str:
    """The node of a module in the layering: ``evaluator_ext``, ``features``, ``cli``,
    ``casebases``, ``cbr`` (its ``__init__``), or ``cbr.<package or kernel module>``; the
    bottom layers keep the names of the old rules: ``errors``, ``game``.

    >>> layer("cbr.store.casebase"), layer("cbr.game.state"), layer("cbr.errors"), layer("cli")
    ('cbr.store', 'game', 'errors', 'cli')
    """
    parts = module.split(".")
    if parts[0] != "cbr" or len(parts) == 1:
        return parts[0]
    node = f"cbr.{parts[1]}"
    return {"cbr.errors": "errors", "cbr.game": "game"}.get(node, node)


def rank(node: str) -> int:
    """The layer number of a node (an unknown ``cbr`` module: the top of the engine, 5)."""
    return LAYERS.get({"errors": "cbr.errors", "game": "cbr.game"}.get(node, node), 5)


ALLOWED: Mapping[str, set[str]] = {
    "evaluator_ext": {"evaluator_ext"},
    "cbr.stats": set(),
    "game": {"evaluator_ext", "errors", "game"},
    "features": {"evaluator_ext", "errors", "game", "features"},
}


def layer_violations(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import that breaks a rule of the module docstring, as ``a -> b (why)``."""
    bad: list[str] = []
    for module, deps in sorted(graph.items()):
        mine = layer(module)
        for dep in sorted(deps):
            theirs = layer(dep)
            if dep == "cli":
                bad.append(f"{module} -> {dep} (nothing imports cli)")
            elif theirs == "cbr.cli" and mine not in ("cli", "cbr.cli"):
                bad.append(f"{module} -> {dep} (only cli imports cbr.cli)")
            elif mine == "errors":
                if dep != "evaluator_ext.errors":
                    bad.append(f"{module} -> {dep} (cbr.errors imports only evaluator_ext.errors)")
            elif mine in ALLOWED:
                if theirs not in ALLOWED[mine]:
                    allowed = ", ".join(sorted(ALLOWED[mine])) or "nothing of ours"
                    bad.append(f"{module} -> {dep} ({mine} may import only {allowed})")
            elif rank(theirs) > rank(mine):
                bad.append(f"{module} -> {dep} (layer {rank(mine)} may not import layer {rank(theirs)})")
        if module == "cbr" and deps:
            bad.append(f"cbr/__init__.py -> {', '.join(sorted(deps))} (the cbr package imports nothing)")
    return bad


def package_of(module: str) -> str:
    """The node of a module in the package graph: ``cbr.logs.acpc`` -> ``cbr.logs``,
    ``cbr.stats`` -> ``cbr.stats`` (a kernel module at the root of cbr is a node of its own)."""
    parts = module.split(".")
    if parts[0] == "cbr":
        return ".".join(parts[:2])
    return parts[0]


def package_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one package (each package of ``cbr`` is one node)."""
    edges: dict[str, set[str]] = {}
    for module, deps in graph.items():
        a = package_of(module)
        edges.setdefault(a, set())
        for dep in deps:
            b = package_of(dep)
            edges.setdefault(b, set())
            if a != b:
                edges[a].add(b)
    return strongly_connected(edges)


def module_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Import cycles between modules: strongly connected groups of more than one module
    (every import counts, at module level or inside a function), each sorted.

    >>> module_cycles({"cbr.a": {"cbr.b"}, "cbr.b": {"cbr.c"}, "cbr.c": {"cbr.a"}, "cbr.d": {"cbr.a"}})
    [['cbr.a', 'cbr.b', 'cbr.c']]
    """
    edges = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    return strongly_connected(edges)


def strongly_connected(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one node of a directed graph (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


# ---- the repo -------------------------------------------------------------------

@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(REPO)


def test_the_graph_covers_the_repo(graph) -> None:
    for module in ("evaluator_ext.cards", "cbr.game.state", "cbr.game.actions", "cbr.logs.source",
                   "features.casper", "cbr.plugins", "cli"):
        assert module in graph
    # function-level imports are seen: the inspector imports the rules engine inside a function
    assert "cbr.logs.replay" in graph["cbr.logs.inspect"]


def test_layers_point_one_way(graph) -> None:
    assert layer_violations(graph) == []


def test_no_import_cycles_between_packages(graph) -> None:
    assert package_cycles(graph) == []


def test_no_import_cycles_between_modules(graph) -> None:
    """No two modules import each other, directly or round a loop, by any import (module
    level, inside a function, under ``if TYPE_CHECKING``): the store's casebase <->
    compaction <-> retained was one (the write layers typed ``self`` as the ``CaseBase``
    that mixed them in), and so was logs' acpc <-> output <-> phh (the writers' plumbing
    imported the formats that import it; choosing a writer by name, ``writers``, now sits
    above them)."""
    assert module_cycles(graph) == []
    assert not {"cbr.logs.acpc", "cbr.logs.phh"} & graph["cbr.logs.output"]


def test_the_root_of_cbr_is_the_kernel() -> None:
    """Everything but the kernel lives in a room (a package named after its use)."""
    loose = {f"cbr.{p.stem}" for p in (REPO / "cbr").glob("*.py") if p.stem != "__init__"}
    assert loose == KERNEL


def test_only_the_command_line_uses_typer_and_rich() -> None:
    files = module_files(REPO)
    users = sorted(m for m, path in files.items() if imports_of(m, path, files, ours=CLI_ONLY))
    assert users and all(m == "cli" or m == "cbr.cli" or m.startswith("cbr.cli.") for m in users), users


def test_layers_are_documented_in_the_design() -> None:
    """DESIGN.md names every room of the layering."""
    design = (REPO / "DESIGN.md").read_text()
    for node in LAYERS:
        if node.startswith("cbr."):
            assert f"{node.split('.')[1]}/" in design or f"{node.split('.')[1]}.py" in design, node


def test_the_rules_engine_does_not_know_the_logs(graph) -> None:
    assert not any(d.startswith("cbr.logs") for d in graph["cbr.game.state"])
    assert "cbr.game.actions" in graph["cbr.game.state"]
    text = (REPO / "cbr" / "game" / "__init__.py").read_text()
    assert "__getattr__" not in text          # no lazy import hiding a cycle


def test_parsers_share_one_reader_and_one_card_table(graph) -> None:
    parsers = ("cbr.logs.acpc", "cbr.logs.phh", "cbr.logs.irc", "cbr.logs.pokerstars")
    for p in parsers:
        deps = graph[p]
        assert not deps & (set(parsers) | {"cbr.logs.detect", "cbr.logs.inspect"}), (p, deps)
        assert "cbr.logs.source" in deps and "evaluator_ext.cards" in deps, (p, deps)
    # no parser builds a card table of its own
    for p in parsers:
        source = (REPO / Path(*p.split("."))).with_suffix(".py").read_text()
        assert "enumerate(RANKS)" not in source and "enumerate(_RANKS)" not in source, p
        assert '"23456789TJQKA"' not in source, p


def test_private_names_stay_private() -> None:
    """No module imports another module's underscore name (``inspect`` took ``detect._instance``).

    Private modules are fine: ``evaluator_ext._native`` is the compiled extension behind
    the facade, ``evaluator_ext._mccfr`` the one behind ``cbr.abstraction.distribution`` and
    ``cbr.cfr.mccfr``, ``evaluator_ext._retrieval`` the one behind ``cbr.retrieval.aggregate``,
    ``evaluator_ext._resolve`` the one behind ``cbr.cfr.resolve``.
    """
    files = module_files(REPO)
    private_modules = {"evaluator_ext._native", "evaluator_ext._mccfr", "evaluator_ext._retrieval",
                       "evaluator_ext._resolve"}
    bad = []
    for module, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(module, path.name == "__init__.py", node)
                if base.split(".")[0] in OURS:
                    bad += [f"{module} <- {base}.{a.name}" for a in node.names
                            if a.name.startswith("_") and not a.name.startswith("__")
                            and f"{base}.{a.name}" not in files and f"{base}.{a.name}" not in private_modules]
    assert bad == []


def test_load_feature_set_lives_with_the_feature_sets(graph) -> None:
    from cbr.plugins import load_feature_set

    assert load_feature_set("casper").name == "casper"
    text = (REPO / "cbr" / "store" / "parts.py").read_text()
    assert "def load_feature_set" not in text


# ---- the checker itself finds what it must ----------------------------------------

def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_checker_catches_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "evaluator_ext/__init__.py": "",
        "cbr/__init__.py": "",
        "cbr/errors.py": "from evaluator_ext.errors import CBRError\n",
        "cbr/game/__init__.py": "",
        "cbr/game/state.py": "def f():\n    from cbr.logs.record import Action\n",
        "cbr/logs/__init__.py": "",
        "cbr/logs/record.py": "from ..game import state\n",
        "features/__init__.py": "import cbr.store.parts\n",
        "cbr/store/__init__.py": "",
        "cbr/store/parts.py": "import cli\n",
        "cli.py": "import cbr.logs.record\n",
    })
    graph = import_graph(root)
    assert graph["cbr.logs.record"] == {"cbr.game.state"}          # relative import resolved
    bad = layer_violations(graph)
    assert any(b.startswith("cbr.game.state -> cbr.logs.record") for b in bad)
    assert any(b.startswith("features -> cbr.store.parts") for b in bad)
    assert any(b.startswith("cbr.store.parts -> cli") for b in bad)
    assert package_cycles(graph) == [["cbr.game", "cbr.logs"]]
    assert module_cycles(graph) == [["cbr.game.state", "cbr.logs.record"]]


def test_checker_catches_a_module_cycle_inside_a_package(tmp_path: Path) -> None:
    """Modules of one package importing each other (one at module level, one inside a
    function or under TYPE_CHECKING) are a cycle, though the package graph has none."""
    root = _tree(tmp_path, {
        "evaluator_ext/__init__.py": "",
        "cbr/__init__.py": "",
        "cbr/errors.py": "from evaluator_ext.errors import CBRError\n",
        "cbr/store/__init__.py": "",
        "cbr/store/base.py": "",
        "cbr/store/casebase.py": "from cbr.store.compaction import Compaction\nfrom cbr.store import base\n",
        "cbr/store/compaction.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                   "    from cbr.store.casebase import CaseBase\n",
        "cbr/store/retained.py": "def f():\n    from .casebase import CaseBase\n",
        "cbr/store/writer.py": "from cbr.store.retained import f\n",
    })
    graph = import_graph(root)
    assert package_cycles(graph) == []
    assert module_cycles(graph) == [["cbr.store.casebase", "cbr.store.compaction"]]
    graph["cbr.store.casebase"].add("cbr.store.retained")
    assert module_cycles(graph) == [["cbr.store.casebase", "cbr.store.compaction", "cbr.store.retained"]]


def test_checker_accepts_the_layering(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "evaluator_ext/__init__.py": "from evaluator_ext import cards\n",
        "evaluator_ext/cards.py": "",
        "cbr/__init__.py": "",
        "cbr/errors.py": "from evaluator_ext.errors import CBRError\n",
        "cbr/game/__init__.py": "from cbr.game.actions import Action\nfrom cbr.errors import CBRError\n",
        "cbr/game/actions.py": "import evaluator_ext.cards\n",
        "features/__init__.py": "from cbr.game import actions\n",
        "cbr/logs/__init__.py": "import features\nfrom cbr.plugins import load\n",
        "cbr/plugins.py": "",
        "cli.py": "import cbr.logs\n",
    })
    graph = import_graph(root)
    assert layer_violations(graph) == [] and package_cycles(graph) == [] and module_cycles(graph) == []


def test_checker_catches_upward_imports_and_the_cli(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "evaluator_ext/__init__.py": "",
        "cbr/__init__.py": "",
        "cbr/errors.py": "from evaluator_ext.errors import CBRError\n",
        "cbr/store/__init__.py": "",
        "cbr/store/parts.py": "def f():\n    from cbr.play.match import run_match\n",
        "cbr/play/__init__.py": "",
        "cbr/play/match.py": "import cbr.cli.query\n",
        "cbr/cli/__init__.py": "",
        "cbr/cli/query.py": "import cbr.play.match\n",
        "cli.py": "from cbr.cli import app\n",
    })
    bad = layer_violations(import_graph(root))
    assert any(b.startswith("cbr.store.parts -> cbr.play.match (layer 3 may not import layer 5)") for b in bad)
    assert any(b.startswith("cbr.play.match -> cbr.cli.query (only cli imports cbr.cli)") for b in bad)
    assert not any(b.startswith(("cli ->", "cbr.cli.query ->")) for b in bad)
