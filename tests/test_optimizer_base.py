"""The Optimizer base class: construction, step, hooks, repr, copies, zero_grad, MLX evaluation.

Where torch.optim 2.13 defines the behaviour, the test builds the same thing in torch and
compares (exception type and message, group contents, repr text, what hooks receive).
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim.optimizer import required
from helpers import param, raised, torch_or_skip

GPU = lucid.is_available("gpu")
needs_gpu = pytest.mark.skipif(not GPU, reason="needs the gpu (MLX) device")


def assert_same_error(lucid_fn, torch_fn):
    """Both raise, with the same exception type and message."""
    mine, theirs = raised(lucid_fn), raised(torch_fn)
    assert theirs is not None, "torch accepted it"
    assert mine is not None, f"lucid accepted what torch rejects with {theirs!r}"
    assert (type(mine).__name__, str(mine)) == (type(theirs).__name__, str(theirs))


def snapshot(opt):
    """Every parameter and every state value, as host copies (bit-exact comparisons)."""
    params = [np.array(p.detach()) for g in opt.param_groups for p in g["params"]]
    state = {i: {k: (np.array(v.detach()) if isinstance(v, lucid.Tensor) else v) for k, v in s.items()}
             for i, s in opt.state.items()}
    return params, state


def assert_snapshots_equal(a, b):
    (pa, sa), (pb, sb) = a, b
    assert len(pa) == len(pb)
    for x, y in zip(pa, pb):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert sa.keys() == sb.keys()
    for i in sa:
        assert sa[i].keys() == sb[i].keys()
        for k in sa[i]:
            if isinstance(sa[i][k], np.ndarray):
                assert sa[i][k].dtype == sb[i][k].dtype and np.array_equal(sa[i][k], sb[i][k]), (i, k)
            else:
                assert sa[i][k] == sb[i][k], (i, k)


# ----------------------------------------------------------------------------------------
# 1. Construction
# ----------------------------------------------------------------------------------------

def test_empty_list_raises_value_error():
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        optim.SGD([], lr=0.1)


def test_empty_generator_raises_value_error():
    with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
        optim.Adam(p for p in [])


def test_bare_tensor_raises_type_error():
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts"):
        optim.SGD(param([1.0, 2.0]), lr=0.1)


def test_non_tensor_element_raises_like_torch():
    torch = torch_or_skip()
    assert_same_error(lambda: optim.SGD([param([1.0]), 3], lr=0.1),
                      lambda: torch.optim.SGD([torch.nn.Parameter(torch.ones(1)), 3], lr=0.1))


def test_non_leaf_raises_like_torch():
    torch = torch_or_skip()
    x = param([1.0, 2.0])
    tx = torch.nn.Parameter(torch.ones(2))
    assert_same_error(lambda: optim.SGD([x * 2], lr=0.1), lambda: torch.optim.SGD([tx * 2], lr=0.1))


def test_non_leaf_that_retains_grad_is_accepted():
    y = param([1.0, 2.0]) * 2
    y.retain_grad()
    opt = optim.SGD([y], lr=0.1)
    assert opt.param_groups[0]["params"][0] is y


def test_set_in_a_group_raises_like_torch():
    torch = torch_or_skip()
    p, tp = param([1.0]), torch.nn.Parameter(torch.ones(1))
    assert_same_error(lambda: optim.SGD([{"params": {p}}], lr=0.1),
                      lambda: torch.optim.SGD([{"params": {tp}}], lr=0.1))


def test_top_level_set_raises_type_error():
    # torch silently accepts a top-level set, in a run-dependent order; lucid refuses it
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD({param([1.0])}, lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD(frozenset({param([1.0])}), lr=0.1)


def test_single_tensor_as_group_params_is_wrapped():
    p = param([1.0])
    opt = optim.SGD([{"params": p}], lr=0.1)
    assert opt.param_groups[0]["params"] == [p] and isinstance(opt.param_groups[0]["params"], list)


def test_same_parameter_in_two_groups_raises_like_torch():
    torch = torch_or_skip()
    p, tp = param([1.0]), torch.nn.Parameter(torch.ones(1))
    assert_same_error(lambda: optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
                      lambda: torch.optim.SGD([{"params": [tp]}, {"params": [tp]}], lr=0.1))


def test_same_parameter_in_two_groups_via_add_param_group_raises():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [p]})
    assert len(opt.param_groups) == 1


def test_duplicate_in_one_group_raises_value_error_and_is_documented():
    # torch warns and then updates the parameter twice per step; lucid refuses (see Notes)
    p = param([1.0])
    with pytest.raises(ValueError, match="duplicate parameters"):
        optim.SGD([p, p], lr=0.1)
    notes = optim.Optimizer.__doc__.split("Notes")[1]
    assert "listed twice" in notes and "ValueError" in notes


def test_group_keys_match_torch_defaults_overrides_and_extras():
    torch = torch_or_skip()

    def build(lib, P):
        a, b, c = P([1.0]), P([2.0]), P([3.0])
        groups = [{"params": [a], "lr": 0.5, "custom": "kept"}, {"params": [b, c], "momentum": 0.3}]
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9, weight_decay=0.01)

    mine = build(lucid, lambda v: param(v))
    theirs = build(torch, lambda v: torch.nn.Parameter(torch.tensor(v)))
    strip = lambda groups: [{k: v for k, v in g.items() if k != "params"} for g in groups]  # noqa: E731
    assert strip(mine.param_groups) == strip(theirs.param_groups)
    assert mine.param_groups[0]["custom"] == "kept" and "custom" not in mine.param_groups[1]
    assert mine.param_groups[0]["lr"] == 0.5 and mine.param_groups[1]["lr"] == 0.1
    assert mine.param_groups[1]["momentum"] == 0.3 and mine.param_groups[0]["momentum"] == 0.9


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SparseAdam"])
def test_adam_family_group_keys_match_torch(name):
    torch = torch_or_skip()

    def build(lib, P):
        return getattr(lib.optim, name)([{"params": [P()], "lr": 0.5}, {"params": [P()], "betas": (0.8, 0.9)}],
                                        lr=0.01)

    mine = build(lucid, lambda: param([1.0]))
    theirs = build(torch, lambda: torch.nn.Parameter(torch.ones(1)))
    strip = lambda groups: [{k: v for k, v in g.items() if k != "params"} for g in groups]  # noqa: E731
    assert strip(mine.param_groups) == strip(theirs.param_groups)
    assert mine.defaults == theirs.defaults


class _NeedsLr(optim.Optimizer):
    def __init__(self, params):
        super().__init__(params, {"lr": required, "momentum": 0.0})


def test_required_hyperparameter_missing_raises_like_torch():
    torch = torch_or_skip()
    from torch.optim.optimizer import required as torch_required

    class TorchNeedsLr(torch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": torch_required, "momentum": 0.0})

    assert_same_error(lambda: _NeedsLr([param([1.0])]), lambda: TorchNeedsLr([torch.nn.Parameter(torch.ones(1))]))
    opt = _NeedsLr([{"params": [param([1.0])], "lr": 0.2}])
    assert opt.param_groups[0]["lr"] == 0.2 and opt.param_groups[0]["momentum"] == 0.0


def test_named_params_fill_param_names_like_torch():
    torch = torch_or_skip()
    mine = optim.SGD([("w", param([1.0])), ("b", param([2.0]))], lr=0.1)
    theirs = torch.optim.SGD([("w", torch.nn.Parameter(torch.ones(1))), ("b", torch.nn.Parameter(torch.ones(1)))],
                             lr=0.1)
    assert mine.param_groups[0]["param_names"] == theirs.param_groups[0]["param_names"] == ["w", "b"]
    assert all(isinstance(p, lucid.Tensor) for p in mine.param_groups[0]["params"])
    assert mine.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]


def test_partially_named_params_raise_like_torch():
    torch = torch_or_skip()
    assert_same_error(lambda: optim.SGD([("w", param([1.0])), param([2.0])], lr=0.1),
                      lambda: torch.optim.SGD([("w", torch.nn.Parameter(torch.ones(1))),
                                               torch.nn.Parameter(torch.ones(1))], lr=0.1))


def test_named_and_unnamed_groups_mixed_raise_like_torch():
    torch = torch_or_skip()
    tp = lambda: torch.nn.Parameter(torch.ones(1))  # noqa: E731
    assert_same_error(lambda: optim.SGD([{"params": [("w", param([1.0]))]}, {"params": [param([2.0])]}], lr=0.1),
                      lambda: torch.optim.SGD([{"params": [("w", tp())]}, {"params": [tp()]}], lr=0.1))


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "foo": 1}),
    ("Adam", {"momentum": 0.9}),
    ("AdamW", {"nesterov": True}),
    ("SparseAdam", {"weight_decay": 0.1}),
    ("SparseAdam", {"amsgrad": True}),
])
def test_unknown_constructor_kwargs_raise_type_error_like_torch(name, kwargs):
    torch = torch_or_skip()
    with pytest.raises(TypeError):
        getattr(optim, name)([param([1.0])], **kwargs)
    with pytest.raises(TypeError):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], **kwargs)


BAD_HYPERPARAMETERS = [
    ("SGD", {"lr": -1.0}),
    ("SGD", {"lr": -1e-3}),
    ("SGD", {"momentum": -0.5}),
    ("SGD", {"weight_decay": -0.1}),
    ("SGD", {"nesterov": True}),
    ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}),
    ("SGD", {"lr": ("tensor", [0.1, 0.2])}),
    ("SGD", {"lr": ("tensor", -1.0)}),
    ("SGD", {"fused": True, "foreach": True}),
    ("Adam", {"lr": -1.0}),
    ("Adam", {"eps": -1e-8}),
    ("Adam", {"betas": (1.0, 0.999)}),
    ("Adam", {"betas": (0.9, 1.0)}),
    ("Adam", {"betas": (-0.1, 0.999)}),
    ("Adam", {"betas": (0.9, -0.5)}),
    ("Adam", {"betas": (0, 0.999)}),
    ("Adam", {"weight_decay": -1e-2}),
    ("Adam", {"lr": ("tensor", [0.1, 0.2])}),
    ("Adam", {"lr": ("tensor", 0.1), "foreach": True}),
    ("Adam", {"fused": True, "foreach": True}),
    ("AdamW", {"lr": -1.0}),
    ("AdamW", {"eps": -1.0}),
    ("AdamW", {"betas": (0.9, 1.5)}),
    ("AdamW", {"weight_decay": -1.0}),
    ("AdamW", {"lr": ("tensor", [0.1, 0.2])}),
    ("AdamW", {"fused": True, "foreach": True}),
    ("SparseAdam", {"lr": 0.0}),
    ("SparseAdam", {"lr": -1.0}),
    ("SparseAdam", {"eps": 0.0}),
    ("SparseAdam", {"eps": -1e-8}),
    ("SparseAdam", {"betas": (1.0, 0.999)}),
    ("SparseAdam", {"betas": (0.9, 1.0)}),
    ("SparseAdam", {"lr": ("tensor", [0.1, 0.2])}),
]


def _hyper(value, lib):
    if isinstance(value, tuple) and value and value[0] == "tensor":
        return lib.tensor(value[1])
    return value


@pytest.mark.parametrize("name,kwargs", BAD_HYPERPARAMETERS,
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in BAD_HYPERPARAMETERS])
def test_invalid_hyperparameters_raise_exactly_like_torch(name, kwargs):
    torch = torch_or_skip()
    assert_same_error(
        lambda: getattr(optim, name)([param([1.0, 2.0])], **{k: _hyper(v, lucid) for k, v in kwargs.items()}),
        lambda: getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))],
                                           **{k: _hyper(v, torch) for k, v in kwargs.items()}))


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_hyperparameters_are_checked_before_params_like_torch(name):
    torch = torch_or_skip()
    assert_same_error(lambda: getattr(optim, name)(param([1.0]), lr=-1.0),
                      lambda: getattr(torch.optim, name)(torch.nn.Parameter(torch.ones(1)), lr=-1.0))


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_valid_implementation_flags_are_accepted_and_stored(name):
    opt = getattr(optim, name)([param([1.0])], lr=0.1, foreach=False, fused=True)
    assert opt.param_groups[0]["fused"] is True and opt.param_groups[0]["foreach"] is False


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_differentiable_raises_not_implemented(name):
    with pytest.raises(NotImplementedError, match="differentiable"):
        getattr(optim, name)([param([1.0])], lr=0.1, differentiable=True)


def test_invalid_hyperparameter_in_an_added_group_raises_and_adds_nothing():
    opt = optim.Adam([param([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -2"):
        opt.add_param_group({"params": [param([2.0])], "lr": -2})
    assert len(opt.param_groups) == 1


# ----------------------------------------------------------------------------------------
# 3. step
# ----------------------------------------------------------------------------------------

def test_closure_runs_with_grad_enabled_inside_no_grad_and_its_loss_is_returned(device):
    p = param([1.0, -2.0], device)
    opt = optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(lucid.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with lucid.no_grad():
        loss = opt.step(closure)
    assert seen == [True]
    assert isinstance(loss, lucid.Tensor) and loss.item() == 5.0
    start = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(p.detach()), start + (2 * start) * np.float32(-0.1))
    assert lucid.is_grad_enabled()


def test_grad_mode_is_restored_after_a_closure_inside_no_grad():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)
    with lucid.no_grad():
        opt.step(lambda: None)
        assert not lucid.is_grad_enabled()


def test_step_without_closure_returns_none(device):
    p = param([1.0], device)
    p.grad = lucid.tensor([1.0], device=device)
    assert optim.Adam([p]).step() is None


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.5}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.5}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.5}),
    ("SparseAdam", {"lr": 0.1}),
])
def test_none_grad_is_skipped_gets_no_state_and_is_not_decayed(name, kwargs, device):
    a, b = param([1.0, 2.0], device), param([3.0, 4.0], device)
    opt = getattr(optim, name)([a, b], **kwargs)
    a.grad = lucid.tensor([1.0, 1.0], device=device)
    for _ in range(3):
        opt.step()
    np.testing.assert_array_equal(np.asarray(b.detach()), np.array([3.0, 4.0], np.float32))
    assert 1 not in opt.state and b not in opt.state
    assert 0 in opt.state
    assert list(opt.state_dict()["state"]) == [0]


def test_all_grads_none_changes_nothing_even_with_decay(device):
    a = param([1.0, 2.0], device)
    opt = optim.AdamW([a], lr=0.1, weight_decay=0.5)
    opt.step()
    np.testing.assert_array_equal(np.asarray(a.detach()), np.array([1.0, 2.0], np.float32))
    assert len(opt.state) == 0


@pytest.mark.parametrize("name,kwargs", [("Adam", {}), ("Adam", {"amsgrad": True}), ("AdamW", {"weight_decay": 0}),
                                         ("SparseAdam", {})])
def test_zero_grads_leave_adam_params_unchanged_but_create_state(name, kwargs, device):
    p = param([[1.0, -2.0], [3.0, 0.5]], device)
    opt = getattr(optim, name)([p], lr=0.1, **kwargs)
    before = np.array(p.detach())
    for step in range(1, 4):
        p.grad = lucid.zeros(2, 2, device=device)
        opt.step()
        np.testing.assert_array_equal(np.asarray(p.detach()), before)
        assert opt.state[0]["step"] == step
        np.testing.assert_array_equal(np.asarray(opt.state[0]["exp_avg"].detach()), np.zeros((2, 2)))


@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9, "nesterov": True}), ("Adam", {"amsgrad": True}),
                                         ("AdamW", {}), ("SparseAdam", {})])
def test_update_builds_no_graph(name, kwargs, device):
    p = param([1.0, -2.0, 3.0], device)
    opt = getattr(optim, name)([p], lr=0.1, **kwargs)
    for _ in range(2):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
        for value in opt.state[0].values():
            if isinstance(value, lucid.Tensor):
                assert value.is_leaf and value.grad_fn is None and not value.requires_grad
    # the updated parameter still trains: a fresh backward reaches it
    opt.zero_grad()
    (p * 2).sum().backward()
    np.testing.assert_array_equal(np.asarray(p.grad), np.full(3, 2.0, np.float32))


BAD_GRAD_OPTIMIZERS = [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}), ("AdamW", {}), ("SparseAdam", {})]


def _two_group_optimizer(name, kwargs, device):
    a, b = param([1.0, -1.0], device), param([[0.5, 2.0], [1.0, -3.0]], device)
    c = param([4.0, 5.0, 6.0], device)
    opt = getattr(optim, name)([{"params": [a, b]}, {"params": [c], "lr": 0.2}], lr=0.1, **kwargs)
    for p in (a, b, c):
        p.grad = lucid.ones(*p.shape, device=device)
    opt.step()  # every parameter now has state
    for p in (a, b, c):
        p.grad = lucid.ones(*p.shape, device=device) * 0.5
    return opt, (a, b, c)


def _bad_grads(device):
    cases = {
        "shape": lambda p: lucid.ones(4, device=p.device),
        "dtype": lambda p: lucid.ones(*p.shape, dtype=lucid.float64, device=p.device),
    }
    other = "gpu" if device == "cpu" else "cpu"
    if lucid.is_available(other):
        cases["device"] = lambda p: lucid.ones(*p.shape, device=other)
    return cases


@pytest.mark.parametrize("name,kwargs", BAD_GRAD_OPTIMIZERS)
@pytest.mark.parametrize("kind", ["shape", "dtype", "device"])
def test_bad_grad_in_the_second_group_raises_before_anything_updates(name, kwargs, kind, device):
    bad = _bad_grads(device)
    if kind not in bad:
        pytest.skip("needs a second device")
    opt, (a, b, c) = _two_group_optimizer(name, kwargs, device)
    c._grad = bad[kind](c)  # set past the grad setter's checks, as a buggy hook could
    before = snapshot(opt)
    message = {"shape": "has shape", "dtype": "has dtype", "device": "is on (cpu|gpu), but the parameter is on"}[kind]
    with pytest.raises(RuntimeError, match=f"gradient of parameter 2 {message}"):
        opt.step()
    assert_snapshots_equal(snapshot(opt), before)


@pytest.mark.parametrize("name,kwargs", BAD_GRAD_OPTIMIZERS)
def test_param_data_changed_after_backward_raises_before_anything_updates(name, kwargs, device):
    opt, (a, b, c) = _two_group_optimizer(name, kwargs, device)
    c.data = lucid.zeros(5, device=device)  # the grad (shape (3,)) no longer fits
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match="gradient of parameter 2 has shape"):
        opt.step()
    assert_snapshots_equal(snapshot(opt), before)


@pytest.mark.parametrize("name,kwargs", BAD_GRAD_OPTIMIZERS)
def test_param_converted_without_its_grad_raises_before_anything_updates(name, kwargs, device):
    opt, (a, b, c) = _two_group_optimizer(name, kwargs, device)
    c.data = c.detach().double()  # the grad stays float32
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match="gradient of parameter 2 has dtype"):
        opt.step()
    assert_snapshots_equal(snapshot(opt), before)


@needs_gpu
@pytest.mark.parametrize("name,kwargs", BAD_GRAD_OPTIMIZERS)
def test_param_moved_without_its_grad_raises_before_anything_updates(name, kwargs, device):
    opt, (a, b, c) = _two_group_optimizer(name, kwargs, device)
    c.data = c.detach().to("gpu" if device == "cpu" else "cpu")  # the grad stays behind
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match="gradient of parameter 2 is on"):
        opt.step()
    assert_snapshots_equal(snapshot(opt), before)


@pytest.mark.parametrize("name,kwargs", BAD_GRAD_OPTIMIZERS)
def test_param_resized_with_a_fitting_grad_raises_before_anything_updates(name, kwargs, device):
    # the grad fits the new data, the old state does not: caught before the first group updates
    opt, (a, b, c) = _two_group_optimizer(name, kwargs, device)
    c.data = lucid.zeros(5, device=device)
    c.grad = lucid.ones(5, device=device)
    before = snapshot(opt)
    with pytest.raises(RuntimeError, match="state of parameter 2 .* does not fit the parameter's shape"):
        opt.step()
    assert_snapshots_equal(snapshot(opt), before)
    del opt.state[c]  # a fresh state for the new shape, and training goes on
    opt.step()
    assert opt.state[c] is opt.state[2]
    for value in opt.state[c].values():
        if isinstance(value, lucid.Tensor):
            assert value.shape == (5,)


@pytest.mark.parametrize("name,kwargs", BAD_GRAD_OPTIMIZERS)
def test_state_is_checked_against_a_fresh_one_only_when_the_shape_changes(name, kwargs, monkeypatch):
    opt, (a, b, c) = _two_group_optimizer(name, kwargs, "cpu")
    calls = []
    real = opt.state_shapes
    monkeypatch.setattr(opt, "state_shapes", lambda p, g: (calls.append(p), real(p, g))[1])
    for _ in range(4):
        opt.step()
    assert len(calls) == 3  # once per parameter, at the first step after its state was made
    calls.clear()
    for _ in range(3):
        opt.step()
    assert calls == []


def test_non_tensor_grad_raises_type_error_before_anything_updates():
    opt, (a, b, c) = _two_group_optimizer("Adam", {}, "cpu")
    c._grad = np.ones(3, np.float32)
    before = snapshot(opt)
    with pytest.raises(TypeError, match="gradient of parameter 2 must be a Tensor"):
        opt.step()
    assert_snapshots_equal(snapshot(opt), before)


# ----------------------------------------------------------------------------------------
# 6. Hooks
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "SparseAdam"])
def test_step_all_hooks(name):
    """torch's test_step_all_hooks, ported: global pre, local pre, local post, global post."""
    data = []
    params = [param([1.0, 1.0])]
    opt1 = getattr(optim, name)(params, lr=0.01)
    opt2 = optim.SGD(params, lr=0.01)
    global_pre = optim.register_optimizer_step_pre_hook(lambda o, a, k: data.append(0))
    global_post = optim.register_optimizer_step_post_hook(lambda o, a, k: data.append(5))
    try:
        handles = [opt.register_step_pre_hook(lambda o, a, k: data.append(1)) for opt in (opt1, opt2)]
        handles += [opt.register_step_post_hook(lambda o, a, k: data.append(2)) for opt in (opt1, opt2)]
        opt1.step()
        assert data == [0, 1, 2, 5]
        opt2.step()
        assert data == [0, 1, 2, 5, 0, 1, 2, 5]
        opt1.step()
        assert data == [0, 1, 2, 5] * 3
    finally:
        global_pre.remove()
        global_post.remove()
    for handle in handles:
        handle.remove()
    opt1.step()
    opt2.step()
    assert data == [0, 1, 2, 5] * 3


def test_step_hooks_run_around_the_update():
    p = param([1.0])
    p.grad = lucid.tensor([1.0])
    opt = optim.SGD([p], lr=0.5)
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", p.item())))
    opt.register_step_post_hook(lambda o, a, k: seen.append(("post", p.item())))
    opt.step()
    assert seen == [("pre", 1.0), ("post", 0.5)]


def test_step_hooks_fire_once_when_a_subclass_step_calls_super():
    p = param([1.0])
    p.grad = lucid.tensor([1.0])
    opt = optim.SparseAdam([p], lr=0.1)  # SparseAdam.step calls Optimizer.step
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    handle = optim.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global"))
    try:
        opt.step()
    finally:
        handle.remove()
    assert calls == ["global", "pre", "post"]


@pytest.mark.parametrize("how", ["none", "positional", "keyword"])
def test_step_hooks_receive_args_and_kwargs_as_torch(how):
    torch = torch_or_skip()

    def record(lib, P):
        opt = lib.optim.SGD([P()], lr=0.1)
        seen = []
        opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", len(a), a[0] is o, sorted(k))))
        opt.register_step_post_hook(lambda o, a, k: seen.append(("post", len(a), a[0] is o, sorted(k))))
        closure = lambda: 1.0  # noqa: E731
        result = {"none": lambda: opt.step(), "positional": lambda: opt.step(closure),
                  "keyword": lambda: opt.step(closure=closure)}[how]()
        return seen, result

    assert record(lucid, lambda: param([1.0])) == record(torch, lambda: torch.nn.Parameter(torch.ones(1)))


@pytest.mark.parametrize("how", ["positional", "keyword"])
def test_pre_hook_may_replace_the_closure(how):
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def replacement():
        calls.append("replacement")
        return "new loss"

    def swap(o, args, kwargs):
        if "closure" in kwargs:
            return args, {**kwargs, "closure": replacement}
        return (args[0], replacement), kwargs

    opt.register_step_pre_hook(swap)
    original = lambda: calls.append("original")  # noqa: E731
    loss = opt.step(original) if how == "positional" else opt.step(closure=original)
    assert loss == "new loss" and calls == ["replacement"]


def test_post_hook_sees_the_replaced_args():
    opt = optim.SGD([param([1.0])], lr=0.1)
    seen = []
    new_closure = lambda: 2.0  # noqa: E731
    opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": new_closure}))
    opt.register_step_post_hook(lambda o, a, k: seen.append(k.get("closure")))
    assert opt.step() == 2.0
    assert seen == [new_closure]


@pytest.mark.parametrize("bad", ["oops", (1, 2, 3), [(), {}], 5])
def test_pre_hook_bad_return_raises_runtime_error_before_stepping(bad):
    p = param([1.0])
    p.grad = lucid.tensor([1.0])
    opt = optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: bad)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\)"):
        opt.step()
    assert p.item() == 1.0


def test_global_hooks_apply_to_every_optimizer_until_removed():
    seen = []
    handle = optim.register_optimizer_step_post_hook(lambda o, a, k: seen.append(type(o).__name__))
    try:
        optim.SGD([param([1.0])], lr=0.1).step()
        optim.Adam([param([1.0])]).step()
    finally:
        handle.remove()
    optim.AdamW([param([1.0])]).step()
    assert seen == ["SGD", "Adam"]


def test_handle_works_as_a_context_manager():
    opt = optim.SGD([param([1.0])], lr=0.1)
    seen = []
    with opt.register_step_pre_hook(lambda o, a, k: seen.append(1)):
        opt.step()
    opt.step()
    assert seen == [1]


def test_state_dict_hooks_pre_post_replace_and_prepend():
    opt = optim.SGD([param([1.0])], lr=0.1)
    order = []
    opt.register_state_dict_pre_hook(lambda o: order.append("pre-a"))
    opt.register_state_dict_pre_hook(lambda o: order.append("pre-b"), prepend=True)

    def post_mutate(o, sd):
        order.append("post-mutate")
        sd["mutated"] = True

    def post_replace(o, sd):
        order.append("post-replace")
        return {"replaced": sd["mutated"]}

    opt.register_state_dict_post_hook(post_replace)
    opt.register_state_dict_post_hook(post_mutate, prepend=True)
    assert opt.state_dict() == {"replaced": True}
    assert order == ["pre-b", "pre-a", "post-mutate", "post-replace"]


def test_load_state_dict_hooks_pre_may_replace_post_runs_after_loading():
    p = param([1.0])
    opt = optim.SGD([p], lr=0.1)
    saved = opt.state_dict()
    saved["param_groups"][0]["lr"] = 0.3
    order = []

    def pre_replace(o, sd):
        order.append("pre-replace")
        new = copy.deepcopy(sd)
        new["param_groups"][0]["lr"] = 0.7
        return new

    opt.register_load_state_dict_pre_hook(pre_replace)
    opt.register_load_state_dict_pre_hook(lambda o, sd: order.append(("pre-first", sd["param_groups"][0]["lr"])),
                                          prepend=True)
    opt.register_load_state_dict_post_hook(lambda o: order.append(("post", o.param_groups[0]["lr"])))
    opt.register_load_state_dict_post_hook(lambda o: order.append("post-first"), prepend=True)
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["lr"] == 0.7
    assert saved["param_groups"][0]["lr"] == 0.3  # the caller's dict is not the one replaced
    assert order == [("pre-first", 0.3), "pre-replace", "post-first", ("post", 0.7)]


def test_removed_state_dict_hooks_do_not_run():
    opt = optim.SGD([param([1.0])], lr=0.1)
    seen = []
    handles = [opt.register_state_dict_pre_hook(lambda o: seen.append(1)),
               opt.register_state_dict_post_hook(lambda o, sd: seen.append(2)),
               opt.register_load_state_dict_pre_hook(lambda o, sd: seen.append(3)),
               opt.register_load_state_dict_post_hook(lambda o: seen.append(4))]
    opt.load_state_dict(opt.state_dict())
    assert seen == [1, 2, 3, 4]
    for handle in handles:
        handle.remove()
    opt.load_state_dict(opt.state_dict())
    assert seen == [1, 2, 3, 4]


# ----------------------------------------------------------------------------------------
# repr, deepcopy, pickle
# ----------------------------------------------------------------------------------------

def test_repr_equals_torch_for_sgd_groups():
    torch = torch_or_skip()

    def build(lib, P):
        return lib.optim.SGD([{"params": [P()], "lr": 0.5, "extra": "x"}, {"params": [P()]}], lr=0.1,
                             momentum=0.9, nesterov=True)

    assert repr(build(lucid, lambda: param([1.0]))) == repr(build(torch, lambda: torch.nn.Parameter(torch.ones(1))))


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SparseAdam"])
def test_repr_equals_torch_for_adam_family(name):
    torch = torch_or_skip()
    mine = getattr(optim, name)([param([1.0])], lr=0.01)
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], lr=0.01)
    assert repr(mine) == repr(theirs)


def test_repr_with_a_0d_tensor_lr_equals_torch():
    # torch formats a 0-d tensor as its value inside an f-string, so the repr shows "lr: 0.5"
    torch = torch_or_skip()
    mine = repr(optim.SGD([param([1.0])], lr=lucid.tensor(0.5)))
    theirs = repr(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=torch.tensor(0.5)))
    assert mine == theirs and "    lr: 0.5\n" in mine


def test_repr_with_a_1d_tensor_lr_equals_torch():
    # a tensor prints as torch's does (lucid/_tensor_str.py), so the whole repr is torch's
    torch = torch_or_skip()
    mine = repr(optim.SGD([param([1.0])], lr=lucid.tensor([0.5])))
    theirs = repr(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=torch.tensor([0.5])))
    assert mine == theirs and "    lr: tensor([0.5000])\n" in mine


def test_0d_tensor_formats_as_its_value_like_torch():
    torch = torch_or_skip()
    for spec in ("", ".3f", "e"):
        assert format(lucid.tensor(0.25), spec) == format(torch.tensor(0.25), spec)
    assert f"{lucid.tensor(-1.0)}" == f"{torch.tensor(-1.0)}" == "-1.0"
    assert f"{lucid.tensor([1.0])}" == repr(lucid.tensor([1.0]))  # not 0-d: the repr


def _primed(name, device="cpu", **kwargs):
    a, b = param([1.0, -2.0], device), param([[0.5], [3.0]], device)
    opt = getattr(optim, name)([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, **kwargs)
    for step in range(3):
        opt.zero_grad()
        ((a * a).sum() + (b * b * b).sum() * (step + 1)).backward()
        opt.step()
    opt.zero_grad()
    ((a * a).sum() + (b * b * b).sum()).backward()  # leave grads for the copy
    return opt


def _public(obj):
    return {k for k in vars(obj) if not k.startswith("_")}


@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}), ("AdamW", {}),
                                         ("SparseAdam", {})])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_keep_public_attributes_and_state_remapped_to_new_params(name, kwargs, how, device):
    if how == "pickle" and device == "gpu":
        pytest.importorskip("mlx.core")
    opt = _primed(name, device, **kwargs)
    twin = copy.deepcopy(opt) if how == "deepcopy" else pickle.loads(pickle.dumps(opt))
    assert _public(twin) == _public(opt) == {"defaults", "param_groups", "state"}
    assert twin.defaults == opt.defaults
    old = [p for g in opt.param_groups for p in g["params"]]
    new = [p for g in twin.param_groups for p in g["params"]]
    assert all(n is not o for n, o in zip(new, old))
    for o, n in zip(old, new):
        assert type(n) is type(o) and n.device == o.device and n.requires_grad
        np.testing.assert_array_equal(np.asarray(n.detach()), np.asarray(o.detach()))
    for i in opt.state:
        assert twin.state[i] is twin.state[new[i]]
        for key, value in opt.state[i].items():
            copied = twin.state[i][key]
            if isinstance(value, lucid.Tensor):
                assert copied is not value and copied.device == value.device
                np.testing.assert_array_equal(np.asarray(copied.detach()), np.asarray(value.detach()))
            else:
                assert copied == value
    strip = lambda o: [{k: v for k, v in g.items() if k != "params"} for g in o.param_groups]  # noqa: E731
    assert strip(twin) == strip(opt)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                         ("SparseAdam", {})])
def test_deepcopy_continues_the_same_trajectory_independently(name, kwargs, device):
    opt = _primed(name, device, **kwargs)
    twin = copy.deepcopy(opt)
    old = [p for g in opt.param_groups for p in g["params"]]
    new = [p for g in twin.param_groups for p in g["params"]]
    assert all(p.grad is None for p in new)  # Parameters are deep-copied without grads, as torch
    for o, n in zip(old, new):
        n.grad = o.grad.detach().clone()
    before = snapshot(opt)
    twin.step()
    assert_snapshots_equal(snapshot(opt), before)  # the original is untouched
    opt.step()
    assert_snapshots_equal(snapshot(twin), snapshot(opt))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_drop_hooks(how):
    opt = _primed("Adam")
    seen = []
    opt.register_step_pre_hook(lambda o, a, k: seen.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: seen.append("post"))
    opt.register_state_dict_pre_hook(lambda o: seen.append("sd"))
    opt.register_load_state_dict_post_hook(lambda o: seen.append("load"))
    twin = copy.deepcopy(opt) if how == "deepcopy" else pickle.loads(pickle.dumps(opt))
    twin.step()
    twin.load_state_dict(twin.state_dict())
    assert seen == []
    seen_twin = []
    twin.register_step_post_hook(lambda o, a, k: seen_twin.append(1))
    twin.step()
    opt.step()
    assert seen_twin == [1] and seen == ["pre", "post"]


def test_deepcopy_of_a_parameter_copies_storage_not_grad_like_torch(device):
    torch = torch_or_skip()
    p = param([1.0, 2.0], device)
    (p * 3).sum().backward()
    q = copy.deepcopy(p)
    tp = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    (tp * 3).sum().backward()
    assert copy.deepcopy(tp).grad is None and q.grad is None
    assert type(q) is nn.Parameter and q is not p and q.requires_grad and q.is_leaf
    assert q.device == p.device and q.dtype is p.dtype and q._backend is p._backend
    np.testing.assert_array_equal(np.asarray(q.detach()), np.asarray(p.detach()))
    with lucid.no_grad():
        q.add_(1.0)
    np.testing.assert_array_equal(np.asarray(p.detach()), np.array([1.0, 2.0], np.float32))


def test_deepcopy_of_a_leaf_tensor_copies_storage_and_grad_like_torch(device):
    torch = torch_or_skip()
    t = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)
    (t * 3).sum().backward()
    u = copy.deepcopy(t)
    tt = torch.tensor([1.0, 2.0], requires_grad=True)
    (tt * 3).sum().backward()
    assert copy.deepcopy(tt).grad is not None and u.grad is not None
    assert type(u) is lucid.Tensor and u.requires_grad and u.is_leaf and u._backend is t._backend
    assert u.grad is not t.grad
    np.testing.assert_array_equal(np.asarray(u.grad), np.asarray(t.grad))
    with lucid.no_grad():
        u.add_(1.0)
        u.grad.add_(1.0)
    np.testing.assert_array_equal(np.asarray(t.detach()), np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(t.grad), np.array([3.0, 3.0], np.float32))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copied_tensors_live_on_the_devices_one_backend(how, device):
    # one backend object per device: a step evaluates each device's arrays in one call
    opt = _primed("Adam", device)
    twin = copy.deepcopy(opt) if how == "deepcopy" else pickle.loads(pickle.dumps(opt))
    backend = lucid._backend.get(device)
    for p in twin.param_groups[0]["params"] + twin.param_groups[1]["params"]:
        assert p._backend is backend
    for i in twin.state:
        assert twin.state[i]["exp_avg"]._backend is backend


def test_deepcopy_of_a_frozen_tensor_keeps_requires_grad_false():
    t = lucid.tensor([1.0, 2.0])
    u = copy.deepcopy(t)
    assert type(u) is lucid.Tensor and not u.requires_grad and u.grad is None
    np.testing.assert_array_equal(np.asarray(u), np.asarray(t))


def test_deepcopy_keeps_shared_tensors_shared():
    p = param([1.0])
    a, b = copy.deepcopy([p, p])
    assert a is b and a is not p


def test_deepcopy_of_a_non_leaf_raises_like_torch():
    torch = torch_or_skip()
    x = param([1.0, 2.0])
    tx = torch.nn.Parameter(torch.ones(2))
    assert_same_error(lambda: copy.deepcopy(x * 2), lambda: copy.deepcopy(tx * 2))


# ----------------------------------------------------------------------------------------
# 7. zero_grad
# ----------------------------------------------------------------------------------------

def test_zero_grad_sets_grads_to_none(device):
    a, b = param([1.0, 2.0], device), param([3.0], device)
    opt = optim.SGD([a, b], lr=0.1)
    ((a * a).sum() + b.sum()).backward()
    assert opt.zero_grad() is None
    assert a.grad is None and b.grad is None


def test_zero_grad_set_to_none_false_zeroes_the_same_grad_object(device):
    a, b = param([1.0, 2.0], device), param([3.0], device)
    opt = optim.SGD([a, b], lr=0.1)
    (a * a).sum().backward()
    grad = a.grad
    assert opt.zero_grad(set_to_none=False) is None
    assert a.grad is grad and not grad.requires_grad
    np.testing.assert_array_equal(np.asarray(a.grad), np.zeros(2, np.float32))
    assert b.grad is None  # a None grad stays None


def test_zero_grad_set_to_none_false_keeps_the_param_stepping():
    p = param([1.0, 2.0])
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    (p * p).sum().backward()
    opt.zero_grad(set_to_none=False)
    opt.step()  # a zero grad steps (decay applies); a None grad would not
    np.testing.assert_array_equal(np.asarray(p.detach()), np.array([1.0, 2.0], np.float32) * np.float32(0.95))
    assert opt.state[0]["step"] == 1


# ----------------------------------------------------------------------------------------
# 9. MLX: nothing left lazy after step
# ----------------------------------------------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("name,kwargs", [("SGD", {"momentum": 0.9}), ("SGD", {}), ("Adam", {"amsgrad": True}),
                                         ("AdamW", {}), ("SparseAdam", {})])
def test_mlx_step_evaluates_every_updated_array_once(name, kwargs, monkeypatch):
    backend = lucid._backend.get("gpu")
    calls = []
    real_eval = backend.eval
    monkeypatch.setattr(backend, "eval", lambda arrays: (calls.append(list(arrays)), real_eval(arrays))[1])
    a, b = param([1.0, -2.0, 3.0], "gpu"), param([[0.5, 1.0], [0.0, 0.0]], "gpu")
    frozen = param([7.0], "gpu")
    opt = getattr(optim, name)([{"params": [a, b]}, {"params": [frozen]}], lr=0.1, **kwargs)
    for step in range(1, 4):
        opt.zero_grad()
        ((a * a).sum() + (b * b).sum() * step).backward()
        calls.clear()
        opt.step()
        assert len(calls) == 1
        evaluated = {id(x) for x in calls[0]}
        for p in (a, b):
            assert id(p._data) in evaluated
            for value in (opt.state.for_param(p) or {}).values():
                if isinstance(value, lucid.Tensor):
                    assert id(value._data) in evaluated
        assert id(frozen._data) not in evaluated  # no grad: nothing to evaluate


@needs_gpu
def test_mlx_step_over_no_gradients_evaluates_nothing(monkeypatch):
    backend = lucid._backend.get("gpu")
    calls = []
    monkeypatch.setattr(backend, "eval", lambda arrays: calls.append(list(arrays)))
    optim.Adam([param([1.0], "gpu")]).step()
    assert all(not c for c in calls)


def test_refused_param_group_leaves_nothing_behind():
    """A group the optimizer refuses (Muon's 1-D parameter) is not kept, so the next step works."""
    matrix, vector = nn.Parameter(lucid.ones(2, 2)), nn.Parameter(lucid.ones(3))
    optimizer = optim.Muon([matrix], lr=0.1)
    with pytest.raises(ValueError, match="2D parameters"):
        optimizer.add_param_group({"params": [vector]})
    assert len(optimizer.param_groups) == 1 and len(optimizer.param_groups.flat()) == 1
    matrix.grad, vector.grad = lucid.ones(2, 2), lucid.ones(3)
    optimizer.step()
    assert 0 in optimizer.state and vector not in optimizer.state


def test_missing_state_says_why():
    p = nn.Parameter(lucid.zeros(2))
    optimizer = optim.Adam([p])
    with pytest.raises(KeyError, match="parameter 0 has no state yet"):
        optimizer.state[0]
    with pytest.raises(KeyError, match="this parameter has no state yet"):
        optimizer.state[p]
