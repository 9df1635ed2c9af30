"""Optimizer state: indexing, state following its parameter through conversions, state_dict.

torch.optim 2.13 is the reference for layouts and numbers (compared live); lucid's
deliberate differences (copies, validation before loading, int steps) are pinned here too.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from helpers import host, param, torch_or_skip
from optim_registry import BY_NAME, REGISTRY
from tolerances import close

GPU = lucid.is_available("gpu")
needs_gpu = pytest.mark.skipif(not GPU, reason="needs the gpu (MLX) device")

# a few optimizers whose state the detailed tests below take apart, with options that use it all
STATEFUL = [(name, BY_NAME[name].state_kwargs) for name in ("SGD", "Adam", "AdamW", "SparseAdam")]
STATEFUL_IDS = [name for name, _ in STATEFUL]
# every optimizer of lucid.optim (tests/optim_registry.py), with options that make it keep (and use) all its state
ALL_OPTIMIZERS = [(info.name, info.state_kwargs) for info in REGISTRY]
ALL_IDS = [name for name, _ in ALL_OPTIMIZERS]
# state torch keeps in float32 whatever the parameter's dtype (ASGD's, NAdam's)
FLOAT32_STATE = {"eta", "mu", "mu_product"}


def grad_for(step: int, index: int, values: np.ndarray) -> np.ndarray:
    """A deterministic gradient in float64: depends on the step, the parameter and its values.

    Rows ``r`` (along dim 0) with ``(r + step + index) % 3 == 0`` are zero, so SparseAdam
    sees untouched rows.
    """
    g = np.cos(3.0 * values.astype(np.float64) + 0.7 * step + index) + 0.1 * (index + 1)
    if g.ndim:
        rows = np.arange(g.shape[0])
        g[(rows + step + index) % 3 == 0] = 0.0
    return g


def set_grads(params, step):
    for i, p in enumerate(params):
        g = grad_for(step, i, host(p))
        p.grad = lucid.tensor(g, dtype=p.dtype, device=p.device)


# ----------------------------------------------------------------------------------------
# 2. state indexing
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_state_by_index_and_by_param_is_the_same_dict(name, kwargs, device):
    a, b = param([1.0, 2.0], device), param([[3.0], [4.0]], device)
    opt = getattr(optim, name)([{"params": [a]}, {"params": [b]}], **kwargs)
    set_grads([a, b], 1)
    opt.step()
    assert opt.state[0] is opt.state[a] and opt.state[1] is opt.state[b]
    assert opt.state[0] is not opt.state[1]
    opt.state[b]["extra"] = 1
    assert opt.state[1]["extra"] == 1


def test_a_parameter_that_never_stepped_has_no_state(device):
    a, b = param([1.0], device), param([2.0], device)
    opt = optim.Adam([a, b])
    assert len(opt.state) == 0 and list(opt.state) == []
    a.grad = lucid.tensor([1.0], device=device)
    opt.step()
    assert 0 in opt.state and a in opt.state
    assert 1 not in opt.state and b not in opt.state
    with pytest.raises(KeyError):
        opt.state[1]
    with pytest.raises(KeyError):
        opt.state[b]
    assert 1 not in opt.state  # reading did not create an entry (torch's defaultdict would)
    assert list(opt.state) == [0] and len(opt.state) == 1


def test_state_keys_out_of_range_or_foreign_are_missing():
    a = param([1.0])
    a.grad = lucid.tensor([1.0])
    opt = optim.Adam([a])
    opt.step()
    for key in (1, -1, param([1.0]), "0", 0.0):
        assert key not in opt.state
        with pytest.raises(KeyError):
            opt.state[key]


def test_state_of_a_tensor_the_optimizer_does_not_hold_is_a_key_error():
    a, stranger = param([1.0]), param([2.0])
    opt = optim.Adam([a])
    with pytest.raises(KeyError):
        opt.state[stranger] = {"step": 0}
    assert stranger not in opt.state and len(opt.state) == len(list(opt.state)) == 0
    opt.add_param_group({"params": [stranger]})
    opt.state[stranger] = {"note": 1}  # once it is optimised, it has a place
    assert opt.state[1] == {"note": 1} and len(opt.state) == len(list(opt.state)) == 1


def test_state_iterates_flat_indices_in_group_order():
    ps = [param([float(i)]) for i in range(4)]
    opt = optim.Adam([{"params": ps[:2]}, {"params": ps[2:]}])
    for i in (3, 0, 2):
        ps[i].grad = lucid.tensor([1.0])
    opt.step()
    assert list(opt.state) == [0, 2, 3]
    assert {i: sorted(s) for i, s in opt.state.items()} == {i: ["exp_avg", "exp_avg_sq", "step"] for i in (0, 2, 3)}


@pytest.mark.parametrize("name,kwargs", [("Adam", {}), ("Adam", {"amsgrad": True}), ("AdamW", {}),
                                         ("AdamW", {"amsgrad": True}), ("SGD", {"momentum": 0.9}),
                                         ("SGD", {}), ("SparseAdam", {})])
def test_state_keys_match_torch(name, kwargs):
    torch = torch_or_skip()
    mine = getattr(optim, name)([param([[1.0, 2.0]])], lr=0.1, **kwargs)
    tp = torch.nn.Parameter(torch.tensor([[1.0, 2.0]]))
    theirs = getattr(torch.optim, name)([tp], lr=0.1, **kwargs)
    mine.param_groups[0]["params"][0].grad = lucid.tensor([[0.5, 1.0]])
    tp.grad = torch.tensor([[0.5, 1.0]])
    if name == "SparseAdam":
        tp.grad = tp.grad.to_sparse(1)
    for _ in range(2):
        mine.step()
        theirs.step()
    assert len(mine.state) == len(theirs.state)
    if len(theirs.state):
        assert set(mine.state[0]) == set(theirs.state[tp])


def test_sgd_without_momentum_keeps_no_state_entry(device):
    p = param([1.0, 2.0], device)
    opt = optim.SGD([p], lr=0.1)
    for _ in range(3):
        p.grad = lucid.tensor([1.0, 1.0], device=device)
        opt.step()
    assert len(opt.state) == 0 and p not in opt.state
    assert opt.state_dict()["state"] == {}


# ----------------------------------------------------------------------------------------
# 4. State follows its parameter
# ----------------------------------------------------------------------------------------

class Net(nn.Module):
    """An embedding table and a linear layer: params of 2-D (rows) and 1-D shape."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3)
        self.fc = nn.Linear(3, 2)


def make_net(device, dtype=lucid.float32):
    net = Net()
    rng = np.random.default_rng(7)
    for p in net.parameters():
        p.data = lucid.tensor(rng.uniform(-1, 1, p.shape), dtype=dtype, device=device)
    return net


def _host_value(value):
    if isinstance(value, lucid.Tensor):
        return host(value)
    if isinstance(value, list):
        return [_host_value(v) for v in value]
    return value


def record(opt, params):
    """Host copies of every parameter and every state value (in LBFGS's lists too)."""
    return ([host(p) for p in params],
            [{k: _host_value(v) for k, v in (opt.state.for_param(p) or {}).items()} for p in params])


def _assert_values_equal(x, y, key):
    if isinstance(x, list):
        assert isinstance(y, list) and len(x) == len(y), key
        for a, b in zip(x, y):
            _assert_values_equal(a, b, key)
    elif isinstance(x, np.ndarray):
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True), key
    else:
        assert type(x) is type(y) and (x == y or (x != x and y != y)), key


def assert_records_equal(a, b):
    (pa, sa), (pb, sb) = a, b
    for x, y in zip(pa, pb):
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
    for x, y in zip(sa, sb):
        assert x.keys() == y.keys()
        for k in x:
            _assert_values_equal(x[k], y[k], k)


def _convert_by_hand(value, key, p):
    if isinstance(value, list):
        return [_convert_by_hand(v, key, p) for v in value]
    if isinstance(value, lucid.Tensor):
        return value.detach().to(p.device, lucid.float32 if key in FLOAT32_STATE else p.dtype)
    return value


def convert_state_by_hand(opt, params):
    for p in params:
        state = opt.state.for_param(p) or {}
        for key, value in list(state.items()):
            state[key] = _convert_by_hand(value, key, p)


CONVERSIONS = {
    "double": (lambda net: net.double(), "cpu", lucid.float32),
    "half": (lambda net: net.half(), "cpu", lucid.float32),
    "half_gpu": (lambda net: net.half(), "gpu", lucid.float32),
    "float": (lambda net: net.float(), "cpu", lucid.float64),
    "to_gpu": (lambda net: net.to("gpu"), "cpu", lucid.float32),
    "to_cpu": (lambda net: net.to("cpu"), "gpu", lucid.float32),
    "to_gpu_double": (lambda net: net.to("gpu", lucid.float64), "cpu", lucid.float32),
}


def _closure(opt, params, step):
    """LBFGS's closure: a loss whose gradient depends on the step and the parameters."""
    def closure():
        opt.zero_grad()
        loss = None
        for i, p in enumerate(params):
            term = ((p * 3.0 + (0.7 * step + i)).tanh() * 0.25 + p * p * (0.1 * (i + 1))).sum()
            loss = term if loss is None else loss + term
        loss.backward()
        return loss
    return closure


def _step(opt, name, params, step):
    if name == "LBFGS":
        opt.step(_closure(opt, params, step))
    else:
        set_grads(params, step)
        opt.step()


def run_with_conversion(name, kwargs, conversion, by_hand, before=3, after=4):
    convert, device, dtype = CONVERSIONS[conversion]
    net = make_net(device, dtype)
    params = list(net.parameters())
    if name == "Muon":  # Muon takes the 2-D parameters only
        params = [p for p in params if p.ndim == 2]
    opt = getattr(optim, name)(params, **kwargs)
    trajectory = []
    for step in range(1, before + 1):
        _step(opt, name, params, step)
    opt.zero_grad()
    convert(net)
    assert all(p is q for p, q in zip(params, [q for q in net.parameters() if q.ndim == 2 or name != "Muon"]))
    if by_hand:
        convert_state_by_hand(opt, params)
    for step in range(before + 1, before + after + 1):
        _step(opt, name, params, step)
        trajectory.append(record(opt, params))
    return opt, params, trajectory


def _tensors(value):
    if isinstance(value, list):
        return [t for v in value for t in _tensors(v)]
    return [value] if isinstance(value, lucid.Tensor) else []


def _needs_devices(conversion):
    if CONVERSIONS[conversion][1] == "gpu" or "gpu" in conversion:
        if not GPU:
            pytest.skip("needs the gpu (MLX) device")


@pytest.mark.parametrize("name,kwargs", ALL_OPTIMIZERS, ids=ALL_IDS)
@pytest.mark.parametrize("conversion", list(CONVERSIONS))
def test_state_follows_its_parameter_as_if_converted_by_hand(name, kwargs, conversion):
    """For every optimizer (LBFGS with its closure, its state on the first parameter)."""
    _needs_devices(conversion)
    opt, params, auto = run_with_conversion(name, kwargs, conversion, by_hand=False)
    _, _, hand = run_with_conversion(name, kwargs, conversion, by_hand=True)
    for a, b in zip(auto, hand):
        assert_records_equal(a, b)
    stateful = params[:1] if name == "LBFGS" else params
    for p in stateful:
        assert opt.state[p], name
        for key, value in opt.state[p].items():
            for tensor in _tensors(value):
                expected = lucid.float32 if key in FLOAT32_STATE or not tensor.dtype.is_floating_point else p.dtype
                if tensor.dtype.is_floating_point or key in FLOAT32_STATE:
                    assert (tensor.device, tensor.dtype) == (p.device, expected), key
                else:
                    assert tensor.device == p.device, key
            if key == "step":
                assert type(value) is int and value == 7


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
@pytest.mark.parametrize("conversion", ["half", "half_gpu"])
def test_half_continues_as_a_float16_run_from_the_converted_state(name, kwargs, conversion):
    """Ten float16 steps after ``.half()`` equal, bit for bit, ten steps from the state
    converted to float16 by hand, and stay finite with float16 state."""
    _needs_devices(conversion)
    opt, params, trajectory = run_with_conversion(name, kwargs, conversion, by_hand=False, after=10)
    _, _, by_hand = run_with_conversion(name, kwargs, conversion, by_hand=True, after=10)
    for a, b in zip(trajectory, by_hand):
        assert_records_equal(a, b)
    assert not np.array_equal(trajectory[0][0][0], trajectory[-1][0][0])  # the steps moved it
    for p in params:
        assert p.dtype is lucid.float16 and np.isfinite(host(p)).all()
        for key, value in opt.state[p].items():
            if isinstance(value, lucid.Tensor):
                assert value.dtype is lucid.float16 and np.isfinite(host(value)).all(), key


@needs_gpu
@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_half_steps_are_the_same_on_both_devices(name, kwargs):
    """float16 arithmetic rounds each operation to float16 on NumPy and on MLX alike."""
    _, _, on_cpu = run_with_conversion(name, kwargs, "half", by_hand=False, after=10)
    _, _, on_gpu = run_with_conversion(name, kwargs, "half_gpu", by_hand=False, after=10)
    for a, b in zip(on_cpu, on_gpu):
        assert_records_equal(a, b)


def test_conversion_without_module_via_param_data():
    # the public route Module.to takes: p.data = p.detach().to(...), and the grad likewise
    runs = []
    for route in ("module", "data"):
        net = make_net("cpu")
        params = list(net.parameters())
        opt = optim.Adam(params, lr=0.05)
        for step in range(1, 4):
            set_grads(params, step)
            opt.step()
        set_grads(params, 4)
        if route == "module":
            net.double()
        else:
            for p in params:
                p.data = p.detach().double()
                p.grad = p.grad.detach().double()
        opt.step()
        runs.append(record(opt, params))
    assert_records_equal(*runs)
    assert runs[0][1][0]["exp_avg"].dtype == np.float64


def _torch_state_dict(lucid_sd, torch):
    """lucid's state_dict with torch tensors (and torch's float32 tensor steps)."""
    state = {}
    for index, entry in lucid_sd["state"].items():
        state[index] = {k: torch.tensor(host(v)) if isinstance(v, lucid.Tensor) else v for k, v in entry.items()}
    return {"state": state, "param_groups": copy.deepcopy(lucid_sd["param_groups"])}


def _torch_grad(torch, g, sparse):
    t = torch.tensor(g)
    return t.to_sparse(1) if sparse else t


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_double_continues_as_torch_after_load_state_dict_into_float64(name, kwargs):
    """lucid: step in float32, model.double(), step. torch: the same float32 point, then a
    float64 optimizer given the float32 state_dict (load_state_dict casts the moments)."""
    torch = torch_or_skip()
    net = make_net("cpu", lucid.float32)
    params = list(net.parameters())
    opt = getattr(optim, name)(params, **kwargs)
    _run(opt, params, range(1, 4))
    # torch starts from lucid's float32 point, bit for bit
    t32 = [torch.nn.Parameter(torch.tensor(host(p))) for p in params]
    topt32 = getattr(torch.optim, name)(t32, **kwargs)
    topt32.load_state_dict(_torch_state_dict(opt.state_dict(), torch))
    t64 = [torch.nn.Parameter(p.detach().double()) for p in t32]
    topt64 = getattr(torch.optim, name)(t64, **kwargs)
    topt64.load_state_dict(topt32.state_dict())
    net.double()
    for step in range(4, 11):
        set_grads(params, step)
        for i, tp in enumerate(t64):
            tp.grad = _torch_grad(torch, grad_for(step, i, tp.detach().numpy()), name == "SparseAdam")
        opt.step()
        topt64.step()
        for p, tp in zip(params, t64):
            assert p.dtype is lucid.float64
            close(host(p), tp.detach().numpy(), "float64")
        for p, tp in zip(params, t64):
            for key, value in topt64.state[tp].items():
                if key == "step":
                    assert opt.state[p]["step"] == int(value)
                else:
                    assert opt.state[p][key].dtype is lucid.float64
                    close(host(opt.state[p][key]), value.numpy(), "float64")


# ----------------------------------------------------------------------------------------
# 5. state_dict
# ----------------------------------------------------------------------------------------

def _pair(name, kwargs, torch, dtype=np.float64):
    """The same two-group optimizer in lucid and torch (param 1 never has a grad)."""
    shapes = [(4, 3), (2,), (3, 2)]
    rng = np.random.default_rng(3)
    values = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    mine = [nn.Parameter(lucid.tensor(v)) for v in values]
    theirs = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    groups = lambda ps: [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.02}]  # noqa: E731
    return (getattr(optim, name)(groups(mine), **kwargs), mine,
            getattr(torch.optim, name)(groups(theirs), **kwargs), theirs)


def _step_both(torch, opt, params, topt, tparams, step, sparse):
    for i, (p, tp) in enumerate(zip(params, tparams)):
        if i == 1:
            continue
        g = grad_for(step, i, host(p))
        p.grad = lucid.tensor(g, dtype=p.dtype)
        tp.grad = _torch_grad(torch, g.astype(host(p).dtype), sparse)
    opt.step()
    topt.step()


@pytest.mark.parametrize("name,kwargs", STATEFUL + [("SGD", {"lr": 0.1})], ids=STATEFUL_IDS + ["SGD-plain"])
def test_state_dict_layout_matches_torch(name, kwargs):
    torch = torch_or_skip()
    opt, params, topt, tparams = _pair(name, kwargs, torch)
    for step in range(1, 4):
        _step_both(torch, opt, params, topt, tparams, step, name == "SparseAdam")
    mine, theirs = opt.state_dict(), topt.state_dict()
    assert list(mine) == list(theirs) == ["state", "param_groups"]
    assert mine["param_groups"] == theirs["param_groups"]
    assert [g["params"] for g in mine["param_groups"]] == [[0, 1], [2]]
    assert list(mine["state"]) == list(theirs["state"])
    for index, entry in theirs["state"].items():
        assert list(mine["state"][index]) == list(entry)
        for key, value in entry.items():
            if key == "step":
                assert type(mine["state"][index]["step"]) is int and mine["state"][index]["step"] == int(value)
            else:
                assert mine["state"][index][key].dtype is lucid.float64
                close(host(mine["state"][index][key]), value.numpy(), "float64")


def _opt_with_lr_tensor():
    return optim.Adam([param([1.0])], lr=lucid.tensor(0.1))


def test_state_dict_groups_are_copies():
    opt = _opt_with_lr_tensor()
    sd = opt.state_dict()
    assert sd["param_groups"][0]["lr"] is not opt.param_groups[0]["lr"]
    sd["param_groups"][0]["betas"] = (0.1, 0.2)
    sd["param_groups"][0]["lr"].fill_(5.0)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    assert opt.param_groups[0]["lr"].item() == np.float32(0.1).item()


def _training(name, kwargs, device="cpu", dtype=lucid.float64):
    rng = np.random.default_rng(11)
    params = [nn.Parameter(lucid.tensor(rng.uniform(-1, 1, s), dtype=dtype, device=device))
              for s in [(5, 3), (4,), (2, 2, 2)]]
    opt = getattr(optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}], **kwargs)
    return opt, params


def _run(opt, params, steps):
    """Step ``opt`` once for each step number in ``steps``, with ``set_grads``'s gradients."""
    for step in steps:
        set_grads(params, step)
        opt.step()


def _clone_params(params):
    return [nn.Parameter(p.detach().clone()) for p in params]


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_round_trip_mid_run_continues_bit_identically(name, kwargs, device):
    opt, params = _training(name, kwargs, device)
    _run(opt, params, range(1, 11))
    saved = opt.state_dict()
    twins = _clone_params(params)
    other_kwargs = {**kwargs, "lr": 0.5}
    twin = getattr(optim, name)([{"params": twins[:2]}, {"params": twins[2:], "lr": 0.9}], **other_kwargs)
    twin.load_state_dict(saved)
    for step in range(11, 21):
        set_grads(params, step)
        set_grads(twins, step)
        opt.step()
        twin.step()
        assert_records_equal(record(opt, params), record(twin, twins))
    a, b = opt.state_dict(), twin.state_dict()
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys()


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_stepping_the_loaded_optimizer_never_changes_the_original(name, kwargs):
    opt, params = _training(name, kwargs)
    _run(opt, params, range(1, 4))
    before = record(opt, params)
    twins = _clone_params(params)
    twin = getattr(optim, name)([{"params": twins[:2]}, {"params": twins[2:]}], **kwargs)
    twin.load_state_dict(opt.state_dict())
    _run(twin, twins, range(4, 7))
    assert_records_equal(record(opt, params), before)


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_exported_state_dict_does_not_change_after_more_steps(name, kwargs):
    opt, params = _training(name, kwargs)
    _run(opt, params, range(1, 4))
    saved = opt.state_dict()
    frozen = copy.deepcopy(saved)
    _run(opt, params, range(4, 7))
    assert_state_dicts_equal(saved, frozen)


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_modifying_a_saved_dict_never_changes_its_optimizer(name, kwargs):
    opt, params = _training(name, kwargs)
    _run(opt, params, range(1, 4))
    before = record(opt, params)
    saved = opt.state_dict()
    with lucid.no_grad():
        for entry in saved["state"].values():
            for key, value in entry.items():
                if isinstance(value, lucid.Tensor):
                    value.add_(100.0)
            entry["step"] = 999
    saved["param_groups"][0]["lr"] = 123.0
    assert_records_equal(record(opt, params), before)
    assert opt.param_groups[0]["lr"] == kwargs["lr"]


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_modifying_a_loaded_dict_never_changes_the_optimizer_it_went_into(name, kwargs):
    opt, params = _training(name, kwargs)
    _run(opt, params, range(1, 4))
    saved = opt.state_dict()
    twins = _clone_params(params)
    twin = getattr(optim, name)([{"params": twins[:2]}, {"params": twins[2:]}], **kwargs)
    twin.load_state_dict(saved)
    before = record(twin, twins)
    with lucid.no_grad():
        for entry in saved["state"].values():
            for value in entry.values():
                if isinstance(value, lucid.Tensor):
                    value.mul_(-3.0)
    saved["param_groups"][1]["lr"] = 7.0
    assert_records_equal(record(twin, twins), before)
    assert twin.param_groups[1]["lr"] == 0.03


def test_loaded_hyperparameters_override_the_constructors(device):
    opt, params = _training("Adam", {"lr": 0.01, "betas": (0.8, 0.9)}, device)
    twins = _clone_params(params)
    twin = optim.Adam([{"params": twins[:2], "lr": 0.5}, {"params": twins[2:]}], lr=0.7, betas=(0.5, 0.6))
    twin.load_state_dict(opt.state_dict())
    assert [g["lr"] for g in twin.param_groups] == [0.01, 0.03]
    assert [g["betas"] for g in twin.param_groups] == [(0.8, 0.9), (0.8, 0.9)]
    assert twin.param_groups[0]["params"] == twins[:2] and twin.param_groups[1]["params"] == twins[2:]


def test_loaded_groups_keep_live_param_names_when_the_saved_have_none_like_torch():
    torch = torch_or_skip()
    mine = optim.SGD([("w", param([1.0])), ("b", param([2.0]))], lr=0.1)
    mine.load_state_dict(optim.SGD([param([1.0]), param([2.0])], lr=0.2).state_dict())
    tp = lambda: torch.nn.Parameter(torch.ones(1))  # noqa: E731
    theirs = torch.optim.SGD([("w", tp()), ("b", tp())], lr=0.1)
    theirs.load_state_dict(torch.optim.SGD([tp(), tp()], lr=0.2).state_dict())
    strip = lambda o: [{k: v for k, v in g.items() if k != "params"} for g in o.param_groups]  # noqa: E731
    assert strip(mine) == strip(theirs)
    assert mine.param_groups[0]["param_names"] == ["w", "b"] and mine.param_groups[0]["lr"] == 0.2


@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_loading_float32_state_into_float64_params_casts_moments_keeps_int_step(name, kwargs):
    opt, params = _training(name, kwargs, dtype=lucid.float32)
    _run(opt, params, range(1, 4))
    saved = opt.state_dict()
    twins = [nn.Parameter(p.detach().double()) for p in params]
    twin = getattr(optim, name)([{"params": twins[:2]}, {"params": twins[2:]}], **kwargs)
    twin.load_state_dict(saved)
    for i, p in enumerate(twins):
        for key, value in twin.state[p].items():
            if key == "step":
                assert type(value) is int and value == 3
            else:
                assert value.dtype is lucid.float64
                np.testing.assert_array_equal(host(value), host(saved["state"][i][key]).astype(np.float64))


@needs_gpu
@pytest.mark.parametrize("name,kwargs", STATEFUL, ids=STATEFUL_IDS)
def test_loading_cpu_state_into_gpu_params_moves_it(name, kwargs):
    opt, params = _training(name, kwargs, "cpu", lucid.float32)
    _run(opt, params, range(1, 4))
    twins = [nn.Parameter(p.detach().to("gpu")) for p in params]
    twin = getattr(optim, name)([{"params": twins[:2]}, {"params": twins[2:]}], **kwargs)
    twin.load_state_dict(opt.state_dict())
    for p in twins:
        for key, value in twin.state[p].items():
            if isinstance(value, lucid.Tensor):
                assert value.device == "gpu" and value.dtype is lucid.float32, key
    set_grads(twins, 4)
    twin.step()  # and it trains there
    assert all(twin.state[p]["exp_avg" if "exp_avg" in twin.state[p] else "momentum_buffer"].device == "gpu"
               for p in twins)


@pytest.mark.parametrize("bad", ["shape", "type"])
def test_loading_an_sgd_momentum_buffer_that_does_not_fit_raises_and_changes_nothing(bad):
    opt, params = _training("SGD", {"lr": 0.1, "momentum": 0.9})
    set_grads(params, 1)
    opt.step()
    saved = opt.state_dict()
    saved["state"][0]["momentum_buffer"] = lucid.zeros(3, dtype=lucid.float64) if bad == "shape" else 0.0
    before = copy.deepcopy(opt.state_dict())
    with pytest.raises(ValueError, match="momentum_buffer"):
        opt.load_state_dict(saved)
    assert_state_dicts_equal(opt.state_dict(), before)


def test_loading_a_torch_style_tensor_step_gives_an_int():
    opt, params = _training("Adam", {"lr": 0.1})
    set_grads(params, 1)
    opt.step()
    saved = opt.state_dict()
    for entry in saved["state"].values():
        entry["step"] = lucid.tensor(1.0)  # torch keeps a float32 0-d tensor
    opt.load_state_dict(saved)
    assert all(type(opt.state[i]["step"]) is int and opt.state[i]["step"] == 1 for i in opt.state)


@pytest.mark.parametrize("integral", [lucid.int64, lucid.bool])
def test_integer_and_bool_state_is_cast_to_the_parameters_dtype_as_torch_casts_it(integral):
    """torch's load casts every tensor but ``step`` to a floating parameter's dtype (issue 25:
    an int64 ``exp_avg`` stayed int64 and stepped as ``[1, 1, 2]``); both then step alike."""
    torch = torch_or_skip()
    opt, params = _training("Adam", {"lr": 0.1})
    _run(opt, params, range(1, 3))
    saved = opt.state_dict()
    for entry in saved["state"].values():
        entry["exp_avg"] = lucid.tensor(host(entry["exp_avg"]) * 3 > 0.5, dtype=integral)
    opt.load_state_dict(saved)
    tparams = [torch.nn.Parameter(torch.tensor(host(p))) for p in params]
    topt = torch.optim.Adam([{"params": tparams[:2]}, {"params": tparams[2:], "lr": 0.03}], lr=0.1)
    topt.load_state_dict(_torch_state_dict(saved, torch))
    for i, p in enumerate(params):
        assert opt.state[p]["exp_avg"].dtype is p.dtype is lucid.float64
        assert topt.state[tparams[i]]["exp_avg"].dtype is torch.float64
        np.testing.assert_array_equal(host(opt.state[p]["exp_avg"]), host(saved["state"][i]["exp_avg"]).astype(np.float64))
    for step in range(3, 6):
        set_grads(params, step)
        for i, tp in enumerate(tparams):
            tp.grad = torch.tensor(grad_for(step, i, tp.detach().numpy()))
        opt.step()
        topt.step()
    for p, tp in zip(params, tparams):
        close(host(p), tp.detach().numpy(), "float64")


def test_an_older_torchs_groups_get_torchs_defaults_for_the_flags_they_lack():
    """Flags torch added later (``foreach``, ``maximize``, ``capturable``, ``differentiable``,
    ``fused``, ``amsgrad``, ``decoupled_weight_decay``) are filled as torch's ``__setstate__``
    fills them, not from the optimizer loading them."""
    torch = torch_or_skip()
    flags = ("foreach", "maximize", "capturable", "differentiable", "fused", "amsgrad", "decoupled_weight_decay")
    opt, params = _training("Adam", {"lr": 0.1})
    _run(opt, params, range(1, 3))
    older = opt.state_dict()
    for group in older["param_groups"]:
        for flag in flags:
            del group[flag]
    twins = _clone_params(params)
    twin = optim.Adam([{"params": twins[:2]}, {"params": twins[2:]}], lr=0.5, amsgrad=True, maximize=True)
    twin.load_state_dict(older)
    tparams = [torch.nn.Parameter(torch.tensor(host(p))) for p in params]
    topt = torch.optim.Adam([{"params": tparams[:2]}, {"params": tparams[2:]}], lr=0.5, amsgrad=True, maximize=True)
    topt.load_state_dict(_torch_state_dict(older, torch))
    for mine, theirs in zip(twin.param_groups, topt.param_groups):
        assert {flag: mine[flag] for flag in flags} == {flag: theirs[flag] for flag in flags}
        assert mine["maximize"] is False and mine["amsgrad"] is False


def test_an_older_torchs_python_number_eta_and_mu_load_as_float32_tensors():
    """torch 1.x kept ASGD's ``eta`` and ``mu`` as Python numbers; torch 2.13's ``__setstate__``
    makes them float32 tensors, and so does lucid's load (it refused them)."""
    opt, params = _training("ASGD", {"lr": 0.05, "t0": 1})
    _run(opt, params, range(1, 3))
    older = opt.state_dict()
    for entry in older["state"].values():
        entry["eta"], entry["mu"] = float(entry["eta"].item()), 1
    opt.load_state_dict(older)
    for i in opt.state:
        assert opt.state[i]["eta"].dtype is lucid.float32 and opt.state[i]["eta"].shape == ()
        assert opt.state[i]["eta"].item() == older["state"][i]["eta"] and opt.state[i]["mu"].item() == 1.0


def test_zero_refuses_a_group_lacking_lr_on_every_rank_and_changes_nothing():
    """ZeroRedundancyOptimizer loads through its local optimizer, so the group checks hold there."""
    from lucid import distributed as dist
    from lucid.distributed.optim import ZeroRedundancyOptimizer
    dist.init_process_group("any")
    try:
        opt, params = _training("Adam", {"lr": 0.1})
        zero = ZeroRedundancyOptimizer([{"params": params[:2]}, {"params": params[2:], "lr": 0.03}], optim.Adam,
                                       lr=0.1)
        _run(zero, params, range(1, 3))
        _run(opt, params, range(1, 3))
        saved = opt.state_dict()
        del saved["param_groups"][1]["lr"]
        before, before_record = copy.deepcopy(zero.optim.state_dict()), record(zero.optim, params)
        with pytest.raises(ValueError, match=r"refused on rank 0: loaded param_groups\[\d\] lacks \['lr'\]"):
            zero.load_state_dict(saved)
        assert_state_dicts_equal(zero.optim.state_dict(), before)
        assert_records_equal(record(zero.optim, params), before_record)
    finally:
        dist.destroy_process_group()


def assert_state_dicts_equal(a, b):
    assert a["param_groups"] == b["param_groups"]
    assert list(a["state"]) == list(b["state"])
    for index in a["state"]:
        assert list(a["state"][index]) == list(b["state"][index])
        for key, value in a["state"][index].items():
            other = b["state"][index][key]
            if isinstance(value, lucid.Tensor):
                assert value.dtype is other.dtype and value.device == other.device
                assert np.array_equal(host(value), host(other)), (index, key)
            else:
                assert value == other and type(value) is type(other), (index, key)


def _set(*path_and_value):
    """A mutation that sets ``sd[path...] = value`` and returns the dict."""
    *path, last, value = path_and_value

    def mutate(sd):
        target = sd
        for key in path:
            target = target[key]
        target[last] = value
        return sd
    return mutate


def _drop(*path):
    *path, last = path

    def mutate(sd):
        target = sd
        for key in path:
            target = target[key]
        del target[last]
        return sd
    return mutate


INVALID_LOADS = {
    "not a dict": lambda sd: [sd["state"], sd["param_groups"]],
    "None": lambda sd: None,
    "a string": lambda sd: "state",
    "no state key": _drop("state"),
    "no param_groups key": _drop("param_groups"),
    "one group fewer": lambda sd: {**sd, "param_groups": sd["param_groups"][:1]},
    "one group more": lambda sd: {**sd, "param_groups": sd["param_groups"] + [dict(sd["param_groups"][1], params=[9])]},
    "group size": _set("param_groups", 0, "params", [0]),
    "group without params": _drop("param_groups", 1, "params"),
    "group not a dict": _set("param_groups", 1, [2]),
    "param_groups not a list": _set("param_groups", "groups"),
    "state not a dict": _set("state", [1, 2]),
    "state of wrong shape": _set("state", 2, "exp_avg", lucid.zeros(3, dtype=lucid.float64)),
    "state of wrong rank": _set("state", 0, "exp_avg_sq", lucid.zeros(15, dtype=lucid.float64)),
    "state not a tensor": _set("state", 0, "exp_avg", 0.0),
    "state a list": _set("state", 0, "exp_avg", [[0.0] * 3] * 5),
    "state entry not a dict": _set("state", 0, 5),
    "missing state key": _drop("state", 2, "exp_avg_sq"),
    "missing amsgrad state key": _drop("state", 0, "max_exp_avg_sq"),
    "missing step": _drop("state", 0, "step"),
    "negative step": _set("state", 0, "step", -1),
    "fractional step": _set("state", 0, "step", 1.5),
    "string step": _set("state", 0, "step", "3"),
    "None step": _set("state", 0, "step", None),
    "state for no param": _set("state", 7, {"step": 1}),
    "negative lr in the second group": _set("param_groups", 1, "lr", -1.0),
    "negative lr in the first group": _set("param_groups", 0, "lr", -1.0),
    "bad betas": _set("param_groups", 1, "betas", (1.5, 0.9)),
    "bad eps": _set("param_groups", 0, "eps", -1.0),
}


def _trained_for_loading(device="cpu"):
    opt, params = _training("Adam", {"lr": 0.05, "amsgrad": True}, device)
    _run(opt, params, range(1, 4))
    return opt, params


def test_the_dict_the_invalid_loads_start_from_is_valid():
    opt, params = _trained_for_loading()
    saved = copy.deepcopy(opt.state_dict())
    set_grads(params, 4)
    opt.step()
    opt.load_state_dict(saved)
    assert_state_dicts_equal(opt.state_dict(), saved)


@pytest.mark.parametrize("case", list(INVALID_LOADS))
def test_invalid_load_raises_value_error_and_changes_nothing(case, device):
    opt, params = _trained_for_loading(device)
    bad = INVALID_LOADS[case](copy.deepcopy(opt.state_dict()))
    groups_before = [dict(g) for g in opt.param_groups]
    state_objects = {i: opt.state[i] for i in opt.state}
    before_sd = copy.deepcopy(opt.state_dict())
    before_record = record(opt, params)
    with pytest.raises(ValueError):
        opt.load_state_dict(bad)
    assert_state_dicts_equal(opt.state_dict(), before_sd)
    assert_records_equal(record(opt, params), before_record)
    assert len(opt.param_groups) == len(groups_before)
    for group, old in zip(opt.param_groups, groups_before):
        assert group.keys() == old.keys()
        assert all(group[k] is old[k] or group[k] == old[k] for k in old)
        assert all(p is q for p, q in zip(group["params"], old["params"]))
    assert {i: opt.state[i] for i in opt.state} == state_objects
    assert all(opt.state[i] is state_objects[i] for i in opt.state)
