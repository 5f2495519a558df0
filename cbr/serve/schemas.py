"""The request bodies of the HTTP API (pydantic models; FastAPI checks them and answers 422
naming the field). The answers are plain JSON built by :mod:`cbr.serve.engine`.

Numbers and booleans are strict: a JSON string or boolean where a number is asked (``"min_cases":
"20"``, ``"min_cases": true``), or a number or string where a boolean is asked, is refused, not
turned into one; a JSON integer where a float is asked is taken (``"pot": 5``).

>>> Situation(hole="AdQc", pot=5).pot
5.0
>>> from pydantic import ValidationError
>>> try:
...     Situation(hole="AdQc", min_cases=True)
... except ValidationError as exc:
...     print(exc.errors()[0]["loc"], exc.errors()[0]["type"])
('min_cases',) int_type
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, model_validator

from cbr.errors import counted
from cbr.query import MAX_TOP
from cbr.serve.engine import MAX_ANSWER_CASES, MAX_EVALUATE_DECISIONS

__all__ = ["FieldProblem", "Situation", "RetrieveRequest", "BatchRequest", "ReuseRequest", "RetainRequest", "EvaluateRequest", "TableRequest",
           "ActionRequest", "MAX_BATCH", "MAX_BATCH_CASES", "SITUATION_FIELDS"]

#: Most situations one ``/retrieve/batch`` request may hold.
MAX_BATCH = 256
#: Most cases one ``/retrieve/batch`` request may ask for: its situations' ``top`` summed (a
#: ``top`` of null, every retrieved case, counts as this many: a batch may hold one such
#: situation beside situations of ``top`` 0). About 1 KB of JSON a case: some 10 MB an answer,
#: worked on in well under the time limit, where 256 situations of ``top`` 100,000 asked for up
#: to 25.6 million cases (a 150 MB answer, gigabytes of memory, and a 503 late). The same cap
#: holds for one ``/retrieve`` or ``/reuse`` (:class:`RetrieveRequest`), and a ``top`` of null
#: lists at most this many (:data:`cbr.serve.engine.MAX_ANSWER_CASES`, the same number).
MAX_BATCH_CASES = MAX_ANSWER_CASES
#: One value of an opponent model, in 0..1: a value outside is a 422 naming that number
#: (``["body", "opponents", i, j]``), as a value of the wrong type is.
Unit = Annotated[StrictFloat, Field(ge=0.0, le=1.0)]
#: The fields that describe a situation with numbers (the ``cbr query`` options).
SITUATION_FIELDS = ("hole", "board", "dealt", "in_hand", "position", "to_act", "committed", "to_call", "pot",
                    "prev_bets")


class FieldProblem(ValueError):
    """A request model's own check failing on ``field``: the 422 names it (``loc`` ends with
    it, as for a field's own check), gives the message as written (pydantic prefixes a
    validator's ValueError with ``Value error, ``) and the type ``FieldError``, as the
    server's other refusals of a field's value.

    >>> FieldProblem("matchstate", "leave out hole").field
    'matchstate'

    ``field`` may be a path below the body, ``("situations", 3, "top")``: the ``loc`` ends with it.
    """

    def __init__(self, field: str | tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.field = field


class Situation(BaseModel):
    """A situation: the fields that describe it (``hole``, ``board``, ``position``, ``pot``, ...),
    or a ``matchstate`` (an ACPC MATCHSTATE string) in ``game``. Fields left out take the spot
    reached with the fewest actions."""

    # (a model's docstring is its description in the OpenAPI document: it names no command line)

    model_config = ConfigDict(extra="forbid")

    casebase: str = Field("default", min_length=1, max_length=200, description="A served case base (GET /casebases).")
    matchstate: Optional[str] = Field(None, max_length=2000, description="An ACPC MATCHSTATE string.")
    game: str = Field("holdem.limit.2p", max_length=20000,
                      description="A preset name or inline GameDef JSON (no file names).")
    hole: Optional[str] = Field(None, max_length=20, description="Your hole cards, e.g. AdQc.")
    board: Optional[str] = Field(None, max_length=30, description="Board cards: none, 3, 4 or 5.")
    dealt: Optional[StrictInt] = Field(None, ge=2, le=12, description="Players dealt in (default: the game's seats).")
    in_hand: Optional[StrictInt] = Field(None, description="Players not folded, you included.")
    position: Optional[StrictInt] = Field(None, description="Your place in this round's order, 0 = first to act.")
    to_act: Optional[StrictInt] = Field(None, description="Players still to act after you this round.")
    committed: Optional[StrictFloat] = Field(None, description="Bets you already put in this round.")
    to_call: Optional[StrictFloat] = Field(None, description="Bets you must add to call.")
    pot: Optional[StrictFloat] = Field(None, description="Pot before your action, in small bets.")
    prev_bets: Optional[StrictInt] = Field(None, description="Bets and raises made in the previous round.")
    weighted: Optional[StrictBool] = Field(None, description="Weight actions by similarity (null: the case base's "
                                                       "setting; false: count every retrieved case once).")
    top: Optional[StrictInt] = Field(5, ge=0, le=MAX_TOP, description="Cases to return (null: every retrieved case); at most "
                                  f"{MAX_ANSWER_CASES:,} (a batch: its tops summed).")
    threshold: Optional[StrictFloat] = Field(
        None, ge=0.0, le=1.0, description="Retrieve every case at least this similar, for this request only "
        "(null: the case base's).")
    k: Optional[StrictInt] = Field(
        None, ge=1, le=1_000_000, description="When no case reaches the threshold, the K most similar, for this "
        "request only (null: the case base's fallback k).")
    min_cases: Optional[StrictInt] = Field(
        None, ge=1, le=1_000_000, description="Take the K most similar when fewer than this many cases reach the "
        "threshold, not only when none does; at most K (null: the case base's, CASPER's 1).")
    opponents: Optional[list[tuple[Unit, Unit, Unit]]] = Field(
        None, max_length=11, description="For a case base built with the casper-opp feature set: the player "
        "model (aggressiveness, tightness, riskiness, each in 0..1) of each opponent still in the hand, in "
        "position order; the rest stay at the defaults.")

    @model_validator(mode="after")
    def _one_description(self) -> "Situation":
        given = [f for f in SITUATION_FIELDS if getattr(self, f) is not None]
        if self.matchstate is not None and given:
            raise FieldProblem("matchstate", f"a matchstate describes the whole situation: leave out {', '.join(given)}")
        if self.matchstate is None and self.hole is None:
            raise FieldProblem("hole", "no situation: give hole (and board, to_call, ...) or matchstate")
        return self


class RetrieveRequest(Situation):
    """One situation asked on its own (``/retrieve``; ``/reuse`` adds to it): its ``top`` is at
    most :data:`MAX_BATCH_CASES`, as a batch's ``top`` summed, refused before any work. A ``top``
    of null (every retrieved case) is refused by the engine once it is known that more were
    retrieved than that (:data:`~cbr.serve.engine.MAX_ANSWER_CASES`)."""

    @model_validator(mode="after")
    def _bounded(self) -> "RetrieveRequest":
        if self.top is not None and self.top > MAX_BATCH_CASES:
            raise FieldProblem("top", f"a request asks for at most {counted(MAX_BATCH_CASES, 'case')} (top), as a batch does "
                                      f"in all: top {self.top:,} asks for more; lower top (the triple and the counts "
                                      "come from every retrieved case whatever top is)")
        return self


class BatchRequest(BaseModel):
    """Several situations answered in one request, each on its own (one bad situation is
    an error in its place of the answer list, not a failed batch)."""

    model_config = ConfigDict(extra="forbid")

    situations: list[Situation] = Field(..., min_length=1, max_length=MAX_BATCH)

    @model_validator(mode="after")
    def _bounded(self) -> "BatchRequest":
        """At most :data:`MAX_BATCH_CASES` cases asked for in all, refused before any work on
        the ``top`` of the situation that goes over."""
        asked = 0
        for i, s in enumerate(self.situations):
            asked += MAX_BATCH_CASES if s.top is None else s.top
            if asked > MAX_BATCH_CASES:
                raise FieldProblem(("situations", i, "top"),
                                   f"a batch asks for at most {counted(MAX_BATCH_CASES, 'case')} in all (the situations' "
                                   f"top summed, a top of null counting as {MAX_BATCH_CASES:,}): situations "
                                   f"0-{i} ask for {asked:,}; lower top, or send the rest in another request")
        return self


class ReuseRequest(RetrieveRequest):
    """A situation, and the policy spec whose action is wanted (``cbr``,
    ``cbr:reuse=max-frequency``, ``ehs``...; GET /policies) with the seed of its draw."""

    casebase: Optional[str] = Field(  # type: ignore[assignment]
        None, min_length=1, max_length=200, description="A served case base (GET /casebases); left out: the case base the "
                                          "bot plays everywhere (cbr: its preset's, expert); for a bot without "
                                          "one, default (or the first served).")
    policy: str = Field("cbr", min_length=1, max_length=300, description="A policy spec: NAME:KEY=VALUE:...")
    seed: StrictInt = Field(0, ge=0, le=2**63 - 1, description="Seed of the policy's draw (same seed, same action).")


class RetainRequest(BaseModel):
    """Finished hands to keep in a served case base (needs the bearer token)."""

    model_config = ConfigDict(extra="forbid")

    casebase: str = Field(..., min_length=1, max_length=200, description="A served case base that is not shipped.")
    format: Literal["acpc", "phh"] = Field("acpc", description="ACPC STATE: lines or PHH text.")
    text: str = Field(..., min_length=1, description="The hands (at most 1000).")
    game: Optional[str] = Field(None, max_length=20000,
                                description="For ACPC lines: a preset name or inline GameDef JSON "
                                            "(default: inferred from the lines).")


class EvaluateRequest(BaseModel):
    """A bounded k-fold hold-out evaluation of a served case base."""

    model_config = ConfigDict(extra="forbid")

    casebase: str = Field("default", min_length=1, max_length=200)
    folds: StrictInt = Field(3, ge=2, le=10)
    max_decisions: StrictInt = Field(100, ge=1, le=MAX_EVALUATE_DECISIONS, description="Decisions per street.")
    seed: StrictInt = Field(0, ge=0, le=2**32 - 1)
    ann: StrictBool = Field(False, description="Also train and score the ANN action predictor (slower).")


class TableRequest(BaseModel):
    """A new table session: the bots beside the person (1-5 policy specs; 2-6 players), the
    seed of the deals, the person's name, and optionally a case base to retain the hands
    into (a served case base's name: that one; another bare name: a copy made on first use;
    needs the bearer token).

    The bots are ``bots`` or ``players`` (another name of the same list); both given
    must be the same list. :attr:`seated` is the list, :attr:`seated_field` the name given.
    ``null`` is the same as leaving the field out (as for ``seed`` and ``retain_into``): neither
    given, or both null, seats ``["cbr"]``.

    >>> TableRequest(players=["ehs", "call"]).seated, TableRequest().seated_field
    (['ehs', 'call'], 'bots')
    >>> from pydantic import ValidationError
    >>> try:
    ...     TableRequest(bots=["ehs"], players=["call"])
    ... except ValidationError as exc:
    ...     print(exc.errors()[0]["ctx"]["error"])
    bots and players name the same seats: give one of them (bots ['ehs'], players ['call'])
    """

    model_config = ConfigDict(extra="forbid")

    bots: Optional[list[str]] = Field(None, min_length=1, max_length=5,
                                      description="Policy specs, e.g. [\"cbr\"] (null or left out: players, "
                                                  "or [\"cbr\"] when that is null or left out too).")
    players: Optional[list[str]] = Field(None, min_length=1, max_length=5,
                                         description="The same as bots, by another name "
                                                     "(null or left out: bots).")
    seed: Optional[StrictInt] = Field(None, ge=0, le=2**31 - 1, description="Seed of the deals (null: a random one).")
    name: str = Field("you", min_length=1, max_length=64, description="The person's name at the table.")
    retain_into: Optional[str] = Field(None, min_length=1, max_length=64,
                                       description="Keep every hand (the person's decisions too) in this case "
                                                   "base: a served one by its name (the bots must play from it), "
                                                   "else ./casebases/NAME on the server, a copy made on first "
                                                   "use; needs the token.")

    @model_validator(mode="after")
    def _one_list(self) -> "TableRequest":
        if self.bots is not None and self.players is not None and self.bots != self.players:
            raise FieldProblem("players", f"bots and players name the same seats: give one of them (bots {self.bots}, "
                                          f"players {self.players})")
        return self

    @property
    def seated(self) -> list[str]:
        """The bots' specs: ``players``, ``bots``, or ``["cbr"]`` when neither is given."""
        return list(self.players if self.players is not None else self.bots if self.bots is not None else ["cbr"])

    @property
    def seated_field(self) -> str:
        """The request's name of the bots: ``players`` when given, else ``bots``."""
        return "players" if self.players is not None else "bots"


class ActionRequest(BaseModel):
    """The person's action: f, c, r, or a word (fold, check, call, bet, raise)."""

    model_config = ConfigDict(extra="forbid")

    action: str = Field(..., min_length=1, max_length=10)
