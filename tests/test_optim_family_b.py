"""Adafactor, Muon and Lion beyond the golden trajectories.

As test_optim_family_a.py for part A: signatures and defaults, validation errors (type and
message) and the state kept after one step are compared with torch.optim 2.13 live;
Lion, which torch.optim does not have, is checked against its documented rules (the
Adam family's messages, the paper's update). Muon's refusal of parameters that are not
2-D, its ``adjust_lr_fn`` variants, and state_dict round trips (bit-identical continuation
on NumPy) complete the picture.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from helpers import assert_same_signature, raised, torch_or_skip, torch_pair
from tolerances import close
from torch_reference import muon_in_param_dtype

GPU = lucid.is_available("gpu")


MATRIX = [[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]]


# --- signatures and defaults -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_signature_matches_torch(name):
    assert_same_signature(getattr(optim, name), getattr(torch_or_skip().optim, name))


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_defaults_and_group_keys_match_torch(name):
    torch = torch_or_skip()
    p, q = torch_pair(MATRIX)
    ours, theirs = getattr(optim, name)([p]), getattr(torch.optim, name)([q])
    assert ours.defaults == theirs.defaults
    group = {k: v for k, v in ours.param_groups[0].items() if k != "params"}
    assert group == {k: v for k, v in theirs.param_groups[0].items() if k != "params"}


def test_lion_signature_and_defaults_are_the_documented_ones():
    """lr 1e-4 and betas (0.9, 0.99) as the paper and mlx.optimizers.Lion; maximize keyword-only."""
    parameters = inspect.signature(optim.Lion).parameters
    assert list(parameters) == ["params", "lr", "betas", "weight_decay", "maximize"]
    assert parameters["maximize"].kind is inspect.Parameter.KEYWORD_ONLY
    optimizer = optim.Lion([nn.Parameter(lucid.zeros(2))])
    assert optimizer.defaults == {"lr": 1e-4, "betas": (0.9, 0.99), "weight_decay": 0.0, "maximize": False}
    assert sorted(optimizer.param_groups[0]) == ["betas", "lr", "maximize", "params", "weight_decay"]
    assert optim.Lion([nn.Parameter(lucid.zeros(2))], betas=[0.5, 0.6]).param_groups[0]["betas"] == (0.5, 0.6)


# --- validation ------------------------------------------------------------------------------
BAD = [
    ("Adafactor", {"lr": -1.0}),
    ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1e-3)}),
    ("Adafactor", {"d": 0.5}),
    ("Adafactor", {"weight_decay": -0.1}),
    ("Adafactor", {"lr": -1.0, "d": 0.5}),
    ("Muon", {"lr": -1.0}),
    ("Muon", {"momentum": -0.5}),
    ("Muon", {"weight_decay": -0.1}),
    ("Muon", {"adjust_lr_fn": "sqrt"}),
    ("Muon", {"momentum": -0.5, "weight_decay": -0.1}),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[f"{n}-{'-'.join(k)}" for n, k in BAD])
def test_validation_matches_torch(name, kwargs):
    torch = torch_or_skip()
    p, q = torch_pair(MATRIX)
    ours = raised(lambda: getattr(optim, name)([p], **kwargs))
    theirs = raised(lambda: getattr(torch.optim, name)([q], **kwargs))
    assert theirs is not None and ours is not None
    assert (type(ours), str(ours)) == (type(theirs), str(theirs))


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_a_tensor_lr_of_several_elements_matches_torch(name):
    torch = torch_or_skip()
    p, q = torch_pair(MATRIX)
    ours = raised(lambda: getattr(optim, name)([p], lr=lucid.tensor([0.1, 0.2])))
    theirs = raised(lambda: getattr(torch.optim, name)([q], lr=torch.tensor([0.1, 0.2])))
    assert (type(ours), str(ours)) == (type(theirs), str(theirs)) == (ValueError, "Tensor lr must be 1-element")


LION_BAD = [
    ({"lr": -1.0}, "Invalid learning rate: -1.0"),
    ({"betas": (1.0, 0.99)}, "Invalid beta parameter at index 0: 1.0"),
    ({"betas": (-0.1, 0.99)}, "Invalid beta parameter at index 0: -0.1"),
    ({"betas": (0.9, 1.5)}, "Invalid beta parameter at index 1: 1.5"),
    ({"betas": (0.9,)}, "betas must be a pair of floats, got (0.9,)"),
    ({"weight_decay": -0.1}, "Invalid weight_decay value: -0.1"),
    ({"lr": lucid.tensor([0.1, 0.2])}, "Tensor lr must be 1-element"),
]


@pytest.mark.parametrize("kwargs,message", LION_BAD, ids=[m.split(":")[0] for _, m in LION_BAD])
def test_lion_validation_uses_the_adam_familys_messages(kwargs, message):
    """The documented rule: Lion's messages are those of torch.optim's Adam family."""
    with pytest.raises(ValueError) as info:
        optim.Lion([nn.Parameter(lucid.zeros(2))], **kwargs)
    assert str(info.value) == message


def test_lion_messages_are_adams_where_torch_has_them():
    torch = torch_or_skip()
    for kwargs, message in [LION_BAD[i] for i in (0, 1, 2, 3, 5)]:
        p, q = torch_pair([1.0, 2.0])
        ours = raised(lambda: optim.Lion([p], **kwargs))
        theirs = raised(lambda: torch.optim.Adam([q], **kwargs))
        assert type(theirs) is ValueError and str(theirs) == message, kwargs  # torch still raises it
        assert (type(ours), str(ours)) == (type(theirs), str(theirs)), kwargs


@pytest.mark.parametrize("name,key,value", [("Adafactor", "d", 0.5), ("Muon", "momentum", -1.0),
                                            ("Lion", "betas", (0.9, 2.0))])
def test_a_bad_group_is_refused(name, key, value):
    """torch checks only the constructor's values; lucid checks every group too."""
    with pytest.raises(ValueError):
        getattr(optim, name)([{"params": [nn.Parameter(lucid.zeros(2, 2))], key: value}])


# --- Muon's 2-D parameters -------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 2, 2), ()])
def test_muon_refuses_a_parameter_that_is_not_2d_at_construction(shape):
    torch = torch_or_skip()
    ours = raised(lambda: optim.Muon([nn.Parameter(lucid.zeros(*shape))]))
    theirs = raised(lambda: torch.optim.Muon([torch.nn.Parameter(torch.zeros(shape))]))
    assert type(ours) is type(theirs) is ValueError
    prefix = "Muon only supports 2D parameters whereas we found a parameter with size: "
    assert str(theirs).startswith(prefix) and str(ours).startswith(prefix)
    assert str(ours) == prefix + str(lucid.zeros(*shape).shape)


@pytest.mark.parametrize("shape", [(3,), (2, 2, 2)])
def test_muon_refuses_a_group_that_is_not_2d_and_does_not_keep_it(shape):
    """torch checks only the constructor's parameters; lucid also refuses a group added
    later, and the refused group leaves nothing behind (the next step works)."""
    matrix, other = nn.Parameter(lucid.ones(2, 3)), nn.Parameter(lucid.ones(*shape))
    optimizer = optim.Muon([matrix], lr=0.1)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optimizer.add_param_group({"params": [other], "lr": 0.5})
    assert len(optimizer.param_groups) == 1
    assert optimizer.param_groups[0]["params"] == [matrix]
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):  # a mixed group too
        optimizer.add_param_group({"params": [nn.Parameter(lucid.ones(3, 3)), other]})
    assert len(optimizer.param_groups) == 1
    matrix.grad, other.grad = lucid.ones(2, 3), lucid.ones(*shape)
    optimizer.step()
    assert list(optimizer.state) == [0]
    np.testing.assert_array_equal(np.asarray(other), np.ones(shape))
    assert [g["params"] for g in optimizer.state_dict()["param_groups"]] == [[0]]
    optimizer.add_param_group({"params": [nn.Parameter(lucid.ones(3, 2))]})  # a 2-D one is accepted
    assert len(optimizer.param_groups) == 2


# --- Muon's adjust_lr_fn ---------------------------------------------------------------------
@pytest.mark.parametrize("adjust_lr_fn", [None, "original", "match_rms_adamw"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
def test_muon_adjust_lr_fn_matches_torch(adjust_lr_fn, shape):
    """Against torch (its iteration run in the parameter's dtype, see torch_reference)."""
    torch = torch_or_skip()
    rng = np.random.default_rng(5)
    p, q = torch_pair(rng.standard_normal(shape))
    kwargs = {"lr": 0.02, "weight_decay": 0.1, "adjust_lr_fn": adjust_lr_fn}
    ours, theirs = optim.Muon([p], **kwargs), torch.optim.Muon([q], **kwargs)
    with muon_in_param_dtype():
        for _ in range(3):
            grad = np.asarray(p) * 0.5 + 0.1 * rng.standard_normal(shape)
            p.grad, q.grad = lucid.tensor(grad), torch.from_numpy(grad.copy())
            ours.step()
            theirs.step()
    close(np.asarray(p), q.detach().numpy(), "float64")
    close(np.asarray(ours.state[0]["momentum_buffer"]), theirs.state[q]["momentum_buffer"].numpy(), "float64")


@pytest.mark.parametrize("shape", [(6, 2), (2, 6)])
def test_muon_adjust_lr_fn_scales_the_step_as_documented(shape):
    """Same gradients: the step of "original" is sqrt(max(1, A/B)) times the orthogonalised
    update, that of "match_rms_adamw" 0.2 * sqrt(max(A, B)) times it; None is "original"."""
    rng = np.random.default_rng(8)
    start, grad = rng.standard_normal(shape), rng.standard_normal(shape)
    moves = {}
    for fn in (None, "original", "match_rms_adamw"):
        p = nn.Parameter(lucid.tensor(start))
        optimizer = optim.Muon([p], lr=0.01, weight_decay=0.0, adjust_lr_fn=fn)
        p.grad = lucid.tensor(grad)
        optimizer.step()
        moves[fn] = np.asarray(p) - start
    rows, cols = shape
    np.testing.assert_array_equal(moves[None], moves["original"])
    ratio = (0.2 * math.sqrt(max(rows, cols))) / math.sqrt(max(1.0, rows / cols))
    close(moves["match_rms_adamw"], moves["original"] * ratio, "float64")


# --- state -----------------------------------------------------------------------------------
STATE_CONFIGS = [
    ("Adafactor", {}, MATRIX),
    ("Adafactor", {}, [1.0, -2.0, 0.5]),
    ("Adafactor", {"weight_decay": 0.1}, np.arange(12.0).reshape(2, 3, 2)),
    ("Muon", {}, MATRIX),
    ("Muon", {"nesterov": False}, MATRIX),
]


@pytest.mark.parametrize("name,kwargs,values", STATE_CONFIGS,
                         ids=["adafactor-2d", "adafactor-1d", "adafactor-3d", "muon", "muon-no-nesterov"])
def test_state_after_one_step_matches_torch(name, kwargs, values):
    """Same keys, shapes and dtypes, and values; ``step`` an int in lucid (a float32 tensor in
    torch); Muon keeps no step, as torch."""
    torch = torch_or_skip()
    p, q = torch_pair(values)
    ours, theirs = getattr(optim, name)([p], **kwargs), getattr(torch.optim, name)([q], **kwargs)
    grad = np.linspace(-1.0, 1.0, p.numel()).reshape(p.shape)
    p.grad, q.grad = lucid.tensor(grad), torch.from_numpy(grad.copy())
    with muon_in_param_dtype():
        ours.step()
        theirs.step()
    state, expected = ours.state[0], theirs.state[q]
    assert sorted(state) == sorted(expected)
    for key, value in expected.items():
        if key == "step":
            assert isinstance(state["step"], int) and state["step"] == int(value) == 1
        else:
            assert state[key].shape == tuple(value.shape), key
            assert str(state[key].dtype).replace("lucid.", "") == str(value.dtype).replace("torch.", ""), key
            close(np.asarray(state[key]), value.detach().numpy(), "float64")


def test_lion_state_after_one_step_is_the_documented_momentum():
    """Only "exp_avg" (no step): m_1 = beta2 * 0 + (1 - beta2) * g, and every coordinate
    moved by lr * sign(c_1) with c_1 = (1 - beta1) * g."""
    start, grad = np.array([1.0, -2.0, 0.5, 0.0]), np.array([0.3, -0.2, 0.0, 1.0])
    p = nn.Parameter(lucid.tensor(start))
    optimizer = optim.Lion([p], lr=0.1, betas=(0.8, 0.9))
    p.grad = lucid.tensor(grad)
    optimizer.step()
    assert list(optimizer.state[0]) == ["exp_avg"]
    assert optimizer.state[0]["exp_avg"].dtype is lucid.float64
    close(np.asarray(optimizer.state[0]["exp_avg"]), 0.1 * grad, "float64")
    np.testing.assert_array_equal(np.asarray(p), start - 0.1 * np.sign(grad))


def test_lion_weight_decay_is_decoupled_and_maximize_negates():
    start, grad = np.array([1.0, -2.0]), np.array([0.5, 0.5])
    p = nn.Parameter(lucid.tensor(start))
    optimizer = optim.Lion([p], lr=0.1, weight_decay=0.5, maximize=True)
    p.grad = lucid.tensor(grad)
    optimizer.step()
    close(np.asarray(p), start * (1 - 0.1 * 0.5) + 0.1 * np.sign(grad), "float64")
    close(np.asarray(optimizer.state[0]["exp_avg"]), -(1 - 0.99) * grad, "float64")


@pytest.mark.parametrize("name", ["Adafactor", "Muon", "Lion"])
def test_no_state_without_a_gradient(name):
    p, r = nn.Parameter(lucid.ones(2, 2)), nn.Parameter(lucid.ones(2, 2))
    optimizer = getattr(optim, name)([p, r])
    p.grad = lucid.ones(2, 2)
    optimizer.step()
    assert 0 in optimizer.state and 1 not in optimizer.state
    np.testing.assert_array_equal(np.asarray(r), np.ones((2, 2)))


# --- state_dict round trips ------------------------------------------------------------------
ROUND_TRIP = [
    ("Adafactor", {"lr": 0.05, "weight_decay": 0.1}, [(3, 2), (4,)]),
    ("Adafactor", {"beta2_decay": -0.5, "d": 1.5, "eps": (1e-20, 1e-2)}, [(2, 3, 2)]),
    ("Muon", {"lr": 0.02, "adjust_lr_fn": "match_rms_adamw"}, [(3, 2), (2, 4)]),
    ("Muon", {"lr": 0.02, "nesterov": False, "momentum": 0.9}, [(3, 3)]),
    ("Lion", {"lr": 0.01, "weight_decay": 0.1}, [(3, 2), (4,)]),
    ("Lion", {"lr": 0.01, "betas": (0.8, 0.95), "maximize": True}, [(5,)]),
]


@pytest.mark.parametrize("name,kwargs,shapes", ROUND_TRIP,
                         ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(ROUND_TRIP)])
def test_state_dict_round_trip_continues_the_trajectory(name, kwargs, shapes):
    """Load mid-training into a fresh optimizer (other hyperparameters) on copied params:
    both continue bit for bit, and export the same state_dict."""
    rng = np.random.default_rng(0)
    params = [nn.Parameter(lucid.tensor(rng.standard_normal(s))) for s in shapes]
    optimizer = getattr(optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 0.03}], **kwargs)

    def advance(opt, ps, steps, seed):
        noise = np.random.default_rng(seed)
        for _ in range(steps):
            for q in ps:
                q.grad = lucid.tensor(np.asarray(q) * 0.5 + 0.1 * noise.standard_normal(q.shape))
            opt.step()

    advance(optimizer, params, 6, 1)
    twins = [nn.Parameter(q.detach().clone()) for q in params]
    other = getattr(optim, name)([{"params": twins[:1]}, {"params": twins[1:]}], lr=0.123)
    other.load_state_dict(optimizer.state_dict())
    assert other.param_groups[0]["lr"] == optimizer.param_groups[0]["lr"]
    advance(optimizer, params, 6, 2)
    advance(other, twins, 6, 2)
    for a, b in zip(params, twins):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    mine, theirs = optimizer.state_dict(), other.state_dict()
    assert mine["param_groups"] == theirs["param_groups"]
    assert list(mine["state"]) == list(theirs["state"])
    for index, entry in mine["state"].items():
        assert list(entry) == list(theirs["state"][index])
        for key, value in entry.items():
            if key == "step":
                assert value == theirs["state"][index][key] == 12
            else:
                np.testing.assert_array_equal(np.asarray(theirs["state"][index][key]), np.asarray(value))


@pytest.mark.parametrize("name", ["Adafactor", "Muon"])
def test_state_dict_layout_matches_torch(name):
    torch = torch_or_skip()
    rng = np.random.default_rng(2)
    values = [rng.standard_normal(s) for s in ((3, 2), (2, 4))]
    mine = [nn.Parameter(lucid.tensor(v)) for v in values]
    theirs = [torch.nn.Parameter(torch.tensor(v)) for v in values]
    ours = getattr(optim, name)([{"params": mine[:1]}, {"params": mine[1:], "lr": 0.02}])
    reference = getattr(torch.optim, name)([{"params": theirs[:1]}, {"params": theirs[1:], "lr": 0.02}])
    with muon_in_param_dtype():
        for _ in range(2):
            for p, q in zip(mine, theirs):
                grad = np.asarray(p) * 0.5 + 0.1
                p.grad, q.grad = lucid.tensor(grad), torch.from_numpy(grad.copy())
            ours.step()
            reference.step()
    a, b = ours.state_dict(), reference.state_dict()
    assert a["param_groups"] == b["param_groups"]
    assert list(a["state"]) == list(b["state"])
    for index, entry in b["state"].items():
        assert list(a["state"][index]) == list(entry)
        for key, value in entry.items():
            if key == "step":
                assert a["state"][index][key] == int(value) == 2
            else:
                close(np.asarray(a["state"][index][key]), value.numpy(), "float64")
