"""The ``cfr`` bot: plays a trained CFR strategy in heads-up fixed-limit hold'em.

Spec: ``cfr`` plays the 2,000-bucket MCCFR strategy (imperfect-recall hand-strength-distribution
buckets, 169/2,000/2,000/2,000, :data:`DEFAULT_STRATEGY`, see :mod:`cbr.cfr.mccfr`) **with its
river re-solved** at decision time (below; issue 37: it beats the teacher re-solved head to
head). ``cfr:strategy=emd_2000`` is that strategy as trained, without re-solving;
``cfr:strategy=emd_256`` the teacher (169/256/256/256, :data:`SHIPPED_TEACHER`, whose play the
expert case base holds) as trained; ``cfr:strategy=h_hs2_4`` the older 4-bucket perfect-recall CFR+
strategy (:data:`cbr.cfr.strategy.SHIPPED_STRATEGY`); ``cfr:strategy=PATH`` a folder holding
``strategy.npz`` and ``abstraction.npz`` (MCCFR), or a CFR+ strategy file beside its
abstraction. At each decision the real history (:attr:`DecisionPoint.history`) is the tree
node, the cards are buckets (MCCFR: the current street's bucket, a table lookup; CFR+: the
bucket sequence of every street so far, indexed in mixed radix), and the triple is the
average strategy's row for that information set; :meth:`Policy.act` samples it with the
caller's seeded rng.

Re-solving the river (``resolve=river``; the default ``resolve=auto`` is ``river`` for plain
``cfr``, with no ``strategy=``, and ``off`` when ``strategy=`` is given; MCCFR strategies only): at a river
decision the bot re-solves the river subgame from the ranges its blueprint implies, with a
safe gadget, in C (:mod:`cbr.cfr.resolve`), once per hand, and plays the re-solved strategy
for its holding at every river decision of the hand. ``resolve-iters=N`` CFR+ iterations
(deterministic; default :data:`RESOLVE_ITERS`, at most :data:`RESOLVE_MAX_ITERS`),
``resolve-ms=MS`` a time budget that may stop it earlier (then not deterministic; 0: none),
``resolve-gadget=margin|cfrd|none`` (max-margin, CFR-D, or unsafe), ``resolve-mix=P`` (margin
only: with chance ``P`` the opponent enters with its blueprint range, as unsafe re-solving
assumes, else with the holding max-margin picks; 0, the default, is max-margin); each of these
without re-solving is a :class:`ConfigError`.

Positions: the tree's player 0 is the big blind, as in ``holdem.limit.2p``; on a table
with another layout the bot finds its role by the blind it posted. A history the tree
does not have (another raise cap) is an error, never a silent guess.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from cbr.errors import ConfigError, GameError, counted
from cbr.policies.base import Policy, Triple, legal_triple, legal_triples
from evaluator_ext.cards import combo_index

if TYPE_CHECKING:  # pragma: no cover
    from cbr.cfr.mccfr import ImperfectStrategy
    from cbr.cfr.resolve import Resolved
    from cbr.cfr.strategy import Strategy
    from cbr.game.decision import DecisionPoint

__all__ = ["CFRPolicy", "DEFAULT_STRATEGY", "RESOLVE_ITERS", "sequence_index", "SHIPPED_TEACHER",
           "resolve_strategy"]

#: CFR+ iterations of a river re-solve unless ``resolve-iters`` says otherwise (LBR 123.9 ± 23.2
#: mbb/g, seeds 53-56, against the blueprint's 239.3 ± 36.1, docs/abstraction-cfr.md).
RESOLVE_ITERS = 40
#: The most ``resolve-iters`` takes: about 1.5 s of CPU a solve (the C solve does not answer Ctrl-C
#: until it ends; ``resolve-ms`` bounds a solve by time instead).
RESOLVE_MAX_ITERS = 10_000


class _UnsetInt(int):
    """An option's default that tells "not given" from the same value given (an ``int``, so
    a spec reads the option as one)."""


class _UnsetFloat(float):
    """As :class:`_UnsetInt`, a ``float``."""


class _UnsetStr(str):
    """As :class:`_UnsetInt`, a ``str``."""


_RESOLVE_ITERS, _RESOLVE_MS, _RESOLVE_GADGET = _UnsetInt(RESOLVE_ITERS), _UnsetFloat(0.0), _UnsetStr("margin")
_RESOLVE_MIX = _UnsetFloat(0.0)

#: The teacher's folder (MCCFR, 169/256/256/256, issue 18): the strategy the expert case base's
#: cases were played by, the counter-strategies' abstraction, the adaptive bot's safe expert;
#: ``cfr:strategy=emd_256``.
SHIPPED_TEACHER = Path(__file__).resolve().parents[2] / "casebases" / "cfr" / "emd_256"
#: The folder of the strategy ``cfr`` plays with no options, its river re-solved (the 2,000-bucket
#: MCCFR run, issue 37; ``cfr:strategy=emd_2000`` as trained).
DEFAULT_STRATEGY = SHIPPED_TEACHER.parent / "emd_2000"


def resolve_strategy(text: str) -> Path:
    """Where a ``strategy=`` option points: a path, or a shipped name under ``casebases/cfr/``
    (``emd_256``: the MCCFR teacher's folder; ``emd_2000``: the 2,000-bucket MCCFR run's; ``h_hs2_4``:
    the CFR+ file). A folder holding one CFR+
    strategy file (``cfr.GAME.npz``, what ``cbr train cfr -a FOLDER`` writes) means that file.

    >>> resolve_strategy("h_hs2_4").name
    'cfr.holdem.limit.2p.npz'
    """
    from cbr.cfr.strategy import SHIPPED_STRATEGY

    if not text:
        return DEFAULT_STRATEGY
    path = Path(text)
    if path.is_dir() and not (path / "strategy.npz").exists():
        trained = sorted(p for p in path.glob("cfr.*.npz") if not p.name.endswith(".ckpt.npz"))  # `cbr train cfr -a FOLDER`
        if len(trained) == 1:
            return trained[0]
        if trained:
            raise ConfigError(f"{text}: {len(trained)} CFR strategies here ({', '.join(p.name for p in trained)}); "
                              f"name one: strategy={path / trained[0].name}")
    if path.exists():
        return path
    shipped = SHIPPED_TEACHER.parent / text
    if "/" not in text and shipped.is_dir():
        return shipped if (shipped / "strategy.npz").exists() else shipped / SHIPPED_STRATEGY.name
    raise ConfigError(f"{text}: no such strategy (a path, or one of the shipped "
                      f"{', '.join(sorted(p.name for p in SHIPPED_TEACHER.parent.iterdir() if p.is_dir()))})")


def sequence_index(buckets: tuple[int, ...] | list[int], n_buckets: int) -> int:
    """Mixed-radix index of a bucket sequence (``b0 * N**s + .. + bs``).

    >>> sequence_index((1, 0, 2), 3)
    11
    """
    index = 0
    for b in buckets:
        b = int(b)
        if not 0 <= b < n_buckets:
            raise ConfigError(f"bucket {b} is out of 0..{n_buckets - 1}")
        index = index * n_buckets + b
    return index


class CFRPolicy(Policy):
    """Plays the average strategy of a CFR run (see the module docstring)."""

    name = "cfr"
    #: One line on each option (``cbr plugins list``; :func:`~cbr.policies.spec.policy_option_help`).
    OPTION_HELP = {
        "strategy": "a shipped strategy (emd_256, emd_2000, h_hs2_4, counter_*) or a folder or file "
                    "(default: emd_2000; omit the option)",
        "resolve": "re-solve the river at decision time: river, off, or auto (river for plain cfr, with no strategy given)",
        "resolve_iters": "CFR+ iterations of each river re-solve",
        "resolve_ms": "a time budget in ms that may stop a re-solve earlier (0: none; then not deterministic)",
        "resolve_gadget": "the re-solve's safety gadget: margin (max-margin), cfrd (CFR-D) or none (unsafe)",
        "resolve_mix": "margin only: the chance the opponent enters with its blueprint range (0: max-margin, 1: unsafe)",
    }
    #: The game it plays: heads-up fixed limit only (an adaptive bot never hands it another table).
    heads_up_only = True

    def __init__(self, *, strategy: str = "", resolve: str = "auto", resolve_iters: int = _RESOLVE_ITERS,
                 resolve_ms: float = _RESOLVE_MS, resolve_gadget: str = _RESOLVE_GADGET,
                 resolve_mix: float = _RESOLVE_MIX, seed: Optional[int] = None) -> None:
        super().__init__(seed=seed)
        if strategy:  # a name or path that resolves to nothing is a bad input file, told now (read on first use)
            from cbr.policies.spec import file_option_error

            try:
                resolve_strategy(strategy)
            except ConfigError as exc:
                raise file_option_error("strategy", exc) from None
        if resolve not in ("", "auto", "off", "river"):
            raise ConfigError(f"resolve is 'river', 'off' or 'auto' (river for plain cfr, with no strategy given; "
                              f"off for any strategy=, emd_2000 too), not {resolve!r}")
        self.resolve = resolve == "river" or (resolve in ("", "auto") and not strategy)
        given = [name for name, value, unset in (("resolve-iters", resolve_iters, _RESOLVE_ITERS),
                                                  ("resolve-ms", resolve_ms, _RESOLVE_MS),
                                                  ("resolve-gadget", resolve_gadget, _RESOLVE_GADGET),
                                                  ("resolve-mix", resolve_mix, _RESOLVE_MIX))
                 if value is not unset]
        if given and not self.resolve:
            raise ConfigError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} re-solving: add resolve=river"
                              + (" (a strategy= turns the default re-solving off)" if strategy else ""))
        if self.resolve:
            from cbr.cfr.resolve import GADGETS

            if resolve_gadget not in GADGETS:
                raise ConfigError(f"resolve-gadget is margin (max-margin), cfrd (CFR-D) or none (unsafe), "
                                  f"not {resolve_gadget!r}")
            if not 1 <= resolve_iters <= RESOLVE_MAX_ITERS:
                raise ConfigError(f"resolve-iters must be between 1 and {RESOLVE_MAX_ITERS:,}, got {int(resolve_iters)}")
            if not resolve_ms >= 0:
                raise ConfigError(f"resolve-ms must be >= 0, got {float(resolve_ms)}")
            if not 0 <= resolve_mix <= 1:
                raise ConfigError(f"resolve-mix is a chance from 0 to 1, got {float(resolve_mix)}")
            if resolve_mix > 0 and resolve_gadget != "margin":
                raise ConfigError(f"resolve-mix mixes the max-margin gadget with the blueprint range; "
                                  f"resolve-gadget={resolve_gadget} takes no mix")
            if not resolve_strategy(strategy).is_dir():
                raise ConfigError("resolve=river re-solves from an MCCFR strategy (a folder, such as emd_2000 "
                                  f"or emd_256), not the CFR+ strategy {strategy!r}")
        self.resolve_iters, self.resolve_ms = int(resolve_iters), float(resolve_ms)
        self.resolve_gadget, self.resolve_mix = str(resolve_gadget), float(resolve_mix)
        self._resolved: "Optional[tuple[tuple, dict[int, Resolved]]]" = None
        self.strategy = strategy
        self._strategy: "Optional[Strategy | ImperfectStrategy]" = None
        self._cache: tuple[tuple, tuple[int, ...]] | None = None
        self._boards: dict[tuple[int, ...], np.ndarray] = {}

    def _load(self) -> "Strategy | ImperfectStrategy":
        if self._strategy is None:
            try:
                self._strategy = self._read()
            except ConfigError as exc:  # the file strategy= names is not one this bot can play
                from cbr.policies.spec import file_option_error

                raise (file_option_error("strategy", exc, self) if self.strategy else exc) from None
        return self._strategy

    def _read(self) -> "Strategy | ImperfectStrategy":
        from cbr.cfr.strategy import load_strategy

        path = resolve_strategy(self.strategy)
        if path.is_dir():
            from cbr.cfr.mccfr import load_imperfect_strategy

            loaded = load_imperfect_strategy(path)
        else:
            loaded = load_strategy(path)
        if loaded.tree.game.betting != "limit":
            raise ConfigError(f"{path}: the cfr bot plays fixed-limit strategies; this one is for {loaded.tree.name}")
        return loaded

    @property
    def imperfect(self) -> bool:
        """Whether the strategy is an MCCFR one (imperfect recall, a bucket per street)."""
        from cbr.cfr.mccfr import ImperfectStrategy

        return isinstance(self._load(), ImperfectStrategy)

    def _street_buckets(self, board: tuple[int, ...]) -> np.ndarray:
        """Every combo's bucket on ``board`` (computed once per board: a hand has four)."""
        key = tuple(int(c) for c in board)
        got = self._boards.get(key)
        if got is None:
            if len(self._boards) > 64:
                self._boards.clear()
            got = self._boards[key] = self._load().abstraction.street_buckets(key)
        return got

    def _buckets(self, hole: tuple[int, ...], board: tuple[int, ...]) -> tuple[int, ...]:
        key = (tuple(hole), tuple(board))
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        seq = tuple(int(b) for b in self._load().abstraction.bucket_sequence(hole, board))
        self._cache = (key, seq)
        return seq

    def _node(self, dp: "DecisionPoint") -> int:
        """The betting tree's node of ``dp`` (checked: the game, the history, who acts)."""
        tree = self._load().tree
        if dp.game.n_players != 2 or dp.game.betting != "limit":
            raise GameError(f"the cfr bot plays heads-up fixed limit, not {dp.game.name!r}")
        node = tree.node_of(dp.history) if tree.has(dp.history) else None
        if node is None:
            raise GameError(f"history {dp.history!r} is not in the {tree.name} betting tree "
                            f"(raise caps {tree.game.raise_cap}, this table {dp.game.raise_cap})")
        blinds = dp.game.blinds
        role = 0 if blinds[dp.position] == max(blinds) else 1
        if int(tree.player[node]) != role:
            raise GameError(f"history {dp.history!r}: the tree has the other player to act")
        return int(node)

    def triple(self, dp: "DecisionPoint") -> Triple:
        s = self._load()
        if dp.hole is None:
            raise GameError("the cfr bot needs its hole cards")
        node = self._node(dp)
        if self.resolve and dp.street == 3:
            solved = self._resolve(dp, node)
            if set(dp.hole) & set(dp.board):
                raise GameError(f"hole {dp.hole} shares a card with the board {dp.board}")
            row = solved.rows(node)[combo_index(int(dp.hole[0]), int(dp.hole[1]))]
            probs = {a: float(p) for a, p in zip(s.tree.actions(node), row)}
        elif self.imperfect:  # the current street's bucket: a lookup in the board's buckets
            from cbr.abstraction.distribution import NO_BUCKET

            bucket = int(self._street_buckets(dp.board)[combo_index(int(dp.hole[0]), int(dp.hole[1]))])
            if bucket == NO_BUCKET:
                raise GameError(f"hole {dp.hole} shares a card with the board {dp.board}")
            probs = {a: float(p) for a, p in zip(s.tree.actions(node), s.row(node, bucket))}
        else:
            seq = self._buckets(dp.hole, dp.board)
            if len(seq) != dp.street + 1:
                raise ConfigError(f"abstraction gave {counted(len(seq), 'bucket')} on street {dp.street}")
            probs = s.action_probs(node, sequence_index(seq, s.n_buckets))
        return legal_triple((probs.get("f", 0.0), probs.get("c", 0.0), probs.get("r", 0.0)), dp.legal)

    def triples(self, dp: "DecisionPoint", holes: Sequence[tuple[int, int]]) -> np.ndarray:
        """The strategy's rows for many holdings: their bucket sequences at once
        (:meth:`~cbr.abstraction.Abstraction.bucket_sequences`), then one lookup each."""
        s = self._load()
        node = self._node(dp)
        if self.resolve and dp.street == 3:
            from cbr.abstraction.distribution import NO_BUCKET

            if (s.abstraction.holding_buckets(dp.board, holes, self._street_buckets(dp.board)) == NO_BUCKET).any():
                raise GameError(f"a holding shares a card with the board {dp.board}")
            idx = [combo_index(int(a), int(b)) for a, b in holes]
            return legal_triples(self._fcr(node, self._resolve(dp, node).rows(node)[idx]), dp.legal)
        if self.imperfect:
            from cbr.abstraction.distribution import NO_BUCKET

            buckets = s.abstraction.holding_buckets(dp.board, holes, self._street_buckets(dp.board)).astype(np.int64)
            if (buckets == NO_BUCKET).any():
                raise GameError(f"a holding shares a card with the board {dp.board}")
            k = int(s.tree.n_children[node])
            return legal_triples(self._fcr(node, s.probs[int(s.offset[node]) + buckets[:, None] * k + np.arange(k)]),
                                 dp.legal)
        idx = [combo_index(int(a), int(b)) for a, b in holes]
        seqs = s.abstraction.bucket_sequences(idx, dp.board)
        flat = np.zeros(len(idx), dtype=np.int64)
        for street in range(seqs.shape[1]):
            flat = flat * s.n_buckets + seqs[:, street]
        k = int(s.tree.n_children[node])
        rows = s.probs[int(s.offset[node]) + flat[:, None] * k + np.arange(k)]
        return legal_triples(self._fcr(node, rows), dp.legal)

    def _fcr(self, node: int, rows: np.ndarray) -> np.ndarray:
        """Rows of the node's action probabilities as (fold, call, raise) columns."""
        tree = self._load().tree
        out = np.zeros((rows.shape[0], 3))
        for j, child in enumerate(tree.children(node)):
            out[:, "fcr".index(tree.edge[child])] = rows[:, j]
        return out

    def _resolve(self, dp: "DecisionPoint", node: int) -> "Resolved":
        """The re-solved river of this hand (solved at its first river decision, then kept:
        the solution does not depend on our cards, and a later river decision of the hand
        plays the same solution)."""
        from cbr.cfr.resolve import resolve_river, river_prefix

        key = (river_prefix(dp.history), tuple(int(c) for c in dp.board))
        role = int(self._load().tree.player[node])
        if self._resolved is None or self._resolved[0] != key:
            self._resolved = (key, {})
        solved = self._resolved[1].get(role)
        if solved is None:  # each seat's own solve (a bot plays one seat; a harness may ask both)
            solved = self._resolved[1][role] = resolve_river(
                self._load(), dp.history, dp.board, role, iterations=self.resolve_iters, budget_ms=self.resolve_ms,
                gadget=self.resolve_gadget, mix=self.resolve_mix, buckets=self._boards)
        return solved

    def reset(self) -> None:
        self._cache = None
        self._resolved = None
