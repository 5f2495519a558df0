"""Policies (bots): a decision point in, a probability triple ``(fold, call, raise)`` out.

Built-ins register under the ``cbr.policies`` entry points (``random``, ``call``,
``raise``, ``hs``, ``ehs``, ``poki``, ``lag``); :func:`make_policy` builds one by name.

>>> make_policy("call").name
'call'
"""
from __future__ import annotations

from typing import Any

from cbr.policies.base import Policy, Triple, legal_triple, sample_action


def make_policy(name: str, **params: Any) -> Policy:
    """A policy from its plugin name (``cbr.plugins.load("cbr.policies", name)``).

    Raises :class:`~cbr.errors.PluginError` listing the installed names when unknown.
    """
    from cbr.plugins import load

    factory = load("cbr.policies", name)
    return factory(**params)


__all__ = ["Policy", "Triple", "legal_triple", "sample_action", "make_policy"]
