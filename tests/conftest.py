"""Shared fixtures and the suite's rules for CI.

- Every test starts from the same seed.
- ``device`` runs a test on "cpu" and on "gpu". Where MLX is missing the "gpu" runs are
  collected all the same and skipped with the reason "MLX is not installed" (so a missing
  backend shows in the summary instead of shrinking the device list silently); any test
  parametrised with the value "gpu" is treated the same way.
- Under ``CI=true`` nothing may be skipped: a skipped test, a module skipped while it is
  collected (a module-level ``pytest.importorskip``) and a missing MLX, torch, Sphinx or mypy
  all fail the run.
- A ``-k`` run leaves out the docs' tests (``tests/test_docs.py``: they build the whole site,
  about a minute) unless the expression names them: their module (``-k docs``, ``-k test_docs``)
  or a test by its name, whole or its start (``-k test_html_builds``); naming the file
  (``pytest tests/test_docs.py -k ...``) runs them too. A word that merely occurs in one of
  their names (``-k adam`` and ``test_sparse_adam_page_...``) does not, and a line after
  "collected" says what was left out and how to ask for it.
- Under ``CI=true`` hypothesis runs derandomised with its example database off (profile
  "ci"), so a red CI run is reproduced by running it again; elsewhere it explores with
  fresh random examples and prints the blob that reproduces a failure (profile "dev").
"""

import importlib.util
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

import lucid

CI = os.environ.get("CI") == "true"
GPU = lucid.is_available("gpu")
DEVICES = ["cpu", "gpu"]
NO_MLX = "MLX is not installed (pip install 'lucid-autograd[mlx]', or '.[mlx]' from a checkout)"
DOCS_TESTS = Path(__file__).resolve().with_name("test_docs.py")
_DESELECTED_DOCS = "_lucid_deselected_docs_tests"

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if CI else "dev")


def _missing_under_ci() -> list:
    """What CI must have and this interpreter lacks."""
    missing = [] if GPU else ["MLX (the gpu device)"]
    missing += [name for name in ("torch", "sphinx", "mypy") if importlib.util.find_spec(name) is None]
    return missing


def pytest_configure(config):
    if CI and _missing_under_ci():
        raise pytest.UsageError(f"CI=true: every check must run, but these are missing: {_missing_under_ci()}")


def _names_the_docs_tests(expression: str, items: list) -> bool:
    """Whether a ``-k`` expression names the docs' tests: a word of it is their module's name
    (``docs``, ``test_docs``, ``test_docs.py``) or the start of one test's name, from ``test_``."""
    words = {w.lower() for w in re.findall(r"[\w:+\-.\[\]\\/]+", expression)} - {"and", "or", "not"}
    if any("docs" in w and w in DOCS_TESTS.name for w in words):
        return True
    names = [item.name.lower() for item in items]
    return any(w.startswith("test_") and any(name.startswith(w) for name in names) for w in words)


def _docs_file_given(config) -> bool:
    """Whether the command line names tests/test_docs.py (or one of its tests) as a path."""
    here = config.invocation_params.dir
    return any((here / arg.split("::")[0]).resolve() == DOCS_TESTS for arg in config.args)


def _leave_out_docs_tests(config, items: list) -> None:
    """Under a ``-k`` that does not name them, the docs' tests (a Sphinx build) are deselected."""
    expression = config.option.keyword.strip()
    docs = [item for item in items if item.path == DOCS_TESTS]
    if not expression or not docs or _docs_file_given(config) or _names_the_docs_tests(expression, docs):
        return
    config.hook.pytest_deselected(items=docs)
    items[:] = [item for item in items if item.path != DOCS_TESTS]
    setattr(config, _DESELECTED_DOCS, (expression, len(docs)))


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what they do
def pytest_collection_modifyitems(config, items):
    """Without MLX, every test parametrised on "gpu" is skipped by name, not dropped; under a
    ``-k`` that does not name them, the docs' tests are left out."""
    _leave_out_docs_tests(config, items)
    if GPU:
        return
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and any(isinstance(v, str) and v == "gpu" for v in spec.params.values()):
            item.add_marker(pytest.mark.skip(reason=NO_MLX))


def pytest_report_collectionfinish(config):
    """The line saying that the docs' tests were left out, and how to run them."""
    if hasattr(config, _DESELECTED_DOCS):
        expression, count = getattr(config, _DESELECTED_DOCS)
        wider = f"({expression})" if " " in expression else expression
        return (f"tests/test_docs.py: left out the {count} tests that -k {expression!r} selects (they build "
                f"the documentation, about a minute): to run them, name them (-k '{wider} or docs') "
                f"or give the file")
    return []


@pytest.fixture(autouse=True)
def _seed():
    lucid.manual_seed(0)
    np.random.seed(0)


@pytest.fixture(params=DEVICES)
def device(request):
    if request.param == "gpu" and not GPU:
        pytest.skip(NO_MLX)
    return request.param


def _fail_skip_under_ci(report, what):
    if report.skipped and CI and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"{what} skipped under CI=true, where every check must run: {report.longrepr}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true a skipped test fails: CI installs torch, MLX, Sphinx and mypy, so a skip there
    means a check silently did not run."""
    outcome = yield
    _fail_skip_under_ci(outcome.get_result(), "test")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a whole module skipped while it is collected (``importorskip`` at module
    level), which never reaches pytest_runtest_makereport."""
    outcome = yield
    _fail_skip_under_ci(outcome.get_result(), "module")
