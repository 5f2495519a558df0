"""``cbr serve`` under load (``bench/load_serve.py``): clients on loopback mixing retrieval,
re-use, retention and bad input; no 5xx, every status as it should be, no retained case lost,
the server's memory flat. Short form: 4 clients x 40 requests; the long form
(``CBR_RELIABILITY=long``) is the full one, 16 clients x 500 requests."""
from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import REPO, require_module
from tests.reliability import reliability_rounds


def _load_module():
    spec = importlib.util.spec_from_file_location("load_serve", REPO / "bench" / "load_serve.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.time_limit(120)
def test_serve_under_mixed_load_loses_nothing(tmp_path) -> None:
    require_module("httpx")
    require_module("fastapi")
    require_module("uvicorn")
    long = reliability_rounds(1) > 1
    clients, requests = (16, 500) if long else (4, 40)
    report = _load_module().run_load(clients, requests, seed=1, folder=tmp_path)
    assert report["errors_5xx"] == 0, report
    assert report["wrong_status"] == 0, report["wrong_examples"]
    assert report["answered"] >= clients * requests
    assert report["retained_cases"] > 0 and report["lost_cases"] == 0, report
    assert report["server_alive"]
    assert report["rss_growth_mb"] < report["max_growth_mb"], report
    assert report["ok"], report
