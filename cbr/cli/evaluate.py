"""``cbr evaluate`` and ``cbr tune``: how well a case base predicts, and learned weights."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import math
from typing import Annotated, Optional

import typer

from cbr.cli._errors import guarded, usage_error
from cbr.cli._options import (
    FLAG,
    check_output,
)
from cbr.cli._output import (
    counted,
    fmt_change,
    fmt_score,
    fmt_score_ci,
    print_json,
    progress_bar,
    rich_table,
    stderr,
    stdout,
)


@guarded
def evaluate_command(
    casebase: Annotated[str, typer.Argument(help="Case base: a directory, a name under ./casebases/, or 'default'.")],
    folds: Annotated[Optional[int], typer.Option("--folds", min=2, max=50, help="K-fold over the case base's cases, whole hands per fold [default: 5].")] = None,
    holdout: Annotated[Optional[list[str]], typer.Option("--holdout", help="Evaluate on the decisions (known hole cards) of these logs instead; repeat for more paths.")] = None,
    similarity: Annotated[Optional[str], typer.Option("--similarity", help="Similarity TOML to retrieve with instead of the case base's own.")] = None,
    max_decisions: Annotated[Optional[int], typer.Option("--max-decisions", min=1, help="Evaluate a seeded sample of at most this many held-out decisions per street [default: all].")] = None,
    no_ann: Annotated[bool, typer.Option("--no-ann", metavar=FLAG, help="Skip the ANN predictor column.")] = False,
    predictor: Annotated[Optional[str], typer.Option("--predictor", help="With --holdout: a predictor saved by `cbr train predictor` for the ANN column (default: one trained on the case base).")] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the folds, the sample and the network.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """How well does a case base predict? Per street: accuracy of the most likely action and
    log-loss of the k-NN triple for held-out decisions, beside the majority baseline and the
    ANN predictor on the same decisions (it leaves out those whose inputs cannot be rebuilt),
    and the mean similarity of the retrieved cases; each score ± the half-width of its 95%
    confidence interval over hands. Log-loss clips each probability at 0.001 (a k-NN triple
    can hold zeros).

    Example: cbr evaluate default --folds 3 --max-decisions 100 --no-ann
    """
    from cbr.query.evaluate import evaluate_casebase
    from cbr.similarity.config import load_similarity_file
    from cbr.store import CaseBase, resolve_casebase

    if folds is not None and holdout:
        raise usage_error("give --folds or --holdout, not both", "--folds")
    if predictor is not None and (not holdout or no_ann):
        raise usage_error("--predictor needs --holdout (with folds the ANN is trained per fold) and the ANN column",
                          "--predictor")
    net = None
    if predictor is not None:
        from cbr.models.predictor import ActionPredictor

        net = ActionPredictor.load(predictor)
    cb = CaseBase.open(resolve_casebase(casebase))
    try:
        config = load_similarity_file(similarity, cb.manifest.feature_set) if similarity else None
        with progress_bar("evaluating", enabled=not as_json) as advance:
            ev = evaluate_casebase(cb, folds=folds or 5, holdout=holdout, similarity=config,
                                   similarity_name=similarity, seed=seed, max_decisions=max_decisions,
                                   ann=not no_ann, predictor=net, progress=advance)
    finally:
        cb.close()
    if as_json:
        print_json(ev.to_dict())
        return
    how = f"{ev.folds}-fold" if ev.mode == "folds" else f"hold-out logs {', '.join(ev.holdout)}"
    stdout.print(f"case base {ev.casebase}: {how}, similarity: {ev.similarity}, seed {ev.seed}"
                 + (f", at most {ev.max_decisions:,} decisions per street" if ev.max_decisions else "")
                 + f"; log-loss clips probabilities at {ev.clip}", markup=False, highlight=False, soft_wrap=True)
    columns = ["street", "n", "acc kNN", "acc maj", *(["acc ANN"] if not no_ann else []), "ll kNN", "ll maj",
               *(["ll ANN"] if not no_ann else []), "mean sim", "p=0"]
    rows = []
    for r in ev.rows:
        scores = {"knn": r.knn, "majority": r.majority, "ann": r.ann or {"accuracy": None, "log_loss": None}}
        shown = ["knn", "majority", *(["ann"] if not no_ann else [])]
        rows.append([r.street, f"{r.decisions:,}",
                     *(fmt_score_ci(scores[p].get("accuracy"), (r.ci.get(p) or {}).get("accuracy")) for p in shown),
                     *(fmt_score_ci(scores[p].get("log_loss"), (r.ci.get(p) or {}).get("log_loss")) for p in shown),
                     fmt_score(r.mean_similarity), fmt_score(r.zero_share)])
    stdout.print(rich_table("accuracy (acc) / log-loss (ll) ± 95% CI over hands; p=0: k-NN gave the action 0",
                            columns, rows))
    for r in ev.rows:
        if r.note:
            stderr.print(f"note: {r.street}: {r.note}", markup=False, highlight=False, soft_wrap=True)
    short = [r for r in ev.rows if r.ann_decisions is not None and r.ann_decisions < r.decisions]
    if short:
        each = ", ".join(f"{r.street} {r.ann_decisions:,}/{r.decisions:,}" for r in short)
        stderr.print(f"note: the ANN column scores only the decisions whose inputs could be rebuilt: {each}",
                     markup=False, highlight=False, soft_wrap=True)
    for note in ev.notes:
        stderr.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


# ---- cbr tune -----------------------------------------------------------------
@guarded
def tune_command(
    casebase: Annotated[str, typer.Argument(help="Case base: a directory, a name under ./casebases/, or 'default'.")],
    out: Annotated[str, typer.Option("--out", "-o", help="Write the learned similarity TOML here (a new file in an existing folder, or an existing one with --overwrite).")] = "tuned-similarity.toml",
    generations: Annotated[int, typer.Option("--generations", "-g", min=1, max=1000, help="Generations of the evolution strategy.")] = 10,
    population: Annotated[int, typer.Option("--population", min=1, max=200, help="Children evaluated per generation.")] = 8,
    folds: Annotated[int, typer.Option("--folds", min=2, max=20, help="K-fold of each evaluation (whole hands per fold).")] = 3,
    max_decisions: Annotated[int, typer.Option("--max-decisions", min=100, help="Held-out decisions per street per evaluation (a seeded sample; at least 100).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1, help="Seed of the search and of the tuning folds.")] = 0,
    report_seed: Annotated[Optional[int], typer.Option("--report-seed", min=0, max=2**32 - 1, help="Report both configurations on other folds and samples (default: seed + 1).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", metavar=FLAG, help="Replace an existing --out file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print the report as JSON.")] = False,
) -> None:
    """Learn similarity weights (CASPERGeneral): an evolutionary search over the feature
    weights and decay constants that minimises the hold-out log-loss of the case base's
    triples (as `cbr evaluate` measures it), then a report on other folds (--report-seed):
    both log-losses with 95% confidence intervals over hands, and their difference with its
    own, paired over the same held-out decisions.

    Example: cbr tune default --generations 1 --population 1 --folds 2 --max-decisions 100 -o tuned.toml
    """
    from pathlib import Path

    from cbr.query.tune import tune_and_report
    from cbr.store import CaseBase, resolve_casebase
    from cbr.store.indexes import dump_similarity

    target = Path(out)
    check_output(out, what="similarity file", overwrite=overwrite)
    cb = CaseBase.open(resolve_casebase(casebase))
    try:
        with progress_bar("tuning", total=generations * population, enabled=not as_json) as advance:
            result, tuned = tune_and_report(cb, generations=generations, population=population, folds=folds,
                                            max_decisions=max_decisions, seed=seed, report_seed=report_seed,
                                            progress=advance)
    finally:
        cb.close()
    dump_similarity(result.best, target)
    report = {"casebase": casebase, "out": str(target), **tuned}
    rseed = report["report_seed"]
    start_r, best_r = report["report"]["start_loss"], report["report"]["best_loss"]
    if as_json:
        print_json(report)
        return
    rep = report["report"]

    def loss(x: float) -> str:
        return f"{x:.4f}" if math.isfinite(x) else "n/a"  # a street with too few decisions to score

    rows = [[s, loss(result.start_loss[s]), loss(result.best_loss[s]),
             fmt_score_ci(start_r[s], rep["start_ci"][s], 4), fmt_score_ci(best_r[s], rep["best_ci"][s], 4),
             fmt_change(rep["difference"][s], rep["difference_ci"][s])]
            for s in (*("preflop", "flop", "turn", "river"), "all")]
    stdout.print(rich_table(f"k-NN log-loss ± 95% CI over hands ({folds}-fold, at most "
                            f"{counted(max_decisions, 'decision')} a street)",
                             ["street", f"hand-picked (seed {seed})", f"learned (seed {seed})",
                              f"hand-picked (seed {rseed})", f"learned (seed {rseed})",
                              f"learned - hand-picked (seed {rseed})"], rows))
    typer.echo(f"learned similarity written to {target} ({counted(result.evaluations, 'evaluation')})")
