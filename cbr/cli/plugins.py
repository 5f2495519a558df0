"""``cbr plugins``: the plugin store."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated

import typer

from cbr.cli._errors import guarded
from cbr.cli._output import print_json, rich_table, stderr, stdout

app = typer.Typer(help="The plugin store.", no_args_is_help=True, rich_markup_mode=None)


@app.command("list")
@guarded
def plugins_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Installed plugins per group; a plugin that fails to load is shown with its error."""
    from dataclasses import asdict

    from cbr.plugins import describe

    infos = describe()
    if as_json:
        print_json([{**asdict(i), "ok": i.ok} for i in infos])
        return
    rows = [[i.group, i.name, i.target, i.distribution,
             "ok" if i.ok else f"ERROR: {i.error}" if i.used else f"NOT USED: {i.error.removeprefix('not used: ')}"]
            for i in infos]
    stdout.print(rich_table(f"{len(infos)} plugins", ["group", "name", "target", "package", "status"], rows))
    broken = [i for i in infos if not i.ok and i.used]
    if broken:
        stderr.print(f"{len(broken)} plugin(s) failed to load: {', '.join(f'{i.group}:{i.name}' for i in broken)}")
    unused = [i for i in infos if not i.used]
    if unused:
        stderr.print(f"{len(unused)} plugin(s) not used, another package's having the same name: "
                     f"{', '.join(f'{i.group}:{i.name} ({i.distribution})' for i in unused)}")
