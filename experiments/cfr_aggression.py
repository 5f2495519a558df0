"""Why the teacher wins little against always-raise (issue 37): where its chips go.

    python3 experiments/cfr_aggression.py --seed 11 --hands 40000 --self-hands 20000

1. Each bot of ``--bots`` (default: the teacher ``cfr`` and the 4-bucket strategy) plays a
   duplicate match of ``--hands`` hands against ``raise``: its result (sb/h, 95% CI), then per
   street how often it folds, what folding costs (sb/h), the equity its folded hands had
   against the raiser's actual hand (runouts sampled), and its action frequencies; at the
   showdowns, what it wins and loses and the mean pot it wins.
2. Each bot of ``--self-bots`` (default: the teacher) against itself (``--self-hands``, not
   duplicate): facing the first bet of a
   post-flop street, how often it folds, and what a *pure bluff* (a bet that loses whenever
   it is called) would earn against that folding, in sb per bet. Positive means the strategy
   folds more than its pot odds allow: betting every hand would profit, so it is not near an
   equilibrium there (in the real game: a coarse abstraction's equilibrium can be, too).
3. The shipped teacher's table: rows that are the uniform default (never trained: the bug
   fixed in issue 37) and how often a river facing-a-bet row folds more than the row 16
   buckets weaker (noise of rows trained from few samples: fold should fall as HS rises).

Writes ``--out`` (default ``experiments/scratch/aggression-seed<S>.json``) and a summary on stdout.
The 4-bucket strategy's self-play (slow: 9 ms a decision) was run on its own:
``--bots '' --self-bots cfr:strategy=h_hs2_4 --self-hands 4000 --out
experiments/results/aggression-self-h_hs2_4-seed11.json``.
"""
from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import OUT_HELP, ci_text, environment, finite, out_file, out_path, say, write_json  # noqa: E402

from cbr.errors import counted  # noqa: E402

BOTS = "cfr:strategy=emd_256,cfr:strategy=h_hs2_4"


class Keep:
    """A log writer that keeps the hand records in memory."""

    def __init__(self) -> None:
        self.hands: list = []

    def write(self, record) -> None:  # noqa: ANN001
        self.hands.append(record)

    def close(self) -> None:
        pass


def _street_pots(rec) -> list[float]:  # noqa: ANN001
    """Chips in the pot at the start of each street (fixed limit, heads up)."""
    g = rec.game
    committed = [float(x) for x in (rec.posted or g.blinds)]
    pots, street = [sum(committed)], 0
    level = max(committed)
    for a in rec.actions:
        while a.street > street:
            street += 1
            pots.append(sum(committed))
            level = max(committed)
        if a.kind == "r":
            level += g.bet_size(a.street)
            committed[a.position] = level
        elif a.kind == "c":
            committed[a.position] = level
    return pots


def _equity(mine, theirs, board, rng: random.Random, samples: int = 100) -> float:  # noqa: ANN001
    from evaluator_ext import evaluate

    used = set(mine) | set(theirs) | set(board)
    deck = [c for c in range(52) if c not in used]
    need = 5 - len(board)
    runs = 1 if need == 0 else samples
    won = 0.0
    for _ in range(runs):
        b = list(board) + rng.sample(deck, need)
        v1, v2 = evaluate(list(mine) + b), evaluate(list(theirs) + b)
        won += 1.0 if v1 > v2 else (0.5 if v1 == v2 else 0.0)
    return won / runs


def against_raise(bot: str, hands: int, seed: int) -> dict:
    from cbr.play.match import run_match

    keep = Keep()
    m = run_match([bot, "raise"], hands, duplicate=True, seed=seed, log=keep)
    rng = random.Random(seed)
    sb = float(keep.hands[0].game.small_bet)
    folds, fold_cost, fold_eq, acts = Counter(), Counter(), Counter(), Counter()
    sd = {"won": 0.0, "lost": 0.0, "n_won": 0, "n_lost": 0}
    for rec in keep.hands:
        me = next(i for i, name in enumerate(rec.players) if name != "raise")
        for a in rec.actions:
            if a.position == me:
                acts[(a.street, a.kind)] += 1
        pay = rec.payoffs[me]
        last = rec.actions[-1]
        if last.kind == "f" and last.position == me:
            s = last.street
            folds[s] += 1
            fold_cost[s] += pay
            board = rec.board[: (0, 3, 4, 5)[s]]
            fold_eq[s] += _equity(rec.hole_cards[me], rec.hole_cards[1 - me], board, rng)
        elif last.kind != "f":
            key = "won" if pay > 0 else "lost"
            if pay != 0:
                sd[key] += pay
                sd["n_" + key] += 1
    n = len(keep.hands)
    streets = []
    for s in range(4):
        total = sum(acts[(s, k)] for k in "fcr") or 1
        streets.append({"folds_per_hand": folds[s] / n, "fold_cost_sb_per_hand": fold_cost[s] / sb / n,
                        "folded_equity_vs_raiser": fold_eq[s] / folds[s] if folds[s] else None,
                        "actions": {k: acts[(s, k)] / total for k in "fcr"}})
    me = m.players[0]
    return {"bot": bot, "hands": m.hands, "sb_per_hand": me.sb_per_hand, "ci": finite(me.sb_ci), "streets": streets,
            "showdown_won_sb_per_hand": sd["won"] / sb / n, "showdown_lost_sb_per_hand": sd["lost"] / sb / n,
            "mean_pot_won_sb": sd["won"] / sb / max(sd["n_won"], 1), "showdowns_won": sd["n_won"],
            "showdowns_lost": sd["n_lost"]}


def self_play_bluffs(bot: str, hands: int, seed: int) -> list[dict]:
    from cbr.play.match import run_match

    keep = Keep()
    run_match([bot, bot], hands, seed=seed, log=keep)
    out = {s: {"faced": 0, "folds": 0, "bluff_sb": 0.0} for s in (1, 2, 3)}
    for rec in keep.hands:
        pots = _street_pots(rec)
        sb = float(rec.game.small_bet)
        for s in (1, 2, 3):
            acts = [a for a in rec.actions if a.street == s]
            first = next((i for i, a in enumerate(acts) if a.kind == "r"), None)
            if first is None or first + 1 >= len(acts):
                continue
            bet = float(rec.game.bet_size(s))
            o = out[s]
            o["faced"] += 1
            if acts[first + 1].kind == "f":
                o["folds"] += 1
                o["bluff_sb"] += pots[s] / sb
            else:
                o["bluff_sb"] -= bet / sb
    return [{"street": s, "faced": o["faced"], "fold_rate": o["folds"] / max(o["faced"], 1),
             "pure_bluff_sb_per_bet": o["bluff_sb"] / max(o["faced"], 1)} for s, o in out.items()]


def table_checks() -> dict:
    import numpy as np

    from cbr.cfr.mccfr import layout
    from cbr.cfr.policy import SHIPPED_TEACHER
    from cbr.cfr.tree import build_tree

    with np.load(SHIPPED_TEACHER / "strategy.npz") as z:
        q = np.array(z["probs"]).astype(np.float64)
    tree = build_tree("holdem.limit.2p")
    nb = (169, 256, 256, 256)
    off, _ = layout(tree, nb)
    uniform = rows = river_rows = inversions = 0
    for node in tree.decision_nodes():
        k, r = int(tree.n_children[node]), nb[int(tree.street[node])]
        t = q[int(off[node]): int(off[node]) + r * k].reshape(r, k)
        uniform += int(np.all(t == t[:, :1], axis=1).sum())
        rows += r
        actions = tree.actions(node)
        if int(tree.street[node]) == 3 and "f" in actions:
            s = t.sum(axis=1)
            fold = np.where(s > 0, t[:, actions.index("f")] / np.where(s > 0, s, 1), np.nan)
            step = fold[16:] - fold[:-16]
            ok = ~np.isnan(step)
            river_rows += int(ok.sum())
            inversions += int((step[ok] > 0.5).sum())
    return {"rows": rows, "uniform_rows": uniform, "river_facing_bet_pairs": river_rows,
            "fold_rises_by_half_16_buckets_up": inversions}


def main() -> None:
    from common import description, help_format, parse_args, policy_specs, positive_int, seed_int

    ap = argparse.ArgumentParser(description=description(__doc__), formatter_class=help_format())
    ap.add_argument("--seed", type=seed_int, default=11, help="deal seed of the matches")
    ap.add_argument("--hands", type=positive_int, default=40000, help="duplicate hands against always-raise")
    ap.add_argument("--self-hands", type=positive_int, default=20000, help="hands of each bot against itself")
    ap.add_argument("--bots", type=policy_specs(0), default=BOTS, help="bots to play against raise (policy specs; empty: none)")
    ap.add_argument("--self-bots", type=policy_specs(0), default="cfr:strategy=emd_256",
                    help="bots to play against themselves (policy specs; empty: none)")
    ap.add_argument("--out", type=out_path("file"), default=None, help=OUT_HELP.format(name="aggression-seed<SEED>.json"))
    a = parse_args(ap)
    result = {"seed": a.seed, "environment": environment(), "against_raise": [], "self_play": {}}
    for bot in a.bots:
        say(f"{bot} against raise, {a.hands} duplicate hands")
        result["against_raise"].append(against_raise(bot, a.hands, a.seed))
    for bot in a.self_bots:
        say(f"{bot} against itself, {counted(a.self_hands, 'hand')}")
        result["self_play"][bot] = self_play_bluffs(bot, a.self_hands, a.seed)
    result["table"] = table_checks()
    out = out_file(a.out, f"aggression-seed{a.seed}.json")
    write_json(out, result)
    for r in result["against_raise"]:
        print(f"{r['bot']}: {r['sb_per_hand']:+.3f} ± {ci_text(r['ci'])} sb/h against raise; showdowns "
              f"{r['showdown_won_sb_per_hand']:+.2f} / {r['showdown_lost_sb_per_hand']:+.2f} sb/h "
              f"(mean pot won {r['mean_pot_won_sb']:.1f} sb)")
        for s, st in enumerate(r["streets"]):
            eq = st["folded_equity_vs_raiser"]
            print(f"   street {s}: folds {st['folds_per_hand']:.3f}/hand costing {st['fold_cost_sb_per_hand']:+.3f} "
                  f"sb/h (equity {eq if eq is None else round(eq, 3)}); f/c/r "
                  + "/".join(f"{st['actions'][k]:.3f}" for k in "fcr"))
    for bot, streets in result["self_play"].items():
        for s in streets:
            print(f"{bot} self-play, street {s['street']}: facing a bet folds {s['fold_rate']:.3f}; "
                  f"a pure bluff earns {s['pure_bluff_sb_per_bet']:+.3f} sb per bet ({s['faced']} bets)")
    print(result["table"])
    say(f"wrote {out}")


if __name__ == "__main__":
    from common import run

    run(main)
