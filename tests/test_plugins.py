"""The plugin store with a third-party package (tests/plugin_pkg) made visible to
importlib.metadata the way an install would: a ``.dist-info`` with ``entry_points.txt`` on
``sys.path``. Its plugins are listed and used; its deliberately broken plugin is reported
by name while everything else keeps working."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from cbr import plugins
from cbr.errors import PluginError
from tests.conftest import require_module

PKG = Path(__file__).parent / "plugin_pkg"


def _entry_points_txt(pyproject: dict) -> str:
    lines = []
    for group, eps in pyproject["project"]["entry-points"].items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in eps.items()]
        lines.append("")
    return "\n".join(lines)


@pytest.fixture
def demo_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Install tests/plugin_pkg as metadata only: a dist-info beside its source on sys.path."""
    pyproject = tomllib.loads((PKG / "pyproject.toml").read_text())
    name, version = pyproject["project"]["name"], pyproject["project"]["version"]
    site = tmp_path / "site"
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(_entry_points_txt(pyproject))
    monkeypatch.syspath_prepend(str(PKG / "src"))
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    yield pyproject
    plugins.clear_cache()
    for mod in [m for m in sys.modules if m.startswith("cbr_demo_plugin")]:
        del sys.modules[mod]


def test_third_party_plugins_are_listed(demo_plugin) -> None:
    infos = {(i.group, i.name): i for i in plugins.describe()}
    pot = infos[("cbr.features", "pot_only")]
    assert pot.ok and pot.distribution == "cbr-demo-plugin"
    assert pot.target == "cbr_demo_plugin.features:PotOnlyFeatures"
    assert infos[("cbr.similarity", "steep")].ok
    assert "pot_only" in plugins.available("cbr.features")


def test_broken_plugin_is_named_and_the_others_keep_working(demo_plugin) -> None:
    infos = {(i.group, i.name): i for i in plugins.describe()}
    broken = infos[("cbr.policies", "broken_bot")]
    assert not broken.ok
    assert "broken_bot" in broken.error and "libmissing" in broken.error and "cbr.policies" in broken.error
    with pytest.raises(PluginError, match="broken_bot"):
        plugins.load("cbr.policies", "broken_bot")
    # the rest of the same package and of the same group still load
    assert plugins.load("cbr.features", "pot_only").__name__ == "PotOnlyFeatures"
    others = [i for (g, n), i in infos.items() if g == "cbr.policies" and n != "broken_bot"]
    assert all(i.ok for i in others if i.distribution == "cbr-holdem" and i.target.startswith("cbr.policies"))


def test_unknown_plugin_lists_what_is_installed(demo_plugin) -> None:
    with pytest.raises(PluginError, match="pot_only"):
        plugins.load("cbr.features", "nonexistent")
    with pytest.raises(PluginError, match="unknown plugin group"):
        plugins.available("cbr.nothing")


def test_an_unknown_name_lists_the_built_ins_and_plugins_once_sorted(demo_plugin) -> None:
    """The built-ins register as plugins too: the message listed them twice, once in their
    table's order and once sorted among the installed plugins."""
    from cbr.errors import ConfigError
    from cbr.similarity import BUILTIN_MEASURES, measure_class

    with pytest.raises(ConfigError) as got:
        measure_class("cubic")
    known = sorted({*BUILTIN_MEASURES, "steep"})
    assert str(got.value) == f"unknown similarity measure 'cubic' (known: {', '.join(known)})"
    # a plugin that is installed but fails to load says why, not that it is unknown
    with pytest.raises(ConfigError) as broken:
        plugins.resolve("cbr.policies", "broken_bot", {}, "policy")
    assert str(broken.value).startswith("policy 'broken_bot': plugin 'broken_bot' in cbr.policies ")
    assert "failed to load" in str(broken.value) and "known:" not in str(broken.value)


def test_an_unknown_policy_lists_only_the_usable_ones_and_the_broken_apart(demo_plugin) -> None:
    """The list of known policies offered a plugin that fails to load (which cannot be used)."""
    from cbr.policies.spec import UnknownPolicyError, policy_from_spec

    with pytest.raises(UnknownPolicyError) as got:
        policy_from_spec("nosuch")
    known, note = str(got.value).split("; known policies: ")[1].split("; ", 1)
    assert "broken_bot" not in known and "call" in known.split(", ")
    assert note == "1 plugin failed to load: cbr.policies:broken_bot (see cbr plugins list)"
    with pytest.raises(PluginError) as got:
        plugins.load("cbr.policies", "nosuch")
    assert "broken_bot" not in str(got.value).split(";")[0] and "1 plugin failed to load" in str(got.value)
    from cbr.errors import ConfigError

    with pytest.raises(ConfigError) as got:
        plugins.resolve("cbr.policies", "nosuch", {}, "policy")
    assert str(got.value).endswith("(see cbr plugins list)") and "broken_bot" not in str(got.value).split(";")[0]


@pytest.fixture
def broken_extras(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An installed package whose feature set and log parser fail to load (their module is missing)."""
    site = tmp_path / "site"
    info = site / "cbr_broken_extras-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cbr-broken-extras\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[cbr.features]\nbroken_fs = cbr_broken_extras_missing:Features\n\n"
                                           "[cbr.parsers]\nbroken_fmt = cbr_broken_extras_missing:Parser\n")
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    yield
    plugins.clear_cache()


@pytest.mark.parametrize("args, group, name, known", [
    (["build", "x.log", "-o", "out", "--feature-set", "nosuch"], "cbr.features", "broken_fs",
     "unknown feature set 'nosuch'; known feature sets: "),
    (["logs", "inspect", "x.log", "--log-format", "nosuch"], "cbr.parsers", "broken_fmt",
     "unknown log format 'nosuch'; known formats: "),
], ids=["feature-set", "log-format"])
def test_unknown_feature_sets_and_formats_leave_out_plugins_that_fail_to_load(
        broken_extras, tmp_path: Path, args: list[str], group: str, name: str, known: str) -> None:
    """`cbr build --feature-set nosuch` listed a feature set that fails to load among the known
    ones; as for bots, the known are those that load, and the others are named apart."""
    from typer.testing import CliRunner

    from cli import app

    assert name in plugins.available(group)
    res = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    assert res.exit_code == 2, res.output
    said = " ".join(res.stderr.replace("│", " ").split())
    listed = said.split(known, 1)[1]
    offered, note = listed.split("; ", 1)
    assert name not in offered.split(", ") and len(offered.split(", ")) >= 2
    assert note == f"1 plugin failed to load: {group}:{name} (see cbr plugins list)"
    if group == "cbr.parsers":  # the library's own refusal says it the same way
        from cbr.logs.detect import parser_for

        with pytest.raises(PluginError) as got:
            parser_for("nosuch")
        assert str(got.value) == known + listed


def test_third_party_similarity_measure_is_used_from_toml(demo_plugin) -> None:
    from cbr.similarity import SimilarityConfig, default_casper, global_similarity

    data = default_casper().to_dict()
    for row in data["flop"]:
        if row["feature"] == "pot_odds":
            row["measure"] = "steep"
            row.pop("k", None)
    cfg = SimilarityConfig.from_dict(data)
    assert cfg.street("flop").feature_specs[6].measure == "steep"
    q = np.array([3, 1, 3, 1, 0, 2, 0.25, 0.9, 0.2, 0.1, 6, 1], np.float32)
    case = q.copy()
    case[6] = 0.5  # pot odds differ by a quarter of the domain [0, 1]: steep gives 0.5
    st = cfg.street("flop")
    weights = np.asarray(st.weights, dtype=np.float64)
    expected = (weights.sum() - weights[6] * 0.5) / weights.sum()
    assert float(global_similarity(st, q, case[None, :])[0]) == pytest.approx(expected, rel=1e-6)
    # and it survives the TOML round trip by name
    assert 'measure = "steep"' in cfg.to_toml()
    assert SimilarityConfig.from_toml(cfg.to_toml()) == cfg


def test_third_party_feature_set_builds_and_grows_a_case_base(demo_plugin, tmp_path: Path) -> None:
    from cbr.similarity import SimilarityConfig
    from cbr.store import CaseBase, CaseBaseWriter
    from tests.store.test_store import make_dp

    rows = []
    for s in ("preflop", "flop", "turn", "river"):
        rows.append(f"[[{s}]]\nfeature = \"pot_odds\"\nmeasure = \"steep\"\nweight = 50\nlow = 0\nhigh = 1\n")
        rows.append(f"[[{s}]]\nfeature = \"small_bets_in_pot\"\nmeasure = \"linear\"\nweight = 50\n"
                    "low = 0\nhigh = 100\n")
    cfg = SimilarityConfig.from_toml("threshold = 0.9\n" + "\n".join(rows))
    with CaseBaseWriter(tmp_path / "cb", feature_set="pot_only", similarity=cfg, build_index=False) as w:
        w.add_decisions([make_dp(0, action="c"), make_dp(1, action="r")])
    cb = CaseBase.open(tmp_path / "cb")
    assert cb.manifest.feature_set == "pot_only"
    assert cb.feature_names("flop") == ["pot_odds", "small_bets_in_pot"]
    cb.retain_hand([make_dp(1, action="f", hand_id="live")])  # the plugin is loaded back by name
    np.testing.assert_allclose(cb.cases("flop").features, [[0.25, 1.5], [0.25, 1.5]])
    assert cb.similarity().threshold == 0.9


def test_cli_plugins_list(demo_plugin) -> None:
    from typer.testing import CliRunner

    from cli import app

    res = CliRunner().invoke(app, ["plugins", "list", "--json"])
    assert res.exit_code == 0, res.output
    rows = {(r["group"], r["name"]): r for r in json.loads(res.stdout)}
    assert rows[("cbr.features", "pot_only")]["ok"] is True
    assert rows[("cbr.policies", "broken_bot")]["ok"] is False
    assert "libmissing" in rows[("cbr.policies", "broken_bot")]["error"]
    res = CliRunner().invoke(app, ["plugins", "list"])
    assert res.exit_code == 0
    assert "pot_only" in res.stdout and "broken_bot" in res.stdout
    assert "1 plugin failed to load: cbr.policies:broken_bot" in " ".join(res.stderr.split()), res.stderr


@pytest.mark.slow
def test_plugin_package_installs_with_pip(tmp_path: Path) -> None:
    """The fixture package is a real package: pip installs it (no network) and a fresh
    interpreter sees its entry points."""
    import shutil

    src, target = tmp_path / "plugin_pkg", tmp_path / "target"
    shutil.copytree(PKG, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                          "--no-build-isolation", "--target", str(target), str(src)],
                         capture_output=True, text=True, timeout=120)
    # setuptools and wheel come with the test extras, so the offline build must work
    assert res.returncode == 0, f"pip could not build the plugin package: {res.stderr.strip()[-2000:]}"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from cbr.plugins import describe; "
            "print(sorted(i.name for i in describe() if i.distribution == 'cbr-demo-plugin'))")
    out = subprocess.run([sys.executable, "-c", code, str(target)], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "['broken_bot', 'pot_only', 'steep']", out.stderr


def test_builtin_feature_sets_are_the_ones_pyproject_registers() -> None:
    """The feature sets resolved without the entry-point scan are exactly the entry points
    pyproject.toml registers (the two lists cannot drift), and each loads its class."""
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert plugins.BUILTIN_FEATURE_SETS == pyproject["project"]["entry-points"]["cbr.features"]
    for name, target in plugins.BUILTIN_FEATURE_SETS.items():
        fs = plugins.load_feature_set(name)
        assert f"{type(fs).__module__}:{type(fs).__name__}" == target and fs.name == name
    with pytest.raises(PluginError, match="no plugin 'nope' in cbr.features"):
        plugins.load_feature_set("nope")


def test_builtin_similarity_measures_are_the_ones_pyproject_registers() -> None:
    """'equity' was a built-in measure missing from the entry points (and `plugins list`)."""
    from cbr.similarity import BUILTIN_MEASURES

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    registered = pyproject["project"]["entry-points"]["cbr.similarity"]
    assert set(registered) == set(BUILTIN_MEASURES)
    assert all(registered[n] == f"cbr.similarity:{c.__name__}" for n, c in BUILTIN_MEASURES.items())


def test_a_plugin_named_like_a_built_in_is_listed_as_not_used_and_the_built_in_runs(tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A package registering 'call' and 'casper' replaced the built-ins in `plugins list` (shown
    failing, with no word of the clash); `match` then ran the broken 'call', `query` the
    built-in 'casper'."""
    info = tmp_path / "site" / "bogus-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bogus\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.policies]\ncall = nosuch.x:Z\n[cbr.features]\ncasper = nosuch.y:F\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    plugins.clear_cache()
    try:
        rows = [(i.group, i.name, i.distribution, i.ok, i.error) for i in plugins.describe()]
        for group, name in (("cbr.policies", "call"), ("cbr.features", "casper")):
            mine = [r for r in rows if r[:3] == (group, name, "cbr-holdem")]
            theirs = [r for r in rows if r[:3] == (group, name, "bogus")]
            assert len(mine) == 1 and mine[0][3], mine
            assert len(theirs) == 1 and "not used" in theirs[0][4] and "same name" in theirs[0][4], theirs
        assert plugins.load("cbr.policies", "call").__name__ == "AlwaysCallPolicy"
        from typer.testing import CliRunner

        from cli import app

        res = CliRunner().invoke(app, ["plugins", "list"])
        assert res.exit_code == 0 and "failed to load" not in res.stderr, res.stderr
        assert "2 plugins not used" in res.stderr and "cbr.policies:call (bogus)" in res.stderr
    finally:
        plugins.clear_cache()


def test_plugins_list_shows_each_bot_with_a_line_and_its_options_at_80_columns() -> None:
    """`cbr plugins list`, where every --help sends users to find bots, split import targets
    mid-word at 80 columns and showed no description or options."""
    from typer.testing import CliRunner

    from cbr.policies.spec import DESCRIPTIONS, policy_options
    from cli import app

    res = CliRunner().invoke(app, ["plugins", "list"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines).split())  # as read, wrapping undone
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    bots = pyproject["project"]["entry-points"]["cbr.policies"]
    assert set(DESCRIPTIONS) == set(bots)
    for name in bots:
        assert 0 < len(DESCRIPTIONS[name]) <= 60  # one line beside the name at 80 columns
        first = next(line for line in lines if line.startswith(f"  {name} "))
        assert first.split(None, 1)[1] == DESCRIPTIONS[name], first
        for key, default in policy_options(name).items():
            shown = key.replace("_", "-")
            if default not in (None, ""):
                shown += "=" + (str(default).lower() if isinstance(default, bool) else f"{default:g}"
                                if isinstance(default, float) else str(default))
            assert shown in text, (name, shown)
    for group, entries in pyproject["project"]["entry-points"].items():
        if group != "cbr.policies":
            for name, target in entries.items():  # whole, on its name's line
                assert any(line.split() == [name, target] for line in lines), (name, target)
    assert "NAME:KEY=VALUE:KEY=VALUE" in text and "lag:stab-rate=0.25" in text


def test_the_options_plugins_list_shows_are_specs_that_build_the_bot() -> None:
    from cbr.cli.plugins import policy_lines
    from cbr.policies.spec import policy_from_spec, policy_options

    for name in ("hs", "ehs", "lag", "rock", "station", "poki", "phase3"):
        _, options = policy_lines(name)
        spec = ":".join([name, *(o for o in options.split(", ") if "=" in o)])
        assert spec.count("=") == sum(d not in (None, "") for d in policy_options(name).values()), spec
        assert policy_from_spec(spec, seed=1).name == name  # every value shown converts back


def test_plugins_list_json_gives_bots_their_description_and_options(demo_plugin) -> None:
    from typer.testing import CliRunner

    from cli import app

    res = CliRunner().invoke(app, ["plugins", "list", "--json"])
    rows = {(r["group"], r["name"]): r for r in json.loads(res.stdout)}
    lag = rows[("cbr.policies", "lag")]
    assert lag["description"].startswith("loose-aggressive") and lag["options"]["stab-rate"] == 0.5
    assert "description" not in rows[("cbr.policies", "broken_bot")]  # it does not load
    res = CliRunner().invoke(app, ["plugins", "list"], env={"COLUMNS": "80"})
    lines = res.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  broken_bot "))
    assert lines[at + 1].split() == ["package:", "cbr-demo-plugin"] and lines[at + 2].lstrip().startswith("ERROR: ")


def test_plugins_list_says_what_each_option_of_each_bot_means() -> None:
    """`cbr plugins list` named `cfr`'s `resolve-iters` or `cbr`'s `fallback-k` without saying
    what they mean: every option of every built-in bot now has its line, from the bot's own
    OPTION_HELP table, in the text (wrapped at 80 columns) and in --json (`option_help`)."""
    from typer.testing import CliRunner

    from cbr.plugins import load
    from cbr.policies.spec import policy_option_help, policy_options
    from cli import app

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    bots = pyproject["project"]["entry-points"]["cbr.policies"]
    res = CliRunner().invoke(app, ["plugins", "list"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert all(len(line) <= 80 for line in res.stdout.splitlines())
    text = " ".join(res.stdout.split())  # as read, wrapping undone
    rows = {r["name"]: r for r in json.loads(CliRunner().invoke(app, ["plugins", "list", "--json"]).stdout)
            if r["group"] == "cbr.policies"}
    for name in bots:
        helps = policy_option_help(name)
        assert list(helps) == list(policy_options(name)), name
        for key, line in helps.items():
            assert 10 <= len(line) <= 120, (name, key, line)  # there, and short
            shown = key.replace("_", "-")
            assert f"- {shown}: {line}" in text or f"- {shown}=" in text and f": {line}" in text, (name, key)
        assert rows[name]["option_help"] == {k.replace("_", "-"): v for k, v in helps.items()}
        factory = load("cbr.policies", name)  # a table names only options its own bot has: no stale lines
        owners = factory.__mro__ if isinstance(factory, type) else (factory,)
        for owner in owners:
            stale = set(vars(owner).get("OPTION_HELP", {})) - set(inspect.signature(owner).parameters)
            assert not stale, (owner, stale)
    assert "- resolve-iters=40: CFR+ iterations of each river re-solve" in text
    assert rows["cbr"]["option_help"]["fallback-k"].startswith("with no case (or fewer than min-cases) that similar")



def test_plugins_list_says_what_each_preset_of_the_cbr_bot_sets() -> None:
    """`cbr plugins list` named the `cbr` bot's presets (adaptive, expert, casper) without their
    values: each preset now has a line under the bot saying what it sets, as a spec writes the
    options (`sharpen=4`), taken from the presets the bot plays (so they cannot drift), in the
    text (wrapped at 80 columns, each line at most 120 characters) and in --json (`presets`)."""
    from typer.testing import CliRunner

    from cbr.policies.cbr_policy import PRESETS
    from cbr.policies.spec import policy_from_spec
    from cli import app

    res = CliRunner().invoke(app, ["plugins", "list"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert all(len(line) <= 80 for line in res.stdout.splitlines())
    text = " ".join(res.stdout.split())  # as read, wrapping undone
    entry = text[text.index(" cbr the default"):text.index(" cfr a CFR strategy")]
    assert "presets: - adaptive" in entry
    expert = ("- expert: casebase=expert, reuse=probabilistic, sharpen=4, outcome-weight=1, odds-guard=0")
    casper = ("- casper: casebase=default, reuse=probabilistic, sharpen=1, outcome-weight=0, odds-guard=0")
    assert expert in entry and casper in entry and "plain sampling" in entry[entry.index(casper):]
    assert "- adaptive (the default): " in entry and "expert" in entry[entry.index("- adaptive"):]
    rows = {r["name"]: r for r in json.loads(CliRunner().invoke(app, ["plugins", "list", "--json"]).stdout)
            if r["group"] == "cbr.policies"}
    presets = rows["cbr"]["presets"]
    assert list(presets) == ["adaptive", *PRESETS]
    assert all(10 <= len(f"{name}: {line}") <= 120 for name, line in presets.items()), presets
    assert presets["expert"].startswith(expert.removeprefix("- expert: "))
    assert "presets" not in rows["lag"]  # a bot without presets has no such key
    # what a preset's line says it sets is what the bot built from it plays
    for name, values in PRESETS.items():
        bot = policy_from_spec(f"cbr:preset={name}", seed=1)
        try:
            assert (bot.casebase, bot.reuse, bot.sharpen, bot.outcome_weight, bot.odds_guard) == (
                values["casebase"], values["reuse"], values["sharpen"], values["outcome_weight"], values["odds_guard"])
            for key, value in values.items():
                shown = f"{value:g}" if isinstance(value, float) else str(value)
                assert f"{key.replace('_', '-')}={shown}" in presets[name], (name, key)
        finally:
            bot.close()


RAISING_PLUGIN = '''
from cbr.policies.base import Policy, legal_triple


class FlopBoom(Policy):
    """Calls before the flop; on it, fails (a bug of its own package)."""
    name = "flop_boom"

    def triple(self, dp):
        if dp.street >= 1:
            raise RuntimeError("boom on the flop")
        return legal_triple((0.0, 1.0, 0.0), dp.legal)


class MadeBoom(Policy):
    """Fails as it is made."""
    name = "made_boom"

    def __init__(self, *, seed=None):
        raise KeyError("no table")


class InitBoom(Policy):
    """Fails as it is made with a ValueError (or, told so, a TypeError) of its own."""
    name = "init_boom"

    def __init__(self, *, seed=None, kind="value"):
        raise (TypeError if kind == "type" else ValueError)("cannot be made")
'''


@pytest.fixture
def raising_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package whose bots raise, installed as pip would (a dist-info with its entry points
    beside the module, on sys.path): the folder to put on PYTHONPATH."""
    site = tmp_path / "site"
    info = site / "boomplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: boomplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.policies]\nflop_boom = boomplug:FlopBoom\n"
                                           "made_boom = boomplug:MadeBoom\ninit_boom = boomplug:InitBoom\n")
    (site / "boomplug.py").write_text(RAISING_PLUGIN)
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    yield site
    plugins.clear_cache()
    sys.modules.pop("boomplug", None)


FLOP_BOOM = ("error: bot 'flop_boom' (plugin 'flop_boom' in cbr.policies: boomplug:FlopBoom, package boomplug) "
             "failed in triple(): RuntimeError: boom on the flop")


def test_a_plugin_bot_that_raises_is_named_in_one_line_and_exit_1(raising_plugin: Path, tmp_path: Path) -> None:
    """Another package's bot raising as it played made `cbr match`, `cbr exploit` and `cbr play
    --human` say `internal error: RuntimeError: ...` and exit 3, as if the engine had a bug:
    now one line naming the bot, its plugin and package and what it raised, exit 1."""
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(raising_plugin), str(repo)])}
    for args, stdin in ((["match", "--players", "flop_boom,call", "--hands", "5"], None),
                        (["exploit", "flop_boom", "--hands", "4", "--chunk-deals", "2", "-j", "2"], None),
                        (["play", "--human", "--players", "flop_boom", "--hands", "1", "--seed", "3"], "c\n" * 8),
                        (["match", "--players", "made_boom,call", "--hands", "5"], None)):
        r = subprocess.run([sys.executable, "-m", "cli", *args], input=stdin, capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=300)
        assert r.returncode == 1, (args, r.returncode, r.stderr)
        last = r.stderr.strip().splitlines()[-1]
        if args[2].startswith("made_boom"):
            assert last == ("error: bot 'made_boom' (plugin 'made_boom' in cbr.policies: boomplug:MadeBoom, package "
                            "boomplug) failed when it was made: KeyError: 'no table'"), r.stderr
        else:
            assert last == FLOP_BOOM, (args, r.stderr)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_a_plugin_bot_whose_init_raises_value_error_is_named_not_a_usage_error(raising_plugin: Path,
                                                                              tmp_path: Path) -> None:
    """A plugin bot raising ValueError in __init__ was `Error: Invalid value for '--players':
    policy spec 'init_boom': cannot be made`, exit 2, naming neither plugin nor package: every
    error another package's bot raises as it is made is the one PluginFailedError line, exit 1;
    the engine's own bots' ValueErrors for bad options stay usage errors (exit 2)."""
    from cbr.errors import PluginFailedError
    from cbr.policies.spec import PolicySpecError, policy_from_spec

    for spec, kind in (("init_boom", "ValueError"), ("init_boom:kind=type", "TypeError")):
        with pytest.raises(PluginFailedError) as info:
            policy_from_spec(spec, seed=1)
        assert str(info.value) == (f"bot {spec!r} (plugin 'init_boom' in cbr.policies: boomplug:InitBoom, package "
                                   f"boomplug) failed when it was made: {kind}: cannot be made")
        assert type(info.value.__cause__).__name__ == kind
    with pytest.raises(PolicySpecError, match="sharpen must be a positive number"):
        policy_from_spec("cbr:sharpen=-1", seed=1)
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(raising_plugin), str(repo)])}
    r = subprocess.run([sys.executable, "-m", "cli", "match", "--players", "init_boom,call", "--hands", "2"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.strip() == ("error: bot 'init_boom' (plugin 'init_boom' in cbr.policies: boomplug:InitBoom, "
                                "package boomplug) failed when it was made: ValueError: cannot be made"), r.stderr
    r = subprocess.run([sys.executable, "-m", "cli", "match", "--players", "cbr:sharpen=-1,call", "--hands", "2"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 2 and "Invalid value for '--players'" in r.stderr, (r.returncode, r.stderr)


def test_only_other_packages_bots_are_named_so(raising_plugin: Path) -> None:
    """The engine's own bots are not wrapped: their errors stay the engine's bugs (exit 3 at the
    command line); an error of the plugin's carries what it raised as its cause."""
    from cbr.errors import PluginFailedError
    from cbr.play.match import run_match
    from cbr.policies.base import Policy
    from cbr.policies.spec import GUARDED_METHODS, policy_from_spec

    own = policy_from_spec("call")
    assert not set(GUARDED_METHODS) & set(vars(own))

    class Ours(Policy):  # a bot that is no plugin of another package
        def triple(self, dp):  # noqa: ANN001, ANN201
            raise RuntimeError("our bug")

    with pytest.raises(RuntimeError, match="our bug"):
        run_match([Ours(), "call"], 2, seed=1)
    with pytest.raises(PluginFailedError) as info:
        run_match(["flop_boom", "call"], 5, seed=1)
    assert str(info.value) == FLOP_BOOM.removeprefix("error: ")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert policy_from_spec("flop_boom").learns is False  # the class is inspected as it is


def test_a_plugin_bot_that_raises_over_http_is_named(raising_plugin: Path) -> None:
    """`/reuse` with such a bot answered 500 `internal error: RuntimeError: ...`: the detail
    names the bot and what it raised; before the flop it answers."""
    from tests.conftest import require_module

    require_module("fastapi")
    require_module("httpx")
    from cbr.serve.engine import Engine
    from tests.serve.conftest import make_client

    engine = Engine(["default"])
    try:
        with make_client(engine) as client:
            r = client.post("/reuse", json={"hole": "AsAh", "board": "2c7d9h", "policy": "flop_boom", "top": 0})
            assert r.status_code == 500, r.text
            assert r.json()["detail"] == FLOP_BOOM.removeprefix("error: ")
            r = client.post("/reuse", json={"hole": "AsAh", "policy": "flop_boom", "top": 0})
            assert r.status_code == 200 and r.json()["action"] == "c", r.text
    finally:
        engine.close()


def test_the_note_on_plugins_not_used_is_folded_whole(tmp_path: Path) -> None:
    """The note on a name clash broke at the terminal's edge after `cbr.policies:call ` (a space
    ending the line) with `(myplug)` alone on the next: it is folded between whole items (and at
    the spaces of its head), lines after the first indented, none ending in a space."""
    site = tmp_path / "site"
    info = site / "myplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.policies]\ncall = nosuch.x:Z\n[cbr.features]\ncasper = nosuch.y:F\n")
    repo = Path(__file__).resolve().parents[1]
    items = ["cbr.features:casper (myplug)", "cbr.policies:call (myplug)"]
    for width in (80, 60, 40):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(repo)]), "COLUMNS": str(width)}
        r = subprocess.run([sys.executable, "-m", "cli", "plugins", "list"], capture_output=True, text=True, env=env,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        lines = r.stderr.splitlines()
        start = next(k for k, line in enumerate(lines) if line.startswith("2 plugins not used"))
        note = lines[start:]
        assert all(line == line.rstrip() and len(line) <= width for line in note), (width, note)
        assert all(line.startswith("  ") for line in note[1:]), (width, note)
        assert " ".join(line.strip() for line in note) == \
            f"2 plugins not used, another package's having the same name: {', '.join(items)}", (width, note)
        assert all(any(item in line for line in note) for item in items), (width, note)  # each item on one line


MYPLUG = '''
"""A third-party package as a first-time user writes one from docs/plugins.md."""
import numpy as np

from cbr.policies.base import Policy, legal_triple


class PotCall:
    """pot_odds and bets_to_call on every street; no default similarity."""
    name = "pot_call"

    def feature_names(self, street):
        return ["pot_odds", "bets_to_call"]

    def row(self, dp):
        return np.asarray([dp.pot_odds, dp.bets_to_call], np.float32)

    def rows(self, dps):
        dps = list(dps)
        return {s: np.asarray([self.row(dp) for dp in dps if dp.street == s], np.float32).reshape(-1, 2)
                for s in range(4)}


class PotCallDefault(PotCall):
    """The same columns, with the similarity they are built with by default."""
    name = "pot_call_default"

    def default_similarity(self):
        rows = [{"feature": "pot_odds", "measure": "linear", "weight": 70, "low": 0, "high": 1},
                {"feature": "bets_to_call", "measure": "exp", "weight": 30, "low": 0, "high": 4, "k": 1.5}]
        return {"threshold": 0.9, **{s: rows for s in ("preflop", "flop", "turn", "river")}}


class PotCallWrongDefault(PotCall):
    name = "pot_call_wrong"

    def default_similarity(self):
        rows = [{"feature": "pot_odds", "measure": "linear", "weight": 70, "low": 0, "high": 1}]
        return {s: rows for s in ("preflop", "flop", "turn", "river")}


class RowBoom(PotCall):
    name = "row_boom"

    def row(self, dp):
        raise RuntimeError("row exploded")


class MadeBoom(PotCall):
    name = "made_boom_fs"

    def __init__(self):
        raise KeyError("no table")


class BadLog:
    name = "badlog"
    extensions = (".bad",)

    def sniff(self, path, head):
        return path.endswith(".bad")

    def parse(self, path):
        raise RuntimeError("bad parser exploded")
        yield


class HalfLog:
    """Reads an ACPC log's first two hands, then fails."""
    name = "halflog"
    extensions = (".half",)

    def sniff(self, path, head):
        return path.endswith(".half")

    def parse(self, path):
        from cbr.logs.acpc import AcpcParser

        for n, item in enumerate(AcpcParser().parse(path)):
            if n == 2:
                raise ValueError("half way")
            yield item


class MadeBoomLog:
    """A parser that cannot be made (its grammar file is missing, say)."""
    name = "madeboomlog"
    extensions = (".mbl",)

    def __init__(self):
        raise KeyError("no grammar")

    def sniff(self, path, head):
        return path.endswith(".mbl")

    def parse(self, path):
        yield from ()


class NoDoc(Policy):
    name = "nodoc"

    def triple(self, dp):
        return legal_triple((0.0, 1.0, 0.0), dp.legal)


class WithDoc(Policy):
    """Calls every time, from its own docstring. More words."""
    name = "withdoc"

    def triple(self, dp):
        return legal_triple((0.0, 1.0, 0.0), dp.legal)
'''

STREETS_ = ("preflop", "flop", "turn", "river")

MYPLUG_ENTRY_POINTS = """[cbr.features]
pot_call = myplug:PotCall
pot_call_default = myplug:PotCallDefault
pot_call_wrong = myplug:PotCallWrongDefault
row_boom = myplug:RowBoom
made_boom_fs = myplug:MadeBoom
[cbr.parsers]
badlog = myplug:BadLog
halflog = myplug:HalfLog
madeboomlog = myplug:MadeBoomLog
[cbr.policies]
nodoc = myplug:NoDoc
withdoc = myplug:WithDoc
"""


@pytest.fixture
def myplug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package ``myplug`` installed as pip would (a dist-info with its entry points beside
    the module, on sys.path): the folder to put on PYTHONPATH."""
    site = tmp_path / "site"
    info = site / "myplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(MYPLUG_ENTRY_POINTS)
    (site / "myplug.py").write_text(MYPLUG)
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    from cbr.logs import detect

    monkeypatch.setattr(detect, "_INSTANCES", {})
    yield site
    plugins.clear_cache()
    sys.modules.pop("myplug", None)


@pytest.fixture(scope="module")
def small_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    path = tmp_path_factory.mktemp("plugin-logs") / "hu.log"
    with AcpcLogWriter(path) as log:
        run_match(["random", "call"], 30, seed=3, log=log)
    return path


def _cli(site: Path, *args: object, cwd: Path) -> subprocess.CompletedProcess:
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(repo)])}
    return subprocess.run([sys.executable, "-m", "cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def test_a_plugin_feature_set_without_a_default_similarity_names_the_option(myplug: Path, small_log: Path,
                                                                           tmp_path: Path) -> None:
    """`cbr build --feature-set pot_call` (a plugin's, with no similarity) failed at the end of
    the build with `the similarity config for preflop covers [CASPER's 8 features], but the
    feature set gives [...]`: CASPER's was used as its default. Now it stops before reading
    the logs, saying what to give and with which option; with a TOML it builds."""
    r = _cli(myplug, "build", small_log, "-o", tmp_path / "cb", "--feature-set", "pot_call", "-j", "1", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip() == (
        "error: feature set 'pot_call' has no default similarity (its plugin gives no default_similarity()): "
        "give a similarity config, a TOML file with a [[preflop]], [[flop]], [[turn]] and [[river]] table for "
        "each of its columns (pot_odds, bets_to_call) (--similarity FILE.toml)"), r.stderr
    assert not (tmp_path / "cb").exists()
    rows = "".join(f'[[{s}]]\nfeature = "pot_odds"\nmeasure = "linear"\nweight = 50\nlow = 0\nhigh = 1\n'
                   f'[[{s}]]\nfeature = "bets_to_call"\nmeasure = "linear"\nweight = 50\nlow = 0\nhigh = 4\n'
                   for s in STREETS_)
    (tmp_path / "pot.toml").write_text(rows)
    r = _cli(myplug, "build", small_log, "-o", tmp_path / "cb", "--feature-set", "pot_call", "-j", "1",
             "--similarity", tmp_path / "pot.toml", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["cases"] > 0


def test_a_plugin_feature_set_gives_its_own_default_similarity(myplug: Path, small_log: Path, tmp_path: Path) -> None:
    """A feature set's `default_similarity()` (a SimilarityConfig, or its mapping as the TOML
    reads) is the similarity of a case base built without one; one that does not cover its
    columns is refused, naming the feature set."""
    from myplug import PotCallDefault

    from cbr.build.local import build_casebase
    from cbr.errors import ConfigError
    from cbr.similarity import SimilarityConfig, default_for
    from cbr.store import CaseBase

    fs = plugins.load_feature_set("pot_call_default")
    expected = SimilarityConfig.from_dict(PotCallDefault().default_similarity())
    assert default_for(fs) == expected and expected.threshold == 0.9
    report = build_casebase([small_log], tmp_path / "cb", feature_set="pot_call_default")
    assert report.cases > 0
    with CaseBase.open(tmp_path / "cb") as cb:
        assert cb.similarity() == expected
        assert cb.similarity().street("river").feature_specs[1].params == {"k": 1.5}
    with pytest.raises(ConfigError) as info:
        build_casebase([small_log], tmp_path / "wrong", feature_set="pot_call_wrong")
    assert str(info.value) == ("feature set 'pot_call_wrong': default_similarity() covers ['pot_odds'] on the "
                               "preflop, but its feature_names('preflop') gives ['pot_odds', 'bets_to_call']")
    assert not (tmp_path / "wrong").exists()


PARSE_BOOM = ("error: log format 'badlog' (plugin 'badlog' in cbr.parsers: myplug:BadLog, package myplug) "
              "failed in parse() on {}: RuntimeError: bad parser exploded")
MADE_BOOM_LOG = ("log format 'madeboomlog' (plugin 'madeboomlog' in cbr.parsers: myplug:MadeBoomLog, package "
                 "myplug) failed when it was made: KeyError: 'no grammar'")
ROW_BOOM = ("error: feature set 'row_boom' (plugin 'row_boom' in cbr.features: myplug:RowBoom, package myplug) "
            "failed in row(): RuntimeError: row exploded")


def test_a_plugin_parser_that_raises_is_named_in_one_line_and_exit_1(myplug: Path, small_log: Path,
                                                                      tmp_path: Path) -> None:
    """Another package's parser raising in parse() was `internal error: RuntimeError: bad parser
    exploded (run with --debug ...)`, exit 3, as if the engine had a bug: one line naming it and
    its package, exit 1, whether it was found by its extension or forced with -f."""
    (tmp_path / "a.bad").write_text("x\n")
    for args, read in ((["build", tmp_path / "a.bad", "-o", tmp_path / "cb", "-j", "1"], tmp_path / "a.bad"),
                       (["logs", "inspect", tmp_path / "a.bad"], tmp_path / "a.bad"),
                       (["logs", "inspect", "-f", "badlog", small_log], small_log)):
        r = _cli(myplug, *args, cwd=tmp_path)
        assert (r.returncode, r.stderr.strip()) == (1, PARSE_BOOM.format(read)), args
    from cbr.errors import PluginFailedError
    from cbr.logs.detect import read_logs

    with pytest.raises(PluginFailedError) as info:
        list(read_logs([tmp_path / "a.bad"]))
    assert str(info.value) == PARSE_BOOM.removeprefix("error: ").format(tmp_path / "a.bad")
    assert isinstance(info.value.__cause__, RuntimeError)


def test_a_plugin_parser_that_raises_names_the_file_and_the_line_it_had_reached(myplug: Path, small_log: Path,
                                                                               tmp_path: Path) -> None:
    """The one line naming a parser that raised in parse() did not say which file it was reading
    (of the many a build reads), nor where: the file, and the line of the last hand it gave."""
    from cbr.logs.acpc import AcpcParser

    half = tmp_path / "logs" / "b.half"
    half.parent.mkdir()
    half.write_text(small_log.read_text())
    (tmp_path / "logs" / "a.log").write_text(small_log.read_text())  # read before it, whole
    second = [item.line for item in AcpcParser().parse(str(half))][1]
    assert second > 1
    line = ("error: log format 'halflog' (plugin 'halflog' in cbr.parsers: myplug:HalfLog, package myplug) "
            f"failed in parse() on {half}, after line {second}: ValueError: half way")
    for args in (["build", tmp_path / "logs", "-o", tmp_path / "cb", "-j", "1"], ["logs", "inspect", tmp_path / "logs"]):
        r = _cli(myplug, *args, cwd=tmp_path)
        assert (r.returncode, r.stderr.strip().splitlines()[-1]) == (1, line), (args, r.stderr)
        assert not (tmp_path / "cb").exists()


def test_a_plugin_parser_that_cannot_be_made_is_said_once_and_listed_as_failed(myplug: Path, small_log: Path,
                                                                              tmp_path: Path) -> None:
    """A parser that raised as it was made was left out of format detection in silence (its
    files 'not a log any parser recognises'), and `cbr plugins list` showed it as fine since it
    imports: now a build and an inspection say once why it is left out, and the list shows it
    failed, with its error, as a plugin that fails to import."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("a.mbl", "b.mbl"):
        (logs / name).write_text("x\n")
    (logs / "c.log").write_text(small_log.read_text())
    warning = f"warning: {MADE_BOOM_LOG}; left out of format detection, its files are not recognised"
    r = _cli(myplug, "build", logs, "-o", tmp_path / "cb", "-j", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines().count(warning) == 1, r.stderr
    r = _cli(myplug, "logs", "inspect", logs, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines().count(warning) == 1, r.stderr
    r = _cli(myplug, "logs", "inspect", logs, "--json", cwd=tmp_path)
    assert json.loads(r.stdout)["warnings"] == [warning.removeprefix("warning: ")]
    r = _cli(myplug, "logs", "inspect", "-f", "acpc", logs / "c.log", cwd=tmp_path)  # no detection: nothing to say
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    # nothing else to read: the build's error says why its files were not recognised
    r = _cli(myplug, "build", logs / "a.mbl", "-o", tmp_path / "cb2", "-j", "1", cwd=tmp_path)
    assert r.returncode == 1 and r.stderr.strip().endswith(f"; {MADE_BOOM_LOG}; left out of format detection, "
                                                           "its files are not recognised"), r.stderr
    from cbr.logs.inspect import inspect_logs

    assert inspect_logs([logs]).warnings == [warning.removeprefix("warning: ")]
    info = {i.name: i for i in plugins.describe(("cbr.parsers",))}
    assert not info["madeboomlog"].ok and info["madeboomlog"].error == MADE_BOOM_LOG
    assert info["badlog"].ok and info["acpc"].ok
    r = _cli(myplug, "plugins", "list", "--json", cwd=tmp_path)
    rows = {(row["group"], row["name"]): row for row in json.loads(r.stdout)}
    assert (rows[("cbr.parsers", "madeboomlog")]["ok"], rows[("cbr.parsers", "madeboomlog")]["error"]) == (
        False, MADE_BOOM_LOG)
    r = _cli(myplug, "plugins", "list", cwd=tmp_path)
    assert "ERROR: " + MADE_BOOM_LOG[:40] in " ".join(r.stdout.split()), r.stdout
    assert "cbr.parsers:madeboomlog" in r.stderr, r.stderr


def test_a_plugin_feature_set_that_raises_is_named_in_one_line_and_exit_1(myplug: Path, small_log: Path,
                                                                           tmp_path: Path) -> None:
    """Another package's feature set raising as a build computed its rows was an internal error
    (exit 3), with one process or several: now one line naming it, exit 1, and nothing written;
    as it is made too."""
    sim = tmp_path / "pot.toml"
    sim.write_text("".join(f'[[{s}]]\nfeature = "{f}"\nmeasure = "linear"\nweight = 50\nlow = 0\nhigh = 4\n'
                           for s in STREETS_ for f in ("pot_odds", "bets_to_call")))
    for workers in ("1", "2"):
        r = _cli(myplug, "build", small_log, "-o", tmp_path / "cb", "--feature-set", "row_boom", "-j", workers,
                 "--similarity", sim, cwd=tmp_path)
        assert (r.returncode, r.stderr.strip()) == (1, ROW_BOOM), (workers, r.stderr)
        assert not (tmp_path / "cb").exists()
    r = _cli(myplug, "build", small_log, "-o", tmp_path / "cb", "--feature-set", "made_boom_fs", "-j", "1", cwd=tmp_path)
    assert (r.returncode, r.stderr.strip()) == (1, "error: feature set 'made_boom_fs' (plugin 'made_boom_fs' in "
                                                   "cbr.features: myplug:MadeBoom, package myplug) failed when it "
                                                   "was made: KeyError: 'no table'"), r.stderr
    # the engine's own feature sets are not wrapped: their errors stay the engine's
    assert type(plugins.load_feature_set("casper")).__name__ == "CasperFeatures"
    from cbr.errors import PluginFailedError

    fs = plugins.load_feature_set("row_boom")
    with pytest.raises(PluginFailedError) as info:
        fs.row(None)
    assert str(info.value) == ROW_BOOM.removeprefix("error: ") and isinstance(info.value.__cause__, RuntimeError)
    import pickle

    again = pickle.loads(pickle.dumps(fs))  # sent to worker processes as it is
    assert again.feature_names(0) == ["pot_odds", "bets_to_call"] and again.name == "row_boom"


def test_a_plugin_failing_on_dask_is_one_line_without_dask_s_block(myplug: Path, small_log: Path,
                                                                   tmp_path: Path) -> None:
    """On a local Dask cluster, a failing plugin parser or feature set printed Dask's own
    `distributed.worker - ERROR - Compute Failed` block (seven lines and a traceback) before the
    command's line: now only the command's line."""
    require_module("distributed")
    (tmp_path / "a.bad").write_text("x\n")
    sim = tmp_path / "pot.toml"
    sim.write_text("".join(f'[[{s}]]\nfeature = "{f}"\nmeasure = "linear"\nweight = 50\nlow = 0\nhigh = 4\n'
                           for s in STREETS_ for f in ("pot_odds", "bets_to_call")))
    for args, line in ((["--feature-set", "row_boom", "--similarity", sim, small_log], ROW_BOOM),
                       ([tmp_path / "a.bad"], PARSE_BOOM.format(tmp_path / "a.bad"))):
        r = _cli(myplug, "build", "-o", tmp_path / "cb", "--scheduler", "local", "--dask-workers", "1", *args,
                 cwd=tmp_path)
        assert (r.returncode, r.stderr.strip()) == (1, line), r.stderr
        assert not (tmp_path / "cb").exists()


def test_a_plugin_bot_without_a_docstring_is_not_described_as_its_base(myplug: Path) -> None:
    """A third-party bot with no docstring was listed as "Base class of every bot" (Policy's
    docstring, inherited): a bot is described only by its own docstring (or description)."""
    from typer.testing import CliRunner

    from cbr.policies.spec import policy_description
    from cli import app

    assert policy_description("nodoc") == ""
    assert policy_description("withdoc") == "Calls every time, from its own docstring"
    res = CliRunner().invoke(app, ["plugins", "list", "--json"])
    rows = {r["name"]: r for r in json.loads(res.stdout) if r["group"] == "cbr.policies"}
    assert rows["nodoc"]["description"] == "" and rows["withdoc"]["description"].startswith("Calls every time")
    res = CliRunner().invoke(app, ["plugins", "list"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert "Base class" not in res.stdout
    line = next(line for line in res.stdout.splitlines() if line.startswith("  nodoc "))
    assert line.split() == ["nodoc", "myplug:NoDoc"]  # no description: the object it loads


def test_a_case_base_whose_plugin_is_not_installed_is_not_sound_and_says_so(demo_plugin, tmp_path: Path) -> None:
    """A case base built with another package's feature set and similarity measure, read where
    that package is not installed: verify said "sound" (exit 0) while every command failed
    with "unknown similarity measure" or "no plugin ... in cbr.features". Now verify names each
    missing plugin and what to install (exit 1), and query and match say the case base needs a
    plugin that is not installed; with the package installed it is sound again."""
    from cbr.similarity import SimilarityConfig
    from cbr.store import CaseBaseWriter
    from tests.store.test_store import make_dp

    def build(name: str, pot_measure: str) -> Path:
        rows = []
        for s in ("preflop", "flop", "turn", "river"):
            rows.append(f"[[{s}]]\nfeature = \"pot_odds\"\nmeasure = \"{pot_measure}\"\nweight = 50\nlow = 0\nhigh = 1\n")
            rows.append(f"[[{s}]]\nfeature = \"small_bets_in_pot\"\nmeasure = \"linear\"\nweight = 50\n"
                        "low = 0\nhigh = 100\n")
        cfg = SimilarityConfig.from_toml("threshold = 0.9\n" + "\n".join(rows))
        with CaseBaseWriter(tmp_path / name, feature_set="pot_only", similarity=cfg) as w:
            w.add_decisions([make_dp(0, action="c"), make_dp(1, action="r")])
        return tmp_path / name

    both, features_only = build("both", "steep"), build("features", "linear")
    repo = Path(__file__).resolve().parents[1]
    without = {**os.environ, "PYTHONPATH": str(repo)}
    with_it = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(PKG / "src"), str(repo)])}

    def cbr(env: dict, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "cli", *args], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=300)

    v = cbr(without, "casebase", "verify", str(both))
    assert v.returncode == 1 and "sound" not in v.stdout, (v.stdout, v.stderr)
    lines = v.stderr.strip().splitlines()
    assert len(lines) == 2, v.stderr
    assert "'pot_only', a cbr.features plugin that is not installed" in lines[0], lines
    assert "'steep' (for pot_odds on the preflop), a cbr.similarity plugin that is not installed" in lines[1], lines
    assert all("install the package that provides it" in line for line in lines)
    problems = json.loads(cbr(without, "casebase", "verify", str(both), "--json").stdout)["problems"]
    assert [(p["kind"], p["file"]) for p in problems] == [("plugin", "manifest.json"), ("plugin", "similarity.toml")]

    situation = ["--hole", "AdQc", "--board", "3h4cJh", "--position", "1", "--to-call", "1", "--pot", "5",
                 "--prev-bets", "2"]
    for path, needs in ((both, "the similarity measure 'steep'"), (features_only, "the feature set 'pot_only'")):
        for args in (["query", "-c", str(path), *situation],
                     ["match", "--players", f"cbr:casebase={path},call", "--hands", "2"]):
            r = cbr(without, *args)
            assert r.returncode == 1, (args, r.stderr)
            assert r.stderr.strip().splitlines()[-1] == \
                f"error: {path}: the case base needs {needs}" + (" (for pot_odds on the preflop)" if "steep" in needs
                                                                   else "") + \
                ", a " + ("cbr.similarity" if "steep" in needs else "cbr.features") + \
                " plugin that is not installed: install the package that provides it; cbr plugins list shows what " \
                "is installed", (args, r.stderr)

    for path in (both, features_only):  # the same case bases where the package is installed
        v = cbr(with_it, "casebase", "verify", str(path))
        assert v.returncode == 0 and "sound (2 cases)" in v.stdout, v.stderr
    assert cbr(with_it, "query", "-c", str(features_only), *situation).returncode == 0


@pytest.fixture
def oom_parser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed package whose parser's module runs out of memory as it is imported (as the
    engine's own parsers' modules did under an address-space limit of about 215-230 MB): the
    folder to put on PYTHONPATH."""
    site = tmp_path / "oomsite"
    info = site / "oomplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: oomplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.parsers]\noom = oomplug:Parser\n")
    (site / "oomplug.py").write_text("raise MemoryError\n")
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    from cbr.logs import detect

    monkeypatch.setattr(detect, "_INSTANCES", {})
    yield site
    plugins.clear_cache()
    sys.modules.pop("oomplug", None)


OOM_PARSERS = "could not load the parsers: log format 'oom' (oomplug:Parser): MemoryError"


def test_running_out_of_memory_loading_a_parser_is_said_not_an_empty_list_of_formats(
        oom_parser: Path, small_log: Path, tmp_path: Path) -> None:
    """A ``MemoryError`` while a parser's module was imported was taken for a broken plugin and
    the parser left out: with all of them out (a memory cap), every log was "not a log any
    parser recognises (formats: )". Running out of memory loading a parser is now its own error
    (``PluginError`` from the ``MemoryError``), and at the command line one line, exit 1."""
    from cbr.errors import PluginError
    from cbr.logs.detect import detect_format, scan_logs

    for detect in (lambda: detect_format(small_log), lambda: scan_logs([small_log])):
        with pytest.raises(PluginError) as info:
            detect()
        assert str(info.value) == OOM_PARSERS and isinstance(info.value.__cause__, MemoryError)
    r = _cli(oom_parser, "build", small_log, "-o", tmp_path / "cb", "-j", "1", cwd=tmp_path)
    assert (r.returncode, r.stderr.strip()) == (1, f"error: not enough memory (MemoryError; {OOM_PARSERS})"), r.stderr
    assert not (tmp_path / "cb").exists()
    # named with its format, the parser is not needed to detect the others: the log is read
    r = _cli(oom_parser, "logs", "inspect", "-f", "acpc", small_log, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
