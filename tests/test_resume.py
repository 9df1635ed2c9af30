"""Exact resume in a new process: N steps, lucid.save, a fresh process, M steps == N + M steps.

Every optimizer, every scheduler, schedule values, GradientAccumulation stopped mid-cycle,
SkipNonFinite, SWA and EMA models, on NumPy in float64 and float32: one child process
resumes all of them, from objects built with other initial values and another lr, and
every parameter, state value and live lr must be bit-identical to the uninterrupted run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid import optim
from snapshots import snapshot

import resume_runs
from resume_runs import CONFIGS, M, N, build, train
from conftest import GPU, NO_MLX

HERE = Path(__file__).resolve().parent


def _child(jobs: list) -> None:
    result = subprocess.run([sys.executable, str(HERE / "resume_runs.py"), json.dumps(jobs)],
                            capture_output=True, text=True, timeout=300, cwd=HERE)
    assert result.returncode == 0, result.stderr[-4000:]


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """Every configuration in both dtypes: checkpoints written here, resumed in one child."""
    folder = tmp_path_factory.mktemp("resume")
    jobs, expected = [], {}
    for name in CONFIGS:
        for dtype in ("float64", "float32"):
            run = build(name, dtype, "cpu", fresh=False)
            train(run, 0, N)
            checkpoint = folder / f"{name}.{dtype}.ckpt"
            lucid.save(run.state_dict(), checkpoint)
            train(run, N, M)
            expected[name, dtype] = run.outcome()
            jobs.append({"name": name, "dtype": dtype, "device": "cpu", "checkpoint": str(checkpoint),
                         "outcome": str(folder / f"{name}.{dtype}.out")})
    _child(jobs)
    return {(job["name"], job["dtype"]): (expected[job["name"], job["dtype"]], lucid.load(job["outcome"]))
            for job in jobs}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_resumed_run_is_bit_identical_to_an_uninterrupted_one(resumed, name, dtype):
    expected, got = resumed[name, dtype]
    assert snapshot(got["params"]) == snapshot(expected["params"])
    assert snapshot(got["lrs"]) == snapshot(expected["lrs"])
    assert snapshot(got["state"]) == snapshot(expected["state"])


def test_the_runs_cover_every_optimizer_and_scheduler():
    """A new optimizer or scheduler must join the resume runs."""
    built = {type(build(name, "float64", "cpu", fresh=False).keep.get("scheduler")).__name__ for name in CONFIGS}
    schedulers = set(lucid.optim.lr_scheduler.__all__) - {"LRScheduler"}
    assert schedulers <= built
    optimizers = {type(build(name, "float64", "cpu", fresh=False).optimizer).__name__ for name in CONFIGS}
    assert {n for n in optim.__all__ if isinstance(getattr(optim, n), type)
            and issubclass(getattr(optim, n), optim.Optimizer) and n != "Optimizer"} <= optimizers


def test_a_fresh_build_really_differs_before_loading():
    """The child starts from other values and another lr, so only the checkpoint can make it match."""
    a, b = build("adamw", "float64", "cpu", fresh=False), build("adamw", "float64", "cpu", fresh=True)
    assert snapshot(a.outcome()["params"]) != snapshot(b.outcome()["params"])
    assert a.optimizer.param_groups[0]["lr"] != b.optimizer.param_groups[0]["lr"]


def _float32_data(step, shape, dtype, device, stream=0):
    """resume_runs.data rounded to float32 whatever ``dtype``: what a float32 run is fed."""
    rng = np.random.default_rng([stream, step])
    return lucid.tensor(rng.standard_normal(shape).astype(np.float32), dtype=dtype, device=device)


@pytest.mark.skipif(not GPU, reason=NO_MLX)
def test_a_gpu_checkpoint_resumes_on_cpu_and_back(tmp_path, monkeypatch):
    """gpu for N steps, saved; loaded on cpu in a child for M steps, saved; loaded on gpu again.

    The loaded values are the saved host bytes exactly; the two backends' float32
    arithmetic may differ by rounding, so the two continued runs are each judged against
    the continuation in float64 from the same checkpoint and float32 data, the other's
    error the ceiling (trajectories.judge_alike).
    """
    from trajectories import judge_alike

    names = ["adam_amsgrad", "sgd", "cosine", "accumulation_mid_cycle"]
    jobs, expected = [], {}
    for name in names:
        run = build(name, "float32", "gpu", fresh=False)
        train(run, 0, N)
        saved = run.state_dict()
        lucid.save(saved, tmp_path / f"{name}.gpu")
        on_cpu = lucid.load(tmp_path / f"{name}.gpu", map_location="cpu")
        moved = snapshot(on_cpu)
        assert moved == snapshot(_to(saved, "cpu"))
        train(run, N, M)
        expected[name] = run.outcome()
        jobs.append({"name": name, "dtype": "float32", "device": "cpu", "checkpoint": str(tmp_path / f"{name}.gpu"),
                     "outcome": str(tmp_path / f"{name}.cpu")})
    _child(jobs)
    for name in names:
        back = lucid.load(tmp_path / f"{name}.cpu", map_location="gpu")
        assert {t.device for t in back["params"]} == {"gpu"}
        with monkeypatch.context() as patch:
            patch.setattr(resume_runs, "data", _float32_data)
            exact = build(name, "float64", "cpu", fresh=True)
            exact.load_state_dict(lucid.load(tmp_path / f"{name}.gpu", map_location="cpu"))
            train(exact, N, M)
        for k, (got, want, truth) in enumerate(zip(back["params"], expected[name]["params"],
                                                   exact.outcome()["params"], strict=True)):
            assert truth.dtype is lucid.float64
            judge_alike(got.numpy(), want.numpy(), truth.numpy(), "float32", what=f"{name}: parameter {k}")
        resumed = build(name, "float32", "gpu", fresh=True)
        resumed.load_state_dict(back["state"])
        train(resumed, N + M, 1)  # and it trains on


def _to(value, device):
    if isinstance(value, lucid.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return type(value)((k, _to(v, device)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, device) for v in value)
    return value


def test_a_torch_optimizer_state_with_0d_tensor_steps_loads_and_continues():
    """torch writes ``step`` as a 0-d float32 tensor: converted to lucid tensors, it loads as an int
    step and the run continues with torch's numbers."""
    from helpers import torch_or_skip
    from tolerances import PARITY

    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    start = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    grads = [[rng.standard_normal(a.shape) for a in start] for _ in range(5)]
    torch_params = [torch.tensor(a, requires_grad=True) for a in start]
    torch_opt = torch.optim.Adam(torch_params, lr=0.1, amsgrad=True)
    for step in range(3):
        for p, g in zip(torch_params, grads[step]):
            p.grad = torch.tensor(g)
        torch_opt.step()
    saved = torch_opt.state_dict()
    assert saved["state"][0]["step"].ndim == 0

    def to_lucid(value):
        if isinstance(value, torch.Tensor):
            return lucid.tensor(value.detach().numpy())
        if isinstance(value, dict):
            return {k: to_lucid(v) for k, v in value.items()}
        if isinstance(value, list):
            return [to_lucid(v) for v in value]
        return value

    params = [lucid.nn.Parameter(lucid.tensor(p.detach().numpy())) for p in torch_params]
    opt = optim.Adam(params, lr=0.5)
    opt.load_state_dict(to_lucid(saved))
    assert opt.state[0]["step"] == 3 and type(opt.state[0]["step"]) is int
    for step in range(3, 5):
        for p, tp, g in zip(params, torch_params, grads[step]):
            p.grad, tp.grad = lucid.tensor(g), torch.tensor(g)
        opt.step()
        torch_opt.step()
    rtol, atol = PARITY["float64"]
    for p, tp in zip(params, torch_params):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", [n for n in CONFIGS if n in dict(resume_runs.OPTIMIZERS) or n in dict(resume_runs.WRAPPERS)])
def test_no_state_is_shared_between_optimizers_or_with_a_state_dict(name, device):
    """Stepping one optimizer never changes another that loaded its state, nor a state dict
    exported from either (torch 2.13 shares the tensors: pytorch/pytorch#196083)."""
    dtype = "float32"
    a, b = build(name, dtype, device, fresh=False), build(name, dtype, device, fresh=True)
    train(a, 0, N)
    exported = a.optimizer.state_dict()
    b.optimizer.load_state_dict(exported)
    frozen_export, frozen_a = snapshot(exported), snapshot(a.optimizer.state_dict())
    train(b, N, 2)
    assert snapshot(exported) == frozen_export
    assert snapshot(a.optimizer.state_dict()) == frozen_a
    loaded_b = snapshot(b.optimizer.state_dict())
    exported_b = b.optimizer.state_dict()
    train(a, N, 2)
    _scribble(exported)
    _scribble(exported_b)
    assert snapshot(b.optimizer.state_dict()) == loaded_b


def _scribble(value) -> None:
    """Write into every tensor of ``value`` in place."""
    if isinstance(value, lucid.Tensor):
        if value.dtype.is_floating_point:
            value.fill_(123.0)
    elif isinstance(value, dict):
        for v in value.values():
            _scribble(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _scribble(v)
