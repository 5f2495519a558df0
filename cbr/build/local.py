"""Build a case base from logs: parse -> replay -> features -> store (+ faiss indexes).

Every decision of a player whose hole cards the log shows becomes a case, with the hand's
outcome for that player (the log's payoff in small bets; unknown when the log has no
payoffs, see :func:`hand_outcome`). The slow part
(replay and hand features) runs over ``workers`` processes in chunks of hands; the
results are written in input order, so a build is reproducible whatever the worker count.
The case base appears only when everything succeeded (:class:`~cbr.store.CaseBaseWriter`).

>>> report = build_casebase(["../shared/data/logs/acpc/dealer_example_limit"],
...                         "casebases/acpc-limit")                     # doctest: +SKIP
>>> report.cases, report.hands                                          # doctest: +SKIP
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

# The pool helpers were born here; their names stay importable from this module.
from cbr.build.pools import (  # noqa: F401
    RESULT_POLL_SECONDS,
    STOP_GRACE,
    WORKER_SIGNALS,
    WorkerPool,
    held_for_workers,
    pool_context,
    pool_result,
    start_step,
    stop_pool,
    worker_started,
    workers_starting,
)
from cbr.errors import CBRError, ConfigError, counted
from cbr.game.gamedef import STREETS, GameDef
from cbr.logs.detect import LogSource, parse_source, parsers_left_out, scan_logs
from cbr.logs.record import HandRecord, ParseIssue, no_hand_read, skipped_hand
from cbr.logs.replay import replay
from cbr.logs.source import DEFAULT_MAX_FILE_SIZE
from cbr.plugins import load_feature_set
from cbr.store.indexes import default_similarity
from cbr.store.parts import decision_meta
from cbr.store.writer import CaseBaseWriter

Progress = Callable[..., None]
SourceRunner = Callable[..., None]  # see build_casebase(runner=...)
CHUNK_HANDS = 250


@dataclass
class BuildReport:
    """What a build did: hands read, cases per street, hands skipped with file:line."""

    path: str
    hands: int = 0
    decisions: int = 0
    cases: int = 0
    cases_per_street: dict[str, int] = field(default_factory=dict)
    skipped: list[ParseIssue] = field(default_factory=list)
    sources: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)  # what the case base cannot answer (cbr.store.honesty)
    games_left_out: dict[str, int] = field(default_factory=dict)  # hands per game that only_games left out

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0

    @property
    def files_skipped(self) -> int:
        """Files (or folders) not read at all, among ``skipped``."""
        return sum(1 for i in self.skipped if i.whole_file)

    @property
    def hands_skipped(self) -> int:
        """Hands skipped (a ``file:line`` each), among ``skipped``."""
        return sum(1 for i in self.skipped if i.hand_skipped)

    @property
    def lines_skipped(self) -> int:
        """Lines that are no hand at all (a ``file:line`` each), among ``skipped``."""
        return sum(1 for i in self.skipped if i.not_a_hand and not i.whole_file)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path, "sources": self.sources, "hands": self.hands,
            "decisions": self.decisions, "cases": self.cases,
            "cases_per_street": self.cases_per_street, "skipped": len(self.skipped),
            "hands_skipped": self.hands_skipped, "lines_skipped": self.lines_skipped,
            "files_skipped": self.files_skipped,
            "skipped_hands": [i.to_dict() for i in self.skipped],
            "seconds": round(self.seconds, 3), "hands_per_second": round(self.hands_per_second, 1),
            "warnings": list(self.warnings), "games_left_out": dict(self.games_left_out),
        }


@dataclass
class ChunkResult:
    """Cases of one chunk of hands, per street: features, and provenance columns;
    ``records``: the hand records the chunk finished (what the build's progress counts)."""

    rows: dict[int, Any]  # per street: (features, provenance columns), or an Arrow table of cases
    decisions: int
    hands: int
    skipped: list[ParseIssue]
    hand_of_row: dict[int, np.ndarray] = field(default_factory=dict)  # per street: each row's record index
    records: int = 0


_WORKER_FEATURES: Any = None


def _feature_set(feature_set: Any) -> Any:
    """A feature-set instance from a ``cbr.features`` plugin name, or the instance itself."""
    return load_feature_set(feature_set) if isinstance(feature_set, str) else feature_set


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _worker_init(feature_set: Any, parent: Optional[int] = None) -> None:
    """Worker start: die with the parent, leave Ctrl-C and SIGTERM to it (it stops the pool:
    :func:`~cbr.build.pools.worker_started`), and load the feature set once. Raises nothing:
    what failed is raised by the worker's tasks (:func:`~cbr.build.pools.start_step`)."""
    global _WORKER_FEATURES
    worker_started(parent)
    with start_step():
        _WORKER_FEATURES = _feature_set(feature_set)


def cases_of_hands(records: Sequence[HandRecord], feature_set: Any,
                   players: Optional[frozenset[str]] = None,
                   tables: Optional[Sequence[Any]] = None) -> ChunkResult:
    """Replay hands and compute the feature rows of their known-card decisions.

    A pure function of its input (what each worker process runs). A hand that does not
    replay is reported, not raised. ``tables``: per record, the player-model values a
    feature set with ``needs_player_models`` takes (``row(dp, table)``; :mod:`cbr.build.ordered`).
    """
    per_street: dict[int, list] = {0: [], 1: [], 2: [], 3: []}
    table_of: dict[int, list] = {0: [], 1: [], 2: [], 3: []}
    outcomes: dict[int, list[float]] = {0: [], 1: [], 2: [], 3: []}
    which: dict[int, list[int]] = {0: [], 1: [], 2: [], 3: []}
    skipped: list[ParseIssue] = []
    decisions = hands = 0
    for i, record in enumerate(records):
        try:
            dps = replay(record)
        except CBRError as exc:
            skipped.append(skipped_hand(record, exc))
            continue
        hands += 1
        decisions += len(dps)
        for dp in dps:
            if dp.hole is None or dp.action not in ("f", "c", "r"):
                continue
            if players is not None and dp.player not in players:
                continue
            per_street[dp.street].append(dp)
            if tables is not None:
                table_of[dp.street].append(tables[i])
            outcomes[dp.street].append(hand_outcome(record, dp.position))
            which[dp.street].append(i)
    prepare = getattr(feature_set, "prepare", None)
    if callable(prepare):  # batch hand features (CASPER: one potential enumeration per board)
        prepare([dp for dps in per_street.values() for dp in dps])
    rows = {}
    for street, dps in per_street.items():
        if dps:
            if tables is None:
                X = np.vstack([feature_set.row(dp) for dp in dps]).astype(np.float32, copy=False)
            else:
                X = np.vstack([feature_set.row(dp, t) for dp, t in zip(dps, table_of[street])]).astype(
                    np.float32, copy=False)
            meta = decision_meta(dps)
            meta["outcome"] = outcomes[street]
            rows[street] = (X, meta)
    return ChunkResult(rows, decisions, hands, skipped,
                        {street: np.asarray(which[street], dtype=np.int64) for street in rows}, len(records))


def hand_outcome(record: HandRecord, position: int) -> float:
    """The hand's net result for ``position`` in small bets of the hand's game, from the
    log's payoffs (checked against the rules engine by replay); NaN when the log gives none.

    >>> from cbr.game import preset
    >>> from cbr.logs.record import Action
    >>> rec = HandRecord(source="x.log", line=1, hand_id="0", game=preset("holdem.limit.2p"),
    ...     players=("a", "b"), hole_cards=((51, 50), None), board=(),
    ...     actions=(Action(0, 0, "f"),), payoffs=(-5.0, 5.0))
    >>> hand_outcome(rec, 0), hand_outcome(rec, 1), rec.game.small_bet
    (-0.5, 0.5, 10.0)
    """
    if record.payoffs is None:
        return float("nan")
    return float(record.payoffs[position]) / record.game.small_bet


def worker_died(exc: BaseException) -> CBRError:
    """The error of a build whose worker process died (``exc``: the pool's ``BrokenProcessPool``).

    >>> print(worker_died(RuntimeError("1 of 2 worker processes ended before the work was done")))
    a worker process of the build died (1 of 2 worker processes ended before the work was done); killed from outside, or out of memory? Nothing was written
    """
    return CBRError(f"a worker process of the build died ({exc}); killed from outside, "
                    f"or out of memory? Nothing was written")


def _worker_chunk(records: Sequence[HandRecord], players: Optional[frozenset[str]],
                  tables: Optional[Sequence[Any]] = None) -> ChunkResult:
    return cases_of_hands(records, _WORKER_FEATURES, players, tables)


BETTING_KINDS = {"limit": "limit", "nolimit": "no-limit"}


def keeps_game(game: GameDef, only: Optional[frozenset[str]]) -> bool:
    """Whether a build with ``only_games=only`` keeps a hand of ``game``: ``only`` holds betting
    kinds (``limit``, ``nolimit``) and game names; None keeps every game.

    >>> from cbr.game import preset
    >>> g = preset("holdem.limit.2p")
    >>> keeps_game(g, frozenset({"limit"})), keeps_game(g, frozenset({"holdem.limit.2p"})), keeps_game(g, frozenset({"nolimit"}))
    (True, True, False)
    """
    return only is None or game.betting in only or game.name in only


def mixed_games_error(games: Sequence[dict[str, Any]]) -> Optional[str]:
    """Why the games of a build may not share a case base (None when they may): limit and
    no-limit hands together. CASPER's features count fixed bets, so no-limit bet sizes are
    lost, and the two games' decisions would answer for each other.

    >>> mixed_games_error([{"name": "holdem.limit.2p", "betting": "limit"}, {"name": "nl6", "betting": "nolimit"}]).split(":")[0]
    'the logs mix games of two kinds, limit (holdem.limit.2p) and no-limit (nl6)'
    >>> mixed_games_error([{"name": "holdem.limit.2p", "betting": "limit"}, {"name": "casper.9p", "betting": "limit"}])
    """
    kinds: dict[str, list[str]] = {}
    for g in games:
        kinds.setdefault(str(g.get("betting", "limit")), []).append(str(g.get("name")))
    if len(kinds) < 2:
        return None
    found = " and ".join(f"{BETTING_KINDS.get(k, k)} ({', '.join(sorted(n))})" for k, n in sorted(kinds.items()))
    return (f"the logs mix games of two kinds, {found}: one case base holds one kind (the features count fixed bets, "
            f"so the kinds would answer for each other); keep one with --only-games "
            f"{' or --only-games '.join(sorted(kinds))}, or build them together with --mixed-games")


def _chunks(items: Iterable[HandRecord | ParseIssue], size: int, issues: list[ParseIssue], names: set[str],
            only_games: Optional[frozenset[str]] = None,
            left_out: Optional[dict[str, int]] = None) -> Iterator[list[HandRecord]]:
    chunk: list[HandRecord] = []
    for item in items:
        if isinstance(item, ParseIssue):
            issues.append(item)
            continue
        if not keeps_game(item.game, only_games):
            if left_out is not None:
                left_out[item.game.name] = left_out.get(item.game.name, 0) + 1
            continue
        names.update(item.players)
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.normpath(os.path.abspath(a)) == os.path.normpath(os.path.abspath(b))


def nothing_to_read(paths: Sequence[Any], sources: Sequence[LogSource]) -> str:
    """The error of a build whose paths hold no log it can read, naming each path once: the
    paths when nothing was found in them; else the first source left out and why (a file
    given itself is not named again as the place it was found in), and how many more.

    >>> nothing_to_read(["logs"], [])
    'no log files found in logs'
    >>> nothing_to_read(["big.log"], [LogSource("big.log", None, "54.55 KiB, larger than the 10 KiB limit per file")])
    'no log to build from: big.log: 54.55 KiB, larger than the 10 KiB limit per file'
    >>> nothing_to_read(["d"], [LogSource("d/a.txt", None), LogSource("d/b.txt", None)])
    'no log to build from in d: d/a.txt: not a log any parser recognises (and 1 more skipped; cbr logs inspect lists them)'
    """
    given = ", ".join(str(p) for p in paths)
    if not sources:
        return f"no log files found in {given}"
    first = sources[0]
    where = "" if any(_same_path(first.path, os.fspath(p)) for p in paths) else f" in {given}"
    more = f" (and {len(sources) - 1} more skipped; cbr logs inspect lists them)" if len(sources) > 1 else ""
    return f"no log to build from{where}: {first.path}: {first.problem or 'not a log any parser recognises'}{more}"


def count_hand_records(sources: Sequence[LogSource], max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE) -> int:
    """The hand records the sources hold (a quick first pass of the parsers: the total of a
    build's progress; hands that do not replay are records too).

    >>> from cbr.logs.detect import scan_logs
    >>> count_hand_records(scan_logs(["../shared/data/logs/acpc/dealer_example_limit"]))
    2000
    """
    return sum(isinstance(item, HandRecord) for source in sources
               for item in parse_source(source, max_file_size=max_file_size))


def _add_source(writer: CaseBaseWriter, source: LogSource) -> None:
    """Record a source read (its hash) in the manifest."""
    if source.skipped:
        return
    where = Path(source.path)
    if where.is_file():
        writer.add_source(source.path, format=source.format)
    elif (where / "hdb").is_file():  # a database folder (IRC): hash its index file
        writer.add_source(where / "hdb", name=source.path, format=source.format)


def build_casebase(
    paths: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    feature_set: Any = "casper",
    players: Optional[Iterable[str]] = None,
    workers: int = 1,
    format: Optional[str] = None,
    similarity: Any = None,
    overwrite: bool = False,
    name: Optional[str] = None,
    progress: Optional[Progress] = None,
    max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE,
    runner: Optional[SourceRunner] = None,
    only_games: Optional[Iterable[str]] = None,
    mixed_games: bool = False,
) -> BuildReport:
    """Build the case base ``out`` from the logs under ``paths``.

    ``feature_set`` is a ``cbr.features`` plugin name or a feature-set instance (pickled
    to the worker processes); a feature set with ``needs_player_models`` gets the values of
    player models fed the hands in order, in this process (:mod:`cbr.build.ordered`: the same
    case base whatever ``workers``), and its default similarity; ``players`` keeps only the decisions of those player names; ``workers`` > 1 computes
    features in that many processes; ``similarity`` is a ``SimilarityConfig`` or a TOML
    path (default: the feature set's, :func:`cbr.store.indexes.default_similarity`: a feature
    set with columns of its own and no ``default_similarity()`` raises :class:`ConfigError`
    before any log is read).
    ``progress(n, total=None)``: first ``progress(0, total=T)`` with the hand records of
    the logs (counted by a quick first pass of the parsers, made only when ``progress`` is
    given), then ``progress(n)`` as each chunk of ``n`` records is
    written, for local and distributed builds alike; the calls add up to the total.
    ``runner``: computes the cases of the sources elsewhere (``workers`` is then unused):
    called as ``runner(sources, feature_set, players, writer, consume, names,
    chunk_hands=, max_file_size=, only_games=, left_out=)`` (``left_out``: a dict to add the
    hands left out per game to), it must pass the rows to ``consume`` cut into the
    chunks of this build, in input order (:func:`cbr.build.on_dask.build_casebase_on_dask`).
    Files are found as :func:`cbr.logs.detect.scan_logs` finds them (the same file given
    twice is read once; files that are not logs, not regular files or larger than
    ``max_file_size`` bytes are skipped and listed in ``skipped`` with the reason).
    ``only_games``: keep only the hands of these games (betting kinds ``limit``, ``nolimit``,
    or game names, :func:`keeps_game`); the hands left out are counted per game in
    ``games_left_out``. Limit and no-limit hands are refused in one case base
    (:func:`mixed_games_error`, a :class:`CBRError` naming the games found; nothing is
    written) unless ``mixed_games``.

    Raises :class:`CBRError` when no case could be built, saying why (the reasons
    ``cbr logs inspect`` gives for the files and hands skipped), and when none of the
    ``players`` names appears in the logs; names of ``players`` that do not appear while
    others do are listed in ``warnings``. Bad hands are only reported.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    t0 = time.perf_counter()
    sources = scan_logs(paths, format, max_file_size=max_file_size)
    report = BuildReport(path=str(out), sources=sum(1 for s in sources if not s.skipped))
    not_detecting = parsers_left_out(format)  # said once: their files are skipped as no log
    if not report.sources:
        raise CBRError(nothing_to_read(paths, sources) + "".join(f"; {note}" for note in not_detecting))
    report.warnings.extend(not_detecting)
    wanted = frozenset(players) if players else None
    games_wanted = frozenset(only_games) if only_games else None
    left_out: dict[str, int] = {}
    fs = _feature_set(feature_set)
    models = None
    if getattr(fs, "needs_player_models", False):  # opponent-aware cases: models fed in order
        from cbr.build.ordered import OrderedModels

        if runner is not None:
            raise ConfigError(f"feature set {getattr(fs, 'name', feature_set)!r} needs player models fed the "
                              f"hands in order, which a distributed build does not do yet: build it without "
                              f"a scheduler", field="scheduler")
        models = OrderedModels()
    if similarity is None:  # the feature set's default, found (or refused) before the logs are read
        similarity = default_similarity(fs)
    issues: list[ParseIssue] = []
    names: set[str] = set()
    per_street = {0: 0, 1: 0, 2: 0, 3: 0}
    stream = (item for source in sources for item in parse_source(source, max_file_size=max_file_size))
    counted = {"total": 0, "done": 0}  # hand records: in the logs, written so far
    if progress is not None:
        counted["total"] = count_hand_records(sources, max_file_size)
        progress(0, total=counted["total"])
    with CaseBaseWriter(out, feature_set=fs, similarity=similarity, overwrite=overwrite, name=name,
                        extra={"built_by": "cbr build", "players": sorted(wanted) if wanted else None}) as writer:
        for src in sources:
            _add_source(writer, src)

        def consume(result: ChunkResult) -> None:
            report.hands += result.hands
            report.decisions += result.decisions
            issues.extend(result.skipped)
            for street, rows in sorted(result.rows.items()):
                if isinstance(rows, tuple):
                    X, meta = rows
                    writer.add_rows(street, X, meta.pop("actions"), **meta)
                else:  # an Arrow table of cases (a runner's): renumbered by the writer
                    writer.add_table(street, rows)
                per_street[street] += len(rows[0]) if isinstance(rows, tuple) else rows.num_rows
            if progress is not None and result.records:
                counted["done"] += result.records
                progress(result.records)

        def games_of(chunk: Sequence[Any]) -> None:
            """The chunk's games into the manifest; a mix of kinds refused at once (not after the work)."""
            known = len(writer.games)
            for record in chunk:
                writer.add_game(record.game)
            if not mixed_games and len(writer.games) != known:
                mixed = mixed_games_error(writer.games)
                if mixed is not None:
                    raise CBRError(mixed)

        chunks = _chunks(stream, CHUNK_HANDS, issues, names, games_wanted, left_out)
        if runner is not None:  # e.g. on Dask (cbr.build.on_dask)
            runner(sources, feature_set, wanted, writer, consume, names,
                   chunk_hands=CHUNK_HANDS, max_file_size=max_file_size, only_games=games_wanted, left_out=left_out)
        elif workers == 1:
            for chunk in chunks:
                games_of(chunk)
                consume(cases_of_hands(chunk, fs, wanted, models.tables(chunk) if models else None))
        else:
            # Workers die with this process (even on SIGKILL) and are stopped at once on
            # any error, Ctrl-C or SIGTERM (raised here as KeyboardInterrupt by the CLI).
            context = pool_context()
            pool = WorkerPool(workers, mp_context=context, initializer=_worker_init,
                              initargs=(feature_set, os.getpid()))
            try:
                pending = []
                for chunk in chunks:
                    games_of(chunk)
                    with workers_starting(context.get_start_method()):
                        pending.append(pool.submit(_worker_chunk, chunk, wanted,
                                                   models.tables(chunk) if models else None))
                    while len(pending) > 2 * workers:
                        consume(pool_result(pending.pop(0), pool))
                for fut in pending:
                    consume(pool_result(fut, pool))
            except BrokenProcessPool as exc:
                stop_pool(pool)
                raise worker_died(exc) from exc
            except BaseException:
                stop_pool(pool)
                raise
            pool.shutdown(wait=True)
        if progress is not None and counted["done"] != counted["total"]:  # a log changed after it was counted
            progress(0, total=counted["done"])
        report.cases_per_street = {STREETS[s]: n for s, n in per_street.items()}
        report.cases = sum(report.cases_per_street.values())
        report.skipped = issues
        report.games_left_out = dict(sorted(left_out.items()))
        if games_wanted is not None:
            met = {g["name"] for g in writer.games} | set(left_out)
            unknown = sorted(w for w in games_wanted if w not in BETTING_KINDS and w not in met)
            if not writer.games and left_out:
                raise CBRError(f"no hands of the --only-games games ({', '.join(sorted(games_wanted))}) in the logs; "
                               f"games there: {', '.join(sorted(left_out))}")
            if unknown:
                report.warnings.append(f"--only-games names not found in the logs: {', '.join(unknown)}")
        mixed = None if mixed_games else mixed_games_error(writer.games)
        if mixed is not None:
            raise CBRError(mixed)
        if wanted:
            missing = sorted(wanted - names)
            if len(missing) == len(wanted) and names:
                seen = sorted(names)
                raise CBRError(f"no cases: none of the players to keep ({', '.join(missing)}) appears in the logs; "
                               f"players there include {', '.join(seen[:8])}"
                               + (f" and {len(seen) - 8} more" if len(seen) > 8 else ""), field="players")
            if missing:
                report.warnings.append(f"--only-players names not found in the logs: {', '.join(missing)}")
        if report.hands == 0:
            raise CBRError(no_hand_read(paths, str(issues[0]) if issues else None, len(issues)))
        if report.cases == 0:
            raise CBRError(no_case_built(report.hands, issues, sorted(wanted) if wanted else None))
    report.warnings.extend(writer.warnings)
    report.seconds = time.perf_counter() - t0
    return report


def no_case_built(hands: int, skipped: Sequence[ParseIssue], players: Optional[list[str]] = None) -> str:
    """The error of a build that read hands but made no case: how many hands, and what was
    not read (the files left out, by count and the first one with its reason; the hands
    skipped, by count), since a file left out may be where the cases were.

    >>> from cbr.logs.record import ParseIssue
    >>> no_case_built(1, [ParseIssue("big.log", 0, "55 KB, larger than the 10 KB limit per file")])
    'no cases: 1 hand read, none with a decision of a player whose hole cards are known; 1 file not read: big.log: 55 KB, larger than the 10 KB limit per file'
    >>> no_case_built(2_000, [ParseIssue("a.log", 4, "x"), ParseIssue("b", 0, "y"), ParseIssue("c", 0, "z")], ["bob"])
    'no cases: 2,000 hands read, none with a decision of a player whose hole cards are known among bob; 2 files not read (the first: b: y), 1 hand skipped'
    """
    text = (f"no cases: {counted(hands, 'hand')} read, none with a decision of a player "
            f"whose hole cards are known" + (f" among {', '.join(players)}" if players else ""))
    files = [i for i in skipped if i.whole_file]
    hands_skipped = sum(1 for i in skipped if i.hand_skipped)
    lines = sum(1 for i in skipped if i.not_a_hand and not i.whole_file)
    said = []
    if len(files) == 1:
        said.append(f"1 file not read: {files[0]}")
    elif files:
        said.append(f"{counted(len(files), 'file')} not read (the first: {files[0]})")
    if hands_skipped:
        said.append(f"{counted(hands_skipped, 'hand')} skipped")
    if lines:
        said.append(f"{counted(lines, 'line')} skipped (not hands)")
    return text + ("; " + ", ".join(said) if said else "")
