"""Case bases opened once per process (cbr.store.shared): one handle per folder whatever its
spelling, counted references, closed with the last one, one opening for openers at once."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from cbr.errors import CaseBaseError
from cbr.store import PACKAGED_CASEBASES
from cbr.store.shared import open_count, open_shared


def fds_into(path: Path) -> int:
    """This process's file descriptors open on files under ``path``."""
    root = str(path.resolve())
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith(root):
                n += 1
        except OSError:
            pass
    return n


def test_every_spelling_of_a_folder_is_one_open_case_base(tmp_path, monkeypatch) -> None:
    link = tmp_path / "link"
    link.symlink_to(PACKAGED_CASEBASES / "default")
    monkeypatch.chdir(PACKAGED_CASEBASES)
    before = open_count()
    handles = [open_shared("default"), open_shared(PACKAGED_CASEBASES / "default"), open_shared(str(link)),
               open_shared("./default")]
    try:
        assert len({id(h.cb) for h in handles}) == 1 and open_count() == before + 1
        assert len({id(h.lock) for h in handles}) == 1
        assert handles[0].path == (PACKAGED_CASEBASES / "default").resolve()
        with open_shared("default", memory_map=True) as mapped:  # a mapped base is another opening
            assert mapped.cb is not handles[0].cb and mapped.cb.memory_map
    finally:
        for h in handles:
            h.release()
    assert open_count() == before


def test_the_last_release_closes_and_a_released_reference_is_refused() -> None:
    path = PACKAGED_CASEBASES / "default"
    fds = fds_into(path)
    a = open_shared(path)
    b = a.share()
    cb = a.cb
    assert fds_into(path) > fds
    a.release()
    a.release()  # again: nothing
    assert b.cb.count("preflop") > 0 and cb._reader_lock is not None  # still open for b
    assert b.extra("k", list) is b.extra("k", dict)  # made once
    b.release()
    assert cb._reader_lock is None and fds_into(path) == fds
    with pytest.raises(CaseBaseError, match="released"):
        b.cb
    c = b.share()  # a released handle's case base opens again
    assert c.cb is not cb and c.extra("k", dict) == {}
    c.release()


def test_openers_at_once_open_it_once(tmp_path) -> None:
    from cbr.play.retention import copy_casebase

    path = copy_casebase("default", tmp_path / "mine")
    start = threading.Barrier(8)
    got: list = []

    def opener() -> None:
        start.wait()
        got.append(open_shared(path))

    threads = [threading.Thread(target=opener) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and len({id(h.cb) for h in got}) == 1
    for h in got:
        h.release()
    assert fds_into(path) == 0


def test_its_repr_counts_the_users_in_the_singular_for_one() -> None:
    path = PACKAGED_CASEBASES / "default"
    a = open_shared(path)
    try:
        assert repr(a).endswith(", 1 user)"), repr(a)
        b = a.share()
        assert repr(a).endswith(", 2 users)") and repr(b) == repr(a), repr(a)
        b.release()
    finally:
        a.release()
    assert repr(a).endswith(", released)"), repr(a)


def test_a_case_base_that_does_not_exist_is_not_counted() -> None:
    before = open_count()
    with pytest.raises(CaseBaseError):
        open_shared("no-such-casebase")
    assert open_count() == before
