"""Policy specs: one syntax naming a policy and its options wherever a policy is named
(``cbr match --players``, ``cbr play --policy``, ``cbr serve-dealer``).

Syntax: ``NAME`` or ``NAME:KEY=VALUE:KEY=VALUE...``, e.g.
``cbr:casebase=default:reuse=max-frequency``. ``NAME`` is a ``cbr.policies`` plugin; each
``KEY`` is a keyword parameter of its constructor (``-`` may stand for ``_``), and
``VALUE`` is converted to the type of that parameter's default (``int``, ``float``,
``bool`` as ``true/false/yes/no/1/0``, else text). ``seed`` is not an option: whoever
runs the policy seeds it.

Why colons and not ``cbr[casebase=default,reuse=max-frequency]``: a spec never contains a
comma, so a list of seats such as ``--players cbr:reuse=best-outcome,ehs`` splits on
commas naively and correctly, in every command and script, with no bracket-aware
splitter to keep in sync. The price: a value cannot contain ``:`` or ``,`` (a case base
at such a path is named through a symbolic link, or by its name under ``./casebases/``).

>>> parse_policy_spec("cbr:casebase=default:reuse=max-frequency")
('cbr', {'casebase': 'default', 'reuse': 'max-frequency'})
>>> parse_policy_spec("ehs")
('ehs', {})
>>> policy_from_spec("lag:stab-rate=0.25", seed=3).stab_rate
0.25
>>> policy_from_spec("call:loose=1")
Traceback (most recent call last):
cbr.policies.spec.PolicySpecError: policy 'call' takes no options, got 'loose'
"""
from __future__ import annotations

import inspect
import re
from typing import Any

from cbr.errors import CBRError, ConfigError, PluginError, PluginFailedError
from cbr.policies.base import Policy

__all__ = ["PolicySpecError", "PolicyFileError", "UnknownPolicyError", "parse_policy_spec", "policy_description", "policy_options",
           "policy_option_help", "policy_presets", "policy_from_spec", "split_policy_specs", "DESCRIPTIONS"]

_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z")
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
#: the words a spec writes for an option that is true or false
TRUE_WORDS = frozenset({"true", "yes", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "0", "off"})


class PolicySpecError(ConfigError):
    """A policy spec that does not parse, names an unknown policy, or has a bad option
    (a ``ValueError``; the CLI reports it as a usage error)."""


class UnknownPolicyError(PolicySpecError, PluginError):
    """A spec naming no installed ``cbr.policies`` plugin (also a :class:`PluginError`)."""


class PolicyFileError(ConfigError):
    """A file or folder a policy's option names (``predictor=``, ``model=``, ``logs=``,
    ``strategy=``, ``casebase=``, ``similarity=``, ``models=``, ``styles=``, ``store=``) that is
    missing, unreadable or not of the kind the option reads: a bad input file, as a bad log or
    case base is (exit 1 at the command line), not a usage error (it is no :class:`PolicySpecError`). ``option``: the option's keyword; ``spec``: the spec of the bot, once known (the
    message then starts with it, ``policy spec 'SPEC': option 'NAME': ...``); made by
    :func:`file_option_error`."""

    def __init__(self, message: str, *, option: str, spec: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.spec = spec
        #: what the file's loader said, without the spec and option (a caller that names them its own way)
        self.reason = message if reason is None else reason


def file_option_error(option: str, error: BaseException, policy: Any = None) -> PolicyFileError:
    """The :class:`PolicyFileError` of a bot whose option ``option`` names a file that ``error``
    (the loader's, which names the path) refused. ``policy``: the bot, for an error raised after
    it was made (a store opened, a strategy read at the first decision): the message names its
    spec. The loader's ``field`` is dropped: it names a command-line option of another command
    (``ModelError``'s ``store`` is ``cbr players build --store``), not the spec's option.

    >>> str(file_option_error("store", ValueError("no model store at x")))
    "option 'store': no model store at x"
    >>> class Bot: spec = "poki-wt:store=x"
    >>> str(file_option_error("store", ValueError("no model store at x"), Bot()))
    "policy spec 'poki-wt:store=x': option 'store': no model store at x"
    """
    spec = getattr(policy, "spec", None)
    reason = str(error).strip()
    text = f"option {_shown(option)!r}: {reason}"
    if isinstance(spec, str):
        text = f"policy spec {spec!r}: {text}"
    return PolicyFileError(text, option=option, spec=spec if isinstance(spec, str) else None, reason=reason)


def parse_policy_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split ``NAME:KEY=VALUE:...`` into the name and the raw (text) options.

    Raises :class:`PolicySpecError` for an empty name, a part without ``=``, a key given
    twice, or a comma (specs are separated by commas).

    >>> parse_policy_spec(" cbr:reuse=best-outcome ")
    ('cbr', {'reuse': 'best-outcome'})
    >>> parse_policy_spec("cbr:reuse")
    Traceback (most recent call last):
    cbr.policies.spec.PolicySpecError: policy spec 'cbr:reuse': expected KEY=VALUE after ':', got 'reuse'
    """
    if not isinstance(text, str):
        raise PolicySpecError(f"a policy spec is text, got {type(text).__name__}")
    spec = text.strip()
    if "," in spec:
        raise PolicySpecError(f"policy spec {spec!r} contains a comma; commas separate policies, "
                              "options are separated by ':' (NAME:KEY=VALUE:KEY=VALUE)")
    name, *parts = spec.split(":")
    name = name.strip()
    if not _NAME_RE.match(name):
        raise PolicySpecError(f"policy spec {spec!r}: expected a policy name first (NAME:KEY=VALUE:...), got {name!r}")
    options: dict[str, str] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not _KEY_RE.match(key):
            raise PolicySpecError(f"policy spec {spec!r}: expected KEY=VALUE after ':', got {part!r}")
        key = key.replace("-", "_")
        if key in options:
            raise PolicySpecError(f"policy spec {spec!r}: option {_shown(key)!r} given twice")
        options[key] = value.strip()
    return name, options


def split_policy_specs(text: str) -> list[str]:
    """The comma-separated specs of a ``--players`` list (empty items dropped).

    >>> split_policy_specs("cbr:reuse=max-frequency, ehs,")
    ['cbr:reuse=max-frequency', 'ehs']
    """
    return [p.strip() for p in text.split(",") if p.strip()]



def model_stores(specs: Any) -> dict[str, str]:
    """The model stores the bots of ``specs`` play from, each once: its path as written, and the
    name of the first bot playing from it. A ``store=PATH`` option (``poki-wt``'s, ``simbot``'s) opens the store
    for writing as the bot plays, with ``learn`` or without; specs that do not parse have none
    (their own check says why).

    >>> model_stores(["call", "poki-wt:store=p.duckdb", "simbot:store=p.duckdb:learn=0", "poki-wt:store=", "x:y"])
    {'p.duckdb': 'poki-wt'}
    """
    found: dict[str, str] = {}
    for spec in specs:
        try:
            name, options = parse_policy_spec(spec)
        except PolicySpecError:
            continue
        if options.get("store"):
            found.setdefault(options["store"], name)
    return found


def store_clash(specs: Any, processes: int) -> str:
    """Why the bots of ``specs`` cannot play in ``processes`` processes at once ("" when they can):
    a model store is open in one process at a time (DuckDB's lock), and each process playing
    builds its own bots, so a second one would stop mid-run with ``model store P is in use by
    another process``. A command or script refuses such a run before any work.

    >>> store_clash(["call", "poki-wt:store=p.duckdb"], 1), store_clash(["call"], 4)
    ('', '')
    >>> store_clash(["poki-wt:store=p.duckdb", "poki-wt:store=q.duckdb:learn=0"], 2)
    'model stores p.duckdb, q.duckdb can be open in one process at a time, and poki-wt, playing from them, would play in more than one worker process at once'
    """
    stores = model_stores(specs)
    if processes <= 1 or not stores:
        return ""
    which, it = ((f"model store {next(iter(stores))}", "it") if len(stores) == 1
                 else (f"model stores {', '.join(stores)}", "them"))
    bots = ", ".join(dict.fromkeys(stores.values()))
    return (f"{which} can be open in one process at a time, and {bots}, playing from {it}, would play in more "
            "than one worker process at once")

def _factory(name: str) -> Any:
    from cbr.plugins import available, broken_note, load, usable

    try:
        return load("cbr.policies", name)
    except PluginError:
        if name not in available("cbr.policies"):  # the known are those that can be used
            known, broken = usable("cbr.policies")
            raise UnknownPolicyError(f"unknown policy {name!r}; known policies: {', '.join(known)}"
                                     f"{broken_note('cbr.policies', broken)}") from None
        raise  # installed but broken: the plugin store's own error


def policy_options(name: str) -> dict[str, Any]:
    """The options a policy takes: its constructor's keyword parameters (but ``seed``)
    with their defaults.

    >>> policy_options("call")
    {}
    >>> sorted(policy_options("lag"))[:3]
    ['call_rank', 'draw_ppot', 'looseness']
    """
    factory = _factory(name)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin or C callable: no introspection
        return {}
    return {k: (None if p.default is inspect.Parameter.empty else p.default)
            for k, p in params.items()
            if k != "seed" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def policy_option_help(name: str) -> dict[str, str]:
    """One line on each option of the policy ``name`` (keyword to text, in the order of
    :func:`policy_options`), from the ``OPTION_HELP`` table its factory declares: a class's own
    merged over its bases' (a bot sharing its base's options declares only its new ones), or a
    function's attribute of that name. The tables are the one place the lines are written;
    ``cbr plugins list`` shows them. "" for an option no table describes (a third-party bot
    may declare none).

    >>> policy_option_help("lag")["stab_rate"]
    'chance of a bet with nothing to call after the flop, whatever the hand'
    >>> policy_option_help("call")
    {}
    """
    merged = _declared(_factory(name), "OPTION_HELP")
    return {k: " ".join(str(merged.get(k, "")).split()) for k in policy_options(name)}


def policy_presets(name: str) -> dict[str, str]:
    """One line on what each preset of the policy ``name`` sets (``cbr:preset=NAME``), from
    the ``PRESET_HELP`` table its factory declares (merged as :func:`policy_option_help`
    merges ``OPTION_HELP``); ``cbr plugins list`` shows them. {} for a bot without presets.

    >>> policy_presets("cbr")["expert"]
    "casebase=expert, reuse=probabilistic, sharpen=4, outcome-weight=1, odds-guard=0 (the teacher's cases)"
    >>> policy_presets("lag")
    {}
    """
    return {k: " ".join(str(v).split()) for k, v in _declared(_factory(name), "PRESET_HELP").items()}


def _declared(factory: Any, attribute: str) -> dict[str, Any]:
    """The table ``attribute`` of a factory: a class's own merged over its bases', or a
    function's attribute of that name ({} when none declares one)."""
    merged: dict[str, Any] = {}
    owners = reversed(inspect.getmro(factory)) if inspect.isclass(factory) else [factory]
    for owner in owners:
        table = vars(owner).get(attribute) if hasattr(owner, "__dict__") else None
        if isinstance(table, dict):
            merged.update(table)
    return merged


#: One line on each built-in bot, as ``cbr plugins list`` shows it (docs/live-play.md has more).
DESCRIPTIONS = {
    "random": "uniform over the legal actions",
    "fold": "folds to any bet, checks when checking is free",
    "call": "checks or calls every time",
    "raise": "bets or raises whenever it may, calls when capped",
    "hs": "hand strength only (Waterloo report, Phase I)",
    "ehs": "EHS, pot odds and bluffs (Waterloo report, Phase II)",
    "poki": "Poki's formulas: EHS and pot odds into an (f, c, r) triple",
    "lag": "loose-aggressive: plays many hands and bets them hard",
    "rock": "tight-passive: raises AA, KK, QQ; bets near-nut hands",
    "station": "loose-passive: never folds, raises only the nuts",
    "cbr": "the default: adapts to each player over the expert cases",
    "poki-wt": "poki on EHS weighted by per-opponent weight tables",
    "simbot": "Poki's simulation betting against modelled opponents",
    "phase3": "ehs plus a showdown model learned in the match (Phase III)",
    "phase3-aggressive": "phase3's aggressive variant",
    "thesis-net": "the ITU thesis' default-strategy network as a bot",
    "cfr": "a CFR strategy, heads-up limit (default: emd_2000 re-solved)",
    "adapt": "the adaptive bot of cbr, with every option of its own",
}


def policy_description(name: str) -> str:
    """One line on the policy ``name``: the factory's own ``description`` attribute (a
    third-party bot may set one), else the built-in line of :data:`DESCRIPTIONS`, else the first
    sentence of its own docstring ("" when it has none). Neither is taken from a base class: a
    bot without a docstring of its own is not described as its base (``Policy``'s "Base class
    of every bot").

    >>> policy_description("call")
    'checks or calls every time'
    """
    factory = _factory(name)
    given = _own(factory, "description")
    if isinstance(given, str) and given.strip():
        return " ".join(given.split())
    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name]
    doc = _own(factory, "__doc__")
    doc = " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if isinstance(doc, str) else ""
    return doc.split(". ")[0].rstrip(".")


def _own(factory: Any, attribute: str) -> Any:
    """``attribute`` of a factory itself (a class's own, not inherited), or None."""
    if inspect.isclass(factory):
        return vars(factory).get(attribute)
    return getattr(factory, attribute, None)


def _shown(key: str) -> str:
    """An option's name as a spec writes it (``stab-rate``; the keyword is ``stab_rate``)."""
    return key.replace("_", "-")


def _as_written(message: str, options: Any) -> str:
    """``message`` (a bot's error) with each of its ``options``' keywords as a spec writes them:
    a constructor names ``min_similarity``, the user wrote ``min-similarity``.

    >>> _as_written("min_similarity must be in [0, 1], got 2.0; see min_gain", ["min_similarity", "min_gain", "k"])
    'min-similarity must be in [0, 1], got 2.0; see min-gain'
    >>> _as_written("odds_guard_x is not min_gains", ["odds_guard", "min_gain"])   # whole names only
    'odds_guard_x is not min_gains'
    """
    for key in sorted((k for k in options if "_" in k), key=len, reverse=True):
        message = re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", _shown(key), message)
    return message


def _convert(spec: str, key: str, value: str, default: Any) -> Any:
    if isinstance(default, bool):
        low = value.lower()
        if low in TRUE_WORDS:
            return True
        if low in FALSE_WORDS:
            return False
        raise PolicySpecError(f"policy spec {spec!r}: option {_shown(key)!r} is true or false, got {value!r}")
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return kind(value)
            except ValueError:
                raise PolicySpecError(f"policy spec {spec!r}: option {_shown(key)!r} is a{'n' if kind is int else ''} "
                                      f"{kind.__name__}, got {value!r}") from None
    if value == "":
        raise PolicySpecError(f"policy spec {spec!r}: option {_shown(key)!r} has an empty value")
    return value


#: Options naming other bots (``adapt``'s): their value is a bot's spec or its short name.
_BOT_OPTIONS = ("safe", "fallback", "experts")


def _nested_hint(raw: dict[str, str], key: str, valid: dict[str, Any]) -> str:
    """For an unknown option ``key`` right after an option naming a bot (``safe=cbr:preset=imitate``
    splits into ``safe=cbr`` and ``preset=imitate``: a spec's ``:`` cannot stand inside another
    spec), a hint to name that bot by its short name (the value of its one option,
    :func:`cbr.policies.adaptive.expert_alias`); else nothing.

    >>> _nested_hint({"safe": "cbr", "preset": "imitate"}, "preset", {"safe": None})
    ' (name a bot with options by its short name: safe=imitate)'
    >>> _nested_hint({"experts": "ehs+cfr", "strategy": "counter_raise"}, "strategy", {"experts": None})
    ' (name a bot with options by its short name: experts=ehs+counter_raise)'
    >>> _nested_hint({"warmup": "50", "preset": "imitate"}, "preset", {"warmup": 50})
    ''
    """
    from cbr.plugins import available

    keys = list(raw)
    before = keys[keys.index(key) - 1] if keys.index(key) > 0 else None
    if before not in _BOT_OPTIONS or before not in valid:
        return ""
    others, plus, bot = raw[before].rpartition("+")
    if bot not in available("cbr.policies"):
        return ""
    return f" (name a bot with options by its short name: {_shown(before)}={others}{plus}{raw[key]})"


def policy_from_spec(text: str, *, seed: int | None = None, casebase: Any = None) -> Policy:
    """The policy a spec names, built through the plugin store with its options.
    ``casebase``: for a policy with a ``casebase`` option, a case base the process holds open
    (:class:`~cbr.store.shared.SharedCaseBase`) to play from, in place of the spec's.

    Raises :class:`PolicySpecError` (a ``ValueError``) for a bad spec, an unknown policy,
    an unknown option (the message lists the valid ones) or a value the policy refuses;
    :class:`PolicyFileError` for a file an option names that is missing, unreadable or not of
    its kind (``poki-wt:predictor=notes.txt``).

    >>> policy_from_spec("ehs", seed=1).name
    'ehs'
    >>> policy_from_spec("nosuchbot")                     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    cbr.policies.spec.UnknownPolicyError: unknown policy 'nosuchbot'; known policies: ...
    """
    name, raw = parse_policy_spec(text)
    factory = _factory(name)
    valid = policy_options(name)
    spec = text.strip()
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in valid:
            if not valid:
                raise PolicySpecError(f"policy {name!r} takes no options, got {_shown(key)!r}")
            raise PolicySpecError(f"policy {name!r} has no option {_shown(key)!r}{_nested_hint(raw, key, valid)}; "
                                  f"options: {', '.join(_shown(k) for k in valid)}")
        kwargs[key] = _convert(spec, key, value, valid[key])
    if casebase is not None and "casebase" in valid:
        kwargs["casebase"] = casebase
    from cbr.plugins import OWN_DISTRIBUTION, origin

    distribution, target = origin("cbr.policies", name)
    theirs = None if distribution == OWN_DISTRIBUTION else f"{spec!r} (plugin {name!r} in cbr.policies: " \
                                                            f"{target}, package {distribution})"
    try:
        policy = factory(seed=seed, **kwargs)
    except PolicySpecError:
        raise
    except PolicyFileError as exc:  # a bad input file, not a usage error: named with the spec
        if exc.spec is not None:  # a bot this one made from a spec of its own (adapt's experts)
            raise
        raise PolicyFileError(f"policy spec {spec!r}: {exc}", option=exc.option, spec=spec, reason=exc.reason) from exc
    except (ValueError, TypeError) as exc:  # the bot names its options by keyword: said as the spec writes them
        if theirs is not None:  # another package's bot: its error, named as it (below), not a usage error
            raise PluginFailedError(f"bot {theirs} failed when it was made: {_what(exc)}") from exc
        raise PolicySpecError(f"policy spec {spec!r}: {_as_written(str(exc), valid)}") from None
    except CBRError:
        raise
    except Exception as exc:
        if theirs is None or isinstance(exc, MemoryError):
            raise
        raise PluginFailedError(f"bot {theirs} failed when it was made: {_what(exc)}") from exc
    policy.spec = spec  # type: ignore[attr-defined]  # results and logs label the seat by it
    if theirs is not None:
        _guard(policy, theirs)
    return policy


#: What a bot is asked (:class:`~cbr.policies.base.Policy`'s methods, and ``close``): another
#: package's bot that raises in one of them is named (:func:`_guard`).
GUARDED_METHODS = ("triple", "triples", "act", "decide", "observe", "reset", "close")


def _what(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _guard(policy: Policy, theirs: str) -> None:
    """Make an error another package's bot raises from one of :data:`GUARDED_METHODS` a
    :class:`~cbr.errors.PluginFailedError` naming the bot (``theirs``: its spec, plugin,
    target and package) and what it raised: one line and exit 1 at the command line, not the
    engine's internal error. The methods are wrapped on the instance (its class, which the
    engine inspects, is left as it is); the engine's own errors (``CBRError``) and running out
    of memory pass as they are."""
    from cbr.plugins import guarded_call

    def guarded(method: Any, what: str) -> Any:
        return guarded_call(method, lambda exc: PluginFailedError(f"bot {theirs} failed in {what}(): {_what(exc)}"))

    for what in GUARDED_METHODS:
        method = getattr(policy, what, None)
        if callable(method):
            setattr(policy, what, guarded(method, what))
