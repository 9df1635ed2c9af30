"""Adadelta, Adagrad, Adamax, ASGD, NAdam, RAdam, RMSprop and Rprop beyond the golden trajectories.

The golden harness (test_optim_parity.py) compares numbers. This file compares the rest with
torch.optim 2.13, live where torch is importable: signatures and defaults, validation
errors (type and message, built the same way in both), the state each optimizer keeps
after a step, Adagrad's state at construction, and the float32 scalars torch keeps whatever
the parameter dtype. Lucid-only properties (state_dict round trips, state following a
dtype change) need no torch. (A Tensor lr of several elements is the base's concern, see
test_optimizer_base.py.)
"""

from __future__ import annotations


import numpy as np
import pytest

import lucid
from lucid import nn, optim
from helpers import assert_same_signature, raised, torch_or_skip, torch_pair
from tolerances import close

NAMES = ["Adadelta", "Adagrad", "Adamax", "ASGD", "NAdam", "RAdam", "RMSprop", "Rprop"]
GPU = lucid.is_available("gpu")


# --- signatures and defaults -----------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_signature_matches_torch(name):
    assert_same_signature(getattr(optim, name), getattr(torch_or_skip().optim, name))


@pytest.mark.parametrize("name", NAMES)
def test_defaults_and_group_keys_match_torch(name):
    torch = torch_or_skip()
    p, q = torch_pair([1.0, -2.0])
    ours, theirs = getattr(optim, name)([p]), getattr(torch.optim, name)([q])
    assert ours.defaults == theirs.defaults
    group = {k: v for k, v in ours.param_groups[0].items() if k != "params"}
    assert group == {k: v for k, v in theirs.param_groups[0].items() if k != "params"}


# --- validation ------------------------------------------------------------------------------
BAD = [
    ("Adadelta", {"lr": -1.0}),
    ("Adadelta", {"rho": 1.5}),
    ("Adadelta", {"rho": -0.1}),
    ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -0.5}),
    ("Adadelta", {"rho": 2.0, "eps": -1.0}),
    ("Adagrad", {"lr": -1.0}),
    ("Adagrad", {"lr_decay": -0.1}),
    ("Adagrad", {"weight_decay": -0.1}),
    ("Adagrad", {"initial_accumulator_value": -0.1}),
    ("Adagrad", {"eps": -1e-10}),
    ("Adagrad", {"lr_decay": -1.0, "eps": -1.0}),
    ("Adagrad", {"fused": True, "foreach": True}),
    ("Adamax", {"lr": -1.0}),
    ("Adamax", {"eps": -1.0}),
    ("Adamax", {"betas": (1.0, 0.999)}),
    ("Adamax", {"betas": (0.9, -0.1)}),
    ("Adamax", {"weight_decay": -1.0}),
    ("Adamax", {"eps": -1.0, "betas": (1.0, 0.999)}),
    ("ASGD", {"lr": -1.0}),
    ("ASGD", {"weight_decay": -1.0}),
    ("NAdam", {"lr": -1.0}),
    ("NAdam", {"eps": -1.0}),
    ("NAdam", {"betas": (1.0, 0.999)}),
    ("NAdam", {"betas": (0.9, 1.0)}),
    ("NAdam", {"weight_decay": -1.0}),
    ("NAdam", {"momentum_decay": -1.0}),
    ("NAdam", {"weight_decay": -1.0, "momentum_decay": -1.0}),
    ("RAdam", {"lr": -1.0}),
    ("RAdam", {"eps": -1.0}),
    ("RAdam", {"betas": (-0.1, 0.999)}),
    ("RAdam", {"betas": (0.9, 1.5)}),
    ("RAdam", {"weight_decay": -1.0}),
    ("RMSprop", {"lr": -1.0}),
    ("RMSprop", {"eps": -1.0}),
    ("RMSprop", {"momentum": -1.0}),
    ("RMSprop", {"weight_decay": -1.0}),
    ("RMSprop", {"alpha": -1.0}),
    ("RMSprop", {"momentum": -1.0, "alpha": -1.0}),
    ("Rprop", {"lr": -1.0}),
    ("Rprop", {"etas": (1.0, 1.2)}),
    ("Rprop", {"etas": (0.0, 1.2)}),
    ("Rprop", {"etas": (0.5, 1.0)}),
    ("Rprop", {"etas": (0.5, 0.9)}),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[f"{n}-{'-'.join(k)}" for n, k in BAD])
def test_validation_matches_torch(name, kwargs):
    torch = torch_or_skip()
    p, q = torch_pair([1.0, -2.0])
    ours = raised(lambda: getattr(optim, name)([p], **kwargs))
    theirs = raised(lambda: getattr(torch.optim, name)([q], **kwargs))
    assert theirs is not None and ours is not None
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))


@pytest.mark.parametrize("name", NAMES)
def test_a_bad_group_is_refused(name):
    """torch checks only the constructor's values; lucid checks every group too."""
    key = {"Adadelta": "rho", "Rprop": "etas"}.get(name, "lr")
    value = {"rho": 2.0, "etas": (2.0, 3.0)}.get(key, -1.0)
    with pytest.raises(ValueError, match="Invalid"):
        getattr(optim, name)([{"params": [nn.Parameter(lucid.zeros(2))], key: value}])


@pytest.mark.parametrize("name", NAMES)
def test_differentiable_is_not_supported(name):
    with pytest.raises(NotImplementedError, match="differentiable"):
        getattr(optim, name)([nn.Parameter(lucid.zeros(2))], differentiable=True)


# --- state -----------------------------------------------------------------------------------
STATE_CONFIGS = [
    ("Adadelta", {}),
    ("Adagrad", {}),
    ("Adamax", {}),
    ("ASGD", {}),
    ("NAdam", {}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.9}),
    ("RMSprop", {"centered": True}),
    ("RMSprop", {"momentum": 0.9, "centered": True}),
    ("Rprop", {}),
]


def _describe(value, torch_side):
    """(shape, dtype name) of a state entry; ``step`` as its number."""
    if torch_side:
        return tuple(value.shape), str(value.dtype).replace("torch.", "")
    return value.shape, str(value.dtype).replace("lucid.", "")


@pytest.mark.parametrize("name,kwargs", STATE_CONFIGS, ids=[f"{n}-{'-'.join(k) or 'default'}" for n, k in STATE_CONFIGS])
def test_state_after_one_step_matches_torch(name, kwargs):
    """Same keys; tensors of the same shape and dtype (0-d float32 scalars included);
    ``step`` the same count (an int in lucid, a float32 tensor in torch)."""
    torch = torch_or_skip()
    p, q = torch_pair([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    ours, theirs = getattr(optim, name)([p], **kwargs), getattr(torch.optim, name)([q], **kwargs)
    grad = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    p.grad, q.grad = lucid.tensor(grad), torch.from_numpy(grad.copy())
    ours.step()
    theirs.step()
    state, expected = ours.state[0], theirs.state[q]
    assert sorted(state) == sorted(expected)
    assert isinstance(state["step"], int) and state["step"] == int(expected["step"]) == 1
    for key in expected:
        if key != "step":
            assert _describe(state[key], False) == _describe(expected[key], True), key
            close(np.asarray(state[key]), expected[key].detach().numpy(), "float64")


@pytest.mark.parametrize("name", NAMES)
def test_no_state_without_a_gradient(name):
    """Except Adagrad's (created with the group), state appears at a parameter's first step."""
    p, r = nn.Parameter(lucid.ones(2)), nn.Parameter(lucid.ones(2))
    optimizer = getattr(optim, name)([p, r])
    p.grad = lucid.ones(2)
    optimizer.step()
    assert 0 in optimizer.state
    assert (1 in optimizer.state) == (name == "Adagrad")
    np.testing.assert_array_equal(np.asarray(r), [1.0, 1.0])


def test_adagrad_state_exists_at_construction():
    torch = torch_or_skip()
    p, q = torch_pair([1.0, -2.0, 3.0])
    ours = optim.Adagrad([p], initial_accumulator_value=0.25)
    theirs = torch.optim.Adagrad([q], initial_accumulator_value=0.25)
    assert sorted(ours.state[0]) == sorted(theirs.state[q]) == ["step", "sum"]
    assert ours.state[0]["step"] == int(theirs.state[q]["step"]) == 0
    np.testing.assert_array_equal(np.asarray(ours.state[0]["sum"]), theirs.state[q]["sum"].numpy())
    saved, expected = ours.state_dict(), theirs.state_dict()
    assert list(saved["state"]) == list(expected["state"]) == [0]


def test_adagrad_uses_the_constructors_initial_accumulator_value():
    """As torch: a group's own initial_accumulator_value is stored but not used."""
    torch = torch_or_skip()
    p, q = torch_pair([1.0, -2.0])
    r, s = torch_pair([3.0])
    ours = optim.Adagrad([{"params": [p]}, {"params": [r], "initial_accumulator_value": 2.0}],
                         initial_accumulator_value=0.5)
    theirs = torch.optim.Adagrad([{"params": [q]}, {"params": [s], "initial_accumulator_value": 2.0}],
                                 initial_accumulator_value=0.5)
    assert ours.param_groups[1]["initial_accumulator_value"] == 2.0
    np.testing.assert_array_equal(np.asarray(ours.state[1]["sum"]), theirs.state[s]["sum"].numpy())
    np.testing.assert_array_equal(np.asarray(ours.state[1]["sum"]), [0.5])


def test_adagrad_state_of_a_group_added_later():
    """lucid creates it at once (torch at the group's first step); the numbers agree."""
    torch = torch_or_skip()
    p, q = torch_pair([1.0, -2.0])
    r, s = torch_pair([3.0, 0.5])
    ours, theirs = optim.Adagrad([p], lr=0.1), torch.optim.Adagrad([q], lr=0.1)
    ours.add_param_group({"params": [r]})
    theirs.add_param_group({"params": [s]})
    assert ours.state[1]["step"] == 0
    for _ in range(3):
        for a, b in ((p, q), (r, s)):
            grad = np.asarray(a) * 0.5 + 0.1
            a.grad, b.grad = lucid.tensor(grad), torch.from_numpy(grad.copy())
        ours.step()
        theirs.step()
    np.testing.assert_array_equal(np.asarray(r), s.detach().numpy())
    assert ours.state[1]["step"] == int(theirs.state[s]["step"]) == 3


@pytest.mark.parametrize("name,keys", [("ASGD", ("eta", "mu")), ("NAdam", ("mu_product",))])
def test_float32_scalars_stay_float32(name, keys):
    """torch keeps them in float32 for any parameter dtype; so does lucid, through a
    dtype change of the parameter and through load_state_dict."""
    p = nn.Parameter(lucid.tensor([1.0, -2.0], dtype=lucid.float32))
    optimizer = getattr(optim, name)([p], lr=0.1)
    p.grad = lucid.ones(2)
    optimizer.step()
    p.data = p.data.double()
    p.grad = lucid.ones(2, dtype=lucid.float64)
    optimizer.step()
    state = optimizer.state[0]
    for key in keys:
        assert state[key].shape == () and state[key].dtype is lucid.float32, key
    assert state["step"] == 2
    assert all(v.dtype is lucid.float64 for k, v in state.items() if k not in keys and k != "step")
    fresh = getattr(optim, name)([p], lr=0.1)
    fresh.load_state_dict(optimizer.state_dict())
    assert all(fresh.state[0][key].dtype is lucid.float32 for key in keys)


@pytest.mark.skipif(not GPU, reason="needs the gpu (MLX) device")
@pytest.mark.parametrize("name,keys", [("ASGD", ("eta", "mu")), ("NAdam", ("mu_product",))])
def test_float32_scalars_live_on_the_parameters_device(name, keys):
    p = nn.Parameter(lucid.tensor([1.0, -2.0], device="gpu"))
    optimizer = getattr(optim, name)([p])
    p.grad = lucid.ones(2, device="gpu")
    optimizer.step()
    assert all(optimizer.state[0][key].device == "gpu" for key in keys)


ROUND_TRIP = [
    ("Adadelta", {"weight_decay": 0.1}),
    ("Adagrad", {"lr_decay": 0.1, "initial_accumulator_value": 0.1}),
    ("Adamax", {"weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 3, "lambd": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.01}),
    ("RMSprop", {"momentum": 0.5, "centered": True}),
    ("Rprop", {"lr": 0.05}),
]


@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[n for n, _ in ROUND_TRIP])
def test_state_dict_round_trip_continues_the_trajectory(name, kwargs):
    """Load mid-training into a fresh optimizer on copied params: both continue identically."""
    rng = np.random.default_rng(0)
    p = nn.Parameter(lucid.tensor(rng.standard_normal((3, 2))))
    optimizer = getattr(optim, name)([p], **kwargs)

    def advance(opt, param, steps, seed):
        noise = np.random.default_rng(seed)
        for _ in range(steps):
            param.grad = lucid.tensor(np.asarray(param) * 0.5 + 0.1 * noise.standard_normal((3, 2)))
            opt.step()

    advance(optimizer, p, 8, 1)
    twin = nn.Parameter(p.detach().clone())
    other = getattr(optim, name)([twin], lr=0.123)
    other.load_state_dict(optimizer.state_dict())
    advance(optimizer, p, 8, 2)
    advance(other, twin, 8, 2)
    np.testing.assert_array_equal(np.asarray(twin), np.asarray(p))
    for key, value in optimizer.state[0].items():
        if key == "step":
            assert other.state[0][key] == value == 16
        else:
            np.testing.assert_array_equal(np.asarray(other.state[0][key]), np.asarray(value))


@pytest.mark.parametrize("name", NAMES)
def test_maximize_is_minimising_the_negation(name):
    """maximize=True with grad g gives exactly the trajectory of maximize=False with -g."""
    rng = np.random.default_rng(3)
    start = rng.standard_normal(4)
    a, b = nn.Parameter(lucid.tensor(start)), nn.Parameter(lucid.tensor(start))
    up, down = getattr(optim, name)([a], maximize=True), getattr(optim, name)([b])
    for _ in range(5):
        grad = np.asarray(a) * 0.5 + 0.1 * rng.standard_normal(4)
        a.grad, b.grad = lucid.tensor(grad), lucid.tensor(-grad)
        up.step()
        down.step()
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
