"""The policy (bot) interface: a decision point in, a probability triple out.

A policy answers ``(fold, check/call, bet/raise)`` probabilities for the situation a
:class:`~cbr.game.DecisionPoint` describes (Poki's *probability triple*, seed
``billings-challenge-of-poker-poki.txt``, section "probability triples"); :meth:`Policy.act`
samples one action kind from it. The triple is always *legal*: zero on kinds missing from
``dp.legal``, summing to 1.

>>> from cbr.game import preset
>>> from cbr.game.decision import DecisionPoint
>>> dp = DecisionPoint(game=preset("holdem.limit.2p"), street=1, position=0, player="p1",
...     hole=(51, 47), board=(0, 5, 10), folded=(False, False), all_in=(False, False),
...     acted=(False, False), order=(0, 1), street_bets=0, committed=(0.0, 0.0),
...     total_committed=(10.0, 10.0), previous_round_bets=1, legal="cr")
>>> legal_triple((0.5, 0.2, 0.3), dp.legal)     # no bet to face: fold mass goes to check
(0.0, 0.7, 0.3)
>>> legal_triple((0.2, 0.3, 0.5), "fc")        # capped: raise mass goes to call
(0.2, 0.8, 0.0)
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, Optional

import numpy as np

from cbr.errors import GameError

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord

Triple = tuple[float, float, float]
KINDS = "fcr"


@dataclass(frozen=True, kw_only=True)
class Decision:
    """What a policy decided at a decision point, and what the decision was made from: the
    record a hand's driver keeps for each decision (:func:`cbr.play.table.play_out`), which
    retention and every explanation consume as it is (nothing replayed, recomputed or
    retrieved again).

    ``dp``: the decision point with the action taken (:meth:`DecisionPoint.taken`);
    ``action``: ``f``, ``c`` or ``r``; ``played``: the triple the action was drawn from (None
    when the policy did not say). A case-based bot's decision is a
    :class:`~cbr.policies.cbr_policy.CBRDecision`, which adds the feature row, the vote and
    the re-use step; :attr:`row` is None for every other policy.

    >>> from cbr.game.situation import situation
    >>> d = Decision(dp=situation(hole="AdQc", board="3h4cJh", to_call=1, pot=5).taken("c"), action="c")
    >>> d.action, d.dp.action, d.row, d.played
    ('c', 'c', None, None)
    """

    dp: "DecisionPoint"
    action: str
    played: Optional[Triple] = None

    @property
    def row(self) -> Optional[np.ndarray]:
        """The feature row the decision was made from (a case-based bot's), else None."""
        return None

    def row_for(self, casebase: object) -> Optional[np.ndarray]:
        """:attr:`row` when the decision was made on ``casebase`` (the same open case base,
        so the same feature set), so retention into it keeps that row as the case's; else None."""
        return None


def legal_triples(rows: np.ndarray, legal: str) -> np.ndarray:
    """:func:`legal_triple` of every row of an (n, 3) array as array operations, the same
    numbers bit for bit: rows that are already legal (the common case) are kept as they are;
    the others get :func:`legal_triple`'s clean-up (negative and NaN entries count as 0,
    illegal mass to check/call or spread over the legal kinds, then normalised) with the
    same float operations in the same order.

    >>> legal_triples(np.array([[0.2, 0.8, 0.0], [0.5, 0.0, 0.5]]), "fc").tolist()
    [[0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]
    >>> legal_triples(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), "r").tolist()
    [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]
    """
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[1] != 3:
        raise ValueError(f"triples come as an (n, 3) array, got shape {rows.shape}")
    if not legal or any(k not in KINDS for k in legal):
        raise GameError(f"no legal action to choose from ({legal!r}); is anyone to act?")
    cols = [rows[:, 0], rows[:, 1], rows[:, 2]]
    ok = (cols[0] >= 0.0) & (cols[1] >= 0.0) & (cols[2] >= 0.0)
    ok &= np.abs(cols[0] + cols[1] + cols[2] - 1.0) < 1e-12   # (f + c) + r, as legal_triple adds
    for i, kind in enumerate(KINDS):
        if kind not in legal:
            ok &= cols[i] == 0.0
    if ok.all():
        return rows.copy()
    # legal_triple's slow path on every row (the legal ones are put back below): adding a
    # zero is exact, so moving every illegal kind's mass, zero or not, gives the same sums.
    p = [np.where(col > 0.0, col, 0.0) for col in cols]   # max(0, x), NaN -> 0
    targets = [KINDS.index(k) for k in legal]
    for i, kind in enumerate(KINDS):
        if kind not in legal:
            moved, p[i] = p[i], np.zeros_like(p[i])
            if "c" in legal:
                p[1] = p[1] + moved
            else:
                share = moved / len(targets)
                for j in targets:
                    p[j] = p[j] + share
    total = p[0] + p[1] + p[2]
    positive = total > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        fixed = np.stack([p[0] / total, p[1] / total, p[2] / total], axis=1)
    if "c" in legal:
        empty = np.array([0.0, 1.0, 0.0])
    else:
        share = 1.0 / len(legal)
        empty = np.array([share if k in legal else 0.0 for k in KINDS])
    fixed[~positive] = empty
    return np.where(ok[:, None], rows, fixed)


def legal_triple(triple: Triple | list[float], legal: str) -> Triple:
    """Make ``triple`` legal for the action kinds in ``legal`` (a subset of ``"fcr"``).

    Mass of an illegal fold (nothing to call) or raise (street capped, or no chips) moves
    to check/call; if check/call itself is illegal the mass is spread over what is legal.
    Negative entries count as 0; the result sums to 1. Raises :class:`GameError` when no
    action is legal.

    >>> legal_triple((0, 0, 0), "fcr")
    (0.0, 1.0, 0.0)
    >>> legal_triple((1, 0, 0), "cr")
    (0.0, 1.0, 0.0)
    """
    if len(triple) != 3:
        raise ValueError(f"a probability triple has 3 entries (fold, call, raise), got {len(triple)}")
    if not legal or any(k not in KINDS for k in legal):
        raise GameError(f"no legal action to choose from ({legal!r}); is anyone to act?")
    f, c, r = triple
    if (f >= 0.0 and c >= 0.0 and r >= 0.0 and abs(f + c + r - 1.0) < 1e-12
            and (f == 0.0 or "f" in legal) and (c == 0.0 or "c" in legal) and (r == 0.0 or "r" in legal)):
        return (float(f), float(c), float(r))  # already legal (the common case): no copy
    p = [max(0.0, float(x)) if x == x else 0.0 for x in triple]  # NaN -> 0
    for i, kind in enumerate(KINDS):
        if kind not in legal and p[i] > 0.0:
            moved, p[i] = p[i], 0.0
            if "c" in legal:
                p[1] += moved
            else:
                targets = [KINDS.index(k) for k in legal]
                for j in targets:
                    p[j] += moved / len(targets)
    total = p[0] + p[1] + p[2]
    if total <= 0.0:
        if "c" in legal:
            return (0.0, 1.0, 0.0)
        share = 1.0 / len(legal)
        return tuple(share if k in legal else 0.0 for k in KINDS)  # type: ignore[return-value]
    return (p[0] / total, p[1] / total, p[2] / total)


def sample_action(triple: Triple, rng: random.Random) -> str:
    """Draw ``'f'``, ``'c'`` or ``'r'`` from a (legal, normalised) triple.

    >>> sample_action((0.0, 1.0, 0.0), random.Random(1))
    'c'
    """
    u = rng.random()
    f, c, r = triple
    if u < f:
        return "f"
    if u < f + c or r <= 0.0:
        return "c" if c > 0.0 or f <= 0.0 else "f"  # (float rounding at the top end)
    return "r"


class Policy:
    """Base class of every bot.

    Subclasses set ``name`` and override :meth:`triple` (and optionally :meth:`act`,
    :meth:`observe`, :meth:`reset`). Constructors take keyword parameters only and
    just store them; ``seed`` is for any randomness the policy keeps inside (Monte
    Carlo estimates), the action draw uses the ``rng`` the caller passes to :meth:`act`.

    >>> class Folder(Policy):
    ...     name = "folder"
    ...     def triple(self, dp):
    ...         return legal_triple((1.0, 0.0, 0.0), dp.legal)
    >>> Folder(seed=3).seed
    3
    """

    name: ClassVar[str] = "policy"

    def __init__(self, *, seed: int | None = None) -> None:
        self.seed = seed

    def triple(self, dp: "DecisionPoint") -> Triple:
        """Probabilities of (fold, check/call, bet/raise), legal for ``dp.legal``."""
        raise NotImplementedError(f"{type(self).__name__} does not define triple()")

    def triples(self, dp: "DecisionPoint", holes: Sequence[tuple[int, int]]) -> np.ndarray:
        """The triple this policy would answer at ``dp`` holding each of ``holes`` instead of
        ``dp.hole``: a float array of shape ``(len(holes), 3)``, each row legal for ``dp.legal``.

        What an exploitability measurement asks ("your triple for each hidden holding at
        this spot"). The default asks :meth:`triple` once per holding; policies whose triple
        does not depend on the cards, or that can answer many holdings at once, override it.
        A policy must answer without side effects: asking for other holdings never changes
        what it answers for its own.

        >>> from cbr.game import preset
        >>> from cbr.game.state import HandState
        >>> class Pairs(Policy):
        ...     def triple(self, dp):
        ...         return (0.0, 0.0, 1.0) if dp.hole[0] // 4 == dp.hole[1] // 4 else (0.0, 1.0, 0.0)
        >>> dp = HandState(preset("holdem.limit.2p")).decision_point()
        >>> Pairs().triples(dp, [(51, 50), (51, 47)]).tolist()       # AsAh raises, AsKs calls
        [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
        """
        out = np.empty((len(holes), 3))
        for i, hole in enumerate(holes):
            out[i] = legal_triple(self.triple(replace(dp, hole=tuple(hole))), dp.legal)
        return out

    def act(self, dp: "DecisionPoint", rng: random.Random) -> str:
        """One action kind (``'f'``, ``'c'`` or ``'r'``) drawn from :meth:`triple`."""
        return sample_action(legal_triple(self.triple(dp), dp.legal), rng)

    def decide(self, dp: "DecisionPoint", rng: random.Random) -> Decision:
        """The decision at ``dp`` as a record (:class:`Decision`): :meth:`act`'s action, drawn
        (if at all) with ``rng``. Policies that can say what they decided from override it;
        the action is always :meth:`act`'s."""
        kind = self.act(dp, rng)
        return Decision(dp=dp.taken(kind), action=kind)

    def observe(self, record: "HandRecord", position: int) -> None:
        """Called after every hand with the full record and this bot's position (no-op)."""

    @property
    def learns(self) -> bool:
        """Whether this bot changes from the hands it is shown (by default: whether its class
        overrides :meth:`observe`; a bot whose ``observe`` may do nothing says so itself)."""
        return type(self).observe is not Policy.observe

    def reset(self) -> None:
        """Forget everything learned or cached (start of a new match)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed!r})"
