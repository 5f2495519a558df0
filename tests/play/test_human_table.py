"""`cbr play --human`: the text table, driven from a script (library function and real CLI)."""
from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from cbr.errors import GameError
from cbr.game.state import HandState
from cbr.play.human import play_human
from cbr.play.match import run_match
from cli import app
from evaluator_ext.cards import cards_str

runner = CliRunner()
KEYS_RE = re.compile(r"\b([fcrq])=")


def keys_of(prompt: str) -> set[str]:
    """The action keys a prompt offers (q excluded)."""
    return set(KEYS_RE.findall(prompt)) - {"q"}


class Script:
    """A scripted human: ``choose(prompt)`` gives the next line; prompts are kept."""

    def __init__(self, choose):
        self.choose = choose
        self.prompts: list[str] = []

    def __call__(self, prompt: str):
        self.prompts.append(prompt)
        return self.choose(prompt)


def play(bot: str, hands: int, choose, seed: int = 5):
    lines: list[str] = []
    script = Script(choose)
    result = play_human([bot], hands, read=script, show=lines.append, seed=seed)
    return result, lines, script


def calls(prompt: str) -> str:
    return "c"


def raises(prompt: str) -> str:
    return "r" if "r=" in prompt else "c"


@pytest.mark.parametrize("bot, choose", [("call", calls), ("raise", raises)])
def test_scripted_session_is_the_same_match_as_run_match(bot, choose):
    # A human who always calls (or raises when allowed) is the `call` (`raise`) bot:
    # the same deals, seats and bot seeds give the payoffs run_match gives.
    seed, hands = 5, 3
    result, lines, _ = play(bot, hands, choose, seed)
    mirror = "call" if choose is calls else "raise"
    expected = run_match([mirror, bot], hands, seed=seed, keep_payoffs=True)
    assert result.hands == hands and not result.quit
    assert result.totals == [sum(p[s] for p in expected.hand_payoffs) for s in range(2)]
    assert sum(result.totals) == 0.0
    assert [r.payoffs for r in result.records] != [] and len(result.records) == hands
    per_hand = [float(m.group(1)) for m in (re.match(r"Hand \d+: you ([+-][\d.]+) sb", ln) for ln in lines) if m]
    assert len(per_hand) == hands
    assert sum(per_hand) == pytest.approx(result.small_bets(0))
    final = lines[-1]
    you, other = (float(x) for x in re.findall(r"([+-][\d.]+) sb(?!/)", final)[:2])
    assert you == pytest.approx(result.small_bets(0)) and you + other == pytest.approx(0.0)


@pytest.mark.parametrize("bot, choose", [("call", calls), ("raise", raises)])
def test_prompts_offer_exactly_the_legal_keys_and_the_table_lines_match_the_state(bot, choose):
    result, lines, script = play(bot, 3, choose)
    assert len(script.prompts) == len(result.decisions) > 0       # no illegal key typed: one prompt each
    for prompt, (dp, kind) in zip(script.prompts, result.decisions):
        assert keys_of(prompt) == set(dp.legal)
        assert kind in dp.legal
    if bot == "raise":  # the raise bot caps some street: then r is not offered
        assert any("r" not in dp.legal for dp, _ in result.decisions)
    # Each decision's table: board and pot as the decision point has them.
    tables = [i for i, ln in enumerate(lines) if ln.startswith("Your cards: ")]
    assert len(tables) == len(result.decisions)
    for i, (dp, _) in zip(tables, result.decisions):
        assert lines[i] == f"Your cards: {cards_str(dp.hole, ' ')}"
        assert lines[i + 1] == f"Board: {cards_str(dp.board, ' ') if dp.board else '(none)'}"
        assert lines[i + 2] == f"Pot: {sum(dp.total_committed):g}"


def test_bot_actions_showdown_and_replay():
    result, lines, _ = play("raise", 3, calls)
    text = "\n".join(lines)
    assert "raise raises to" in text and "you call" in text
    for rec in result.records:
        # the record replays on a fresh HandState to the same payoffs
        s = HandState(rec.game, players=rec.players, hole_cards=rec.hole_cards)
        board = list(rec.board)
        for a in rec.actions:
            while s.needs_board:
                s.deal_board(board[: {0: 3, 1: 4, 2: 5}[s.street]][len(s.board):])
            s.act(a.kind)
        while s.needs_board:
            s.deal_board(board[len(s.board): {0: 3, 1: 4, 2: 5}[s.street]])
        assert s.payoffs() == rec.payoffs
        folded = any(a.kind == "f" for a in rec.actions)
        if not folded:  # calling down: both hands are shown
            for name, hole in zip(rec.players, rec.hole_cards):
                verb = "show" if name == "you" else "shows"
                assert f"  {name} {verb} {cards_str(hole, ' ')}" in lines
        winners = [p for p, v in enumerate(rec.payoffs) if v > 0]
        for p in winners:
            assert any(ln.startswith(f"{rec.players[p]} win") and f"net {rec.payoffs[p]:+g}" in ln for ln in lines)


def test_illegal_keys_are_refused_and_asked_again():
    # Against `call` the human in the big blind can check pre-flop: fold is illegal then.
    typed: list[str] = []

    def choose(prompt: str) -> str:
        if "f=" not in prompt and (not typed or typed[-1] != "f"):
            typed.append("f")
            return "f"
        typed.append("zz" if len(typed) == 1 else "c")
        return typed[-1]

    result, lines, script = play("call", 2, choose)
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert any("cannot fold: nothing to call, check instead" in e for e in errors)
    assert len(script.prompts) == len(result.decisions) + len(errors)
    assert all(kind != "f" for _, kind in result.decisions)


def test_check_facing_a_bet_is_refused_and_call_of_nothing_checks():
    # The raise bot raises first in (the human is the big blind of hand 1 at seed 7): "check"
    # (and "k") would put 10 chips in unasked, so they are refused as "f" with nothing to call is,
    # and asked again; "call" with nothing to call (on the flop, the BB first to act) is a check.
    typed = iter(["check", "K", "call", "call", "q"])
    lines: list[str] = []
    prompts: list[str] = []

    def read(prompt: str):
        prompts.append(prompt)
        return next(typed)

    result = play_human(["raise"], 1, read=read, show=lines.append, seed=7)
    errors = [ln for ln in lines if ln.startswith("error: ")]
    assert errors == ["error: cannot check: 10 to call; call, raise or fold (type f, c, r or q)"] * 2
    assert prompts[0] == prompts[1] == prompts[2] and "c=call 10" in prompts[0]
    assert [kind for _, kind in result.decisions] == ["c", "c"]
    assert result.decisions[0][0].to_call > 0 and result.decisions[1][0].to_call == 0
    assert "you call 10" in lines and "you check" in lines


def test_cli_check_facing_a_bet_asks_again():
    r = runner.invoke(app, ["play", "--human", "--players", "raise", "--hands", "1", "--seed", "7"],
                      input="check\n")
    assert r.exit_code == 0, r.output
    assert "error: cannot check: 10 to call; call, raise or fold" in r.output
    assert "you call 10" not in r.output and "You quit: you fold this hand." in r.output


def test_raise_at_the_cap_is_refused():
    said: list[str] = []

    def choose(prompt: str) -> str:
        if "r=" not in prompt and not said:
            said.append(prompt)
            return "raise"
        return raises(prompt)

    result, lines, script = play("raise", 3, choose)
    assert said, "the raise bot and a raising human reach the cap"
    assert any(ln.startswith("error: cannot raise: betting is capped") for ln in lines)
    assert sum(result.totals) == 0.0


@pytest.mark.parametrize("quit_line", ["q", None])
def test_quit_facing_a_bet_folds_and_stops(quit_line):
    answers = iter([quit_line])
    result, lines, script = play("raise", 5, lambda prompt: next(answers))
    assert "c=call" in script.prompts[0] and "f=fold" in script.prompts[0]  # the quit faced the bot's raise
    assert result.quit and result.hands == 1
    assert len(result.decisions) == 0
    assert "You quit: you fold this hand." in lines
    assert sum(result.totals) == 0.0 and result.totals[0] < 0     # folded the blinds/bets in
    assert lines[-1].startswith("Result after 1 hand: you ")


@pytest.mark.parametrize("quit_line", ["q", None])
def test_quit_where_checking_is_free_checks_instead_of_folding(quit_line):
    """`f` is refused where checking is free; `q` there used to fold the hand and lose the
    chips in it. It checks instead (and would fold to a bet) until the hand ends, then stops."""
    answers = iter(["c", "c", quit_line])
    result, lines, script = play("call", 5, lambda prompt: next(answers))
    assert "c=check" in script.prompts[2] and "f=" not in script.prompts[2]  # the quit: checking was free
    assert result.quit and result.hands == 1 and len(script.prompts) == 3  # asked nothing after the quit
    assert len(result.decisions) == 2                              # the checks after the quit are not the human's
    assert "You quit: you check, and fold to a bet, until this hand ends." in lines
    assert "You quit: you fold this hand." not in lines and not any("leaves (folds)" in ln for ln in lines)
    record = result.records[-1]
    you = record.players.index("you")
    assert any(ln.startswith("Showdown") for ln in lines)          # the calling bot never bet: checked down
    assert sum(result.totals) == 0.0 and result.totals[0] == record.payoffs[you]
    assert lines[-1].startswith("Result after 1 hand: you ")


def test_quit_where_checking_is_free_keeps_no_case(tmp_path):
    """The hand a human quits is not retained, though it may now end without a fold."""
    from cbr.play.retention import copy_casebase
    from cbr.store import CaseBase

    path = copy_casebase("default", tmp_path / "mine")
    with CaseBase.open(path) as cb:
        before = cb.manifest.total_cases
    lines: list[str] = []
    # seed 1: the human quits at a free check and the bot checks it down (no fold at all)
    result = play_human([f"cbr:preset=casper:casebase={path}"], 3, seed=1, read=lambda p: "q", show=lines.append,
                        retain=True)
    assert "You quit: you check, and fold to a bet, until this hand ends." in lines
    assert not any("You fold" in ln or "leaves (folds)" in ln for ln in lines)
    assert result.quit and result.hands == 1 and result.retained == 0
    with CaseBase.open(path) as cb:
        assert cb.manifest.total_cases == before


def test_bad_counts():
    with pytest.raises(GameError):
        play_human([], 1, read=lambda p: None, show=lambda s: None)
    with pytest.raises(GameError):
        play_human(["call"], 0, read=lambda p: None, show=lambda s: None)
    with pytest.raises(ValueError, match="unknown policy"):
        play_human(["nosuchbot"], 1, read=lambda p: None, show=lambda s: None)


def test_cli_scripted_session_against_call_and_raise():
    r = runner.invoke(app, ["play", "--human", "--bots", "call,raise", "--hands", "3", "--seed", "2"],
                      input="c\n" * 200)
    assert r.exit_code == 0, r.output
    assert "=== Hand 3 of 3" in r.output
    final = r.output.strip().splitlines()[-1]
    chips = [float(x) for x in re.findall(r"([+-][\d.]+) sb(?!/)", final)]
    assert final.startswith("Result after 3 hands:") and len(chips) == 3
    assert sum(chips) == pytest.approx(0.0)
    # the same as the match of a calling seat against the same bots
    expected = run_match(["call", "call", "raise"], 3, seed=2)
    assert chips == pytest.approx([p.total / expected.game.small_bet for p in expected.players])


def test_cli_illegal_key_quit_and_eof():
    r = runner.invoke(app, ["play", "--human", "--bots", "call", "--hands", "4"], input="x\nq\n")
    assert r.exit_code == 0, r.output
    assert "error: unknown key 'x'" in r.output and "You quit" in r.output
    assert "Result after 1 hand:" in r.output
    r = runner.invoke(app, ["play", "--human", "--bots", "call", "--hands", "4"], input="")
    assert r.exit_code == 0, r.output
    assert "Result after 1 hand:" in r.output


@pytest.mark.parametrize("args", [[], ["--human", "--acpc", "127.0.0.1:1"], ["--human", "--json"],
                                  # an option of the other mode is refused, not ignored
                                  ["--human", "--policy", "lag", "--bots", "call"], ["--human", "--policy", "ehs"],
                                  ["--human", "--timeout", "5"], ["--acpc", "127.0.0.1:1", "--bots", "call"]])
def test_cli_usage_errors(args):
    r = runner.invoke(app, ["play", *args], input="q\n")
    assert r.exit_code == 2, r.output
    assert "=== Hand" not in r.output


def test_cli_help_says_the_seed_deals_the_cards_with_human():
    r = runner.invoke(app, ["play", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    seed = " ".join(r.output.split("--seed", 1)[1].split("--timeout", 1)[0].split())
    assert "with --human also" in seed and "cards" in seed, seed


def test_cli_unknown_bot_is_a_usage_error():
    r = runner.invoke(app, ["play", "--human", "--bots", "nosuchbot"], input="")
    assert r.exit_code == 2  # as in cbr match
    assert "unknown policy 'nosuchbot'" in r.output


def test_cli_default_bot_is_the_cbr_bot():
    r = runner.invoke(app, ["play", "--human", "--hands", "2", "--seed", "1"], input="c\n" * 40)
    assert r.exit_code == 0, r.output
    final = r.output.strip().splitlines()[-1]
    assert final.startswith("Result after 2 hands: you ") and ", cbr " in final
    chips = [float(x) for x in re.findall(r"([+-][\d.]+) sb(?!/)", final)]
    assert len(chips) == 2 and sum(chips) == pytest.approx(0.0)


def test_why_explains_each_cbr_decision_from_its_record_after_the_hand():
    """``why``: after each hand, every decision of a case-based bot, with the cases its vote
    counted (the record's own case ids, most similar first); none for a rule bot."""
    from cbr.play import human

    kept = []
    explain = human.why_lines

    def spying(name, decision, top=3):
        kept.append(decision)
        return explain(name, decision, top)

    lines: list[str] = []
    human.why_lines = spying
    try:
        r = play_human(["cbr:preset=casper", "call"], 2, seed=3, read=lambda p: "c", show=lines.append, why=2)
    finally:
        human.why_lines = explain
    assert r.hands == 2 and kept
    text = "\n".join(lines)
    assert text.count("Why the bots did what they did:") >= 1
    for d in kept:
        for cid in d.case_ids[:2]:
            assert f"case {int(cid)}: similarity" in text
    assert not any(line.startswith("call on the") for line in lines)  # the rule bot has no cases


def test_cli_why():
    r = runner.invoke(app, ["play", "--human", "--bots", "cbr:preset=casper", "--hands", "1", "--why", "--seed", "2"],
                      input="c\n" * 12)
    assert r.exit_code == 0, r.output
    assert "Why the bots did what they did:" in r.output and " cases at similarity" in r.output
    counts = re.findall(r"^  ([\d,]+) (?:\w+ )?cases? ", r.output, re.M)
    assert counts and all(re.fullmatch(r"\d{1,3}(,\d{3})*", c) for c in counts), counts  # 3,622, not 3622
    assert max(int(c.replace(",", "")) for c in counts) > 999  # the pre-flop vote: thousands of cases
    r = runner.invoke(app, ["play", "--acpc", "127.0.0.1:9", "--why"])
    assert r.exit_code == 2 and "--why is for --human" in r.output


def test_cli_without_seed_draws_one_prints_it_and_it_replays_the_session():
    """`--seed` defaulted to 0: every session dealt the same hands and the bot chose alike."""
    keys = "c\n" * 200
    runs = [runner.invoke(app, ["play", "--human", "--bots", "random", "--hands", "3"], input=keys) for _ in range(3)]
    seeds = []
    for r in runs:
        assert r.exit_code == 0, r.output
        first = r.output.splitlines()[0]
        m = re.fullmatch(r"Seed (\d+) \(--seed (\d+) deals these cards again\)", first)
        assert m is not None and m.group(1) == m.group(2), first
        seeds.append(int(m.group(1)))
    assert len(set(seeds)) == 3, seeds  # drawn from 2**31: three alike would be a fixed seed
    again = runner.invoke(app, ["play", "--human", "--bots", "random", "--hands", "3", "--seed", str(seeds[0])],
                          input=keys)
    assert again.exit_code == 0 and again.output == runs[0].output
    fixed = runner.invoke(app, ["play", "--human", "--bots", "random", "--hands", "3", "--seed", "0"], input=keys)
    assert fixed.output.splitlines()[0] == "Seed 0 (--seed 0 deals these cards again)"


def test_why_tells_which_expert_the_default_adaptive_bot_chose():
    """Plain `cbr` (the adaptive bot) against a human who always raises: after the warm-up it
    plays the bot its style cases rate best against a maniac, and --why says so, with the style
    it saw, instead of a case vote."""
    from cbr.policies.adaptive import AdaptiveDecision, AdaptivePolicy

    bot = AdaptivePolicy(seed=1, warmup=20, safe="cbr:preset=expert")
    lines: list[str] = []
    try:
        play_human([bot], 45, seed=3, read=lambda p: "r" if "r=" in p else "c", show=lines.append, why=1)
    finally:
        bot.close()
    chosen = [e for _, e in bot.chosen]
    rates = dict(zip(bot.cases.experts, bot.cases.values[bot.cases.names.index("raise")]))
    best = max(rates, key=rates.get)
    assert chosen[0] == "cbr:preset=expert" and best in chosen
    told = [ln for ln in lines if f"played by {best}, the adaptive bot's choice" in ln]
    assert len(told) == chosen.count(best) > 0                 # one line per decision it made
    assert all("nearest the style case 'raise'" in ln for ln in told)
    assert AdaptiveDecision.__mro__[1].__name__ == "Decision"


def test_why_tells_why_the_adaptive_bot_keeps_its_case_base():
    """While the adaptive bot plays its own case base, --why says why no other expert plays:
    the first hand (no opponent yet), then the warm-up (counting the hands seen), a line per
    decision of its case base."""
    from cbr.policies.adaptive import AdaptivePolicy

    bot = AdaptivePolicy(seed=1, warmup=20, safe="cbr:preset=expert")
    lines: list[str] = []
    try:
        play_human([bot], 6, seed=3, read=lambda p: "c", show=lines.append, why=1)
    finally:
        bot.close()
    kept = [ln for ln in lines if "played by its case base, the adaptive bot's choice:" in ln]
    votes = [ln for ln in lines if re.match(r"  [\d,]+ cases? (at similarity|\(the most similar)", ln)]
    assert len(kept) == len(votes) > 0
    first = [ln for ln in kept if ln.endswith("no opponent seen yet (its first hand)")]
    seen = [float(re.search(r": ([\d.]+) of the 20 hands of warm-up seen", ln).group(1)) for ln in kept[len(first):]]
    assert first and seen == sorted(seen) and seen[0] == 1.0 and seen[-1] == 4.9     # 5 hands, discounted by 0.99


def test_keep_reason_names_the_best_other_expert_after_the_warm_up():
    """After the warm-up, against a calling station whose best expert the style cases rate
    barely above the case base (min_gain raised so no expert clears it), the reason names the
    best other expert and both expected win rates."""
    from cbr.policies.adaptive import AdaptivePolicy

    bot = AdaptivePolicy(seed=1, warmup=5, min_gain=50.0, safe="cbr:preset=expert")
    try:
        play_human([bot], 12, seed=3, read=lambda p: "c", show=lambda s: None, why=0)
        opp = next(o for o, _ in bot.chosen if o)
        why = bot.keep_reason(opp)
        values = bot.values(opp)
    finally:
        bot.close()
    best = max((e for e in values if e != bot.safe), key=values.get)
    assert why == (f"{opp}: no expert expected to win 50 sb/h more than {bot.safe} ({values[bot.safe]:+.2f}); "
                   f"the best, {best}, {values[best]:+.2f}")


def test_why_shows_the_fallbacks_cases_after_the_warm_up():
    """After the warm-up, with no expert expected to win more (min_gain raised), plain `cbr`'s
    fallback (its case base sharpened) decides, and --why shows its vote and cases as for the
    warm-up's, saying it is the fallback and why no other expert plays."""
    from cbr.policies.adaptive import AdaptivePolicy

    bot = AdaptivePolicy(seed=1, warmup=5, min_gain=50.0)
    lines: list[str] = []
    try:
        play_human([bot], 14, seed=3, read=lambda p: "c", show=lines.append, why=1)
    finally:
        bot.close()
    assert (bot.safe, bot.fallback) == ("cbr:preset=imitate", "cbr:preset=expert")
    chosen = [e for _, e in bot.chosen]
    assert chosen[0] == bot.safe and chosen[-1] == bot.fallback
    kept = [ln for ln in lines if "played by its case base, the adaptive bot's choice:" in ln]
    votes = [ln for ln in lines if re.match(r"  [\d,]+ cases? (at similarity|\(the most similar)", ln)]
    assert len(kept) == len(votes) == len(chosen)                   # every decision explained by its cases
    fallback = [ln for ln in kept if "its fallback, expert: " in ln]
    assert len(fallback) == chosen.count(bot.fallback) > 0
    assert all("no expert expected to win 50 sb/h more than cbr:preset=expert" in ln for ln in fallback)


def test_the_human_is_told_about_your_style():
    """At `cbr play --human` the opponent is "you": a style far from every case is "your style"."""
    from cbr.policies.adaptive import AdaptivePolicy

    bot = AdaptivePolicy(seed=1, warmup=5, min_similarity=0.999)
    lines: list[str] = []
    try:
        play_human([bot], 12, seed=3, read=lambda p: "c", show=lines.append, why=1)
        assert bot.keep_reason("you").startswith("your style is far from every style case")
    finally:
        bot.close()
    assert any("choice: its fallback, expert: your style is far" in ln for ln in lines)
    assert not any("you's" in ln for ln in lines)


HEADS_UP_ONLY = [
    (["call", "cfr"], "the cfr bot plays heads-up only: it cannot play at a table of 3"),
    (["adapt:safe=emd_256", "call"],
     "the adapt bot's safe expert, emd_256, plays heads-up only: it cannot play at a table of 3"),
]


@pytest.mark.parametrize("bots, said", HEADS_UP_ONLY, ids=["cfr", "adapt-safe-cfr"])
def test_a_heads_up_bot_at_a_bigger_human_table_is_refused_before_any_hand(bots: list, said: str) -> None:
    """``cbr play --human --bots call,cfr`` dealt the first hand and stopped at the cfr bot's
    first decision (exit 1), as ``cbr match`` did before it refused such a table: the person
    is a seat too, so two bots make a table of 3. Refused now before anything is shown: by
    the library (GameError) and by the command (a usage error naming --bots, exit 2)."""
    lines: list[str] = []
    asked: list[str] = []
    with pytest.raises(GameError, match=said.replace(".", "[.]")):
        play_human(bots, 2, read=lambda p: asked.append(p) or "c", show=lines.append, seed=3)
    assert lines == [] and asked == []
    r = runner.invoke(app, ["play", "--human", "--bots", ",".join(bots), "--hands", "2", "--seed", "3"],
                      input="c\n" * 40)
    assert r.exit_code == 2, r.output
    assert said in " ".join(r.stderr.split()) and "--bots" in r.stderr, r.stderr
    assert r.stdout == ""  # not even the seed line: nothing was dealt


def test_a_heads_up_bot_alone_with_the_person_still_plays() -> None:
    """Heads-up (the person and one cfr bot) is the table it plays."""
    r = runner.invoke(app, ["play", "--human", "--bots", "cfr", "--hands", "2", "--seed", "3"], input="c\n" * 40)
    assert r.exit_code == 0, r.output
    assert r.output.strip().splitlines()[-1].startswith("Result after 2 hands: you ")


def test_cli_names_the_bots_players_as_cbr_match_does_and_keeps_the_old_name():
    """The bots at your table are --players (-p), as in ``cbr match`` and ``cbr league``;
    --bots, the old name, deals the same session; --acpc refuses either, naming the one given."""
    keys = "c\n" * 40
    runs = [runner.invoke(app, ["play", "--human", option, "call,raise", "--hands", "2", "--seed", "4"], input=keys)
            for option in ("--players", "-p", "--bots")]
    assert [r.exit_code for r in runs] == [0] * 3, [r.output for r in runs]
    assert runs[0].stdout.startswith("Seed 4 ") and "=== Hand 2 of 2" in runs[0].stdout
    assert runs[1].stdout == runs[0].stdout and runs[2].stdout == runs[0].stdout
    for option in ("--players", "--bots"):
        r = runner.invoke(app, ["play", "--acpc", "127.0.0.1:1", option, "call"])
        assert r.exit_code == 2 and f"{option} is for --human" in " ".join(r.stderr.split()), r.output
    r = runner.invoke(app, ["play", "--human", "--players", "call", "--bots", "raise"], input=keys)
    assert r.exit_code == 2 and "disagree" in r.stderr and "=== Hand" not in r.output, r.output
    r = runner.invoke(app, ["play", "--human", "--players", "call,nosuchbot"], input=keys)
    assert r.exit_code == 2 and "'--players': unknown policy 'nosuchbot'" in " ".join(r.stderr.split()), r.output
