"""The experiments of issue 8, section 7 (a) and (b): the helpers of ``cbr.play.measure`` and
the two scripts, run for real on tiny hand counts (structure, reproducibility from the
seed, the CI arithmetic)."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from cbr.errors import ConfigError
from cbr.play.match import run_match
from cbr.play.measure import (
    CASPER_TABLE_SEATS,
    SOURCE_BOTS,
    TARGETS,
    TUNED_BOT,
    Cell,
    deal_means,
    hands_needed,
    markdown_table,
    measure,
    paired_difference,
    table_seats,
)
from cbr.stats import Z95, mean_ci

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "experiments"
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def run_script(name: str, *args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", **(env_extra or {})}
    return subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=REPO)


# ---- the CI arithmetic -----------------------------------------------------------------

def test_hands_needed_follows_the_inverse_square_root_law() -> None:
    """Planned hands give the wanted half-width when the per-deal spread stays the pilot's."""
    rng = random.Random(5)
    for _ in range(200):
        players = rng.randint(2, 10)
        pilot_deals = rng.randint(10, 2000)
        pilot_hands = pilot_deals * players
        pilot_ci = rng.uniform(0.01, 3.0)
        target = rng.uniform(0.02, 0.5)
        hands = hands_needed(pilot_ci, pilot_hands, target, players, cap=10**12)
        assert hands % players == 0 or hands == pilot_hands
        predicted = pilot_ci * math.sqrt(pilot_hands / hands)       # same spread, more deals
        assert predicted <= 0.9 * target + 1e-12 or hands == pilot_hands
        if hands > pilot_hands:                                     # and not one deal more than needed
            fewer = hands - players
            assert pilot_ci * math.sqrt(pilot_hands / fewer) > 0.9 * target


def test_hands_needed_cap_and_bad_input() -> None:
    assert hands_needed(2.0, 1000, 0.1, 9, cap=10_000) == 9_999
    for bad in ({"pilot_ci": 0.0}, {"pilot_ci": math.inf}, {"target_ci": -1.0}, {"pilot_hands": 0}):
        kwargs = {"pilot_ci": 0.5, "pilot_hands": 100, "target_ci": 0.1, "players": 2, **bad}
        with pytest.raises(ConfigError) as err:
            hands_needed(**kwargs)
        assert isinstance(err.value, ValueError)


def test_pilot_plans_a_match_whose_ci_reaches_the_bound() -> None:
    """A real pilot (call vs random, small bound so it stays fast) plans the hands, and the
    match played with them reaches the bound."""
    cell = measure("call", ["random"], seed=4, target_ci=1.0, pilot_hands=40)
    assert cell.pilot_hands == 40 and cell.pilot_ci is not None
    assert cell.hands == max(40, hands_needed(cell.pilot_ci, 40, 1.0, 2))
    assert cell.ci_ok and cell.ci < 1.0
    # the reported match is the one run_match plays for that many hands from the seed
    again = run_match(["call", "random"], cell.hands, duplicate=True, seed=4).players[0]
    assert (cell.sb, cell.ci) == (again.sb_per_hand, again.sb_ci)


def test_measure_cap_is_reported() -> None:
    cell = measure("call", ["random"], seed=1, target_ci=0.001, pilot_hands=20, cap=60)
    assert cell.hands == 60 and cell.capped and not cell.ci_ok
    exact = measure("call", ["raise"], seed=1, pilot_hands=20)     # both deterministic: no spread
    assert exact.hands == 20 and exact.ci == 0.0 and not exact.capped


def test_deal_means_and_paired_difference_match_the_match_ci() -> None:
    """Per-deal averages give run_match's mean and CI; a bot compared with itself on the same
    deals differs by exactly 0 deal by deal."""
    r = run_match(["call", "random"], 60, seed=9, duplicate=True, keep_payoffs=True)
    m = deal_means(r)
    mean, ci = mean_ci(m)
    assert len(m) == r.deals == 30
    assert mean == pytest.approx(r.players[0].sb_per_hand, abs=1e-12)
    assert ci == pytest.approx(r.players[0].sb_ci, rel=1e-9)
    assert paired_difference(m, m) == (0.0, 0.0)
    other = deal_means(run_match(["raise", "random"], 60, seed=9, duplicate=True, keep_payoffs=True))
    diff, dci = paired_difference(other, m)
    assert diff == pytest.approx(math.fsum(other) / 30 - mean, abs=1e-12)
    sd = math.sqrt(sum((a - b - diff) ** 2 for a, b in zip(other, m)) / 29)
    assert dci == pytest.approx(Z95 * sd / math.sqrt(30), rel=1e-9)
    with pytest.raises(ConfigError):
        deal_means(run_match(["call", "random"], 4, seed=9))            # not duplicate, no payoffs
    with pytest.raises(ConfigError):
        paired_difference([1.0], [1.0, 2.0])


def test_targets_and_table() -> None:
    assert {b: TARGETS[b] for b in SOURCE_BOTS} == dict.fromkeys(SOURCE_BOTS, -0.05)
    assert (TARGETS["call"], TARGETS["raise"]) == (0.9, 3.0)
    seats = table_seats("cbr")
    assert len(seats) == 9 and seats[0] == "cbr"
    assert sorted(seats[1:]) == sorted(CASPER_TABLE_SEATS) and all(seats[1:].count(b) == 2 for b in SOURCE_BOTS)
    c = Cell("ehs", "cbr", 2, 10, 5, 1, -0.2, 0.5, -0.05, False, 0.1, False, 0, None, False, 0.1)
    row = markdown_table([c]).splitlines()[-1]
    assert "**missed**" in row and "-0.200 ± 0.500" in row and "not below 0.1" in row


# ---- the scripts, for real --------------------------------------------------------------

def test_casper_table_script(tmp_path: Path) -> None:
    """Fixed tiny hands: every cell, the 9-player table, targets, JSON + PNG; the same seed
    gives the same numbers, with one job or two."""
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    p1 = run_script("casper_table.py", "--seed", "3", "--hands", "18", "--out", str(out1))
    assert p1.returncode == 0, p1.stderr
    p2 = run_script("casper_table.py", "--seed", "3", "--hands", "18", "--jobs", "2", "--out", str(out2))
    assert p2.returncode == 0, p2.stderr
    a, b = json.loads(out1.read_text()), json.loads(out2.read_text())
    labels = [c["opponent"] for c in a["cells"]]
    assert labels == ["poki", "ehs", "lag", "hs", "call", "raise", "random", "9-player table"]
    strip = lambda cells: [{k: v for k, v in c.items() if k != "seconds"} for c in cells]  # noqa: E731
    assert strip(a["cells"]) == strip(b["cells"])
    for c in a["cells"]:
        assert c["seed"] == 3 and c["pilot_ci"] is None
        assert c["hands"] == 18 and c["deals"] == c["hands"] // c["players"]
        assert c["target"] == TARGETS.get(c["opponent"])
        assert c["met"] == (None if c["target"] is None else c["sb"] >= c["target"])
    table = a["cells"][-1]
    assert a["bot"] == TUNED_BOT and all(c["bot"] == TUNED_BOT for c in a["cells"])
    assert table["players"] == 9 and a["table_seats"] == table_seats(TUNED_BOT)
    # the script's numbers are run_match's for the same seats, hands and seed
    direct = run_match([TUNED_BOT, "hs"], 18, duplicate=True, seed=3).players[0]
    hs = a["cells"][3]
    assert (hs["sb"], hs["ci"]) == (round(direct.sb_per_hand, 4), round(direct.sb_ci, 4))
    if HAVE_MATPLOTLIB:
        assert out1.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:  # the plots extra is not installed: said so, JSON still written
        assert "pip install -e .[plots]" in p1.stderr and not out1.with_suffix(".png").exists()
    assert "| opponents |" in p1.stdout and "9-player table: start" in p1.stderr


def test_casper_table_script_refuses_unknown_opponents(tmp_path: Path) -> None:
    p = run_script("casper_table.py", "--opponents", "call,nobody", "--out", str(tmp_path / "x.json"))
    assert p.returncode == 2 and "nobody" in p.stderr
    assert not (tmp_path / "x.json").exists()


def test_casper_table_names_plain_casper_and_its_bot_truly() -> None:
    """``--help`` said "plain CASPER: cbr", but plain ``cbr`` is the adaptive bot now: the spec it
    names for plain CASPER builds CASPER's bot (the default case base, plain sampling), and the
    default bot is the one the committed results were measured with."""
    import re

    from cbr.policies.cbr_policy import CBRPolicy
    from cbr.policies.spec import policy_from_spec

    p = run_script("casper_table.py", "--help")
    assert p.returncode == 0, p.stderr
    help_text = " ".join(p.stdout.split())
    named = re.search(r"plain CASPER: (\S+?)[;)]", help_text)
    assert named, help_text
    plain = policy_from_spec(named.group(1), seed=0)
    assert isinstance(plain, CBRPolicy), repr(plain)
    assert (Path(plain.casebase).name, plain.reuse, plain.sharpen, plain.outcome_weight) == \
        ("default", "probabilistic", 1.0, 0.0), repr(plain)
    doc = (SCRIPTS / "casper_table.py").read_text()
    assert "``--bot cbr``" not in doc and "cbr:preset=casper" in doc
    committed = json.loads((REPO / "experiments" / "results" / "casper_table.json").read_text())
    tuned = policy_from_spec(TUNED_BOT, seed=0)  # the committed bot: CBRPolicy over default, sharpen 2, outcome 0.5
    assert committed["bot_policy"].startswith("CBRPolicy(casebase='default', similarity=None, reuse='probabilistic', "
                                              "sharpen=2.0, outcome_weight=0.5")
    assert isinstance(tuned, CBRPolicy) and (Path(tuned.casebase).name, tuned.reuse, tuned.sharpen,
                                             tuned.outcome_weight) == ("default", "probabilistic", 2.0, 0.5)


def test_casper_table_without_matplotlib_still_writes_json(tmp_path: Path) -> None:
    """matplotlib hidden (a module that fails to import): the JSON is written, the hint says
    how to install the plots extra, and no PNG appears."""
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('hidden for the test')\n")
    out = tmp_path / "c.json"
    p = run_script("casper_table.py", "--hands", "4", "--no-table", "--opponents", "call", "--out", str(out),
                   env_extra={"PYTHONPATH": str(fake)})
    assert p.returncode == 0, p.stderr
    assert "pip install -e .[plots]" in p.stderr
    assert json.loads(out.read_text())["cells"][0]["opponent"] == "call"
    assert not out.with_suffix(".png").exists()


def test_reuse_policies_script(tmp_path: Path) -> None:
    """The three re-use policies on the same deals: one row per opponent and policy, the
    paired differences computed deal by deal, reproducible from the seed."""
    out = tmp_path / "r.json"
    p = run_script("reuse_policies.py", "--seed", "5", "--hands", "8", "--also", "cbr:sharpen=2", "--out", str(out))
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert len(rows) == 7 * 4
    assert {r["reuse"] for r in rows} == {"probabilistic", "max-frequency", "best-outcome", "cbr:sharpen=2"}
    by = {(r["opponent"], r["reuse"]): r for r in rows}
    for opp, other in (("poki", "best-outcome"), ("call", "best-outcome"), ("raise", "cbr:sharpen=2")):
        # the script's default --bot is the case-based bot alone, cbr:preset=expert, reuse=... added
        base = run_match(["cbr:preset=expert:reuse=probabilistic", opp], 8, duplicate=True, seed=5, keep_payoffs=True)
        spec = other if ":" in other else f"cbr:preset=expert:reuse={other}"
        best = run_match([spec, opp], 8, duplicate=True, seed=5, keep_payoffs=True)
        assert by[(opp, "probabilistic")]["sb"] == round(base.players[0].sb_per_hand, 4)
        diff, dci = paired_difference(deal_means(best), deal_means(base))
        assert by[(opp, other)]["vs_probabilistic"] == round(diff, 4)
        assert by[(opp, other)]["vs_probabilistic_ci"] == round(dci, 4)
        assert by[(opp, "probabilistic")]["vs_probabilistic"] == 0.0
    assert out.with_suffix(".png").exists() == HAVE_MATPLOTLIB
    assert data["markdown"].count("\n") == 1 + 7


# ---- the shaping options of the cbr bot (tuning knobs; defaults = CASPER's sampling) -------

def test_shaped_triple_laws() -> None:
    from cbr.policies.base import legal_triple
    from cbr.policies.cbr_policy import max_frequency_action, shaped_triple

    rng = random.Random(11)
    for _ in range(300):
        raw = [rng.random() * (rng.random() > 0.2) for _ in range(3)]
        if sum(raw) == 0:
            continue
        t = tuple(x / sum(raw) for x in raw)
        legal = rng.choice(["fcr", "cr", "fc"])
        base = legal_triple(t, legal)
        assert shaped_triple(t, legal) == pytest.approx(base)                  # the defaults change nothing
        sharp = shaped_triple(t, legal, sharpen=60.0)
        best = max_frequency_action(t, legal)
        if sorted(base)[-1] - sorted(base)[-2] > 0.05:                         # no near tie
            assert sharp["fcr".index(best)] > 0.99                             # towards max-frequency
        means = {k: rng.uniform(-3, 3) for k in legal if base["fcr".index(k)] > 0}
        w = rng.uniform(-2, 2)
        tilted = shaped_triple(t, legal, outcome_weight=w, means=means)
        assert sum(tilted) == pytest.approx(1.0)
        for a in means:
            for b in means:
                ia, ib = "fcr".index(a), "fcr".index(b)
                want = base[ia] / base[ib] * math.exp(w * (means[a] - means[b]))
                assert tilted[ia] / tilted[ib] == pytest.approx(want, rel=1e-9)
        for i, k in enumerate("fcr"):
            if k not in legal:
                assert sharp[i] == tilted[i] == 0.0


def test_shaped_bot_samples_its_shaped_triple() -> None:
    """The bot's sampled actions at one situation follow the shaped triple it reports
    (tolerance 4 * sqrt(p (1 - p) / n) per action)."""
    from cbr.game.situation import situation
    from cbr.policies.cbr_policy import CBRPolicy

    dp = situation(hole="9d8d", board="3h7cJh", position=1, to_call=1, pot=5, previous_round_bets=2)
    n = 1500
    with CBRPolicy(seed=3, sharpen=2.0, outcome_weight=0.5) as bot:
        first = bot.decide(dp)
        counts = {k: 0 for k in "fcr"}
        rng = random.Random(8)
        for _ in range(n):
            d = bot.decide(dp, rng)
            counts[d.action] += 1
            assert d.played == first.played and d.reuse == "probabilistic" and "shaped" in d.explanation
    assert first.played != first.triple                    # the shaping did something here
    for i, k in enumerate("fcr"):
        p = first.played[i]
        assert abs(counts[k] / n - p) <= 4 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_shaping_options_are_checked() -> None:
    from cbr.policies.spec import policy_from_spec

    bot = policy_from_spec("cbr:preset=expert:sharpen=2:outcome-weight=0.5", seed=1)
    assert (bot.sharpen, bot.outcome_weight) == (2.0, 0.5)
    assert "sharpen=2.0" in repr(bot) and "sharpen" not in repr(policy_from_spec("cbr:preset=expert", seed=1))
    adaptive = policy_from_spec("cbr:sharpen=2", seed=1)           # the adaptive bot's case-based expert
    assert adaptive.experts[adaptive.safe].sharpen == 2.0
    for spec in ("cbr:sharpen=0", "cbr:sharpen=-1", "cbr:outcome-weight=nan"):
        with pytest.raises(ValueError):
            policy_from_spec(spec, seed=1)


def test_odds_guard_never_folds_a_hand_the_pot_odds_pay_for() -> None:
    """In a real match against always-raise, every post-flop fold of a bot with the odds guard
    is of a hand whose effective strength is below the guard x pot odds, the triple it plays
    has a fold share only there, and the guard turned some folds into calls (the explanation
    says so)."""
    from cbr.policies.base import Policy
    from cbr.policies.cbr_policy import CBRPolicy, guard_strength
    from features.casper import CasperFeatures

    seen: list = []

    class Recorder(Policy):
        name = "recorder"

        def __init__(self, bot: CBRPolicy) -> None:
            super().__init__(seed=0)
            self.bot = bot

        def act(self, dp, rng):  # type: ignore[no-untyped-def]
            d = self.bot.decide(dp, rng)
            seen.append((dp, d))
            return d.action

    fs = CasperFeatures()
    with CBRPolicy(seed=2, odds_guard=1.0) as bot:
        run_match([Recorder(bot), "raise"], 300, duplicate=True, seed=6)
    guarded = 0
    for dp, d in seen:
        if dp.street == 0:
            continue
        row = fs.row(dp)
        ehs = guard_strength(float(row[7]), float(row[8]), int(row[2]))
        if d.action == "f":
            assert ehs < dp.pot_odds
        if "odds guard" in d.explanation:      # the triple it plays has no fold share, whatever was drawn
            assert d.action != "f" and ehs >= dp.pot_odds and d.played[0] == 0.0
            assert abs(sum(d.played) - 1.0) < 1e-9
            guarded += "instead of fold" in d.explanation and d.action == "c"
        elif dp.street > 0 and "c" in dp.legal and d.played[0] > 0.0:   # it may fold here: the guard did not hold
            assert ehs < dp.pot_odds
    assert guarded > 0
    with pytest.raises(ValueError):
        CBRPolicy(odds_guard=-1.0)


def test_bot_table_script(tmp_path: Path) -> None:
    """The bot table at a tiny scale: every cell measured (LBR computed for a seed no earlier
    table has), the decision times counted, and a re-run keeps the cells it has."""
    args = ("--seed", "991", "--bots", "call,ehs", "--opponents", "raise", "--hands", "20", "--lbr-hands", "8",
            "--time-hands", "6", "--workers", "1", "--out", str(tmp_path))
    r = run_script("bot_table.py", *args)
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "bot-table-seed991.json").read_text())["rows"]
    assert set(rows) == {"call", "ehs"}
    for bot in rows.values():
        assert bot["raise"]["hands"] == 20 and math.isfinite(bot["raise"]["sb_per_hand"])
        assert bot["lbr"]["hands"] >= 8 and "from" not in bot["lbr"]
        assert bot["time"]["decisions"] > 0 and bot["time"]["mean_ms"] > 0 and bot["time"]["p99_ms"] > 0
    assert rows["call"]["raise"]["sb_per_hand"] == 0          # duplicate: every hand a showdown of the same pot
    assert "| `call` |" in r.stdout and "| `ehs` |" in r.stdout
    assert (tmp_path / "bot-table-seed991.png").is_file() == HAVE_MATPLOTLIB
    stamp = (tmp_path / "bot-table-seed991.json").read_text()
    again = run_script("bot_table.py", *args)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "bot-table-seed991.json").read_text() == stamp      # nothing re-measured
