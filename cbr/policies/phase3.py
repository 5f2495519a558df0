"""The Waterloo bot's showdown model and its Phase III bots (seed
``waterloo-holdem-bot-report.txt``, section 3.4.2, algorithm 8, section 4.3).

The showdown model remembers, per opponent (his seat relative to ours,
:func:`opponent_key`) and per *action pattern*, the hand strength
the opponent turned out to hold whenever his cards were shown. An action pattern is what
the opponent did so far in the hand, street by street: ``R`` if he bet or raised on that
street, else ``C``, and how many bets he put in on it, ``F`` (few: at most 1), ``M``
(moderate: up to 2) or ``N`` (many: more). A street on which he has not acted (yet) is
``-``. The pattern is taken at each of *our* decision points, so a pattern seen during
play and one stored from an earlier hand are read by the same function: a stored sample
is "at a decision on this street, with the opponent's betting so far reading like this,
his hand (shown later) had this strength on the board of that moment". Hand strength is
HS against one random hand (enumeration) after the flop and the heads-up pre-flop win
probability before it. A hand adds at most one sample per opponent and pattern.

Once a pattern has ``min_samples`` (10, the report's figure) samples, its mean ``mu``
and standard deviation ``delta`` decide (algorithm 8, limit: the amounts do not apply):

- ``strength < mu - delta``: fold (check when free); the **Aggressive** variant raises
  with probability 0.5 instead ("consider abnormal behaviour", section 4.3);
- ``strength < mu``: call;
- otherwise: raise.

``strength`` is our Phase II number (EHS after the flop, the heads-up-scale pre-flop win
probability before it). With several opponents the one with the highest ``mu`` among
those with enough samples decides. Where no opponent has enough samples the bot is the
Phase II ``ehs`` bot (:class:`~cbr.policies.rules.EHSPolicy`), unchanged.

>>> m = ShowdownModel(min_samples=3)
>>> for hs in (0.5, 0.7, 0.9):
...     m.add("bob", ("RF",), hs)
>>> [round(x, 4) for x in m.stats("bob", ("RF",))]     # mu, delta (population deviation), n
[0.7, 0.1633, 3]
>>> m.stats("bob", ("CF",)) is None     # never seen: no model
True
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

import evaluator_ext as ev
from cbr.errors import CBRError
from cbr.policies.base import Triple, legal_triple
from cbr.policies.rules import PURE_ROWS, EHSPolicy, preflop_strengths
from evaluator_ext.preflop_odds import preflop_win

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord

__all__ = ["ShowdownModel", "Phase3Policy", "AggressivePhase3Policy", "ShowdownModelError",
           "street_token", "action_pattern", "opponent_strength", "opponent_key", "MIN_SAMPLES", "VARIANTS"]

#: Samples a pattern needs before the model is trusted (the report: "more than 10").
MIN_SAMPLES = 10
VARIANTS = ("conservative", "aggressive")


class ShowdownModelError(CBRError, ValueError):
    """A bad showdown-model setting (a ``ValueError``)."""


def street_token(decisions: Sequence["DecisionPoint"], position: int, street: int) -> str:
    """The opponent at ``position``'s token for ``street`` from the decisions made so far
    (each with ``action`` set): ``R``/``C`` then ``F``/``M``/``N`` by the bets he put in on
    that street (blinds count), ``-`` if he has not acted on it.

    >>> from cbr.game import HandState, preset
    >>> from cbr.models.predictor import prefix_decisions
    >>> s = HandState(preset("holdem.limit.2p")); _ = s.act("r"); _ = s.act("r")
    >>> made = prefix_decisions(s.decision_point())   # the SB raised to 2 bets, the BB to 3
    >>> street_token(made, 1, 0), street_token(made, 0, 0), street_token(made, 0, 1)
    ('RM', 'RN', '-')
    """
    raised, put_in = False, None
    for dp in decisions:
        if dp.position != position or dp.street != street or dp.action not in ("c", "r"):
            continue
        top = max(dp.committed)
        put_in = top + (dp.bet_unit if dp.action == "r" else 0.0)
        raised = raised or dp.action == "r"
        unit = dp.bet_unit
    if put_in is None:
        return "-"
    bets = put_in / unit
    size = "F" if bets <= 1 + 1e-9 else "M" if bets <= 2 + 1e-9 else "N"
    return ("R" if raised else "C") + size


def action_pattern(decisions: Sequence["DecisionPoint"], position: int, street: int) -> tuple[str, ...]:
    """The opponent's tokens for streets ``0..street`` (the pattern key of the model)."""
    return tuple(street_token(decisions, position, s) for s in range(street + 1))


def opponent_strength(hole: Sequence[int], board: Sequence[int]) -> float:
    """HS of a shown hand on ``board`` against one random hand (pre-flop: the heads-up win
    probability of its class, as the Phase II bot computes its own).

    >>> from evaluator_ext import parse_cards
    >>> opponent_strength(parse_cards("AsAh"), parse_cards("AdAc2s"))
    1.0
    """
    if len(board) == 0:
        return float(preflop_win(tuple(hole), 1))  # type: ignore[arg-type]
    return float(ev.hand_strength(tuple(hole), tuple(board), n_opponents=1))


class ShowdownModel:
    """Per opponent and action pattern: the shown hand strengths (count, sum, sum of
    squares). ``stats`` returns ``(mu, delta, n)`` or None below ``min_samples``."""

    def __init__(self, *, min_samples: int = MIN_SAMPLES) -> None:
        if isinstance(min_samples, bool) or not isinstance(min_samples, int) or min_samples < 1:
            raise ShowdownModelError(f"min_samples is a whole number >= 1, got {min_samples!r}")
        self.min_samples = min_samples
        self._data: dict[str, dict[tuple[str, ...], list[float]]] = defaultdict(dict)

    def add(self, player: str, pattern: tuple[str, ...], strength: float) -> None:
        """One shown hand strength for ``player`` under ``pattern``."""
        cell = self._data[player].setdefault(pattern, [0.0, 0.0, 0.0])
        cell[0] += 1
        cell[1] += strength
        cell[2] += strength * strength

    def count(self, player: str, pattern: tuple[str, ...]) -> int:
        cell = self._data.get(player, {}).get(pattern)
        return int(cell[0]) if cell else 0

    def stats(self, player: str, pattern: tuple[str, ...]) -> Optional[tuple[float, float, int]]:
        """``(mu, delta, n)`` of the pattern, or None with fewer than ``min_samples`` samples."""
        cell = self._data.get(player, {}).get(pattern)
        if not cell or cell[0] < self.min_samples:
            return None
        n, s, ss = cell
        mu = s / n
        delta = math.sqrt(max(0.0, ss / n - mu * mu))
        return (mu, delta, int(n))

    def players(self) -> list[str]:
        return sorted(self._data)

    def patterns(self, player: str) -> dict[tuple[str, ...], int]:
        """Every pattern of ``player`` with its sample count."""
        return {k: int(v[0]) for k, v in self._data.get(player, {}).items()}

    def clear(self) -> None:
        self._data.clear()

    def observe(self, record: "HandRecord", position: int) -> int:
        """Learn from a finished hand as ``position`` saw it: for every opponent whose cards
        were shown, the pattern at each of ``position``'s decisions and his strength then.
        Returns the number of samples added (0 when no opponent's cards were shown)."""
        from cbr.logs.replay import replay

        shown = [p for p, h in enumerate(record.hole_cards) if p != position and h is not None]
        if not shown:
            return 0
        try:
            dps = replay(record)
        except CBRError:
            return 0
        added = 0
        seen: set[tuple[int, tuple[str, ...]]] = set()
        for i, dp in enumerate(dps):
            if dp.position != position:
                continue
            for opp in shown:
                if dp.folded[opp]:
                    continue
                pattern = action_pattern(dps[:i], opp, dp.street)
                if (opp, pattern) in seen:
                    continue
                seen.add((opp, pattern))
                self.add(opponent_key(position, opp, record.n_players), pattern, opponent_strength(record.hole_cards[opp], dp.board))
                added += 1
        return added


class Phase3Policy(EHSPolicy):
    """Phase III bot: the Phase II ``ehs`` bot plus the showdown model (algorithm 8),
    learned during the match from every hand it sees (:meth:`observe`).

    Options (``phase3:KEY=VALUE`` in a policy spec), one line each in :attr:`OPTION_HELP`:
    ``variant`` (``conservative`` folds below ``mu - delta``, ``aggressive`` raises there half the
    time), ``min_samples`` (10, the report's figure), ``preflop`` (after the flop only by default,
    where the report's EHS is defined). Those are all a spec takes: the Phase II part plays with
    the ``ehs`` bot's defaults (``phase3:raise-ehs=0.7`` is refused). Code may pass the
    :class:`~cbr.policies.rules.EHSPolicy` keywords to the constructor, which hands them on.

    >>> from cbr.policies.spec import policy_from_spec
    >>> policy_from_spec("phase3:raise-ehs=0.7")
    Traceback (most recent call last):
    cbr.policies.spec.PolicySpecError: policy 'phase3' has no option 'raise-ehs'; options: variant, min-samples, preflop
    >>> Phase3Policy(raise_ehs=0.7).raise_ehs
    0.7
    >>> Phase3Policy(variant="reckless")
    Traceback (most recent call last):
    cbr.policies.phase3.ShowdownModelError: variant is conservative or aggressive, got 'reckless'
    """

    name = "phase3"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "variant": "conservative (folds where the showdown model says it loses) or aggressive (raises there "
                   "half the time)",
        "min_samples": "showdowns a betting pattern needs before the model trusts it",
        "preflop": "use the showdown model before the flop too (false: after the flop only)",
    }

    def __init__(self, *, seed: int | None = None, variant: str = "conservative", min_samples: int = MIN_SAMPLES,
                 preflop: bool = False, **ehs_options: float) -> None:
        super().__init__(seed=seed, **ehs_options)
        if variant not in VARIANTS:
            raise ShowdownModelError(f"variant is conservative or aggressive, got {variant!r}")
        self.variant = variant
        self.use_preflop = bool(preflop)
        self.model = ShowdownModel(min_samples=min_samples)
        self.model_decisions = 0   # decisions taken by algorithm 8 (the rest: Phase II)
        self.decisions = 0

    def reset(self) -> None:
        super().reset()
        self.model.clear()
        self.model_decisions = self.decisions = 0

    def observe(self, record: "HandRecord", position: int) -> None:
        self.model.observe(record, position)

    def opponent_stats(self, dp: "DecisionPoint") -> Optional[tuple[str, float, float, int]]:
        """``(name, mu, delta, n)`` of the live opponent with the highest trusted ``mu``, or None."""
        if dp.hole is None:
            return None
        from cbr.models.predictor import prefix_decisions

        try:
            made = prefix_decisions(dp)
        except CBRError:
            return None
        best = None
        for opp in range(dp.game.n_players):
            if opp == dp.position or dp.folded[opp]:
                continue
            who = opponent_key(dp.position, opp, dp.game.n_players)
            stats = self.model.stats(who, action_pattern(made, opp, dp.street))
            if stats is not None and (best is None or stats[0] > best[1]):
                best = (who, *stats)
        return best

    def triple(self, dp: "DecisionPoint") -> Triple:
        self.decisions += 1
        if dp.street == 0 and not self.use_preflop:
            return super().triple(dp)
        found = self.opponent_stats(dp)
        if found is None:
            return super().triple(dp)
        self.model_decisions += 1
        _, mu, delta, _ = found
        strength = self.preflop_strength(dp) if dp.street == 0 else self.ehs(dp)
        if strength < mu - delta:
            raw = (0.5, 0.0, 0.5) if self.variant == "aggressive" else (1.0, 0.0, 0.0)
        elif strength < mu:
            raw = (0.0, 1.0, 0.0)
        else:
            raw = (0.0, 0.0, 1.0)
        return legal_triple(raw, dp.legal)

    _ROW_RULES = (*EHSPolicy._ROW_RULES, "opponent_stats")

    def _rows(self, dp: "DecisionPoint", cards: np.ndarray) -> np.ndarray:
        """:meth:`triple` for every holding at once (:meth:`RuleBot.triples`), counting each
        holding as a decision as :meth:`triple` does."""
        n = len(cards)
        self.decisions += n
        found = None if dp.street == 0 and not self.use_preflop else self.opponent_stats(dp)
        if found is None:
            return EHSPolicy._rows(self, dp, cards)
        self.model_decisions += n
        _, mu, delta, _ = found
        if dp.street == 0:
            strength = preflop_strengths(cards, self.opponents(dp))
        else:
            strength = self._ehs_rows(dp, *self._values(dp, cards))
        low = np.array([0.5, 0.0, 0.5]) if self.variant == "aggressive" else PURE_ROWS[0]
        return np.where((strength < mu - delta)[:, None], low, PURE_ROWS[np.where(strength < mu, 1, 2)])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(variant={self.variant!r}, min_samples={self.model.min_samples})"


class AggressivePhase3Policy(Phase3Policy):
    """The Aggressive Phase III bot: :class:`Phase3Policy` with ``variant="aggressive"``."""

    name = "phase3-aggressive"

    def __init__(self, *, seed: int | None = None, variant: str = "aggressive", min_samples: int = MIN_SAMPLES,
                 preflop: bool = False, **ehs_options: float) -> None:
        super().__init__(seed=seed, variant=variant, min_samples=min_samples, preflop=preflop, **ehs_options)


def opponent_key(me: int, opp: int, n_players: int) -> str:
    """How the model names an opponent: his seat relative to ours, ``+k`` (``k`` seats
    after us). A decision point does not name the players; in a match the seats rotate
    together, so the relative seat is the same player every hand (heads-up: ``+1``).

    >>> opponent_key(1, 0, 2), opponent_key(0, 2, 6)
    ('+1', '+2')
    """
    return f"+{(opp - me) % n_players}"
