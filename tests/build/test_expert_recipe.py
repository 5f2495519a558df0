"""The expert case base's recipe (casebases/build_expert.py), at a small scale: the teacher's
matches are written as ACPC logs, a re-run plays nothing twice, and the case base holds the
teacher's decisions only."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import require_native

require_native(module_level=True)

from casebases import build_expert as recipe  # noqa: E402
from cbr.logs.acpc import AcpcParser  # noqa: E402
from cbr.store.casebase import CaseBase  # noqa: E402


def test_the_recipe_splits_hands_by_share_and_keeps_seeds_apart() -> None:
    matches = recipe.recipe(Path("logs"), 100_000, 20_000)
    assert sum(m.hands for m in matches) == 100_000
    by_pair = {}
    for m in matches:
        by_pair[m.players] = by_pair.get(m.players, 0) + m.hands
    assert by_pair[("cfr", "cfr")] == 40_000 and by_pair[("cfr", "hs")] == 15_000
    assert len({m.seed for m in matches}) == len(matches)
    ship = recipe.shipped_subset(matches, 40_000)
    assert sum(k for _, k in ship) == 40_000 and {m.players for m, _ in ship} == set(recipe.PAIRINGS)
    assert all(k % 2 == 0 and k <= m.hands for m, k in ship)          # whole duplicate deals of a match


def test_a_small_expert_base_holds_only_the_teachers_decisions(tmp_path: Path) -> None:
    logs, out = tmp_path / "logs", tmp_path / "expert"
    assert recipe.main(["--logs", str(logs), "--hands", "200", "--match-hands", "40", "--workers", "1",
                        "--out", str(out)]) == 0
    files = sorted(logs.glob("*.log"))
    assert [f.name for f in files][:2] == ["cfr-cfr-000.log", "cfr-cfr-001.log"] and len(files) == 6   # 80 self-play hands in two logs, 30 against each rule bot
    stamps = {f: f.stat().st_mtime_ns for f in files}
    hands = [h for f in files for h in AcpcParser().parse(str(f))]
    assert len(hands) == 200 and all(type(h).__name__ == "HandRecord" for h in hands)
    cb = CaseBase.open(out)
    try:
        players = {r[0] for r in cb.sql("SELECT DISTINCT player FROM cases").fetchall()}
        assert players and players <= set(recipe.TEACHER_SEATS), players
    finally:
        cb.close()
    # a re-run finds every log and plays nothing again
    assert recipe.main(["--logs", str(logs), "--hands", "200", "--match-hands", "40", "--workers", "1",
                        "--out", str(tmp_path / "again")]) == 0
    assert {f: f.stat().st_mtime_ns for f in files} == stamps
    # the shipped sample: the first hands of each pairing's logs, in the recipe's shares
    assert recipe.main(["--logs", str(logs), "--hands", "200", "--match-hands", "40", "--workers", "1",
                        "--ship", "100", "--out", str(tmp_path / "ship")]) == 0
    sample = CaseBase.open(tmp_path / "ship")
    try:
        per_log = {s: (n, last) for s, n, last in sample.sql(
            "SELECT source, count(DISTINCT hand_id), max(CAST(hand_id AS INTEGER)) FROM cases GROUP BY ALL").fetchall()}
    finally:
        sample.close()
    assert set(per_log) == {f"expert-logs/cfr-{b}-000.log" for b in ("cfr", "hs", "ehs", "poki", "lag")}
    assert per_log["expert-logs/cfr-cfr-000.log"] == (40, 39)   # both seats the teacher: a case in every hand
    for b in ("hs", "ehs", "poki", "lag"):                      # 15% of 100 = 7 deals: hands 0..13 (the teacher
        n, last = per_log[f"expert-logs/cfr-{b}-000.log"]       # has no decision when the bot folds its small blind)
        assert 7 <= n <= 14 and last <= 13
