"""The plugin store: named components found through Python entry points.

Groups: ``cbr.features``, ``cbr.similarity``, ``cbr.parsers``, ``cbr.policies``,
``cbr.models``, ``cbr.backends``. The built-ins register through the same entry points
(pyproject.toml) a third-party package would use, and win over another package's plugin of
the same name (which is listed as not used). A plugin that fails to load is reported by name
and never stops the others from working.

Feature sets are loaded here by name (:func:`load_feature_set`), not in ``features/``:
that package sits below the plugin store in the layering and never imports upwards.

>>> sorted(available("cbr.parsers"))[:2]
['acpc', 'irc']
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from cbr.errors import CBRError, ConfigError, PluginError, PluginFailedError, counted

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

GROUPS = ("cbr.features", "cbr.similarity", "cbr.parsers", "cbr.policies", "cbr.models", "cbr.backends")


@dataclass(frozen=True)
class PluginInfo:
    """One entry point: where it comes from, and whether it loads."""

    group: str
    name: str
    target: str
    distribution: str
    error: str | None = None
    #: False for a plugin another package's of the same name stands in for (``error`` says which).
    used: bool = True

    @property
    def ok(self) -> bool:
        return self.error is None


#: The engine's own distribution: its plugins win over another package's of the same name.
OWN_DISTRIBUTION = "cbr-holdem"


def _distribution(ep: EntryPoint) -> str:
    return ep.dist.name if getattr(ep, "dist", None) is not None else "?"


def _entry_points(group: str) -> dict[str, EntryPoint]:
    """The entry point used for each name of ``group``: the engine's own when another package
    registers the same name (:func:`_shadowed` lists the others), else the first found."""
    return _scan(group)[0]


def _shadowed(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` not used because another has their name."""
    return _scan(group)[1]


def _scan(group: str) -> tuple[dict[str, EntryPoint], list[EntryPoint]]:
    if group not in GROUPS:
        raise PluginError(f"unknown plugin group {group!r}; groups: {', '.join(GROUPS)}")
    from importlib.metadata import entry_points  # ~20 ms: only when a plugin is looked up

    found: dict[str, EntryPoint] = {}
    unused: list[EntryPoint] = []
    for ep in entry_points(group=group):
        have = found.get(ep.name)
        if have is None:
            found[ep.name] = ep
        elif _distribution(ep) == OWN_DISTRIBUTION and _distribution(have) != OWN_DISTRIBUTION:
            unused.append(have)
            found[ep.name] = ep
        else:
            unused.append(ep)
    return found, unused


@lru_cache(maxsize=None)
def _load(group: str, name: str) -> Any:
    eps = _entry_points(group)
    if name not in eps:
        ok, broken = usable(group)
        known = ", ".join(ok) or "none installed"
        raise PluginError(f"no plugin {name!r} in {group} (installed: {known}){broken_note(group, broken)}")
    try:
        return eps[name].load()
    except MemoryError:  # the process ran out, not the plugin: not a broken plugin to leave out
        raise
    except Exception as exc:  # a broken third-party plugin must not take the rest down
        raise PluginError(f"plugin {name!r} in {group} ({eps[name].value}) failed to load: "
                          f"{failure_text(exc)}") from exc


def load(group: str, name: str) -> Any:
    """The object a plugin names (a class or a function). Raises :class:`PluginError`; a
    ``MemoryError`` while it is imported passes as it is (it is not remembered: a later call
    tries again)."""
    return _load(group, name)


@lru_cache(maxsize=None)
def origin(group: str, name: str) -> tuple[str, str]:
    """The distribution (package) of the plugin ``name`` of ``group`` in use and its target
    (``module:object``), found once (as :func:`load` loads once; :func:`clear_cache` forgets).
    Raises :class:`PluginError` for a name not installed.

    >>> origin("cbr.policies", "call")
    ('cbr-holdem', 'cbr.policies.baseline:AlwaysCallPolicy')
    """
    eps = _entry_points(group)
    if name not in eps:
        raise PluginError(f"no plugin {name!r} in {group} (installed: {', '.join(sorted(eps)) or 'none'})")
    return _distribution(eps[name]), eps[name].value


def is_own(group: str, name: str) -> bool:
    """Whether the plugin ``name`` of ``group`` in use is the engine's own (its errors are the
    engine's bugs), not another package's.

    >>> is_own("cbr.policies", "call")
    True
    """
    return origin(group, name)[0] == OWN_DISTRIBUTION


def resolve(group: str, name: str, builtins: Mapping[str, Any], what: str) -> Any:
    """A built-in by ``name`` (no entry-point lookup), else the plugin of ``group``.

    Raises :class:`ConfigError` naming ``what`` was asked for: for a name that is neither,
    with every name there is (the built-ins and the installed plugins, each once, sorted: the
    built-ins register as plugins too); for an installed plugin that fails to load, with why.

    >>> resolve("cbr.backends", "brute", {"brute": list}, "retrieval backend")
    <class 'list'>
    >>> resolve("cbr.similarity", "cubic", {"linear": list}, "similarity measure")
    Traceback (most recent call last):
    ...
    cbr.errors.ConfigError: unknown similarity measure 'cubic' (known: equity, exact, exp, linear)
    """
    if name in builtins:
        return builtins[name]
    installed = _entry_points(group)
    if name not in installed:
        ok, broken = usable(group)
        known = ", ".join(sorted(set(builtins) | set(ok)))
        raise ConfigError(f"unknown {what} {name!r} (known: {known}){broken_note(group, broken)}")
    try:
        return load(group, name)
    except PluginError as exc:
        raise ConfigError(f"{what} {name!r}: {exc}") from None


def available(group: str) -> list[str]:
    """Names of the plugins installed in ``group`` (loaded or not)."""
    return sorted(_entry_points(group))


def usable(group: str) -> tuple[list[str], list[str]]:
    """The plugins of ``group`` that load (sorted) and those installed that fail to (sorted):
    what an unknown name's message offers, and what it mentions apart (each is loaded once;
    :func:`load` keeps it)."""
    ok: list[str] = []
    broken: list[str] = []
    for name in available(group):
        try:
            load(group, name)
        except PluginError:
            broken.append(name)
        else:
            ok.append(name)
    return ok, broken


def broken_note(group: str, broken: list[str]) -> str:
    """The words an unknown name's message adds for the plugins that fail to load ('' for none).

    >>> broken_note("cbr.policies", ["x"])
    '; 1 plugin failed to load: cbr.policies:x (see cbr plugins list)'
    """
    if not broken:
        return ""
    return (f"; {counted(len(broken), 'plugin')} failed to load: "
            f"{', '.join(f'{group}:{n}' for n in broken)} (see cbr plugins list)")


def guarded_call(func: Any, failed: Any) -> Any:
    """``func`` wrapped so that what another package's code raises becomes ``failed(exc)`` (a
    :class:`~cbr.errors.PluginFailedError` naming the plugin), raised from it; the engine's own
    errors (``CBRError``) and running out of memory pass as they are. The one guard of plugin
    bots (:mod:`cbr.policies.spec`) and feature sets (:class:`GuardedFeatureSet`).

    >>> guarded_call(int, lambda exc: PluginFailedError(f"x failed: {exc}"))("7")
    7
    """
    import functools

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (CBRError, MemoryError):
            raise
        except Exception as exc:
            raise failed(exc) from exc
    return call


def made_parser(name: str) -> Any:
    """The parser plugin ``name``, made (a class is called, an object taken as it is), as format
    detection makes it (:mod:`cbr.logs.detect` keeps one of each). Another package's parser that
    raises as it is made is a :class:`~cbr.errors.PluginFailedError` naming it.

    >>> made_parser("acpc").name
    'acpc'
    """
    obj = load("cbr.parsers", name)
    try:
        return obj() if isinstance(obj, type) else obj
    except (CBRError, MemoryError):
        raise
    except Exception as exc:
        label = plugin_label("cbr.parsers", name, "log format")
        if label is None:
            raise
        raise PluginFailedError(f"{label} failed when it was made: {failure_text(exc)}") from exc


def describe(groups: tuple[str, ...] = GROUPS) -> list[PluginInfo]:
    """Every plugin of the groups, each tried once (loaded; a parser made, as format detection
    makes it); failures carry their error."""
    out: list[PluginInfo] = []
    for group in groups:
        used = _entry_points(group)
        for name, ep in sorted(used.items()):
            error = None
            try:
                load(group, name)
                if group == "cbr.parsers":  # a parser is made to be used: one that cannot be is failed too
                    made_parser(name)
            except PluginError as exc:
                error = str(exc)
            out.append(PluginInfo(group, name, ep.value, _distribution(ep), error))
        for ep in _shadowed(group):  # listed, with why they are not used
            winner = used[ep.name]
            out.append(PluginInfo(group, ep.name, ep.value, _distribution(ep),
                                  f"not used: {_distribution(winner)}'s plugin {ep.name!r} in {group} "
                                  f"({winner.value}) has the same name; rename this one", used=False))
    return out


#: The feature sets that ship with the engine, as their entry points name them: resolved
#: without scanning the installed packages' entry points (about 20 ms of a one-shot
#: ``cbr query``), the way :func:`resolve` takes built-in backends.
BUILTIN_FEATURE_SETS = {
    "casper": "features.casper:CasperFeatures",
    "casper-opp": "features.casper_opp:CasperOpponentFeatures",
    "sartre": "features.sartre:SartreFeatures",
}


def load_feature_set(name: str) -> Any:
    """A feature-set instance from its ``cbr.features`` plugin name: a built-in one
    (:data:`BUILTIN_FEATURE_SETS`) directly, another through its entry point. Unknown names
    raise :class:`~cbr.errors.PluginError` naming the plugins there are. Another package's
    feature set comes as a :class:`GuardedFeatureSet`: an error it raises as it is made or
    used is a :class:`~cbr.errors.PluginFailedError` naming it.

    >>> load_feature_set("casper").feature_names(0)[0]
    'players_dealt'
    """
    target = BUILTIN_FEATURE_SETS.get(name)
    if target is None:
        factory = load("cbr.features", name)
        label = plugin_label("cbr.features", name, "feature set")
        if label is None:
            return factory()
        try:
            made = factory()
        except (CBRError, MemoryError):
            raise
        except Exception as exc:
            raise PluginFailedError(f"{label} failed when it was made: {failure_text(exc)}") from exc
        return GuardedFeatureSet(made, label)
    module, _, attr = target.partition(":")
    return getattr(import_module(module), attr)()


def plugin_label(group: str, name: str, what: str) -> str | None:
    """How an error names another package's plugin ``name`` of ``group`` (``what``: the kind
    of thing it is, as the user knows it): ``what 'name' (plugin 'name' in group: target,
    package P)``; None for the engine's own plugins (their errors are the engine's bugs).

    >>> plugin_label("cbr.parsers", "acpc", "log format") is None
    True
    """
    distribution, target = origin(group, name)
    if distribution == OWN_DISTRIBUTION:
        return None
    return f"{what} {name!r} (plugin {name!r} in {group}: {target}, package {distribution})"


def failure_text(exc: BaseException) -> str:
    """``Type: first line of the message`` of an error a plugin raised.

    >>> failure_text(RuntimeError("bad parser exploded\\nmore"))
    'RuntimeError: bad parser exploded'
    """
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def plugin_failed(label: str, method: str, exc: BaseException, where: str | None = None) -> PluginFailedError:
    """The error of another package's plugin (``label``: :func:`plugin_label`) that raised
    ``exc`` in ``method`` (``where``: what it was working on, such as the file a parser read);
    raise it ``from exc``.

    >>> str(plugin_failed("log format 'x' (plugin ...)", "parse", KeyError("k")))
    "log format 'x' (plugin ...) failed in parse(): KeyError: 'k'"
    >>> str(plugin_failed("log format 'x' (plugin ...)", "parse", KeyError("k"), "a.log, after line 3"))
    "log format 'x' (plugin ...) failed in parse() on a.log, after line 3: KeyError: 'k'"
    """
    on = f" on {where}" if where else ""
    return PluginFailedError(f"{label} failed in {method}(){on}: {failure_text(exc)}")


class GuardedFeatureSet:
    """Another package's feature set, as the engine uses it: every attribute is the plugin's,
    and an error its :data:`GUARDED` methods raise (other than the engine's own errors and
    running out of memory) is a :class:`~cbr.errors.PluginFailedError` naming the plugin and
    its package (``label``), with the error as its ``__cause__``: one line and exit 1 at the
    command line, not the engine's internal error. It pickles as the plugin's object does (a
    build sends it to worker processes)."""

    #: The feature-set methods the engine calls.
    GUARDED = ("feature_names", "row", "rows", "prepare", "default_similarity")

    def __init__(self, inner: Any, label: str) -> None:
        self._inner = inner
        self._label = label

    @property
    def plugin(self) -> Any:
        """The plugin's own object."""
        return self._inner

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or attr in ("_inner", "_label"):  # (unpickling: not set yet)
            raise AttributeError(attr)
        value = getattr(self._inner, attr)
        if attr not in self.GUARDED or not callable(value):
            return value
        label = self._label
        return guarded_call(value, lambda exc: plugin_failed(label, attr, exc))

    def __reduce__(self) -> tuple[Any, ...]:
        return (GuardedFeatureSet, (self._inner, self._label))

    def __repr__(self) -> str:
        return f"GuardedFeatureSet({self._inner!r})"


def clear_cache() -> None:
    """Forget loaded plugins (after installing a package at run time)."""
    _load.cache_clear()
    origin.cache_clear()
