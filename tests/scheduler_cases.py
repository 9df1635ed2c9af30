"""Learning-rate scheduler cases shared by the golden generator and lucid's tests.

Torch-free: a case says which optimizer and scheduler to build and how to step them;
:func:`run` replays it through any library with torch.optim's API (``torch`` or
``lucid``) and records, after construction and after every ``optimizer.step();
scheduler.step()``, each group's ``lr``, ``get_last_lr()``, and ``momentum`` / ``betas[0]``
where the optimizer has them. ``tools/make_scheduler_golden.py`` stores torch's records
in ``tests/golden/lr_scheduler/{case.name}.json``.
"""

from __future__ import annotations

import copy
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

GOLDEN_DIR = Path(__file__).resolve().parent / "golden" / "lr_scheduler"


# --- functions the schedulers take (plain functions: left out of state_dict) ------------------
def decay_095(epoch):
    return 0.95**epoch


def inverse(epoch):
    return 1.0 / (1.0 + epoch)


def times_09(epoch):
    return 0.9


def halve_per_cycle(x):
    return 0.5**x


class Factor:
    """A callable object: its ``__dict__`` is saved in the scheduler's state_dict."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base**epoch


@dataclass(frozen=True)
class SchedulerCase:
    """One scheduler run.

    ``build(lr_scheduler, optimizer)`` returns the scheduler. ``lrs`` are the groups'
    initial lrs (one parameter each). ``metrics`` makes it a ReduceLROnPlateau run
    (``step(metric)``); ``epochs`` steps with ``step(epoch)`` instead (None: ``step()``); ``initial_lr``
    sets ``group["initial_lr"] = lr`` first (for ``last_epoch`` given); ``resume_at``
    saves both state dicts after that many steps and continues on a fresh optimizer
    and scheduler that load them; ``tensor_lr`` gives the lrs as float64 Tensors.
    """

    name: str
    build: Callable
    optimizer: str = "SGD"
    kwargs: dict = field(default_factory=lambda: {"momentum": 0.9})
    lrs: tuple = (0.05, 0.5)
    steps: int = 12
    metrics: tuple | None = None
    epochs: tuple | None = None
    initial_lr: bool = False
    resume_at: int | None = None
    tensor_lr: bool = False


PLATEAU_METRICS = (1.0, 0.9, 0.9, 0.9, 0.9, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.6, 0.7)
PLATEAU_MAX = (0.1, 0.2, 0.25, 0.26, 0.27, 0.5, 0.5, 0.55, 0.6, 0.59, 0.58, 0.9, 0.9, 0.9, 0.9, 0.9)


def _case(name, build, **kw):
    return SchedulerCase(name, build, **kw)


CASES = [
    # --- one scheduler at a time ------------------------------------------------------------
    _case("lambdalr_per_group", lambda S, o: S.LambdaLR(o, [decay_095, inverse])),
    _case("lambdalr_callable_object", lambda S, o: S.LambdaLR(o, Factor(0.8))),
    _case("multiplicativelr", lambda S, o: S.MultiplicativeLR(o, times_09)),
    _case("steplr", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5)),
    _case("steplr_last_epoch", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5, last_epoch=4), initial_lr=True),
    _case("multisteplr_repeated", lambda S, o: S.MultiStepLR(o, milestones=[5, 2, 5, 9], gamma=0.3)),
    _case("constantlr", lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=4)),
    _case("constantlr_defaults", lambda S, o: S.ConstantLR(o)),
    _case("linearlr", lambda S, o: S.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=6)),
    _case("linearlr_defaults", lambda S, o: S.LinearLR(o)),
    _case("linearlr_decreasing", lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=7)),
    _case("exponentiallr", lambda S, o: S.ExponentialLR(o, gamma=0.8)),
    _case("exponentiallr_last_epoch", lambda S, o: S.ExponentialLR(o, gamma=0.8, last_epoch=3), initial_lr=True),
    _case("polynomiallr", lambda S, o: S.PolynomialLR(o, total_iters=6, power=1.7)),
    _case("polynomiallr_defaults", lambda S, o: S.PolynomialLR(o)),
    _case("cosineannealinglr", lambda S, o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01), steps=24),
    _case("cosineannealinglr_last_epoch", lambda S, o: S.CosineAnnealingLR(o, T_max=10, last_epoch=3),
          initial_lr=True),
    _case("cosine_warm_restarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001),
          steps=24),
    _case("cosine_warm_restarts_tmult1", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4), steps=14),
    _case("cosine_warm_restarts_fractional", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
          epochs=(0.25, 0.5, 1.0, 1.75, 2.0, 2.5, 3.0, 5.5, 6.0, 7.25, 13.0, 1.5)),
    _case("cosine_warm_restarts_last_epoch",
          lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, last_epoch=4), initial_lr=True),
    # --- composites ----------------------------------------------------------------------------
    _case("sequential_linear_exponential", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.ExponentialLR(o, gamma=0.5)], milestones=[3])),
    _case("sequential_three", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.5, total_iters=10), S.CosineAnnealingLR(o, T_max=4, eta_min=0.001),
            S.StepLR(o, step_size=2, gamma=0.7)], milestones=[2, 6]), steps=14),
    _case("sequential_milestone_zero", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.5), S.ExponentialLR(o, gamma=0.9)], milestones=[0])),
    _case("sequential_nested", lambda S, o: S.SequentialLR(
        o, [S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.8)],
                           milestones=[2]),
            S.StepLR(o, step_size=2, gamma=0.5)], milestones=[5])),
    _case("chained_step_exponential", lambda S, o: S.ChainedScheduler(
        [S.StepLR(o, step_size=2, gamma=0.1), S.ExponentialLR(o, gamma=0.5)])),
    _case("chained_constant_exponential", lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.1, total_iters=4), S.ExponentialLR(o, gamma=0.9)], optimizer=o)),
    _case("chained_cosine_multiplicative", lambda S, o: S.ChainedScheduler(
        [S.CosineAnnealingLR(o, T_max=6), S.MultiplicativeLR(o, times_09)])),
    # --- ReduceLROnPlateau ---------------------------------------------------------------------
    _case("plateau_min_rel", lambda S, o: S.ReduceLROnPlateau(o, factor=0.5, patience=2),
          metrics=PLATEAU_METRICS, steps=len(PLATEAU_METRICS)),
    _case("plateau_min_abs_cooldown", lambda S, o: S.ReduceLROnPlateau(
        o, factor=0.5, patience=1, threshold=0.05, threshold_mode="abs", cooldown=2),
        metrics=PLATEAU_METRICS, steps=len(PLATEAU_METRICS)),
    _case("plateau_max_rel_min_lrs", lambda S, o: S.ReduceLROnPlateau(
        o, mode="max", factor=0.3, patience=0, threshold=0.1, min_lr=[0.01, 0.2]),
        metrics=PLATEAU_MAX, steps=len(PLATEAU_MAX)),
    _case("plateau_max_abs_eps", lambda S, o: S.ReduceLROnPlateau(
        o, mode="max", factor=0.5, patience=0, threshold=0.02, threshold_mode="abs", eps=0.02, min_lr=0.001),
        metrics=PLATEAU_MAX, steps=len(PLATEAU_MAX)),
    _case("plateau_cooldown_patience0", lambda S, o: S.ReduceLROnPlateau(o, factor=0.5, patience=0, cooldown=3),
          metrics=(1.0,) * 12, steps=12),
    # --- CyclicLR -------------------------------------------------------------------------------
    _case("cyclic_triangular", lambda S, o: S.CyclicLR(
        o, base_lr=[0.01, 0.1], max_lr=[0.1, 1.0], step_size_up=3, step_size_down=2), steps=16),
    _case("cyclic_triangular2", lambda S, o: S.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2", base_momentum=0.7, max_momentum=0.95),
        steps=20),
    _case("cyclic_exp_range", lambda S, o: S.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9), steps=16),
    _case("cyclic_adam_beta1", lambda S, o: S.CyclicLR(
        o, base_lr=0.001, max_lr=0.01, step_size_up=3, base_momentum=[0.8, 0.85], max_momentum=0.95),
        optimizer="Adam", kwargs={}, steps=14),
    _case("cyclic_custom_scale_fn", lambda S, o: S.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=halve_per_cycle, scale_mode="iterations"), steps=12),
    _case("cyclic_no_momentum", lambda S, o: S.CyclicLR(
        o, base_lr=0.02, max_lr=0.2, step_size_up=4, cycle_momentum=False), kwargs={}, steps=12),
    # --- OneCycleLR -------------------------------------------------------------------------------
    _case("onecycle_cos_adam", lambda S, o: S.OneCycleLR(o, max_lr=[0.1, 1.0], total_steps=10),
          optimizer="Adam", kwargs={"betas": (0.9, 0.99)}, steps=10),
    _case("onecycle_linear_epochs", lambda S, o: S.OneCycleLR(
        o, max_lr=0.5, epochs=3, steps_per_epoch=4, anneal_strategy="linear", pct_start=0.25), steps=12),
    _case("onecycle_three_phase_adam", lambda S, o: S.OneCycleLR(
        o, max_lr=1.0, total_steps=12, three_phase=True, pct_start=0.25, div_factor=10.0, final_div_factor=100.0,
        base_momentum=0.8, max_momentum=0.9), optimizer="Adam", kwargs={}, steps=12),
    _case("onecycle_no_momentum", lambda S, o: S.OneCycleLR(o, max_lr=0.2, total_steps=9, cycle_momentum=False),
          kwargs={}, steps=9),
    # --- step(epoch): the closed forms --------------------------------------------------------------
    _case("steplr_epochs", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5), epochs=(1, 2, 5, 6, 3, 9, 0, 12)),
    _case("multisteplr_epochs", lambda S, o: S.MultiStepLR(o, [2, 5, 5], gamma=0.5), epochs=(1, 5, 2, 7, 4)),
    _case("constantlr_epochs", lambda S, o: S.ConstantLR(o, factor=0.3, total_iters=3), epochs=(1, 4, 2, 3)),
    _case("linearlr_epochs", lambda S, o: S.LinearLR(o, start_factor=0.2, total_iters=4), epochs=(3, 1, 6, 2)),
    _case("exponentiallr_epochs", lambda S, o: S.ExponentialLR(o, gamma=0.7), epochs=(3, 1, 6, 2)),
    _case("polynomiallr_epochs", lambda S, o: S.PolynomialLR(o, total_iters=5, power=2.0), epochs=(3, 1, 6, 2)),
    _case("cosineannealinglr_epochs", lambda S, o: S.CosineAnnealingLR(o, T_max=6, eta_min=0.001),
          epochs=(3, 1, 6, 9, 2)),
    _case("lambdalr_epochs", lambda S, o: S.LambdaLR(o, decay_095), epochs=(3, 1, 6)),
    _case("cyclic_epochs_no_closed_form", lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3),
          epochs=(2, 5, None, 1, None, 9)),
    _case("steplr_mixed_epochs", lambda S, o: S.StepLR(o, step_size=2, gamma=0.5),
          epochs=(1, None, None, 5, None, 2, None, None)),
    _case("cosineannealinglr_mixed_epochs", lambda S, o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01),
          epochs=(None, 3, None, None, 8, None, 1, None, None)),
    _case("cosine_warm_restarts_mixed_epochs", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=3),
          epochs=(None, None, None, 12, None, None, 3.5, None)),
    # --- Tensor lrs, filled in place -------------------------------------------------------------------
    _case("tensor_lr_exponential", lambda S, o: S.ExponentialLR(o, gamma=0.7), tensor_lr=True),
    _case("tensor_lr_cosine", lambda S, o: S.CosineAnnealingLR(o, T_max=4), tensor_lr=True),
    _case("tensor_lr_plateau", lambda S, o: S.ReduceLROnPlateau(o, factor=0.5, patience=1),
          metrics=PLATEAU_METRICS[:10], steps=10, tensor_lr=True),
    # --- resumed from state_dict mid-run ----------------------------------------------------------------
    _case("resume_steplr", lambda S, o: S.StepLR(o, step_size=3, gamma=0.5), resume_at=5),
    _case("resume_cosineannealinglr", lambda S, o: S.CosineAnnealingLR(o, T_max=7), resume_at=4, steps=16),
    _case("resume_lambdalr_callable_object", lambda S, o: S.LambdaLR(o, Factor(0.8)), resume_at=4),
    _case("resume_sequential", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=6)], milestones=[3]),
        resume_at=4),
    _case("resume_chained", lambda S, o: S.ChainedScheduler(
        [S.StepLR(o, step_size=2, gamma=0.5), S.ExponentialLR(o, gamma=0.9)]), resume_at=3),
    _case("resume_plateau", lambda S, o: S.ReduceLROnPlateau(o, factor=0.5, patience=1, cooldown=1),
          metrics=PLATEAU_METRICS, steps=len(PLATEAU_METRICS), resume_at=6),
    _case("resume_cyclic_adam", lambda S, o: S.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=3),
          optimizer="Adam", kwargs={}, steps=14, resume_at=4),
    _case("resume_onecycle", lambda S, o: S.OneCycleLR(o, max_lr=0.3, total_steps=12, three_phase=True),
          steps=12, resume_at=5),
    _case("resume_warm_restarts", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2), resume_at=5,
          steps=16),
]


# --- running a case through a library -------------------------------------------------------------
@dataclass
class Library:
    """What :func:`run` needs of torch or lucid."""

    optim: object  # the module with SGD, Adam and lr_scheduler
    parameter: Callable  # () -> a fresh parameter
    tensor: Callable  # float -> a float64 scalar tensor


def _optimizer(case: SchedulerCase, lib: Library):
    lrs = [lib.tensor(lr) if case.tensor_lr else lr for lr in case.lrs]
    groups = [{"params": [lib.parameter()], "lr": lr} for lr in lrs]
    optimizer = getattr(lib.optim, case.optimizer)(groups, **case.kwargs)
    if case.initial_lr:
        for group in optimizer.param_groups:
            group["initial_lr"] = group["lr"]
    return optimizer


def _record(records: dict, optimizer, scheduler) -> None:
    groups = optimizer.param_groups
    records["lr"].append([float(g["lr"]) for g in groups])
    records["last_lr"].append([float(lr) for lr in scheduler.get_last_lr()])
    if "momentum" in groups[0]:
        records["momentum"].append([float(g["momentum"]) for g in groups])
    if "betas" in groups[0]:
        records["beta1"].append([float(g["betas"][0]) for g in groups])


def run(case: SchedulerCase, lib: Library) -> dict:
    """Replay ``case`` through ``lib``: the records after construction and after each step."""
    records = {"lr": [], "last_lr": [], "momentum": [], "beta1": []}
    with warnings.catch_warnings():
        # step(epoch) is deprecated; a nested SequentialLR warns about the order when built
        warnings.simplefilter("ignore")
        optimizer = _optimizer(case, lib)
        scheduler = case.build(lib.optim.lr_scheduler, optimizer)
        _record(records, optimizer, scheduler)
        for i in range(steps(case)):
            if case.resume_at is not None and i == case.resume_at:
                saved_optimizer = optimizer.state_dict()
                saved_scheduler = copy.deepcopy(scheduler.state_dict())
                optimizer = _optimizer(case, lib)
                scheduler = case.build(lib.optim.lr_scheduler, optimizer)
                optimizer.load_state_dict(saved_optimizer)
                scheduler.load_state_dict(saved_scheduler)
            optimizer.step()
            if case.metrics is not None:
                scheduler.step(case.metrics[i])
            elif case.epochs is not None:
                scheduler.step(case.epochs[i])
            else:
                scheduler.step()
            _record(records, optimizer, scheduler)
    return {key: value for key, value in records.items() if value}


def steps(case: SchedulerCase) -> int:
    return len(case.epochs) if case.epochs is not None else case.steps


def golden_path(case: SchedulerCase) -> Path:
    return GOLDEN_DIR / f"{case.name}.json"


def load_golden(case: SchedulerCase) -> dict:
    return json.loads(golden_path(case).read_text())
