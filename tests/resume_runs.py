"""Training runs that stop, checkpoint with lucid.save, and resume in another process.

Each configuration builds a small model, its optimizer and whatever else the run keeps
(schedulers, wrappers, an EMA model) from a seed and an lr scale, and trains one iteration
per call on data that depends only on the step number. ``tests/test_resume.py`` trains N
steps, saves, and runs this file as a child process (``python resume_runs.py JOBS``) that
builds everything afresh from another seed and another lr, loads the checkpoint, trains M
more and saves its final state, which must equal N + M uninterrupted steps bit for bit.
"""

from __future__ import annotations

import json
import sys

import numpy as np

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler as S
from lucid.optim import schedules, swa_utils
from optim_registry import REGISTRY

DTYPES = {"float64": lucid.float64, "float32": lucid.float32}


def data(step: int, shape, dtype, device, stream: int = 0):
    """Inputs of step ``step``: the same numbers in every process."""
    rng = np.random.default_rng([stream, step])
    return lucid.tensor(rng.standard_normal(shape).astype(dtype.name), dtype=dtype, device=device)


class Quadratic(nn.Module):
    """``||W x - y||^2 + sum(c * (b - z)^2)``: a non-trivial loss whose gradient depends on the parameters."""

    def __init__(self, seed, dtype, device, shape=(4, 3)):
        super().__init__()
        self.weight = nn.Parameter(data(seed, shape, dtype, device, stream=99))
        self.bias = nn.Parameter(data(seed, (shape[0],), dtype, device, stream=98))

    def forward(self, step):
        x = data(step, (self.weight.shape[1],), self.weight.dtype, self.weight.device, 1)
        y = data(step, (self.weight.shape[0],), self.weight.dtype, self.weight.device, 2)
        residual = self.weight @ x - y
        return (residual * residual).sum() + (((self.bias - y) ** 2) * 0.5).sum()


class Table(nn.Module):
    """An embedding table whose rows each step touches only a few of."""

    def __init__(self, seed, dtype, device, sparse):
        super().__init__()
        self.embedding = nn.Embedding(10, 3, sparse=sparse, dtype=dtype, device=device)
        with lucid.no_grad():
            self.embedding.weight.copy_(data(seed, (10, 3), dtype, device, stream=97))

    def forward(self, step):
        rows = np.random.default_rng([3, step]).integers(0, 10, size=4)
        picked = self.embedding(lucid.tensor(rows, device=self.embedding.weight.device))
        target = data(step, (4, 3), self.embedding.weight.dtype, self.embedding.weight.device, 4)
        return ((picked - target) ** 2).sum()


class Run:
    """A model and everything trained with it; ``keep`` lists what is saved, in load order."""

    def __init__(self, model, optimizer, keep: dict, schedulers=(), ema=None, plateau=None, closure=False):
        self.model, self.optimizer, self.keep = model, optimizer, {"model": model, **keep}
        self.schedulers, self.ema, self.plateau, self.closure = schedulers, ema, plateau, closure

    def iteration(self, step: int) -> None:
        if self.closure:
            def closure():
                self.optimizer.zero_grad()
                loss = self.model(step)
                loss.backward()
                return loss
            loss = self.optimizer.step(closure)
        else:
            self.optimizer.zero_grad()
            loss = self.model(step)
            loss.backward()
            if step == 2 and isinstance(self.optimizer, optim.SkipNonFinite):
                for p in self.model.parameters():
                    p.grad = p.grad * float("nan")  # a step SkipNonFinite must skip
            self.optimizer.step()
        for scheduler in self.schedulers:
            scheduler.step()
        if self.plateau is not None:
            self.plateau.step(round(float(loss), 1))  # coarse, so that it plateaus
        if self.ema is not None:
            self.ema.update_parameters(self.model)

    def state_dict(self) -> dict:
        return {name: thing.state_dict() for name, thing in self.keep.items()}

    def load_state_dict(self, state: dict) -> None:
        for name, thing in self.keep.items():
            thing.load_state_dict(state[name])

    def outcome(self) -> dict:
        """What must match: every state dict and the live lrs."""
        groups = self.optimizer.param_groups
        return {"state": self.state_dict(), "lrs": [g["lr"] for g in groups],
                "params": [p.detach() for p in self.model.parameters()]}


def _plain(name, make):
    def build(seed, scale, dtype, device):
        model = Quadratic(seed, dtype, device)
        optimizer = make(model.parameters(), scale)
        return Run(model, optimizer, {"optimizer": optimizer})
    return name, build


def _registered(info, name, kwargs, model="quadratic"):
    """A run of ``info``'s optimizer (tests/optim_registry.py) with ``kwargs``, its lr scaled, on
    ``model``: the quadratic, its 2-D weight only ("matrices"), or an embedding table whose
    gradients are sparse ("sparse_table") or dense ("dense_table")."""
    def build(seed, scale, dtype, device):
        if model.endswith("_table"):
            module = Table(seed, dtype, device, sparse=model == "sparse_table")
            params = list(module.parameters())
        else:
            module = Quadratic(seed, dtype, device)
            params = [module.weight] if model == "matrices" else list(module.parameters())
        optimizer = info.cls(params, **{**kwargs, "lr": kwargs["lr"] * scale})
        return Run(module, optimizer, {"optimizer": optimizer}, closure=info.closure)
    return name, build


OPTIMIZERS = [_registered(info, *run) for info in REGISTRY for run in info.resume] + [
    # the kinds of learning rate, on one optimizer each
    _plain("adam_tensor_lr", lambda p, s: optim.Adam(p, lr=lucid.tensor(0.01 * s))),
    _plain("schedule_values", lambda p, s: optim.AdamW(
        p, lr=schedules.warmup(2, schedules.cosine(0.05 * s, 10)))),
]


def _with_scheduler(name, make):
    def build(seed, scale, dtype, device):
        model = Quadratic(seed, dtype, device)
        optimizer = optim.SGD(model.parameters(), lr=0.02 * scale, momentum=0.9)
        scheduler = make(optimizer)
        if isinstance(scheduler, S.ReduceLROnPlateau):
            return Run(model, optimizer, {"optimizer": optimizer, "scheduler": scheduler}, plateau=scheduler)
        return Run(model, optimizer, {"optimizer": optimizer, "scheduler": scheduler}, schedulers=[scheduler])
    return name, build


def decay(epoch):
    return 0.9**epoch


SCHEDULERS = [
    _with_scheduler("lambda", lambda o: S.LambdaLR(o, decay)),
    _with_scheduler("multiplicative", lambda o: S.MultiplicativeLR(o, lambda e: 0.95)),
    _with_scheduler("step", lambda o: S.StepLR(o, step_size=2, gamma=0.5)),
    _with_scheduler("multistep", lambda o: S.MultiStepLR(o, milestones=[1, 3, 3, 5], gamma=0.5)),
    _with_scheduler("constant", lambda o: S.ConstantLR(o, factor=0.5, total_iters=4)),
    _with_scheduler("linear", lambda o: S.LinearLR(o, start_factor=0.25, total_iters=5)),
    _with_scheduler("exponential", lambda o: S.ExponentialLR(o, gamma=0.9)),
    _with_scheduler("polynomial", lambda o: S.PolynomialLR(o, total_iters=6, power=2.0)),
    _with_scheduler("cosine", lambda o: S.CosineAnnealingLR(o, T_max=3, eta_min=0.001)),
    _with_scheduler("warm_restarts", lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2)),
    _with_scheduler("cyclic", lambda o: S.CyclicLR(o, 0.001, 0.05, step_size_up=2, mode="triangular2")),
    _with_scheduler("cyclic_exp", lambda o: S.CyclicLR(o, 0.001, 0.05, step_size_up=3, mode="exp_range",
                                                       gamma=0.9)),
    _with_scheduler("one_cycle", lambda o: S.OneCycleLR(o, max_lr=0.05, total_steps=12, three_phase=True)),
    _with_scheduler("plateau", lambda o: S.ReduceLROnPlateau(o, patience=0, cooldown=1, factor=0.5)),
    _with_scheduler("sequential", lambda o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.8)], milestones=[3])),
    _with_scheduler("chained", lambda o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=3), S.ExponentialLR(o, gamma=0.9)])),
    _with_scheduler("swalr", lambda o: swa_utils.SWALR(o, swa_lr=0.005, anneal_epochs=3)),
]


def _accumulation(seed, scale, dtype, device):
    model = Quadratic(seed, dtype, device)
    wrapper = optim.GradientAccumulation(optim.Adam(model.parameters(), lr=0.05 * scale), steps=3)
    return Run(model, wrapper, {"optimizer": wrapper})


def _skip_nonfinite(seed, scale, dtype, device):
    model = Quadratic(seed, dtype, device)
    wrapper = optim.SkipNonFinite(optim.RMSprop(model.parameters(), lr=0.01 * scale), warn=False)
    return Run(model, wrapper, {"optimizer": wrapper})


def _ema(seed, scale, dtype, device):
    model = Quadratic(seed, dtype, device)
    optimizer = optim.SGD(model.parameters(), lr=0.02 * scale, momentum=0.9)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.8))
    return Run(model, optimizer, {"optimizer": optimizer, "ema": ema}, ema=ema)


def _swa(seed, scale, dtype, device):
    model = Quadratic(seed, dtype, device)
    optimizer = optim.SGD(model.parameters(), lr=0.02 * scale)
    swa = swa_utils.AveragedModel(model)
    return Run(model, optimizer, {"optimizer": optimizer, "swa": swa}, ema=swa)


WRAPPERS = [("accumulation_mid_cycle", _accumulation), ("skip_nonfinite", _skip_nonfinite), ("ema", _ema),
            ("swa", _swa)]

CONFIGS = dict(OPTIMIZERS + SCHEDULERS + WRAPPERS)
N, M = 4, 3  # steps before and after the checkpoint (4 is mid-cycle for GradientAccumulation(steps=3))


def build(name: str, dtype: str, device: str, fresh: bool) -> Run:
    """The run ``name``; ``fresh`` builds it as a resumed process would, from other values and lr."""
    return CONFIGS[name](seed=7 if fresh else 0, scale=3.0 if fresh else 1.0, dtype=DTYPES[dtype], device=device)


def train(run: Run, start: int, steps: int) -> None:
    for step in range(start, start + steps):
        run.iteration(step)


def resume(job: dict) -> None:
    """Build ``job["name"]`` afresh, load ``job["checkpoint"]``, train ``M`` steps, save the outcome."""
    run = build(job["name"], job["dtype"], job["device"], fresh=True)
    run.load_state_dict(lucid.load(job["checkpoint"], map_location=job["device"]))
    train(run, N, job.get("steps", M))
    lucid.save(run.outcome(), job["outcome"])


if __name__ == "__main__":
    for job in json.loads(sys.argv[1]):
        resume(job)
    print("resumed", len(json.loads(sys.argv[1])))
