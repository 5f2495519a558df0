"""Card abstractions of the KTH study: N buckets per street by HS or HS^2, four ways.

A bucketing assigns a holding on each street a bucket ``0..N-1`` (higher = stronger) by
its metric (:mod:`cbr.abstraction.metrics`) and a sorted list of ``N - 1`` thresholds:
``bucket = number of thresholds <= metric`` (a ``searchsorted``). The kinds differ only
in the thresholds:

- ``uniform``: ``k / N``, equal widths on [0, 1] (the study's 3.2.3);
- ``percentile``: equal numbers of holdings per bucket (3.2.5): quantiles of the metric
  over sampled deals (pre-flop: over all 1326 holdings, exactly);
- ``minmax``: equal widths on [min, max] of the street's metric (3.2.6), min and max over
  the sampled deals (pre-flop: exact; see table 1 of the study);
- ``history``: percentiles *conditioned on the previous street's bucket* (3.2.7): one row
  of thresholds per previous bucket, so every bucket sequence is about equally likely.
  Pre-flop it is ``percentile``. A previous bucket seen fewer than ``N`` times in the
  sample falls back to the street's unconditioned percentiles.

Thresholds are computed once by :meth:`Abstraction.build` from ``samples`` random boards,
each of which contributes *every* holding that does not clash with it (1081), so the
quantiles rest on ``samples * 1081`` deals from ``samples`` independent boards. They are
saved in ``DIR/abstraction.json`` with a ``fingerprint`` (sha256 of kind, metric, bucket
count and thresholds) that strategies are checked against; :meth:`Abstraction.load`
refuses another format version, a corrupted file or an unexpected bucket count with one
:class:`~cbr.errors.ConfigError` line.

The chance model of the abstract game, :meth:`Abstraction.bucket_game`, is estimated from
sampled deals too (see its docstring for the fallbacks and the sampling error).

>>> a = Abstraction.build("uniform", "hs", n_buckets=4, samples=0)
>>> a.name, a.n_buckets, a.bucket_sequence("AsAd")
('u_hs', 4, (3,))
>>> a.bucket_sequence("7c2d", "AsKsQs")
(1, 0)
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from cbr.abstraction.game import BucketGame
from cbr.abstraction.metrics import board_metrics, check_metric, clean_board_metrics, preflop_metrics, river_values
from cbr.errors import ConfigError, counted
from evaluator_ext import parse_cards
from evaluator_ext.cards import check_distinct

__all__ = ["Abstraction", "sample_boards", "KINDS", "FORMAT_VERSION", "ABSTRACTION_FILE", "BUCKET_GAME_FILE", "Progress"]

FORMAT = "cbr-abstraction"
FORMAT_VERSION = 1
ABSTRACTION_FILE = "abstraction.json"
BUCKET_GAME_FILE = "bucket_game.npz"
KINDS: tuple[str, ...] = ("uniform", "percentile", "minmax", "history")
_PREFIX = {"uniform": "u", "percentile": "p", "minmax": "mm", "history": "h"}
MAX_BUCKETS = 64
#: Most boards :meth:`Abstraction.build` deals (it keeps every holding's metrics: ~26 MB per
#: 1000 boards; 20,000 boards take about 20 minutes).
MAX_BUILD_SAMPLES = 20_000
#: Progress callback: ``progress(done, total)`` (boards dealt so far).
Progress = Callable[[int, int], None]

_COMBO_CARDS = np.array([(lo, hi) for hi in range(1, 52) for lo in range(hi)], dtype=np.int64)  # by combo index


def _check_kind(kind: object) -> str:
    if kind not in KINDS:
        raise ConfigError(f"bucketing kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return str(kind)


def _check_count(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= int(value) <= high:
        raise ConfigError(f"{name} must be an integer {low}..{high}, got {value!r}")
    return int(value)


def _percentiles(values: np.ndarray, n: int) -> np.ndarray:
    """N-1 thresholds splitting ``values`` into N groups of (as near as ties allow) equal size.

    >>> _percentiles(np.arange(8.0), 4).tolist()
    [2.0, 4.0, 6.0]
    """
    v = np.sort(np.asarray(values, dtype=float))
    if v.size == 0:
        return np.linspace(0.0, 1.0, n + 1)[1:-1]
    positions = np.ceil(np.arange(1, n) * v.size / n).astype(int)
    return v[np.minimum(positions, v.size - 1)]


def sample_boards(samples: int, seed: int) -> np.ndarray:
    """The ``samples`` random boards (5 distinct cards, flop first; uint8 rows) that
    :meth:`Abstraction.build` and :meth:`Abstraction.bucket_game` deal for ``seed``.

    >>> sample_boards(2, seed=0).shape
    (2, 5)
    """
    rng = np.random.default_rng(seed)
    deck = np.tile(np.arange(52, dtype=np.uint8), (samples, 1))
    return np.ascontiguousarray(rng.permuted(deck, axis=1)[:, :5])


@dataclass(frozen=True, eq=False)
class Abstraction:
    """A bucketing of every street (see the module docstring). Build or load it; do not edit it.

    ``thresholds[s]`` is a float array of shape ``(N-1,)``, or ``(N, N-1)`` for a history
    bucketing's streets 1..3 (one row per previous bucket). ``river_classes`` are the
    unconditioned river percentiles that define a history bucketing's showdown classes.
    """

    kind: str
    metric: str
    n_buckets: int
    thresholds: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    river_classes: Optional[np.ndarray] = None
    build_info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_kind(self.kind)
        check_metric(self.metric)
        n = _check_count(self.n_buckets, "n_buckets", 1, MAX_BUCKETS)
        if len(self.thresholds) != 4:
            raise ConfigError(f"an abstraction needs thresholds for 4 streets, got {len(self.thresholds)}")
        clean = []
        for street, t in enumerate(self.thresholds):
            arr = np.array(t, dtype=float)
            shape = (n, n - 1) if self.kind == "history" and street > 0 else (n - 1,)
            if arr.shape != shape:
                raise ConfigError(f"street {street}: thresholds must have shape {shape} for {counted(n, 'bucket')}, got {arr.shape}")
            if not np.all(np.isfinite(arr)) or np.any(np.diff(arr, axis=-1) < 0):
                raise ConfigError(f"street {street}: thresholds must be finite and sorted")
            arr.flags.writeable = False
            clean.append(arr)
        object.__setattr__(self, "thresholds", tuple(clean))
        if self.kind == "history":
            rc = np.array(self.river_classes if self.river_classes is not None else [], dtype=float)
            if rc.shape != (n - 1,) or np.any(np.diff(rc) < 0):
                raise ConfigError(f"a history bucketing needs {n - 1} sorted river class thresholds")
            rc.flags.writeable = False
            object.__setattr__(self, "river_classes", rc)
        else:
            object.__setattr__(self, "river_classes", None)

    # -- identity ----------------------------------------------------------------

    @property
    def name(self) -> str:
        """The study's name: ``p_hs``, ``mm_hs2``, ``h_hs2``, ... (``u_`` for uniform)."""
        return f"{_PREFIX[self.kind]}_{self.metric}"

    @property
    def fingerprint(self) -> str:
        """sha256 (hex) of kind, metric, bucket count and every threshold (exact float text)."""
        payload = {
            "kind": self.kind,
            "metric": self.metric,
            "n_buckets": self.n_buckets,
            "thresholds": [t.tolist() for t in self.thresholds],
            "river_classes": None if self.river_classes is None else self.river_classes.tolist(),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    @property
    def n_classes(self) -> int:
        """Showdown strength classes of the bucket game (``N`` for every kind)."""
        return self.n_buckets

    @property
    def description(self) -> dict[str, Any]:
        """JSON-able summary (name, kind, metric, n_buckets, fingerprint, format, build) a
        strategy file stores and is checked against with :meth:`check_description`."""
        return {
            "name": self.name,
            "kind": self.kind,
            "metric": self.metric,
            "n_buckets": self.n_buckets,
            "fingerprint": self.fingerprint,
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "build": dict(self.build_info),
        }

    def check_description(self, description: Any, what: str = "strategy") -> None:
        """ConfigError unless ``description`` (a dict from :attr:`description`) names this abstraction.

        >>> a = Abstraction.build("uniform", "hs", n_buckets=2, samples=0)
        >>> a.check_description(a.description)
        >>> try:
        ...     a.check_description({"fingerprint": "0" * 64, "name": "p_hs"})
        ... except ConfigError as e:
        ...     print(str(e)[:50])
        strategy was made for abstraction p_hs (fingerprin
        """
        fp = description.get("fingerprint") if isinstance(description, dict) else None
        if fp != self.fingerprint:
            name = description.get("name", "?") if isinstance(description, dict) else "?"
            raise ConfigError(
                f"{what} was made for abstraction {name} (fingerprint {str(fp)[:12]}), not for {self.name} "
                f"(fingerprint {self.fingerprint[:12]})"
            )

    # -- bucket assignment -----------------------------------------------------------

    def bucket(self, street: int, value: float, previous: Optional[int] = None) -> int:
        """Bucket of a metric value on ``street`` (0..3); ``previous`` bucket needed for history streets 1..3.

        >>> Abstraction.build("uniform", "hs", n_buckets=4, samples=0).bucket(2, 0.5)
        2
        """
        t = self._row(street, previous)
        return int(np.searchsorted(t, value, side="right"))

    def _row(self, street: int, previous: Optional[int]) -> np.ndarray:
        if street not in (0, 1, 2, 3):
            raise ConfigError(f"street must be 0..3, got {street!r}")
        t = self.thresholds[street]
        if t.ndim == 2:
            if previous is None or not 0 <= previous < self.n_buckets:
                raise ConfigError(f"a history bucketing needs the previous street's bucket, got {previous!r}")
            return t[previous]
        return t

    def bucket_sequence(self, hole: Any, board: Any = ()) -> tuple[int, ...]:
        """One bucket per street so far: a board of 0, 3, 4, 5 cards gives 1, 2, 3, 4 buckets.

        Invalid or repeated cards raise :class:`~evaluator_ext.InvalidCardError` (a ValueError).
        The first call on a new flop values every holding on it (about 55 ms); later calls
        on the same board are table lookups.

        >>> Abstraction.build("uniform", "hs2", n_buckets=8, samples=0).bucket_sequence("AhKh", "QhJhTh")
        (3, 7)
        """
        h, b = _clean(hole, board)
        index = h[1] * (h[1] - 1) // 2 + h[0] if h[1] > h[0] else h[0] * (h[0] - 1) // 2 + h[1]
        which = 0 if self.metric == "hs" else 1
        seq: list[int] = []
        previous = None
        for n in _PREFIXES[len(b)]:
            value = clean_board_metrics(tuple(sorted(b[:n])))[which][index]
            t = self.thresholds[len(seq)]
            previous = int(np.searchsorted(t if t.ndim == 1 else t[previous], value, side="right"))
            seq.append(previous)
        return tuple(seq)

    def bucket_sequences(self, holdings: Any, board: Any = ()) -> np.ndarray:
        """:meth:`bucket_sequence` for many holdings at once: ``holdings`` are holding indices
        (0..1325, as :func:`evaluator_ext.cards.combo_index`) that do not clash with ``board``;
        returns an int array of shape (len(holdings), streets so far), the same buckets.

        >>> from evaluator_ext import combo_index
        >>> a = Abstraction.build("uniform", "hs2", n_buckets=8, samples=0)
        >>> a.bucket_sequences([combo_index(50, 46)], "QhJhTh").tolist()    # AhKh
        [[3, 7]]
        """
        b = parse_cards(board)
        if len(b) not in _PREFIXES:
            raise ConfigError(f"a board has 0, 3, 4 or 5 cards, got {len(b)}")
        check_distinct(b)
        idx = np.asarray(holdings, dtype=np.int64)
        which = 0 if self.metric == "hs" else 1
        out = np.empty((idx.size, len(_PREFIXES[len(b)])), dtype=np.int64)
        previous: Optional[np.ndarray] = None
        for street, n in enumerate(_PREFIXES[len(b)]):
            values = clean_board_metrics(tuple(sorted(b[:n])))[which][idx]
            previous = self._assign(street, values, previous)
            out[:, street] = previous
        return out

    def _assign(self, street: int, values: np.ndarray, previous: Optional[np.ndarray]) -> np.ndarray:
        """Vectorised :meth:`bucket` over arrays."""
        t = self.thresholds[street]
        if t.ndim == 1:
            return np.searchsorted(t, values, side="right")
        assert previous is not None
        out = np.empty(values.shape, dtype=np.int64)
        for p in range(self.n_buckets):
            sel = previous == p
            out[sel] = np.searchsorted(t[p], values[sel], side="right")
        return out

    def board_sequences(self, board: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every live holding on a complete board, streets dealt in order (flop = first three cards).

        Returns ``(combos, sequences, river_metric)``: combo indices of the 1081 holdings
        that do not clash, their bucket sequences (1081 x 4) and their river metric.

        >>> a = Abstraction.build("percentile", "hs", n_buckets=4, samples=0)
        >>> combos, seqs, _ = a.board_sequences("2c7dJhQsKs")
        >>> seqs.shape, a.bucket_sequence((2, 3), "2c7dJhQsKs") in {tuple(s) for s in seqs.tolist()}
        ((1081, 4), True)
        """
        b = _board5(board)
        which = 0 if self.metric == "hs" else 1
        river = board_metrics(b)[which]
        combos = np.flatnonzero(river >= 0)
        seqs = np.empty((combos.size, 4), dtype=np.int64)
        prev = None
        for street, prefix in enumerate(((), b[:3], b[:4], b)):
            values = board_metrics(prefix)[which][combos]
            prev = self._assign(street, values, prev)
            seqs[:, street] = prev
        return combos, seqs, river[combos]

    def river_class(self, sequences: np.ndarray, river_metric: np.ndarray) -> np.ndarray:
        """Showdown strength class of river holdings: the river bucket, or for a history
        bucketing the unconditioned river percentile bucket of the metric (``river_classes``)."""
        if self.river_classes is None:
            return np.asarray(sequences)[:, 3]
        return np.searchsorted(self.river_classes, river_metric, side="right")

    # -- building --------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        kind: str,
        metric: str,
        n_buckets: int = 8,
        samples: int = 400,
        seed: int = 0,
        progress: Optional[Progress] = None,
    ) -> "Abstraction":
        """Compute the thresholds of a bucketing from ``samples`` random boards (0 is fine
        for ``uniform``; the others then use the pre-flop holdings only and uniform widths later).

        Each board costs about 60 ms (the flop's metrics dominate). ``progress(done, total)``
        is called after every board.

        >>> a = Abstraction.build("percentile", "hs", n_buckets=8, samples=0)
        >>> a.name, len(a.thresholds[0])
        ('p_hs', 7)
        """
        kind = _check_kind(kind)
        metric = check_metric(metric)
        n = _check_count(n_buckets, "n_buckets", 1, MAX_BUCKETS)
        samples = _check_count(samples, "samples", 0, MAX_BUILD_SAMPLES)
        seed = _check_count(seed, "seed", 0, 2**63 - 1)
        start = time.perf_counter()
        which = 0 if metric == "hs" else 1
        pre = preflop_metrics()[which]
        boards = sample_boards(samples, seed)
        street_values: list[list[np.ndarray]] = [[pre], [], [], []]
        street_combos: list[np.ndarray] = []
        for k, board in enumerate(boards):
            b = tuple(int(c) for c in board)
            river = board_metrics(b)[which]
            combos = np.flatnonzero(river >= 0)
            street_combos.append(combos)
            for street, prefix in ((1, b[:3]), (2, b[:4]), (3, b)):
                street_values[street].append(board_metrics(prefix)[which][combos])
            if progress is not None:
                progress(k + 1, samples)
        values = [np.concatenate(v) if v else np.empty(0) for v in street_values]
        uniform = np.linspace(0.0, 1.0, n + 1)[1:-1]
        thresholds: list[np.ndarray] = []
        river_classes = None
        for street in range(4):
            v = values[street]
            if kind == "uniform" or (v.size == 0 and street > 0):
                thresholds.append(uniform.copy())
            elif kind == "minmax":
                thresholds.append(np.linspace(v.min(), v.max(), n + 1)[1:-1])
            else:
                thresholds.append(_percentiles(v, n))
        if kind == "history":
            river_classes = thresholds[3].copy()
            # condition streets 1..3 on the previous street's (history) bucket, street by street
            prev_b = None
            for street in range(4):
                v = values[street]
                if street == 0:
                    prev_b = np.searchsorted(thresholds[0], pre, side="right")
                    prev_b = np.concatenate([prev_b[c] for c in street_combos]) if street_combos else prev_b[:0]
                    continue
                rows = np.empty((n, n - 1))
                for p in range(n):
                    sel = v[prev_b == p]
                    rows[p] = _percentiles(sel, n) if sel.size >= n else thresholds[street]
                thresholds[street] = rows
                cur = np.empty(v.shape, dtype=np.int64)
                for p in range(n):
                    sel = prev_b == p
                    cur[sel] = np.searchsorted(rows[p], v[sel], side="right")
                prev_b = cur
        info = {
            "samples": samples,
            "seed": seed,
            "deals": int(sum(c.size for c in street_combos)),
            "seconds": round(time.perf_counter() - start, 3),
        }
        return cls(kind, metric, n, tuple(thresholds), river_classes, info)  # type: ignore[arg-type]

    # -- files -------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The content of ``abstraction.json``."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "name": self.name,
            "kind": self.kind,
            "metric": self.metric,
            "n_buckets": self.n_buckets,
            "thresholds": [t.tolist() for t in self.thresholds],
            "river_classes": None if self.river_classes is None else self.river_classes.tolist(),
            "build": self.build_info,
            "fingerprint": self.fingerprint,
        }

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write ``directory/abstraction.json`` atomically (the directory is created); returns its path."""
        d = Path(directory)
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"{d}: cannot create the abstraction directory ({exc.strerror})") from None
        path = d / ABSTRACTION_FILE
        _atomic_write(path, (json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n").encode())
        return path

    @classmethod
    def load(cls, directory: str | os.PathLike[str], n_buckets: Optional[int] = None) -> "Abstraction":
        """Read ``directory/abstraction.json``; ConfigError (one line) for a missing, corrupted or
        other-version file, or one with another bucket count than ``n_buckets`` (when given)."""
        path = Path(directory) / ABSTRACTION_FILE
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"{path}: no abstraction here (build one with `cbr abstraction build`)") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the abstraction file ({exc.strerror or exc})") from None
        except (UnicodeDecodeError, ValueError):
            raise ConfigError(f"{path}: not an abstraction file (not JSON)") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ConfigError(f"{path}: not an abstraction file")
        if data.get("version") != FORMAT_VERSION:
            raise ConfigError(
                f"{path}: abstraction format version {data.get('version')!r}, this version reads {FORMAT_VERSION}; rebuild it"
            )
        try:
            a = cls(
                data["kind"], data["metric"], data["n_buckets"], tuple(data["thresholds"]),
                data.get("river_classes"), dict(data.get("build") or {}),
            )
        except (KeyError, TypeError, ValueError) as exc:
            detail = str(exc) if isinstance(exc, ConfigError) else f"{type(exc).__name__}: {exc}"
            raise ConfigError(f"{path}: corrupted abstraction file ({detail})") from None
        if data.get("fingerprint") != a.fingerprint:
            raise ConfigError(f"{path}: corrupted abstraction file (the thresholds do not match their fingerprint)")
        if n_buckets is not None and a.n_buckets != n_buckets:
            raise ConfigError(f"{path}: abstraction has {a.n_buckets} buckets per street, expected {n_buckets}")
        return a

    def load_bucket_game(self, directory: str | os.PathLike[str]) -> BucketGame:
        """Read ``directory/bucket_game.npz`` and check it was estimated for this abstraction."""
        path = Path(directory) / BUCKET_GAME_FILE
        game = BucketGame.load(path)
        if game.n_buckets != self.n_buckets:
            raise ConfigError(f"{path}: bucket game has {game.n_buckets} buckets per street, the abstraction {self.n_buckets}")
        self.check_description(game.description, what=str(path))
        return game

    # -- the chance model ----------------------------------------------------------------

    def bucket_game(self, samples: int, seed: int, progress: Optional[Progress] = None) -> BucketGame:
        """Estimate the abstract game's chance model (:class:`BucketGame`) from ``samples`` random boards.

        On each board every live holding (1081) is bucketed street by street; the prior and
        transitions are frequencies of those sequences, and ``equity[i, j]`` is the mean of
        win + tie/2 over *every* pair of disjoint holdings on the board whose showdown classes
        are ``i`` and ``j``, then antisymmetrised, ``(E + 1 - E.T) / 2``. Classes: the river
        bucket, except for history bucketings, whose river buckets are conditioned on the
        past and so not ordered by strength: there a class is the unconditioned river
        percentile bucket (``river_classes``), and ``classes[q]`` is the frequency of each
        class among holdings with river sequence ``q``. Fallbacks for rows never seen in the
        sample: a transition row takes the street's overall bucket frequencies, a class row
        the overall class frequencies, an equity cell 0.5. Sampling error: boards are the
        independent unit; ``description["equity_max_se"]`` is the largest standard error
        of an equity cell, by batch means over 10 batches of boards (None below 10 boards).
        Costs about 80 ms per board.

        >>> g = Abstraction.build("uniform", "hs", n_buckets=2, samples=0).bucket_game(3, seed=1)
        >>> g.n_buckets, g.n_classes, float(g.equity[1, 0]) > 0.5
        (2, 2, True)
        """
        samples = _check_count(samples, "samples", 1, 10**7)
        seed = _check_count(seed, "seed", 0, 2**63 - 1)
        n = self.n_buckets
        c = self.n_classes
        prior = np.zeros(n)
        trans = [np.zeros((n**s, n)) for s in (1, 2, 3)]
        class_counts = np.zeros((n**4, c))
        batches = 10 if samples >= 10 else 1
        wins = np.zeros((batches, c, c))
        pairs = np.zeros((batches, c, c))
        boards = sample_boards(samples, seed)
        start = time.perf_counter()
        for k, board in enumerate(boards):
            combos, seqs, river_metric = self.board_sequences(tuple(int(x) for x in board))
            prior += np.bincount(seqs[:, 0], minlength=n)
            index = seqs[:, 0].copy()
            for s in (1, 2, 3):
                np.add.at(trans[s - 1], (index, seqs[:, s]), 1)
                index = index * n + seqs[:, s]
            cls_ = self.river_class(seqs, river_metric)
            np.add.at(class_counts, (index, cls_), 1)
            values = river_values(tuple(int(x) for x in board))[combos]
            w, p = _pair_outcomes(combos, values, cls_, c)
            wins[k % batches] += w
            pairs[k % batches] += p
            if progress is not None:
                progress(k + 1, samples)
        transitions = tuple(_normalise(t, _fallback(t)) for t in trans)
        if self.river_classes is None:
            classes = np.zeros((n**4, c))
            classes[np.arange(n**4), np.arange(n**4) % n] = 1.0
        else:
            classes = _normalise(class_counts, class_counts.sum(axis=0))
        equity = _equity(wins.sum(axis=0), pairs.sum(axis=0))
        max_se = None
        if batches > 1:
            per = np.stack([_equity(wins[b], pairs[b]) for b in range(batches)])
            max_se = float((per.std(axis=0, ddof=1) / math.sqrt(batches)).max())
        description = dict(self.description)
        description.update(
            game_samples=samples,
            game_seed=seed,
            game_deals=int(prior.sum()),
            equity_max_se=max_se,
            game_seconds=round(time.perf_counter() - start, 3),
        )
        return BucketGame(
            n_buckets=n,
            prior=prior / prior.sum(),
            transitions=transitions,  # type: ignore[arg-type]
            classes=classes,
            equity=equity,
            description=description,
        )


_PREFIXES = {0: (0,), 3: (0, 3), 4: (0, 3, 4), 5: (0, 3, 4, 5)}


def _clean(hole: Any, board: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Hole and board as card numbers (text memoised by the evaluator's facade)."""
    from evaluator_ext._facade import clean_hole_board

    return clean_hole_board(hole, board, (0, 3, 4, 5))


def _board5(board: Any) -> tuple[int, ...]:
    cards = parse_cards(board)
    if len(cards) != 5:
        raise ConfigError(f"a complete board has 5 cards, got {len(cards)}")
    check_distinct(cards)
    return cards


def _pair_outcomes(combos: np.ndarray, values: np.ndarray, classes: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum of win + tie/2 and count of every ordered pair of disjoint holdings, by (class, class)."""
    cards = _COMBO_CARDS[combos]
    lo, hi = cards[:, 0], cards[:, 1]
    clash = (lo[:, None] == lo[None, :]) | (lo[:, None] == hi[None, :]) | (hi[:, None] == lo[None, :]) | (
        hi[:, None] == hi[None, :])
    ok = ~clash
    outcome = (values[:, None] > values[None, :]).astype(float) + 0.5 * (values[:, None] == values[None, :])
    cell = (classes[:, None] * c + classes[None, :])[ok]
    w = np.bincount(cell, weights=outcome[ok], minlength=c * c).reshape(c, c)
    p = np.bincount(cell, minlength=c * c).reshape(c, c).astype(float)
    return w, p


def _equity(wins: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    raw = np.where(pairs > 0, wins / np.maximum(pairs, 1), 0.5)
    return (raw + 1.0 - raw.T) / 2.0


def _fallback(counts: np.ndarray) -> np.ndarray:
    return counts.sum(axis=0)


def _normalise(counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; empty rows take ``fallback`` (normalised; uniform if it is empty too)."""
    fb = np.asarray(fallback, dtype=float)
    fb = fb / fb.sum() if fb.sum() > 0 else np.full(fb.shape, 1.0 / fb.size)
    sums = counts.sum(axis=1, keepdims=True)
    return np.where(sums > 0, counts / np.maximum(sums, 1e-300), fb[None, :])


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"{path}: cannot write the abstraction ({exc.strerror})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
