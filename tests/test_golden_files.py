"""Sanity checks of the optimizer case matrix and its torch golden files.

The presence and matrix checks need only numpy. The live check replays every case
through torch (a few seconds for all of them) and compares it with the stored arrays on
every machine: float64 (and the float32 files' float64 truth) at the case's own tolerance
(``optim_cases.tolerance_table``), step counts exactly, and torch's float32 run judged
against the stored truth, both ways (``trajectories.replay_problems``): torch's vectorised
kernels (sqrt, division, fused multiply-adds, BLAS) round differently from one CPU model to
the next even where ``torch.backends.cpu.get_cpu_capability()`` names the same instruction
set, so a bit-for-bit replay is a property of one machine, not of the code. ``python tools/make_golden.py --check --exact`` still does that bit-for-bit check,
as a tool on the machine that made the files. Without torch 2.13 the replay is skipped,
except under CI=true, where it fails.
"""

import importlib.metadata
import json
import os
import re

import numpy as np
import pytest

from optim_cases import DTYPES, GOLDEN_DIR, golden_path, load_golden, tolerance_table
from optim_registry import CASES, REGISTRY, info_of
from trajectories import replay_problems, split_truth

MANIFEST = GOLDEN_DIR / "MANIFEST.json"


@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_file_exists(case, dtype_name):
    assert golden_path(case, dtype_name).is_file(), "run: python tools/make_golden.py"


def test_manifest_lists_exactly_the_cases():
    manifest = json.loads(MANIFEST.read_text())
    assert [c["name"] for c in manifest["cases"]] == [c.name for c in CASES]
    stored = {p.name for p in GOLDEN_DIR.glob("*.npz")}
    assert stored == {golden_path(c, d).name for c in CASES for d in DTYPES}


def test_case_matrix_invariants():
    assert len({c.name for c in CASES}) == len(CASES)
    for case in CASES:
        assert re.fullmatch(r"[a-z0-9_]+", case.name), case.name
        assert case.steps >= 50, case.name
        assert len(case.groups) >= 2, case.name
        overrides = [{k: repr(v) for k, v in g.items() if k != "shapes"} for g in case.groups]
        assert any(o != overrides[0] for o in overrides), f"{case.name}: groups share hyperparameters"
        assert case.none_grad, case.name
        assert all(1 <= step <= case.steps and 0 <= i < len(case.shapes) for i, step in case.none_grad)
        assert case.sparse_rows == (case.optimizer == "SparseAdam"), case.name
        if case.sparse_rows:
            assert all(shape[0] >= 6 for shape in case.shapes), case.name
            assert {len(shape) for shape in case.shapes} >= {1, 3}, case.name
    # Some param must get its first grad late, so its state is created late.
    assert any({(i, 1), (i, 2), (i, 3)} <= set(c.none_grad) for c in CASES for i in range(len(c.shapes)))


def test_every_flag_is_exercised():
    """Each entry's cases set each of its flags at least once (kwargs or a group override), and
    every optimizer with cases names flags."""
    for info in REGISTRY:
        seen = set()
        for case in info.cases:
            assert case.optimizer == info.name, f"{case.name} is in {info.name}'s entry"
            for settings in (case.kwargs, *case.groups):
                seen |= {k for k, v in settings.items() if k != "shapes" and v is not False}
        assert bool(info.flags) == bool(info.cases), f"{info.name}: cases without flags, or flags without cases"
        assert info.flags <= seen, f"{info.name}: never set {info.flags - seen}"


def _installed_version(package: str) -> str | None:
    """``torch.__version__`` for torch (its local tag included), else the installed
    distribution's version; None when it is not installed."""
    if package == "torch":
        try:
            import torch
        except ImportError:
            return None
        return torch.__version__
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _torch_of_the_manifest(manifest, package="torch"):
    """Check that the reference ``package`` (torch, or another library a registry entry names)
    is the version the golden files come from (``manifest["torch"]``, or
    ``manifest["references"][package]``). Otherwise skip, or fail under CI=true (CI must
    replay them)."""
    wanted = manifest["torch"] if package == "torch" else manifest.get("references", {}).get(package)
    found = _installed_version(package)
    if found != wanted:
        reason = f"golden files are from {package} {wanted}, running {found or 'no ' + package}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: the replay may not be skipped)")
        pytest.skip(reason)


@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_torch_reproduces_golden(case, dtype_name):
    """torch, run here, gives the stored trajectories: float64 (and the float32 files' truth)
    at the case's tolerance, the step counts exactly, and its float32 run judged against the
    stored truth as accurate as the stored run, and the stored run as accurate as it."""
    manifest = json.loads(MANIFEST.read_text())
    _torch_of_the_manifest(manifest)
    _torch_of_the_manifest(manifest, info_of(case).reference_package)
    from torch_reference import golden_arrays

    problems = replay_problems(load_golden(case, dtype_name), golden_arrays(case, dtype_name), runs=True,
                               table=info_of(case).trajectory_table, float64_table=tolerance_table(case),
                               what=f"{case.name}.{dtype_name}")
    assert not problems, "\n".join(problems)


def test_every_float32_file_holds_the_truth_of_its_run():
    """The truth is the float32 run's: the same starting point (exactly) and the same keys."""
    for case in CASES:
        run, truth = split_truth(load_golden(case, "float32"))
        assert sorted(truth) == sorted(k for k in run if not k.endswith(".step")), case.name
        for i in range(len(case.shapes)):
            assert truth[f"p{i}"].dtype == np.float64
            np.testing.assert_array_equal(truth[f"p{i}"][0], run[f"p{i}"][0])


def test_a_missing_or_other_torch_fails_under_ci(monkeypatch):
    manifest = {"torch": "0.0.0-not-installed"}
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        _torch_of_the_manifest(manifest)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="golden files are from torch"):
        _torch_of_the_manifest(manifest)


def test_a_missing_or_other_reference_library_fails_under_ci(monkeypatch):
    """The same for a reference another library provides (a registry entry's reference_package)."""
    manifest = {"torch": "0.0.0", "references": {"pytest": "0.0.0-not-this-one"}}
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"golden files are from pytest 0.0.0-not-this-one, running \d"):
        _torch_of_the_manifest(manifest, "pytest")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="running no no_such_library"):
        _torch_of_the_manifest({"references": {"no_such_library": "1.0"}}, "no_such_library")


def test_the_replay_fails_on_a_difference_beyond_the_tolerance(monkeypatch):
    """The comparison above can fail: torch's float64 numbers nudged by 1e-9 relative (well
    past the float64 parity tolerance) fail the float64 replay, and so does the float32 truth;
    the float32 run moved by 1e-9 (nothing, in float32) passes, by 1e-5 (about 84 ulps) fails."""
    import torch_reference

    manifest = json.loads(MANIFEST.read_text())
    _torch_of_the_manifest(manifest)
    arrays = torch_reference.golden_arrays

    def nudged(by, keys):
        def golden_arrays(case, dtype_name):
            return {k: v * v.dtype.type(1 + by) if keys(k) else v for k, v in arrays(case, dtype_name).items()}
        return golden_arrays

    def replay(dtype_name, by, keys):
        monkeypatch.setattr(torch_reference, "golden_arrays", nudged(by, keys))
        test_torch_reproduces_golden(CASES[0], dtype_name)

    def trajectories(key):
        return not key.endswith(".step") and not key.startswith("truth.")

    replay("float32", 1e-9, trajectories)
    for dtype_name, by, keys in [("float64", 1e-9, trajectories), ("float32", 1e-9, lambda k: k.startswith("truth.")),
                                 ("float32", 1e-5, trajectories)]:
        with pytest.raises(AssertionError):
            replay(dtype_name, by, keys)
