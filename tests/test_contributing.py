"""The Contributing page (docs/guide/contributing.rst) names files that exist: every path it
lists, in double backquotes, is a file or folder of the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "guide" / "contributing.rst"
LITERAL = re.compile(r"``(.+?)``")
# a word of a literal that is a path: it holds a slash, or ends in a suffix the repository uses
PATH = re.compile(r"^[\w./-]+(?:/|\.py|\.rst|\.toml|\.sh|\.json)$")


def listed_paths() -> list[str]:
    """Every path the page names, alone in a literal or as a word of a command."""
    words = (word for literal in LITERAL.findall(PAGE.read_text(encoding="utf-8")) for word in literal.split())
    return sorted({word for word in words if PATH.match(word)})


def test_the_page_lists_the_files_of_each_change():
    paths = set(listed_paths())
    assert {"lucid/optim/adopt.py", "tests/optim_registry.py", "tests/op_cases.py", "tools/make_golden.py",
            "tests/scheduler_cases.py", "lucid/optim/lr_scheduler/__init__.py"} <= paths


@pytest.mark.parametrize("path", listed_paths())
def test_listed_path_exists(path):
    bare = path.split("/")[-1]
    if "/" not in path:  # a file named alone: it lies in a folder the page names beside it
        assert list(ROOT.glob(f"**/{bare}")), f"{path} is named on the Contributing page but does not exist"
    else:
        assert (ROOT / path).exists(), f"{path} is named on the Contributing page but does not exist"
