"""Fixtures of the HTTP server's tests: a writable copy of the default case base, the app
over it and the default one (FastAPI's TestClient), a token, real ACPC hands, and another
package's bot that fails when it decides."""
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


@pytest.fixture
def failing_bot(tmp_path, monkeypatch):
    """An entry-point bot, ``fails_mid_hand``, that loads and sits down but raises at its first
    decision (installed as pip would: a dist-info with its entry points beside the module)."""
    import sys

    from cbr import plugins

    site = tmp_path / "site"
    info = site / "failsmid-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: failsmid\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[cbr.policies]\nfails_mid_hand = failsmid:Bot\n")
    (site / "failsmid.py").write_text(
        "from cbr.policies.base import Policy\n\n\n"
        "class Bot(Policy):\n"
        "    name = 'fails_mid_hand'\n\n"
        "    def triple(self, dp):\n"
        "        raise RuntimeError('its service went away')\n")
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    yield "fails_mid_hand"
    plugins.clear_cache()
    sys.modules.pop("failsmid", None)
