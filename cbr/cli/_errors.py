"""Exit codes and how errors become them: one table for every ``cbr`` command.

- 0: done;
- 1: an error in the input or the environment: the project's own errors
  (:class:`~evaluator_ext.errors.CBRError`: a bad log, case base, game or similarity
  file...) and file errors on the user's paths, as one line ``error: ...`` on stderr;
  an error about an input (its ``field``, by the library's name) ends with the option of
  that input (:data:`OPTION_OF_FIELD`, :func:`error_line`: ``... change the pot (--pot)``);
  running out of memory (``MemoryError``, a native library that cannot be mapped: see
  :func:`memory_failure`) as ``error: not enough memory (...)``, with the line of the
  project's error it caused, if any (``...; could not load the parsers: ...``);
- 2: a usage error: an unknown option or bot or game or format name, a malformed option
  value (inline ``--game`` JSON that is not a game; a game *file* that is not is exit 1),
  conflicting options, a count out of its documented range (``--hands``, ``--workers``,
  ``--opponents``...);
- 3: an internal error (a bug): ``internal error: ... (run with --debug for the traceback)``;
- 130: interrupted (Ctrl-C); 143: terminated (SIGTERM), after the same clean-up;
- 141: stdout's reader went away (``cbr ... | head -1``): a quiet exit, no message, the code a
  program killed by SIGPIPE has in the shell (as ``git log | head`` gives under ``pipefail``).

``--debug`` shows tracebacks instead of the one-line messages.

Under an address-space limit (``ulimit -v``, ``RLIMIT_AS``) the native libraries' thread
pools are kept to one thread (each reserves tens of MB of address space) and numpy, faiss and
DuckDB, whose start-up crashes or exits when it cannot allocate, are loaded only with room for
them (else a ``MemoryError`` says how much they need): :func:`prepare_for_memory_cap`. The
error path imports nothing before it has checked for running out of memory (the project's
error classes live in a package that loads numpy).
"""
from __future__ import annotations

import errno
import functools
import gc
import importlib.abc
import io
import os
import resource
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, Optional, TypeVar

import typer

EXIT_ERROR, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 3, 130, 143
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # 141
#: Whether ``--debug`` was given (set by the root command), and whether this process is the
#: ``cbr`` program itself (:func:`cbr.cli.main`), not a caller of :data:`cbr.cli.app` (tests).
state = {"debug": False, "program": False}

F = TypeVar("F", bound=Callable[..., Any])


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that every clean-up of Ctrl-C runs."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def tell(text: str) -> None:
    """Say ``text`` on stderr if it can be said, else nothing: what a signal handler and the
    exit after one say, which must never raise. ``cbr serve`` started by a script
    (:func:`cbr.serve.process.start_server`) has its stderr on a pipe to that script; when the
    script is killed, the kernel's parent-death SIGTERM comes with the pipe's reader gone and
    writing there fails (EPIPE). Raised from the server's handler, before it began the stop, that
    error surfaced wherever the main thread was: out of the event loop's wait (the server exited,
    with a traceback) or inside a request's callback, where asyncio and the HTTP protocol took
    it for that request's error, and the server went on serving with nobody left to stop it
    (found in CI under load: "the server outlived its starter").

    A line that cannot be written stays in stderr's buffer (unless ``PYTHONUNBUFFERED``), and
    the interpreter's last flush of it at exit fails too, which makes Python exit 120 whatever
    the command's code (a server SIGTERMed with its stderr's reader gone exited 120, not 143):
    so stderr is sent to /dev/null then (:func:`drop_stream`), what is pending with it; nothing
    written there could be read anyway."""
    try:
        typer.echo(text, err=True)
    except (ValueError, BlockingIOError):  # stderr is closed (nothing pending to flush), or full for now
        pass
    except OSError:  # the reader is gone (EPIPE), or the stream cannot be written
        drop_stream(sys.stderr)


def drop_stream(stream: Any) -> None:
    """Point ``stream``'s file descriptor at /dev/null, so that what is buffered in it (and
    anything written later) goes nowhere without an error: for a stdout or stderr whose reader
    is gone, whose failed flush at exit would make Python exit 120 instead of the command's code
    (the advice of the Python docs' note on SIGPIPE). A stream without a descriptor (a test's
    capture) is left as it is."""
    try:
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor (io.UnsupportedOperation), or closed
        pass


def _flush_or_drop(stream: Any) -> None:
    """Flush ``stream`` now; if that fails (its reader is gone), drop it (:func:`drop_stream`)."""
    try:
        stream.flush()
    except ValueError:  # closed
        pass
    except OSError:
        drop_stream(stream)


def one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


#: The option of each input a library error is about (``CBRError.field``, by the library's
#: name): the one place the command line names them.
OPTION_OF_FIELD = {
    # a situation (cbr query; cbr.game.situation, cbr.game.spec)
    "hole": "--hole", "board": "--board", "dealt": "--dealt", "in_hand": "--in-hand", "position": "--position",
    "to_act": "--to-act", "committed": "--committed", "to_call": "--to-call", "pot": "--pot",
    "previous_round_bets": "--prev-bets", "matchstate": "--matchstate", "game": "--game",
    # outputs, builds, stores, play
    "overwrite": "--overwrite", "resume": "--resume", "max_file_size": "--max-file-size",
    "scheduler": "--scheduler", "players": "--only-players", "similarity": "--similarity FILE.toml",
    "workers": "--workers",
    "retain_into": "--retain-into", "store": "--store", "token_file": "--token-file", "sql": "--sql",
}


def error_line(exc: BaseException) -> str:
    """The one line of an error, ending with the options of the inputs it is about.

    >>> from cbr.errors import GameError
    >>> error_line(GameError("no legal hand reaches a pot of 4 small bets: change the pot", field="pot"))
    'no legal hand reaches a pot of 4 small bets: change the pot (--pot)'
    >>> error_line(GameError("too many bets: change the bets to call or committed", field=("to_call", "committed")))
    'too many bets: change the bets to call or committed (--to-call, --committed)'
    """
    text = one_line(exc)
    options = [OPTION_OF_FIELD[f] for f in getattr(exc, "fields", ()) if f in OPTION_OF_FIELD]
    return f"{text} ({', '.join(options)})" if options else text


def _os_error_line(exc: OSError) -> str:
    """``PATH: reason`` for an OS error on a user's path."""
    reason = exc.strerror or one_line(exc)
    names = [str(n) for n in (exc.filename, exc.filename2) if n is not None]
    return f"{' -> '.join(names)}: {reason}" if names else reason


def _address_space_limit() -> Optional[int]:
    """The soft address-space limit in bytes, or None when there is none."""
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if soft == resource.RLIM_INFINITY else int(soft)


#: What native libraries say when an allocation or a mapping failed.
_OUT_OF_MEMORY = ("failed to map segment", "cannot allocate memory", "bad_alloc", "realloc of size",
                  "malloc of size", "memory allocation failed")
#: What a thread that cannot start says (under an address-space limit: its stack did not fit).
_NO_THREAD = ("can't start new thread", "failed to launch worker thread", "failed to create thread")


def _is_ours(exc: BaseException) -> bool:
    """Whether ``exc`` is one of the engine's errors (its line is said without a class name).
    Only an error class already loaded is looked at: nothing is imported here (:func:`_chain`)."""
    errors = sys.modules.get("evaluator_ext.errors")
    return errors is not None and isinstance(exc, errors.CBRError)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc``, then what caused it (``__cause__``, else ``__context__``), each once: here, not
    :func:`cbr.errors.exception_chain`, whose module loads numpy, which may be what ran out."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    e: Optional[BaseException] = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        chain.append(e)
        e = e.__cause__ or e.__context__
    return chain


def memory_failure(exc: BaseException) -> Optional[str]:
    """``exc`` (or an error it came from) as the reason memory ran out, or None: a
    ``MemoryError`` (numpy's, pyarrow's...), an ``ImportError`` of a native library that
    could not be mapped ("failed to map segment"), an allocation error of a native library;
    under an address-space limit also a thread that could not start and a worker process
    that died (the limit is named).

    >>> memory_failure(ImportError("libarrow.so.2600: failed to map segment from shared object"))
    'ImportError: libarrow.so.2600: failed to map segment from shared object'
    >>> memory_failure(ValueError("bad card")) is None
    True
    """
    limit = _address_space_limit()
    found = None
    for e in _chain(exc):
        text = str(e).strip().splitlines()[0] if str(e).strip() else ""
        low = text.lower()
        if isinstance(e, MemoryError) or (isinstance(e, OSError) and e.errno == errno.ENOMEM) \
                or type(e).__name__ == "OutOfMemoryException" or any(k in low for k in _OUT_OF_MEMORY) \
                or (limit is not None and (any(k in low for k in _NO_THREAD) or type(e).__name__ == "BrokenProcessPool"
                                           or ("worker process" in low and "died" in low))):
            found = text if _is_ours(e) and text else f"{type(e).__name__}: {text}" if text else type(e).__name__
            break
    if found is None:
        return None
    return found if limit is None else f"address-space limit {limit >> 20} MB: {found}"


#: Address space a native library takes to start with one thread, with room to spare
#: (measured on Linux with the pinned wheels: faiss's start-up (its OpenBLAS and OpenMP)
#: crashed with SIGSEGV with 195 MB left and loaded with 203 MB; DuckDB's first connection
#: aborted ("cannot allocate memory for thread-local data") with 151 MB left and ran with
#: 161 MB); numpy (its OpenBLAS, one thread) calls ``exit(1)`` after printing its own line
#: ("OpenBLAS error: Memory allocation still failed ...") with 76 MB left, raised MemoryError
#: up to 81 MB and loaded with 82 MB. Each more OpenMP thread takes faiss about 130 MB more.
NATIVE_ADDRESS_SPACE = {"faiss": 224 << 20, "duckdb": 184 << 20, "numpy": 88 << 20}
FAISS_PER_THREAD = 130 << 20


def _address_space_used() -> Optional[int]:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) << 10
    except (OSError, ValueError, IndexError):
        pass
    return None


class _NativeRoom(importlib.abc.MetaPathFinder):
    """Refuse to start loading a native library of :data:`NATIVE_ADDRESS_SPACE` without the
    address space it needs: their start-up kills the process (SIGSEGV, abort, OpenBLAS's
    ``exit(1)``) when an allocation fails, which no handler can turn into a message; a
    ``MemoryError`` here can."""

    def find_spec(self, name: str, path: Optional[Sequence[str]] = None, target: Any = None) -> None:
        if name not in NATIVE_ADDRESS_SPACE or name in sys.modules:
            return None
        limit, used = _address_space_limit(), _address_space_used()
        if limit is None or used is None:
            return None
        need = NATIVE_ADDRESS_SPACE[name]
        if name == "faiss":
            try:
                need += (max(1, int(os.environ.get("OMP_NUM_THREADS", "1"))) - 1) * FAISS_PER_THREAD
            except ValueError:
                pass
        if limit - used < need:
            raise MemoryError(f"loading {name} needs about {need >> 20} MB of address space, "
                              f"{max(0, limit - used) >> 20} MB are left")
        return None


_PREPARED = {"done": False}


def prepare_for_memory_cap() -> None:
    """Under an address-space limit: one thread per native pool (OpenMP, OpenBLAS, MKL),
    pyarrow's system allocator and no background thread of its jemalloc (which prints its
    own line when it cannot start one), one malloc arena (each more reserves 64 MB of
    address space), unless the user set them; and faiss and DuckDB loaded only with room
    for them (:class:`_NativeRoom`). Nothing changes without a limit. Called before any
    command loads a native library (they read these settings when they load); results are
    the same, only slower where the pools would have used more threads."""
    if _PREPARED["done"] or _address_space_limit() is None:
        return
    _PREPARED["done"] = True
    for name, value in (("OMP_NUM_THREADS", "1"), ("OPENBLAS_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1"),
                        ("ARROW_DEFAULT_MEMORY_POOL", "system"), ("MALLOC_ARENA_MAX", "1"),
                        ("JE_ARROW_MALLOC_CONF", "background_thread:false")):
        os.environ.setdefault(name, value)
    try:  # this process's malloc (the variable above is for the processes it starts)
        import ctypes

        ctypes.CDLL(None).mallopt(-8, int(os.environ["MALLOC_ARENA_MAX"]))  # M_ARENA_MAX (glibc)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass
    sys.meta_path.insert(0, _NativeRoom())


_THREAD_HOOK: dict[str, Any] = {"previous": None}


def _on_thread_death(args: Any) -> None:
    """The program's ``threading.excepthook``: a thread ended by an exception is noted for the
    worker pools (:func:`cbr.build.pools.thread_died`: a pool's wait raises it in the main
    thread, which says it as every error is said); its traceback is printed as before (by the
    hook this one replaced) unless the thread ran out of memory (:func:`memory_failure`: under
    an address-space limit, a pool's manager thread that could not start its feeder thread
    printed 16 lines of ``Exception in thread ...`` before the one line of the error)."""
    exc = args.exc_value
    if exc is None or args.exc_type is SystemExit:
        return
    pools = sys.modules.get("cbr.build.pools")  # loaded if this process has a pool
    if pools is not None and args.thread is not None:
        pools.thread_died(args.thread, exc)
    try:
        memory = memory_failure(exc)
    except MemoryError:
        memory = "MemoryError"
    if memory is None and _THREAD_HOOK["previous"] is not None:
        _THREAD_HOOK["previous"](args)


def quiet_thread_deaths() -> None:
    """Install :func:`_on_thread_death` as ``threading.excepthook`` (once)."""
    import threading

    if threading.excepthook is not _on_thread_death:
        _THREAD_HOOK["previous"] = threading.excepthook
        threading.excepthook = _on_thread_death


#: The line of :func:`_say_not_enough_memory` when there is no memory left to write another.
_NOT_ENOUGH_MEMORY = b"error: not enough memory (MemoryError)\n"


def _say_not_enough_memory(reason: str) -> None:
    """``error: not enough memory (reason)`` on stderr, as one line; if even that needs memory
    that is not there, the line made at start-up, written straight to the descriptor."""
    try:
        typer.echo(f"error: not enough memory ({reason})", err=True)
    except MemoryError:
        try:
            sys.stderr.flush()
        except (MemoryError, OSError, ValueError):
            pass
        try:
            os.write(2, _NOT_ENOUGH_MEMORY)
        except OSError:
            pass


def _what_failed(exc: BaseException, reason: str = "") -> str:
    """``"; "`` and the line of the engine's error that running out of memory caused (``could
    not load the parsers: ...``), or ``""`` when ``exc`` is no engine error, or its line is
    the reason itself (or already in ``reason``, the memory line's reason: a worker of a build
    that died, said once). Only an error already loaded is looked at: nothing is imported here
    (:func:`_fail`)."""
    if not _is_ours(exc):
        return ""
    text = one_line(exc)
    return "" if any(k in text.lower() for k in _OUT_OF_MEMORY) or text in reason else f"; {text}"


def _exit_now(code: int) -> None:
    """Exit at once, after the clean-ups of the unwound command ran: a native library that
    ran out of address space half-way through its start-up may crash in the interpreter's
    own tear-down, which would turn a clear exit 1 into a SIGSEGV."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


class _WholeWrites(io.BufferedWriter):
    """A binary stream that hands every write on to its file at once, as an unbuffered
    stream does, and writes all of it: a write cut short by the kernel (a pipe's reader
    gone in the middle of it, a signal) is retried with the rest, so the error comes out."""

    def write(self, data: Any) -> int:
        n = super().write(data)
        self.flush()  # writes what the buffer holds to the last byte, or raises
        return n


def whole_writes() -> None:
    """Make unbuffered stdout and stderr (``PYTHONUNBUFFERED=1``, ``python -u``) write all
    they are given. Unbuffered, Python's text stream sits straight on the file and drops
    what a short ``write(2)`` left over: when ``cbr ... | head -1`` closed the pipe in the
    middle of a large write (more than the pipe holds), the write returned the bytes
    that fitted, the rest was dropped without an error, and the command went on (its notes on
    stderr) to exit 0 instead of 141. Each such stream is replaced by one on
    :class:`_WholeWrites`, still unbuffered (every write goes out at once). Buffered streams,
    and streams that are not files (a test's captured output), are left as they are."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
            continue
        try:
            raw = io.FileIO(stream.fileno(), "w", closefd=False)
        except (OSError, ValueError):  # pragma: no cover - no file descriptor after all
            continue
        stream.flush()
        setattr(sys, name, io.TextIOWrapper(_WholeWrites(raw), encoding=stream.encoding, errors=stream.errors,
                                            newline=None if os.name == "nt" else "\n", write_through=True))


def _stdout_closed() -> bool:
    """Whether stdout is a pipe or socket whose reader went away (poll says POLLERR/POLLHUP),
    which tells a closed stdout from another broken pipe (a peer's socket)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), 0)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's captured stdout)
        return True


def _fail(exc: Exception) -> NoReturn:
    """Exit after ``exc`` by the rules of :func:`guarded`: one line and exit 1, or an
    internal error (exit 3); with ``--debug``, ``exc`` itself."""
    if state["debug"]:
        raise exc
    try:
        memory = memory_failure(exc)
    except MemoryError:  # no memory left to tell what ran out
        memory = "MemoryError"
    if memory is not None:
        try:
            memory += _what_failed(exc, memory)
        except MemoryError:  # the reason without what it caused
            pass
        _say_not_enough_memory(memory)
        if _address_space_limit() is not None:
            _exit_now(EXIT_ERROR)
        raise typer.Exit(EXIT_ERROR) from None
    # Imported here, after the memory check: its package loads numpy, which may be what failed
    # (then ``exc`` is no CBRError, and the check above has told it).
    from evaluator_ext.errors import CBRError

    if isinstance(exc, CBRError):
        typer.echo(f"error: {error_line(exc)}", err=True)
    elif isinstance(exc, OSError):
        typer.echo(f"error: {_os_error_line(exc)}", err=True)
    else:
        typer.echo(f"internal error: {type(exc).__name__}: {one_line(exc)} "
                   f"(run with --debug for the traceback)", err=True)
        raise typer.Exit(EXIT_INTERNAL) from None
    raise typer.Exit(EXIT_ERROR) from None


def guarded(func: F) -> F:
    """Run a command with the exit-code conventions of this module.

    The project's errors (``CBRError``) and OS errors on the user's files become one line
    and exit 1, as does running out of memory (:func:`memory_failure`: ``error: not enough
    memory (...)``); typer's usage errors pass through (exit 2); any other exception is an
    internal error (exit 3) that says so; Ctrl-C exits 130 and SIGTERM 143 after the
    same clean-up (SIGTERM is raised as :class:`Terminated`, a ``KeyboardInterrupt``);
    a stdout whose reader went away exits 141 without a word.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if state["program"]:
            # What start-up loaded (numpy, typer, the command's module) lives as long as the
            # program: moved out of the collector's way, later collections and the exit skip it
            # (20-40 ms of a one-shot `cbr query`). Objects made later are collected as usual.
            # Not in a process that only calls `app` (its own objects would be frozen too).
            gc.freeze()
        prepare_for_memory_cap()
        if state["program"]:  # (a process that only calls `app` keeps its own hook)
            quiet_thread_deaths()
        previous = None
        try:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:  # not the main thread: leave SIGTERM alone
            pass
        try:
            result = func(*args, **kwargs)
            sys.stdout.flush()  # a reader gone while the last lines sat in the buffer: caught below
            return result
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except Terminated:
            if state["debug"]:
                raise
            tell("terminated")  # (stderr's reader may be gone: the exit code says it all the same)
            _flush_or_drop(sys.stdout)  # its reader may be gone too: the exit's flush must not fail (120)
            raise typer.Exit(EXIT_TERMINATED) from None
        except KeyboardInterrupt:
            if state["debug"]:
                raise
            tell("interrupted")
            _flush_or_drop(sys.stdout)
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except BrokenPipeError as exc:  # the reader went away (`cbr ... | head`): stop quietly
            if not _stdout_closed():  # a peer's socket or pipe: an error like any other
                _fail(exc)
            # stdout onto /dev/null, so that the flush at the interpreter's exit of what is still
            # buffered finds a writable file and prints no "Exception ignored" line
            drop_stream(sys.stdout)
            raise typer.Exit(EXIT_BROKEN_PIPE) from None
        except Exception as exc:
            _fail(exc)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    return wrapper  # type: ignore[return-value]


def usage_error(message: str, *options: Optional[str]) -> typer.BadParameter:
    """A usage error (exit 2) about ``options`` (one, or several that conflict, named as click
    names an option's spellings: ``'--min-cases' / '--k'``); raise it from a command."""
    named = [f"'{option}'" for option in options if option]
    return typer.BadParameter(message, param_hint=" / ".join(named) if named else None)


class _MissingOption(typer.BadParameter):
    """A required option left out, worded as typer words its own (``Missing option ...``)."""

    def format_message(self) -> str:
        return f"Missing option {self.param_hint}."


def missing_option(*names: str) -> typer.BadParameter:
    """The usage error (exit 2) of a required option left out, as typer says it of one it
    requires itself (``Missing option '--players' / '-p'.``): for an option that has an old
    spelling too (:func:`cbr.cli._options.alias`), which typer cannot require."""
    return _MissingOption("", param_hint=" / ".join(f"'{n}'" for n in names))
