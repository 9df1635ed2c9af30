"""lucid.optim against torch.optim 2.13: golden trajectories, and live when torch is importable.

Every case of ``optim_cases.CASES`` is replayed through lucid on each device and compared,
after every step, with the parameters and every state entry torch recorded (float64 on
NumPy to 1e-12 relative; float32 on NumPy and MLX to 1e-5).
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.optim
from optim_cases import CASES, gradient, initial_params, load_golden, tolerance_table
from tolerances import close

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
    for step in range(1, case.steps + 1):
        for i, p in enumerate(params):
            g = gradient(case, step, i, np.asarray(p.detach()))
            p.grad = None if g is None else lucid.tensor(g, device=device)
        optimizer.step()
        for i, p in enumerate(params):
            record[f"p{i}"].append(np.asarray(p.detach()))
            state = optimizer.state[i] if i in optimizer.state else {}
            for key, value in state.items():
                states[i].setdefault(key, {})[step] = value if key == "step" else np.asarray(value.detach())
    return {k: np.stack(v) for k, v in record.items()}, states


def _compare(case, dtype_name, device, expected):
    table = tolerance_table(case)
    trajectory, states = run_lucid(case, dtype_name, device)
    for i in range(len(trajectory)):
        close(trajectory[f"p{i}"], expected[f"p{i}"], dtype_name, table)
        state_keys = {k.split(".", 1)[1] for k in expected if k.startswith(f"s{i}.")}
        assert set(states[i]) <= state_keys, f"param {i}: lucid keeps {set(states[i])}, torch {state_keys}"
        for key in state_keys:
            golden = expected[f"s{i}.{key}"]
            for step in range(1, case.steps + 1):
                want = golden[step - 1]
                got = states[i].get(key, {}).get(step)
                if key == "step":
                    assert (got if got is not None else -1) == want, f"param {i} step count at step {step}"
                elif np.isnan(want).all():
                    assert got is None, f"param {i} has {key} at step {step}, torch has none yet"
                else:
                    assert got is not None, f"param {i} lacks {key} at step {step}"
                    close(got, want, dtype_name, table)


# MLX runs the float32 files; without MLX those runs are skipped by name (tests/conftest.py)
RUNS = [(case, dtype_name, device) for device, dtype_name in [("cpu", "float64"), ("cpu", "float32"), ("gpu", "float32")]
        for case in CASES]


@pytest.mark.parametrize("case,dtype_name,device", RUNS, ids=[f"{c.name}-{d}-{v}" for c, d, v in RUNS])
def test_golden_trajectory(case, dtype_name, device):
    _compare(case, dtype_name, device, load_golden(case, dtype_name))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_live_against_torch(case):
    torch_reference = pytest.importorskip("torch_reference")
    pytest.importorskip("torch")
    _compare(case, "float64", "cpu", torch_reference.run_torch(case, np.float64))
