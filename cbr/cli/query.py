"""``cbr query``: the probability triple of a situation and the cases behind it."""
# No `from __future__ import annotations`: typer reads the options' annotations, and real ones
# (compiled with the module) cost it far less than strings it must evaluate at every start.

import contextlib
import itertools
import json
import os
import sys
from typing import Annotated, Any, Iterable, Iterator, Optional

import typer

from cbr.cli._errors import guarded
from cbr.cli._options import FLAG, alias, check_min_cases, game_option
from cbr.cli._output import counted, print_json, print_table
from cbr.query import MAX_TOP


@guarded
def query_command(
    casebase: Annotated[str, typer.Option("--casebase", "-c", help="Case base: a directory, a name under ./casebases/, or 'default' (embedded).")] = "default",
    matchstate: Annotated[Optional[str], typer.Option("--matchstate", help="An ACPC MATCHSTATE string; '-' reads one per line from stdin. Its game comes from --game.")] = None,
    matchstate_file: Annotated[Optional[str], typer.Option("--matchstate-file", help="A file of MATCHSTATE lines ('-': stdin); one answer per line.")] = None,
    game: Annotated[str, typer.Option("--game", help="Game for --matchstate (and options): preset name, GameDef JSON or ACPC .game file.")] = "holdem.limit.2p",
    hole: Annotated[Optional[str], typer.Option("--hole", help="Your hole cards, e.g. AdQc.")] = None,
    board: Annotated[Optional[str], typer.Option("--board", help="Board cards: none (pre-flop), 3, 4 or 5.")] = None,
    dealt: Annotated[Optional[int], typer.Option("--dealt", min=2, max=12, help="Players dealt in (default: the game's seats).")] = None,
    players: Annotated[Optional[int], typer.Option("--players", min=2, max=12, hidden=True, help="Old name of --dealt.")] = None,
    in_hand: Annotated[Optional[int], typer.Option("--in-hand", help="Players not folded, you included (default: all dealt).")] = None,
    position: Annotated[Optional[int], typer.Option("--position", help="Your place in this round's order among players in hand: 0 = first to act.")] = None,
    to_act: Annotated[Optional[int], typer.Option("--to-act", help="Players still to act after you this round.")] = None,
    committed: Annotated[Optional[float], typer.Option("--committed", help="Bets you already put in this round (pre-flop the small blind is 0.5).")] = None,
    to_call: Annotated[Optional[float], typer.Option("--to-call", help="Bets you must add to call.")] = None,
    pot: Annotated[Optional[float], typer.Option("--pot", help="Pot before your action, in small bets.")] = None,
    prev_bets: Annotated[Optional[int], typer.Option("--prev-bets", help="Bets and raises made in the previous round (pre-flop the big blind counts as the first bet: a limped pot has 1).")] = None,
    weighted: Annotated[bool, typer.Option("--weighted", metavar=FLAG, help="Weight actions by similarity (default: the case base's setting).")] = False,
    unweighted: Annotated[bool, typer.Option("--unweighted", metavar=FLAG, help="Count every retrieved action once.")] = False,
    top: Annotated[int, typer.Option("--top", min=0, max=MAX_TOP, help="Cases to show.")] = 5,
    threshold: Annotated[Optional[float], typer.Option("--threshold", min=0.0, max=1.0, help="Retrieve every case at least this similar, for this query only (default: the case base's, CASPER's 0.97; `cbr casebase similarity` changes it for good).")] = None,
    k: Annotated[Optional[int], typer.Option("--k", min=1, max=10**6, help="When no case (or fewer than --min-cases) reaches the threshold, retrieve the K most similar, for this query only (default: the case base's fallback_k, CASPER's 20).")] = None,
    min_cases: Annotated[Optional[int], typer.Option("--min-cases", min=1, max=10**6, help="Fall back to the K most similar when fewer than this many cases reach the threshold, not only when none does; at most K (default: the case base's min_cases, CASPER's 1). --min-cases 20 --k 20: every case at or above the threshold, never fewer than 20.")] = None,
    explain: Annotated[bool, typer.Option("--explain", metavar=FLAG, help="Show each case's own feature values and local similarities.")] = False,
    as_json: Annotated[bool, typer.Option("--json", metavar=FLAG, help="Print JSON (all retrieved cases with --explain; JSON lines for several MATCHSTATEs).")] = False,
    memory_map: Annotated[bool, typer.Option("--memory-map", metavar=FLAG, help="Map the street's saved index instead of loading the street: for case bases larger than memory (same answers; the saved index must cover every case).")] = False,
    opponent: Annotated[Optional[list[str]], typer.Option("--opponent", metavar="AGG,TIGHT,RISK|NAME", help="For a casper-opp case base: the player model of an opponent still in the hand, in position order (repeat per opponent; the rest stay at the defaults 0.14,0.74,0.39): three values in 0..1, or a player's name in --models.")] = None,
    models: Annotated[Optional[str], typer.Option("--models", help="Model store (cbr players build) where --opponent NAME is looked up.")] = None,
) -> None:
    """The (fold, check/call, bet/raise) probabilities for a situation, and the cases behind them.

    Describe the situation with --matchstate (+ --game), or with --hole/--board and the
    betting options; options left out take the spot reached with the fewest actions, and a
    spot no legal hand reaches is refused naming the option to change.

    Example: cbr query --hole AdQc --board 3h4cJh --position 1 --to-call 1 --pot 5
    """
    from cbr.store import CaseBase, resolve_casebase

    described = {"--hole": hole, "--board": board, "--dealt": dealt, "--players": players, "--in-hand": in_hand,
                 "--position": position, "--to-act": to_act, "--committed": committed, "--to-call": to_call,
                 "--pot": pot, "--prev-bets": prev_bets}
    given = [name for name, value in described.items() if value is not None]
    if weighted and unweighted:
        raise typer.BadParameter("give --weighted or --unweighted, not both")
    check_min_cases(k, min_cases)
    dealt = alias(dealt, players, "--dealt", "--players")
    if matchstate is not None and matchstate_file is not None:
        raise typer.BadParameter("give --matchstate or --matchstate-file, not both")
    source = matchstate_file if matchstate_file is not None else (matchstate if matchstate == "-" else None)
    if (matchstate is not None or matchstate_file is not None) and given:
        raise typer.BadParameter(f"a MATCHSTATE describes the whole situation: leave out {', '.join(given)}")
    weight = True if weighted else (False if unweighted else None)
    opponents = _opponent_models(opponent, models)
    g = game_option(game)  # an unknown game is a usage error (exit 2), as in the ACPC commands
    if source is not None:
        lines = _read_lines(source)
        ahead = _first_matchstate(lines)  # the blank and comment lines before the first MATCHSTATE, and it
        if ahead is None:
            from cbr.errors import LogFormatError

            raise LogFormatError(f"{'stdin' if source == '-' else source}: no MATCHSTATE line to answer "
                                 f"(it is empty, or blank lines and # comments only)")
        cb = CaseBase.open(resolve_casebase(casebase), memory_map=memory_map)
        try:
            _check_retrieval(cb, k, min_cases)
            failed, read = _query_lines(cb, g, itertools.chain(ahead, lines), weight, top, explain, as_json,
                                        opponents, (threshold, k, min_cases))
        finally:
            cb.close()
        if failed:
            typer.echo(f"error: {failed:,} of {counted(read, 'line')} could not be answered", err=True)
            raise typer.Exit(1)
        return
    dp = _query_situation(g, matchstate, hole, board, dealt, in_hand, position,
                          to_act, committed, to_call, pot, prev_bets)
    cb = CaseBase.open(resolve_casebase(casebase), memory_map=memory_map)
    try:
        _check_retrieval(cb, k, min_cases)
        ans = _answer(cb, dp, weight, opponents, top=None if explain else top, retrieval=(threshold, k, min_cases))
    finally:
        cb.close()
    for warning in ans.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(_json_answer(ans, None if explain else top))
        return
    _print_answer(ans, top, explain)


def _check_retrieval(cb: Any, k: Optional[int], min_cases: Optional[int]) -> None:
    """``--k`` below the case base's ``min_cases``, or ``--min-cases`` above its ``k``: a usage
    error (exit 2) naming the option, its value and the case base's bound, before anything is
    retrieved, as ``cbr casebase similarity`` words the same refusal (the value is the user's to
    change, even though the case base opened decides). Both given are checked against each
    other before the case base is opened."""
    from cbr.cli._errors import usage_error

    config = cb.similarity()
    if k is not None and min_cases is None and config.min_cases > k:
        raise usage_error(f"--k {k} is below the case base's min_cases ({config.min_cases}): give --k "
                          f"{config.min_cases} or more, or --min-cases {k} or less with it", "--k")
    if min_cases is not None and k is None and min_cases > config.fallback_k:
        raise usage_error(f"--min-cases {min_cases} is above the case base's k ({config.fallback_k}): "
                          f"give --min-cases {config.fallback_k} or less, or --k {min_cases} or more with it",
                          "--min-cases")


def _json_answer(ans: Any, top: Optional[int]) -> dict[str, Any]:
    """The answer of ``--json``: its derived numbers to 6 digits: the triple to 6 decimals that
    sum to 1 (:func:`~cbr.cli._output.json_triple`: ``0.113636``, not ``0.11363636363636363``),
    the mean similarity, each case's similarity and local similarities, and the feature values
    (pot odds, hand strength, ...; a feature stored as a 32-bit float has no more) to 6
    significant digits; counts and ids (integers), the weights and the threshold as they are."""
    from cbr.cli._output import json_ratio, json_triple

    def ratios(values: dict[str, Any]) -> dict[str, Any]:
        return {k: json_ratio(v) for k, v in values.items()}

    data = ans.to_dict(top=top)
    data["triple"] = dict(zip(data["triple"], json_triple(data["triple"].values())))
    data["features"] = ratios(data["features"])
    data["mean_similarity"] = json_ratio(data["mean_similarity"])
    for case in data["cases"]:
        case["similarity"] = json_ratio(case["similarity"])
        case["local"] = ratios(case["local"])
        if isinstance(case.get("features"), dict):
            case["features"] = ratios(case["features"])
    return data


def _answer(cb: Any, dp: Any, weighted: Optional[bool], opponents: Optional[list] = None,
            top: Optional[int] = None,
            retrieval: tuple[Optional[float], Optional[int], Optional[int]] = (None, None, None)) -> Any:
    from cbr.query.answer import answer

    return answer(cb, dp, weighted=weighted, opponents=opponents, top=top, threshold=retrieval[0], k=retrieval[1],
                  min_cases=retrieval[2])


def _opponent_models(given: Optional[list[str]], models: Optional[str]) -> Optional[list[tuple[float, ...]]]:
    """``cbr query --opponent``: each value is AGG,TIGHT,RISK or a player's name in ``--models``."""
    from cbr.cli._errors import usage_error

    if models is not None and not given:  # usage errors named as typer names its own: Invalid value for '--opponent'
        raise usage_error("the store where --opponent NAME is looked up, but no --opponent is given", "--models")
    if not given:
        return None
    parsed: list = []
    for text in given:
        parts = text.split(",")
        if len(parts) == 3 and all(_is_number(p) for p in parts):
            parsed.append(tuple(float(p) for p in parts))
        elif len(parts) != 1:
            raise usage_error(f"{text!r}: give three values AGG,TIGHT,RISK in 0..1 or a player's name in --models",
                              "--opponent")
        elif models is None:
            raise usage_error(f"{text!r} is a name: give --models STORE to look it up (or give AGG,TIGHT,RISK)",
                              "--opponent")
        else:
            parsed.append(text)
    if all(isinstance(p, tuple) for p in parsed):
        return parsed
    from cbr.errors import ConfigError
    from cbr.models.store import ModelStore
    from cbr.models.tracker import model_values

    with ModelStore.open(models, read_only=True) as store:
        known = store.players()
        for i, name in enumerate(parsed):
            if isinstance(name, tuple):
                continue
            if name not in known:  # the store's content, not the command line: an error (exit 1), not a usage one
                raise ConfigError(f"--opponent {name!r}: no such player in {models} "
                                  f"({counted(len(known), 'player')}; see cbr players inspect --store {models})")
            parsed[i] = model_values(store.model(name))
    return parsed


def _is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (one value of ``--opponent AGG,TIGHT,RISK``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _query_situation(g: Any, matchstate: Optional[str], hole: Optional[str], board: Optional[str],
                     dealt: Optional[int], in_hand: Optional[int], position: Optional[int], to_act: Optional[int],
                     committed: Optional[float], to_call: Optional[float], pot: Optional[float],
                     prev_bets: Optional[int]) -> Any:
    """The decision point of ``cbr query``'s options (or of one MATCHSTATE)."""
    from cbr.game.situation import described_situation

    if matchstate is not None:
        from cbr.acpc.matchstate import from_matchstate

        return from_matchstate(matchstate, g)
    from cbr.cli._output import busy

    with busy("finding a hand that reaches this spot"):  # seconds on a big table (up to 50,000 states)
        return described_situation(g, hole=hole, board=board, dealt=dealt, in_hand=in_hand, position=position,
                                   to_act=to_act, committed=committed, to_call=to_call, pot=pot,
                                   previous_round_bets=prev_bets)


#: The longest MATCHSTATE line read (bytes, without the line end): the ACPC protocol's limit.
MAX_MATCHSTATE_LINE = 4096


def _read_lines(source: str) -> Iterator[str]:
    """The lines of a MATCHSTATE file ('-': stdin), read one at a time as they are answered,
    each at most :data:`MAX_MATCHSTATE_LINE` bytes (so ``/dev/zero`` is one line too long, not
    a read without end); one-line errors naming the file."""
    from cbr.errors import LogFormatError

    name = "standard input" if source == "-" else source
    number = 0
    try:
        with (contextlib.nullcontext(sys.stdin.buffer) if source == "-" else open(source, "rb")) as fh:
            while True:
                raw = fh.readline(MAX_MATCHSTATE_LINE + 3)  # room for the line end (\r\n)
                if not raw:
                    return
                number += 1
                body = raw.rstrip(b"\r\n")
                if len(body) > MAX_MATCHSTATE_LINE:
                    raise LogFormatError(f"{name}: line {number} is longer than {MAX_MATCHSTATE_LINE:,} bytes; "
                                         "a MATCHSTATE is one short line")
                try:
                    yield body.decode("utf-8", errors="strict")
                except UnicodeDecodeError as exc:
                    raise LogFormatError(f"{name}: not UTF-8 text (line {number}, byte {exc.start + 1}); "
                                         "MATCHSTATE lines are ASCII") from None
    except OSError as exc:
        raise LogFormatError(f"{name}: cannot be read ({exc.strerror or exc})") from None


def _first_matchstate(lines: Iterator[str]) -> Optional[list[str]]:
    """The lines up to and with the first MATCHSTATE line (not blank, not a # comment), read
    from ``lines``; None when there is none."""
    ahead = []
    for line in lines:
        ahead.append(line)
        if line.strip() and not line.lstrip().startswith("#"):
            return ahead
    return None


def _query_lines(cb: Any, g: Any, lines: Iterable[str], weighted: Optional[bool], top: int, explain: bool,
                 as_json: bool, opponents: Optional[list] = None,
                 retrieval: tuple[Optional[float], Optional[int], Optional[int]] = (None, None, None)
                 ) -> tuple[int, int]:
    """Answer one MATCHSTATE per line (blank lines and '#' comments skipped); a bad line is
    reported on stderr as ``error: line N: ...`` and the others are still answered.
    Returns how many lines failed, and how many were read."""
    from cbr.acpc.matchstate import from_matchstate
    from cbr.cli._errors import error_line
    from cbr.errors import CBRError

    failed = number = 0
    warned: set[str] = set()
    for number, raw in enumerate(lines, start=1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            ans = _answer(cb, from_matchstate(text, g), weighted, opponents, top=None if explain else top,
                          retrieval=retrieval)
        except CBRError as exc:
            failed += 1
            typer.echo(f"error: line {number}: {error_line(exc)}", err=True)
            continue
        for warning in ans.warnings:
            if warning not in warned:
                warned.add(warning)
                typer.echo(f"warning: {warning}", err=True)
        if as_json:
            record = {"line": number, "matchstate": text, **_json_answer(ans, None if explain else top)}
            typer.echo(json.dumps(record, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o)))
        else:
            f, c, r = ans.triple
            typer.echo(f"line {number}: fold {f:.3f}   check/call {c:.3f}   bet/raise {r:.3f}   "
                       f"({ans.street}, {counted(ans.retrieved, 'case')})")
    return failed, number


def _print_answer(ans: Any, top: int, explain: bool) -> None:
    """The text output of one ``cbr query`` answer."""

    f, c, r = ans.triple
    bold, reset = ("\x1b[1m", "\x1b[0m") if sys.stdout.isatty() else ("", "")
    typer.echo(f"{bold}fold {f:.3f}   check/call {c:.3f}   bet/raise {r:.3f}{reset}   "
               f"({ans.street}, case base {ans.casebase})")
    if ans.fallback:
        reached = (f"no case reached similarity {ans.threshold}" if ans.min_cases == 1 else
                   f"fewer than {counted(ans.min_cases, 'case')} reached similarity {ans.threshold} ({ans.passed:,} did)")
        typer.echo(f"{reached}; the {ans.retrieved:,} most similar were used, "
                     f"mean similarity {ans.mean_similarity:.4f}")
    else:
        typer.echo(f"{counted(ans.passed, 'case')} with similarity >= {ans.threshold}, "
                   f"mean similarity {ans.mean_similarity:.4f}")
    data = ans.to_dict(top=top)
    rows = []
    for case in data["cases"]:
        prov = case.get("provenance") or {}
        rows.append([case["id"], case["similarity"], case["action"], prov.get("hole"), prov.get("board") or "-",
                     prov.get("history"), prov.get("player"),
                     f"{os.path.basename(prov.get('source') or '')}#{prov.get('hand_id', '')}"])  # full path: --json
    if rows:
        print_table(f"top {counted(len(rows), 'case')} (id: case_id in the SQL tables)",
                    ["id", "similarity", "action", "hole", "board", "betting", "player", "source#hand"], rows)
    if explain and data["cases"]:
        names = list(data["features"])
        # each case: its own value, then its local similarity to the query (value ~ similarity)
        expl_rows = [[n, data["weights"][n], data["features"][n],
                      *(f"{_num(case['features'][n])} ~{case['local'][n]:.3g}" for case in data["cases"])]
                     for n in names]
        print_table("per-feature similarity: each case's value ~ local similarity",
                    ["feature", "weight", "query", *(f"#{case['id']}" for case in data["cases"])], expl_rows)


def _num(x: float) -> str:
    return f"{x:.4g}"
