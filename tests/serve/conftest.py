"""Fixtures of the HTTP server's tests: a writable copy of the default case base, the app
over it and the default one (FastAPI's TestClient), a token, and real ACPC hands."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tests.conftest import require_module

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture(scope="package")
def casebase_copy(tmp_path_factory) -> Path:
    """A writable copy of the shipped default case base (named ``mine``)."""
    from cbr.play.retention import copy_casebase

    return copy_casebase("default", tmp_path_factory.mktemp("serve") / "mine")


@pytest.fixture(scope="package")
def token_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("token") / "token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture(scope="package")
def engine(casebase_copy):
    """One engine over the default case base and the copy, shared by the package's apps."""
    require_module("fastapi")
    from cbr.serve.engine import Engine

    eng = Engine(["default", str(casebase_copy)])
    yield eng
    eng.close()


def make_client(engine, **config):
    """A TestClient over an app with ``config`` (a :class:`~cbr.serve.app.ServeConfig`'s fields)."""
    require_module("fastapi")
    require_module("httpx")
    from cbr.serve.app import ServeConfig, create_app

    with warnings.catch_warnings():  # starlette's notice about its httpx-based client
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient

    app = create_app(ServeConfig(casebases=tuple(engine.casebases), **config), engine=engine)
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture(scope="package")
def client(engine):
    with make_client(engine, token=TOKEN) as c:
        yield c


@pytest.fixture(scope="package")
def acpc_hands(tmp_path_factory) -> str:
    """Ten heads-up limit hands as an ACPC dealer log (every hole card shown)."""
    from cbr.logs.acpc import AcpcLogWriter
    from cbr.play.match import run_match

    path = tmp_path_factory.mktemp("hands") / "hu.log"
    with AcpcLogWriter(path) as log:
        run_match(["ehs", "call"], 10, seed=5, log=log)
    return path.read_text()
