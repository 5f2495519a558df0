"""`cbr build` on a full disk (issue 16, defect 6): it used to exit 3 with DuckDB's or faiss's
own text (or 1 with numpy's "73524 requested and 60384 written"), with faiss printing its
own line too. Whatever write fails (a Parquet part, an index file, the DuckDB catalog), the
build says ``error: cannot write case base OUT: no space left on device ...`` (or the OS's
reason) in one line, exits 1, and leaves no case base and no temporary directory; an
existing case base being replaced stays as it was.

Two ways to fill a disk, both real: a small tmpfs (needs root and a kernel that lets this
process mount; skipped otherwise), and a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored:
writes past it fail with EFBIG "File too large"), which works everywhere.
"""
from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.conftest import shared_path


def _cbr() -> str:
    return str(Path(sys.executable).with_name("cbr"))


def _log() -> Path:
    return shared_path("acpc", "dealer_example_limit", "2p.limit.h1000.r0.log")


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _file_size_limit(limit: int):
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def _assert_one_clean_line(r: subprocess.CompletedProcess, out: Path, reasons: tuple[str, ...]) -> None:
    assert r.returncode == 1, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: cannot write case base {out}: "), lines[0]
    assert any(reason in lines[0] for reason in reasons), lines[0]


@pytest.fixture(scope="module")
def full_size(tmp_path_factory: pytest.TempPathFactory) -> int:
    """Bytes of the case base of the log (built once where there is room)."""
    out = tmp_path_factory.mktemp("room") / "cb"
    r = subprocess.run([_cbr(), "build", str(_log()), "-o", str(out), "-j", "1"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return sum(p.stat().st_size for p in out.rglob("*") if p.is_file())


@pytest.mark.time_limit(900)
def test_a_file_size_limit_fails_every_write_cleanly(full_size: int, tmp_path: Path) -> None:
    # limits that stop the build at its first Parquet part, at the index files, and later
    for limit in (20_000, 60_000, 150_000, 250_000):
        folder = tmp_path / f"limit{limit}"
        folder.mkdir()
        out = folder / "cb"
        r = subprocess.run([_cbr(), "build", str(_log()), "-o", str(out), "-j", "1"], capture_output=True,
                           text=True, timeout=600, preexec_fn=_file_size_limit(limit))
        _assert_one_clean_line(r, out, ("file too large", "file size limit reached"))
        assert "nothing was written" in r.stderr
        assert list(folder.iterdir()) == []  # no case base, no temporary directory
    # replacing a case base: it stays as it was
    folder = tmp_path / "replace"
    folder.mkdir()
    out = folder / "cb"
    assert subprocess.run([_cbr(), "build", str(_log()), "-o", str(out), "-j", "1"], capture_output=True,
                          timeout=600).returncode == 0
    before = _digest(out)
    r = subprocess.run([_cbr(), "build", str(_log()), "-o", str(out), "-j", "1", "--overwrite"], capture_output=True,
                       text=True, timeout=600, preexec_fn=_file_size_limit(150_000))
    _assert_one_clean_line(r, out, ("file too large", "file size limit reached"))
    assert "unchanged" in r.stderr
    assert [p.name for p in folder.iterdir()] == ["cb"] and _digest(out) == before


def _mount_tmpfs(where: Path, size: int) -> bool:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", f"cbr-test-{uuid.uuid4().hex[:8]}",
                        str(where)], capture_output=True, text=True)
    return r.returncode == 0


@pytest.mark.time_limit(900)
def test_a_full_tmpfs_fails_every_write_cleanly(full_size: int, tmp_path: Path) -> None:
    # disks that fill up at the parts, the indexes, the catalog: fractions of the case base
    for fraction in (0.07, 0.3, 0.55, 0.9):
        disk = tmp_path / f"disk{fraction}"
        if not _mount_tmpfs(disk, int(full_size * fraction) // 4096 * 4096 + 4096):
            pytest.skip("cannot mount a tmpfs here (needs root and a kernel that allows it); "
                        "the file-size-limit test covers the same failures")
        try:
            out = disk / "cb"
            r = subprocess.run([_cbr(), "build", str(_log()), "-o", str(out), "-j", "1"], capture_output=True,
                               text=True, timeout=600)
            _assert_one_clean_line(r, out, ("no space left on device",))
            assert list(disk.iterdir()) == []  # no case base, no temporary directory
        finally:
            subprocess.run(["umount", str(disk)], capture_output=True)
