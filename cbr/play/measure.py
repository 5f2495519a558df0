"""Pure helpers of the experiments in ``experiments/``: CASPER's table and the re-use
policies compared. The scripts print and plot; this module only computes.

- :data:`TARGETS`: the sb/h target against each opponent (``None``: no target).
- :func:`hands_needed`: how many duplicate hands bring a 95% CI half-width below a bound,
  from a pilot run's half-width (the half-width shrinks as ``1/sqrt(hands)``).
- :func:`measure`: one duplicate match of the bot against its opponents, the bot's sb/h with
  its 95% CI (over per-deal averages, :func:`cbr.play.match.run_match`), either for a fixed
  number of hands or planned from a pilot run.
- :func:`deal_means` and :func:`paired_difference`: compare two bots that played the same
  deals (same seed) deal by deal, which cancels the card luck both saw.

>>> hands_needed(pilot_ci=0.4, pilot_hands=1000, target_ci=0.1, players=2, margin=1.0)
16000
>>> TARGETS["raise"], TARGETS["poki"], TARGETS["random"]
(3.0, -0.05, None)
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Callable, Optional, Sequence

from cbr.errors import ConfigError
from cbr.play.match import MatchResult, run_match
from cbr.stats import mean_ci

__all__ = ["SOURCE_BOTS", "BASELINES", "TARGETS", "TUNED_BOT", "CASPER_TABLE_SEATS", "Cell", "hands_needed",
           "measure", "deal_means", "paired_difference", "markdown_table", "table_seats"]

#: The bots the default case base's cases came from (``casebases/build_default.py``).
SOURCE_BOTS = ("poki", "ehs", "lag", "hs")
#: The baselines CASPER was also measured against.
BASELINES = ("call", "raise", "random")
#: The targets set for the case-based bot, sb/h (``None``: no target set).
TARGETS: dict[str, Optional[float]] = {"poki": -0.05, "ehs": -0.05, "lag": -0.05, "hs": -0.05,
                                       "call": 0.9, "raise": 3.0, "random": None}
#: The bot as tuned on seed 1 (experiments/TUNING.md): CASPER's sampling sharpened and tilted
#: towards the actions whose retrieved cases won more (:func:`cbr.policies.cbr_policy.shaped_triple`).
TUNED_BOT = "cbr:preset=casper:sharpen=2:outcome-weight=0.5"
#: The 9-player table's other seats: two of each source bot (CASPER's 9-player table).
CASPER_TABLE_SEATS = ("poki", "poki", "ehs", "ehs", "lag", "lag", "hs", "hs")


def table_seats(bot: str = "cbr") -> list[str]:
    """The 9-player table: ``bot`` in seat 0 and two of each source bot.

    >>> table_seats("cbr:reuse=max-frequency")[:3]
    ['cbr:reuse=max-frequency', 'poki', 'poki']
    >>> len(table_seats())
    9
    """
    return [bot, *CASPER_TABLE_SEATS]


def hands_needed(pilot_ci: float, pilot_hands: int, target_ci: float, players: int, *,
                 margin: float = 0.9, cap: int = 1_000_000) -> int:
    """Duplicate hands (a multiple of ``players``) whose 95% half-width should be at most
    ``margin * target_ci``, given a pilot's half-width ``pilot_ci`` over ``pilot_hands``.

    The half-width is ``1.96 * s / sqrt(deals)``, so ``hands = pilot_hands *
    (pilot_ci / (margin * target_ci))**2``; the margin (default 0.9) absorbs the pilot's own
    error in ``s`` (a 1,000-deal pilot estimates ``s`` within about 4.5%). Never fewer
    hands than the pilot's, never more than ``cap`` (rounded down to whole deals).
    Raises :class:`~cbr.errors.ConfigError` (a ``ValueError``) for non-positive inputs.

    >>> hands_needed(0.2, 2000, 0.1, 9)        # 2000 * 2**2 / 0.81 = 9876.5 -> whole deals
    9882
    >>> hands_needed(0.05, 2000, 0.1, 2)       # the pilot is already precise enough
    2000
    >>> hands_needed(1.0, 2000, 0.1, 2, cap=50_000)
    50000
    """
    for name, value in (("pilot_ci", pilot_ci), ("target_ci", target_ci), ("margin", margin)):
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ConfigError(f"{name} must be a positive finite number, got {value!r}")
    if pilot_hands < 1 or players < 1 or cap < players:
        raise ConfigError(f"need pilot_hands >= 1, players >= 1 and cap >= players, got "
                          f"{pilot_hands}, {players}, {cap}")
    want = pilot_hands * (pilot_ci / (margin * target_ci)) ** 2
    hands = max(pilot_hands, math.ceil(want / players) * players)
    return min(hands, cap // players * players)


@dataclass(frozen=True)
class Cell:
    """One measured result: the bot's sb/h against ``opponent`` with its 95% half-width.

    ``pilot_hands``/``pilot_ci``: the pilot run that chose ``hands`` (0 and ``None`` when the
    hands were fixed); ``capped``: the planned hands hit the cap; ``met``: whether ``sb``
    reached ``target`` (``None`` without a target); ``ci_ok``: ``ci < target_ci``.
    """

    opponent: str
    bot: str
    players: int
    hands: int
    deals: int
    seed: int
    sb: float
    ci: float
    target: Optional[float]
    met: Optional[bool]
    target_ci: float
    ci_ok: bool
    pilot_hands: int
    pilot_ci: Optional[float]
    capped: bool
    seconds: float

    def to_dict(self) -> dict:
        """Plain data for JSON (rounded to 4 decimals)."""
        out = asdict(self)
        for key in ("sb", "ci", "pilot_ci", "seconds"):
            if isinstance(out[key], float):
                out[key] = round(out[key], 4) if math.isfinite(out[key]) else None
        return out


def measure(bot: str, opponents: Sequence[str], *, seed: int, hands: Optional[int] = None,
            target_ci: float = 0.1, pilot_hands: int = 2000, cap: int = 200_000,
            label: Optional[str] = None, target: Optional[float] = None,
            progress: Optional[Callable[[str, int, int], None]] = None) -> Cell:
    """Seat ``bot`` (a policy spec) in seat 0 against ``opponents`` and play duplicate hands
    seeded ``seed``; the bot's sb/h and 95% half-width.

    With ``hands`` the match has that many hands (rounded up to whole deals). Without, a
    pilot of ``pilot_hands`` on the same seed plans the hands (:func:`hands_needed`, capped
    at ``cap``) and the match is played again from its first deal with that many (so the
    reported result is one match seeded ``seed``, reproducible from the seed alone).
    ``progress(phase, done, total)`` is called as hands finish (``phase``: ``pilot`` or
    ``match``). ``target`` defaults to :data:`TARGETS` for a single opponent.

    >>> c = measure("call", ["raise"], seed=3, hands=20)
    >>> c.hands, c.deals, c.target, c.met, c.pilot_ci is None
    (20, 10, 3.0, False, True)
    """
    players = 1 + len(opponents)
    label = label or ("+".join(opponents) if len(set(opponents)) > 1 else opponents[0])
    if target is None and len(opponents) == 1:
        target = TARGETS.get(opponents[0])
    t0 = time.perf_counter()

    def play(phase: str, n: int) -> MatchResult:
        done = [0]

        def tick(k: int) -> None:
            done[0] += k
            if progress is not None:
                progress(phase, done[0], total)

        total = -(-n // players) * players
        return run_match([bot, *opponents], n, duplicate=True, seed=seed, progress=tick)

    p_ci: Optional[float] = None
    p_hands = 0
    capped = False
    if hands is None:
        pilot = play("pilot", pilot_hands)
        p_hands, p_ci = pilot.hands, pilot.players[0].sb_ci
        if p_ci == 0.0:  # no spread at all (two deterministic bots): the pilot is exact
            hands = p_hands
        elif math.isfinite(p_ci):
            hands = hands_needed(p_ci, p_hands, target_ci, players, cap=cap)
            capped = hands < hands_needed(p_ci, p_hands, target_ci, players, cap=10**12)
        else:  # a pilot of one deal has no spread estimate
            hands, capped = cap // players * players, True
        result = pilot if hands <= pilot.hands else play("match", hands)
    else:
        result = play("match", hands)
    me = result.players[0]
    return Cell(opponent=label, bot=bot, players=players, hands=result.hands, deals=result.deals, seed=seed,
                sb=me.sb_per_hand, ci=me.sb_ci, target=target,
                met=None if target is None else bool(me.sb_per_hand >= target), target_ci=target_ci,
                ci_ok=bool(me.sb_ci < target_ci), pilot_hands=p_hands, pilot_ci=p_ci, capped=capped,
                seconds=time.perf_counter() - t0)


def deal_means(result: MatchResult, seat: int = 0) -> list[float]:
    """Per-deal average payoff of ``seat`` in small bets, from a duplicate match played
    with ``keep_payoffs=True`` (the values whose mean and CI :func:`run_match` reports).

    >>> r = run_match(["call", "raise"], 6, seed=0, duplicate=True, keep_payoffs=True)
    >>> m = deal_means(r)
    >>> len(m), round(sum(m) / len(m), 9) == round(r.players[0].sb_per_hand, 9)
    (3, True)
    """
    if not result.duplicate or not result.hand_payoffs:
        raise ConfigError("deal_means needs a duplicate match played with keep_payoffs=True")
    n = len(result.players)
    sb = result.game.small_bet
    pay = result.hand_payoffs
    return [math.fsum(pay[d * n + i][seat] for i in range(n)) / n / sb for d in range(result.deals)]


def paired_difference(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Mean of ``a[i] - b[i]`` and its 95% half-width: two bots compared on the same deals.

    >>> [round(v, 4) for v in paired_difference([1.0, 2.0, 3.0], [0.5, 1.0, 2.5])]
    [0.6667, 0.3267]
    """
    if len(a) != len(b):
        raise ConfigError(f"paired values need the same deals, got {len(a)} and {len(b)}")
    return mean_ci([x - y for x, y in zip(a, b)])


def markdown_table(cells: Sequence[Cell]) -> str:
    """The cells as a markdown table (sb/h with 95% CI, hands, target and whether met).

    >>> c = Cell("call", "cbr", 2, 100, 50, 2, 0.95, 0.08, 0.9, True, 0.1, True, 0, None, False, 1.0)
    >>> print(markdown_table([c]).splitlines()[2])
    | call | +0.950 ± 0.080 | 100 | >= +0.90 | met |
    """
    lines = ["| opponents | cbr sb/h (95% CI) | hands | target | |", "|---|---:|---:|---|---|"]
    for c in cells:
        target = "-" if c.target is None else f">= {c.target:+.2f}"
        verdict = "-" if c.met is None else ("met" if c.met else "**missed**")
        if not c.ci_ok:
            verdict += f" (CI {c.ci:.3f} not below {c.target_ci:g})"
        lines.append(f"| {c.opponent} | {c.sb:+.3f} ± {c.ci:.3f} | {c.hands:,} | {target} | {verdict} |")
    return "\n".join(lines)

