"""What the README's tour and the docs' examples build in the checkout is ignored by git: a user
who follows them (``cbr build ... -o casebases/acpc-limit``) was left with an untracked folder
in ``git status``."""
from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def built_outputs() -> list[str]:
    """The ``-o``/``--out`` folders of the ``cbr build`` lines of the pages, those under ./casebases/."""
    outs = set()
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            m = re.search(r"(?:^|\s|\$ )cbr build (.*)", line)
            if not m:
                continue
            try:
                words = shlex.split(m.group(1), comments=True)
            except ValueError:
                continue
            for flag, value in zip(words, words[1:]):
                if flag in ("-o", "--out") and value.startswith("casebases/"):
                    outs.add(value)
    return sorted(outs)


def test_the_pages_build_case_bases_under_casebases() -> None:
    assert "casebases/acpc-limit" in built_outputs()


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("out", built_outputs())
def test_a_case_base_the_pages_build_is_ignored_by_git(out: str) -> None:
    ignored = subprocess.run(["git", "check-ignore", "-q", f"{out}/manifest.json"], cwd=REPO)
    assert ignored.returncode == 0, f"{out} (built by a command of the docs) is not ignored by git"
