"""Cases for the gradient tools (clipping, SWA/EMA, SWALR), run through torch and through lucid.

Each case gives its inputs deterministically (NumPy's seeded generator), so the same arrays
go to ``torch.nn.utils`` / ``torch.optim.swa_utils`` and to lucid. ``run_torch_*`` and
``run_lucid_*`` return ``{name: np.ndarray}`` dicts with the same keys, which
``tools/make_golden.py --grad-tools`` stores as ``tests/golden/grad_tools/{case}.npz``.
torch is imported lazily, so this module imports without it.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "grad_tools"

SHAPES = [(3, 4), (5,), (2, 2, 3), (1,)]


# --- clipping ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ClipCase:
    name: str
    norm_type: object = 2.0
    max_norm: float = 1.0
    dtypes: tuple = ("float64",) * 4
    none: tuple = ()  # indices of parameters without a gradient
    scale: float = 3.0  # gradient magnitude
    poison: str = ""  # "inf" or "nan": one entry of the first gradient
    count: int = 4  # how many parameters (0: empty input)
    inputs: tuple = ()  # the dtypes the draws are rounded to first (``dtypes`` when empty)


CLIP_CASES = [
    *[ClipCase(f"clip_l{p}_{d}", norm_type=float(p), dtypes=(d,) * 4) for p in (1, 2, 3) for d in ("float64", "float32")],
    *[ClipCase(f"clip_inf_{d}", norm_type=math.inf, dtypes=(d,) * 4) for d in ("float64", "float32")],
    ClipCase("clip_inf_string", norm_type="inf"),
    ClipCase("clip_l2_half_power", norm_type=0.5, max_norm=50.0),
    ClipCase("clip_no_clipping", max_norm=1e6),
    ClipCase("clip_max_norm_inf", max_norm=math.inf),
    ClipCase("clip_mixed_dtypes", dtypes=("float32", "float64", "float32", "float64")),
    ClipCase("clip_mixed_dtypes_inf", norm_type=math.inf, dtypes=("float32", "float64", "float32", "float64")),
    ClipCase("clip_none_grads", none=(0, 2)),
    ClipCase("clip_all_none", none=(0, 1, 2, 3)),
    ClipCase("clip_empty", count=0),
    ClipCase("clip_inf_entry", poison="inf"),
    ClipCase("clip_nan_entry", poison="nan"),
    ClipCase("clip_inf_entry_float32", poison="inf", dtypes=("float32",) * 4),
]


def clip_inputs(case: ClipCase) -> list:
    """The gradients of the case, as NumPy arrays (None for a parameter without one)."""
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    grads = []
    for i in range(case.count):
        g = (rng.standard_normal(SHAPES[i]) * case.scale).astype((case.inputs or case.dtypes)[i]).astype(case.dtypes[i])
        if i == 0 and case.poison:
            g.flat[1] = np.inf if case.poison == "inf" else np.nan
        grads.append(None if i in case.none else g)
    return grads


def run_torch_clip(case: ClipCase) -> dict:
    """torch.nn.utils.clip_grad_norm_ on the case: the returned norm and the clipped grads."""
    import torch

    params = []
    for i, g in enumerate(clip_inputs(case)):
        dtype = getattr(torch, case.dtypes[i])
        p = torch.nn.Parameter(torch.zeros(SHAPES[i], dtype=dtype))
        p.grad = None if g is None else torch.from_numpy(g.copy())
        params.append(p)
    norm = torch.nn.utils.clip_grad_norm_(params, case.max_norm, norm_type=case.norm_type)
    out = {"norm": np.atleast_1d(norm.numpy().copy())}  # .npz files store 0-d arrays as 1-d
    for i, p in enumerate(params):
        if p.grad is not None:
            out[f"grad{i}"] = p.grad.numpy().copy()
    return out


def run_lucid_clip(case: ClipCase, device: str = "cpu") -> dict:
    """lucid.nn.utils.clip_grad_norm_ on the case, as :func:`run_torch_clip`."""
    import lucid

    params = []
    for i, g in enumerate(clip_inputs(case)):
        dtype = getattr(lucid, case.dtypes[i])
        p = lucid.nn.Parameter(lucid.zeros(*SHAPES[i], dtype=dtype, device=device))
        p.grad = None if g is None else lucid.tensor(g, device=device)
        params.append(p)
    norm = lucid.nn.utils.clip_grad_norm_(params, case.max_norm, norm_type=case.norm_type)
    assert norm.shape == (), norm.shape
    out = {"norm": np.atleast_1d(np.asarray(norm))}
    for i, p in enumerate(params):
        if p.grad is not None:
            out[f"grad{i}"] = np.asarray(p.grad)
    return out


# --- SWA and EMA -------------------------------------------------------------------------
@dataclass(frozen=True)
class AverageCase:
    name: str
    kind: str = "default"  # default | swa_multi | swa_fn | ema_multi | ema_fn
    decay: float = 0.9
    use_buffers: bool = False
    dtype: str = "float64"
    updates: int = 5
    inputs: str = ""  # the dtype the states are rounded to first (``dtype`` when empty)


AVERAGE_CASES = [
    *[AverageCase(f"avg_{k}_{d}", kind=k, dtype=d)
      for k in ("default", "swa_multi", "swa_fn", "ema_multi", "ema_fn") for d in ("float64", "float32")],
    AverageCase("avg_ema_multi_buffers", kind="ema_multi", use_buffers=True),
    AverageCase("avg_default_buffers", kind="default", use_buffers=True),
    AverageCase("avg_default_copied_buffers", kind="default", use_buffers=False),
    AverageCase("avg_ema_decay_one", kind="ema_multi", decay=1.0),
    AverageCase("avg_ema_decay_zero", kind="ema_multi", decay=0.0),
]


def average_states(case: AverageCase) -> list:
    """The model's (weight, bias, buffer) at each update."""
    rng = np.random.default_rng(99)
    return [
        tuple((rng.standard_normal(shape) * 2).astype(case.inputs or case.dtype).astype(case.dtype)
              for shape in ((3, 2), (3,), (3,)))
        for _ in range(case.updates)
    ]


def _avg_kwargs(case: AverageCase, swa_utils) -> dict:
    return {
        "default": {},
        "swa_multi": {"multi_avg_fn": swa_utils.get_swa_multi_avg_fn()},
        "swa_fn": {"avg_fn": swa_utils.get_swa_avg_fn()},
        "ema_multi": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(case.decay)},
        "ema_fn": {"avg_fn": swa_utils.get_ema_avg_fn(case.decay)},
    }[case.kind]


def run_torch_average(case: AverageCase) -> dict:
    """torch's AveragedModel over the case's states: the averages after each update."""
    import torch
    from torch.optim import swa_utils

    dtype = getattr(torch, case.dtype)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 3, dtype=dtype)
            self.register_buffer("stat", torch.zeros(3, dtype=dtype))

        def forward(self, x):
            return self.linear(x) + self.stat

    model = Net()
    averaged = swa_utils.AveragedModel(model, use_buffers=case.use_buffers, **_avg_kwargs(case, swa_utils))
    out = {}
    for k, (w, b, s) in enumerate(average_states(case)):
        with torch.no_grad():
            model.linear.weight.copy_(torch.from_numpy(w))
            model.linear.bias.copy_(torch.from_numpy(b))
            model.stat.copy_(torch.from_numpy(s))
        averaged.update_parameters(model)
        out[f"weight{k}"] = averaged.module.linear.weight.detach().numpy().copy()
        out[f"bias{k}"] = averaged.module.linear.bias.detach().numpy().copy()
        out[f"stat{k}"] = averaged.module.stat.numpy().copy()
    out["n_averaged"] = np.atleast_1d(averaged.n_averaged.numpy().copy())
    return out


def run_lucid_average(case: AverageCase, device: str = "cpu") -> dict:
    """lucid's AveragedModel over the case's states, as :func:`run_torch_average`."""
    import lucid
    from lucid import nn
    from lucid.optim import swa_utils

    dtype = getattr(lucid, case.dtype)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(2, 3)
            self.register_buffer("stat", lucid.zeros(3))

        def forward(self, x):
            return self.linear(x) + self.stat

    model = Net().to(device, dtype)
    averaged = swa_utils.AveragedModel(model, use_buffers=case.use_buffers, **_avg_kwargs(case, swa_utils))
    out = {}
    for k, (w, b, s) in enumerate(average_states(case)):
        with lucid.no_grad():
            model.linear.weight.copy_(lucid.tensor(w, device=device))
            model.linear.bias.copy_(lucid.tensor(b, device=device))
            model.stat.copy_(lucid.tensor(s, device=device))
        averaged.update_parameters(model)
        out[f"weight{k}"] = np.asarray(averaged.module.linear.weight.detach())
        out[f"bias{k}"] = np.asarray(averaged.module.linear.bias.detach())
        out[f"stat{k}"] = np.asarray(averaged.module.stat)
    out["n_averaged"] = np.atleast_1d(np.asarray(averaged.n_averaged))
    return out


# --- SWALR -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SWALRCase:
    name: str
    lrs: tuple = (1.0,)
    swa_lr: object = 0.1
    anneal_epochs: int = 3
    anneal_strategy: str = "cos"
    epochs: int = 8
    halve_at: int = -1  # halve every group's lr by hand after this epoch (chainable form)
    kwargs: dict = field(default_factory=dict, hash=False)


SWALR_CASES = [
    SWALRCase("swalr_cos_3"),
    SWALRCase("swalr_linear_3", anneal_strategy="linear"),
    SWALRCase("swalr_cos_0", anneal_epochs=0),
    SWALRCase("swalr_linear_1", anneal_epochs=1, anneal_strategy="linear"),
    SWALRCase("swalr_cos_10_two_groups", lrs=(0.5, 0.05), swa_lr=(0.01, 0.2), anneal_epochs=10, epochs=14),
    SWALRCase("swalr_cos_halved", anneal_epochs=6, halve_at=2),
]


def _swalr_run(case: SWALRCase, optim_module, swalr_class, make_param) -> dict:
    groups = [{"params": [make_param()], "lr": lr} for lr in case.lrs]
    optimizer = optim_module.SGD(groups, lr=case.lrs[0])
    swa_lr = list(case.swa_lr) if isinstance(case.swa_lr, tuple) else case.swa_lr
    scheduler = swalr_class(optimizer, swa_lr=swa_lr, anneal_epochs=case.anneal_epochs,
                            anneal_strategy=case.anneal_strategy)
    lrs = [[g["lr"] for g in optimizer.param_groups]]
    for epoch in range(case.epochs):
        optimizer.step()
        scheduler.step()
        if epoch == case.halve_at:
            for g in optimizer.param_groups:
                g["lr"] = g["lr"] / 2
        lrs.append([float(g["lr"]) for g in optimizer.param_groups])
    return {"lrs": np.array(lrs, dtype=np.float64), "last_lr": np.array(scheduler.get_last_lr(), dtype=np.float64)}


def run_torch_swalr(case: SWALRCase) -> dict:
    """torch's SWALR lr sequence for the case (one row per epoch, one column per group)."""
    import torch

    return _swalr_run(case, torch.optim, torch.optim.swa_utils.SWALR,
                      lambda: torch.nn.Parameter(torch.zeros(1)))


def run_lucid_swalr(case: SWALRCase) -> dict:
    """lucid's SWALR lr sequence for the case, as :func:`run_torch_swalr`."""
    import lucid
    from lucid import optim

    return _swalr_run(case, optim, optim.swa_utils.SWALR, lambda: lucid.nn.Parameter(lucid.zeros(1)))


# --- all of them -------------------------------------------------------------------------
ALL_CASES = (
    [(c.name, run_torch_clip, run_lucid_clip, c) for c in CLIP_CASES]
    + [(c.name, run_torch_average, run_lucid_average, c) for c in AVERAGE_CASES]
    + [(c.name, run_torch_swalr, run_lucid_swalr, c) for c in SWALR_CASES]
)


def truth_of(case):
    """The case whose float64 run is the truth of ``case``'s float32 arrays: its inputs rounded
    as ``case`` rounds them, everything computed in float64 (None: ``case`` has no float32
    result; a clipping without gradients returns a float32 zero, its own truth)."""
    import dataclasses

    if isinstance(case, ClipCase):
        return dataclasses.replace(case, dtypes=("float64",) * len(case.dtypes), inputs=case.dtypes)
    if isinstance(case, AverageCase) and case.dtype == "float32":
        return dataclasses.replace(case, dtype="float64", inputs=case.dtype)
    return None


def golden_grad_tools_arrays(run, case) -> dict:
    """What the golden file of ``case`` holds: ``run(case)`` (torch's) and, for each float32
    array, its float64 truth under ``truth.`` keys (``run(truth_of(case))``)."""
    from trajectories import with_truth

    arrays, truth = run(case), truth_of(case)
    return arrays if truth is None else with_truth(arrays, run(truth), case.name)


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.npz"


def load_golden(name: str) -> dict:
    with np.load(golden_path(name), allow_pickle=False) as data:
        return {key: data[key] for key in data.files}
