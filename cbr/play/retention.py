"""Retention during play: the case base grows from the hands a bot plays.

After every hand, a :class:`Retainer` keeps, as one durable commit (one retention-log
record, :mod:`cbr.store.retention_log`): every decision of the seats it retains for (the
case-based bots, a human at the table) and every decision of the other players whose
hole cards became known at a showdown, as CASPER grew its case base from the players it
met. Each case carries the hand's outcome for the player who acted (small bets) and its
provenance: ``source = "retained"``, ``match_id``, ``seat``, ``opponents`` (the other
seats' names) and ``retained_at`` (UTC). A process killed at any moment loses at most the
hand in flight.

The retainer writes through the case-based bot's own open case base, so the bot's very
next retrieval sees the new cases (the bot reads the street views the case base extends in
place, :mod:`cbr.store.street_view`). A hand played at a table comes with its decision records
(:class:`~cbr.policies.base.Decision`): it is not replayed, and a decision the bot made on
this case base keeps the feature row it was made from as its case's row (computed once, the
same bit for bit). :meth:`Retainer.close` compacts the retention log into Parquet parts.

>>> import tempfile
>>> from cbr.play.match import run_match
>>> from cbr.policies.cbr_policy import CBRPolicy
>>> root = tempfile.mkdtemp()
>>> copy_casebase("default", f"{root}/mine")
PosixPath('.../mine')
>>> bot = CBRPolicy(casebase=f"{root}/mine", seed=1)
>>> before = bot.open().count()
>>> r = run_match([bot, "call"], 4, seed=3, retain=True)
>>> bot.close(); after = CBRPolicy(casebase=f"{root}/mine").open().count()
>>> after - before == r.retained > 0
True
"""
from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from cbr.build.local import hand_outcome
from cbr.errors import CaseBaseError, counted
from cbr.game.gamedef import STREETS
from cbr.logs.record import HandRecord
from cbr.logs.replay import replay
from cbr.store import SHIPPED_CASEBASES, is_shipped, resolve_casebase, shipped_part, shipped_refusal

if TYPE_CHECKING:  # pragma: no cover
    from cbr.policies.base import Policy
    from cbr.store import CaseBase

__all__ = ["Retainer", "ReplayedHands", "new_match_id", "copy_casebase", "retaining_bots", "shown_positions",
           "check_retention_target", "start_retention", "names_a_path", "retention_target", "CasebaseCopy",
           "prepare_retention_target", "check_copy_of"]


def new_match_id() -> str:
    """A fresh match id: UTC time and random hex, e.g. ``20261122T180501-3f9a1c``.

    >>> len(new_match_id().split("-")[1])
    6
    """
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def shown_positions(record: HandRecord) -> set[int]:
    """Positions whose hole cards a table sees after the hand and the record holds: those
    in :attr:`HandRecord.showdown` with known cards.

    >>> from cbr.game import preset
    >>> from cbr.logs.record import Action
    >>> rec = HandRecord(source="x", line=1, hand_id="0", game=preset("holdem.limit.2p"),
    ...     players=("a", "b"), hole_cards=((51, 50), None), board=(), actions=())
    >>> shown_positions(rec)
    {0}
    """
    return {p for p in record.showdown if record.hole_cards[p] is not None}


def check_retention_target(path: Path) -> None:
    """Refuse to retain into a shipped case base and into a read-only directory,
    about the field ``retain_into`` (the copy to retain into instead)."""
    p = Path(path).resolve()
    if is_shipped(p):
        raise CaseBaseError(f"the shipped case base {p.name!r} is never written to; retain into a copy, "
                            f"made from it on first use", field="retain_into")
    if not os.access(p, os.W_OK):
        raise CaseBaseError(f"case base {p} is read-only; retain into a copy", field="retain_into")


def copy_casebase(source: str | Path, target: str | Path, *, exist_ok: bool = False) -> Path:
    """Copy case base ``source`` (a name or a path) to ``target`` (a bare name: under
    ``./casebases/``; a path: that folder, :func:`retention_target`; refused if it exists),
    skipping lock files; returns the new path. The copy is made beside the target and renamed into place, so a crash never
    leaves a half copy under the target's name. ``exist_ok``: a target that another thread or
    process made meanwhile (two retentions into one new name at once) is taken as it is,
    this copy dropped. The copy's manifest records where it came from (``origin``: the
    source's name and path, the cases and bytes copied, when, and the source's
    :func:`~cbr.store.manifest.content_id`)."""
    from cbr.store import CaseBase

    src = resolve_casebase(str(source))
    dst = retention_target(target)
    if dst.exists():
        if exist_ok and (dst / "manifest.json").is_file():
            return dst
        raise CaseBaseError(f"{dst} exists already; retain into it by name, or choose another name")
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.parent / f".{dst.name}.copy-{secrets.token_hex(4)}"
    try:
        with CaseBase.open(src) as cb:  # the reader lock: no writer retires files under us
            if cb.writable and cb.manifest.log:  # the copy starts with every case in parts
                cb.compact()
            shutil.copytree(src, tmp, ignore=shutil.ignore_patterns(".write.lock", ".tmp-*", "*.tmp-*"))
        from cbr.store.manifest import now_utc, origin_of, read_manifest, write_manifest

        m = read_manifest(tmp)
        size = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
        m.origin = {**origin_of(m), "path": str(src.resolve()), "bytes": size, "copied": now_utc()}
        m.name = dst.name
        write_manifest(tmp, m)
        try:
            os.replace(tmp, dst)
        except OSError:
            if not (dst / "manifest.json").is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
            if not exist_ok:
                raise CaseBaseError(f"{dst} was made by another process meanwhile; retain into it by name, or "
                                    "choose another name") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dst


@dataclass(frozen=True)
class CasebaseCopy:
    """A copy :func:`prepare_retention_target` made: from ``source`` to ``target``, with the
    ``cases`` and ``bytes`` copied.

    >>> CasebaseCopy(Path("/x/default"), Path("/y/learned"), 9572, 100_800_000).line()
    "copied case base 'default' (9,572 cases, 100.8 MB) to /y/learned; the case-based bots play from the copy"
    """

    source: Path
    target: Path
    cases: int
    bytes: int

    def line(self) -> str:
        return (f"copied case base {self.source.name!r} ({counted(self.cases, 'case')}, {self.bytes / 1e6:.1f} MB) to "
                f"{self.target}; the case-based bots play from the copy")


def _log_sources(sources: Sequence[dict[str, Any]]) -> set[tuple[Any, Any]]:
    return {(e.get("source"), e.get("sha256")) for e in sources if e.get("sha256")}


class CopyClashError(CaseBaseError):
    """:func:`check_copy_of`'s refusal, with what it is about: ``target`` (the case base to retain
    into), ``base`` (the one the bots play from) and ``origin`` (the name of the case base
    ``target`` is a copy of; None: it records none), so a caller can say it in its own words (the
    server names case bases by their served names, never by a path)."""

    def __init__(self, message: str, *, target: Path, base: Path, origin: Optional[str]) -> None:
        super().__init__(message, field="retain_into")
        self.target, self.base, self.origin = target, base, origin


def check_copy_of(target: Path, base: Path) -> None:
    """Refuse to retain into the existing case base ``target`` for bots that play from
    ``base``, unless it is ``base`` or a copy of it: its manifest's ``origin`` names ``base``
    (:func:`~cbr.store.manifest.is_copy_of`: the folder it was copied from, or the same case base
    by name and content wherever it now lies, as a reinstall moves the shipped ones); a copy made
    before origins were recorded: the same feature set and every log ``base`` was built from.
    Retaining into a copy of another case base would make the bots play from that one's cases."""
    from cbr.store.manifest import is_copy_of, read_manifest

    if target.resolve() == base.resolve():
        return
    m = read_manifest(target)
    b = read_manifest(base)
    if m.origin is not None:
        if is_copy_of(m, base, b):
            return
        what = f"a copy of case base {m.origin['name']!r} ({m.origin['path']})"
        origin: Optional[str] = str(m.origin["name"])
    else:
        origin = None
        if m.feature_set == b.feature_set and _log_sources(b.sources) and \
                _log_sources(b.sources) <= _log_sources(m.sources):
            return
        what = "no copy of it (its manifest names no origin, and it lacks logs that one was built from)"
    raise CopyClashError(f"the case base to retain into, {target}, is {what}, while the case-based bots play from "
                         f"{base}; retaining into it would make them play from its cases. Retain into another "
                         f"name (a new copy), or play from it: cbr:casebase={target}", target=target, base=base,
                         origin=origin)


def prepare_retention_target(policies: Sequence["Policy"], into: str | Path) -> tuple[Path, Optional[CasebaseCopy]]:
    """The case base ``--retain-into INTO`` means for the case-based bots among ``policies``
    (absolute, :func:`retention_target`), and the copy made when it did not exist (None when it
    did: then it must be their case base or a copy of it, :func:`check_copy_of`). Raises
    :class:`~cbr.errors.CaseBaseError` for a refused target. The bots are not changed."""
    seats = retaining_bots(policies)
    bases = list(dict.fromkeys(Path(policies[s].casebase_path).resolve() for s in seats))  # type: ignore[attr-defined]
    if not bases:
        raise CaseBaseError("retention needs a case-based bot at the table (a `cbr` seat): its case base "
                            "is the one that grows")
    if len(bases) > 1:  # each would then play from a copy of the first one's: another bot
        raise CaseBaseError(f"retaining into a copy copies one case base, and the case-based bots here play "
                            f"from {len(bases)} ({', '.join(b.name for b in bases)}): retain with one such bot, "
                            f"or let them play from one case base (cbr:casebase=NAME for each)", field="retain_into")
    target = retention_target(into)  # absolute from here on: never looked up as a name again

    part = shipped_part(target)  # in an editable install ./casebases is the package's folder
    if part is not None and part not in SHIPPED_CASEBASES:  # (default, expert: the refusals below)
        shown = str(into) if names_a_path(into) else str(Path("casebases") / str(into))
        raise CaseBaseError(shipped_refusal(shown, part, "case base", instead="name or path"), field="retain_into")
    if not target.exists() and not names_a_path(into) and str(into) in SHIPPED_CASEBASES:
        raise CaseBaseError(f"{str(into)!r} is the name of a shipped case base: a copy at {target} would stand "
                            f"in for it in every later run from this folder; retain into another name")
    if target.exists():
        if is_shipped(target) and target.resolve() != bases[0].resolve():  # (the bots' own: check_retention_target)
            raise CaseBaseError(f"the shipped case base {target.name!r} is never written to; retain into another "
                                f"name: a copy of the case base the bots play from ({bases[0].name!r}) is made "
                                f"under it on first use", field="retain_into")
        check_copy_of(target, bases[0])
        return target, None
    if names_a_path(into):  # a path's folder must exist (the output-path rule)
        from cbr.logs.output import check_output_path

        check_output_path(target, what="case base", folder=True)
    copy_casebase(bases[0], target, exist_ok=True)  # another retention into the same new name may win the race
    from cbr.store.manifest import read_manifest

    origin = read_manifest(target).origin or {}
    return target, CasebaseCopy(bases[0], target, int(origin.get("cases", 0)), int(origin.get("bytes", 0)))


def names_a_path(target: str | os.PathLike[str]) -> bool:
    """Whether ``target`` (what ``--retain-into`` was given) is a path rather than a bare
    case-base name: a ``Path``, or text with a separator in it or starting with ``.``.

    >>> names_a_path("mine"), names_a_path("./mine"), names_a_path("runs/mine"), names_a_path(".mine")
    (False, True, True, True)
    """
    if not isinstance(target, str):
        return True
    return os.sep in target or bool(os.altsep and os.altsep in target) or target.startswith(".")


def retention_target(target: str | os.PathLike[str]) -> Path:
    """The folder ``--retain-into TARGET`` means, as an absolute path: a path
    (:func:`names_a_path`) is that path; a bare name is ``./casebases/NAME``.

    >>> retention_target("./mine") == Path.cwd() / "mine", retention_target("mine") == Path.cwd() / "casebases" / "mine"
    (True, True)
    """
    if not str(os.fspath(target)).strip():
        raise CaseBaseError("the case base to retain into has an empty name", field="retain_into")
    if names_a_path(target):
        return Path(os.path.abspath(os.fspath(target)))
    return Path.cwd() / "casebases" / str(target)


def _with_hole(dp: Any, hole: Optional[tuple[int, int]]) -> Any:
    """``dp`` holding ``hole``: a decision point kept while playing shows another seat's cards
    only once they are shown (the client's view of an opponent's decision); its table state
    is the same."""
    if dp.hole is not None or hole is None:
        return dp
    from dataclasses import replace

    return replace(dp, hole=tuple(hole))


def retaining_bots(policies: Sequence["Policy"]) -> list[int]:
    """Seats whose policy can retain (has ``open()`` giving a case base and a ``retain`` flag)."""
    return [s for s, p in enumerate(policies) if getattr(p, "can_retain", False)]


@dataclass(frozen=True)
class ReplayedHands:
    """Hands replayed by :meth:`Retainer.replay_hands`: the decisions to keep, with their
    outcomes, seats and opponents (one each), and how many hands had any."""

    dps: list
    outcomes: list
    seats: list
    opponents: list
    hands: int


class Retainer:
    """Keeps the hands of one match in one case base (see the module docstring).

    ``cb``: the open, writable case base (the case-based bot's own handle); ``keep``: the
    seats whose every decision is kept; ``names``: the seat names; ``match_id``: shared by
    all its cases. :attr:`retained` counts the cases kept, :attr:`hands` the hands.

    ``gate``: a similarity gate against near-duplicates (None, the default: every decision is
    kept): a decision is skipped when the case base already holds a case of the same street
    and action at least ``gate`` similar to it (the street's grouped scan with ``gate`` as its
    threshold, exact); :attr:`skipped` counts them.
    """

    def __init__(self, cb: "CaseBase", keep: Sequence[int], names: Sequence[str], *,
                 match_id: Optional[str] = None, gate: Optional[float] = None) -> None:
        check_retention_target(cb.path)
        if gate is not None and not 0.0 < gate <= 1.0:
            raise CaseBaseError(f"the retention gate is a similarity in (0, 1], got {gate}")
        self.cb = cb
        self.keep = set(keep)
        self.names = list(names)
        self.match_id = match_id or new_match_id()
        self.retained = 0
        self.skipped = 0
        self.hands = 0
        self.gate = gate
        self._codes: dict[str, Any] = {}  # street -> the action code of every case, by index row

    def hand(self, record: HandRecord, seats: Optional[Sequence[int]] = None,
             decisions: Optional[Sequence[Any]] = None) -> int:
        """Retain a finished hand. ``record``: as the dealer saw it (every hole card) or as
        a seat saw it; ``seats[pos]``: the seat at position ``pos`` (None: the record's
        positions are seats). Returns the number of cases kept. ``decisions``: the hand's
        decision records (:class:`~cbr.policies.base.Decision`) when it was played here: the
        record is then not replayed, and each decision made on this case base keeps its own
        feature row; None: the record is replayed (a hand from a log). Raises
        :class:`~cbr.errors.CBRError` if the hand does not replay (a dealer bug) or the
        write fails."""
        cases = self._cases(record, seats, decisions)
        if cases is None:
            return 0
        return self._commit(*cases, hands=1)

    def replay_hands(self, records: Sequence[HandRecord]) -> "ReplayedHands":
        """The decisions of ``records`` (positions are seats) this retainer keeps, replayed
        and ready for :meth:`retain_hands`; writes nothing (a caller may replay outside its
        own lock). Raises :class:`~cbr.errors.CBRError` for a hand that does not replay."""
        prepared = [c for c in (self._cases(r, None, None) for r in records) if c is not None]
        merged: tuple[list, list, list, list] = ([], [], [], [])
        for case in prepared:
            for into, part in zip(merged, case[:4]):
                into.extend(part)
        return ReplayedHands(*merged, hands=len(prepared))

    def retain_hands(self, hands: "Sequence[HandRecord] | ReplayedHands", *,
                     before_write: Optional[Callable[[], None]] = None) -> int:
        """Retain several finished hands (records, or :meth:`replay_hands`' result) as ONE
        durable commit: every hand is replayed first, so a hand that does not replay raises
        (:class:`~cbr.errors.CBRError`) before anything is written. ``before_write``: called
        after the replays, just before the write; what it raises stops the write (a caller's
        time limit). Returns the cases kept."""
        replayed = hands if isinstance(hands, ReplayedHands) else self.replay_hands(hands)
        if before_write is not None:
            before_write()
        if not replayed.dps:
            return 0
        return self._commit(replayed.dps, replayed.outcomes, replayed.seats, replayed.opponents,
                            [None] * len(replayed.dps), hands=replayed.hands)

    def _cases(self, record: HandRecord, seats: Optional[Sequence[int]],
               decisions: Optional[Sequence[Any]]) -> Optional[tuple[list, list, list, list, list]]:
        """The decisions of ``record`` to keep, with their outcomes, seats, opponents and feature
        rows (None: to be computed); None when there is none to keep. ``decisions``: the
        hand's decision records (else the record is replayed)."""
        seat_of = list(seats) if seats is not None else list(range(record.n_players))
        mine = {pos for pos, s in enumerate(seat_of) if s in self.keep and record.hole_cards[pos] is not None}
        wanted = mine | shown_positions(record)
        if not wanted:
            return None
        if decisions is None:  # a hand from a log: replayed (the payoffs must match the cards)
            kept = [(dp, None) for dp in replay(record) if dp.position in wanted]
        else:  # played here: the records, each with the row it was decided from (if on this case base)
            holes = record.hole_cards
            kept = [(_with_hole(d.dp, holes[d.dp.position]), d.row_for(self.cb)) for d in decisions
                    if d.dp.position in wanted]
        kept = [(dp, row) for dp, row in kept if dp.hole is not None and dp.action in ("f", "c", "r")]
        if not kept:
            return None
        dps = [dp for dp, _ in kept]
        rows = [row for _, row in kept]
        names = self.names if len(self.names) == record.n_players else list(record.players)
        outcomes = [hand_outcome(record, dp.position) for dp in dps]
        seat = [seat_of[dp.position] for dp in dps]
        opponents = [",".join(n for i, n in enumerate(names) if i != s) for s in seat]
        return dps, outcomes, seat, opponents, rows

    def _street_codes(self, street: str, n: int) -> Any:
        """The action code of the street's first ``n`` cases (index rows), kept up to date with
        what this retainer appends (read again when another writer appended)."""
        import numpy as np

        from cbr.retrieval import action_codes

        codes = self._codes.get(street)
        if codes is None or len(codes) < n:
            codes = self._codes[street] = np.asarray(action_codes(self.cb.cases(street).actions))
        return codes

    def _gated(self, dps: list, rows: list) -> list[int]:
        """The decisions the gate lets through: those without a case of the same street and
        action at least ``gate`` similar (their rows computed here when not given)."""
        import numpy as np

        from cbr.retrieval import action_codes

        fs = self.cb.feature_set()
        out = []
        for i, dp in enumerate(dps):
            street = STREETS[dp.street]
            if self.cb.count(street) == 0:
                out.append(i)
                continue
            if rows[i] is None:
                rows[i] = fs.row(dp)
            index = self.cb.index(street)
            codes = self._street_codes(street, index.n_cases_)
            code = action_codes([dp.action])[0]
            # the grouped scan at the gate's threshold: the hits' per-action counts (a view of the
            # index made now, so it sees every case appended so far; no search when none is that near)
            found = index.with_retrieval(threshold=self.gate).aggregate(
                np.asarray(rows[i], np.float32), codes[: index.n_cases_], top=1, fallback=False)
            duplicate = bool(found.n) and bool(found.counts[code] > 0)
            if duplicate:
                self.skipped += 1
            else:
                out.append(i)
        return out

    def _commit(self, dps: list, outcomes: list, seat: list, opponents: list, rows: list, *, hands: int) -> int:
        """Write prepared cases as one durable commit (without those the gate skips); returns how many."""
        if self.gate is not None:
            kept = self._gated(dps, rows)
            if len(kept) < len(dps):
                dps, outcomes, seat, opponents, rows = ([x[i] for i in kept] for x in (dps, outcomes, seat, opponents, rows))
            if not dps:
                self.hands += hands
                return 0
        given = rows if any(r is not None for r in rows) else None  # the rows the bots decided from
        ids = self.cb.retain_hand(dps, outcomes, source="retained", rows=given, match_id=self.match_id, seat=seat,
                                  opponents=opponents, retained_at=datetime.now(timezone.utc))
        self.retained += len(ids)
        self.hands += hands
        if self.gate is not None:  # the codes of what was just appended, in row order
            import numpy as np

            from cbr.retrieval import action_codes

            for street in {STREETS[dp.street] for dp in dps}:
                codes = self._codes.get(street)
                if codes is not None:
                    new = [dp.action for dp in dps if STREETS[dp.street] == street]
                    self._codes[street] = np.concatenate([codes, np.asarray(action_codes(new))])
        return len(ids)

    def close(self) -> None:
        """Compact what this match retained into Parquet parts (the case base stays open)."""
        try:
            self.cb.compact()
        except OSError as exc:  # pragma: no cover - disk full and the like
            raise CaseBaseError(f"cannot compact the retained cases of {self.cb.path}: {exc}") from None


def start_retention(policies: Sequence["Policy"], names: Sequence[str], *, into: str | Path | None = None,
                    match_id: Optional[str] = None, extra_seats: Sequence[int] = (),
                    gate: Optional[float] = None) -> list[Retainer]:
    """Retainers for the case-based bots among ``policies`` (one per case base; bots on the
    same case base share it). ``into``: first point every such bot at case base ``into``
    (a bare name: ``./casebases/NAME``; a path, with a separator or a leading ``.``: that
    folder, whose parent must exist; :func:`retention_target`), created as a copy of the
    first bot's case base when it does not exist, refused when it exists and is neither that
    case base nor a copy of it (:func:`prepare_retention_target`). ``gate``: skip near-duplicates
    (:class:`Retainer`; None keeps every decision). ``extra_seats``: seats that are not bots but whose
    decisions are kept too (a human), in the first bot's case base. Raises
    :class:`~cbr.errors.CaseBaseError` when no seat can retain or a target is refused."""
    seats = retaining_bots(policies)
    if not seats:
        raise CaseBaseError("retention needs a case-based bot at the table (a `cbr` seat): its case base "
                            "is the one that grows")
    if into is not None:
        target, _ = prepare_retention_target(policies, into)
        for s in seats:
            policies[s].use_casebase(target)  # type: ignore[attr-defined]
    groups: dict[Path, list[int]] = {}
    for s in seats:
        path = Path(policies[s].casebase_path).resolve()  # type: ignore[attr-defined]
        check_retention_target(path)
        groups.setdefault(path, []).append(s)
    match_id = match_id or new_match_id()
    out = []
    for i, members in enumerate(groups.values()):
        keep = members + (list(extra_seats) if i == 0 else [])
        out.append(Retainer(policies[members[0]].open(), keep, names, match_id=match_id,  # type: ignore[attr-defined]
                            gate=gate))
    return out
