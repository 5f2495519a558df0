"""The player model of seed ``itu-adaptive-poker-computer-thesis.txt`` (section 3.1).

Per opponent, three attributes, each *overall* (the mean over every hand, a thesis
"round") and *recent* (the mean over the last :data:`RECENT_HANDS` = 10 hands in which the
attribute could be measured), plus *current aggressiveness* (this hand so far):

- aggressiveness of a hand: ``Agg_n = (bets_n + raises_n) / actions_n``;
- tightness of a hand: ``Ti_n = 1 - (bluffs_n + slow_plays_n) / actions_n``, only for
  hands whose hole cards were shown. A *bluff* is an aggressive action (bet/raise) with
  hand strength below :data:`BLUFF_HS` = 0.46, a *slow play* a defensive one
  (check/call) above :data:`SLOW_PLAY_HS` = 0.63 (thesis, figure 14). A fold is neither;
- riskiness of a hand: ``Ri_n = (calls_n + raises_n) / (calls_n + raises_n + folds_n)``
  over the decisions where continuing cost chips (something to call);
- current aggressiveness: the mean of ``Agg`` over the streets of the hand in progress in
  which the player acted ("the previous game states of the current round").

Hand strength is the thesis' "absolute hand strength": the probability of winning
against one random hand played to the river, ties counted half (before the flop the
cached, seeded simulation :func:`evaluator_ext.preflop_odds.preflop_win`; after it an exact
enumeration), whatever the number of opponents.

A player never seen, or an attribute never measured, takes :data:`DEFAULTS` (and
:attr:`PlayerModel.defaults` names which ones).

>>> from cbr.game import preset
>>> from cbr.logs.record import Action, HandRecord
>>> rec = HandRecord(source="x", line=1, hand_id="1", game=preset("holdem.limit.2p"),
...     players=("ann", "bob"), hole_cards=(None, None), board=(),
...     actions=(Action(0, 1, "r"), Action(0, 0, "r"), Action(0, 1, "f")))
>>> models = PlayerModels()
>>> models.update(rec)
>>> m = models.model("bob")
>>> m.aggressiveness, m.riskiness, m.tightness, m.hands
(0.5, 0.5, 0.74, 1)
>>> m.defaults
('tightness',)
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Callable, Iterable, Optional, Sequence

import evaluator_ext as ev
from cbr.game.decision import DecisionPoint
from cbr.logs.record import HandRecord

#: Aggressive below this hand strength is a bluff (thesis, section 3.1).
BLUFF_HS = 0.46
#: Defensive above this hand strength is a slow play (thesis, section 3.1).
SLOW_PLAY_HS = 0.63
#: Hands in the *recent* attributes (thesis: "the last ten rounds").
RECENT_HANDS = 10
#: The values of an attribute never measured (a player never seen): the means, to two
#: decimals and weighted by the hands measured, of the
#: players of the IRC logs in ../shared/data/logs/irc (``cbr players build`` over them).
DEFAULTS = {"aggressiveness": 0.14, "tightness": 0.74, "riskiness": 0.39}
ATTRIBUTES = ("aggressiveness", "tightness", "riskiness")

Strength = Callable[[tuple[int, int], tuple[int, ...]], float]


#: Monte Carlo deals of a flop hand strength (an exact flop enumeration is a million deals).
FLOP_TRIALS = 4000
FLOP_SEED = 20240601


def hand_strength(hole: Sequence[int], board: Sequence[int]) -> float:
    """The thesis' absolute hand strength: P(win) + P(tie)/2 against one random hand
    played to the river. Pre-flop :func:`evaluator_ext.preflop_odds.preflop_win` (cached per hand
    class); flop: :data:`FLOP_TRIALS` seeded Monte Carlo deals (standard error below
    0.008); turn and river: exact enumeration. Cached per ``(hole, board)``.

    >>> round(hand_strength((51, 50), ()), 2)                      # AA before the flop
    0.85
    >>> hand_strength((51, 50), (49, 48, 0, 1, 2))                 # four aces: nothing beats them
    1.0
    """
    return _hand_strength(tuple(sorted(int(c) for c in hole)), tuple(int(c) for c in board))


@lru_cache(maxsize=8192)
def _hand_strength(hole: tuple[int, ...], board: tuple[int, ...]) -> float:
    from evaluator_ext.preflop_odds import preflop_win

    if not board:
        return preflop_win((hole[0], hole[1]), 1)
    if len(board) == 3:
        win, tie, _ = ev.win_probability(hole, board, n_opponents=1, trials=FLOP_TRIALS, seed=FLOP_SEED,
                                         exact=False)
    else:
        win, tie, _ = ev.win_probability(hole, board, n_opponents=1, exact=True)
    return float(win) + float(tie) / 2.0


@dataclass(frozen=True)
class RoundStats:
    """One player's actions in one hand (a thesis *round*).

    >>> s = RoundStats(actions=4, aggressive=1, paying=2, continued=1, shown=True, bluffs=1)
    >>> s.aggressiveness, s.riskiness, s.tightness
    (0.25, 0.5, 0.75)
    """

    actions: int = 0
    aggressive: int = 0
    paying: int = 0
    continued: int = 0
    shown: bool = False
    bluffs: int = 0
    slow_plays: int = 0

    @property
    def aggressiveness(self) -> Optional[float]:
        """``(bets + raises) / actions``; None without an action."""
        return self.aggressive / self.actions if self.actions else None

    @property
    def tightness(self) -> Optional[float]:
        """``1 - (bluffs + slow plays) / actions``; None unless the cards were shown."""
        if not self.shown or not self.actions:
            return None
        return 1.0 - (self.bluffs + self.slow_plays) / self.actions

    @property
    def riskiness(self) -> Optional[float]:
        """``(calls + raises) / (calls + raises + folds)`` when continuing cost chips; else None."""
        return self.continued / self.paying if self.paying else None

    def value(self, attribute: str) -> Optional[float]:
        return getattr(self, attribute)


def round_stats(decisions: Iterable[DecisionPoint], strength: Strength = hand_strength) -> RoundStats:
    """The :class:`RoundStats` of one player's decisions in one hand (``dp.action`` set).

    Bluffs and slow plays are counted when every decision shows the hole cards.

    >>> from cbr.game import preset
    >>> from cbr.logs.replay import replay
    >>> from cbr.logs.record import Action, HandRecord
    >>> rec = HandRecord(source="x", line=1, hand_id="1", game=preset("holdem.limit.2p"),
    ...     players=("a", "b"), hole_cards=(None, (20, 1)), board=(),
    ...     actions=(Action(0, 1, "r"), Action(0, 0, "f")))
    >>> round_stats([d for d in replay(rec) if d.player == "b"])     # 7c2d raises: a bluff
    RoundStats(actions=1, aggressive=1, paying=1, continued=1, shown=True, bluffs=1, slow_plays=0)
    """
    actions = aggressive = paying = continued = bluffs = slow = 0
    shown = True
    for dp in decisions:
        kind = dp.action
        if kind not in ("f", "c", "r"):
            continue
        actions += 1
        aggressive += kind == "r"
        if dp.to_call > 0:
            paying += 1
            continued += kind != "f"
        if dp.hole is None:
            shown = False
        elif kind != "f":
            hs = strength(tuple(dp.hole), tuple(dp.board))  # type: ignore[arg-type]
            bluffs += kind == "r" and hs < BLUFF_HS
            slow += kind == "c" and hs > SLOW_PLAY_HS
    shown = shown and actions > 0
    return RoundStats(actions, aggressive, paying, continued, shown, bluffs if shown else 0, slow if shown else 0)


@dataclass(frozen=True)
class PlayerModel:
    """One opponent's attributes, with :data:`DEFAULTS` where nothing was measured.

    ``hands``: hands seen; ``measured``: per attribute, the hands it was measured in;
    ``defaults``: the attributes that are defaults; ``current_aggressiveness`` is None
    outside a hand (or before the player acted in it).
    """

    player: str
    hands: int
    aggressiveness: float
    recent_aggressiveness: float
    current_aggressiveness: Optional[float]
    tightness: float
    recent_tightness: float
    riskiness: float
    recent_riskiness: float
    measured: dict = field(default_factory=dict)
    defaults: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        out = asdict(self)
        out["defaults"] = list(self.defaults)
        return out


class PlayerHistory:
    """What is kept of one player: per attribute the sum and count of per-hand values
    (the overall mean) and the last :data:`RECENT_HANDS` values, plus the hand in progress.

    >>> h = PlayerHistory("p")
    >>> for agg in (1, 0, 0):
    ...     h.add_round(RoundStats(actions=1, aggressive=agg))
    >>> round(h.model().aggressiveness, 4), h.model().hands
    (0.3333, 3)
    """

    def __init__(self, player: str) -> None:
        self.player = player
        self.hands = 0
        self.sums = {a: 0.0 for a in ATTRIBUTES}
        self.counts = {a: 0 for a in ATTRIBUTES}
        self.recent: dict[str, deque[float]] = {a: deque(maxlen=RECENT_HANDS) for a in ATTRIBUTES}
        self._street_actions: dict[int, list[str]] = {}

    # ---- the hand in progress (current aggressiveness) ----
    def start_hand(self) -> None:
        """Forget the hand in progress."""
        self._street_actions = {}

    def observe_action(self, street: int, kind: str) -> None:
        """One action of the hand in progress (``'f'``, ``'c'`` or ``'r'`` on ``street``)."""
        self._street_actions.setdefault(street, []).append(kind)

    @property
    def current_aggressiveness(self) -> Optional[float]:
        """Mean over this hand's streets so far of ``bets+raises / actions``; None before any action."""
        per_street = [sum(k == "r" for k in acts) / len(acts) for acts in self._street_actions.values() if acts]
        return sum(per_street) / len(per_street) if per_street else None

    # ---- finished hands ----
    def add_round(self, stats: RoundStats) -> None:
        """A finished hand: every attribute it measures goes into the overall and recent values."""
        self.hands += 1
        for a in ATTRIBUTES:
            v = stats.value(a)
            if v is not None:
                self.sums[a] += v
                self.counts[a] += 1
                self.recent[a].append(v)
        self.start_hand()

    def model(self) -> PlayerModel:
        values: dict[str, float] = {}
        defaults: list[str] = []
        for a in ATTRIBUTES:
            if self.counts[a]:
                values[a] = self.sums[a] / self.counts[a]
                values["recent_" + a] = sum(self.recent[a]) / len(self.recent[a])
            else:
                values[a] = values["recent_" + a] = DEFAULTS[a]
                defaults.append(a)
        return PlayerModel(player=self.player, hands=self.hands, current_aggressiveness=self.current_aggressiveness,
                           measured=dict(self.counts), defaults=tuple(defaults), **values)

    # ---- plain data (the store's rows) ----
    def to_row(self) -> dict:
        row: dict = {"player": self.player, "hands": self.hands}
        for a in ATTRIBUTES:
            row[f"{a}_sum"] = self.sums[a]
            row[f"{a}_n"] = self.counts[a]
            row[f"{a}_recent"] = list(self.recent[a])
        return row

    @classmethod
    def from_row(cls, row: dict) -> "PlayerHistory":
        h = cls(str(row["player"]))
        h.hands = int(row["hands"])
        for a in ATTRIBUTES:
            h.sums[a] = float(row[f"{a}_sum"])
            h.counts[a] = int(row[f"{a}_n"])
            h.recent[a].extend(float(x) for x in row[f"{a}_recent"])
        return h


def default_model(player: str) -> PlayerModel:
    """The model of a player never seen: every attribute from :data:`DEFAULTS`.

    >>> default_model("stranger").riskiness == DEFAULTS["riskiness"]
    True
    """
    return PlayerHistory(player).model()


class PlayerModels:
    """Player histories by name, updated from hand records (logs, or a finished hand in play).

    See the module example.
    """

    def __init__(self, histories: Iterable[PlayerHistory] = (), *, strength: Strength = hand_strength) -> None:
        self.histories: dict[str, PlayerHistory] = {h.player: h for h in histories}
        self.strength = strength
        self.changed: set[str] = set()

    def __len__(self) -> int:
        return len(self.histories)

    def __contains__(self, player: object) -> bool:
        return player in self.histories

    def history(self, player: str) -> PlayerHistory:
        """The history of ``player`` (a new, empty one for a player never seen)."""
        h = self.histories.get(player)
        if h is None:
            h = self.histories[player] = PlayerHistory(player)
        return h

    def model(self, player: str) -> PlayerModel:
        """The model of ``player``; :data:`DEFAULTS` for a player never seen."""
        h = self.histories.get(player)
        return h.model() if h is not None else default_model(player)

    def update(self, record: HandRecord, *, skip: Iterable[str] = ()) -> None:
        """Add a finished hand (every seated player but those in ``skip``).

        Raises :class:`~cbr.errors.GameError` for a hand the rules engine cannot replay.
        """
        from cbr.logs.replay import replay_hand

        decisions = replay_hand(record, check_payoffs=False).decisions
        self.add_decisions(record.players, decisions, skip=skip)

    def add_decisions(self, players: Sequence[str], decisions: Sequence[DecisionPoint], *,
                      skip: Iterable[str] = ()) -> None:
        """Add one hand given as its replayed decision points."""
        skipped = set(skip)
        by_player: dict[str, list[DecisionPoint]] = {p: [] for p in players}
        for dp in decisions:
            by_player.setdefault(dp.player, []).append(dp)
        for player, dps in by_player.items():
            if player in skipped:
                continue
            self.history(player).add_round(round_stats(dps, self.strength))
            self.changed.add(player)
