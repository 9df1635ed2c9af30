"""The losses, as functions and as modules, against torch live: values, gradients of input
and target, every reduction and option, the deprecated flags, and torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from helpers import assert_same_signature
from nn_parity import DEVICE_DTYPES, assert_same_error, function_parity, ids, to_torch
from tolerances import close

torch = pytest.importorskip("torch")
TF = torch.nn.functional

REDUCTIONS = ["mean", "sum", "none"]
SHAPES = {"1-D": (7,), "2-D": (4, 5), "3-D": (2, 3, 4)}


def _inputs(shape, kind, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2
    if kind == "regression":
        y = rng.standard_normal(shape) * 2
        x.flat[0] = y.flat[0]  # a zero difference: the kink of L1 and friends
        if x.size > 1:
            x.flat[1] = y.flat[1] + 1.0  # exactly at beta / delta = 1
        return x, y
    if kind == "probabilities":
        p = 1 / (1 + np.exp(-x))
        p.flat[0] = 0.0  # log clamped to -100
        if p.size > 2:
            p.flat[1] = 1.0
        return p, rng.random(shape)
    return x, (rng.random(shape) > 0.5).astype(float) * 0.8 + 0.1  # logits and soft labels


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,options", [
    ("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
    ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("huber_loss", {"delta": 2.5}),
], ids=["mse", "l1", "smooth_l1", "smooth_l1-beta", "smooth_l1-beta0", "huber", "huber-delta"])
def test_regression_losses_match_torch(name, options, reduction, shape, device, dtype):
    x, y = _inputs(SHAPES[shape], "regression")
    function_parity(getattr(F, name), getattr(TF, name), [x, y], device, dtype, reduction=reduction, **options)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_per_element_weights_match_torch(name, reduction, device, dtype):
    x, y = _inputs((3, 4), "regression")
    w = np.random.default_rng(9).random((3, 4))
    function_parity(getattr(F, name), getattr(TF, name), [x, y], device, dtype, constants={"weight": w},
                    reduction=reduction)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_matches_torch(weighted, reduction, shape, device, dtype):
    p, y = _inputs(SHAPES[shape], "probabilities", seed=1)
    # the weight broadcast along the last dimension
    constants = {"weight": np.random.default_rng(3).random(SHAPES[shape][-1:])} if weighted else None
    function_parity(F.binary_cross_entropy, TF.binary_cross_entropy, [p, y], device, dtype, constants=constants,
         reduction=reduction)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("option", ["plain", "weight", "pos_weight", "both"])
def test_binary_cross_entropy_with_logits_matches_torch(option, reduction, shape, device, dtype):
    x, y = _inputs(SHAPES[shape], "logits", seed=2)
    x.flat[0] = 40.0  # saturated logits
    x.flat[-1] = -40.0
    rng = np.random.default_rng(4)
    constants = {name: rng.random(SHAPES[shape][-1:]) * 3 for name in ("weight", "pos_weight")
                 if option in (name, "both")}
    function_parity(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits, [x, y], device, dtype,
         constants=constants, reduction=reduction)


# --- modules -------------------------------------------------------------------------------------
MODULE_CASES = {
    "MSELoss": ({"reduction": "sum"}, "regression"),
    "L1Loss": ({}, "regression"),
    "SmoothL1Loss": ({"beta": 0.3}, "regression"),
    "HuberLoss": ({"delta": 0.7, "reduction": "none"}, "regression"),
    "BCELoss": ({}, "probabilities"),
    "BCEWithLogitsLoss": ({"reduction": "sum"}, "logits"),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("name", list(MODULE_CASES))
def test_loss_modules_match_torch(name, device, dtype):
    options, kind = MODULE_CASES[name]
    x, y = _inputs((5, 3), kind, seed=5)
    ours, theirs = getattr(nn, name)(**options), getattr(torch.nn, name)(**options)
    assert repr(ours) == repr(theirs)
    function_parity(ours, theirs, [x, y], device, dtype)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("options", [{}, {"label_smoothing": 0.2, "ignore_index": 1}, {"weight": True},
                                     {"weight": True, "label_smoothing": 0.1, "reduction": "sum"}],
                         ids=["plain", "smoothing-ignore", "weight", "weight-smoothing-sum"])
def test_cross_entropy_and_nll_modules_match_torch(options, device, dtype):
    rng = np.random.default_rng(6)
    logits, target = rng.standard_normal((6, 4)), rng.integers(0, 4, 6)
    ours_kw, theirs_kw = dict(options), dict(options)
    if options.get("weight"):
        w = rng.random(4) + 0.5
        ours_kw["weight"] = lucid.tensor(w, dtype=getattr(lucid, dtype), device=device)
        theirs_kw["weight"] = to_torch(w, dtype)
    ours, theirs = nn.CrossEntropyLoss(**ours_kw), torch.nn.CrossEntropyLoss(**theirs_kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    function_parity(ours, theirs, [logits, target], device, dtype)
    # probabilities as targets
    probs = rng.dirichlet(np.ones(4), 6)
    smoothing = {"label_smoothing": options.get("label_smoothing", 0.0)}
    weight_kw = {"weight": ours_kw["weight"]} if "weight" in ours_kw else {}
    t_weight_kw = {"weight": theirs_kw["weight"]} if "weight" in theirs_kw else {}
    function_parity(nn.CrossEntropyLoss(**weight_kw, **smoothing),
                    torch.nn.CrossEntropyLoss(**t_weight_kw, **smoothing), [logits, probs], device, dtype,
                    grad=[True, False])
    nll_kw = {k: v for k, v in ours_kw.items() if k != "label_smoothing"}
    t_nll_kw = {k: v for k, v in theirs_kw.items() if k != "label_smoothing"}
    logp = rng.standard_normal((6, 4, 2))
    spatial = rng.integers(0, 4, (6, 2))
    function_parity(nn.NLLLoss(**nll_kw), torch.nn.NLLLoss(**t_nll_kw), [logp, spatial], device, dtype)


def test_weights_are_buffers_that_follow_the_module():
    ours = nn.BCEWithLogitsLoss(weight=lucid.ones(3), pos_weight=lucid.ones(3) * 2)
    theirs = torch.nn.BCEWithLogitsLoss(weight=torch.ones(3), pos_weight=torch.ones(3) * 2)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight", "pos_weight"]
    assert ours.double().pos_weight.dtype is lucid.float64
    assert list(nn.NLLLoss().state_dict()) == list(torch.nn.NLLLoss().state_dict()) == []


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                                  "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy"])
def test_loss_function_signatures_match_torch(name):
    assert_same_signature(getattr(F, name), getattr(TF, name))


@pytest.mark.parametrize("name", ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss",
                                  "BCELoss", "BCEWithLogitsLoss"])
def test_loss_module_signatures_match_torch(name):
    assert_same_signature(getattr(nn, name).__init__, getattr(torch.nn, name).__init__)


@pytest.mark.parametrize("size_average,reduce", [(False, None), (None, False), (True, True)])
def test_deprecated_reduction_flags_decide_with_a_warning(size_average, reduce):
    x, y = _inputs((3, 2), "regression")
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.mse_loss(lucid.tensor(x), lucid.tensor(y), size_average=size_average, reduce=reduce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = TF.mse_loss(torch.tensor(x), torch.tensor(y), size_average=size_average, reduce=reduce)
        module = nn.L1Loss(size_average=size_average, reduce=reduce)
        t_module = torch.nn.L1Loss(size_average=size_average, reduce=reduce)
    close(np.asarray(out), expected.numpy(), "float64")
    assert module.reduction == t_module.reduction


def test_loss_errors_match_torch():
    a, ta = lucid.tensor([0.5, 0.2]), torch.tensor([0.5, 0.2])
    assert_same_error(lambda: F.smooth_l1_loss(a, a, beta=-1.0), lambda: TF.smooth_l1_loss(ta, ta, beta=-1.0))
    assert_same_error(lambda: F.huber_loss(a, a, delta=0.0), lambda: TF.huber_loss(ta, ta, delta=0.0))
    assert_same_error(lambda: F.mse_loss(a, a, reduction="avg"), lambda: TF.mse_loss(ta, ta, reduction="avg"))
    assert_same_error(lambda: F.mse_loss(a, a, weight=lucid.ones(3)), lambda: TF.mse_loss(ta, ta, weight=torch.ones(3)))
    assert_same_error(lambda: F.binary_cross_entropy(a + 1, a), lambda: TF.binary_cross_entropy(ta + 1, ta))
    assert_same_error(lambda: F.binary_cross_entropy(a, a + 1), lambda: TF.binary_cross_entropy(ta, ta + 1))
    with pytest.raises(ValueError, match="that is different to the input size"):
        F.binary_cross_entropy(a, lucid.tensor([0.5]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(a, lucid.tensor([0.5]))
    with pytest.raises(TypeError, match="l1_loss\\(\\): argument 'target' \\(position 2\\) must be Tensor"):
        F.l1_loss(a, [0.5, 0.2])


def test_broadcast_targets_warn_as_torch():
    with pytest.warns(UserWarning, match="Using a target size"):
        out = F.l1_loss(lucid.tensor([[1.0], [2.0]]), lucid.tensor([1.0, 3.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = TF.l1_loss(torch.tensor([[1.0], [2.0]]), torch.tensor([1.0, 3.0]))
    assert out.item() == expected.item()
