"""Shared fixtures and the suite's rules for CI.

- Every test starts from the same seed.
- ``device`` runs a test on "cpu" and on "gpu". Where MLX is missing the "gpu" runs are
  collected all the same and skipped with the reason "MLX is not installed" (so a missing
  backend shows in the summary instead of shrinking the device list silently); any test
  parametrised with the value "gpu" is treated the same way.
- Under ``CI=true`` nothing may be skipped: a skipped test, a module skipped while it is
  collected (a module-level ``pytest.importorskip``) and a missing MLX, torch, Sphinx or mypy
  all fail the run.
- Under ``CI=true`` hypothesis runs derandomised with its example database off (profile
  "ci"), so a red CI run is reproduced by running it again; elsewhere it explores with
  fresh random examples and prints the blob that reproduces a failure (profile "dev").
"""

import importlib.util
import os

import numpy as np
import pytest
from hypothesis import settings

import lucid

CI = os.environ.get("CI") == "true"
GPU = lucid.is_available("gpu")
DEVICES = ["cpu", "gpu"]
NO_MLX = "MLX is not installed (pip install 'lucid-autograd[mlx]', or '.[mlx]' from a checkout)"

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


def pytest_collection_modifyitems(config, items):
    """Without MLX, every test parametrised on "gpu" is skipped by name, not dropped."""
    if GPU:
        return
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is not None and any(isinstance(v, str) and v == "gpu" for v in spec.params.values()):
            item.add_marker(pytest.mark.skip(reason=NO_MLX))


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
