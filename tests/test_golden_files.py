"""Sanity checks of the optimizer case matrix and its torch golden files.

The presence and matrix checks need only numpy. The live check replays every
case through torch (about 2 s for all of them) and must reproduce the stored
arrays bit for bit on a CPU of the manifest's family, and at the PARITY tolerance
on another (FMA rounding). Without torch 2.13 it is skipped, except under CI=true,
where it fails.
"""

import json
import os
import re

import numpy as np
import pytest

from optim_cases import CASES, DTYPES, GOLDEN_DIR, golden_path, load_golden
from tolerances import close

MANIFEST = GOLDEN_DIR / "MANIFEST.json"

# Flags each optimizer's cases must switch on at least once (in the
# constructor kwargs or in a group override).
REQUIRED_FLAGS = {
    "SGD": {"lr", "momentum", "dampening", "nesterov", "weight_decay", "maximize"},
    "Adam": {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "decoupled_weight_decay"},
    "AdamW": {"lr", "weight_decay", "amsgrad", "maximize"},
    "SparseAdam": {"lr", "betas", "eps", "maximize"},
    "Adadelta": {"lr", "rho", "eps", "weight_decay", "maximize"},
    "Adagrad": {"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize"},
    "Adamax": {"lr", "betas", "eps", "weight_decay", "maximize"},
    "ASGD": {"lr", "lambd", "alpha", "t0", "weight_decay", "maximize"},
    "NAdam": {"lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize"},
    "RAdam": {"lr", "betas", "eps", "weight_decay", "decoupled_weight_decay", "maximize"},
    "RMSprop": {"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"},
    "Rprop": {"lr", "etas", "step_sizes", "maximize"},
    "Adafactor": {"lr", "beta2_decay", "eps", "d", "weight_decay", "maximize"},
    "Muon": {"lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps", "ns_steps", "adjust_lr_fn"},
    "Lion": {"lr", "betas", "weight_decay", "maximize"},
}

# torch's vectorised CPU kernels (AVX2 and AVX512 here) fuse `add(alpha=)` and
# `lerp` into FMAs; the scalar DEFAULT kernels round twice. Golden files are
# only reproducible on a machine of the same family.
FMA_CAPABILITIES = {"AVX2", "AVX512"}


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
    seen = {name: set() for name in REQUIRED_FLAGS}
    for case in CASES:
        for settings in (case.kwargs, *case.groups):
            seen[case.optimizer] |= {k for k, v in settings.items() if k != "shapes" and v is not False}
    for name, flags in REQUIRED_FLAGS.items():
        assert flags <= seen[name], f"{name}: never set {flags - seen[name]}"


def _torch_of_the_manifest(manifest):
    """torch, if it is the version the golden files come from. Otherwise skip, or fail
    under CI=true (CI must replay them)."""
    try:
        import torch
    except ImportError:
        torch = None
    found = None if torch is None else torch.__version__
    if found != manifest["torch"]:
        reason = f"golden files are from torch {manifest['torch']}, running {found or 'no torch'}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason + " (CI=true: the replay may not be skipped)")
        pytest.skip(reason)
    return torch


def same_cpu_path(here: str, there: str) -> bool:
    """Whether torch's CPU kernels round the same way on both capabilities."""
    return here == there or {here, there} <= FMA_CAPABILITIES


@pytest.mark.parametrize("dtype_name", sorted(DTYPES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_torch_reproduces_golden(case, dtype_name):
    """Bit for bit on a CPU of the manifest's family; at the PARITY tolerance on another
    (FMA against twice-rounded kernels), never skipped for that."""
    manifest = json.loads(MANIFEST.read_text())
    torch = _torch_of_the_manifest(manifest)
    from torch_reference import run_torch

    exact = same_cpu_path(torch.backends.cpu.get_cpu_capability(), manifest["torch_cpu_capability"])
    stored = load_golden(case, dtype_name)
    fresh = run_torch(case, DTYPES[dtype_name])
    assert sorted(fresh) == sorted(stored)
    for key, expected in stored.items():
        assert fresh[key].dtype == expected.dtype, key
        if exact:
            assert np.array_equal(fresh[key], expected, equal_nan=True), key
        else:
            close(fresh[key], expected, dtype_name)


def test_capability_families():
    assert same_cpu_path("AVX2", "AVX512") and same_cpu_path("DEFAULT", "DEFAULT")
    assert not same_cpu_path("DEFAULT", "AVX2")


def test_a_missing_or_other_torch_fails_under_ci(monkeypatch):
    manifest = {"torch": "0.0.0-not-installed"}
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true"):
        _torch_of_the_manifest(manifest)
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="golden files are from torch"):
        _torch_of_the_manifest(manifest)


def test_another_cpu_path_compares_at_the_parity_tolerance(monkeypatch):
    """The fallback runs (and passes) when the capability is of the other family."""
    manifest = json.loads(MANIFEST.read_text())
    torch = _torch_of_the_manifest(manifest)
    other = "DEFAULT" if manifest["torch_cpu_capability"] in FMA_CAPABILITIES else "AVX2"
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: other)
    for dtype_name in sorted(DTYPES):
        test_torch_reproduces_golden(CASES[0], dtype_name)
