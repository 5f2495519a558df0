"""``cbr abstraction``: card abstractions for the CFR solver."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated, Any

import typer

from cbr.cli._errors import guarded, usage_error
from cbr.cli._options import (
    FLAG,
    check_output,
)
from cbr.cli._output import counted, print_json, progress_bar

app = typer.Typer(help="Card abstractions: hand-strength buckets per street and the abstract game's "
                              "chance model (the KTH study).", no_args_is_help=True, rich_markup_mode=None)
ABSTRACTION_KINDS = ("uniform", "percentile", "minmax", "history")
ABSTRACTION_METRICS = ("hs", "hs2")


def _abstraction_summary(abstraction: Any, directory: str, game: Any = None) -> dict[str, Any]:
    """What ``cbr abstraction build/inspect --json`` print."""
    summary: dict[str, Any] = {"directory": directory, **abstraction.description,
                               "thresholds": [t.tolist() for t in abstraction.thresholds]}
    if game is not None:
        summary["bucket_game"] = {k: v for k, v in game.description.items() if k.startswith(("game_", "equity_"))}
    return summary


@app.command("build")
@guarded
def abstraction_build_command(
    kind: Annotated[str, typer.Option("--kind", help="uniform, percentile, minmax or history.")],
    metric: Annotated[str, typer.Option("--metric", help="hs (hand strength) or hs2 (hand strength squared).")],
    out: Annotated[str, typer.Option("--out", "-o", help="Directory to write abstraction.json and bucket_game.npz to (created, in a folder that exists).")],
    buckets: Annotated[int, typer.Option("--buckets", min=1, max=64, help="Buckets per street.")] = 8,
    samples: Annotated[int, typer.Option("--samples", min=1, max=20_000, help="Random boards for the thresholds and, again, for the bucket game (each board: every holding; about 0.15 s a board).")] = 400,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**62, help="Seed of the boards (the bucket game uses seed + 1).")] = 0,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=FLAG, help="Write into an existing --out directory (replacing its files).")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the summary as JSON.")] = False,
) -> None:
    """Build a bucketing (thresholds from sampled boards) and estimate its bucket game;
    write both to the directory (atomically, each file).

    Example: cbr abstraction build --kind percentile --metric hs --buckets 4 --samples 2 -o p_hs
    """
    if kind not in ABSTRACTION_KINDS:
        raise usage_error(f"unknown kind {kind!r} (choose from {', '.join(ABSTRACTION_KINDS)})", "--kind")
    if metric not in ABSTRACTION_METRICS:
        raise usage_error(f"unknown metric {metric!r} (choose from {', '.join(ABSTRACTION_METRICS)})", "--metric")
    from pathlib import Path

    from cbr.abstraction import BUCKET_GAME_FILE, Abstraction

    target = Path(out)
    check_output(out, what="abstraction", overwrite=overwrite, folder=True)
    with progress_bar("thresholds", total=samples, enabled=not as_json) as advance:
        abstraction = Abstraction.build(kind, metric, n_buckets=buckets, samples=samples, seed=seed,
                                        progress=lambda done, total: advance(1))
    with progress_bar("bucket game", total=samples, enabled=not as_json) as advance:
        game = abstraction.bucket_game(samples, seed + 1, progress=lambda done, total: advance(1))
    abstraction.save(target)
    game.save(target / BUCKET_GAME_FILE)
    summary = _abstraction_summary(abstraction, str(target), game)
    if as_json:
        print_json(summary)
        return
    typer.echo(f"{abstraction.name}: {buckets} buckets per street, fingerprint {abstraction.fingerprint[:16]}; "
               f"thresholds from {counted(samples, 'board')} in {abstraction.build_info['seconds']:.1f} s, bucket game from "
               f"{counted(samples, 'board')} in {game.description['game_seconds']:.1f} s; written to {target}")


@app.command("inspect")
@guarded
def abstraction_inspect_command(
    directory: Annotated[str, typer.Argument(help="A directory written by `cbr abstraction build`, or the name of a "
                                                  "shipped one under casebases/cfr/ (as `cbr train cfr -a` takes).")],
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the summary as JSON.")] = False,
) -> None:
    """Show an abstraction: name, fingerprint, thresholds per street, and its bucket game's figures.

    Example: cbr abstraction inspect h_hs2_4
    """
    from cbr.abstraction import BUCKET_GAME_FILE, Abstraction
    from cbr.cfr.strategy import resolve_abstraction_dir

    where = resolve_abstraction_dir(directory)  # a path, or a shipped abstraction's name: as `cbr train cfr -a`
    abstraction = Abstraction.load(where)
    game = abstraction.load_bucket_game(where) if (where / BUCKET_GAME_FILE).exists() else None
    summary = _abstraction_summary(abstraction, str(where), game)
    if as_json:
        print_json(summary)
        return
    typer.echo(f"{abstraction.name} ({abstraction.kind} buckets on {abstraction.metric}), {abstraction.n_buckets} per "
               f"street, fingerprint {abstraction.fingerprint}")
    for street, t in zip(("pre-flop", "flop", "turn", "river"), abstraction.thresholds):
        rows = [t] if t.ndim == 1 else list(t)
        for i, row in enumerate(rows):
            label = street if t.ndim == 1 else f"{street} | prev {i}"
            typer.echo(f"  {label:>16}: " + " ".join(f"{x:.3f}" for x in row))
    if game is None:
        typer.echo("no bucket game (bucket_game.npz) beside it")
    else:
        d = game.description
        se = d.get("equity_max_se")
        deals, boards = (counted(n, word) if isinstance(n, int) else f"{n} {word}s"  # as an older file says it
                         for n, word in ((d.get("game_deals"), "holding"), (d.get("game_samples"), "board")))
        typer.echo(f"bucket game: {deals} on {boards} (seed "
                   f"{d.get('game_seed')}), {game.n_classes} showdown classes, largest equity standard error "
                   f"{'n/a' if se is None else f'{se:.4f}'}")
