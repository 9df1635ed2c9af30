"""lucid.optim against torch.optim 2.13: golden trajectories, and live when torch is importable.

Every case of ``optim_registry.CASES`` is replayed through lucid on each device and compared,
after every step, with the parameters and every state entry torch recorded. float64 (on
NumPy) is held to torch's float64 run to 1e-12 relative. A float32 run (on NumPy and MLX)
is judged, step by step and tensor by tensor, against the float64 truth of the same float32
computation, with torch's float32 run of it as the ceiling (tests/trajectories.py; the
truth is described in optim_cases' docstring): against the golden files, and live against
torch's float32 run here. Step counts, which states exist at which step, and the starting
point are exact.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import lucid
import lucid.optim
from optim_cases import gradient, initial_params, load_golden, recorded_steps, tolerance_table
from optim_registry import CASES, CASES_BY_NAME, info_of
from trajectories import TRUTH, judge_recording, split_truth

DTYPES = {"float64": lucid.float64, "float32": lucid.float32}


def _hyper(value, device):
    """A case's hyperparameter for lucid: 0-d arrays stand for Tensor hyperparameters."""
    if isinstance(value, np.ndarray):
        return lucid.tensor(value, device=device)
    if isinstance(value, tuple):
        return tuple(_hyper(v, device) for v in value)
    return value


def run_lucid(case, dtype_name, device):
    """Replay ``case`` through lucid.optim; record what run_torch records."""
    dtype = DTYPES[dtype_name]
    params = [lucid.nn.Parameter(lucid.tensor(p, dtype=dtype, device=device))
              for p in initial_params(case, np.dtype(dtype_name))]
    groups, start = [], 0
    for group in case.groups:
        count = len(group["shapes"])
        overrides = {k: _hyper(v, device) for k, v in group.items() if k != "shapes"}
        groups.append({"params": params[start:start + count], **overrides})
        start += count
    kwargs = {k: _hyper(v, device) for k, v in case.kwargs.items()}
    optimizer = getattr(lucid.optim, case.optimizer)(groups, **kwargs)
    record = {f"p{i}": [p.detach().numpy().copy() for _ in range(1)] for i, p in enumerate(params)}
    states = [dict() for _ in params]
    recorded = set(recorded_steps(case))
    for step in range(1, case.steps + 1):
        for i, p in enumerate(params):
            g = gradient(case, step, i, np.asarray(p.detach()))
            p.grad = None if g is None else lucid.tensor(g, device=device)
        optimizer.step()
        if step in case.eval_after:
            optimizer.eval()
        if step not in recorded:  # (the eval_after steps are recorded)
            continue
        for i, p in enumerate(params):
            record[f"p{i}"].append(np.asarray(p.detach()))
            state = optimizer.state[i] if i in optimizer.state else {}
            for key, value in state.items():
                states[i].setdefault(key, {})[step] = value if key == "step" else np.asarray(value.detach())
        if step in case.eval_after:  # the evaluation weights recorded: back to training
            optimizer.train()
    return {k: np.stack(v) for k, v in record.items()}, states


def _recorded(case, trajectory, states, expected):
    """lucid's run in the layout of ``expected`` (a golden recording): ``p{i}`` as they are,
    each state entry of torch's after every step (NaN while lucid has none), step counts
    (-1 while there is none). Asserts that lucid keeps no state torch does not."""
    out = dict(trajectory)
    for i in range(len(trajectory)):
        state_keys = {k.split(".", 1)[1] for k in expected if k.startswith(f"s{i}.")}
        assert set(states[i]) <= state_keys, f"param {i}: lucid keeps {set(states[i])}, torch {state_keys}"
        for key in state_keys:
            want = expected[f"s{i}.{key}"]
            got = states[i].get(key, {})
            if key == "step":
                out[f"s{i}.step"] = np.array([got.get(t, -1) for t in recorded_steps(case)], dtype=np.int64)
            else:
                out[f"s{i}.{key}"] = np.stack([np.asarray(got[t], dtype=want.dtype) if t in got
                                               else np.full(want.shape[1:], np.nan, want.dtype)
                                               for t in recorded_steps(case)])
    return out


def _compare(case, dtype_name, device, expected, run=None):
    """lucid's run of ``case`` (``run``: one made already, else made here) against
    ``expected``: torch's recording, with its truth in a float32 one."""
    trajectory, states = run_lucid(case, dtype_name, device) if run is None else run
    torch_run, _ = split_truth(expected)
    got = _recorded(case, trajectory, states, torch_run)
    for key, want in torch_run.items():
        if key.endswith(".step"):
            continue
        # which states exist at which step: exactly torch's; the starting point: the input
        exists = ~np.isnan(want).reshape(len(want), -1).all(axis=1)
        np.testing.assert_array_equal(~np.isnan(got[key]).reshape(len(want), -1).all(axis=1), exists,
                                      err_msg=f"{case.name}: {key} exists at other steps than torch's")
        if key.startswith("p"):
            np.testing.assert_array_equal(got[key][0], want[0], err_msg=f"{case.name}: {key} initially")
    judge_recording(got, expected, runs=True, table=info_of(case).trajectory_table, float64_table=tolerance_table(case),
                    what=f"{case.name} ({dtype_name} on {device})")


# lucid's runs, kept for the live comparison of the same run (each case is run once per device)
_RUNS: dict = {}


def _run_once(case, dtype_name, device):
    key = (case.name, dtype_name, device)
    if key not in _RUNS:
        _RUNS[key] = run_lucid(case, dtype_name, device)
    return _RUNS[key]


# MLX runs the float32 files; without MLX those runs are skipped by name (tests/conftest.py)
KINDS = [("float64", "cpu"), ("float32", "cpu"), ("float32", "gpu")]
RUNS = [(case, dtype_name, device) for dtype_name, device in KINDS for case in CASES]
LIVE = [(case, dtype_name, device) for case in CASES for dtype_name, device in KINDS]  # torch runs once a case


@pytest.mark.parametrize("case,dtype_name,device", RUNS, ids=[f"{c.name}-{d}-{v}" for c, d, v in RUNS])
def test_golden_trajectory(case, dtype_name, device):
    _compare(case, dtype_name, device, load_golden(case, dtype_name), _run_once(case, dtype_name, device))


@functools.lru_cache(maxsize=2)
def _torch_here(name, dtype_name):
    """torch's run of the case here; a float32 one with the golden file's truth (the float64
    truth is the same on every machine, to float64 rounding: test_golden_files.py)."""
    from torch_reference import run_torch

    case = CASES_BY_NAME[name]
    arrays = run_torch(case, np.dtype(dtype_name).type)
    if dtype_name == "float32":
        arrays.update({k: v for k, v in load_golden(case, dtype_name).items() if k.startswith(TRUTH)})
    return arrays


@pytest.mark.parametrize("case,dtype_name,device", LIVE, ids=[f"{c.name}-{d}-{v}" for c, d, v in LIVE])
def test_live_against_torch(case, dtype_name, device):
    """The same against torch (or the entry's reference library) run here, whose float32
    kernels round as this CPU's do."""
    pytest.importorskip("torch")
    pytest.importorskip(info_of(case).reference_package)
    _compare(case, dtype_name, device, _torch_here(case.name, dtype_name),
             _RUNS.pop((case.name, dtype_name, device), None))


@pytest.mark.parametrize("dtype_name,device", [("float32", "cpu"), ("float32", "gpu")])
def test_a_slightly_different_update_fails(dtype_name, device):
    """The float32 judge catches what a different update would do: Adam with betas
    (0.9, 0.9999) instead of (0.9, 0.999), or an lr 0.1% larger (about 400 ulps of the first
    parameter after 50 steps), against adam_default's golden run; and lucid's own run moved by
    1e-6 relative (about 8 ulps) from step 25 on."""
    import dataclasses

    case = CASES_BY_NAME["adam_default"]
    expected = load_golden(case, dtype_name)
    for change in ({"betas": (0.9, 0.9999)}, {"lr": 1.001e-3}):
        other = dataclasses.replace(case, kwargs={**case.kwargs, **change})
        with pytest.raises(AssertionError, match="lucid's float32 error"):
            _compare(case, dtype_name, device, expected, run_lucid(other, dtype_name, device))
    trajectory, states = run_lucid(case, dtype_name, device)
    moved = {**trajectory, "p0": trajectory["p0"].copy()}
    moved["p0"][25:] *= np.float32(1 + 1e-6)
    _compare(case, dtype_name, device, expected, (trajectory, states))
    with pytest.raises(AssertionError, match="p0 at step 25"):
        _compare(case, dtype_name, device, expected, (moved, states))
