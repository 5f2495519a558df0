"""The plugins a case base needs: its feature set (``cbr.features``) and the local similarity
measures its similarity file names (``cbr.similarity``), when they are not built in.

A case base built with another package's plugin cannot be used where that package is not
installed: :func:`missing_plugins` lists what is missing (or installed but failing to load),
for ``cbr casebase verify``; :func:`plugin_needed` words it for the error of a command that
opens such a case base (``cbr query``, ``cbr match``...).

>>> plugin_needed("cb", MissingPlugin("cbr.features", "pot_call", "feature set", "manifest.json"))
"cb: the case base needs the feature set 'pot_call', a cbr.features plugin that is not installed: install the package that provides it; cbr plugins list shows what is installed"
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from cbr import plugins
from cbr.errors import PluginError
from cbr.game.gamedef import STREETS
from cbr.store.manifest import MANIFEST, Manifest

__all__ = ["MissingPlugin", "missing_plugins", "plugin_needed", "INSTALL"]

#: What to do about a plugin that is not installed.
INSTALL = "install the package that provides it; cbr plugins list shows what is installed"


@dataclass(frozen=True)
class MissingPlugin:
    """A plugin the case base needs that cannot be used: ``group`` and ``name`` of the plugin,
    ``what`` it is (``feature set``, ``similarity measure``), the ``file`` of the case base
    that names it, where it is used first (``used``: a street's feature, for a measure) and,
    for a plugin installed that fails to load, why (``error``; None: not installed)."""

    group: str
    name: str
    what: str
    file: str
    used: str = ""
    error: str | None = None

    @property
    def problem(self) -> str:
        """``needs the feature set 'x', a cbr.features plugin that is not installed``."""
        used = f" ({self.used})" if self.used else ""
        if self.error is None:
            return f"needs the {self.what} {self.name!r}{used}, a {self.group} plugin that is not installed"
        return f"needs the {self.what} {self.name!r}{used}, whose {self.group} plugin fails to load: {self.error}"

    @property
    def fix(self) -> str:
        return INSTALL if self.error is None else "reinstall or fix the package that provides it; see cbr plugins list"


def plugin_needed(root: str | os.PathLike[str], missing: MissingPlugin) -> str:
    """The one line of the error of a command that cannot use the case base at ``root``."""
    return f"{root}: the case base {missing.problem}: {missing.fix}"


def _check(group: str, name: str, what: str, file: str, used: str = "") -> MissingPlugin | None:
    if name not in plugins.available(group):
        return MissingPlugin(group, name, what, file, used)
    try:
        plugins.load(group, name)
    except PluginError as exc:
        return MissingPlugin(group, name, what, file, used, error=str(exc))
    return None


def missing_plugins(root: str | os.PathLike[str], m: Manifest) -> list[MissingPlugin]:
    """The plugins the case base at ``root`` (manifest ``m``) needs and cannot use, in the order
    its files name them; empty when it needs none or all are there. A similarity file that
    cannot be read or parsed names none here (verify reports it as damaged)."""
    from cbr.similarity.measures import BUILTIN_MEASURES

    out: list[MissingPlugin] = []
    if m.feature_set not in plugins.BUILTIN_FEATURE_SETS:
        found = _check("cbr.features", m.feature_set, "feature set", MANIFEST)
        if found is not None:
            out.append(found)
    if not m.similarity:
        return out
    try:
        data = tomllib.loads((Path(root) / m.similarity).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return out
    seen: set[str] = set()
    for s in STREETS:
        rows = data.get(s)
        for row in rows if isinstance(rows, list) else []:
            name = row.get("measure") if isinstance(row, dict) else None
            if not isinstance(name, str) or name in BUILTIN_MEASURES or name in seen:
                continue
            seen.add(name)
            found = _check("cbr.similarity", name, "similarity measure", m.similarity,
                           f"for {row.get('feature', '?')!s} on the {s}")
            if found is not None:
                out.append(found)
    return out
