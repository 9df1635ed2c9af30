"""The per-group step plan (lucid/optim/_step.py) and the batched rule runs under it.

Each test drives two optimizers through the same events: one that plans its groups, and a
twin that never does (its step engine has plans turned off), so every step of the twin takes the general path with all its checks. After each
step the two must hold the same numbers bit for bit (the same compiled loop, or the same
NumPy expressions, runs in both). Each test first checks that the plan is in use, so a plan
left stale by the event would make it fail.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid._backend.numpy_backend import NumpyBackend

DEVICES = ["cpu"] + (["gpu"] if lucid.is_available("gpu") else [])
OPTIMIZERS = [("Adam", {"lr": 0.01, "weight_decay": 0.1}), ("AdamW", {"lr": 0.01}),
              ("SGD", {"lr": 0.1, "momentum": 0.9}), ("NAdam", {"lr": 0.01}), ("ASGD", {"lr": 0.01})]


def unplanned(cls):
    """``cls`` with plans turned off: every step takes the general path."""

    def __init__(self, *args, **kwargs):
        cls.__init__(self, *args, **kwargs)
        self._engine.planned = False

    return type("Unplanned" + cls.__name__, (cls,), {"__init__": __init__})


def make_params(device, dtype=lucid.float32, shapes=((3,), (2, 4), (5,))):
    rng = np.random.default_rng(7)
    return [nn.Parameter(lucid.tensor(rng.standard_normal(s), dtype=dtype, device=device)) for s in shapes]


class Twins:
    """A planned optimizer and an unplanned one over equal parameters, driven alike."""

    def __init__(self, name, kwargs, device="cpu", dtype=lucid.float32, shapes=((3,), (2, 4), (5,))):
        cls = getattr(optim, name)
        self.params = make_params(device, dtype, shapes)
        self.ref_params = make_params(device, dtype, shapes)
        self.opt = cls(self.params, **kwargs)
        self.ref = unplanned(cls)(self.ref_params, **kwargs)
        self.rng = np.random.default_rng(3)
        self.device = device

    def both(self, fn):
        fn(self.opt, self.params)
        fn(self.ref, self.ref_params)

    def grads(self, which=None):
        values = [self.rng.standard_normal(p.shape) for p in self.params]
        for k, (p, q) in enumerate(zip(self.params, self.ref_params)):
            if which is None or k in which:
                p.grad = lucid.tensor(values[k], dtype=p.dtype, device=p.device)
                q.grad = lucid.tensor(values[k], dtype=q.dtype, device=q.device)
            else:
                p.grad = q.grad = None

    def step(self, which=None):
        self.grads(which)
        self.opt.step()
        self.ref.step()
        self.check()

    def planned(self) -> bool:
        return all(self.opt._engine.plans.get(id(g)) is not None for g in self.opt.param_groups)

    def check(self):
        for p, q in zip(self.params, self.ref_params):
            assert p.dtype is q.dtype and p.device == q.device
            np.testing.assert_array_equal(np.array(p.detach()), np.array(q.detach()))
        assert list(self.opt.state) == list(self.ref.state)
        for k in self.opt.state:
            mine, theirs = self.opt.state[k], self.ref.state[k]
            assert sorted(mine) == sorted(theirs)
            for key, value in mine.items():
                if isinstance(value, lucid.Tensor):
                    assert value.dtype is theirs[key].dtype and value.device == theirs[key].device
                    np.testing.assert_array_equal(np.array(value.detach()), np.array(theirs[key].detach()), key)
                else:
                    assert value == theirs[key], key

    def warm(self, steps=3):
        for _ in range(steps):
            self.step()
        assert self.planned(), "the plan is not in use: the test could not fail"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_planned_steps_equal_general_steps(name, kwargs, device):
    twins = Twins(name, kwargs, device)
    twins.warm()
    for _ in range(4):
        twins.step()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,kwargs", OPTIMIZERS[:3])
def test_replaced_data_is_seen(name, kwargs, device):
    twins = Twins(name, kwargs, device)
    twins.warm()
    fresh = np.random.default_rng(1).standard_normal((2, 4))
    twins.both(lambda opt, ps: setattr(ps[1], "data", lucid.tensor(fresh, dtype=ps[1].dtype, device=device)))
    twins.step()
    twins.step()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS[:3])
def test_conversion_is_seen(name, kwargs):
    twins = Twins(name, kwargs)
    twins.warm()
    twins.both(lambda opt, ps: setattr(ps[0], "data", ps[0].detach().double()))
    twins.step()
    assert twins.opt.state[0][next(k for k, v in twins.opt.state[0].items()
                                   if isinstance(v, lucid.Tensor))].dtype is lucid.float64
    twins.step()
    twins.both(lambda opt, ps: [setattr(p, "data", p.detach().half()) for p in ps])
    twins.step()  # float16 runs as NumPy expressions, one tensor at a time
    twins.step()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_load_state_dict_is_seen(name, kwargs):
    twins = Twins(name, kwargs)
    twins.warm()
    saved, ref_saved = twins.opt.state_dict(), twins.ref.state_dict()
    twins.step()
    twins.step()
    twins.opt.load_state_dict(saved)
    twins.ref.load_state_dict(ref_saved)
    twins.step()
    twins.step()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS[:3])
def test_replaced_state_is_seen(name, kwargs):
    twins = Twins(name, kwargs)
    twins.warm()
    key = next(k for k, v in twins.opt.state[0].items() if isinstance(v, lucid.Tensor))

    def replace_entry(opt, ps):
        opt.state[0][key] = lucid.full(ps[0].shape, 0.25)

    def replace_dict(opt, ps):
        opt.state[1] = {k: (v.detach().clone() * 0.5 if isinstance(v, lucid.Tensor) else v)
                        for k, v in opt.state[1].items()}

    def replace_storage(opt, ps):
        opt.state[2][key].data = lucid.full(ps[2].shape, 0.125)

    for event in (replace_entry, replace_dict, replace_storage):
        twins.both(event)
        twins.step()
        twins.step()
        assert twins.planned()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_gradients_coming_and_going_are_seen(name, kwargs):
    twins = Twins(name, kwargs)
    twins.step(which={0})  # parameter 1 and 2 start later: their steps differ from 0's
    twins.step(which={0, 1})
    for _ in range(3):
        twins.step()
    assert twins.planned()
    twins.step(which={0, 2})
    twins.step(which={1})
    twins.step()
    twins.step()


def test_a_new_rule_or_a_new_state_entry_is_seen():
    twins = Twins("Adam", {"lr": 0.01})
    twins.warm()
    twins.both(lambda opt, ps: opt.param_groups[0].update(amsgrad=True))  # a new rule, a new state entry
    twins.step()
    assert "max_exp_avg_sq" in twins.opt.state[0]
    twins.step()
    sgd = Twins("SGD", {"lr": 0.1})  # no state without momentum, then a momentum buffer
    sgd.warm()
    sgd.both(lambda opt, ps: opt.param_groups[0].update(momentum=0.9))
    sgd.step()
    sgd.step()


def test_added_group_and_changed_param_list_are_seen():
    twins = Twins("Adam", {"lr": 0.01})
    twins.warm()
    extra = nn.Parameter(lucid.ones(4)), nn.Parameter(lucid.ones(4))
    twins.opt.add_param_group({"params": [extra[0]], "lr": 0.1})
    twins.ref.add_param_group({"params": [extra[1]], "lr": 0.1})
    twins.params.append(extra[0])
    twins.ref_params.append(extra[1])
    twins.step()
    twins.step()
    twins.both(lambda opt, ps: opt.param_groups[0]["params"].pop())  # a parameter leaves the group by hand
    twins.opt.param_groups._flat = twins.ref.param_groups._flat = None  # the flat numbering, rebuilt as after any change of groups
    left = np.array(twins.params[2].detach())
    twins.step()
    twins.step()
    np.testing.assert_array_equal(np.array(twins.params[2].detach()), left)  # no longer optimised


@pytest.mark.parametrize("device", DEVICES)
def test_a_bad_gradient_under_a_plan_raises_the_general_error_and_changes_nothing(device):
    twins = Twins("Adam", {"lr": 0.01}, device)
    twins.warm()
    params = twins.params
    for p in params:
        p.grad = lucid.ones(*p.shape, device=device)
    params[2].data = params[2].detach().double()  # its float32 gradient no longer fits
    before = [np.array(p.detach()) for p in params]
    with pytest.raises(RuntimeError, match="gradient of parameter 2 has dtype"):
        twins.opt.step()
    for p, b in zip(params, before):
        np.testing.assert_array_equal(np.array(p.detach()), b)
    params[2].data = params[2].detach().float()
    twins.warm()
    before = [np.array(p.detach()) for p in params]
    params[2]._grad = lucid.ones(4, device=device)  # as a backward could leave it: the setter is not called
    with pytest.raises(RuntimeError, match="gradient of parameter 2 has shape"):
        twins.opt.step()
    for p, b in zip(params, before):
        np.testing.assert_array_equal(np.array(p.detach()), b)
    params[1].data = lucid.zeros(3, device=device)  # the state no longer fits
    params[1].grad = lucid.ones(3, device=device)
    params[2].grad = lucid.ones(5, device=device)
    with pytest.raises(RuntimeError, match="state of parameter 1 .* does not fit"):
        twins.opt.step()
    for p, b in zip((params[0], params[2]), (before[0], before[2])):
        np.testing.assert_array_equal(np.array(p.detach()), b)


def test_a_sparse_gradient_under_a_plan_takes_the_general_path():
    sgd = Twins("SGD", {"lr": 0.1, "momentum": 0.9}, shapes=((6, 2), (3,)))
    sgd.warm()
    for params in (sgd.params, sgd.ref_params):
        params[0].grad = lucid.sparse_coo_tensor(lucid.tensor([[1, 4]]), lucid.ones(2, 2), (6, 2))
        params[1].grad = lucid.ones(3)
    sgd.opt.step()
    sgd.ref.step()
    sgd.check()
    sgd.step()


def test_mixed_dtypes_and_strided_arrays_fall_back_per_tensor():
    twins = Twins("Adam", {"lr": 0.01}, shapes=((3,), (4, 4), (5,)))
    twins.both(lambda opt, ps: setattr(ps[2], "data", ps[2].detach().double()))  # a float64 batch beside float32
    twins.warm()
    assert len(twins.opt._engine.plans[id(twins.opt.param_groups[0])].batches) == 2
    base = np.random.default_rng(5).standard_normal((4, 4)).astype(np.float32)
    twins.both(lambda opt, ps: setattr(ps[1], "data", lucid.tensor(base).t()))  # a strided parameter
    for _ in range(3):
        twins.grads()
        for p in (twins.params[1], twins.ref_params[1]):  # and a strided gradient
            p.grad = p.grad.detach().t().contiguous().t()
        twins.opt.step()
        twins.ref.step()
        twins.check()
    assert twins.planned()


def test_without_numba_the_plan_runs_the_numpy_expressions(monkeypatch):
    monkeypatch.setattr(NumpyBackend, "_numba_rules", None)  # as with LUCID_JIT=0 or no numba
    for name, kwargs in OPTIMIZERS:
        twins = Twins(name, kwargs)
        twins.warm()
        twins.step()


@pytest.mark.parametrize("device", DEVICES)
def test_a_plan_does_not_keep_gradients_alive(device):
    import gc
    import weakref

    twins = Twins("Adam", {"lr": 0.01}, device)
    twins.warm()
    grads = [weakref.ref(p.grad._box[0]) for p in twins.params]  # the backend's arrays, which a plan sees
    twins.opt.zero_grad()  # set_to_none: the gradients' memory goes back, as in torch
    twins.ref.zero_grad()
    gc.collect()
    assert all(ref() is None for ref in grads)
    twins.step()
    twins.step()


@pytest.mark.parametrize("device", DEVICES[1:])
@pytest.mark.parametrize("name,kwargs", [OPTIMIZERS[0], OPTIMIZERS[3]])
def test_gpu_batches_run_compiled_once_per_group(name, kwargs, device, monkeypatch):
    """On MLX a planned group runs its rule through the batch runner (one compiled call with
    the per-item work done once), or, with LUCID_MLX_COMPILE=0, eagerly; both equal the twin."""
    for setting, compiled in (("1", True), ("0", False)):
        monkeypatch.setenv("LUCID_MLX_COMPILE", setting)
        twins = Twins(name, kwargs, device)
        twins.warm()
        (batch,) = twins.opt._engine.plans[id(twins.opt.param_groups[0])].batches
        from lucid._backend import mlx_backend

        assert isinstance(batch.runner, mlx_backend._CompiledBatch) is compiled
        for _ in range(3):
            twins.step()
