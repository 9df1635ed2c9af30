"""Invariants of lucid.optim, checked on generated cases (hypothesis, derandomised in conftest).

- ``state_dict`` -> ``load_state_dict`` into fresh objects -> more steps equals the
  uninterrupted run, bit for bit, for every optimizer;
- SparseAdam never changes a row (value or moment) outside the rows a gradient touches;
- a step that raises leaves every parameter and every state value as it was;
- a conversion between steps (``.double()``, ``.float()``, ``.half()``) continues exactly as a
  run in the new dtype from the state converted by hand;
- a scheduler resumed from its ``state_dict`` gives the same learning rates; schedule values
  read update ``k`` at ``value(k)``; ``clip_grad_norm_`` leaves a total norm of at most
  ``max_norm`` and keeps each gradient's direction.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lucid
from lucid import nn, optim
from lucid.nn.utils import clip_grad_norm_
from lucid.optim import lr_scheduler
from lucid.optim.schedules import cosine, warmup
from test_optim_state import (ALL_OPTIMIZERS, CONVERSIONS, STATEFUL, _closure, assert_records_equal, record,
                              run_with_conversion, set_grads)
from optim_registry import BY_NAME
from tolerances import PARITY, SCHEDULER, close

NAMES = [name for name, _ in ALL_OPTIMIZERS]
KWARGS = dict(ALL_OPTIMIZERS)
# torch's message for a sparse gradient, from the optimizers without a sparse path
REFUSE_SPARSE = [n for n in NAMES if BY_NAME[n].sparse == "refuses"]
PROPERTY = settings(max_examples=50, deadline=None)


def _params(shapes, seed, dtype=lucid.float64):
    rng = np.random.default_rng(seed)
    return [nn.Parameter(lucid.tensor(rng.uniform(-1, 1, shape), dtype=dtype)) for shape in shapes]


def _optimizer(name, params):
    if name == "Muon":
        params = [p for p in params if p.ndim == 2]
    return getattr(optim, name)(params, **KWARGS[name]), params


def _step(opt, name, params, step):
    if name == "LBFGS":
        opt.step(_closure(opt, params, step))
    else:
        set_grads(params, step)
        opt.step()


SHAPES = st.lists(st.tuples(st.integers(1, 4), st.integers(1, 3)), min_size=1, max_size=3)


@PROPERTY
@given(name=st.sampled_from(NAMES), shapes=SHAPES, before=st.integers(0, 4), after=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_state_dict_round_trip_then_step_equals_the_uninterrupted_run(name, shapes, before, after, seed):
    opt, params = _optimizer(name, _params(shapes, seed))
    for step in range(1, before + 1):
        _step(opt, name, params, step)
    saved, values = opt.state_dict(), [p.detach().clone() for p in params]
    for step in range(before + 1, before + after + 1):
        _step(opt, name, params, step)
    expected = record(opt, params)

    fresh = [nn.Parameter(lucid.zeros(*p.shape, dtype=p.dtype)) for p in params]
    for p, v in zip(fresh, values):
        p.data = v
    other, fresh = _optimizer(name, fresh)
    other.load_state_dict(saved)
    for step in range(before + 1, before + after + 1):
        _step(other, name, fresh, step)
    assert_records_equal(record(other, fresh), expected)


@PROPERTY
@given(rows=st.integers(2, 9), width=st.integers(1, 3), steps=st.lists(st.sets(st.integers(0, 8)), min_size=1,
       max_size=6), seed=st.integers(0, 2**16), device=st.sampled_from(["cpu", "gpu"]))
def test_sparse_adam_changes_no_row_outside_the_touched_set(rows, width, steps, seed, device):
    if device == "gpu" and not lucid.is_available("gpu"):
        pytest.skip("MLX is not installed")
    rng = np.random.default_rng(seed)
    table = nn.Parameter(lucid.tensor(rng.uniform(-1, 1, (rows, width)), dtype=lucid.float32, device=device))
    opt = optim.SparseAdam([table], lr=0.05)
    for touched in steps:
        touched = sorted(r for r in touched if r < rows)
        grad = np.zeros((rows, width), np.float32)
        for r in touched:  # a touched row may hold zeros: it is touched through any nonzero
            grad[r] = rng.uniform(-1, 1, width) * (rng.random(width) < 0.7)
            grad[r, rng.integers(width)] = rng.choice([-1.0, 1.0])
        before_p, before_s = record(opt, [table])
        table.grad = lucid.tensor(grad, device=device)
        opt.step()
        after_p, after_s = record(opt, [table])
        untouched = [r for r in range(rows) if r not in touched]
        np.testing.assert_array_equal(after_p[0][untouched], before_p[0][untouched])
        for key in ("exp_avg", "exp_avg_sq"):
            old = before_s[0].get(key, np.zeros((rows, width), np.float32))
            np.testing.assert_array_equal(after_s[0][key][untouched], old[untouched])
        # and each touched row (a +-1 somewhere in it) did move
        assert (after_p[0][touched] != before_p[0][touched]).any(axis=1).all()


@PROPERTY
@given(name=st.sampled_from(REFUSE_SPARSE), shapes=SHAPES, before=st.integers(0, 3), seed=st.integers(0, 2**16),
       bad=st.integers(0, 2))
def test_a_step_that_raises_changes_nothing(name, shapes, before, seed, bad):
    opt, params = _optimizer(name, _params(shapes, seed))
    for step in range(1, before + 1):
        _step(opt, name, params, step)
    set_grads(params, before + 1)
    p = params[bad % len(params)]
    p.grad = lucid.sparse_coo_tensor(lucid.tensor([[0]]), lucid.ones(1, *p.shape[1:], dtype=p.dtype), p.shape)
    expected, groups = record(opt, params), _hyperparameters(opt)
    with pytest.raises(RuntimeError, match="does not support sparse gradients"):
        opt.step()
    assert_records_equal(record(opt, params), expected)
    assert _hyperparameters(opt) == groups  # ADOPT's group step count too


def _hyperparameters(opt) -> list[dict]:
    """Each group's entries but its parameters, as text (a Tensor lr compares by its value)."""
    return [{key: repr(value) for key, value in group.items() if key != "params"} for group in opt.param_groups]


@PROPERTY
@given(case=st.sampled_from([(n, k) for n, k in ALL_OPTIMIZERS if n != "LBFGS"] + [STATEFUL[1]]),
       conversion=st.sampled_from(["double", "float", "half"]), before=st.integers(1, 4), after=st.integers(1, 4))
def test_a_conversion_between_steps_continues_as_a_run_in_the_new_dtype(case, conversion, before, after):
    name, kwargs = case
    assert conversion in CONVERSIONS
    _, _, auto = run_with_conversion(name, kwargs, conversion, by_hand=False, before=before, after=after)
    _, _, hand = run_with_conversion(name, kwargs, conversion, by_hand=True, before=before, after=after)
    for a, b in zip(auto, hand):
        assert_records_equal(a, b)


# --- schedulers, schedule values, clipping ------------------------------------------------------
def _sgd(lr=1.0):
    return optim.SGD([nn.Parameter(lucid.zeros(1))], lr=lr)


SCHEDULERS = {
    "StepLR": (lambda o, a, b: lr_scheduler.StepLR(o, step_size=a, gamma=b),
               lambda t, a, b: b ** (t // a)),
    "ExponentialLR": (lambda o, a, b: lr_scheduler.ExponentialLR(o, gamma=b), lambda t, a, b: b**t),
    "CosineAnnealingLR": (lambda o, a, b: lr_scheduler.CosineAnnealingLR(o, T_max=a, eta_min=b / 10),
                          None),
    "LinearLR": (lambda o, a, b: lr_scheduler.LinearLR(o, start_factor=b, total_iters=a),
                 lambda t, a, b: b + (1 - b) * min(t, a) / a),
}


@PROPERTY
@given(kind=st.sampled_from(sorted(SCHEDULERS)), a=st.integers(1, 6), b=st.floats(0.1, 0.95),
       stop=st.integers(0, 8), more=st.integers(1, 8))
def test_a_resumed_scheduler_gives_the_uninterrupted_learning_rates(kind, a, b, stop, more):
    make, closed_form = SCHEDULERS[kind]
    opt = _sgd()
    sched = make(opt, a, b)
    lrs = []
    for _ in range(stop + more):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    if closed_form is not None:
        close(lrs, [closed_form(t, a, b) for t in range(1, stop + more + 1)], "float64", table=SCHEDULER)

    opt2 = _sgd()
    sched2 = make(opt2, a, b)
    for _ in range(stop):
        opt2.step()
        sched2.step()
    saved_opt, saved_sched = opt2.state_dict(), sched2.state_dict()
    opt3 = _sgd(lr=0.5)
    sched3 = make(opt3, a, b)
    opt3.load_state_dict(saved_opt)
    sched3.load_state_dict(saved_sched)
    resumed = []
    for _ in range(more):
        opt3.step()
        sched3.step()
        resumed.append(opt3.param_groups[0]["lr"])
    assert resumed == lrs[stop:]


@PROPERTY
@given(warm=st.integers(0, 20), peak=st.floats(1e-4, 1.0), steps=st.integers(1, 50), updates=st.integers(1, 60))
def test_update_k_reads_the_schedule_at_k(warm, peak, steps, updates):
    schedule = warmup(warm, cosine(peak, steps))
    p = nn.Parameter(lucid.zeros(1, dtype=lucid.float64))
    opt = optim.SGD([p], lr=schedule)
    for k in range(updates):
        before = p.item()
        p.grad = lucid.ones(1, dtype=lucid.float64)
        opt.step()
        # plain SGD moves by exactly the lr it read, which is the closed form at step k
        t = k - warm
        expected = peak * k / warm if k < warm else peak * (1 + math.cos(math.pi * min(t, steps) / steps)) / 2
        close(before - p.item(), expected, "float64")
        assert opt.param_groups[0]["lr_schedule_step"] == k + 1


@PROPERTY
@given(shapes=st.lists(st.integers(1, 6), min_size=1, max_size=4), max_norm=st.floats(0.01, 10.0),
       norm_type=st.sampled_from([1.0, 2.0, 3.0, math.inf]), seed=st.integers(0, 2**16))
def test_clip_grad_norm_leaves_at_most_max_norm_and_keeps_directions(shapes, max_norm, norm_type, seed):
    rng = np.random.default_rng(seed)
    grads = [rng.normal(size=n) * rng.uniform(0.01, 10) for n in shapes]
    params = [nn.Parameter(lucid.zeros(n, dtype=lucid.float64)) for n in shapes]
    for p, g in zip(params, grads):
        p.grad = lucid.tensor(g)
    flat = np.concatenate(grads)
    total = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    returned = clip_grad_norm_(params, max_norm, norm_type=norm_type)
    close(returned.item(), total, "float64")
    coef = min(1.0, max_norm / (total + 1e-6))
    for p, g in zip(params, grads):
        close(p.grad.numpy(), g * coef, "float64")
    after = np.concatenate([p.grad.numpy() for p in params])
    after_norm = np.abs(after).max() if norm_type == math.inf else (np.abs(after) ** norm_type).sum() ** (1 / norm_type)
    assert after_norm <= max_norm * (1 + PARITY["float64"][0]) or coef == 1.0
