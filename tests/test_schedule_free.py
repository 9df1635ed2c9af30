"""Schedule-Free's modes made safe, and what the golden cases do not cover.

The trajectories of SGDScheduleFree, AdamWScheduleFree and RAdamScheduleFree against
``schedulefree`` 1.4.1 (1,000 steps, warmup, weight decay, eval()/train() switches) are golden
cases of tests/optim_registry.py (tests/test_optim_parity.py). Here: the wrapper and the
schedulers against the reference, live; and each misuse reported in the reference's threads
(facebookresearch/schedule_free #48 and others), which lucid makes impossible or refuses:

- stepping in evaluation mode: a RuntimeError that says to call ``optimizer.train()``;
- evaluating in training mode: impossible when the optimizer follows the model;
- calling ``eval()`` (or ``train()``) twice: the second does nothing;
- saving in training mode: the checkpoint holds the mode, ``x`` and ``y``, and evaluates the same;
- loading a checkpoint and forgetting the mode: the load restores the mode and the weights
  (and takes the followed model's mode);
- BatchNorm statistics at the training weights: ``update_bn`` after ``model.eval()`` computes
  them at ``x``, and leaves the weights alone.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim.swa_utils import update_bn
from tolerances import close

CLASSES = [
    ("SGDScheduleFree", lambda params: optim.SGDScheduleFree(params, lr=0.1, weight_decay=0.01, warmup_steps=2)),
    ("AdamWScheduleFree", lambda params: optim.AdamWScheduleFree(params, lr=0.01, weight_decay=0.01, warmup_steps=2)),
    ("RAdamScheduleFree", lambda params: optim.RAdamScheduleFree(params, lr=0.01, betas=(0.9, 0.9))),
    ("ScheduleFreeWrapper", lambda params: optim.ScheduleFreeWrapper(optim.Adam(params, lr=0.01), weight_decay_at_y=0.1)),
]
IDS = [name for name, _ in CLASSES]


def _model(seed: int = 0) -> nn.Module:
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()


def _batch(t: int):
    rng = np.random.default_rng(t)
    return lucid.tensor(rng.standard_normal((8, 3))), lucid.tensor(rng.standard_normal((8, 1)))


def _train(model, optimizer, steps, start=0):
    for t in range(start, start + steps):
        x, y = _batch(t)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def _weights(model) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in model.parameters()]


def _same_bits(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for left, right in zip(a, b):
        assert left.tobytes() == right.tobytes()


# --- stepping in evaluation mode -------------------------------------------------------------
@pytest.mark.parametrize("name, make", CLASSES, ids=IDS)
def test_a_step_in_evaluation_mode_raises_and_changes_nothing(name, make):
    model = _model()
    optimizer = make(model.parameters())
    _train(model, optimizer, 3)
    optimizer.eval()
    before, saved = _weights(model), optimizer.state_dict()
    calls = []
    if hasattr(optimizer, "register_step_pre_hook"):
        optimizer.register_step_pre_hook(lambda *args: calls.append("pre"))
    with pytest.raises(RuntimeError, match=r"evaluation mode.*call optimizer\.train\(\)"):
        optimizer.step()
    _same_bits(_weights(model), before)
    assert calls == []
    after = optimizer.state_dict()
    assert repr(after) == repr(saved)
    optimizer.train()
    _train(model, optimizer, 1)  # and it trains again once in training mode


def test_a_step_that_raises_takes_back_the_counters():
    w = nn.Parameter(lucid.ones(2, dtype=lucid.float64))
    optimizer = optim.AdamWScheduleFree([w], lr=0.1)
    w.grad = lucid.ones(2, dtype=lucid.float64)
    optimizer.step()
    group = dict(optimizer.param_groups[0])
    def closure():
        raise ValueError("the loss failed")

    with pytest.raises(ValueError, match="the loss failed"):
        optimizer.step(closure)
    assert {k: v for k, v in optimizer.param_groups[0].items() if k != "params"} == \
        {k: v for k, v in group.items() if k != "params"}


# --- eval() twice, train() twice ----------------------------------------------------------------
@pytest.mark.parametrize("name, make", CLASSES, ids=IDS)
def test_eval_twice_and_train_twice_do_nothing_the_second_time(name, make):
    model = _model()
    optimizer = make(model.parameters())
    _train(model, optimizer, 8)  # RAdam's silent phase (x = y = z) is its first 4 steps at beta2 = 0.9
    optimizer.eval()
    x = _weights(model)
    optimizer.eval()
    _same_bits(_weights(model), x)
    optimizer.train()
    y = _weights(model)
    optimizer.train()
    _same_bits(_weights(model), y)
    assert any(a.tobytes() != b.tobytes() for a, b in zip(x, y))  # the modes hold different weights


# --- following a model's mode ---------------------------------------------------------------------
@pytest.mark.parametrize("name, make", CLASSES, ids=IDS)
def test_a_followed_model_switches_the_optimizer(name, make):
    model, twin = _model(), _model()
    optimizer, alone = make(model.parameters()), make(twin.parameters())
    optimizer.follow(model)
    assert optimizer.followed is model
    _train(model, optimizer, 5)
    _train(twin, alone, 5)
    model.eval()   # evaluating in training mode is impossible: the weights are x now
    alone.eval()
    assert not optimizer.training
    _same_bits(_weights(model), _weights(twin))
    model.train()
    alone.train()
    assert optimizer.training
    _same_bits(_weights(model), _weights(twin))
    optimizer.follow(None)
    model.eval()
    assert optimizer.training and optimizer.followed is None


def test_follow_takes_the_mode_of_the_module_at_once_and_refuses_other_things():
    model = _model()
    optimizer = optim.SGDScheduleFree(model.parameters())
    model.eval()
    optimizer.follow(model)
    assert not optimizer.training
    with pytest.raises(TypeError, match="follow expects a lucid.nn.Module"):
        optimizer.follow(object())


def test_a_copy_of_a_followed_model_does_not_switch_the_optimizer():
    model = _model()
    optimizer = optim.AdamWScheduleFree(model.parameters(), lr=0.01)
    optimizer.follow(model)
    _train(model, optimizer, 3)
    y = _weights(model)
    copy.deepcopy(model).eval()
    optim.swa_utils.AveragedModel(model).eval()
    assert optimizer.training
    _same_bits(_weights(model), y)


def test_a_group_added_later_takes_the_current_mode():
    model = _model()
    extra = nn.Parameter(lucid.ones(2, dtype=lucid.float64))
    optimizer = optim.AdamWScheduleFree(model.parameters(), lr=0.01)
    _train(model, optimizer, 2)
    optimizer.eval()
    optimizer.add_param_group({"params": [extra]})
    assert [g["train_mode"] for g in optimizer.param_groups] == [False, False]


# --- checkpoints ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name, make", CLASSES, ids=IDS)
def test_a_checkpoint_of_either_mode_evaluates_and_resumes_the_same(name, make, mode, tmp_path):
    """Save in ``mode`` (model and optimizer, through lucid.save), load into fresh objects
    without calling train() or eval(), evaluate: the evaluation weights to the bit; resume:
    the uninterrupted run's trajectory to the bit."""
    model = _model()
    optimizer = make(model.parameters())
    optimizer.follow(model)
    _train(model, optimizer, 6)
    getattr(model, mode)()
    lucid.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, tmp_path / "checkpoint.pt")
    model.eval()
    x = _weights(model)
    model.train()
    _train(model, optimizer, 5, start=6)
    model.eval()
    uninterrupted = _weights(model)

    fresh = _model(seed=1)
    restored = make(fresh.parameters())
    restored.follow(fresh)
    checkpoint = lucid.load(tmp_path / "checkpoint.pt")
    fresh.load_state_dict(checkpoint["model"])
    restored.load_state_dict(checkpoint["optimizer"])
    fresh.eval()
    _same_bits(_weights(fresh), x)
    fresh.train()
    _train(fresh, restored, 5, start=6)
    fresh.eval()
    _same_bits(_weights(fresh), uninterrupted)


@pytest.mark.parametrize("name, make", CLASSES, ids=IDS)
def test_loading_restores_the_mode_and_the_weights_of_the_checkpoint(name, make):
    """A checkpoint saved in evaluation mode, loaded without the model's weights and without
    a call to eval(): the parameters are x, the mode is evaluation (a step raises)."""
    model = _model()
    optimizer = make(model.parameters())
    _train(model, optimizer, 8)
    optimizer.eval()
    x, saved = _weights(model), optimizer.state_dict()
    assert all(not entry or "x" in entry for entry in (saved.get("schedule_free", saved)["state"].values()))
    fresh = _model(seed=2)
    restored = make(fresh.parameters())
    restored.load_state_dict(saved)
    assert not restored.training
    _same_bits(_weights(fresh), x)
    with pytest.raises(RuntimeError, match="evaluation mode"):
        restored.step()


def test_a_followed_optimizer_takes_the_models_mode_after_a_load():
    model = _model()
    optimizer = optim.AdamWScheduleFree(model.parameters(), lr=0.01)
    _train(model, optimizer, 4)
    saved = optimizer.state_dict()  # in training mode: holds y
    optimizer.eval()
    x = _weights(model)
    fresh = _model(seed=3)
    restored = optim.AdamWScheduleFree(fresh.parameters(), lr=0.01)
    fresh.eval()
    restored.follow(fresh)
    restored.load_state_dict(saved)
    assert not restored.training
    _same_bits(_weights(fresh), x)


def test_a_load_that_raises_changes_nothing():
    model = _model()
    optimizer = optim.AdamWScheduleFree(model.parameters(), lr=0.01)
    _train(model, optimizer, 2)
    saved = optimizer.state_dict()
    saved["state"][0]["x"] = lucid.zeros(7, dtype=lucid.float64)
    before, groups = _weights(model), repr(optimizer.state_dict())
    with pytest.raises(ValueError, match="'x' of"):
        optimizer.load_state_dict(saved)
    _same_bits(_weights(model), before)
    assert repr(optimizer.state_dict()) == groups


# --- BatchNorm's statistics at the evaluation weights ------------------------------------------------
def test_update_bn_after_eval_recalibrates_at_the_evaluation_weights():
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()
    optimizer = optim.AdamWScheduleFree(model.parameters(), lr=0.05)
    optimizer.follow(model)
    for t in range(5):
        x, _ = _batch(t)
        optimizer.zero_grad()
        model(x).pow(2).sum().backward()
        optimizer.step()
    model.eval()
    x_weights = _weights(model)
    loader = [_batch(t)[0] for t in range(10, 13)]
    update_bn(loader, model)
    assert not optimizer.training and not model.training
    _same_bits(_weights(model), x_weights)  # the recalibration's train() moved nothing
    linear = model[0]
    outputs = np.concatenate([(batch @ linear.weight.T + linear.bias).detach().numpy() for batch in loader])
    close(model[1].running_mean.numpy(), outputs.mean(axis=0), "float64")


# --- the reference's lerp branch for eval()'s negative weight ---------------------------------------
def test_lerp_with_a_negative_weight_takes_torchs_branch():
    """eval() moves by 1 - 1/beta, negative; at beta = 0.5 it is -1, where torch computes
    ``end - (end - start) * 2`` (|weight| >= 0.5), which rounds otherwise than ``start - (end - start)``."""
    torch = pytest.importorskip("torch")
    from lucid._backend.rules import lerp

    rng = np.random.default_rng(0)
    start, end = rng.standard_normal(1000), rng.standard_normal(1000)
    expected = torch.from_numpy(start.copy()).lerp_(torch.from_numpy(end), -1.0).numpy()
    got = lucid.tensor(start.copy()).lerp_(lucid.tensor(end), -1.0).numpy()
    assert got.tobytes() == expected.tobytes()
    assert lerp(start, end, -1.0).tobytes() == expected.tobytes()


# --- against the reference, live: the wrapper, lucid's schedulers and schedule values ------------------
def _run_pair(make_reference, make_lucid, steps, eval_every=0, before_step=None):
    """The same gradient stream through the reference and lucid (float64): the worst
    relative difference of the parameters over every step, asserted at PARITY."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (5,), (2, 3)]
    start = [rng.standard_normal(s) for s in shapes]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in start]
    ours = [nn.Parameter(lucid.tensor(a.copy())) for a in start]
    reference, optimizer = make_reference(theirs), make_lucid(ours)
    reference.train()
    for t in range(1, steps + 1):
        for i, (a, b) in enumerate(zip(theirs, ours)):
            noise = np.random.default_rng([t, i]).standard_normal(shapes[i]) * 0.1
            a.grad = torch.from_numpy(a.detach().numpy() * 0.5 + noise)
            b.grad = lucid.tensor(b.detach().numpy() * 0.5 + noise)
        if before_step is not None:
            before_step(t, reference, optimizer)
        reference.step()
        optimizer.step()
        switch = eval_every and t % eval_every == 0
        if switch:
            reference.eval()
            optimizer.eval()
        for a, b in zip(theirs, ours):
            close(b.detach().numpy(), a.detach().numpy(), "float64")
        if switch:
            reference.train()
            optimizer.train()


@pytest.mark.parametrize("base, kwargs, wrapper", [
    ("SGD", {"lr": 0.1}, {}),
    ("SGD", {"lr": 0.1, "momentum": 0.5}, {"momentum": 0.8, "weight_decay_at_y": 0.1, "r": 0.5, "weight_lr_power": 1.0}),
    ("Adagrad", {"lr": 0.05}, {"weight_decay_at_y": 0.01}),
], ids=["sgd", "sgd_momentum_wd_r", "adagrad"])
def test_the_wrapper_matches_the_reference_over_1000_steps(base, kwargs, wrapper):
    """torch's SGD and Adagrad inside (the reference's wrapper fails on optimizers that build
    their state on the first step, torch's Adam: a KeyError)."""
    pytest.importorskip("schedulefree")
    import schedulefree
    import torch

    _run_pair(lambda ps: schedulefree.ScheduleFreeWrapper(getattr(torch.optim, base)(ps, **kwargs), **wrapper),
              lambda ps: optim.ScheduleFreeWrapper(getattr(optim, base)(ps, **kwargs), **wrapper), 1000, eval_every=97)


@pytest.mark.parametrize("name", ["SGDScheduleFree", "AdamWScheduleFree", "RAdamScheduleFree"])
def test_lucid_schedulers_act_as_torch_schedulers_on_the_reference(name):
    pytest.importorskip("schedulefree")
    import schedulefree
    import torch

    kwargs = {"lr": 0.05}
    schedulers = {}

    def reference(params):
        made = getattr(schedulefree, name)(params, **kwargs)
        schedulers["torch"] = torch.optim.lr_scheduler.CosineAnnealingLR(made, T_max=60)
        return made

    def ours(params):
        made = getattr(optim, name)(params, **kwargs)
        schedulers["lucid"] = optim.lr_scheduler.CosineAnnealingLR(made, T_max=60)
        return made

    def step_schedulers(t, *_):
        if t > 1:
            schedulers["torch"].step()
            schedulers["lucid"].step()

    _run_pair(reference, ours, 200, eval_every=31, before_step=step_schedulers)


def test_a_schedule_value_acts_as_the_same_lr_written_into_the_reference():
    pytest.importorskip("schedulefree")
    import schedulefree

    from lucid.optim.schedules import cosine, warmup

    schedule = warmup(10, cosine(0.02, 150))

    def write_lr(t, reference, _):
        reference.param_groups[0]["lr"] = schedule.value(t - 1)

    _run_pair(lambda ps: schedulefree.AdamWScheduleFree(ps, lr=0.02, weight_decay=0.1),
              lambda ps: optim.AdamWScheduleFree(ps, lr=schedule, weight_decay=0.1), 200, eval_every=23,
              before_step=write_lr)
