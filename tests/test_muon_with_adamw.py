"""MuonWithAdamW beyond the golden trajectories: its routing (groups, the shape split, the
from_module preset), its refusals, its state_dict (torch's keys per rule, routing checked on
load), and schedulers, schedule values, hooks and adjust_lr_fn across both rules.

The trajectories against torch.optim.Muon and torch.optim.AdamW over the same groups are the
registry's golden cases (tests/test_optim_parity.py); here a lucid MuonWithAdamW is also held
bit for bit to lucid's own Muon and AdamW stepping the same groups apart, and, with a
scheduler, to torch's pair stepped with torch's scheduler.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim import schedules
from helpers import host, torch_or_skip
from tolerances import close


class Model(nn.Module):
    """An embedding, a hidden Linear, a norm, a convolution and a head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 4)
        self.hidden = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.conv = nn.Conv1d(4, 4, 1)
        self.head = nn.Linear(4, 3)


def test_from_module_routes_the_hidden_matrices_to_muon_and_the_rest_to_adamw():
    optimizer = optim.MuonWithAdamW.from_module(Model())
    muon, adamw = optimizer.param_groups
    assert (muon["use_muon"], adamw["use_muon"]) == (True, False)
    assert muon["param_names"] == ["hidden.weight"]
    assert adamw["param_names"] == ["embed.weight", "hidden.bias", "norm.weight", "norm.bias", "conv.weight",
                                    "conv.bias", "head.weight", "head.bias"]


@pytest.mark.parametrize("output, muon_names", [
    ("hidden", ["head.weight"]),          # by name: the hidden layer is the output
    (None, ["hidden.weight", "head.weight"]),  # no output layer
])
def test_from_module_takes_the_output_layer_it_is_given(output, muon_names):
    model = Model()
    by_module = optim.MuonWithAdamW.from_module(model, output=getattr(model, output) if output else None)
    by_name = optim.MuonWithAdamW.from_module(model, output=output)
    for optimizer in (by_module, by_name):
        assert optimizer.param_groups[0]["param_names"] == muon_names


def test_a_weight_tied_to_the_embedding_goes_to_adamw():
    model = Model()
    model.head = nn.Linear(4, 6, bias=False)
    model.head.weight = model.embed.weight
    optimizer = optim.MuonWithAdamW.from_module(model, output=None)
    assert optimizer.param_groups[0]["param_names"] == ["hidden.weight"]
    assert sum(p is model.embed.weight for g in optimizer.param_groups for p in g["params"]) == 1


@pytest.mark.parametrize("output, exc, message", [
    ("nowhere", ValueError, "output names no submodule"),
    (nn.Linear(2, 2), ValueError, "not a submodule"),
    (3, TypeError, "output must be"),
])
def test_from_module_refuses_an_output_it_cannot_find(output, exc, message):
    with pytest.raises(exc, match=message):
        optim.MuonWithAdamW.from_module(Model(), output=output)


def test_a_plain_list_is_split_by_shape_and_keys_follow_their_rule():
    w, b, t = nn.Parameter(lucid.zeros(3, 2)), nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(2, 2, 2))
    optimizer = optim.MuonWithAdamW([w, b, t], lr=0.02, adamw_lr=0.01)
    muon, adamw = optimizer.param_groups
    assert [p is w for p in muon["params"]] == [True] and muon["lr"] == 0.02 and muon["eps"] == 1e-7
    assert adamw["params"][0] is b and adamw["params"][1] is t and adamw["lr"] == 0.01 and adamw["eps"] == 1e-8
    optimizer.add_param_group({"params": [nn.Parameter(lucid.zeros(2, 2)), nn.Parameter(lucid.zeros(4))],
                               "momentum": 0.5, "betas": (0.5, 0.9), "lr": 0.1})
    added_muon, added_adamw = optimizer.param_groups[2:]
    assert added_muon["momentum"] == 0.5 and "betas" not in added_muon and added_muon["lr"] == 0.1
    assert added_adamw["betas"] == (0.5, 0.9) and "momentum" not in added_adamw and added_adamw["lr"] == 0.1


def test_a_split_group_is_added_whole_or_not_at_all():
    optimizer = optim.MuonWithAdamW([nn.Parameter(lucid.zeros(3, 2))])
    matrix, vector = nn.Parameter(lucid.zeros(2, 2)), nn.Parameter(lucid.zeros(2))
    with pytest.raises(ValueError, match="Invalid beta parameter"):  # the AdamW part, after the Muon part
        optimizer.add_param_group({"params": [matrix, vector], "betas": (2.0, 0.9)})
    assert len(optimizer.param_groups) == 1 and len(optimizer.param_groups.flat()) == 1
    optimizer.add_param_group({"params": [matrix, vector]})  # the parameters were not kept
    assert len(optimizer.param_groups) == 3


def test_a_muon_group_with_a_parameter_that_is_not_a_matrix_raises_and_changes_nothing():
    matrix, bias = nn.Parameter(lucid.zeros(3, 2)), nn.Parameter(lucid.zeros(3))
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters.*size: \(3,\) in a group with "
                                         r"use_muon=True; put it in a group with use_muon=False"):
        optim.MuonWithAdamW([{"params": [matrix, bias], "use_muon": True}])
    optimizer = optim.MuonWithAdamW([{"params": [matrix], "use_muon": True}])
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        optimizer.add_param_group({"params": [bias], "use_muon": True})
    assert len(optimizer.param_groups) == 1


@pytest.mark.parametrize("group, exc, message", [
    ({"use_muon": True, "betas": (0.9, 0.99)}, ValueError, r"use_muon=True \(Muon\) takes no \['betas'\], which are AdamW's"),
    ({"use_muon": False, "momentum": 0.9, "nesterov": True}, ValueError,
     r"use_muon=False \(AdamW\) takes no \['momentum', 'nesterov'\]"),
    ({"use_muon": 1}, TypeError, "use_muon must be True or False, got int 1"),
    ({"use_muon": False, "lr": -1.0}, ValueError, "Invalid learning rate: -1.0"),  # AdamW's message
    ({"use_muon": True, "lr": -1.0}, ValueError, "Learning rate should be >= 0"),  # Muon's message
    ({"use_muon": True, "adjust_lr_fn": "sqrt"}, ValueError, "Adjust learning rate function sqrt is not supported"),
])
def test_a_group_is_checked_by_its_rule(group, exc, message):
    with pytest.raises(exc, match=message):
        optim.MuonWithAdamW([{"params": [nn.Parameter(lucid.zeros(2, 2))], **group}])


def _pair_of_groups(dtype=lucid.float64, device="cpu"):
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (3, 5), (5,), (2, 3)]
    params = [nn.Parameter(lucid.tensor(rng.standard_normal(s), dtype=dtype, device=device)) for s in shapes]
    return params, [{"params": params[:2], "use_muon": True}, {"params": params[2:], "use_muon": False}]


def _grads(params, step):
    for i, p in enumerate(params):
        p.grad = lucid.tensor(np.cos(3.0 * host(p) + 0.7 * step + i), dtype=p.dtype, device=p.device)


@pytest.mark.parametrize("adjust_lr_fn", [None, "original", "match_rms_adamw"])
def test_each_rule_is_lucids_muon_and_adamw_bit_for_bit(adjust_lr_fn, device):
    """With schedule values for both lrs, every adjust_lr_fn, amsgrad: the same numbers as
    lucid's Muon and AdamW stepping the groups apart, on each device."""
    kwargs = dict(lr=schedules.warmup(2, schedules.cosine(0.02, 8)), weight_decay=0.05, adjust_lr_fn=adjust_lr_fn)
    adamw_kwargs = dict(lr=schedules.linear(0.01, 0.001, 8), betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)
    params, groups = _pair_of_groups(device=device)
    groups[1]["amsgrad"] = True
    mixed = optim.MuonWithAdamW(groups, **kwargs, **{f"adamw_{k}": v for k, v in adamw_kwargs.items()})
    apart_params, _ = _pair_of_groups(device=device)
    muon = optim.Muon(apart_params[:2], **kwargs)
    adamw = optim.AdamW(apart_params[2:], amsgrad=True, **adamw_kwargs)
    for step in range(1, 9):
        _grads(params, step)
        _grads(apart_params, step)
        mixed.step()
        muon.step()
        adamw.step()
        for p, q in zip(params, apart_params):
            np.testing.assert_array_equal(host(p), host(q))
    assert [g["lr"] for g in mixed.param_groups] == [muon.param_groups[0]["lr"], adamw.param_groups[0]["lr"]]


def test_a_scheduler_scales_both_rules_as_torchs_pair():
    """StepLR over MuonWithAdamW against torch's Muon and AdamW, each with its StepLR (float64,
    Muon's iteration in the parameter dtype: torch_reference.muon_in_param_dtype)."""
    torch = torch_or_skip()
    from torch_reference import muon_in_param_dtype

    params, groups = _pair_of_groups()
    groups[1]["lr"] = 0.01
    optimizer = optim.MuonWithAdamW(groups, lr=0.02, adjust_lr_fn="match_rms_adamw")
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)
    theirs = [torch.nn.Parameter(torch.tensor(host(p))) for p in params]
    torch_muon = torch.optim.Muon(theirs[:2], lr=0.02, adjust_lr_fn="match_rms_adamw")
    torch_adamw = torch.optim.AdamW(theirs[2:], lr=0.01)
    torch_schedulers = [torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5) for o in (torch_muon, torch_adamw)]
    for step in range(1, 10):
        _grads(params, step)
        for p, q in zip(params, theirs):
            q.grad = torch.tensor(host(p.grad))
        optimizer.step()
        scheduler.step()
        with muon_in_param_dtype():
            torch_muon.step()
        torch_adamw.step()
        for s in torch_schedulers:
            s.step()
        for p, q in zip(params, theirs):
            close(host(p), q.detach().numpy(), "float64")
    assert [g["lr"] for g in optimizer.param_groups] == [torch_muon.param_groups[0]["lr"],
                                                         torch_adamw.param_groups[0]["lr"]]


def test_one_cycle_cycles_muons_momentum_and_adamws_beta1_as_torchs_on_each():
    torch = torch_or_skip()
    params, groups = _pair_of_groups()
    optimizer = optim.MuonWithAdamW(groups)
    scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, total_steps=8)
    theirs = [torch.nn.Parameter(torch.tensor(host(p))) for p in params]
    torch_optimizers = [torch.optim.Muon(theirs[:2]), torch.optim.AdamW(theirs[2:])]
    torch_schedulers = [torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.01, total_steps=8) for o in torch_optimizers]
    for step in range(1, 8):
        _grads(params, step)
        optimizer.step()
        scheduler.step()
        for o, s in zip(torch_optimizers, torch_schedulers):
            o.step()  # no gradients: only the schedule moves
            s.step()
        muon, adamw = optimizer.param_groups
        assert "betas" not in muon and "momentum" not in adamw
        assert (muon["lr"], muon["momentum"]) == (torch_optimizers[0].param_groups[0]["lr"],
                                                  torch_optimizers[0].param_groups[0]["momentum"])
        assert (adamw["lr"], adamw["betas"]) == (torch_optimizers[1].param_groups[0]["lr"],
                                                 torch_optimizers[1].param_groups[0]["betas"])


def test_the_groups_hold_torchs_keys_and_values_for_each_rule():
    torch = torch_or_skip()
    params, groups = _pair_of_groups()
    sd = optim.MuonWithAdamW(groups, adamw_lr=0.01).state_dict()
    theirs = [torch.nn.Parameter(torch.tensor(host(p))) for p in params]
    muon = torch.optim.Muon(theirs[:2]).state_dict()["param_groups"][0]
    adamw = torch.optim.AdamW(theirs[2:], lr=0.01).state_dict()["param_groups"][0]
    assert sd["param_groups"][0] == {**muon, "use_muon": True}
    assert sd["param_groups"][1] == {**adamw, "params": [2, 3], "use_muon": False}


def _stepped(routing=(True, False), steps=3):
    params, groups = _pair_of_groups()
    if routing == (False, True):  # the same group sizes, routed the other way (4x3 and 3x5 to AdamW)
        groups = [{"params": params[:2], "use_muon": False}, {"params": [params[3], params[1].T.detach()
                                                                         .clone().requires_grad_()], "use_muon": True}]
    optimizer = optim.MuonWithAdamW(groups)
    live = [p for g in optimizer.param_groups for p in g["params"]]
    for step in range(1, steps + 1):
        _grads(live, step)
        optimizer.step()
    return optimizer, live


def test_a_state_dict_round_trip_continues_bit_identically():
    optimizer, params = _stepped()
    fresh_params = [nn.Parameter(p.detach().clone()) for p in params]
    fresh = optim.MuonWithAdamW([{"params": fresh_params[:2], "use_muon": True},
                                 {"params": fresh_params[2:], "use_muon": False}])
    fresh.load_state_dict(optimizer.state_dict())
    assert sorted(fresh.state[0]) == ["momentum_buffer"] and sorted(fresh.state[2]) == ["exp_avg", "exp_avg_sq", "step"]
    for step in range(4, 7):
        _grads(params, step)
        _grads(fresh_params, step)
        optimizer.step()
        fresh.step()
        for p, q in zip(params, fresh_params):
            np.testing.assert_array_equal(host(p), host(q))


def test_a_state_dict_routed_otherwise_is_refused_and_changes_nothing():
    saved, _ = _stepped()
    other, _ = _stepped((False, True))
    before = copy.deepcopy(other.state_dict())
    with pytest.raises(ValueError, match=r"routes its parameters to Muon \(use_muon=True\), but this optimizer "
                                         r"routes them to AdamW"):
        other.load_state_dict(saved.state_dict())
    after = other.state_dict()
    assert after["param_groups"] == before["param_groups"]
    assert all(host(after["state"][i][k]).tolist() == host(v).tolist()
               for i, entry in before["state"].items() for k, v in entry.items() if k != "step")


def test_a_state_dict_that_does_not_say_its_routing_is_refused():
    optimizer, _ = _stepped()
    sd = optimizer.state_dict()
    del sd["param_groups"][0]["use_muon"]  # as a torch.optim.Muon's
    with pytest.raises(ValueError, match="must say use_muon=True or False"):
        optimizer.load_state_dict(sd)
    assert optimizer.param_groups[0]["use_muon"] is True


def test_a_step_that_raises_changes_neither_rule():
    params, groups = _pair_of_groups()
    optimizer = optim.MuonWithAdamW(groups)
    _grads(params, 1)
    # the AdamW group's last gradient is sparse, which neither rule takes: checked before any update
    params[3].grad = lucid.sparse_coo_tensor([[1]], lucid.ones(1, 3, dtype=lucid.float64), (2, 3))
    before = [host(p) for p in params]
    with pytest.raises(RuntimeError, match="MuonWithAdamW does not support sparse gradients"):
        optimizer.step()
    assert all(np.array_equal(a, host(p)) for a, p in zip(before, params)) and not optimizer.state


def test_hooks_run_once_a_step_for_both_rules():
    params, groups = _pair_of_groups()
    optimizer = optim.MuonWithAdamW(groups)
    calls = []
    optimizer.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", len(o.state))))
    optimizer.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", len(o.state))))
    _grads(params, 1)
    optimizer.step()
    assert calls == [("pre", 0), ("post", 4)]
