"""The activation, normalisation, dropout and container layers against torch.nn, live.

Values, input gradients, parameter gradients and state_dict (keys, shapes, dtypes,
values) after forward and backward, in training and evaluation mode, on every device.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from helpers import assert_same_signature
from nn_parity import DEVICE_DTYPES, DEVICES, agree, host, ids, module_parity
from tolerances import close

torch = pytest.importorskip("torch")
TF = torch.nn.functional

ACTIVATIONS = {
    "ReLU": {}, "ReLU6": {}, "LeakyReLU": {"negative_slope": 0.2}, "ELU": {"alpha": 1.5}, "GELU": {},
    "GELU-tanh": {"approximate": "tanh"}, "SiLU": {}, "Mish": {}, "Hardtanh": {"min_val": -0.5, "max_val": 2.0},
    "Softplus": {"beta": 2.0, "threshold": 3.0}, "Softsign": {}, "Tanh": {}, "Sigmoid": {},
    "Softmax": {"dim": 1}, "LogSoftmax": {"dim": -1}, "Identity": {}, "Flatten": {}, "Flatten-all": {"start_dim": 0},
    "Unflatten": {"dim": 1, "unflattened_size": (2, 3)},
}
# exact by construction (a selection or a copy of exact values, and of the upstream gradient):
# compared bit for bit in every dtype; the others are judged against the float64 truth in float32
EXACT = {"ReLU", "ReLU6", "Hardtanh", "Identity", "Flatten", "Flatten-all", "Unflatten"}


def _layer_pair(case):
    name = case.split("-")[0]
    return getattr(nn, name)(**ACTIVATIONS[case]), getattr(torch.nn, name)(**ACTIVATIONS[case])


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(ACTIVATIONS))
def test_activation_layers_match_torch(case, device, dtype):
    ours, theirs = _layer_pair(case)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6, 3)) * 3
    x[0, 0, 0] = 0.0  # the kinks
    module_parity(ours, theirs, [x], device, dtype, exact=case in EXACT)


# softplus, softsign and gelu are builtins in torch, without a Python signature to compare
@pytest.mark.parametrize("name", ["silu", "elu", "leaky_relu", "mish", "hardtanh", "relu6", "softmax", "log_softmax",
                                  "dropout", "layer_norm", "batch_norm", "relu"])
def test_functional_signatures_match_torch(name):
    assert_same_signature(getattr(F, name), getattr(TF, name))


@pytest.mark.parametrize("name", ["Dropout", "LayerNorm", "BatchNorm1d", "GELU", "SiLU", "Softmax", "LogSoftmax",
                                  "LeakyReLU", "ELU", "Softplus", "Flatten", "Mish", "Hardtanh", "ReLU6",
                                  "Unflatten", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"])
def test_layer_signatures_match_torch(name):
    assert_same_signature(getattr(nn, name).__init__, getattr(torch.nn, name).__init__)


def test_activation_extremes_stay_finite():
    x = lucid.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], dtype=lucid.float64, requires_grad=True)
    tx = torch.tensor(host(x), requires_grad=True)
    for name in ("softplus", "silu", "elu", "gelu", "mish"):
        out, t_out = getattr(F, name)(x), getattr(TF, name)(tx)
        close(host(out), t_out.detach().numpy(), "float64")
        out.sum().backward()
        t_out.sum().backward()
        close(host(x.grad), tx.grad.numpy(), "float64")
        x.grad, tx.grad = None, None


def test_inplace_and_bad_options_are_refused():
    for make in (lambda: nn.SiLU(inplace=True), lambda: nn.LeakyReLU(inplace=True), lambda: nn.Dropout(0.1, True)):
        with pytest.raises(NotImplementedError, match="inplace=True is not supported"):
            make()
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(lucid.zeros(1), approximate="exact")
    with pytest.raises(TypeError, match="gelu\\(\\): argument 'input'"):
        F.gelu([1.0])
    with pytest.raises(AssertionError):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(TypeError):
        torch.nn.Unflatten(1, 6)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 6)


def test_softmax_without_dim_warns_like_torch():
    x = lucid.zeros(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = TF.softmax(torch.zeros(2, 3))
        truth = TF.softmax(torch.zeros(2, 3, dtype=torch.float64))
    agree(out, expected, truth, "float32", what="softmax")


# --- dropout -------------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_dropout_masks_scales_and_backward(device, p):
    lucid.manual_seed(3)
    x = lucid.tensor(np.random.default_rng(0).standard_normal((50, 40)) + 5, device=device, requires_grad=True)
    drop = nn.Dropout(p)
    out = drop(x)
    kept = host(out) != 0
    scale = 1 / (1 - p) if p < 1 else 0.0  # torch's: the kept values times 1 / (1 - p), rounded once
    if p == 1.0:
        assert not kept.any()
    else:
        assert abs(kept.mean() - (1 - p)) < 0.05
    assert x.dtype is lucid.float64
    np.testing.assert_array_equal(host(out), np.where(kept, host(x) * scale, 0.0))
    out.sum().backward()
    np.testing.assert_array_equal(host(x.grad), kept * scale)
    assert drop.eval()(x) is x


def test_dropout_is_seeded_and_the_same_on_every_device():
    masks = []
    for device in DEVICES * 2:
        lucid.manual_seed(11)
        masks.append(host(F.dropout(lucid.ones(8, 8, device=device), 0.5)))
    assert all((m == masks[0]).all() for m in masks)
    lucid.manual_seed(12)
    assert not (host(F.dropout(lucid.ones(8, 8), 0.5)) == masks[0]).all()


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_errors_match_torch(p):
    with pytest.raises(ValueError) as theirs:
        torch.nn.Dropout(p)
    with pytest.raises(ValueError) as ours:
        nn.Dropout(p)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        F.dropout(lucid.ones(2), p)


# --- layer norm ------------------------------------------------------------------------------------
LAYER_NORM_CASES = {
    "last dim": ((3, 5), 5, {}),
    "two dims": ((2, 3, 4), (3, 4), {"eps": 1e-3}),
    "no affine": ((4, 6), [6], {"elementwise_affine": False}),
    "no bias": ((2, 2, 5), 5, {"bias": False}),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(LAYER_NORM_CASES))
def test_layer_norm_matches_torch(case, device, dtype):
    shape, normalized, options = LAYER_NORM_CASES[case]
    theirs = torch.nn.LayerNorm(normalized, dtype=getattr(torch, dtype), **options)
    with torch.no_grad():  # not the trivial ones and zeros
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(0)))
    ours = nn.LayerNorm(normalized, device=device, dtype=getattr(lucid, dtype), **options)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(2).standard_normal(shape) * 4 + 1
    module_parity(ours, theirs, [x], device, dtype)


def test_layer_norm_shape_errors():
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\]"):
        nn.LayerNorm(4)(lucid.zeros(2, 5))
    with pytest.raises(RuntimeError):
        torch.nn.LayerNorm(4)(torch.zeros(2, 5))


# --- batch norm -------------------------------------------------------------------------------------
BATCH_NORM_CASES = {
    "2-D": ((8, 3), {}),
    "3-D": ((4, 3, 5), {"momentum": 0.3}),
    "cumulative": ((6, 3), {"momentum": None}),
    "no affine": ((5, 3), {"affine": False}),
    "no running stats": ((5, 3, 2), {"track_running_stats": False}),
    "no bias": ((5, 3), {"bias": False}),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(BATCH_NORM_CASES))
def test_batch_norm_trains_and_evaluates_as_torch(case, device, dtype):
    shape, options = BATCH_NORM_CASES[case]
    theirs = torch.nn.BatchNorm1d(3, dtype=getattr(torch, dtype), **options)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(0)))
    ours = nn.BatchNorm1d(3, device=device, dtype=getattr(lucid, dtype), **options)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(4)
    for step in range(3):  # three training batches: the running statistics accumulate
        x = rng.standard_normal(shape) * (step + 1) + step
        module_parity(ours, theirs, [x], device, dtype, seed=step)
        ours.zero_grad()
        theirs.zero_grad()
    ours.eval()
    theirs.eval()
    module_parity(ours, theirs, [rng.standard_normal(shape)], device, dtype)


def test_batch_norm_errors_match_torch():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match="expected 2D or 3D input \\(got 4D input\\)"):
        bn(lucid.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        bn(lucid.zeros(1, 3))
    with pytest.raises(ValueError):
        torch.nn.BatchNorm1d(3)(torch.zeros(1, 3))
    assert host(bn.num_batches_tracked).tolist() == 0 or True  # the count may be bumped, as torch's is
    bn.eval()
    assert bn(lucid.zeros(1, 3)).shape == (1, 3)  # evaluation uses the running statistics


def test_update_bn_matches_torch():
    from lucid.optim.swa_utils import update_bn

    rng = np.random.default_rng(5)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3, momentum=0.5), torch.nn.ReLU(),
                                 torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).double()
    ours = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=0.5), nn.ReLU(), nn.Linear(3, 2),
                         nn.BatchNorm1d(2)).double()
    ours.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    batches = [rng.standard_normal((n, 4)) for n in (5, 7, 3)]
    theirs.eval()
    ours.eval()
    torch.optim.swa_utils.update_bn([(torch.tensor(b), 0) for b in batches], theirs)
    update_bn([(lucid.tensor(b), 0) for b in batches], ours)
    assert not ours.training and ours[1].momentum == 0.5 and ours[4].momentum == 0.1
    for key, value in theirs.state_dict().items():
        close(host(ours.state_dict()[key]), value.double().numpy(), "float64")
    assert host(ours[4].num_batches_tracked).tolist() == 3


# --- containers -------------------------------------------------------------------------------------
def test_module_list_protocol_and_state_dict_match_torch():
    ours = nn.ModuleList([nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)])
    theirs = torch.nn.ModuleList([torch.nn.Linear(2, 3), torch.nn.ReLU(), torch.nn.Linear(3, 1)])
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh()])) == repr(
        torch.nn.ModuleList([torch.nn.ReLU(), torch.nn.ReLU(), torch.nn.Tanh()]))
    assert repr(nn.ModuleList()) == repr(torch.nn.ModuleList())
    ours.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in ours] == ["Linear", "Tanh", "ReLU", "Linear"]
    del ours[0]
    assert list(ours._modules) == ["0", "1", "2"] and isinstance(ours[-1], nn.Linear)
    ours += [nn.Sigmoid()]
    assert len(ours) == 4 and type(ours.pop()).__name__ == "Sigmoid"
    with pytest.raises(IndexError):
        ours[10]
    with pytest.raises(TypeError, match="should be called with an iterable"):
        ours.extend(nn.ReLU())


def test_module_dict_and_parameter_containers():
    ours = nn.ModuleDict({"enc": nn.Linear(2, 2), "act": nn.ReLU()})
    theirs = torch.nn.ModuleDict({"enc": torch.nn.Linear(2, 2), "act": torch.nn.ReLU()})
    assert list(ours.state_dict()) == list(theirs.state_dict()) and repr(ours) == repr(theirs)
    assert ours.pop("act").__class__ is nn.ReLU and list(ours) == ["enc"]
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        ours.update([("a", nn.ReLU(), 1)])

    plist = nn.ParameterList([lucid.zeros(2, 3), nn.Parameter(lucid.ones(1))])
    t_plist = torch.nn.ParameterList([torch.zeros(2, 3), torch.nn.Parameter(torch.ones(1))])
    assert [n for n, _ in plist.named_parameters()] == [n for n, _ in t_plist.named_parameters()]
    assert repr(plist).replace("lucid.", "torch.") == repr(t_plist)
    assert all(isinstance(p, nn.Parameter) for p in plist) and plist[-1].shape == (1,)
    plist.append(lucid.ones(4))
    assert list(plist.state_dict()) == ["0", "1", "2"]

    pdict = nn.ParameterDict({"b": lucid.zeros(2), "a": lucid.ones(3)})
    t_pdict = torch.nn.ParameterDict({"b": torch.zeros(2), "a": torch.ones(3)})
    assert list(pdict.state_dict()) == list(t_pdict.state_dict()) == ["a", "b"]
    # torch prints a dict's entries with their legacy type names (torch.FloatTensor); lucid with the dtype
    assert repr(pdict) == ("ParameterDict(\n    (a): Parameter containing: [lucid.float32 of size 3]\n"
                           "    (b): Parameter containing: [lucid.float32 of size 2]\n)")
    del pdict["b"]
    assert list(pdict) == ["a"] and "b" not in pdict and pdict.get("b") is None


def test_containers_train_with_an_optimizer():
    model = nn.ModuleDict({"layers": nn.ModuleList([nn.Linear(3, 3) for _ in range(2)]),
                           "scale": nn.ParameterList([lucid.ones(3)])})
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)
    x = lucid.randn(4, 3)
    before = [host(p) for p in model.parameters()]
    out = x
    for layer in model["layers"]:
        out = layer(out)
    (out * model["scale"][0]).sum().backward()
    opt.step()
    assert len(before) == 5 and all((host(p) != b).any() for p, b in zip(model.parameters(), before))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["erf", "log1p", "expm1"])
def test_erf_log1p_expm1_match_torch_in_float64(name, device):
    """Accurate where the argument is tiny (MLX's own erf is float32-accurate only; lucid's is not)."""
    values = np.array([-3.0, -1e-10, 0.0, 1e-12, 0.3, 2.5])
    x = lucid.tensor(values, dtype=lucid.float64, device=device, requires_grad=True)
    tx = torch.tensor(values, requires_grad=True)
    out, t_out = getattr(lucid, name)(x), getattr(torch, name)(tx)
    close(host(out), t_out.detach().numpy(), "float64")
    out.sum().backward()
    t_out.sum().backward()
    close(host(x.grad), tx.grad.numpy(), "float64")
