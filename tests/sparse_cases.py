"""Row-sparse gradient cases: SparseAdam, SGD and Adagrad fed *sparse* gradients.

The gradients are what ``Embedding(sparse=True)`` gives: a list of row indices, drawn with
replacement so that rows repeat (uncoalesced, duplicates in any order), and one row of
values per index. torch receives them as ``torch.sparse_coo_tensor`` (unchecked, uncoalesced,
as its embedding backward makes them); lucid as ``lucid.sparse_coo_tensor``. The values
depend on the parameter (``0.5 * param[rows] + noise``), so the trajectories feed back.

``tools/make_golden.py --sparse`` records torch's run of each case in
``tests/golden/sparse/{case}.{dtype}.npz``: ``p{i}`` (``steps + 1`` snapshots of param ``i``)
and ``s{i}.{key}`` (each state tensor after every step, dense, NaN while absent;
SGD's sparse momentum buffer is stored as its dense value); a float32 file also holds the
float64 truth of its run under ``truth.`` keys (:func:`golden_sparse_arrays`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "sparse"
DTYPES = {"float64": np.float64, "float32": np.float32}

#: At this step every param gets an empty sparse gradient (no rows, not None).
EMPTY_STEP = 5
#: (param index, step) pairs whose gradient is None.
NONE_GRAD = ((1, 1), (1, 2), (0, 9), (2, 12))
#: An embedding table, a 1-D parameter (each element a row) and a 3-D one (rows along dim 0).
SHAPES = ((12, 3), (10,), (8, 2, 2))


@dataclass(frozen=True)
class SparseCase:
    name: str
    optimizer: str
    kwargs: dict
    second: dict = field(default_factory=dict)  # group 1's overrides (params 1 and 2)
    steps: int = 20
    seed: int = 0

    @property
    def groups(self):
        return [{"params": [0]}, {"params": [1, 2], **self.second}]


CASES = [
    SparseCase("sparse_adam", "SparseAdam", {"lr": 0.05}, {"betas": (0.8, 0.99), "eps": 1e-3}),
    SparseCase("sparse_adam_maximize", "SparseAdam", {"lr": 0.02, "maximize": True}, {"maximize": False}),
    SparseCase("sgd", "SGD", {"lr": 0.1}, {"lr": 0.05, "maximize": True}),
    SparseCase("sgd_momentum", "SGD", {"lr": 0.05, "momentum": 0.9}, {"dampening": 0.3}),
    SparseCase("sgd_nesterov", "SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}, {"lr": 0.02}),
    SparseCase("adagrad", "Adagrad", {"lr": 0.1}, {"lr_decay": 0.1}),
    SparseCase("adagrad_initial_maximize", "Adagrad", {"lr": 0.05, "initial_accumulator_value": 0.1},
               {"maximize": True, "eps": 1e-3}),
]
CASES_BY_NAME = {c.name: c for c in CASES}


def initial_params(case: SparseCase, dtype, inputs=None) -> list[np.ndarray]:
    """The starting point in ``dtype``; ``inputs=np.float32`` rounds the draws to float32 first
    (the float32 run's, for its float64 truth)."""
    rng = np.random.default_rng(case.seed)
    return [rng.standard_normal(shape).astype(inputs or dtype).astype(dtype) for shape in SHAPES]


def sparse_gradient(case: SparseCase, step: int, index: int, param: np.ndarray, inputs=None):
    """``(rows, values)`` of param ``index`` at ``step`` (rows repeat), or None for no gradient.
    ``inputs=np.float32`` rounds the noise draws to float32 first, as :func:`initial_params`."""
    if (index, step) in NONE_GRAD:
        return None
    dtype = param.dtype.type
    n = param.shape[0]
    rng = np.random.default_rng([case.seed, step, index])
    count = 0 if step == EMPTY_STEP else int(rng.integers(1, 2 * n))
    rows = rng.integers(0, n, size=count).astype(np.int64)
    noise = rng.standard_normal((count,) + param.shape[1:]).astype(inputs or dtype).astype(dtype) * dtype(0.1)
    return rows, param[rows] * dtype(0.5) + noise


def golden_path(case: SparseCase, dtype_name: str) -> Path:
    return GOLDEN_DIR / f"{case.name}.{dtype_name}.npz"


def load_golden(case: SparseCase, dtype_name: str) -> dict:
    with np.load(golden_path(case, dtype_name), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _record(out, i, t, steps, state, dtype, to_numpy):
    for key, value in state.items():
        if key == "step":
            continue
        name = f"s{i}.{key}"
        array = to_numpy(value)
        if name not in out:
            out[name] = np.full((steps,) + array.shape, np.nan, dtype=dtype)
        out[name][t - 1] = array


def golden_sparse_arrays(case: SparseCase, dtype_name: str) -> dict:
    """What the golden file of ``case`` in ``dtype_name`` holds: torch's run and, in a float32
    file, its float64 truth under ``truth.`` keys: the same run in float64 from the float32
    starting point and noise, as for the dense cases (see optim_cases' docstring)."""
    from trajectories import with_truth

    run = run_torch_sparse(case, DTYPES[dtype_name])
    if dtype_name == "float64":
        return run
    return with_truth(run, run_torch_sparse(case, np.float64, inputs=np.float32), case.name)


def run_torch_sparse(case: SparseCase, dtype, inputs=None) -> dict:
    """Replay ``case`` through ``torch.optim``: torch's arrays of its golden file (``inputs``:
    see :func:`golden_sparse_arrays`)."""
    import torch

    params = [torch.from_numpy(a.copy()).requires_grad_() for a in initial_params(case, dtype, inputs)]
    groups = [{**g, "params": [params[i] for i in g["params"]]} for g in case.groups]
    optimizer = getattr(torch.optim, case.optimizer)(groups, **case.kwargs)
    out = {f"p{i}": np.empty((case.steps + 1,) + tuple(p.shape), dtype=dtype) for i, p in enumerate(params)}
    for i, p in enumerate(params):
        out[f"p{i}"][0] = p.detach().numpy()
    for t in range(1, case.steps + 1):
        for i, p in enumerate(params):
            grad = sparse_gradient(case, t, i, p.detach().numpy(), inputs)
            if grad is None:
                p.grad = None
                continue
            rows, values = grad
            p.grad = torch.sparse_coo_tensor(torch.from_numpy(rows[None, :]), torch.from_numpy(values),
                                             size=p.shape, check_invariants=False)
        optimizer.step()
        for i, p in enumerate(params):
            out[f"p{i}"][t] = p.detach().numpy()
            state = {k: v for k, v in optimizer.state.get(p, {}).items() if k != "step"}
            _record(out, i, t, case.steps, state, dtype,
                    lambda v: (v.to_dense() if v.is_sparse else v).detach().numpy())
    return out


def run_lucid_sparse(case: SparseCase, dtype, device="cpu") -> dict:
    """Replay ``case`` through ``lucid.optim`` on ``device``, recording as the golden files do."""
    import lucid
    from lucid import nn, optim

    params = [nn.Parameter(lucid.tensor(a, device=device)) for a in initial_params(case, dtype)]
    groups = [{**g, "params": [params[i] for i in g["params"]]} for g in case.groups]
    optimizer = getattr(optim, case.optimizer)(groups, **case.kwargs)
    out = {f"p{i}": np.empty((case.steps + 1,) + tuple(p.shape), dtype=dtype) for i, p in enumerate(params)}
    for i, p in enumerate(params):
        out[f"p{i}"][0] = np.array(p.detach())
    for t in range(1, case.steps + 1):
        for i, p in enumerate(params):
            grad = sparse_gradient(case, t, i, np.array(p.detach()))
            if grad is None:
                p.grad = None
                continue
            rows, values = grad
            p.grad = lucid.sparse_coo_tensor(rows[None, :], lucid.tensor(values, device=device), p.shape)
        optimizer.step()
        for i, p in enumerate(params):
            out[f"p{i}"][t] = np.array(p.detach())
            state = {k: v for k, v in (optimizer.state.for_param(p) or {}).items() if k != "step"}
            _record(out, i, t, case.steps, state, dtype,
                    lambda v: np.array((v.to_dense() if v.is_sparse else v).detach()))
    return out
