"""The case-based bot (plugin ``cbr``): decision point -> features -> retrieval -> triple -> action.

For each decision the bot computes the case base's features of the situation, retrieves
the similar cases of that street (every case at or above the similarity threshold, else
the ``fallback_k`` most similar) by :func:`cbr.retrieval.triple.retrieve_triple`, the path
``cbr query`` answers by, and re-uses their actions by one of three policies (the table
:data:`~cbr.policies.reuse.REUSE`):

``probabilistic`` (CASPER)
    Sample an action from the retrieved cases' probability triple (weighted by
    similarity when the case base says so).
``max-frequency``
    The most frequent legal action. Ties are broken in the fixed order
    check/call, bet/raise, fold (the cheapest action that is not a give-up first).
``best-outcome``
    The legal action whose retrieved cases won the most on average (the case base's
    ``outcome`` column, in small bets; NULL cases are ignored), ties as above. When the
    case base has no ``outcome`` column or none of the retrieved cases of a legal action
    has an outcome, it falls back to ``probabilistic`` and the decision's explanation
    says so.

Options that shape the ``probabilistic`` sampling (defaults: CASPER's plain sampling, so they
change nothing unless given; tuned for CASPER's table in ``experiments/TUNING.md``):
``sharpen`` raises each share to that power before sampling (towards max-frequency),
``outcome_weight`` multiplies each action's share by ``exp(weight * mean outcome)`` of its
retrieved cases (:func:`shaped_triple`), and ``odds_guard`` (any re-use policy) plays the
fold share as check/call after the flop when the effective strength is at least that many
times the pot odds (:func:`guard_strength`): a drawn fold becomes a call, and the triple the
bot plays (``played``, what an exploitability run reads) has no fold share there.

The triple is always made legal first (:func:`~cbr.policies.base.legal_triple`): no fold
when checking is free (the mass goes to check), a raise at the cap becomes a call. A
street without cases is played check/call (and the explanation says so).

The case base is opened once, on the first decision, and kept open until :meth:`CBRPolicy.close`
(:func:`cbr.play.match.run_match` closes the bots it builds by name; ``with CBRPolicy() as bot``
does too). ``act(dp, rng)`` samples with the caller's ``rng``; :meth:`CBRPolicy.decide`
without one uses the bot's own ``random.Random`` seeded from its ``seed`` (reset by
:meth:`~CBRPolicy.reset`).

>>> from cbr.game.situation import situation
>>> dp = situation(hole="AdQc", board="3h4cJh", position=1, to_call=1, pot=5, previous_round_bets=2)
>>> with CBRPolicy(seed=1, reuse="max-frequency") as bot:
...     d = bot.decide(dp)
>>> d.action, d.reuse, [round(p, 2) for p in d.triple]
('c', 'max-frequency', [0.0, 0.77, 0.23])
"""
from __future__ import annotations

import math
import random
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from cbr.errors import ConfigError
from cbr.policies.base import Decision, Policy, Triple, legal_triple
from cbr.policies.reuse import (
    PLAYED,
    REUSE,
    REUSE_POLICIES,
    TIE_ORDER,
    Reused,
    Spot,
    best_outcome_action,
    guard_strength,
    max_frequency_action,
    shaped_triple,
)

if TYPE_CHECKING:  # pragma: no cover
    from cbr.game.decision import DecisionPoint
    from cbr.logs.record import HandRecord
    from cbr.store.casebase import CaseBase
    from cbr.store.shared import SharedCaseBase
    from cbr.store.street_view import StreetView

__all__ = ["CBRPolicy", "CBRDecision", "REUSE_POLICIES", "TIE_ORDER", "max_frequency_action",
           "best_outcome_action", "shaped_triple", "guard_strength", "preset_settings"]


_SHAPING_DEFAULTS = {"sharpen": 1.0, "outcome_weight": 0.0, "odds_guard": 0.0}

#: Named configurations of the bot (``cbr:preset=NAME``); an option given beside a preset
#: overrides that preset's value. ``expert`` (the default) plays the expert case base, the
#: MCCFR teacher's decisions (``casebases/build_expert.py``), sharpened (4) and tilted towards
#: the actions whose cases won (outcome weight 1): tuned on seed 1 (docs/experiments.md);
#: ``imitate`` samples the same case base plainly (CASPER's re-use): it copies the teacher's mixed
#: play, harder to exploit (the adaptive ``cbr`` bot's safe expert); ``casper`` is CASPER as
#: published: the rule-bot case base ``default``, plain sampling.
PRESETS: dict[str, dict[str, Any]] = {
    "expert": {"casebase": "expert", "reuse": "probabilistic", **_SHAPING_DEFAULTS, "sharpen": 4.0,
               "outcome_weight": 1.0},
    "imitate": {"casebase": "expert", "reuse": "probabilistic", **_SHAPING_DEFAULTS},
    "casper": {"casebase": "default", "reuse": "probabilistic", **_SHAPING_DEFAULTS},
}
DEFAULT_PRESET = "expert"


def one_of(names: Sequence[str]) -> str:
    """``names`` as an error message offers them: ``a, b or c``.

    >>> one_of(["expert", "imitate", "casper"]), one_of(["expert"])
    ('expert, imitate or casper', 'expert')
    """
    names = list(names)
    return names[-1] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def preset_settings(preset: str) -> str:
    """What the preset ``preset`` of :data:`PRESETS` sets, as a policy spec writes the options.

    >>> preset_settings("casper")
    'casebase=default, reuse=probabilistic, sharpen=1, outcome-weight=0, odds-guard=0'
    """
    return ", ".join(f"{k.replace('_', '-')}={f'{v:g}' if isinstance(v, float) else v}"
                     for k, v in PRESETS[preset].items())


def _number(name: str, value: Any) -> Any:
    """A number option given as text in a policy spec (``cbr:sharpen=2``) as a float; other values as they are."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ConfigError(f"{name} must be a number, got {value!r}") from None
    return value


def _check_shaping(sharpen: Any, outcome_weight: Any) -> tuple[float, float]:
    """Validated ``(sharpen, outcome_weight)``: ``sharpen`` > 0, ``outcome_weight`` finite."""
    ok = [isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (sharpen, outcome_weight)]
    if not ok[0] or sharpen <= 0:
        raise ConfigError(f"sharpen must be a positive number (1 = CASPER's sampling), got {sharpen!r}")
    if not ok[1]:
        raise ConfigError(f"outcome_weight must be a finite number (0 = ignore outcomes), got {outcome_weight!r}")
    return float(sharpen), float(outcome_weight)


#: The most cases a bot's ``fallback_k`` may ask for (``cbr query --k``'s limit too).
MAX_K = 1_000_000


def _whole(name: str, given: Any) -> int:
    """A whole number from 1 to :data:`MAX_K` of a bot spec (text, int or a float such as 20.0)."""
    value: Any = given
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            value = None
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_K:
        raise ConfigError(f"{name} must be a whole number from 1 to {MAX_K:,} (the case base's own: leave "
                          f"it out), got {given!r}")
    return value


def _retrieval_options(threshold: Any, k: Any, min_cases: Any = None
                       ) -> tuple[Optional[float], Optional[int], Optional[int]]:
    """Validated ``(threshold, fallback_k, min_cases)`` of a bot spec (None: the case base's own):
    the similarity at or above which cases are retrieved, in [0, 1]; how many of the most similar
    are retrieved when none (or fewer than ``min_cases``) reaches it, 1 or more; ``min_cases``
    at most ``fallback_k`` (checked against the case base's ``fallback_k`` when it is read)."""
    if threshold is not None:
        threshold = _number("threshold", threshold)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold must be a number in [0, 1] (the case base's own: leave it out), "
                              f"got {threshold!r}")
        threshold = float(threshold)
    if k is not None:
        k = _whole("fallback_k", k)
    if min_cases is not None:
        min_cases = _whole("min_cases", min_cases)
        if k is not None and min_cases > k:
            raise ConfigError(f"min_cases ({min_cases}) must be at most fallback_k ({k}): fewer than min_cases "
                              f"cases at or above the threshold retrieve the fallback_k most similar")
    return threshold, k, min_cases


#: How many of the retrieved cases a decision lists (``CBRDecision.case_ids``): the triple,
#: the counts and the outcome means come from every retrieved case, computed without listing
#: them (:func:`cbr.retrieval.triple.aggregate_vote`).
DECISION_CASES = 100


@dataclass(frozen=True, kw_only=True)
class CBRDecision(Decision):
    """One decision of the case-based bot, and what it was made from (the decision record).

    Beside :class:`~cbr.policies.base.Decision`'s ``dp``, ``action`` and ``played`` (the
    triple the action was drawn from: one-hot for the deterministic re-use policies):
    ``street``; ``triple``: the retrieved cases' triple made legal; ``reuse``: the re-use
    policy that decided (``probabilistic`` after a best-outcome fallback); ``retrieved``: how
    many cases were retrieved; ``case_ids``: the ``case_id`` values of the (up to
    :data:`DECISION_CASES`) most similar of them (an int64 array, most similar first);
    ``explanation``: the re-use step in words; ``similarity``: the mean similarity of the (up
    to) 10 most similar; ``vote``: the :class:`~cbr.retrieval.triple.Vote` (the feature row,
    the neighbours' index rows and similarities, the per-action totals); ``casebase``: the open
    case base it was decided on, and ``index`` the street's index the vote was retrieved from; ``kept``: when the adaptive bot let its case base decide,
    why it played no other expert (:meth:`~cbr.policies.adaptive.AdaptivePolicy.keep_reason`). Retention keeps :attr:`row` as the case's feature row, and
    an explanation lists the vote's cases (:func:`cbr.query.answer.explain_decision`).
    """

    street: str
    triple: Triple
    reuse: str
    retrieved: int
    fallback: bool
    case_ids: Any
    explanation: str
    similarity: float = float("nan")
    vote: Any = field(default=None, repr=False, compare=False)
    casebase: Any = field(default=None, repr=False, compare=False)
    index: Any = field(default=None, repr=False, compare=False)
    kept: str = ""

    @property
    def row(self) -> Optional[np.ndarray]:
        """The feature row the bot computed for this decision (its case base's feature set)."""
        return None if self.vote is None else self.vote.query

    def row_for(self, casebase: object) -> Optional[np.ndarray]:
        return self.row if casebase is self.casebase else None


def _has_outcomes(cb: "CaseBase") -> bool:
    """Whether any case of ``cb`` carries a known outcome (NULL = unknown)."""
    import numpy as np

    from cbr.game.gamedef import STREETS

    for street in STREETS:
        if cb.count(street):
            outcomes = getattr(cb.cases(street), "outcomes", None)
            if outcomes is not None and not np.all(np.isnan(outcomes)):
                return True
    return False


def _fold_as_call(played: Triple) -> Triple:
    """``played`` with its fold share on check/call (the odds guard)."""
    return (0.0, played[0] + played[1], played[2])


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True)`` (the distinct rows in lexicographic
    order, and each row's place among them), from one ``lexsort`` of the columns: several
    times faster for the ~1,200 rows of a spot's holdings.

    >>> r, back = unique_rows(np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0]], np.float32))
    >>> r.tolist(), back.tolist()
    ([[0.0, 5.0], [1.0, 2.0]], [1, 0, 1])
    """
    rows = np.asarray(rows)
    if rows.ndim != 2 or not len(rows):
        found, back = np.unique(rows, axis=0, return_inverse=True)
        return found, back.reshape(-1)
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    new = np.empty(len(rows), dtype=bool)
    new[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=new[1:])
    back = np.empty(len(rows), dtype=np.intp)
    back[order] = np.cumsum(new) - 1
    return ordered[new], back


class CBRPolicy(Policy):
    """The case-based bot. Its options, one line each, are in :attr:`OPTION_HELP` (``cbr
    plugins list`` shows them); ``preset`` names one of :data:`PRESETS` (``expert``, the default,
    ``imitate`` or ``casper``) and the other options override its values. ``casebase`` may also be a case
    base the process holds open (a :class:`~cbr.store.shared.SharedCaseBase`): the bot then plays
    from that one handle, taking a reference of its own, and its caller takes the handle's lock
    around each use. With ``similarity`` the indexes are built in memory. Over a case base whose
    feature set needs player models (``casper-opp``) the bot keeps a model of every player at
    the table, updated in :meth:`observe` (:mod:`cbr.models.tracker`; ``models`` starts them),
    and gives their values to the feature set, which retention then uses too. ``threshold``,
    ``fallback_k`` and ``min_cases`` replace the similarity's retrieval settings as ``cbr query
    --threshold/--k/--min-cases`` do for one query. Raises :class:`~cbr.errors.ConfigError` for an unknown ``reuse``; the case
    base and the similarity file are read on the first decision.

    >>> CBRPolicy(preset="casper", reuse="best-outcome", seed=7)
    CBRPolicy(preset='casper', casebase='default', similarity=None, reuse='best-outcome', seed=7)
    >>> CBRPolicy(reuse="greedy")
    Traceback (most recent call last):
    cbr.errors.ConfigError: unknown re-use policy 'greedy'; use probabilistic, max-frequency or best-outcome
    """

    name = "cbr"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "preset": "a named configuration: expert (the expert case base, sharpened), imitate (the expert case "
                  "base, plain sampling) or casper (CASPER as published); the options below override its values",
        "casebase": "the case base: a name (expert, default are shipped) or a path",
        "similarity": "a similarity TOML used instead of the case base's own",
        "reuse": "how the retrieved cases choose: probabilistic, max-frequency or best-outcome",
        "sharpen": "each action's share raised to this power before sampling (1: plain sampling)",
        "outcome_weight": "tilt towards the actions whose cases won: shares times exp(this * mean outcome) (negative: those that lost)",
        "odds_guard": "after the flop, call instead of folding when the effective strength is at least this "
                      "times the pot odds (0: off)",
        "models": "a model-store file to start the opponent models from (opponent-aware case bases)",
        "threshold": "retrieve every case at least this similar (default: the case base's setting)",
        "fallback_k": "with no case (or fewer than min-cases) that similar, retrieve this many of the most "
                      "similar (default: the case base's)",
        "min_cases": "fall back when fewer than this many are that similar, at most fallback-k (default: the "
                     "case base's, 1)",
    }
    #: What each preset sets, one line each (``cbr plugins list``; :func:`~cbr.policies.spec.policy_presets`).
    PRESET_HELP = {
        "expert": preset_settings("expert") + " (the teacher's cases)",
        "imitate": preset_settings("imitate") + " (plain sampling)",
        "casper": preset_settings("casper") + " (plain sampling)",
    }
    #: Retention during play writes through this bot's case base (:mod:`cbr.play.retention`).
    can_retain = True

    def __init__(self, *, seed: int | None = None, preset: str = DEFAULT_PRESET,
                 casebase: "str | Path | SharedCaseBase | None" = None,
                 similarity: Optional[str] = None, reuse: Optional[str] = None, sharpen: Optional[float] = None,
                 outcome_weight: Optional[float] = None, odds_guard: Optional[float] = None,
                 models: Optional[str] = None, threshold: Optional[float] = None,
                 fallback_k: Optional[int] = None, min_cases: Optional[int] = None) -> None:
        super().__init__(seed=seed)
        if preset not in PRESETS:
            raise ConfigError(f"unknown preset {preset!r}; use {one_of(PRESETS)}")
        chosen = PRESETS[preset]
        casebase = chosen["casebase"] if casebase is None else casebase
        reuse = chosen["reuse"] if reuse is None else reuse
        sharpen = chosen["sharpen"] if sharpen is None else _number("sharpen", sharpen)
        outcome_weight = chosen["outcome_weight"] if outcome_weight is None else _number("outcome_weight", outcome_weight)
        odds_guard = chosen["odds_guard"] if odds_guard is None else _number("odds_guard", odds_guard)
        self.preset = preset
        if reuse not in REUSE_POLICIES:
            raise ConfigError(f"unknown re-use policy {reuse!r}; use {one_of(REUSE_POLICIES)}")
        from cbr.errors import CaseBaseError
        from cbr.policies.spec import file_option_error
        from cbr.store import resolve_casebase
        from cbr.store.shared import SharedCaseBase

        self._given: Optional[SharedCaseBase] = None  # the process's open case base, when handed one
        self._handle: Optional[SharedCaseBase] = None  # this bot's reference to it while open
        if isinstance(casebase, SharedCaseBase):
            self._given, self._path, casebase = casebase, casebase.path, str(casebase.path)
        elif not isinstance(casebase, (str, Path)) or not str(casebase):
            raise ConfigError(f"casebase must be a name or a path, got {casebase!r}")
        else:
            try:  # no case base there: a bad input, as `cbr query -c` says it; now, not at the first decision
                self._path = resolve_casebase(str(casebase))
            except CaseBaseError as exc:
                raise file_option_error("casebase", exc) from None
        if similarity is not None and not Path(similarity).is_file():
            raise file_option_error("similarity", ConfigError(f"similarity config {similarity} does not exist "
                                                              f"or is not a file"))
        self.casebase = str(casebase)
        self.similarity = similarity
        self.reuse = reuse
        self._cb: Optional["CaseBase"] = None
        self._fs: Any = None
        self._config: Any = None
        self._weighted = False
        self._hand: Optional[str] = None
        self._rng = random.Random(f"cbr-policy:{seed}")
        self.last_decision: Optional[CBRDecision] = None
        self.sharpen, self.outcome_weight = _check_shaping(sharpen, outcome_weight)
        if not (isinstance(odds_guard, (int, float)) and not isinstance(odds_guard, bool)
                and math.isfinite(odds_guard) and odds_guard >= 0):
            raise ConfigError(f"odds_guard must be a number >= 0 (0 = off), got {odds_guard!r}")
        self.odds_guard = float(odds_guard)
        if models is not None and not Path(models).is_file():
            raise file_option_error("models", ConfigError(f"no model store file at {models} (fill one from logs first)"))
        self.models = models
        self.threshold, self.fallback_k, self.min_cases = _retrieval_options(threshold, fallback_k, min_cases)
        self._tracker: Any = None  # the opponent models (opponent-aware case bases only)

    def __repr__(self) -> str:
        chosen = PRESETS[self.preset]
        extra = "".join(f", {k}={getattr(self, k)!r}" for k in _SHAPING_DEFAULTS if getattr(self, k) != chosen[k])
        extra += "".join(f", {k}={getattr(self, k)!r}" for k in ("threshold", "fallback_k", "min_cases")
                         if getattr(self, k) is not None)
        return (f"CBRPolicy(preset={self.preset!r}, casebase={self.casebase!r}, similarity={self.similarity!r}, "
                f"reuse={self.reuse!r}{extra}, seed={self.seed!r})")

    @property
    def casebase_path(self) -> Path:
        """Where this bot's case base is."""
        return self._path

    @property
    def casebase_handle(self) -> "Optional[SharedCaseBase]":
        """The shared case base this bot was handed (its users take its lock), else None."""
        return self._given

    def use_casebase(self, path: "str | Path | SharedCaseBase") -> None:
        """Play from (and retain into) another case base, e.g. a copy, or a case base the
        process holds open (closes the current one)."""
        from cbr.errors import CaseBaseError
        from cbr.store import resolve_casebase
        from cbr.store.shared import SharedCaseBase

        self.close()
        if isinstance(path, SharedCaseBase):
            self._given, self._path, self.casebase = path, path.path, str(path.path)
            return
        try:
            self._path = resolve_casebase(str(path))
        except CaseBaseError as exc:
            raise ConfigError(str(exc)) from None
        self.casebase = str(path)
        self._given = None

    # ---- life cycle --------------------------------------------------------------------
    def open(self) -> "CaseBase":
        """Open the case base (once) and read the similarity file if one was given. A bot
        handed a shared case base takes a reference to it (and so reads the retrieval data the case
        base keeps, one copy for every bot of that handle and similarity); over an opponent-aware case base, whose
        feature set carries one bot's player models, it opens a handle of its own instead."""
        if self._cb is None:
            from cbr.errors import CaseBaseError
            from cbr.store import CaseBase

            handle = self._given.share() if self._given is not None else None
            if handle is not None:
                with handle.lock:
                    if getattr(handle.cb.feature_set(), "needs_player_models", False):
                        handle.release()
                        handle = None
            cb = handle.cb if handle is not None else CaseBase.open(self._path)
            try:
                with handle.lock if handle is not None else nullcontext():
                    if self.similarity is not None:
                        from cbr.store.indexes import check_similarity, load_similarity

                        path = Path(self.similarity)
                        if not path.is_file():
                            raise ConfigError(f"similarity config {path} does not exist or is not a file")
                        config = load_similarity(path)
                        check_similarity(config, cb.manifest.features)
                        self._config = config
                    else:
                        config = cb.similarity()
                    if self.threshold is not None or self.fallback_k is not None or self.min_cases is not None:
                        try:
                            config = config.changed(threshold=self.threshold, fallback_k=self.fallback_k,
                                                    min_cases=self.min_cases)
                        except ConfigError as exc:
                            hint = ""
                            if "min_cases" in str(exc):
                                hint = ("; give fallback-k too" if self.fallback_k is None else
                                        f"; the case base's min_cases is {config.min_cases}: give min-cases too"
                                        if self.min_cases is None else "")
                            raise ConfigError(f"case base {cb.name!r}: {exc}{hint}") from None
                        self._config = config
                    self._weighted = bool(config.weighted_triple)
                    self._fs = cb.feature_set()
                    self._track_opponents(cb)
                    if self.reuse == "best-outcome" and not _has_outcomes(cb):
                        raise CaseBaseError(f"case base {cb.name!r} holds no case with an outcome, which "
                                            f"reuse=best-outcome needs: rebuild it from logs with payoffs "
                                            f"(`cbr build`), or use reuse=probabilistic")
            except BaseException:
                if handle is not None:
                    handle.release()
                else:
                    cb.close()
                raise
            self._cb, self._handle = cb, handle
        return self._cb

    def _track_opponents(self, cb: "CaseBase") -> None:
        """Give an opponent-aware feature set the bot's opponent models (kept across
        re-opening); refuse ``models`` for a case base whose features ignore them."""
        if getattr(self._fs, "needs_player_models", False):
            if self._tracker is None:
                from cbr.models.tracker import OpponentTracker

                self._tracker = OpponentTracker(self.models)
            self._fs.opponent_values = self._tracker.values
        elif self.models is not None:
            raise ConfigError(f"models: case base {cb.name!r} uses feature set {cb.manifest.feature_set!r}, "
                              f"whose cases ignore player models; build one with the casper-opp feature set")

    @property
    def opponent_models(self) -> Any:
        """The bot's player models (``PlayerModels``) over an opponent-aware case base, else None."""
        return self._tracker.models if self._tracker is not None else None

    @property
    def learns(self) -> bool:
        """Only with an opponent-aware case base (its opponent models learn); opens the case base."""
        self.open()
        return self._tracker is not None

    def observe(self, record: "HandRecord", position: int) -> None:
        """After each hand: the opponent models take it (opponent-aware case bases only)."""
        self.open()
        if self._tracker is not None:
            self._tracker.observe(record)

    def close(self) -> None:
        """Close the case base (a later decision opens it again)."""
        cb, self._cb = self._cb, None
        handle, self._handle = self._handle, None
        self.last_decision = None  # its record holds the case base and index
        if handle is not None:
            handle.release()
        elif cb is not None:
            cb.close()

    def __enter__(self) -> "CBRPolicy":
        self.open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def reset(self) -> None:
        """A new match: the bot's own random draws start again from its seed."""
        self._rng = random.Random(f"cbr-policy:{self.seed}")
        self.last_decision = None
        if self._tracker is not None:
            self._tracker.reset()

    # ---- deciding ----------------------------------------------------------------------
    def _street(self, street: str) -> "StreetView":
        """The street's retrieval data: the case base's own view of it (kept current by the case
        base as it takes cases; one copy for every bot of the case base and similarity)."""
        return self.open().street_view(street, self._config)

    def _new_hand(self, hand_id: str) -> None:
        """Once per hand: read the cases retained since (by this process or another)."""
        if (hand_id != self._hand or hand_id.startswith("/")) and self._cb is not None:
            self._hand = hand_id
            self._cb.refresh()

    def _spot(self, dp: "DecisionPoint", *, refresh: bool = True) -> tuple["CaseBase", str, "StreetView"]:
        """The open case base, the street and its retrieval data for a decision at ``dp``
        (``refresh``: first read what was retained since, once per hand)."""
        from cbr.errors import CaseBaseError, GameError
        from cbr.game.gamedef import STREETS

        cb = self.open()
        if refresh:
            self._new_hand(f"{dp.hand_id}/{dp.source}")
        if dp.game.betting != "limit" and all(g.get("betting", "limit") == "limit" for g in cb.manifest.games):
            raise GameError(f"the cbr bot cannot play {dp.game.name!r} ({dp.game.betting}): case base "
                            f"{cb.name!r} holds only limit hands, whose features count bets of a fixed size")
        street = STREETS[dp.street]
        data = self._street(street)
        if data.index is None:
            raise CaseBaseError(f"case base {cb.name!r} has no {street} cases, so the cbr bot cannot decide "
                                f"on the {street}: build it from logs that reach the {street}")
        return cb, street, data

    def decide(self, dp: "DecisionPoint", rng: Optional[random.Random] = None) -> CBRDecision:
        """Decide at ``dp``: a legal action and the reasons (also kept as :attr:`last_decision`)."""
        from cbr.retrieval.triple import retrieve_triple

        cb, street, data = self._spot(dp)
        vote = retrieve_triple(self._fs, dp, data.index, data.labels, weighted=self._weighted, top=DECISION_CASES)
        d = self._reuse(cb, street, data, dp, vote, rng if rng is not None else self._rng)
        self.last_decision = d
        return d

    def triples(self, dp: "DecisionPoint", holes: Sequence[tuple[int, int]]) -> np.ndarray:
        """The triple this bot plays at ``dp`` for each holding of ``holes``: one batch of
        retrievals (:func:`~cbr.retrieval.triple.aggregate_votes`), each vote re-used as
        :meth:`decide` re-uses it (the same triples, holding by holding). No side effect: the
        case base is not refreshed (the cases retained since are read at the bot's next
        decision), the bot's random draws and :attr:`last_decision` are untouched."""
        from dataclasses import replace

        from cbr.retrieval.triple import aggregate_votes

        cb, street, data = self._spot(dp, refresh=False)
        if not holes:
            return np.empty((0, 3))
        hole_rows = getattr(self._fs, "hole_rows", None)
        if hole_rows is not None:  # betting features once, hand features of every holding in one batch
            queries = hole_rows(dp, holes)
        else:
            spots = [replace(dp, hole=tuple(h)) for h in holes]
            prepare = getattr(self._fs, "prepare", None)
            if prepare is not None:  # hand features of every holding on this board in one enumeration
                prepare(spots)
            queries = np.stack([self._fs.row(s) for s in spots])
        # holdings with the same feature row (pre-flop: the 169 classes) share one retrieval
        rows, back = unique_rows(queries)
        votes = aggregate_votes(data.index, rows, data.labels, weighted=self._weighted, street=street,
                                top=DECISION_CASES)
        rng = random.Random(0)  # what the re-use rules draw is not part of the triple they play
        # the re-use rules and the odds guard read the spot and the vote, never the hole cards
        rule = PLAYED[self.reuse]
        played = np.empty((len(votes), 3))
        for i, v in enumerate(votes):
            triple = rule(Spot(v, legal_triple(v.triple, dp.legal), dp.legal, rng, self.sharpen, self.outcome_weight,
                               cb.name))
            if self._guard(cb, street, v.query, dp, triple) is not None:
                triple = _fold_as_call(triple)
            played[i] = triple
        return played[back]

    def _reused(self, cb: "CaseBase", street: str, dp: "DecisionPoint", vote: Any,
                rng: random.Random) -> tuple[Triple, Reused]:
        """The vote's legal triple, and the re-use rule (and the odds guard) on it."""
        triple = legal_triple(vote.triple, dp.legal)
        reused = REUSE[self.reuse](Spot(vote, triple, dp.legal, rng, self.sharpen, self.outcome_weight, cb.name))
        ehs = self._guard(cb, street, vote.query, dp, reused.played)
        if ehs is not None:
            said = "so call instead of fold" if reused.action == "f" else "so the fold share is played as a call"
            reused = Reused("c" if reused.action == "f" else reused.action, _fold_as_call(reused.played), reused.reuse,
                            reused.why + f"; odds guard: effective strength {ehs:.2f} >= {self.odds_guard:g} x pot "
                                         f"odds {dp.pot_odds:.2f}, {said}")
        return triple, reused

    def _reuse(self, cb: "CaseBase", street: str, data: "StreetView", dp: "DecisionPoint", vote: Any,
               rng: random.Random) -> CBRDecision:
        """The re-use rule (and the odds guard) on the vote of ``dp``: the decision."""
        triple, reused = self._reused(cb, street, dp, vote, rng)
        return CBRDecision(dp=dp.taken(reused.action), action=reused.action, played=reused.played, street=street,
                           triple=triple, reuse=reused.reuse, retrieved=len(vote), fallback=vote.fallback,
                           case_ids=data.case_ids[vote.ids], explanation=reused.why,
                           similarity=vote.mean_similarity(10), vote=vote, casebase=cb, index=data.index)

    def _guard(self, cb: "CaseBase", street: str, q: Any, dp: "DecisionPoint", played: Triple) -> Optional[float]:
        """The effective strength (:func:`guard_strength` of the features ``q``) when the odds
        guard plays this spot's fold share as a call (on, after the flop, calling legal, some
        share on fold, and the strength at least ``odds_guard`` times the pot odds); else None."""
        if not (self.odds_guard > 0.0 and dp.street > 0 and "c" in dp.legal and played[0] > 0.0):
            return None
        names = list(cb.manifest.features.get(street, ()))
        need = ("hand_strength", "positive_potential", "players_in_hand")
        if not all(f in names for f in need):
            raise ConfigError(f"odds-guard needs the features {', '.join(need)} on the {street}; case base "
                              f"{cb.name!r} has {', '.join(names)}")
        ehs = guard_strength(*(float(q[names.index(f)]) for f in need[:2]), int(q[names.index(need[2])]))
        return ehs if ehs >= self.odds_guard * dp.pot_odds else None

    def triple(self, dp: "DecisionPoint") -> Triple:
        """The triple this bot plays at ``dp`` (one-hot for max-frequency and best-outcome)."""
        return self.decide(dp).played

    def act(self, dp: "DecisionPoint", rng: random.Random) -> str:
        """One legal action kind, drawn (if at all) with ``rng``."""
        return self.decide(dp, rng).action
