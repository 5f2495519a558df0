"""The FastAPI app of ``cbr serve``: :func:`create_app` builds it from a :class:`ServeConfig`.

Limits every request shares: a body over ``max_body_bytes`` is refused with 413 before it is
read; work runs in a bounded thread pool and a request over ``time_limit`` seconds is
answered 503 (a retention that has started writing is waited for and answered with its
result, so a 503 from ``/retain`` means nothing was written). Errors: a bad body or a
situation no hand reaches, or an unknown policy, is 422 naming the field, an unknown case base 404, a
write without the token 401, a write the server refuses 403.
"""
from __future__ import annotations

import asyncio
import hmac
import json
import math
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Optional

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from cbr.errors import CBRError, PluginFailedError, counted
from cbr.serve.engine import (
    MAX_EVALUATE_DECISIONS,
    MAX_RETAIN_HANDS,
    Deadline,
    Engine,
    FieldError,
    ForbiddenError,
    NotFoundError,
    StorageError,
    TimeLimitError,
    UnauthorizedError,
    for_api,
    storage_fault,
    time_limit_message,
)
from cbr.serve.schemas import (
    MAX_BATCH,
    MAX_BATCH_CASES,
    ActionRequest,
    BatchRequest,
    EvaluateRequest,
    FieldProblem,
    RetainRequest,
    RetrieveRequest,
    ReuseRequest,
    Situation,
    TableRequest,
)
from cbr.serve.table import TableSessions, TableStateError

__all__ = ["ServeConfig", "create_app", "app_from_environment", "read_token", "CONFIG_ENV", "PARENT_ENV",
           "MAX_BODY_BYTES", "TIME_LIMIT"]

#: Default largest request body, in bytes (1 MB).
MAX_BODY_BYTES = 1_000_000
#: Default time limit of a request, in seconds.
TIME_LIMIT = 10.0
#: The environment variable through which ``cbr serve --workers N`` hands each worker its config.
CONFIG_ENV = "CBR_SERVE_CONFIG"
#: ... and its own pid: the parent a worker dies with, recorded before the worker started (a
#: worker that read its parent itself, late in its start-up, read init's once the server had died).
PARENT_ENV = "CBR_SERVE_PARENT"


@dataclass(frozen=True)
class ServeConfig:
    """What the server serves and its limits. ``token``: the bearer token writes need, or
    ``token_file`` holding it (neither: the server takes no writes); ``threads``: requests
    worked on at once."""

    casebases: tuple[str, ...] = ("default",)
    token: Optional[str] = None
    token_file: Optional[str] = None
    max_body_bytes: int = MAX_BODY_BYTES
    time_limit: float = TIME_LIMIT
    threads: int = 8
    warm: bool = True
    max_sessions: int = 32
    session_ttl: float = 3600.0
    memory_map: bool = False  # map the saved indexes (case bases larger than memory): /retrieve only
    tables: bool = True  # the web table's sessions (off with several worker processes: a session lives in one)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ServeConfig":
        data = json.loads(text)
        data["casebases"] = tuple(data["casebases"])
        return cls(**data)


def read_token(path: str) -> str:
    """The bearer token in file ``path`` (its first line, stripped); :class:`ConfigError`
    when the file cannot be read or the token is shorter than 16 characters."""
    from cbr.errors import ConfigError

    try:
        with open(path, encoding="utf-8") as fh:
            token = fh.readline().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the token file {path} cannot be read ({getattr(exc, 'strerror', None) or exc})",
                          field="token_file") from None
    if len(token) < 16:
        raise ConfigError(f"the token file {path}: the token (its first line) must be at least 16 characters",
                          field="token_file")
    return token


def _jsonable(obj: Any) -> Any:
    """Plain JSON data: numpy values as Python ones, NaN and infinities as null."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if hasattr(obj, "tolist"):
        return _jsonable(obj.tolist())
    return str(obj)


def _plain_value(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)


def _json_text(data: Any) -> str:
    """``data`` as compact JSON, NaN and infinities as null."""
    try:  # the common case: plain data with numbers that are all finite
        return json.dumps(data, separators=(",", ":"), allow_nan=False, default=_plain_value)
    except ValueError:  # a NaN or an infinity somewhere: null
        return json.dumps(_jsonable(data), separators=(",", ":"), allow_nan=False)


def _json(data: Any, status: int = 200, headers: Optional[dict[str, str]] = None) -> Response:
    return _json_body(_json_text(data), status, headers)


def _json_body(body: str, status: int = 200, headers: Optional[dict[str, str]] = None) -> Response:
    """A JSON answer whose text was made already (in the worker pool, under the time limit)."""
    return Response(body, status_code=status, media_type="application/json", headers=headers)


class BodyLimit:
    """ASGI middleware: 413 for a request body over ``limit`` bytes, from its
    ``Content-Length`` before reading it, or while reading a body sent without one (the
    body is read whole before the app runs)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        message = f"the request body is over the server's limit of {self.limit} bytes"
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    size = -1
                if size > self.limit or size < 0:
                    await _json(_error_body(message if size >= 0 else "bad Content-Length"),
                                413 if size >= 0 else 400)(scope, receive, send)
                    return
        # read the body first (it is bounded), so a body sent without Content-Length is
        # refused before the app sees any of it
        chunks: list[bytes] = []
        seen = 0
        while True:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            chunks.append(msg.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.limit:
                await _json(_error_body(message), 413)(scope, receive, send)
                return
            if not msg.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _error_body(message: str) -> dict[str, Any]:
    return {"detail": message}


#: The request field of each input a library error is about (``CBRError.field``, by the
#: library's name): the one place the server names them.
REQUEST_FIELD = {"hole": "hole", "board": "board", "dealt": "dealt", "in_hand": "in_hand", "position": "position",
                 "to_act": "to_act", "committed": "committed", "to_call": "to_call", "pot": "pot",
                 "previous_round_bets": "prev_bets", "matchstate": "matchstate", "game": "game"}


def _validation_error(error: Mapping[str, Any], content_type: Optional[str], body: Any = None) -> dict[str, Any]:
    """One problem of a 422 as the server answers it: ``loc``, ``msg``, ``type``. An error our
    own model check raised about a field (:class:`~cbr.serve.schemas.FieldProblem`) points at
    that field and has the type of the server's other refusals of a field's value,
    ``FieldError`` (not pydantic's ``value_error``); our own checks' messages lose pydantic's
    ``Value error, `` prefix. A body that is not JSON is a sentence on ``["body"]`` saying
    where (``body``: the text FastAPI could not decode), not FastAPI's ``JSON decode error``
    at a character offset.

    >>> from cbr.serve.schemas import FieldProblem
    >>> _validation_error({"loc": ("body",), "type": "value_error", "msg": "Value error, leave out hole",
    ...                    "ctx": {"error": FieldProblem("matchstate", "leave out hole")}}, "application/json")
    {'loc': ['body', 'matchstate'], 'msg': 'leave out hole', 'type': 'FieldError'}
    >>> _validation_error({"loc": ("body", 25), "type": "json_invalid", "msg": "JSON decode error",
    ...                    "ctx": {"error": "Expecting value"}}, "application/json", '{"hole": "AdQc",\\n "pot": }')
    {'loc': ['body'], 'msg': 'the body is not JSON: Expecting value at line 2 column 9', 'type': 'json_invalid'}
    """
    if error.get("type") == "json_invalid":
        return {"loc": ["body"], "msg": _not_json(error, body), "type": "json_invalid"}
    loc, msg, kind = list(error.get("loc", ())), _body_message(error, content_type), error.get("type", "")
    if kind == "value_error":
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, FieldProblem):
            path = cause.field if isinstance(cause.field, tuple) else (cause.field,)
            loc, msg, kind = [*loc, *path], str(cause), "FieldError"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
    return {"loc": loc, "msg": msg, "type": kind}


def _not_json(error: Mapping[str, Any], body: Any) -> str:
    """The sentence for a body JSON cannot decode: the decoder's reason and where, by line and
    column of the text (``error``'s ``loc`` ends with the character offset FastAPI gives).

    >>> _not_json({"loc": ("body", 1), "ctx": {"error": "Expecting property name enclosed in double quotes"}},
    ...           "{bad json")
    'the body is not JSON: Expecting property name enclosed in double quotes at line 1 column 2'
    """
    why = str((error.get("ctx") or {}).get("error") or "it cannot be decoded")
    loc = tuple(error.get("loc", ()))
    pos = loc[1] if len(loc) == 2 and isinstance(loc[1], int) else None
    if isinstance(body, (bytes, bytearray)):
        body = bytes(body).decode("utf-8", errors="replace")
    if pos is None or not isinstance(body, str) or not 0 <= pos <= len(body):
        return f"the body is not JSON: {why}"
    line = body.count("\n", 0, pos) + 1
    column = pos - body.rfind("\n", 0, pos)
    return f"the body is not JSON: {why} at line {line} column {column}"


def _unreadable(cause: BaseException) -> str:
    """The sentence for a body whose reading as JSON raised ``cause`` (not a JSON decoding
    error): bytes that are not UTF-8 say which and where, JSON nested too deeply says so.

    >>> _unreadable(UnicodeDecodeError("utf-8", b'{"hole": "Ad\\xffQc"}', 12, 13, "invalid start byte"))
    'the body is not UTF-8 text (byte 0xff at position 12)'
    >>> _unreadable(RecursionError())
    'the body is not JSON that can be read (nested too deeply)'
    """
    if isinstance(cause, UnicodeDecodeError):
        data = bytes(cause.object)
        if 0 <= cause.start < len(data):
            return f"the body is not UTF-8 text (byte 0x{data[cause.start]:02x} at position {cause.start})"
        return "the body is not UTF-8 text"
    why = "nested too deeply" if isinstance(cause, RecursionError) else str(cause) or type(cause).__name__
    return f"the body is not JSON that can be read ({why})"


def _body_message(error: Mapping[str, Any], content_type: Optional[str]) -> str:
    """The message of a validation error; one about the body as a whole (not JSON, not an
    object, none at all) says that a JSON object is expected, and how to send one.

    >>> _body_message({"loc": ("body",), "type": "model_attributes_type", "msg": "Input should be ..."}, None)
    "the body must be a JSON object sent with the header 'Content-Type: application/json' (this request had no Content-Type)"
    >>> _body_message({"loc": ("body", "pot"), "type": "float_parsing", "msg": "Input should be a number"}, None)
    'Input should be a number'
    """
    msg = str(error.get("msg", ""))
    if tuple(error.get("loc", ())) != ("body",) or error.get("type") not in ("model_attributes_type", "dict_type",
                                                                            "model_type", "missing"):
        return msg
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind != "application/json" and not kind.endswith("+json"):
        had = f"had Content-Type: {kind}" if kind else "had no Content-Type"
        return f"the body must be a JSON object sent with the header 'Content-Type: application/json' (this request {had})"
    if error.get("type") == "missing":
        return "the body must be a JSON object: this request had none"
    got = type(error.get("input")).__name__
    got = {"list": "an array", "str": "a string", "int": "a number", "float": "a number", "bool": "true or false",
           "NoneType": "null"}.get(got, got)
    return f"the body must be a JSON object ({{\"field\": value, ...}}), not {got}"


def problem(exc: BaseException, body_fields: tuple[str, ...]) -> tuple[Optional[str], str]:
    """The request field an error is about (None: the request as a whole) and its message:
    a library error's fields (``CBRError.fields``) become the request's names of them
    (:data:`REQUEST_FIELD`, those the request has), put after the message; a
    :class:`~cbr.serve.engine.FieldError` is the server's own and names its field already.

    >>> from cbr.errors import GameError
    >>> problem(GameError("no legal hand reaches a pot of 4 small bets: change the pot", field="pot"), ("pot",))
    ('pot', "no legal hand reaches a pot of 4 small bets: change the pot ('pot')")
    >>> problem(GameError("pre-flop has no previous round", field="previous_round_bets"), ("prev_bets",))
    ('prev_bets', "pre-flop has no previous round ('prev_bets')")
    """
    text = for_api(str(exc).strip())
    message = text.splitlines()[0] if text else type(exc).__name__
    if isinstance(exc, FieldError):
        return exc.field, message
    names = [REQUEST_FIELD[f] for f in getattr(exc, "fields", ()) if REQUEST_FIELD.get(f) in body_fields]
    if not names:
        return None, message
    return names[0], f"{message} ({', '.join(repr(n) for n in names)})"


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The error answers an endpoint can give, for its OpenAPI description."""
    text = {401: "no or a wrong bearer token", 403: "a write the server refuses (shipped or read-only case base, "
            "no token configured)", 404: "an unknown case base, table session or path", 413: "the request body is too large",
            409: "not now: an action when it is not the person's turn, a new hand during a hand",
            422: "bad input: `detail` lists each problem with the field (`loc`) and the reason (`msg`)",
            500: "an internal error; another package's bot or feature set (a cbr.policies or cbr.features "
                 "plugin) that failed: `detail` names it and what it raised; or a case base of the server's whose files are damaged, unreadable "
                 "or cannot be written: `detail` names it by its served name (its operator's to mend)",
            503: "over the time limit"}
    return {c: {"description": text[c]} for c in codes}


def create_app(config: ServeConfig = ServeConfig(), engine: Optional[Engine] = None) -> FastAPI:
    """The app over ``engine`` (default: an :class:`~cbr.serve.engine.Engine` loading
    ``config.casebases``, closed when the app shuts down)."""
    own = engine is None
    if config.token is None and config.token_file is not None:
        config = replace(config, token=read_token(config.token_file))
    engine = engine if engine is not None else Engine(config.casebases, warm=config.warm,
                                                      memory_map=config.memory_map)
    pool = ThreadPoolExecutor(max_workers=max(1, config.threads), thread_name_prefix="cbr-serve")
    tables = TableSessions(config.max_sessions, config.session_ttl,  # a bot may play a served case base by its name
                           served={} if config.memory_map else {n: c.handle for n, c in engine.casebases.items()},
                           on_note=_log_note,  # a session that ends while the server runs: said at once
                           faults=engine.faults)  # a fault said then is not said again in full at the stop

    closed: list[bool] = []
    notes: list[str] = []

    def shutdown() -> None:
        """End the sessions, wait for the work in flight, close the engine (compacting what
        was retained); once. The lifespan's end, or the caller's when a forced stop (a second
        Ctrl-C) skipped it. What went wrong that no request could be told (a compaction that
        failed: the sessions' and, for an engine of the app's own, the engine's notes) is put
        in ``app.state.notes``, one line each, for the command to show: the library prints nothing."""
        if closed:
            return
        closed.append(True)
        try:
            tables.close()
            pool.shutdown(wait=True)
            for name in tables.retained_into:  # compacted again by the engine's close, as /retain's
                if name in engine.casebases:
                    engine.casebases[name].retained = True
            if own:
                engine.close()
        finally:
            notes.extend(" ".join(n.split()) for n in [*tables.notes, *(engine.notes if own else ())])

    @asynccontextmanager
    async def lifespan(app: FastAPI):  # type: ignore[no-untyped-def]
        yield
        shutdown()

    app = FastAPI(
        title="cbr serve",
        summary="Case-based reasoning for limit Texas hold'em over HTTP.",
        description=(f"Request bodies over {config.max_body_bytes} bytes are refused (413); a request over "
                     f"{config.time_limit:g} s is answered 503. Writes (/retain) need `Authorization: Bearer "
                     f"TOKEN`. Batch: at most {counted(MAX_BATCH, 'situation')} and {counted(MAX_BATCH_CASES, 'case')} asked for (top summed); one "
                     f"situation: at most {counted(MAX_BATCH_CASES, 'case')} (top; a top of null that retrieves more is refused); "
                     f"retain: at most {counted(MAX_RETAIN_HANDS, 'hand')}; "
                     f"evaluate: at most {MAX_EVALUATE_DECISIONS} decisions per street."),
        version=_version(),
        lifespan=lifespan,
        docs_url=None,   # FastAPI's pages load their scripts from a CDN: blank without the internet
        redoc_url=None,
    )
    docs_page = _static_files()["api.html"]  # our own, self-contained: renders /openapi.json

    @app.get("/docs", include_in_schema=False)
    async def api_docs() -> Response:
        return Response(docs_page, media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-cache"})

    app.state.engine = engine
    app.state.shutdown = shutdown
    app.state.notes = notes
    app.state.tables = tables
    app.state.config = config
    app.add_middleware(BodyLimit, limit=config.max_body_bytes)

    async def run(fn: Callable[..., Any], *args: Any, deadline: Optional[Deadline] = None, **kwargs: Any) -> Any:
        """Run ``fn`` in the pool under the time limit (see the module docstring)."""
        deadline = deadline or Deadline(config.time_limit)
        future = asyncio.get_running_loop().run_in_executor(pool, lambda: fn(*args, **kwargs))
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout=config.time_limit)
        except asyncio.TimeoutError:
            if deadline.give_up():
                future.add_done_callback(lambda f: f.exception())  # its late error is not "never retrieved"
                raise TimeLimitError(time_limit_message(config.time_limit))
            return await future  # a write had started: its result is the answer
        except asyncio.CancelledError:  # a forced stop (a second Ctrl-C) cut the request
            if not deadline.give_up():
                raise  # a write had started: it finishes in the pool; the answer is lost
            future.add_done_callback(lambda f: f.exception())
            raise TimeLimitError("the server is stopping: this request was cut before its end (nothing was "
                                 "written)") from None

    def body_fields(request: Request) -> tuple[str, ...]:
        route = request.scope.get("route")
        model = getattr(route, "body_field", None)
        annotation = getattr(getattr(model, "field_info", None), "annotation", None)
        return tuple(getattr(annotation, "model_fields", {}) or ())

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = [_validation_error(e, request.headers.get("content-type"), exc.body) for e in exc.errors()]
        return _json({"detail": errors}, 422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # FastAPI answers 400 "There was an error parsing the body" when reading the JSON body
        # raises anything but a JSONDecodeError (JSON nested thousands deep: a RecursionError;
        # bytes that are no Unicode): a body that is not JSON, 422 as for any other
        cause = exc.__cause__
        if exc.status_code == 400 and cause is not None and request.scope.get("route") is not None:
            return _json({"detail": [{"loc": ["body"], "msg": _unreadable(cause), "type": "json_invalid"}]}, 422)
        if exc.status_code == 405:  # Starlette's Allow names the methods of the first route of the path only
            exc = StarletteHTTPException(405, exc.detail, headers={**(exc.headers or {}),
                                                                   "Allow": ", ".join(allowed_methods(request))})
        return await http_exception_handler(request, exc)

    def allowed_methods(request: Request) -> list[str]:
        """Every method the request's path answers, over all the routes of that path (the web
        table's ``/table/sessions/{id}`` is two: GET and DELETE), in alphabetical order."""
        from starlette.routing import Match

        found: set[str] = set()
        for route in app.router.routes:
            methods = getattr(route, "methods", None)
            if methods and route.matches(request.scope)[0] != Match.NONE:
                found.update(methods)
        return sorted(found)

    @app.exception_handler(CBRError)
    async def _cbr_error(request: Request, exc: CBRError) -> Response:
        message = for_api(str(exc).strip().splitlines()[0]) if str(exc).strip() else type(exc).__name__
        if isinstance(exc, NotFoundError):
            return _json(_error_body(message), 404)
        if isinstance(exc, UnauthorizedError):
            return _json(_error_body(message), 401, {"WWW-Authenticate": "Bearer"})
        if isinstance(exc, ForbiddenError):
            return _json(_error_body(message), 403)
        if isinstance(exc, TableStateError):
            return _json(_error_body(message), 409)
        if isinstance(exc, TimeLimitError):
            return _json(_error_body(message), 503, {"Retry-After": "1"})
        if isinstance(exc, PluginFailedError):  # not the request's fault, nor the engine's bug: the bot named
            return _json(_error_body(message), 500)
        if isinstance(exc, StorageError) or storage_fault(exc):
            return _storage_failed(exc)
        return _unprocessable(exc, body_fields(request))

    @app.exception_handler(ValueError)
    async def _value_error(request: Request, exc: ValueError) -> Response:
        return _unprocessable(exc, body_fields(request))

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> Response:
        if storage_fault(exc):  # a file of the server's that failed (its message names its path)
            return _storage_failed(exc)
        # a bug: the request fails with 500, the server goes on
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return _json(_error_body(f"internal error: {type(exc).__name__}: {message}".rstrip(": ")), 500)

    def authorize(request: Request) -> None:
        if config.token is None:
            raise ForbiddenError("this server takes no writes: it has no token to check a write against, so it "
                                 "refuses every write, whoever asks")
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), config.token.encode()):
            raise UnauthorizedError("a write needs the header 'Authorization: Bearer TOKEN' with the server's token")

    @app.get("/health", summary="Liveness, and the case bases served")
    async def health() -> Response:
        return _json({"status": "ok", "version": _version(), "casebases": list(engine.casebases),
                      "writes": config.token is not None, "pid": os.getpid()})

    @app.post("/retrieve", summary="The triple of a situation and the cases behind it",
              responses=_errors(404, 413, 422, 500, 503))
    async def retrieve(situation: RetrieveRequest) -> Response:
        # the JSON is written in the pool too: a large answer neither blocks the other
        # requests nor escapes the time limit
        return _json_body(await run(lambda: _json_text(engine.retrieve(situation.model_dump()))))

    @app.post("/retrieve/batch", summary=f"Several situations (at most {MAX_BATCH}), answered one by one",
              responses=_errors(413, 422, 503))
    async def retrieve_batch(batch: BatchRequest) -> Response:
        deadline = Deadline(config.time_limit)

        def work() -> str:
            out = []
            for i, s in enumerate(batch.situations):
                deadline.check()  # answered 503 already: the rest is not worked on
                try:
                    out.append(engine.retrieve(s.model_dump()))
                except NotFoundError as exc:
                    out.append({"error": {"status": 404, "detail": str(exc)}})
                except StorageError as exc:  # the server's fault, as /retrieve answers it
                    _log_storage(exc)
                    out.append({"error": {"status": 500, "detail": str(exc)}})
                except PluginFailedError as exc:  # another package's plugin failed, as /retrieve answers it
                    out.append({"error": {"status": 500, "detail": for_api(str(exc).strip().splitlines()[0])}})
                except (CBRError, ValueError) as exc:
                    name, message = problem(exc, tuple(Situation.model_fields))
                    out.append({"error": {"status": 422, "detail": [
                        {"loc": ["body", "situations", i, *([name] if name else [])], "msg": message,
                         "type": type(exc).__name__}]}})
            deadline.check()
            return _json_text({"answers": out})

        return _json_body(await run(work, deadline=deadline))

    @app.post("/reuse", summary="The retrieval, and the action a policy takes there",
              responses=_errors(404, 413, 422, 500, 503))
    async def reuse(request: ReuseRequest) -> Response:
        return _json(await run(engine.reuse, request.model_dump()))

    @app.post("/retain", summary="Keep the decisions of finished hands in a case base (bearer token)",
              responses=_errors(401, 403, 404, 413, 422, 500, 503))
    async def retain(request: Request, body: RetainRequest) -> Response:
        authorize(request)
        deadline = Deadline(config.time_limit)
        return _json(await run(lambda: engine.retain(body.casebase, body.text, log_format=body.format,
                                                     game=body.game, deadline=deadline), deadline=deadline))

    @app.get("/casebases", summary="The case bases served", responses=_errors(500, 503))
    async def casebases() -> Response:
        return _json({"casebases": await run(engine.list_casebases)})

    @app.get("/casebases/{name}", summary="Streets, counts, sources, feature set and similarity of a case base",
             responses=_errors(404, 500, 503))
    async def casebase(name: str) -> Response:
        return _json(await run(engine.inspect, name))

    @app.post("/evaluate", summary="A bounded k-fold hold-out evaluation of a case base",
              responses=_errors(404, 413, 422, 500, 503))
    async def evaluate(body: EvaluateRequest) -> Response:
        deadline = Deadline(config.time_limit)
        return _json(await run(lambda: engine.evaluate(body.casebase, folds=body.folds,
                                                       max_decisions=body.max_decisions, seed=body.seed,
                                                       ann=body.ann, deadline=deadline), deadline=deadline))

    @app.get("/policies", summary="The installed policies (bots) and their options")
    async def policies() -> Response:
        return _json({"policies": await run(engine.policies)})

    add_table_routes(app, tables if config.tables else None, run, authorize)
    return app


def add_table_routes(app: FastAPI, tables: Optional[TableSessions], run: Callable[..., Any],
                     authorize: Callable[[Request], None]) -> None:
    """The web table: the page and its files at ``/`` and ``/static/...``, and the session
    endpoints under ``/table/sessions`` (:mod:`cbr.serve.table`). ``tables`` None: a server
    of several worker processes, where a new session is refused (409) since the requests of one
    session could reach another process."""
    from typing import Literal

    from fastapi import Query
    from fastapi.responses import PlainTextResponse

    static = _static_files()

    @app.get("/", include_in_schema=False)
    async def page() -> Response:
        return Response(static["index.html"], media_type="text/html; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})

    @app.get("/static/{name}", include_in_schema=False)
    async def static_file(name: str) -> Response:
        body = static.get(name)
        if body is None:
            return _json(_error_body(f"no file {name!r} here"), 404)
        kind = {"js": "text/javascript", "css": "text/css", "html": "text/html", "svg": "image/svg+xml"}
        return Response(body, media_type=kind.get(name.rsplit(".", 1)[-1], "application/octet-stream") +
                        "; charset=utf-8", headers={"Cache-Control": "no-cache"})

    def locked(session_id: str, fn: Callable[[Any], Any]) -> Callable[[], Any]:
        def work() -> Any:
            if tables is None:
                raise NotFoundError("no such table session: this server of several processes keeps none")
            session = tables.get(session_id)
            with session.lock:
                return fn(session)
        return work

    @app.post("/table/sessions", status_code=201, summary="Sit down at a new table (the person and 1-5 bots)",
              responses=_errors(401, 403, 404, 409, 413, 422, 500, 503))
    async def new_session(request: Request, body: TableRequest) -> Response:
        if tables is None:
            raise TableStateError("the web table needs a server of one process: a session lives in one, and this "
                                  "server shares its requests among several; the rest of the API answers here")
        if body.retain_into is not None:
            authorize(request)

        def work() -> Any:
            session = tables.create(body.seated, seed=body.seed, name=body.name, retain_into=body.retain_into,
                                    field=body.seated_field)
            with session.lock:
                return session.view()
        return _json(await run(work), 201)

    @app.get("/table/sessions/{session_id}", summary="The table as the person sees it", responses=_errors(404))
    async def get_session(session_id: str) -> Response:
        return _json(await run(locked(session_id, lambda s: s.view())))

    @app.post("/table/sessions/{session_id}/hand", summary="Deal the next hand (the bots act up to your turn)",
              responses=_errors(404, 409, 500, 503))
    async def new_hand(session_id: str) -> Response:
        def work(s: Any) -> Any:
            s.new_hand()
            return s.view()
        return _json(await run(locked(session_id, work)))

    @app.post("/table/sessions/{session_id}/action", summary="Your action (the bots act up to your next turn)",
              responses=_errors(404, 409, 422, 500, 503))
    async def action(session_id: str, body: ActionRequest) -> Response:
        def work(s: Any) -> Any:
            s.act(body.action)
            return s.view()
        return _json(await run(locked(session_id, work)))

    @app.get("/table/sessions/{session_id}/decisions/{decision_id}",
             summary="A case-based bot's decision: its triple, why, and the retrieved cases",
             responses=_errors(404, 409, 500, 503))
    async def decision(session_id: str, decision_id: int,
                       top: int = Query(20, ge=1, le=200, description="The most similar cases to show.")) -> Response:
        return _json(await run(locked(session_id, lambda s: s.explain(decision_id, top))))

    @app.get("/table/sessions/{session_id}/log", summary="The session's hands as an ACPC or PHH log",
             responses=_errors(404, 422))
    async def log(session_id: str, format: Literal["acpc", "phh"] = Query("acpc")) -> Response:
        text = await run(locked(session_id, lambda s: s.log(format)))
        name = f"cbr-table-{session_id[:8]}.{'log' if format == 'acpc' else 'phhs'}"
        return PlainTextResponse(text, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.delete("/table/sessions/{session_id}", summary="Leave the table (the session ends)",
                responses=_errors(404))
    async def end_session(session_id: str) -> Response:
        await run(locked(session_id, lambda s: None))
        warnings = await run(lambda: tables.drop(session_id))  # type: ignore[union-attr]
        return _json({"closed": session_id, "warnings": warnings})


def _static_files() -> dict[str, bytes]:
    """The web table's files shipped in the package (``cbr/serve/static``), read once."""
    from importlib.resources import files

    folder = files("cbr.serve") / "static"
    return {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file() and not f.name.startswith(".")}


def _log_storage(exc: BaseException) -> None:
    """Tell the server's operator what the library said of a storage fault (its path, and what
    to do), on the server's log: the client's answer says only which case base failed."""
    import logging

    if isinstance(exc, StorageError):
        logging.getLogger("uvicorn.error").error("case base %r needs attention: %s", exc.casebase, exc.detail)
    else:
        logging.getLogger("uvicorn.error").error("storage fault: %s", " ".join(str(exc).split()) or type(exc).__name__)


def _log_note(note: str) -> None:
    """Say on the server's log, at once, what went wrong as a web-table session ended while the
    server runs (a compaction of its hands that failed: :attr:`TableSession.notes`)."""
    import logging

    logging.getLogger("uvicorn.error").error("note: %s", " ".join(note.split()))


def _storage_failed(exc: BaseException) -> Response:
    """500 for a fault of the server's own storage (:class:`~cbr.serve.engine.StorageError`,
    naming the case base; one that escaped it, named by nobody, in general words), logged for
    the operator with what the library said."""
    _log_storage(exc)
    message = str(exc) if isinstance(exc, StorageError) else (
        "a case base of this server could not be read or written: its files need its operator's attention (the "
        "server's log says what is wrong); the request was not at fault")
    return _json(_error_body(message), 500)


def _unprocessable(exc: BaseException, fields: tuple[str, ...]) -> Response:
    name, message = problem(exc, fields)
    return _json({"detail": [{"loc": ["body", *([name] if name else [])], "msg": message,
                              "type": type(exc).__name__}]}, 422)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cbr-holdem")
    except PackageNotFoundError:  # pragma: no cover - a bare checkout
        return "unknown"


def app_from_environment() -> FastAPI:
    """The app of one ``cbr serve --workers N`` worker process: its config comes from the
    environment variable :data:`CONFIG_ENV` (set by the command).

    The worker leaves the terminal's process group and stops when its parent ends: the parent
    alone gets a Ctrl-C and stops its workers (with SIGINT: the first lets the requests in flight
    finish, a second cuts them, as in one process), and a parent killed outright leaves no worker
    (the kernel's parent-death signal, SIGTERM: a clean stop), also one killed while the worker
    started: the parent is the pid the command recorded (:data:`PARENT_ENV`) before it started
    the worker, and a worker whose parent is no longer that one stops. A forced stop skips the
    app's lifespan end: the worker then closes the case bases as its process ends (compacting
    what it retained), as one process does after its server stops."""
    import signal
    from multiprocessing import util

    from cbr.build.parent import parent_death_signal

    text = os.environ.get(CONFIG_ENV)
    if not text:
        raise RuntimeError(f"{CONFIG_ENV} is not set: start workers with `cbr serve --workers N`")
    recorded = os.environ.get(PARENT_ENV, "")
    parent = int(recorded) if recorded.isdigit() else os.getppid()
    os.setpgid(0, 0)
    arm = parent_death_signal()
    if arm is not None:
        arm(signal.SIGTERM)
    if os.getppid() != parent:  # the parent ended before the signal was armed: stop as it would have
        os.kill(os.getpid(), signal.SIGTERM)
    app = create_app(ServeConfig.from_json(text))
    util.Finalize(None, app.state.shutdown, exitpriority=10)  # run as the worker process ends; once
    _quiet_when_cut()
    return app


def _quiet_when_cut() -> None:
    """A worker's second SIGINT (a forced stop) silences uvicorn's error log, as one process's
    does (``cbr serve``'s ``_stop_messages``): uvicorn logged a traceback for the lifespan it
    cut. Wraps the SIGINT handler of the worker's server, which catches the signals while it
    runs (this is called then, from its main thread)."""
    import logging
    import signal

    server_exit = signal.getsignal(signal.SIGINT)
    if not callable(server_exit):  # pragma: no cover - not under uvicorn's server
        return
    heard: list[int] = []

    def on_sigint(sig: int, frame: Any) -> None:
        if heard:
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
        heard.append(sig)
        server_exit(sig, frame)

    try:
        signal.signal(signal.SIGINT, on_sigint)
    except ValueError:  # pragma: no cover - not the main thread
        pass
