"""lucid.optim.swa_utils against torch.optim.swa_utils: golden files, live torch, errors, state."""

import copy
import math
import warnings

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim import swa_utils
from lucid.optim.swa_utils import (
    SWALR, AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn, get_swa_multi_avg_fn, update_bn,
)

from grad_tools_cases import AVERAGE_CASES, SWALR_CASES, load_golden, run_lucid_average, run_lucid_swalr
from tolerances import SCHEDULER, close
from trajectories import judge_recording

GPU = lucid.is_available("gpu")


def _compare(actual, expected, table=None):
    """Counts exactly, float64 to ``table`` (PARITY's when None) of torch's, each float32
    average judged against its truth (the averaging in float64 of the same float32 states),
    torch's the ceiling."""
    judge_recording(actual, expected, runs=False, float64_table=table)


# --- AveragedModel -----------------------------------------------------------------------
@pytest.mark.parametrize("case", AVERAGE_CASES, ids=lambda c: c.name)
def test_averaged_model_matches_golden(case, device):
    _compare(run_lucid_average(case, device), load_golden(case.name))


@pytest.mark.parametrize("case", AVERAGE_CASES, ids=lambda c: c.name)
def test_averaged_model_matches_torch_live(case):
    pytest.importorskip("torch")
    from grad_tools_cases import golden_grad_tools_arrays, run_torch_average

    _compare(run_lucid_average(case), golden_grad_tools_arrays(run_torch_average, case))


def test_default_average_is_exact_and_swa_multi_keeps_torchs_float32_weight():
    exact = run_lucid_average(AVERAGE_CASES[0])  # avg_default_float64
    multi = run_lucid_average(next(c for c in AVERAGE_CASES if c.name == "avg_swa_multi_float64"))
    torch_multi = load_golden("avg_swa_multi_float64")
    states = [w for w, _, _ in swa_utils_states()]
    close(exact["weight4"], np.mean(states, axis=0), "float64")
    # torch's 1/(n+1) is a float32 number: the average is off by ~1e-8, in torch and in lucid
    assert 1e-10 < np.max(np.abs(torch_multi["weight4"] - exact["weight4"])) < 1e-6
    close(multi["weight4"], torch_multi["weight4"], "float64")


def swa_utils_states():
    from grad_tools_cases import average_states

    return average_states(AVERAGE_CASES[0])


def test_first_update_copies_then_averages(device):
    model = nn.Linear(1, 1).to(device)
    swa = AveragedModel(model)
    assert swa.n_averaged.dtype is lucid.int64 and swa.n_averaged.item() == 0
    for w in (1.0, 2.0, 6.0):
        with lucid.no_grad():
            model.weight.fill_(w)
        swa.update_parameters(model)
    assert swa.module.weight.item() == 3.0 and swa.n_averaged.item() == 3
    assert swa.module.weight.device == device


def test_state_dict_layout_as_torch():
    torch = pytest.importorskip("torch")
    lucid_sd = AveragedModel(nn.Linear(2, 1)).state_dict()
    torch_sd = torch.optim.swa_utils.AveragedModel(torch.nn.Linear(2, 1)).state_dict()
    assert list(lucid_sd) == list(torch_sd) == ["n_averaged", "module.weight", "module.bias"]
    assert lucid_sd["n_averaged"].dtype is lucid.int64 and lucid_sd["n_averaged"].shape == ()


def test_state_dict_round_trip():
    model = nn.Linear(2, 1)
    a = AveragedModel(model)
    for _ in range(3):
        a.update_parameters(model)
    b = AveragedModel(nn.Linear(2, 1))
    b.load_state_dict(a.state_dict())
    assert b.n_averaged.item() == 3
    assert bool((b.module.weight == a.module.weight).all())


def test_deep_copy_and_forward():
    model = nn.Linear(2, 1)
    swa = AveragedModel(model)
    assert swa.module is not model and swa.module.weight is not model.weight
    with lucid.no_grad():
        model.weight.fill_(5.0)
    assert swa.module.weight.tolist() != [[5.0, 5.0]]
    x = lucid.ones(3, 2)
    swa.update_parameters(model)
    assert bool((swa(x) == model(x)).all())


@pytest.mark.skipif(not GPU, reason="needs the MLX backend")
def test_device_argument_moves_the_copy():
    model = nn.Linear(2, 1)
    swa = AveragedModel(model, device="gpu")
    assert swa.module.weight.device == "gpu" and swa.n_averaged.device == "gpu"
    assert model.weight.device == "cpu"
    swa.update_parameters(model)
    swa.update_parameters(model)
    # the average of two copies of the same weights is those weights, bit for bit
    np.testing.assert_array_equal(np.asarray(swa.module.weight.detach()), np.asarray(model.weight.detach()))


def test_ema_with_avg_fn_and_multi_avg_fn_agree():
    model = nn.Linear(3, 2).double()
    a = AveragedModel(model, avg_fn=get_ema_avg_fn(0.8))
    b = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.8))
    for step in range(4):
        with lucid.no_grad():
            model.weight.add_(1.0)
        a.update_parameters(model)
        b.update_parameters(model)
    close(np.asarray(a.module.weight.detach()), np.asarray(b.module.weight.detach()), "float64")


def test_update_parameters_checks_the_model():
    swa = AveragedModel(nn.Linear(2, 1))
    with pytest.raises(ValueError, match="the model has 1 parameters, the averaged model 2"):
        swa.update_parameters(nn.Linear(2, 1, bias=False))


def test_constructor_errors():
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        AveragedModel(nn.Linear(1, 1), avg_fn=get_swa_avg_fn(), multi_avg_fn=get_swa_multi_avg_fn())
    with pytest.raises(TypeError, match="averages a lucid.nn.Module"):
        AveragedModel([1, 2])


@pytest.mark.parametrize("decay", [-0.1, 1.5])
def test_ema_decay_outside_unit_interval(decay):
    message = rf"Invalid decay value {decay} provided. Please provide a value in \[0,1\] range."
    with pytest.raises(ValueError, match=message):
        get_ema_multi_avg_fn(decay)
    with pytest.raises(ValueError, match=message):
        get_ema_avg_fn(decay)


def test_all_as_torch():
    torch = pytest.importorskip("torch")
    assert sorted(swa_utils.__all__) == sorted(torch.optim.swa_utils.__all__)
    assert optim.swa_utils is swa_utils


# --- SWALR -------------------------------------------------------------------------------
@pytest.mark.parametrize("case", SWALR_CASES, ids=lambda c: c.name)
def test_swalr_matches_golden(case):
    _compare(run_lucid_swalr(case), load_golden(case.name), SCHEDULER)


@pytest.mark.parametrize("case", SWALR_CASES, ids=lambda c: c.name)
def test_swalr_matches_torch_live(case):
    pytest.importorskip("torch")
    from grad_tools_cases import run_torch_swalr

    # Python-float arithmetic on both sides, but through libm's cos, whose last bit may
    # depend on the CPU's code path: compared at the scheduler tolerance, as the golden files
    _compare(run_lucid_swalr(case), run_torch_swalr(case), SCHEDULER)


def test_swalr_sequence_from_the_notes():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    scheduler = SWALR(opt, swa_lr=0.1, anneal_epochs=3)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(4):
        opt.step()
        scheduler.step()
        lrs.append(opt.param_groups[0]["lr"])
    close(lrs, [1.0, 0.775, 0.325, 0.1, 0.1], "float64", table=SCHEDULER)
    assert opt.param_groups[0]["swa_lr"] == 0.1 and scheduler.get_last_lr() == [lrs[-1]]
    assert isinstance(scheduler, optim.lr_scheduler.LRScheduler)


def test_swalr_errors_as_torch():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        SWALR(opt, 0.1, anneal_strategy="exp")
    for bad in (-1, 1.5):
        with pytest.raises(ValueError, match=f"anneal_epochs must be equal or greater than 0, got {bad}"):
            SWALR(opt, 0.1, anneal_epochs=bad)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        SWALR(opt, [0.1, 0.2])
    with pytest.raises(TypeError, match="is not an Optimizer"):
        SWALR(object(), 0.1)


def test_swalr_state_dict_as_torch():
    torch = pytest.importorskip("torch")
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    topt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    ours = SWALR(opt, 0.1, anneal_strategy="linear").state_dict()
    theirs = torch.optim.swa_utils.SWALR(topt, 0.1, anneal_strategy="linear").state_dict()
    assert sorted(ours) == sorted(theirs)
    assert {k: ours[k] for k in ours} == {k: theirs[k] for k in theirs}


def test_swalr_load_state_dict_restores_the_strategy():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    linear = SWALR(opt, 0.0, anneal_epochs=4, anneal_strategy="linear")
    cos = SWALR(optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0), 0.0, anneal_epochs=4)
    cos.load_state_dict(linear.state_dict())
    assert cos.anneal_func(0.25) == 0.25


def test_swalr_warns_when_stepped_before_the_optimizer():
    opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    scheduler = SWALR(opt, 0.1)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before `optimizer.step\(\)`"):
        scheduler.step()


# --- update_bn ---------------------------------------------------------------------------
def test_update_bn_without_batch_norm_returns_at_once():
    def loader():
        raise AssertionError("the loader must not be read")
        yield

    model = nn.Linear(2, 1)
    model.eval()
    assert update_bn(loader(), model) is None
    assert model.training is False


class _CountingNorm(nn.Module):
    """What update_bn needs of a batch norm: running stats, reset_running_stats, momentum."""

    def __init__(self):
        super().__init__()
        self.momentum = 0.1
        self.register_buffer("running_mean", lucid.zeros(2, dtype=lucid.float64))
        self.register_buffer("num_batches_tracked", lucid.tensor(0))
        self.seen_momenta = []

    def reset_running_stats(self):
        with lucid.no_grad():
            self.running_mean.zero_()
            self.num_batches_tracked.zero_()

    def forward(self, x):
        self.seen_momenta.append((self.momentum, self.training))
        if self.training:
            with lucid.no_grad():
                self.num_batches_tracked.add_(1)
                n = self.num_batches_tracked.item()
                factor = 1.0 / n if self.momentum is None else self.momentum
                self.running_mean.lerp_(x.mean(0), factor)
        return x


def test_update_bn_runs_one_cumulative_pass_and_restores():
    norm = _CountingNorm()
    model = nn.Sequential(norm)
    with lucid.no_grad():
        norm.running_mean.fill_(100.0)
    model.eval()
    batches = [(lucid.tensor([[1.0, 2.0]], dtype=lucid.float64), "label"),
               [lucid.tensor([[3.0, 6.0]], dtype=lucid.float64)]]
    update_bn(batches, model)
    assert norm.running_mean.tolist() == [2.0, 4.0]  # the plain mean: reset, then cumulative
    assert norm.seen_momenta == [(None, True), (None, True)]
    assert norm.momentum == 0.1 and model.training is False and norm.training is False
