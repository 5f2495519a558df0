"""The embedded default case base: present, valid, and reproducible from its kept logs."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from casebases import DEFAULT, HERE
from cbr.build.local import build_casebase
from cbr.game.gamedef import STREETS
from cbr.store import CaseBase, resolve_casebase

REPO = HERE.parent


def test_default_is_found_by_name_and_opens() -> None:
    assert resolve_casebase("default").resolve() == DEFAULT.resolve()
    cb = CaseBase.open(DEFAULT)
    try:
        for street in STREETS:
            assert cb.count(street) > 1000, f"too few {street} cases in the default case base"
        games = {g.name for g in cb.games()}
        assert {"holdem.limit.2p", "casper.9p"} <= games  # heads-up and 9-player self-play
    finally:
        cb.close()


def test_default_is_small_enough_to_ship() -> None:
    size = sum(p.stat().st_size for p in DEFAULT.rglob("*") if p.is_file())
    assert size <= 20 * 2**20, f"default case base is {size / 2**20:.1f} MiB; the limit is 20 MiB"


def test_default_sources_are_the_kept_selfplay_logs() -> None:
    cb = CaseBase.open(DEFAULT)
    try:
        sources = cb.manifest.sources
    finally:
        cb.close()
    assert sources, "the manifest lists no sources"
    for src in sources:
        path = REPO / src["path"]
        assert path.is_file(), f"{src['path']} is listed as a source but is not in the repository"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == src["sha256"], f"{src['path']} changed since the build"


def test_default_cases_are_reproducible_from_one_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuilding from one kept log gives exactly the default's cases of that source."""
    source = "casebases/selfplay/hu-lag-hs.log"
    monkeypatch.chdir(REPO)  # provenance paths are relative to the repository
    build_casebase([source], tmp_path / "again", name="again")
    shipped, again = CaseBase.open(DEFAULT), CaseBase.open(tmp_path / "again")
    try:
        for street in STREETS:
            t = shipped.table(street)
            mine = np.asarray(t.column("source").to_pylist()) == source
            a = shipped.cases(street)
            b = again.cases(street)
            assert b.features.shape[0] == int(mine.sum()), street
            np.testing.assert_array_equal(a.features[mine], b.features, err_msg=street)
            assert list(a.actions[mine]) == list(b.actions), street
            np.testing.assert_array_equal(a.outcomes[mine], b.outcomes, err_msg=street)  # schema 3
            assert not np.isnan(b.outcomes).any(), street  # ACPC logs give every hand's payoffs
    finally:
        shipped.close()
        again.close()


def test_default_carries_checksums_and_reading_it_changes_nothing() -> None:
    """Schema 4 (2 + outcomes + retention provenance): every part, the similarity file, each index file and the catalog have a
    size and CRC-32 in the manifest (parts also Parquet page CRCs); opening and querying the
    shipped case base writes nothing into it."""
    import pyarrow.parquet as pq

    from cbr.store.manifest import SCHEMA_VERSION, file_checksum

    def snapshot() -> dict[str, str]:
        return {str(p.relative_to(DEFAULT)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(DEFAULT.rglob("*")) if p.is_file()}

    before = snapshot()
    cb = CaseBase.open(DEFAULT)
    try:
        m = cb.manifest
        assert m.schema_version == SCHEMA_VERSION == 4 and m.log is None
        for street in STREETS:
            for part in m.parts[street]:
                assert file_checksum(DEFAULT / part["file"]) == {"bytes": part["bytes"], "crc32": part["crc32"]}
                pq.read_table(DEFAULT / part["file"], page_checksum_verification=True)
                assert pq.ParquetFile(DEFAULT / part["file"]).metadata.row_group(0).num_rows == part["rows"]
            entry = m.index[street]
            assert set(entry["files"]) == {f.name for f in (DEFAULT / entry["file"]).iterdir()}
            assert cb.index(street).n_cases_ == cb.count(street)
        assert file_checksum(DEFAULT / "similarity.toml") == m.checksums["similarity.toml"]
        assert m.catalog == file_checksum(DEFAULT / "catalog.duckdb")
        assert cb.sql("SELECT count(*) FROM cases").fetchone() == (cb.count(),)
        assert cb.notes == []
    finally:
        cb.close()
    assert snapshot() == before


def test_the_recipe_writes_under_the_output_root_not_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture) -> None:
    """``python -m casebases.build_default`` wrote its logs and case base into the package folder
    wherever it ran (site-packages after ``pip install .``). Run outside the checkout, it reads and
    writes ``casebases/`` of the current folder (:func:`casebases.output_root`), as the other
    recipes do; the sources are named relative to it, as in the shipped base."""
    import shutil

    from casebases import build_default

    monkeypatch.chdir(tmp_path)                      # restored after the test (the recipe changes folder)
    shipped = {p: p.stat().st_mtime_ns for p in (HERE / "default").rglob("*")}
    with pytest.raises(SystemExit, match=f"no self-play logs in {tmp_path.resolve() / 'casebases' / 'selfplay'}; "):
        build_default.build(cases_only=True, workers=1)
    (tmp_path / "casebases" / "selfplay").mkdir(parents=True)
    shutil.copy(HERE / "selfplay" / "hu-lag-hs.log", tmp_path / "casebases" / "selfplay")
    build_default.build(cases_only=True, workers=1)
    assert f"built {tmp_path.resolve() / 'casebases' / 'default'}: " in capsys.readouterr().err
    cb = CaseBase.open(tmp_path / "casebases" / "default")
    try:
        assert [s["path"] for s in cb.manifest.sources] == ["casebases/selfplay/hu-lag-hs.log"]
    finally:
        cb.close()
    assert {p: p.stat().st_mtime_ns for p in (HERE / "default").rglob("*")} == shipped
