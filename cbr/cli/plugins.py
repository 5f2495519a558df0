"""``cbr plugins``: the plugin store."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import textwrap
from typing import Annotated, Any

import typer

from cbr.cli._errors import guarded
from cbr.cli._output import counted, print_json, stderr, stdout

app = typer.Typer(help="The plugin store.", no_args_is_help=True, rich_markup_mode=None)

#: What each group holds, and where its plugins are named.
GROUP_TITLES = {
    "cbr.policies": "bots; a policy spec names one with its options, NAME or NAME:KEY=VALUE:KEY=VALUE, "
                    "e.g. lag:stab-rate=0.25 (cbr match --players, league --players, play --human --players, exploit); an option is "
                    "shown with its default and what it means",
    "cbr.features": "feature sets (cbr build --feature-set NAME)",
    "cbr.similarity": "similarity measures (measure = NAME in a similarity TOML)",
    "cbr.parsers": "log formats (cbr build --log-format NAME)",
    "cbr.models": "opponent models",
    "cbr.backends": "retrieval backends",
}
NAME_WIDTH = 18  # the longest built-in name, phase3-aggressive, and a space


def _value(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else f"{v:g}" if isinstance(v, float) else str(v)


def policy_lines(name: str) -> tuple[str, str]:
    """A bot's one-line description and its options as a spec writes them (``KEY=DEFAULT``, or
    ``KEY`` when it has none).

    >>> policy_lines("rock")
    ('tight-passive: raises AA, KK, QQ; bets near-nut hands', 'raise-rank=3, call-rank=25, nuts=0.9, call-ehs=0.6')
    >>> policy_lines("call")[1]
    ''
    """
    from cbr.policies.spec import policy_description, policy_options

    options = [k.replace("_", "-") + ("" if d is None or d == "" else f"={_value(d)}")
               for k, d in policy_options(name).items()]
    return policy_description(name), ", ".join(options)


def option_lines(name: str) -> list[str]:
    """Each option of a bot as a spec writes it, with its default, and the one line its
    ``OPTION_HELP`` table gives it (:func:`~cbr.policies.spec.policy_option_help`).

    >>> option_lines("station")
    ['nuts=0.97: after the flop: bet or raise only with hand strength at least this', 'preflop-nuts=0.82: pre-flop: raise only with a pre-flop strength at least this (0.82: AA, KK)']
    """
    from cbr.policies.spec import policy_option_help, policy_options

    helps = policy_option_help(name)
    out = []
    for k, d in policy_options(name).items():
        shown = k.replace("_", "-") + ("" if d is None or d == "" else f"={_value(d)}")
        out.append(f"{shown}: {helps[k]}" if helps.get(k) else shown)
    return out


def preset_lines(name: str) -> list[str]:
    """Each preset of a bot (``NAME:preset=P``) with what it sets
    (:func:`~cbr.policies.spec.policy_presets`), the default one marked; [] for a bot without.

    >>> preset_lines("cbr")[0].startswith("adaptive (the default): imitate until")
    True
    >>> preset_lines("cbr")[3]
    'casper: casebase=default, reuse=probabilistic, sharpen=1, outcome-weight=0, odds-guard=0 (plain sampling)'
    >>> preset_lines("lag")
    []
    """
    from cbr.policies.spec import policy_options, policy_presets

    default = policy_options(name).get("preset")
    return [f"{p}{' (the default)' if p == default else ''}: {line}" for p, line in policy_presets(name).items()]


def _entry(name: str, lines: list[tuple[str, str]], width: int) -> list[str]:
    """``name`` in its column and each (prefix, text) wrapped beside it, never mid-word."""
    out: list[str] = []
    indent = " " * (2 + NAME_WIDTH)
    for i, (prefix, text) in enumerate(lines):
        first = f"  {name:<{NAME_WIDTH - 1}} " if i == 0 else indent
        if len(first) > len(indent):  # a name longer than its column: the text on the next line
            out.append(first.rstrip())
            first = indent
        out += textwrap.wrap(prefix + text, width=max(width, len(indent) + 20), initial_indent=first,
                             subsequent_indent=indent + " " * len(prefix), break_long_words=False,
                             break_on_hyphens=False) or [first.rstrip()]
    return out


def note_lines(head: str, items: list[str], width: int) -> list[str]:
    """A note of ``head`` and its ``items`` (apart by ``, ``) folded to ``width`` columns: at spaces
    of the head, and between items, each kept whole (``cbr.policies:call (myplug)``); the lines
    after the first indented by 2; none ends in a space.

    >>> note_lines("2 plugins not used:", ["cbr.policies:call (myplug)", "cbr.features:casper (myplug)"], 40)
    ['2 plugins not used:', '  cbr.policies:call (myplug),', '  cbr.features:casper (myplug)']
    >>> note_lines("1 plugin failed to load:", ["cbr.policies:x"], 80)
    ['1 plugin failed to load: cbr.policies:x']
    """
    lines = textwrap.wrap(head, width=width, subsequent_indent="  ", break_long_words=False,
                          break_on_hyphens=False) or [""]
    for k, item in enumerate(items):
        piece = item + ("," if k < len(items) - 1 else "")
        if len(lines[-1]) + 1 + len(piece) <= width:
            lines[-1] += " " + piece
        else:
            lines.append("  " + piece)
    return lines


@app.command("list")
@guarded
def plugins_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Installed plugins per group: each bot with what it does and its options (the policy spec
    grammar), each with its default and what it means, and what each of its presets sets; the
    others with the object they load; a plugin that fails to load is shown with its error."""
    from dataclasses import asdict

    from cbr.plugins import GROUPS, OWN_DISTRIBUTION, describe

    infos = describe()
    bots = {i.name: policy_lines(i.name) for i in infos if i.group == "cbr.policies" and i.ok and i.used}
    if as_json:
        rows = []
        for i in infos:
            row = {**asdict(i), "ok": i.ok}
            if i.group == "cbr.policies" and i.name in bots and i.used:
                from cbr.policies.spec import policy_option_help, policy_options, policy_presets

                row["description"] = bots[i.name][0]
                row["options"] = {k.replace("_", "-"): v for k, v in policy_options(i.name).items()}
                row["option_help"] = {k.replace("_", "-"): v for k, v in policy_option_help(i.name).items()}
                presets = policy_presets(i.name)
                if presets:
                    row["presets"] = presets
            rows.append(row)
        print_json(rows)
        return
    width = stdout.width
    text = [f"{counted(len(infos), 'plugin')} (--json: every field)"]
    for group in GROUPS:
        members = [i for i in infos if i.group == group]
        if not members:
            continue
        text += [""] + textwrap.wrap(f"{group}: {GROUP_TITLES.get(group, '')}".rstrip(": "), width=width,
                                     subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
        for i in members:
            lines: list[tuple[str, str]] = []
            if i.ok and i.used and i.name in bots:
                description, options = bots[i.name]
                lines.append(("", description or i.target))
                if options:
                    lines.append(("options:", ""))
                    lines += [("  - ", line) for line in option_lines(i.name)]
                presets = preset_lines(i.name)
                if presets:
                    lines.append(("presets:", ""))
                    lines += [("  - ", line) for line in presets]
            else:
                lines.append(("", i.target))
            if i.distribution != OWN_DISTRIBUTION:
                lines.append(("package: ", i.distribution))
            if not i.ok:
                lines.append(("ERROR: " if i.used else "NOT USED: ",
                              i.error if i.used else (i.error or "").removeprefix("not used: ")))
            text += _entry(i.name, lines, width)
    stdout.print("\n".join(text), markup=False, highlight=False, soft_wrap=True)
    broken = [i for i in infos if not i.ok and i.used]
    notes = []
    if broken:
        notes += note_lines(f"{counted(len(broken), 'plugin')} failed to load:", [f"{i.group}:{i.name}" for i in broken], width)
    unused = [i for i in infos if not i.used]
    if unused:
        notes += note_lines(f"{counted(len(unused), 'plugin')} not used, another package's having the same name:",
                            [f"{i.group}:{i.name} ({i.distribution})" for i in unused], width)
    if notes:  # folded here: rich's own folding leaves the space it broke at
        stderr.print("\n".join(notes), markup=False, highlight=False, soft_wrap=True)
