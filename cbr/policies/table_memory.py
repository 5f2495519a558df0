"""Table memory: the cases retained against an opponent, weighed by what they won.

Retention keeps every decision of the bot with the opponents it was played against and the
hand's outcome (:mod:`cbr.play.retention`). The table memory reads those cases, per opponent
and street, from the case base the bot retains into: the ones already there when the bot
opens it (an earlier match against the same player: what it learnt is durable) and every one
retained from then on (:meth:`~cbr.store.loaded.LoadedCaseBase.subscribe`). Without retention
it stays empty and changes nothing.

At a decision, the cases retained against this opponent that are at least ``similarity``
similar to the situation (the case base's own similarity measure) are grouped by the action
taken; an action's value is the mean outcome of its group (small bets, the whole hand), and a
fold's is known exactly: what the bot has put in. :meth:`TableMemory.advise` replaces the
action the bot's expert chose by another only when the other's value is higher by more than
``z`` standard errors of the difference, each group counting at least ``min_cases`` cases:
what the bot retains changes what it does where the table has shown it, and nowhere else.

>>> import numpy as np
>>> from cbr.similarity import default_casper
>>> memory = TableMemory(default_casper(), min_cases=3)
>>> row = np.array([6, 0, 6, 5, 0, 1, 0.3, 10], np.float32)
>>> for outcome in (4.0, 5.0, 6.0):
...     memory.add("maniac", "preflop", row, "c", outcome)
>>> memory.count("maniac", "preflop"), memory.count("rock", "preflop")
(3, 0)
>>> advice = memory.advise("maniac", "preflop", row, "f", "fcr", fold_value=-1.0)
>>> advice.action, advice.counts["c"], round(advice.values["c"], 2)
('c', 3, 5.0)
>>> memory.advise("maniac", "preflop", row, "c", "fcr", fold_value=-1.0) is None   # it agrees
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from cbr.errors import counted
from cbr.game.gamedef import STREETS
from cbr.similarity.config import global_similarity

if TYPE_CHECKING:  # pragma: no cover
    from cbr.similarity import SimilarityConfig
    from cbr.store import CaseBase

__all__ = ["TableMemory", "MemoryAdvice"]

_CODES = {"f": 0, "c": 1, "r": 2}


@dataclass(frozen=True)
class MemoryAdvice:
    """What the table memory says at a decision: ``action`` to play instead of ``instead``, the
    number of similar cases retained against ``opponent`` per action (``counts``) and each
    action's value in small bets (``values``, a fold's exact) with its standard error (``errors``)."""

    opponent: str
    action: str
    instead: str
    counts: dict[str, int] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)

    def explain(self) -> str:
        """In words, e.g. ``table memory against maniac: c +5.00 ± 0.58 sb over 3 similar cases, f
        -1.00 (what is in the pot from the bot): c instead of f``."""
        parts = []
        for a in (self.action, self.instead):
            if a == "f":
                parts.append(f"f {self.values[a]:+.2f} (what the bot has put in)")
            else:
                n = self.counts.get(a, 0)
                parts.append(f"{a} {self.values[a]:+.2f} ± {self.errors[a]:.2f} sb over {counted(n, 'similar case')}")
        return f"table memory against {self.opponent}: {', '.join(parts)}: {self.action} instead of {self.instead}"


class _Cases:
    """One opponent's retained cases of one street: rows, action codes and outcomes in arrays
    grown by doubling; past ``window`` cases the oldest go (the most recent ``window`` stay)."""

    def __init__(self, window: int) -> None:
        self.window = window
        self._X: Optional[np.ndarray] = None
        self._codes = np.zeros(64, np.int8)
        self._outcomes = np.zeros(64)
        self._start = self._n = 0  # the live rows are [start, n)

    def __len__(self) -> int:
        return self._n - self._start

    def add(self, row: np.ndarray, code: int, outcome: float) -> None:
        row = np.asarray(row, np.float32)
        if self._X is None:
            self._X = np.zeros((64, len(row)), np.float32)
        if self._n == len(self._codes):  # full: drop what is past the window, else grow
            keep = slice(max(self._start, self._n - self.window), self._n)
            live = self._n - keep.start
            cap = max(64, 2 * live)
            X, codes, outs = np.zeros((cap, self._X.shape[1]), np.float32), np.zeros(cap, np.int8), np.zeros(cap)
            X[:live], codes[:live], outs[:live] = self._X[keep], self._codes[keep], self._outcomes[keep]
            self._X, self._codes, self._outcomes, self._start, self._n = X, codes, outs, 0, live
        self._X[self._n], self._codes[self._n], self._outcomes[self._n] = row, code, outcome
        self._n += 1
        if self._n - self._start > self.window:
            self._start = self._n - self.window

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Views of the live rows (valid until the next :meth:`add`)."""
        live = slice(self._start, self._n)
        assert self._X is not None
        return self._X[live], self._codes[live], self._outcomes[live]


class TableMemory:
    """The cases retained against each opponent, per street (see the module docstring).

    ``similarity``: the case base's :class:`~cbr.similarity.SimilarityConfig` (its measure per
    street); ``threshold``: the similarity a retained case needs to count (default: the
    configuration's retrieval threshold); ``min_cases``: the cases an action needs before its value
    counts; ``z``: the standard errors by which another action must be worth more;
    ``min_spread``: the least standard deviation assumed of one outcome (small bets), so that
    a few equal outcomes do not look certain; ``window``: the most recent cases kept per
    opponent and street (older ones are forgotten: a player who changes style is followed, and
    a decision costs at most one similarity per kept case)."""

    def __init__(self, similarity: "SimilarityConfig", *, threshold: Optional[float] = None, min_cases: int = 20,
                 z: float = 2.0, min_spread: float = 1.0, window: int = 2000) -> None:
        self.similarity = similarity
        self.threshold = threshold
        self.min_cases, self.z, self.min_spread = int(min_cases), float(z), float(min_spread)
        self.window = int(window)
        self._cases: dict[tuple[str, str], _Cases] = {}
        self._casebase: Any = None
        #: decisions the memory changed, per opponent
        self.changed: dict[str, int] = {}

    # ---- what it holds -------------------------------------------------------------------
    def add(self, opponent: str, street: str, row: np.ndarray, action: str, outcome: float) -> None:
        """Remember one case retained against ``opponent`` (outcome in small bets; NaN is skipped)."""
        if action in _CODES and outcome == outcome:
            self._cases.setdefault((opponent, street), _Cases(self.window)).add(row, _CODES[action], float(outcome))

    def count(self, opponent: str, street: Optional[str] = None) -> int:
        """The cases retained against ``opponent`` (of one street, or all)."""
        streets = STREETS if street is None else (street,)
        return sum(len(self._cases.get((opponent, s), ())) for s in streets)

    def attach(self, cb: "CaseBase") -> None:
        """Read the cases ``cb`` holds that were retained against someone, and every case it
        takes from now on (until :meth:`detach`). A second call with the same case base does
        nothing."""
        if cb is self._casebase:
            return
        self.detach()
        for s in STREETS:
            if not cb.count(s):
                continue
            names = list(cb.manifest.features[s])
            cols = ", ".join(f'"{n}"' for n in names)
            got = cb.sql(f"SELECT {cols}, action, outcome, opponents FROM cases_{s} "
                         "WHERE source = 'retained' AND opponents IS NOT NULL ORDER BY case_id").fetchnumpy()
            if len(got["action"]):
                X = np.stack([np.asarray(got[n], np.float32) for n in names], axis=1)
                outcomes = np.ma.filled(np.ma.asarray(got["outcome"], float), np.nan)
                self._take(s, X, list(got["action"]), outcomes, list(got["opponents"]), ["retained"] * len(X))
        cb.subscribe(self._taken)
        self._casebase = cb

    def detach(self) -> None:
        """Stop reading what the attached case base takes (what was read stays)."""
        if self._casebase is not None:
            self._casebase.unsubscribe(self._taken)
            self._casebase = None

    def _taken(self, street: str, chunk: Any) -> None:
        """The case base took ``chunk`` (case ids and rows): remember the retained ones."""
        _, rows = chunk
        self._take(street, rows.features, rows.actions, rows.outcomes, rows.meta.get("opponents", []),
                   rows.meta.get("source", []))

    def _take(self, street: str, X: np.ndarray, actions: Any, outcomes: Any, opponents: Any, sources: Any) -> None:
        for i, (names, source) in enumerate(zip(opponents, sources)):
            if source != "retained" or not names:
                continue
            out = outcomes[i]
            if out is None or out != out:
                continue
            for name in str(names).split(","):
                if name:
                    self.add(name, street, X[i], actions[i], float(out))

    # ---- what it says --------------------------------------------------------------------
    def values(self, opponent: str, street: str, row: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per action (f, c, r): the similar cases retained against ``opponent``, their mean
        outcome and its standard error (NaN without cases)."""
        cases = self._cases.get((opponent, street))
        n = np.zeros(3, np.int64)
        mean = np.full(3, np.nan)
        err = np.full(3, np.nan)
        if cases is None or not len(cases):
            return n, mean, err
        X, codes, outs = cases.arrays()
        st = self.similarity.street(street)
        sims = global_similarity(st, np.asarray(row, np.float32), X)
        near = sims >= (self.similarity.threshold if self.threshold is None else self.threshold)
        for a in range(3):
            got = outs[near & (codes == a)]
            n[a] = len(got)
            if len(got):
                mean[a] = float(got.mean())
                spread = max(float(got.std(ddof=1)) if len(got) > 1 else 0.0, self.min_spread)
                err[a] = spread / math.sqrt(len(got))
        return n, mean, err

    def advise(self, opponent: Optional[str], street: str, row: Optional[np.ndarray], action: str, legal: str,
               fold_value: float) -> Optional[MemoryAdvice]:
        """Another legal action than ``action`` when the cases retained against ``opponent``
        show it worth more by over ``z`` standard errors (see the module docstring), else None.
        ``fold_value``: what folding here gets (minus what the bot has put in, small bets)."""
        if opponent is None or row is None or len(self._cases.get((opponent, street), ())) < self.min_cases:
            return None
        n, mean, err = self.values(opponent, street, row)
        value = dict(zip("fcr", mean.tolist()))
        error = dict(zip("fcr", err.tolist()))
        value["f"], error["f"] = float(fold_value), 0.0
        counts = {a: int(k) for a, k in zip("fcr", n.tolist())}

        def known(a: str) -> bool:  # a fold's value is exact: it needs no cases
            return a in legal and (a == "f" or counts[a] >= self.min_cases and math.isfinite(value[a]))

        if not known(action):
            return None
        best, margin = None, 0.0
        for b in legal:
            if b == action or not known(b):
                continue
            gap = value[b] - value[action] - self.z * math.hypot(error[b], error[action])
            if gap > margin:
                best, margin = b, gap
        if best is None:
            return None
        self.changed[opponent] = self.changed.get(opponent, 0) + 1
        return MemoryAdvice(opponent, best, action, counts, value, error)
