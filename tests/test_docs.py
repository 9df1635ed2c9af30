"""The Sphinx documentation builds without a warning, and its ``.. doctest::`` blocks pass.

Docstring examples are not run here: pytest's ``--doctest-modules`` (pyproject.toml) runs
them. The doctest builder is configured (``docs/conf.py``) to run only the explicit
``.. doctest::`` blocks of the pages themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"

# Sphinx's own deprecation notices (napoleon calling autodoc's old option API) are not ours.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::PendingDeprecationWarning")


def _build(builder: str, out_dir: Path, *options: str) -> int:
    from sphinx.cmd.build import build_main

    return build_main([*options, "-b", builder, "-q", str(DOCS), str(out_dir)])


def _has_doctest_blocks() -> bool:
    pattern = re.compile(r"^\s*\.\. (doctest|testcode)::", re.MULTILINE)
    return any(pattern.search(page.read_text(encoding="utf-8")) for page in DOCS.rglob("*.rst"))


def test_html_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    out = tmp_path / "html"
    assert _build("html", out, "-W", "--keep-going") == 0, "sphinx-build -W failed: see the warnings above"
    assert (out / "index.html").is_file()


def test_doctest_blocks_pass(tmp_path):
    pytest.importorskip("sphinx")
    if not _has_doctest_blocks():
        pytest.skip("no .. doctest:: blocks in docs/")
    out = tmp_path / "doctest"
    # Warnings are the html test's business; this one fails only on a failing example.
    status = _build("doctest", out)
    report = out / "output.txt"
    assert status == 0, report.read_text() if report.exists() else "the doctest builder failed"
