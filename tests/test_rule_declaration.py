"""An elementwise rule is declared in one place: its scalars by name, its kind of weight decay.

The scalars function returns a dict; the engine orders it by the rule's signature, so the
order a scalars function writes its entries in cannot swap two scalars, and a name that is
not the rule's is refused. ``maximize`` and weight decay are written by ``lucid.optim`` into
a rule of its own (the backend sees a plain rule and numbers): checked here against the
prologue written out by hand, on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn, optim
from lucid.optim.elementwise import elementwise

DEVICES = ["cpu"] + (["gpu"] if lucid.is_available("gpu") else [])


def _in_order(group, param, state):
    return {"shift": -group["lr"], "scale": group["scale"]}


def _reversed(group, param, state):
    return {"scale": group["scale"], "shift": -group["lr"]}  # another order: the same scalars by name


def _misnamed(group, param, state):
    return {"scale": group["scale"], "neg_lr": -group["lr"]}


def _declare(scalars):
    @elementwise(state=("velocity",), decay="l2", scalars=scalars)
    def scaled_step(param, grad, velocity, scale, shift):
        velocity = velocity + grad
        return param * scale + velocity * shift, velocity

    return scaled_step


class Scaled(optim.Optimizer):
    """A small optimizer over a rule whose two scalars would swap silently if matched by position."""

    def __init__(self, params, rule, lr=0.5, scale=0.25, weight_decay=0.0, maximize=False):
        self.rule = rule
        super().__init__(params, dict(lr=lr, scale=scale, weight_decay=weight_decay, maximize=maximize))

    def init_state(self, param, group):
        return {"velocity": lucid.zeros_like(param)}

    def elementwise_rule(self, group):
        return self.rule


def _run(scalars, device, **kwargs):
    w = nn.Parameter(lucid.tensor([1.0, -2.0, 3.0], device=device))
    opt = Scaled([w], _declare(scalars), **kwargs)
    for _ in range(3):
        w.grad = lucid.tensor([0.5, 1.0, -1.5], device=device)
        opt.step()
    return np.array(w.detach())


@pytest.mark.parametrize("device", DEVICES)
def test_scalars_are_matched_by_name_not_by_position(device):
    expected = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    velocity = np.zeros(3, dtype=np.float32)
    for _ in range(3):
        velocity = velocity + np.array([0.5, 1.0, -1.5], dtype=np.float32)
        expected = expected * np.float32(0.25) + velocity * np.float32(-0.5)
    np.testing.assert_array_equal(_run(_in_order, device), expected)
    np.testing.assert_array_equal(_run(_reversed, device), expected)


def test_a_scalar_name_the_rule_does_not_take_is_refused():
    with pytest.raises(TypeError, match=r"scalars of rule scaled_step must be \['scale', 'shift'\], got \['neg_lr', 'scale'\]"):
        _run(_misnamed, "cpu")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kwargs", [{"maximize": True}, {"weight_decay": 0.1}, {"weight_decay": 0.1, "maximize": True}])
def test_maximize_and_l2_decay_run_before_the_rule(kwargs, device):
    param = np.array([1.0, -2.0, 3.0], dtype=np.float32)
    velocity = np.zeros(3, dtype=np.float32)
    for _ in range(3):
        grad = np.array([0.5, 1.0, -1.5], dtype=np.float32)
        if kwargs.get("maximize"):
            grad = -grad
        grad = grad + np.float32(kwargs.get("weight_decay", 0.0)) * param
        velocity = velocity + grad
        param = param * np.float32(0.25) + velocity * np.float32(-0.5)
    np.testing.assert_array_equal(_run(_in_order, device, **kwargs), param)


def test_decoupled_decay_shrinks_the_parameter_first():
    w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    opt = optim.Lion([w], lr=0.1, weight_decay=0.5)
    w.grad = lucid.zeros(2)  # a zero gradient: sign(0) moves nothing, only the decay does
    opt.step()
    np.testing.assert_array_equal(np.array(w.detach()), np.array([1.0, -2.0], dtype=np.float32) * np.float32(0.95))


def test_a_variant_is_made_once_and_named_by_its_structure():
    rule = optim.Adam([nn.Parameter(lucid.zeros(1))]).elementwise_rule({"amsgrad": False})
    group = {"weight_decay": 0.1, "lr": 0.01, "maximize": True, "decoupled_weight_decay": True}
    (variant, shrink), (again, _) = rule.for_group(group), rule.for_group({**group, "lr": 0.02})
    assert variant is again and variant.name == "adam__maximize__decoupled"
    assert variant.scalars == ("shrink", *rule.scalars) and shrink == 1 - 0.01 * 0.1
    assert rule.for_group({"weight_decay": 0, "maximize": False}) == (rule, None)


def test_a_decay_kind_is_checked_at_declaration():
    with pytest.raises(ValueError, match="decay must be None, 'l2' or 'decoupled', got 'L2'"):
        elementwise(decay="L2")(lambda param, grad: (param,))
