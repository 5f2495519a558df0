"""``simbot``: Poki's simulation-based betting strategy (selective sampling).

Seed ``billings-challenge-of-poker-poki.txt`` ("selective sampling and simulation-based
betting strategy"): at each decision the bot plays the rest of the hand out ``trials``
times. In every trial each opponent still in gets a holding drawn from his weight table
(:class:`~cbr.models.weights.WeightTable`, re-weighted from the actions seen so far this
hand exactly as the ``poki-wt`` bot does, :mod:`cbr.policies.poki_wt`) and the rest of the
board is dealt at random; the trial is then played *once per candidate action* (check/call
and bet/raise, the legal ones) to the end of the hand on a copy of the table
(:meth:`~cbr.game.state.HandState.copy`'s cheaper cousin :func:`fork`), with the same
cards and the same random numbers for every candidate (common random numbers: the
*difference* between two actions has far less noise than either value). The chips won or
lost from now on are averaged per action; folding is worth 0 from now (what is already in
the pot is sunk). The action with the best expected value is taken; on a tie (within
``1e-9``) the more aggressive one, as Poki does (raise, then call, then fold).

Play in a trial:

- an opponent acts from his predicted action distribution (the weight tables'
  :meth:`~cbr.models.weights.ActionModel.triples`, from his player model: defaults for a
  player never seen) at his holding's strength: its immediate hand strength against one
  random holding on the trial's board of that street (pre-flop: its percentile among the
  starting holdings, :func:`~cbr.models.weights.holding_strengths`). Not the percentile
  in his weighted range, which the re-weighting uses: a range narrowed to strong hands
  would still fold its weaker part to any bet, and every bluff would look profitable;
- we continue with the ``poki`` formula (:class:`~cbr.policies.rules.PokiFormulaPolicy`'s
  ramps around the raise threshold and the pot odds) on our strength: the weighted ``EHS``
  on the current street, ``HS ** n`` (``n`` opponents still in) on later streets.

Both draw their action with the trial's random numbers. Everything is seeded: the draws
of a decision come from ``seed`` and the decision itself (hand id, cards, betting), so
the same spot gets the same answer whatever was played before.

When the betting of the hand cannot be followed (no hole cards, no-limit, a history that
does not replay) the bot plays as ``poki-wt``. ``preflop=false`` plays the ``poki-wt``
formula before the flop (cheaper; Poki itself used its pre-flop tables there).

>>> from cbr.game import HandState, preset
>>> from evaluator_ext import parse_cards
>>> s = HandState(preset("holdem.limit.2p"), hole_cards=[parse_cards("AhAd"), parse_cards("7c2d")])
>>> _ = s.act("c"); _ = s.act("c"); s.deal_board(parse_cards("AsAcKd"))
>>> bot = SimulationPolicy(seed=1, trials=40)
>>> result = bot.simulate(s.decision_point())
>>> result.trials, result.actions, result.mean("c") > 0 and result.mean("r") > 0   # quads: both win chips
(40, 'cr', True)
>>> result.best == max("cr", key=result.mean)
True
"""
from __future__ import annotations

import copy
import hashlib
import math
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

import evaluator_ext as ev
from cbr.errors import ConfigError, GameError
from cbr.game.gamedef import BOARD_SIZES
from cbr.game.state import HandState
from cbr.models.weights import ActionModel, WeightTable, holding_strengths, touching
from cbr.policies.base import Triple, legal_triple
from cbr.policies.poki_wt import PokiWeightTablePolicy
from evaluator_ext.cards import N_COMBOS, combo_cards

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint

#: Trials per decision by default: about 30 ms of CPU a decision heads-up (p50; p99
#: under 40 ms), measured by ``bench/bench_simbot.py``.
DEFAULT_TRIALS = 60
#: The largest trial count accepted.
MAX_TRIALS = 100_000
#: Actions tried in order of preference on a tie (Poki: the more aggressive one).
PREFERENCE = "rcf"
_TIE = 1e-9


class SimulationError(ConfigError):
    """A bad simulation-bot option (a ``ValueError``)."""


def check_trials(trials: object) -> int:
    """The trial count as an int in ``1..MAX_TRIALS``; :class:`SimulationError` otherwise.

    >>> check_trials(10)
    10
    >>> check_trials(0)
    Traceback (most recent call last):
    cbr.policies.simbot.SimulationError: trials must be a whole number from 1 to 100000, got 0
    """
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or not 1 <= int(trials) <= MAX_TRIALS:
        raise SimulationError(f"trials must be a whole number from 1 to {MAX_TRIALS}, got {trials!r}")
    return int(trials)


def fork(state: HandState) -> HandState:
    """A copy of ``state`` that can be played on without touching the original (its lists
    copied, everything else shared: what ``HandState.copy`` does, ten times cheaper).

    >>> from cbr.game import preset
    >>> s = HandState(preset("holdem.limit.2p"))
    >>> t = fork(s); _ = t.act("r")
    >>> s.history, t.history
    ('', 'r')
    """
    out = copy.copy(state)
    for key, value in vars(state).items():
        if isinstance(value, list):
            setattr(out, key, list(value))
    return out


@dataclass(frozen=True)
class SimulationResult:
    """The outcome of one decision's simulation: per candidate action, the sum and sum of
    squares of the chips won from now (over ``trials`` trials), and the action taken.

    ``mean(kind)``: expected chips won from now; ``stderr(kind)``: its Monte Carlo standard
    error ``sd / sqrt(trials)``; ``stderr_diff(a, b)``: the standard error of the
    difference of two actions' means, trial by trial (common random numbers)."""

    trials: int
    sums: dict[str, float]
    squares: dict[str, float]
    cross: dict[tuple[str, str], float]
    best: str

    def mean(self, kind: str) -> float:
        return self.sums[kind] / self.trials

    def stderr(self, kind: str) -> float:
        n = self.trials
        if n < 2:
            return math.inf
        var = max(0.0, (self.squares[kind] - self.sums[kind] ** 2 / n) / (n - 1))
        return math.sqrt(var / n)

    def stderr_diff(self, a: str, b: str) -> float:
        n = self.trials
        if n < 2:
            return math.inf
        sa, sb = self.sums[a], self.sums[b]
        cab = self.cross.get((a, b), self.cross.get((b, a)))
        if cab is None:
            raise KeyError(f"no paired trials of {a!r} and {b!r}")
        sq = self.squares[a] + self.squares[b] - 2.0 * cab
        var = max(0.0, (sq - (sa - sb) ** 2 / n) / (n - 1))
        return math.sqrt(var / n)

    @property
    def actions(self) -> str:
        return "".join(k for k in "fcr" if k in self.sums)


def _ramp(x: float) -> float:
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


def _draw(triple: Sequence[float], u: float) -> str:
    f, c, _ = triple
    return "f" if u < f else "c" if u < f + c else "r"


class SimulationPolicy(PokiWeightTablePolicy):
    """Poki's simulation bot (see the module doc). Options (one line each in
    :attr:`OPTION_HELP`): its own, the ``poki`` formula's constants (our continuation in the
    trials) and ``poki-wt``'s ``store`` and ``learn``. Its triples for many
    holdings are one simulation per holding (:meth:`~cbr.policies.rules.RuleBot.triples`
    answers holding by holding for it)."""

    name = "simbot"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "trials": "simulated continuations per decision",
        "preflop": "simulate before the flop too (false: the poki formula there)",
    }

    def __init__(self, *, seed: int | None = None, trials: int = DEFAULT_TRIALS, preflop: bool = True,
                 raise_base: float = 0.62, raise_step: float = 0.08, width: float = 0.1,
                 store: str = "", learn: bool = True) -> None:
        super().__init__(seed=seed, raise_base=raise_base, raise_step=raise_step, width=width,
                         store=store, learn=learn)
        self.trials = check_trials(trials)
        self.preflop = bool(preflop)
        self.last: Optional[SimulationResult] = None

    # ---- the decision ----
    def triple(self, dp: "DecisionPoint") -> Triple:
        if dp.street == 0 and not self.preflop:
            return super().triple(dp)
        result = self.simulate(dp)
        if result is None:
            return super().triple(dp)
        return legal_triple(tuple(1.0 if k == result.best else 0.0 for k in "fcr"), dp.legal)  # type: ignore[arg-type]

    def _rng_seed(self, dp: "DecisionPoint") -> int:
        text = repr((self.seed, dp.hand_id, dp.hole, dp.board, dp.history, dp.position, dp.players_dealt))
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")

    def simulate(self, dp: "DecisionPoint", trials: Optional[int] = None) -> Optional[SimulationResult]:
        """Play the hand out ``trials`` times (default: the bot's) per legal action and
        return the expected values, or None when the hand cannot be followed."""
        n_trials = self.trials if trials is None else check_trials(trials)
        self.last = None
        if dp.hole is None or dp.game.betting != "limit" or not dp.legal:
            return None
        tracker = self.tracker(dp)
        if (tracker is None or tracker.state.to_act != dp.position or tracker.state.street != dp.street
                or tuple(tracker.state.board) != tuple(dp.board)):
            return None
        base = tracker.state
        me = dp.position
        hole = tuple(int(c) for c in dp.hole)
        board = tuple(int(c) for c in dp.board)
        opponents = [p for p in range(dp.players_dealt) if p != me and not dp.folded[p]]
        tables = {p: tracker.tables[p] for p in opponents}
        models = {p: self.action_model(tracker.name(p)) for p in opponents}
        strengths = np.nan_to_num(holding_strengths(board))
        my_now = self.preflop_strength(dp) if dp.street == 0 else self.ehs(dp)
        seed = self._rng_seed(dp)
        nprng = np.random.default_rng(seed)
        holdings = self._sample_holdings(nprng, tables, opponents, n_trials)
        known = set(hole) | set(board)
        rest = [c for c in range(52) if c not in known]
        kinds = [k for k in "cr" if k in dp.legal]
        sunk = float(dp.total_committed[me])
        sums = {k: 0.0 for k in kinds}
        squares = {k: 0.0 for k in kinds}
        values: dict[str, list[float]] = {k: [] for k in kinds}
        base_board = len(board)
        for t in range(n_trials):
            held = holdings[t]
            used = {c for h in held.values() for c in h}
            trial_rng = random.Random(seed * 1_000_003 + t)
            deck = [c for c in rest if c not in used]
            runout = tuple(trial_rng.sample(deck, 5 - base_board))
            full = board + runout
            us_draws = [trial_rng.random() for _ in range(64)]
            ctx = _Trial(me, hole, held, full, dp.street, my_now, strengths, models, self)
            for kind in kinds:
                value = ctx.play(base, kind, us_draws) + sunk
                sums[kind] += value
                squares[kind] += value * value
                values[kind].append(value)
        if "f" in dp.legal:
            sums["f"] = squares["f"] = 0.0
            values["f"] = [0.0] * n_trials
        cross = {(a, b): float(np.dot(values[a], values[b])) for i, a in enumerate(sorted(values))
                 for b in sorted(values)[i + 1:]}
        means = {k: sums[k] / n_trials for k in sums}
        top = max(means.values())
        best = next(k for k in PREFERENCE if k in means and means[k] >= top - _TIE)
        self.last = SimulationResult(n_trials, sums, squares, cross, best)
        return self.last

    @staticmethod
    def _sample_holdings(rng: np.random.Generator, tables: dict[int, WeightTable], opponents: list[int],
                         n: int) -> list[dict[int, tuple[int, int]]]:
        """``n`` draws of every opponent's holding from his (normalised) weight table,
        no card dealt twice (a clash is drawn again from the table without those cards)."""
        cum = {p: np.cumsum(tables[p].weights) for p in opponents}
        out: list[dict[int, tuple[int, int]]] = []
        firsts = {p: np.searchsorted(cum[p], rng.random(n) * cum[p][-1], side="right") for p in opponents}
        for t in range(n):
            held: dict[int, tuple[int, int]] = {}
            used: set[int] = set()
            for p in opponents:
                i = int(min(firsts[p][t], N_COMBOS - 1))
                cards = combo_cards(i)
                if used & set(cards):
                    w = tables[p].weights.copy()
                    w[touching(used)] = 0.0
                    if w.sum() <= 0:
                        raise GameError("no holding left to deal an opponent")
                    i = int(rng.choice(N_COMBOS, p=w / w.sum()))
                    cards = combo_cards(i)
                held[p] = (int(cards[0]), int(cards[1]))
                used.update(held[p])
            out.append(held)
        return out


class _Trial:
    """One trial's cards and the play of both sides (see the module doc)."""

    __slots__ = ("me", "hole", "held", "board", "street", "my_now", "strengths", "models", "bot", "_hs")

    def __init__(self, me: int, hole: tuple[int, int], held: dict[int, tuple[int, int]], board: tuple[int, ...],
                 street: int, my_now: float, strengths: np.ndarray, models: dict[int, ActionModel],
                 bot: SimulationPolicy) -> None:
        self.me, self.hole, self.held, self.board = me, hole, held, board
        self.street, self.my_now, self.strengths, self.models, self.bot = street, my_now, strengths, models, bot
        self._hs: dict[tuple[int, int], float] = {}

    def hs(self, position: int, street: int) -> float:
        """Immediate hand strength of ``position``'s cards on this trial's board at ``street``."""
        key = (position, street)
        hit = self._hs.get(key)
        if hit is None:
            cards = self.hole if position == self.me else self.held[position]
            hit = self._hs[key] = float(ev.hand_strength(cards, self.board[:BOARD_SIZES[street]]))
        return hit

    def play(self, base: HandState, first: str, draws: list[float]) -> float:
        """Our net chips at the end of the hand after ``first`` and the trial's play."""
        s = fork(base)
        s.set_hole_cards(self.me, self.hole)
        for p, h in self.held.items():
            s.set_hole_cards(p, h)
        s.act(first)
        k = 0
        while not s.is_over:
            if s.needs_board:
                s.deal_board(self.board[BOARD_SIZES[s.street]:BOARD_SIZES[s.street + 1]])
                continue
            p = s.to_act
            legal = s.legal_actions()
            u = draws[k % len(draws)]
            k += 1
            if p == self.me:
                kind = _draw(self.ours(s), u)
            else:
                kind = _draw(self.theirs(s, p, legal), u)
            if kind not in legal:
                kind = "c" if "c" in legal else legal[0]
            s.act(kind)
        return s.payoffs()[self.me]

    def ours(self, s: HandState) -> Triple:
        """Our continuation: the poki formula on our strength."""
        bot = self.bot
        if s.street == self.street:
            x = self.my_now
        else:
            live = sum(not f for f in s.folded) - 1
            x = self.hs(self.me, s.street) ** max(1, live)
        bets = max(0, s.street_bets - (1 if s.street == 0 else 0))
        p_raise = _ramp((x - (bot.raise_base + bot.raise_step * bets)) / bot.width + 0.5)
        to_call = s.to_call
        if to_call <= 0:
            p_cont = 1.0
        else:
            odds = to_call / (s.pot + to_call)
            p_cont = _ramp((x - odds) / bot.width + 0.5)
        return ((1 - p_raise) * (1 - p_cont), (1 - p_raise) * p_cont, p_raise)

    def theirs(self, s: HandState, p: int, legal: str) -> Triple:
        """Opponent ``p``'s predicted triple (his action model at his holding's percentile)."""
        if s.street == self.street:
            pct = float(self.strengths[ev.combo_index(*self.held[p])])
        else:
            pct = self.hs(p, s.street)
        m = self.models[p]
        d = m.spread
        p_raise = _ramp((pct - (1.0 - m.raise_rate) + d) / (2.0 * d)) if "r" in legal else 0.0
        p_cont = _ramp((pct - m.fold_rate + d) / (2.0 * d)) if s.to_call > 0 else 1.0
        r = min(p_raise, p_cont)
        return (1.0 - p_cont, p_cont - r, r)    # ActionModel.triples for one holding
