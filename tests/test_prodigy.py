"""Prodigy's own behaviour beyond its golden runs (tests/optim_registry.py), and the rules with
sums its first pass is written with.

A rule with ``sums`` returns, per tensor, the sum of each term over the tensor's elements:
checked against NumPy's sum on every runner (numba, NumPy's array expressions, MLX). Prodigy
shares one estimate D across its groups: the hyperparameters of the estimate are refused where
groups disagree, as are different learning rates (prodigyopt's RuntimeError), each before
anything changes; the gradient is left as it was; a step whose gradients are all zero moves
nothing, as the reference's.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid._backend.numpy_backend import NumpyBackend
from lucid.optim.elementwise import abs, elementwise, run_rule
from tolerances import close

DEVICES = ["cpu"] + (["gpu"] if lucid.is_available("gpu") else [])


@elementwise(state=("velocity",), sums=("dot", "size"))
def _momentum_with_sums(param, grad, velocity, decay):
    velocity = velocity * decay + grad
    return param, velocity, grad * param, abs(velocity)


def _run_sums(device):
    rng = np.random.default_rng(0)
    params = [lucid.tensor(rng.standard_normal(shape), device=device) for shape in ((3, 4), (7,))]
    grads = [lucid.tensor(rng.standard_normal(p.shape), device=device) for p in params]
    velocities = [lucid.tensor(rng.standard_normal(p.shape), device=device) for p in params]
    before = [np.asarray(v) for v in velocities]
    sums = run_rule(_momentum_with_sums, [((p, v), g, (0.5,)) for p, v, g in zip(params, velocities, grads)])
    for (dot, size), p, g, v, old in zip(sums, params, grads, velocities, before):
        new = old * 0.5 + np.asarray(g)
        close(np.asarray(v), new, "float64")
        close([dot, size], [np.sum(np.asarray(g) * np.asarray(p)), np.sum(np.abs(new))], "float64")
    return sums


@pytest.mark.parametrize("device", DEVICES)
def test_a_rule_returns_the_sums_of_its_terms_over_each_tensor(device):
    sums = _run_sums(device)
    assert len(sums) == 2 and all(isinstance(value, float) for pair in sums for value in pair)


def test_without_numba_the_sums_come_from_the_numpy_expressions(monkeypatch):
    monkeypatch.setattr(NumpyBackend, "_numba_rules", None)  # as with LUCID_JIT=0 or no numba
    _run_sums("cpu")


def test_a_rule_with_sums_has_no_batch_runner():
    backend = lucid._backend.get("cpu")  # noqa: SLF001 - the runner is the backend's
    with pytest.raises(NotImplementedError, match="run_rule"):
        backend.rule_batch(_momentum_with_sums, [np.zeros(3), np.zeros(3)])


def _model(device="cpu"):
    lucid.manual_seed(0)
    return [nn.Parameter(lucid.randn(3, 2, device=device)), nn.Parameter(lucid.randn(4, device=device))]


def _snapshot(optimizer, params):
    state = {i: {k: (np.asarray(v).copy() if isinstance(v, lucid.Tensor) else v) for k, v in s.items()}
             for i, s in optimizer.state.items()}
    groups = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
    return [np.asarray(p.detach()).copy() for p in params], state, groups


def _same(a, b):
    (params_a, state_a, groups_a), (params_b, state_b, groups_b) = a, b
    assert all(np.array_equal(x, y) for x, y in zip(params_a, params_b))
    assert state_a.keys() == state_b.keys() and groups_a == groups_b
    for i in state_a:
        assert all(np.array_equal(state_a[i][k], state_b[i][k]) for k in state_a[i])


@pytest.mark.parametrize("group_setting, error, words", [
    ({"lr": 0.5}, RuntimeError, "share one lr"),
    ({"betas": (0.5, 0.9)}, ValueError, "betas is one value for all groups"),
    ({"d_coef": 2.0}, ValueError, "d_coef is one value for all groups"),
    ({"decoupled_weight_decay": False}, ValueError, "decoupled_weight_decay is one value"),
])
def test_groups_that_disagree_on_the_estimate_raise_before_anything_changes(group_setting, error, words):
    a, b = _model()
    optimizer = optim.Prodigy([{"params": [a]}, {"params": [b]}])
    for p in (a, b):
        p.grad = lucid.ones_like(p)
    optimizer.step()
    before = _snapshot(optimizer, [a, b])
    optimizer.param_groups[1].update(group_setting)
    with pytest.raises(error, match=words):
        optimizer.step()
    optimizer.param_groups[1].update({k: optimizer.param_groups[0][k] for k in group_setting})
    _same(before, _snapshot(optimizer, [a, b]))


def test_a_group_at_lr_0_is_paused_and_the_others_step():
    a, b = _model()
    optimizer = optim.Prodigy([{"params": [a]}, {"params": [b], "lr": 0.0}])
    start = np.asarray(b.detach()).copy()
    for _ in range(3):
        for p in (a, b):
            p.grad = p.detach() * 0.5 + 0.1
        optimizer.step()
    np.testing.assert_array_equal(np.asarray(b.detach()), start)
    assert not np.array_equal(np.asarray(optimizer.state[0]["exp_avg"]), 0)
    np.testing.assert_array_equal(np.asarray(optimizer.state[1]["exp_avg"]), 0)


@pytest.mark.parametrize("kwargs, words", [
    ({"fsdp_in_use": True}, "fsdp_in_use=True is not supported"),
    ({"d0": 0.0}, "Invalid d0 value"),
    ({"lr": -1.0}, "Invalid learning rate"),
    ({"eps": 0.0}, "Invalid epsilon value"),
    ({"growth_rate": 0.5}, "Invalid growth_rate value"),
    ({"d_coef": -1.0}, "Invalid d_coef value"),
    ({"beta3": 1.5}, "Invalid beta3 value"),
    ({"betas": (0.9, 1.0)}, "Invalid beta parameter at index 1"),
])
def test_bad_hyperparameters_are_refused_by_name(kwargs, words):
    with pytest.raises(ValueError, match=words):
        optim.Prodigy(_model(), **kwargs)


def test_slice_p_must_be_a_positive_int():
    with pytest.raises(TypeError, match="slice_p must be an int"):
        optim.Prodigy(_model(), slice_p=1.5)
    with pytest.raises(ValueError, match="slice_p must be at least 1"):
        optim.Prodigy(_model(), slice_p=0)


@pytest.mark.parametrize("device", DEVICES)
def test_the_gradient_is_left_as_it_was_with_l2_decay(device):
    params = _model(device)
    optimizer = optim.Prodigy(params, weight_decay=0.5, decoupled_weight_decay=False)
    for p in params:
        p.grad = lucid.ones_like(p)
    optimizer.step()
    for p in params:
        np.testing.assert_array_equal(np.asarray(p.grad), 1.0)  # prodigyopt adds 0.5 * p to it


def test_a_first_step_with_only_zero_gradients_measures_nothing_and_moves_nothing():
    # sum |s| is 0: prodigyopt returns before D, the step counts and the parameters change
    params = _model()
    optimizer = optim.Prodigy(params)
    start = [np.asarray(p.detach()).copy() for p in params]
    for p in params:
        p.grad = lucid.zeros_like(p)
    optimizer.step()
    assert all(np.array_equal(np.asarray(p.detach()), s) for p, s in zip(params, start))
    assert [state["step"] for state in optimizer.state.values()] == [0, 0]
    group = optimizer.param_groups[0]
    assert (group["k"], group["d"], "d_hat" in group) == (0, 1e-6, False)
    for p in params:
        p.grad = lucid.ones_like(p)
    optimizer.step()  # then the first real step: counted once
    assert [state["step"] for state in optimizer.state.values()] == [1, 1] and group["k"] == 1
