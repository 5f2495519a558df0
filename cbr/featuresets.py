"""Feature sets by name: the ``cbr.features`` plugins, loaded through the plugin store.

This sits above :mod:`features` (which holds the feature sets and imports nothing of
``cbr`` but ``cbr.game`` and ``cbr.errors``) and beside :mod:`cbr.plugins`: loading by name
needs the plugin store, which belongs to the rest of ``cbr`` in DESIGN.md's layering
(``evaluator_ext`` <- ``cbr.game`` <- ``features`` <- rest of ``cbr`` <- ``cli``), so
it cannot live in ``features/`` without that package importing upwards.

>>> load_feature_set("casper").name
'casper'
"""
from __future__ import annotations

from typing import Any

from cbr.errors import PluginError
from cbr.plugins import load

__all__ = ["load_feature_set"]


def load_feature_set(name: str) -> Any:
    """A feature-set instance from its ``cbr.features`` plugin name.

    The built-in ``casper`` also works from a checkout whose install metadata predates
    the entry point (``pip install -e .`` refreshes it). Other unknown names raise
    :class:`~cbr.errors.PluginError` naming the plugins there are.

    >>> load_feature_set("casper").feature_names(0)[0]
    'players_dealt'
    """
    try:
        return load("cbr.features", name)()
    except PluginError:
        if name != "casper":
            raise
        from features.casper import CasperFeatures

        return CasperFeatures()
