"""``cbr hand``: what the evaluator says of a holding."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

from typing import Annotated, Any, Optional

import typer

from cbr.cli._errors import guarded
from cbr.cli._options import (
    MAX_SEED,
    MAX_TRIALS,
    alias,
)
from cbr.cli._output import busy, counted, print_json


@guarded
def hand_command(
    hole: Annotated[str, typer.Argument(help="Two hole cards, e.g. AhKd; before the flop also a class, e.g. 72o, AKs, QQ.")],
    board: Annotated[Optional[str], typer.Argument(help="Board of 3-5 cards, e.g. 3h4sJd (omit before the flop).")] = None,
    opponents: Annotated[Optional[int], typer.Option("--opponents", min=1, max=9,
                                                     help="Random opponents, 1..9 [default: 1].")] = None,
    opponents_n: Annotated[Optional[int], typer.Option("-n", min=1, max=9, hidden=True)] = None,
    trials: Annotated[int, typer.Option("--trials", "-t", min=1, max=MAX_TRIALS, help="Monte Carlo deals for win/tie/lose.")] = 50_000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Seed of the Monte Carlo deals.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Hand strength, potentials, EHS and win/tie/lose of a holding (preflop: rank and win/tie/lose).

    Example: cbr hand AdQc 3h4cJh --opponents 2
    """
    import evaluator_ext

    n_opponents = alias(opponents, opponents_n, "--opponents", "-n")
    n_opponents = 1 if n_opponents is None else n_opponents
    # the C kernels release the GIL: a spinner turns while millions of deals are dealt (not with --json)
    with busy(f"dealing up to {trials:,} Monte Carlo deals", enabled=not as_json and trials >= 1_000_000):
        try:
            s = evaluator_ext.hand_summary(hole, board or (), n_opponents=n_opponents, trials=trials, seed=seed)
        except evaluator_ext.CBRError as exc:  # HOLE and BOARD are arguments here: no (--hole) after the line
            exc.fields = ()
            raise
    if as_json:
        print_json(s)
        return

    def num(value: Any) -> str:
        return "n/a" if value is None else f"{value:.4f}"

    vs = f"vs {counted(s['opponents'], 'opponent')}"
    how = "exact enumeration" if s["exact"] else f"Monte Carlo, {counted(s['trials'], 'deal')}, seed {s['seed']}"
    if s.get("holdings"):  # a class before the flop: its holdings share these numbers
        first = (f"hole       {s['hole']}   a class of {counted(s['holdings'], 'holding')} (each has these pre-flop numbers), "
                 f"preflop rank {s['preflop_rank']} of 169")
    else:
        first = f"hole       {s['hole']}   class {s['preflop_class']}, preflop rank {s['preflop_rank']} of 169"
    lines = [
        first,
        f"board      {s['board'] or '(preflop)'}",
        f"category   {s['category'] or 'n/a'}",
        f"HS         {num(s['hs'])}   ({vs})",
        f"PPOT       {num(s['ppot'])}",
        f"NPOT       {num(s['npot'])}",
        f"EHS        {num(s['ehs'])}   ({vs})",
        f"E[HS^2]    {num(s['ehs2'])}",
        f"win        {s['win']:.4f}   ({vs}; {how})",
        f"tie        {s['tie']:.4f}",
        f"lose       {s['lose']:.4f}",
    ]
    typer.echo("\n".join(lines))
