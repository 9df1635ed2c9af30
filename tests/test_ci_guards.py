"""The suite's CI rules themselves (tests/conftest.py), run on small throwaway suites in a
subprocess: under CI=true a skipped test and a module skipped at collection both fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

MODULE_SKIP = "import pytest\npytest.importorskip('no_such_module_here')\n\ndef test_never():\n    pass\n"
TEST_SKIP = "import pytest\n\ndef test_skips():\n    pytest.skip('for no reason')\n\ndef test_passes():\n    pass\n"


def _run(tmp_path, source, ci, workers=()):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_case.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "true" if ci else "false"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


# tools/test.sh runs the whole suite on two pytest-xdist workers: the rule must hold there too
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one_process", "two_workers"])
@pytest.mark.parametrize("source", [MODULE_SKIP, TEST_SKIP], ids=["module_skip", "test_skip"])
def test_a_skip_fails_under_ci_and_is_a_skip_elsewhere(tmp_path, source, workers):
    code, out = _run(tmp_path, source, ci=True, workers=workers)
    assert code in (1, 2) and "skipped under CI=true" in out, out  # 2: a collection error
    code, out = _run(tmp_path, source, ci=False, workers=workers)
    assert code in (0, 5) and "skipped" in out, out  # 5: nothing left to run


def _collected(*args) -> tuple:
    """The test ids ``pytest --collect-only`` selects from the docs' tests and tests/test_distributed.py
    (a directory given, not a file: as ``-k`` runs of the whole suite), and its output."""
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "tests", "--ignore-glob=tests/test_[!d]*", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    ids = [line for line in done.stdout.splitlines() if "::" in line]
    return ids, done.stdout + done.stderr


@pytest.mark.parametrize("expression, docs_run", [
    ("adam", False),  # matches test_sparse_adam_page_... and a browser test's parameter: not their name
    ("not adam", False),
    ("docs", True),
    ("test_docs", True),
    ("test_html_builds", True),  # the start of one test's name
    ("adam and test_sparse_adam_page", True),
])
def test_a_k_run_builds_the_docs_only_when_it_names_their_tests(expression, docs_run):
    """The docs' tests build the whole site (about a minute): a ``-k`` run leaves them out unless the
    expression names them, and says so (tests/conftest.py)."""
    ids, out = _collected("-k", expression)
    docs = [i for i in ids if i.startswith("tests/test_docs.py::")]
    assert bool(docs) == docs_run, out
    assert ("tests/test_docs.py:" in out and "left out" in out) == (not docs_run), out


def test_naming_the_docs_file_runs_its_tests_under_any_k():
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "tests/test_docs.py", "-k", "adam"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    ids = [line for line in done.stdout.splitlines() if line.startswith("tests/test_docs.py::")]
    assert any("sparse_adam" in i for i in ids), done.stdout + done.stderr


def test_a_run_without_k_collects_the_docs_tests():
    ids, out = _collected()
    assert any(i.startswith("tests/test_docs.py::") for i in ids) and "left out" not in out, out
