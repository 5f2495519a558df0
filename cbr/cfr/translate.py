"""Mapping a real hand's history onto a betting tree, with action translation of
off-tree no-limit bets.

Fixed-limit histories are in the tree as they are. A no-limit raise of a size the tree
does not have is *translated* to one of the tree's raises of that node with the
pseudo-harmonic mapping of Ganzfried and Sandholm ("Action Translation in Extensive-Form
Games with Large Action Spaces: Axioms, Paradoxes, and the Pseudo-Harmonic Mapping",
IJCAI 2013): bets are measured as fractions of the pot (after calling), and a bet ``x``
between the tree's neighbouring sizes ``A < x < B`` maps to ``A`` with probability

    f(x) = (B - x) (1 + A) / ((B - A) (1 + x))

and to ``B`` otherwise. Below the smallest tree raise it maps to the smallest, above the
largest (all-in) to the largest. The draw uses the caller's ``random.Random`` so that a
seeded bot is reproducible.

>>> pseudo_harmonic(1.0, 0.5, 2.0)     # a pot bet between half pot and 2x pot
0.5
>>> pseudo_harmonic(0.5, 0.5, 2.0), pseudo_harmonic(2.0, 0.5, 2.0)
(1.0, 0.0)
>>> import random
>>> from cbr.cfr.tree import build_tree
>>> t = build_tree("nolimit.fcpa")
>>> t.history(map_history(t, "r250", random.Random(0)))   # 250 is not in the tree: -> pot (r300)
'r300'
>>> t.history(map_history(t, "r300c/r600", random.Random(0)))   # a half-pot flop bet -> the pot bet
'r300c/r900'
"""
from __future__ import annotations

import random
import re

from cbr.cfr.tree import KIND_CHANCE, KIND_DECISION, BettingTree
from cbr.errors import ConfigError

__all__ = ["pseudo_harmonic", "map_history", "TranslationError"]

_TOKEN = re.compile(r"f|c|r(\d+(?:\.\d+)?)?|/")


class TranslationError(ConfigError):
    """A real history that cannot be followed in the tree (the message says where)."""


def pseudo_harmonic(x: float, a: float, b: float) -> float:
    """Probability of mapping a bet of ``x`` pots to the smaller tree size ``a`` (not to ``b``).

    Requires ``0 <= a < b``; ``x`` is clipped to ``[a, b]``.

    >>> round(pseudo_harmonic(0.75, 0.5, 1.0), 4)   # halfway between half pot and pot
    0.4286
    """
    if not (0.0 <= a < b):
        raise ConfigError(f"pseudo-harmonic mapping needs 0 <= a < b, got a={a}, b={b}")
    x = min(max(float(x), a), b)
    return (b - x) * (1.0 + a) / ((b - a) * (1.0 + x))


def _fraction(level: float, target: float, totals: tuple[float, float], actor: int) -> float:
    """A raise to hand total ``target`` as a fraction of the pot after calling."""
    to_call = max(totals) - totals[actor]
    pot = totals[0] + totals[1] + to_call
    return (target - max(totals)) / pot if pot > 0 else 0.0


def map_history(tree: BettingTree, history: str, rng: random.Random) -> int:
    """The tree node a real history (the engine's notation) maps to.

    Limit trees take the history as it is. In no-limit, a raise to an amount the tree
    lacks is translated (module docstring); later amounts are read relative to the real
    pot. Raises :class:`TranslationError` when the history leaves the tree (e.g. a real
    raise after the tree's all-in).
    """
    if tree.game.betting == "limit" or tree.has(history):
        if tree.has(history):
            return tree.node_of(history)
        raise TranslationError(f"history {history!r} is not in the {tree.name} betting tree")
    node = 0
    real = [float(b) for b in tree.game.blinds]
    pos = 0
    while pos < len(history):
        m = _TOKEN.match(history, pos)
        if not m:
            raise TranslationError(f"cannot read history {history!r} at character {pos}")
        tok = m.group(0)
        pos = m.end()
        if tok == "/":
            if tree.kind[node] != KIND_CHANCE:
                raise TranslationError(f"history {history!r}: the tree's street has not ended at {tok!r}")
            node = tree.children(node)[0]
            continue
        if tree.kind[node] != KIND_DECISION:
            raise TranslationError(f"history {history!r} goes on after the tree's hand ended ({tree.history(node)!r})")
        actor = int(tree.player[node])
        kids = tree.children(node)
        edges = [tree.edge[c] for c in kids]
        if tok in ("f", "c"):
            if tok not in edges:
                raise TranslationError(f"history {history!r}: {tok!r} is not possible at {tree.history(node)!r}")
            if tok == "c":
                real[actor] = max(real)
            node = kids[edges.index(tok)]
            continue
        if m.group(1) is None:
            raise TranslationError(f"history {history!r}: a no-limit raise needs its amount (r<total>)")
        target = float(m.group(1))
        raises = [c for c in kids if tree.edge[c] in ("p", "a")]
        if not raises:
            raise TranslationError(f"history {history!r}: no raise is possible at {tree.history(node)!r}")
        here = (float(tree.total[node][0]), float(tree.total[node][1]))
        sizes = [_fraction(0, float(tree.total[c][actor]), here, actor) for c in raises]
        x = _fraction(0, target, (real[0], real[1]), actor)
        real[actor] = target
        if x <= sizes[0]:
            node = raises[0]
        elif x >= sizes[-1]:
            node = raises[-1]
        else:
            i = next(k for k in range(1, len(sizes)) if x <= sizes[k])
            node = raises[i - 1] if rng.random() < pseudo_harmonic(x, sizes[i - 1], sizes[i]) else raises[i]
    return node
