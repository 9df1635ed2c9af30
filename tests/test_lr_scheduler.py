"""lucid.optim.lr_scheduler against torch 2.13: golden lr sequences, warnings, errors, state.

Every case of ``scheduler_cases.py`` is replayed through lucid and compared with the golden
file written by ``tools/make_scheduler_golden.py`` (and with torch itself, live, when it is
importable), to the "scheduler" tolerance.
"""

import copy
import math
import pickle
import struct
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lucid
from lucid import nn, optim
from lucid.optim import lr_scheduler as S
from lucid.optim import schedules as sch
from scheduler_cases import CASES, GOLDEN_DIR, Factor, Library, _optimizer, golden_path, load_golden, run, steps
from tolerances import PARITY, SCHEDULER, close

try:
    import torch
    import torch.optim.lr_scheduler  # noqa: F401
except ImportError:  # pragma: no cover - torch is a test dependency, but optional here
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def lucid_library(device="cpu") -> Library:
    return Library(
        optim=optim,
        parameter=lambda: nn.Parameter(lucid.zeros(2, dtype=lucid.float64, device=device)),
        tensor=lambda value: lucid.tensor(value, dtype=lucid.float64, device=device),
    )


def torch_library() -> Library:
    return Library(
        optim=torch.optim,
        parameter=lambda: torch.nn.Parameter(torch.zeros(2, dtype=torch.float64)),
        tensor=lambda value: torch.tensor(value, dtype=torch.float64),
    )


def assert_records_equal(mine: dict, expected: dict) -> None:
    for key in ("lr", "last_lr", "momentum", "beta1"):
        assert (key in mine) == (key in expected), key
        if key in expected:
            assert np.shape(mine[key]) == np.shape(expected[key]), key
            close(mine[key], expected[key], "float64", table=SCHEDULER)


def sgd(*lrs, **kwargs):
    groups = [{"params": [nn.Parameter(lucid.zeros(2))], "lr": lr} for lr in lrs or (1.0,)]
    return optim.SGD(groups, **kwargs)


# --- golden sequences -------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_golden_sequence(case):
    expected = load_golden(case)
    assert len(expected["lr"]) == steps(case) + 1
    assert_records_equal(run(case, lucid_library()), expected)


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_live_against_torch(case):
    assert_records_equal(run(case, lucid_library()), run(case, torch_library()))


@pytest.mark.parametrize("case", [c for c in CASES if c.tensor_lr], ids=lambda c: c.name)
def test_tensor_lr_on_every_device(case, device):
    assert_records_equal(run(case, lucid_library(device)), load_golden(case))


def test_golden_files_are_exactly_the_cases():
    assert {p.name for p in GOLDEN_DIR.glob("*.json")} == {golden_path(c).name for c in CASES}
    assert len({c.name for c in CASES}) == len(CASES)
    kinds = set()
    for case in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = case.build(S, _optimizer(case, lucid_library()))
        kinds.add(type(scheduler).__name__)
    assert kinds == set(S.__all__) - {"LRScheduler"}


def test_scheduler_tolerance_is_as_tight_as_float64_parity():
    assert SCHEDULER["float64"][0] <= PARITY["float64"][0] == 1e-12


# --- the base class -----------------------------------------------------------------------------
def test_names_and_exports():
    assert optim.lr_scheduler is S
    for name in S.__all__:
        assert hasattr(S, name)
    assert issubclass(S._LRScheduler, S.LRScheduler)
    if torch is not None:
        assert set(S.__all__) == set(torch.optim.lr_scheduler.__all__)


@pytest.mark.parametrize("name", ["StepLR", "CyclicLR", "SequentialLR", "ReduceLROnPlateau"])
def test_pickles_naming_the_former_single_module_still_load(name):
    """Before the package, a pickled scheduler named its class ``lucid.optim.lr_scheduler.<name>``."""
    opt = sgd(1.0, momentum=0.9)
    build = {
        "StepLR": lambda: S.StepLR(opt, 2, 0.5),
        "CyclicLR": lambda: S.CyclicLR(opt, 0.1, 1.0, step_size_up=3),
        "SequentialLR": lambda: S.SequentialLR(opt, [S.ConstantLR(opt, 0.5, 2), S.ExponentialLR(opt, 0.9)], [2]),
        "ReduceLROnPlateau": lambda: S.ReduceLROnPlateau(opt, patience=0),
    }
    sched = build[name]()
    data = pickle.dumps(sched, protocol=0)
    old = data
    for cls in {type(sched), *map(type, getattr(sched, "_schedulers", []))}:
        old = old.replace(f"c{cls.__module__}\n{cls.__name__}\n".encode(),
                          f"clucid.optim.lr_scheduler\n{cls.__name__}\n".encode())
    assert old != data and b"lucid.optim.lr_scheduler." not in old
    loaded = pickle.loads(old)
    assert type(loaded) is getattr(S, name)
    assert _plain(loaded.state_dict()) == _plain(sched.state_dict())


@needs_torch
@pytest.mark.parametrize("name", sorted(set(S.__all__) - {"LRScheduler"}))
def test_signatures_match_torch(name):
    import inspect

    mine = inspect.signature(getattr(S, name).__init__)
    theirs = inspect.signature(getattr(torch.optim.lr_scheduler, name).__init__)
    assert [(p.name, p.default) for p in mine.parameters.values()] == [
        (p.name, p.default) for p in theirs.parameters.values()
    ]


def test_construction_is_the_initial_step():
    opt = sgd(1.0)
    sched = S.LinearLR(opt, start_factor=0.5, total_iters=2)
    assert sched.last_epoch == 0 and sched._step_count == 1
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["initial_lr"] == 1.0
    assert sched.base_lrs == [1.0]


def test_first_scheduler_fixes_initial_lr():
    opt = sgd(1.0)
    S.ConstantLR(opt, factor=0.5)
    second = S.ExponentialLR(opt, gamma=0.5)
    assert second.base_lrs == [1.0] and opt.param_groups[0]["lr"] == 0.5


def test_not_an_optimizer():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        S.StepLR([], 1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.ReduceLROnPlateau(object())


def test_resuming_needs_initial_lr():
    with pytest.raises(KeyError, match=r"param 'initial_lr' is not specified in param_groups\[0\]"):
        S.StepLR(sgd(1.0), 2, last_epoch=3)


def test_get_last_lr_is_the_internal_list_of_copies():
    opt = sgd(1.0)
    sched = S.StepLR(opt, 1, 0.5)
    assert sched.get_last_lr() is sched.get_last_lr()
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=lucid.tensor(1.0))
    sched = S.ExponentialLR(opt, 0.5)
    assert sched.get_last_lr()[0] is not opt.param_groups[0]["lr"]


def test_tensor_lr_is_filled_in_place():
    lr = lucid.tensor(1.0, dtype=lucid.float64)
    opt = optim.SGD([nn.Parameter(lucid.zeros(1, dtype=lucid.float64))], lr=lr)
    sched = S.ExponentialLR(opt, 0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == 0.5
    assert isinstance(opt.param_groups[0]["initial_lr"], lucid.Tensor)
    assert opt.param_groups[0]["initial_lr"] is not lr and opt.param_groups[0]["initial_lr"].item() == 1.0


def test_get_lr_outside_step_warns():
    sched = S.StepLR(sgd(1.0), 2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_epoch_argument_is_deprecated_and_uses_the_closed_form():
    opt = sgd(1.0)
    sched = S.StepLR(opt, 2, 0.5)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
        sched.step(5)
    assert sched.last_epoch == 5 and opt.param_groups[0]["lr"] == 0.25


def test_custom_subclass_without_closed_form_uses_get_lr():
    class Halving(S.LRScheduler):
        def get_lr(self):
            return [base * 0.5**self.last_epoch for base in self.base_lrs]

    opt = sgd(1.0)
    sched = Halving(opt)
    opt.step()
    with pytest.warns(UserWarning):
        sched.step(3)
    assert sched.get_last_lr() == [0.125]


# --- order warnings -------------------------------------------------------------------------------
def test_scheduler_before_optimizer_warns_once():
    opt = sgd(1.0)
    sched = S.StepLR(opt, 1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()  # only the first step is checked


def test_right_order_does_not_warn():
    opt = sgd(1.0)
    sched = S.StepLR(opt, 1)
    lrs = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
    close(lrs, [0.1, 0.01, 0.001], "float64", table=SCHEDULER)  # gamma=0.1 every step


def test_optimizer_records_that_it_stepped():
    opt = sgd(1.0)
    assert opt.step_count == 0
    opt.step()
    assert opt.step_count == 1


def test_optimizer_step_replaced_after_construction_warns():
    opt = sgd(1.0)
    sched = S.StepLR(opt, 1)
    opt.step = lambda closure=None: None
    opt.step()
    with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been overridden"):
        sched.step()


def test_step_replaced_before_construction_is_fine():
    opt = sgd(1.0)
    original = opt.step
    calls = []
    opt.step = lambda closure=None: (calls.append(closure), original(closure))[1]
    sched = S.StepLR(opt, 1)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
    assert calls == [None] and opt.step_count == 1  # the wrapper ran, and so did the step
    assert opt.param_groups[0]["lr"] == 0.1


@needs_torch
def test_order_warnings_match_torch():
    def collect(lib, call_optimizer_first):
        groups = [{"params": [lib.parameter()], "lr": 0.1}]
        opt = lib.optim.SGD(groups)
        sched = lib.optim.lr_scheduler.StepLR(opt, 1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if call_optimizer_first:
                opt.step()
            sched.step()
            sched.step()
        return [str(w.message) for w in caught]

    for first in (False, True):
        assert collect(lucid_library(), first) == collect(torch_library(), first)


# --- state dicts ----------------------------------------------------------------------------------
def _lucid_and_torch_state(build, lrs=(0.05, 0.5), steps=3, **opt_kwargs):
    out = []
    for lib in (lucid_library(), torch_library()):
        groups = [{"params": [lib.parameter()], "lr": lr} for lr in lrs]
        opt = lib.optim.SGD(groups, momentum=0.9, **opt_kwargs)
        sched = build(lib.optim.lr_scheduler, opt)
        for _ in range(steps):
            opt.step()
            sched.step()
        out.append(sched.state_dict())
    return out


STATE_BUILDS = {
    "steplr": lambda L, o: L.StepLR(o, 2),
    "multisteplr": lambda L, o: L.MultiStepLR(o, [1, 1, 4]),
    "lambdalr": lambda L, o: L.LambdaLR(o, [Factor(0.5), lambda e: 1.0]),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, Factor(0.9)),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, 4),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, 2),
    "cyclic": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 2),
    "cyclic_custom": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 2, scale_fn=Factor(0.5)),
    "onecycle": lambda L, o: L.OneCycleLR(o, 0.1, total_steps=10),
    "sequential": lambda L, o: L.SequentialLR(o, [L.ConstantLR(o), L.ExponentialLR(o, 0.5)], [2]),
    "chained": lambda L, o: L.ChainedScheduler([L.ConstantLR(o), L.ExponentialLR(o, 0.5)]),
}


def _plain(value):
    """A state dict with torch and lucid values made comparable."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and math.isinf(value):
        return repr(value)
    return value


@needs_torch
@pytest.mark.parametrize("name", sorted(STATE_BUILDS))
def test_state_dict_matches_torch(name):
    mine, theirs = _lucid_and_torch_state(STATE_BUILDS[name])
    theirs.pop("_scale_fn_ref", None)
    assert _plain(mine) == _plain(theirs)


@needs_torch
def test_plateau_state_dict_matches_torch():
    out = []
    for lib in (lucid_library(), torch_library()):
        opt = lib.optim.SGD([{"params": [lib.parameter()], "lr": 1.0}])
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, cooldown=2, min_lr=[0.1])
        for metric in (1.0, 1.0, 1.0, 2.0):
            opt.step()
            sched.step(metric)
        out.append(sched.state_dict())
    assert _plain(out[0]) == _plain(out[1])


def test_lambdas_left_out_and_callable_objects_saved():
    factor = Factor(0.5)
    sched = S.LambdaLR(sgd(1.0, 2.0), [factor, lambda e: 1.0])
    state = sched.state_dict()
    assert state["lr_lambdas"] == [{"base": 0.5}, None]
    pickle.dumps(state)
    factor.base = 0.1
    sched.load_state_dict(state)
    assert factor.base == 0.5
    assert "lr_lambdas" in state  # loading does not consume the dict


def test_load_state_dict_does_not_touch_the_optimizer():
    opt = sgd(1.0)
    sched = S.StepLR(opt, 1, 0.5)
    saved = sched.state_dict()
    opt.step()
    sched.step()
    sched.load_state_dict(saved)
    assert sched.last_epoch == 0 and opt.param_groups[0]["lr"] == 0.5


@pytest.mark.parametrize("name", sorted(STATE_BUILDS))
def test_state_dict_round_trip_continues_identically(name):
    def fresh():
        opt = sgd(0.05, 0.5, momentum=0.9)
        return opt, STATE_BUILDS[name](S, opt)

    opt, sched = fresh()
    for _ in range(3):
        opt.step()
        sched.step()
    saved_opt, saved_sched = opt.state_dict(), pickle.loads(pickle.dumps(_picklable(sched.state_dict())))
    opt2, sched2 = fresh()
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    for _ in range(4):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
        assert [g["momentum"] for g in opt.param_groups] == [g["momentum"] for g in opt2.param_groups]


def _picklable(state):
    return copy.deepcopy(state)


# --- per-scheduler errors and details ----------------------------------------------------------------
def test_lambda_count_must_match_groups():
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(sgd(1.0, 2.0), [lambda e: 1.0])
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 3"):
        S.MultiplicativeLR(sgd(1.0, 2.0), [lambda e: 1.0] * 3)


def test_multiplicative_needs_callables():
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        S.MultiplicativeLR(sgd(1.0), 0.9)


@pytest.mark.parametrize("kwargs, message", [
    ({"factor": 1.5}, "Constant multiplicative factor expected to be between 0 and 1."),
    ({"factor": -0.1}, "Constant multiplicative factor expected to be between 0 and 1."),
])
def test_constantlr_factor(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.ConstantLR(sgd(1.0), **kwargs)


def test_constantlr_zero_factor_is_accepted_as_in_torch():
    assert S.ConstantLR(sgd(1.0), factor=0.0).get_last_lr() == [0.0]


@pytest.mark.parametrize("kwargs, message", [
    ({"start_factor": 0.0}, "Starting multiplicative factor expected to be greater than 0"),
    ({"start_factor": 1.5}, "Starting multiplicative factor expected to be greater than 0"),
    ({"end_factor": -0.5}, "Ending multiplicative factor expected to be between 0 and 1."),
])
def test_linearlr_factors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.LinearLR(sgd(1.0), **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"T_0": 0}, "Expected positive integer T_0, but got 0"),
    ({"T_0": 2.0}, "Expected positive integer T_0, but got 2.0"),
    ({"T_0": 2, "T_mult": 0}, "Expected integer T_mult >= 1, but got 0"),
    ({"T_0": 2, "T_mult": 1.5}, "Expected integer T_mult >= 1, but got 1.5"),
    ({"T_0": 2, "eta_min": "0"}, "Expected float or int eta_min"),
])
def test_warm_restarts_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.CosineAnnealingWarmRestarts(sgd(1.0), **kwargs)


def test_warm_restarts_negative_epoch():
    sched = S.CosineAnnealingWarmRestarts(sgd(1.0), 2)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        sched.step(-1)


def test_warm_restarts_fractional_epochs_do_not_warn():
    opt = sgd(1.0)
    sched = S.CosineAnnealingWarmRestarts(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step(0.5)
    # eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_0)) / 2 at T_cur = 0.5, T_0 = 2
    close(opt.param_groups[0]["lr"], (1 + math.cos(math.pi / 4)) / 2, "float64", table=SCHEDULER)
    sched.step(2.5)  # a restart at 2: T_cur = 0.5 again
    close(opt.param_groups[0]["lr"], (1 + math.cos(math.pi / 4)) / 2, "float64", table=SCHEDULER)


@pytest.mark.parametrize("kwargs, message", [
    ({"factor": 1.0}, "Factor should be < 1.0."),
    ({"mode": "median"}, "mode median is unknown!"),
    ({"threshold_mode": "pct"}, "threshold mode pct is unknown!"),
    ({"min_lr": [0.1, 0.2, 0.3]}, "expected 2 min_lrs, got 3"),
])
def test_plateau_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.ReduceLROnPlateau(sgd(1.0, 2.0), **kwargs)


def test_plateau_has_no_initial_step_and_takes_tensor_metrics():
    opt = sgd(1.0)
    sched = S.ReduceLROnPlateau(opt, patience=0)
    assert sched.last_epoch == 0 and "initial_lr" not in opt.param_groups[0]
    assert sched.get_last_lr() == [1.0]
    sched.step(lucid.tensor(1.0))
    sched.step(lucid.tensor(2.0))
    assert sched.get_last_lr() == [0.1] and sched.best == 1.0


def test_plateau_epoch_argument_warns():
    sched = S.ReduceLROnPlateau(sgd(1.0))
    with pytest.warns(UserWarning, match="The epoch parameter"):
        sched.step(1.0, epoch=4)
    assert sched.last_epoch == 4


def test_plateau_min_lrs_after_adding_a_group():
    opt = sgd(1.0)
    scalar = S.ReduceLROnPlateau(opt, patience=0, min_lr=0.5)
    opt.add_param_group({"params": [nn.Parameter(lucid.zeros(1))], "lr": 2.0})
    scalar.step(1.0)
    scalar.step(2.0)
    assert scalar.min_lrs == [0.5, 0.5] and [g["lr"] for g in opt.param_groups] == [0.5, 0.5]
    opt = sgd(1.0)
    listed = S.ReduceLROnPlateau(opt, patience=0, min_lr=[0.5])
    opt.add_param_group({"params": [nn.Parameter(lucid.zeros(1))], "lr": 2.0})
    listed.step(1.0)
    with pytest.raises(RuntimeError, match="The number of param groups in the `optimizer` \\(2\\) differs"):
        listed.step(2.0)


def test_plateau_load_state_dict_checks_modes():
    sched = S.ReduceLROnPlateau(sgd(1.0))
    with pytest.raises(ValueError, match="mode sideways is unknown!"):
        sched.load_state_dict({**sched.state_dict(), "mode": "sideways"})


def test_cyclic_needs_momentum_or_betas():
    class Plain(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def update(self, param, grad, state, group):
            pass

    opt = Plain([nn.Parameter(lucid.zeros(1))])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.CyclicLR(opt, 0.01, 0.1)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.OneCycleLR(opt, 0.1, total_steps=10)
    S.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)


def test_cyclic_bad_mode_and_lengths():
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(sgd(1.0, momentum=0.9), 0.01, 0.1, mode="square")
    with pytest.raises(ValueError, match="base_lr must have the same length as optimizer.param_groups"):
        S.CyclicLR(sgd(1.0, momentum=0.9), [0.01, 0.02], 0.1)


def test_cyclic_builtin_modes_fix_scale_mode():
    assert S.CyclicLR(sgd(1.0, momentum=0.9), 0.01, 0.1, scale_mode="iterations").scale_mode == "cycle"
    assert S.CyclicLR(sgd(1.0, momentum=0.9), 0.01, 0.1, mode="exp_range").scale_mode == "iterations"


@pytest.mark.parametrize("kwargs, message", [
    ({}, "You must define either total_steps OR \\(epochs AND steps_per_epoch\\)"),
    ({"total_steps": 0}, "Expected positive integer total_steps, but got 0"),
    ({"epochs": 0, "steps_per_epoch": 2}, "Expected positive integer epochs, but got 0"),
    ({"epochs": 2, "steps_per_epoch": 1.5}, "Expected positive integer steps_per_epoch, but got 1.5"),
    ({"total_steps": 10, "pct_start": 1}, "Expected float between 0 and 1 pct_start, but got 1"),
    ({"total_steps": 10, "pct_start": 1.2}, "Expected float between 0 and 1 pct_start, but got 1.2"),
    ({"total_steps": 10, "anneal_strategy": "exp"}, "anneal_strategy must be one of 'cos' or 'linear'"),
])
def test_onecycle_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.OneCycleLR(sgd(1.0, momentum=0.9), 0.1, **kwargs)


def test_onecycle_overstep():
    opt = sgd(1.0, momentum=0.9)
    sched = S.OneCycleLR(opt, 0.1, total_steps=4)
    for _ in range(4):
        opt.step()
        sched.step()
    opt.step()
    with pytest.raises(ValueError, match="Tried to step 5 times. The specified number of total steps is 4"):
        sched.step()


def test_onecycle_writes_group_keys():
    opt = sgd(1.0, momentum=0.9)
    S.OneCycleLR(opt, 0.5, total_steps=10, div_factor=5.0, final_div_factor=10.0)
    group = opt.param_groups[0]
    assert (group["initial_lr"], group["max_lr"], group["min_lr"]) == (0.1, 0.5, 0.01)
    assert (group["max_momentum"], group["base_momentum"], group["momentum"]) == (0.95, 0.85, 0.95)


def test_adam_betas_cycle_first_entry_only():
    opt = optim.Adam([nn.Parameter(lucid.zeros(1))], lr=0.1, betas=(0.9, 0.98))
    sched = S.OneCycleLR(opt, 0.1, total_steps=10)
    opt.step()
    sched.step()
    beta1, beta2 = opt.param_groups[0]["betas"]
    assert beta2 == 0.98 and 0.85 < beta1 < 0.95


@pytest.mark.parametrize("cls", [S.SequentialLR, S.ChainedScheduler])
def test_composite_errors(cls):
    def make(schedulers, optimizer):
        if cls is S.SequentialLR:
            return cls(optimizer, schedulers, milestones=list(range(1, len(schedulers))))
        return cls(schedulers, optimizer)

    opt, other = sgd(1.0), sgd(1.0)
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        make([], opt)
    with pytest.raises(TypeError, match="at index 0 should have `optimizer` as its attribute"):
        make([object()], opt)
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        make([S.ReduceLROnPlateau(opt)], opt)
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        make([S.StepLR(opt, 1), S.StepLR(other, 1)], opt)


def test_sequential_milestone_count():
    opt = sgd(1.0)
    with pytest.raises(ValueError, match="number of schedulers 2 and the number of milestones to be equal to 2"):
        S.SequentialLR(opt, [S.StepLR(opt, 1), S.StepLR(opt, 1)], milestones=[1, 2])



# --- one schedule arithmetic: torch's numbers to the bit, the schedule values' curves ---------
# The closed forms (``step(epoch)``) are the schedule values' curves; stepping keeps torch's
# recursive form (LRScheduler._chain). Both are held to torch bit for bit over generated
# settings, and the closed forms to the schedule values they are.
BASE_LRS = st.floats(1e-6, 10.0)
GAMMAS = st.floats(0.01, 1.5)
FACTORS = st.floats(0.01, 1.0)
EPOCHS = st.lists(st.integers(0, 40), min_size=1, max_size=8)
PROPERTY = settings(max_examples=60, deadline=None)


def _bits(value) -> int:
    return struct.unpack("<q", struct.pack("<d", float(value)))[0]


def _pair(name, kwargs, lr, momentum=None):
    """The same scheduler on a one-group SGD at ``lr``, in lucid and in torch."""
    extra = {} if momentum is None else {"momentum": momentum}
    mine = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=lr, **extra)
    theirs = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=lr, **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (mine, getattr(S, name)(mine, **kwargs)), (theirs, getattr(torch.optim.lr_scheduler, name)(theirs, **kwargs))


# name: (kwargs strategy, the lr at epoch t from base lr b as a schedule value's curve)
CLOSED_FORMS = {
    "StepLR": (st.fixed_dictionaries({"step_size": st.integers(1, 7), "gamma": GAMMAS}),
               lambda b, kw, t: sch.step(b, kw["step_size"], kw["gamma"]).value(t)),
    "MultiStepLR": (st.fixed_dictionaries({"milestones": st.lists(st.integers(0, 30), max_size=4), "gamma": GAMMAS}),
                    lambda b, kw, t: sch.exponential(b, kw["gamma"]).value(sum(m <= t for m in kw["milestones"]))),
    "ExponentialLR": (st.fixed_dictionaries({"gamma": GAMMAS}),
                      lambda b, kw, t: sch.exponential(b, kw["gamma"]).value(t)),
    "LinearLR": (st.fixed_dictionaries({"start_factor": FACTORS, "end_factor": FACTORS, "total_iters": st.integers(1, 20)}),
                 lambda b, kw, t: b * sch.linear(kw["start_factor"], kw["end_factor"], kw["total_iters"]).value(t)),
    "CosineAnnealingLR": (st.fixed_dictionaries({"T_max": st.integers(1, 20), "eta_min": st.floats(0.0, 1e-3)}),
                          lambda b, kw, t: sch.cosine(b, kw["T_max"], kw["eta_min"]).value(t) if t <= kw["T_max"]
                          else sch.cosine.curve(b, kw["eta_min"], t, kw["T_max"])),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
@PROPERTY
@given(data=st.data(), lr=BASE_LRS, epochs=EPOCHS)
def test_closed_forms_are_the_schedule_values_and_torchs_bits(name, data, lr, epochs):
    kwargs = data.draw(CLOSED_FORMS[name][0])
    (_, mine), (_, theirs) = _pair(name, kwargs, lr)
    for epoch in epochs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # step(epoch) is deprecated, as in torch
            mine.step(epoch)
            theirs.step(epoch)
        assert _bits(mine.get_last_lr()[0]) == _bits(theirs.get_last_lr()[0]), (epoch, kwargs)
        assert _bits(mine.get_last_lr()[0]) == _bits(CLOSED_FORMS[name][1](lr, kwargs, epoch)), (epoch, kwargs)


STEPPED = {
    **{name: kwargs for name, (kwargs, _) in CLOSED_FORMS.items()},
    "ConstantLR": st.fixed_dictionaries({"factor": FACTORS, "total_iters": st.integers(0, 20)}),
    "PolynomialLR": st.fixed_dictionaries({"total_iters": st.integers(1, 20), "power": st.floats(0.1, 3.0)}),
    "CosineAnnealingWarmRestarts": st.fixed_dictionaries(
        {"T_0": st.integers(1, 10), "T_mult": st.integers(1, 3), "eta_min": st.floats(0.0, 1e-3)}),
    "OneCycleLR": st.fixed_dictionaries({
        "max_lr": BASE_LRS, "total_steps": st.just(45), "pct_start": st.floats(0.05, 0.5),
        "anneal_strategy": st.sampled_from(["cos", "linear"]), "three_phase": st.booleans(),
        "div_factor": st.floats(1.5, 100.0), "final_div_factor": st.floats(1.5, 1e4)}),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(STEPPED))
@PROPERTY
@given(data=st.data(), lr=BASE_LRS)
def test_stepping_gives_torchs_bits(name, data, lr):
    kwargs = data.draw(STEPPED[name])
    (mine_opt, mine), (theirs_opt, theirs) = _pair(name, kwargs, lr, momentum=0.9)
    for _ in range(44):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine.step()
            theirs.step()
        assert _bits(mine.get_last_lr()[0]) == _bits(theirs.get_last_lr()[0]), (mine.last_epoch, kwargs)
        assert _bits(mine_opt.param_groups[0]["momentum"]) == _bits(theirs_opt.param_groups[0]["momentum"])


@needs_torch
def test_cosine_resumed_branch_is_the_closed_form_as_in_torch():
    # get_lr's branch for a first step at an epoch past 0 (``_step_count`` is 1 after construction)
    (_, mine), (_, theirs) = _pair("CosineAnnealingLR", {"T_max": 7, "eta_min": 1e-4}, 0.3)
    mine.last_epoch = theirs.last_epoch = 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lrs = mine.get_lr()[0], theirs.get_lr()[0], sch.cosine(0.3, 7, 1e-4).value(5)
    assert len({_bits(lr) for lr in lrs}) == 1, lrs


def test_counts_take_any_integer_and_keep_a_python_int():
    # the shared count check (lucid.optim._checks.count): a NumPy int is an int, as torch takes it
    scheduler = S.StepLR(sgd(1.0), step_size=np.int64(2), gamma=0.5)
    assert type(scheduler.step_size) is int and scheduler.step_size == 2
    with pytest.raises(TypeError, match="step_size must be an int, got bool True"):
        S.StepLR(sgd(1.0), step_size=True)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_onecycle_loads_an_older_torchs_state_dict_with_anneal_func_as_torch_does(strategy):
    """An older torch saved the annealing function (``anneal_func``), not ``_anneal_func_type``;
    torch 2.13 loads such a dict, and so does lucid (it refused the entry), continuing with
    torch's lrs to the bit."""
    torch = pytest.importorskip("torch")
    runs = []
    for lib, opt_of in ((S, lambda: sgd(1.0)), (torch.optim.lr_scheduler, lambda: torch.optim.SGD(
            [torch.nn.Parameter(torch.zeros(1))], lr=1.0, momentum=0.9))):
        first = lib.OneCycleLR(opt_of(), max_lr=1.0, total_steps=12, anneal_strategy=strategy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(4):
                first.optimizer.step()
                first.step()
        older = {k: v for k, v in first.state_dict().items() if k != "_anneal_func_type"}
        older["anneal_func"] = getattr(first, f"_annealing_{strategy}")
        optimizer = opt_of()
        optimizer.load_state_dict(first.optimizer.state_dict())
        resumed = lib.OneCycleLR(optimizer, max_lr=1.0, total_steps=12, anneal_strategy=strategy)
        resumed.load_state_dict(older)
        assert lib is not S or "anneal_func" not in resumed.__dict__  # lucid keeps no function
        lrs = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(6):
                optimizer.step()
                resumed.step()
                lrs.append(optimizer.param_groups[0]["lr"])
        runs.append(lrs)
    assert [_bits(lr) for lr in runs[0]] == [_bits(lr) for lr in runs[1]]
