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
from nn_parity import DEVICE_DTYPES, assert_same_error, compare_grads, compare_outputs, ids, to_torch
from tolerances import close

torch = pytest.importorskip("torch")
TF = torch.nn.functional

REDUCTIONS = ["mean", "sum", "none"]
SHAPES = {"1-D": (7,), "2-D": (4, 5), "3-D": (2, 3, 4)}


def _pair(array, device, dtype, requires_grad=True):
    ours = lucid.tensor(np.asarray(array), dtype=getattr(lucid, dtype), device=device, requires_grad=requires_grad)
    return ours, to_torch(array, dtype, requires_grad)


def _run(fn_ours, fn_theirs, arrays, device, dtype, seed=0, **options):
    """Both losses on the same numbers; compare the value and the gradients of every float input."""
    pairs = [_pair(a, device, dtype) for a in arrays]
    out = fn_ours(*[p[0] for p in pairs], **options)
    t_out = fn_theirs(*[p[1] for p in pairs], **options)
    compare_outputs(out, t_out, dtype)
    g = np.random.default_rng(seed).standard_normal(tuple(t_out.shape))
    (out * lucid.tensor(g, dtype=out.dtype, device=device)).sum().backward()
    (t_out * torch.tensor(g, dtype=t_out.dtype)).sum().backward()
    compare_grads(pairs, dtype)


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
    _run(getattr(F, name), getattr(TF, name), [x, y], device, dtype, reduction=reduction, **options)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_per_element_weights_match_torch(name, reduction, device, dtype):
    x, y = _inputs((3, 4), "regression")
    w = np.random.default_rng(9).random((3, 4))
    weight, t_weight = _pair(w, device, dtype, requires_grad=False)
    _run(lambda a, b: getattr(F, name)(a, b, reduction=reduction, weight=weight),
         lambda a, b: getattr(TF, name)(a, b, reduction=reduction, weight=t_weight), [x, y], device, dtype)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_matches_torch(weighted, reduction, shape, device, dtype):
    p, y = _inputs(SHAPES[shape], "probabilities", seed=1)
    options = {"reduction": reduction}
    if weighted:
        w = np.random.default_rng(3).random(SHAPES[shape][-1:])  # broadcast along the last dimension
        options_ours = {**options, "weight": lucid.tensor(w, dtype=getattr(lucid, dtype), device=device)}
        options_theirs = {**options, "weight": to_torch(w, dtype)}
    else:
        options_ours = options_theirs = options
    _run(lambda a, b: F.binary_cross_entropy(a, b, **options_ours),
         lambda a, b: TF.binary_cross_entropy(a, b, **options_theirs), [p, y], device, dtype)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("option", ["plain", "weight", "pos_weight", "both"])
def test_binary_cross_entropy_with_logits_matches_torch(option, reduction, shape, device, dtype):
    x, y = _inputs(SHAPES[shape], "logits", seed=2)
    x.flat[0] = 40.0  # saturated logits
    x.flat[-1] = -40.0
    rng = np.random.default_rng(4)
    extra_ours, extra_theirs = {}, {}
    for name in ("weight", "pos_weight"):
        if option in (name, "both"):
            values = rng.random(SHAPES[shape][-1:]) * 3
            extra_ours[name] = lucid.tensor(values, dtype=getattr(lucid, dtype), device=device)
            extra_theirs[name] = to_torch(values, dtype)
    _run(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=reduction, **extra_ours),
         lambda a, b: TF.binary_cross_entropy_with_logits(a, b, reduction=reduction, **extra_theirs),
         [x, y], device, dtype)


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
    _run(ours, theirs, [x, y], device, dtype)


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
    x, tx = _pair(logits, device, dtype)
    out, t_out = ours(x, lucid.tensor(target, device=device)), theirs(tx, torch.tensor(target))
    compare_outputs(out, t_out, dtype)
    out.backward()
    t_out.backward()
    compare_grads([(x, tx)], dtype)
    # probabilities as targets
    probs = rng.dirichlet(np.ones(4), 6)
    x.grad, tx.grad = None, None
    smoothing = {"label_smoothing": options.get("label_smoothing", 0.0)}
    weight_kw = {"weight": ours_kw["weight"]} if "weight" in ours_kw else {}
    t_weight_kw = {"weight": theirs_kw["weight"]} if "weight" in theirs_kw else {}
    out = nn.CrossEntropyLoss(**weight_kw, **smoothing)(x, lucid.tensor(probs, dtype=x.dtype, device=device))
    t_out = torch.nn.CrossEntropyLoss(**t_weight_kw, **smoothing)(tx, to_torch(probs, dtype))
    compare_outputs(out, t_out, dtype)
    nll_kw = {k: v for k, v in ours_kw.items() if k != "label_smoothing"}
    t_nll_kw = {k: v for k, v in theirs_kw.items() if k != "label_smoothing"}
    logp = rng.standard_normal((6, 4, 2))
    lp, tlp = _pair(logp, device, dtype)
    spatial = rng.integers(0, 4, (6, 2))
    out = nn.NLLLoss(**nll_kw)(lp, lucid.tensor(spatial, device=device))
    t_out = torch.nn.NLLLoss(**t_nll_kw)(tlp, torch.tensor(spatial))
    compare_outputs(out, t_out, dtype)
    out.backward()
    t_out.backward()
    compare_grads([(lp, tlp)], dtype)


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
