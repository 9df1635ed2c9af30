"""lucid.nn: Module bookkeeping, conversions that keep Parameter identity, state dicts, layers.

Where torch can say what is right (reprs, error messages, layer outputs and gradients), it
is asked live; tolerances come from ``tolerances.py``, and float32 results are judged against
the float64 truth of the same computation, torch's error the ceiling (``nn_parity``).
"""

from __future__ import annotations

import copy
import math
import re
from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from nn_parity import agree, function_parity, host, module_parity, needs_truth, truth_of
from tolerances import CORRECTLY_ROUNDED, judge, normwise_ulps

GPU = lucid.is_available("gpu")
needs_gpu = pytest.mark.skipif(not GPU, reason="MLX (the gpu device) is not installed")


def parity_dtype(device):
    """float64 on cpu (parity at 1e-12), float32 on gpu (what MLX runs on an Apple GPU)."""
    return lucid.float64 if device == "cpu" else lucid.float32


def exact(t) -> np.ndarray:
    """The values with their own dtype, for bit-for-bit comparisons."""
    return np.asarray(t.detach())


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(6, 4)
        self.body = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
        self.register_buffer("steps", lucid.tensor([0]))
        self.register_buffer("scale", lucid.ones(3))

    def forward(self, idx):
        return self.body(self.embed(idx)) * self.scale


# --- registration --------------------------------------------------------------------------
def test_attributes_are_routed_into_ordered_registries():
    m = nn.Module()
    w = nn.Parameter(lucid.zeros(2))
    m.w = w
    m.child = nn.ReLU()
    m.register_buffer("buf", lucid.ones(1))
    m.plain = 3
    assert list(m._parameters) == ["w"] and m._parameters["w"] is w
    assert list(m._modules) == ["child"]
    assert list(m._buffers) == ["buf"]
    assert m.w is w and isinstance(m.child, nn.ReLU) and m.plain == 3
    assert "plain" in m.__dict__ and "w" not in m.__dict__
    m.buf = lucid.zeros(1)  # a registered buffer name takes a new tensor
    assert m._buffers["buf"].tolist() == [0.0]
    assert {"w", "child", "buf"} <= set(dir(m))


def test_reassignment_moves_names_between_registries():
    m = nn.Module()
    m.x = nn.ReLU()
    m.x = nn.Parameter(lucid.zeros(1))
    assert "x" not in m._modules and "x" in m._parameters
    m.x = None  # None keeps the slot, as torch does
    assert m._parameters["x"] is None and m.x is None
    assert list(m.parameters()) == []
    del m.x
    assert "x" not in m._parameters
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'x'"):
        m.x


def test_delattr_removes_each_kind():
    m = TwoLayer()
    del m.embed
    del m.steps
    assert "embed" not in m._modules and "steps" not in m._buffers
    m.other = 1
    del m.other
    assert not hasattr(m, "other")


def test_registration_errors_match_torch():
    m = nn.Module()
    m.w = nn.Parameter(lucid.zeros(1))
    with pytest.raises(TypeError, match=re.escape("cannot assign 'lucid.Tensor' as parameter 'w' "
                                                  "(lucid.nn.Parameter or None expected)")):
        m.w = lucid.zeros(1)
    m.register_buffer("b", lucid.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'b'"):
        m.b = 5
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'c'"):
        m.register_buffer("c", 5)
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", lucid.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", lucid.zeros(1))
    with pytest.raises(KeyError, match="be empty string"):
        m.register_buffer("", lucid.zeros(1))
    with pytest.raises(TypeError, match="object to parameter 'p'"):
        m.register_parameter("p", lucid.zeros(1))
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("q", 5)
    m.child = nn.ReLU()
    with pytest.raises(TypeError, match="as child module 'child'"):
        m.child = 3

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(lucid.zeros(1))

    with pytest.raises(AttributeError, match=re.escape("cannot assign parameters before Module.__init__() call")):
        Forgot()
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(1)


# --- walking the tree ------------------------------------------------------------------------
def test_shared_parameters_and_modules_are_listed_once():
    shared = nn.Linear(3, 3)
    net = nn.Sequential(shared, nn.ReLU(), shared, nn.Linear(3, 2))
    net[3].weight = shared.weight  # a Parameter shared by two different modules
    params = list(net.parameters())
    assert len(params) == 3
    assert len({id(p) for p in params}) == 3
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias", "3.bias"]
    assert [n for n, _ in net.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias", "3.weight", "3.bias"]
    assert [n for n, _ in net.named_modules()] == ["", "0", "1", "3"]
    assert len(list(net.children())) == 3
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.0.weight"


def test_recurse_false_gives_own_members_only():
    m = TwoLayer()
    assert list(m.parameters(recurse=False)) == []
    assert [n for n, _ in m.named_buffers(recurse=False)] == ["steps", "scale"]
    assert [n for n, _ in m.named_parameters()] == [
        "embed.weight", "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias"]
    assert [type(c).__name__ for c in m.children()] == ["Embedding", "Sequential"]
    assert len(list(m.modules())) == 6


def test_train_eval_propagate_and_validate():
    m = TwoLayer()
    assert m.eval() is m
    assert not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")


def test_apply_visits_children_first():
    seen = []
    TwoLayer().apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Embedding", "Linear", "Tanh", "Linear", "Sequential", "TwoLayer"]


def test_requires_grad_toggles_every_parameter():
    m = TwoLayer()
    assert m.requires_grad_(False) is m
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    assert all(p.requires_grad for p in m.parameters())


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad(device, set_to_none):
    m = TwoLayer().to(device)
    m(lucid.tensor([1, 2, 3], device=device)).sum().backward()
    grads = {id(p): p.grad for p in m.parameters()}
    assert all(g is not None for g in grads.values())
    m.zero_grad(set_to_none=set_to_none)
    for p in m.parameters():
        if set_to_none:
            assert p.grad is None
        else:
            assert p.grad is grads[id(p)]
            assert not p.grad.requires_grad
            assert not host(p.grad).any()


def test_zero_grad_in_place_leaves_later_accumulation_right(device):
    layer = nn.Linear(2, 1).to(device)
    x = lucid.tensor([[1.0, 2.0]], device=device)
    layer(x).sum().backward()
    layer.zero_grad(set_to_none=False)
    layer(x).sum().backward()
    assert host(layer.weight.grad).tolist() == [[1.0, 2.0]]


# --- conversions keep Parameter identity --------------------------------------------------
F32, F64, F16 = lucid.float32, lucid.float64, lucid.float16
# name: (conversion, the device and dtype the parameters end with)
CONVERSIONS = {
    "to(float64)": (lambda m: m.to(F64), "cpu", F64),
    "double": (lambda m: m.double(), "cpu", F64),
    "half": (lambda m: m.half(), "cpu", F16),
    "float": (lambda m: m.double().float(), "cpu", F32),
    "to(cpu)": (lambda m: m.to("cpu"), "cpu", F32),
    "cpu": (lambda m: m.cpu(), "cpu", F32),
    "to(gpu)": (lambda m: m.to("gpu"), "gpu", F32),
    "gpu": (lambda m: m.gpu(), "gpu", F32),
    "to(gpu, float64)": (lambda m: m.to("gpu", F64), "gpu", F64),
    "to(device=gpu, dtype=float16)": (lambda m: m.to(device="gpu", dtype=F16), "gpu", F16),
    "to(tensor on gpu)": (lambda m: m.to(lucid.zeros(1, dtype=F64, device="gpu")), "gpu", F64),
    "gpu then cpu": (lambda m: m.gpu().cpu(), "cpu", F32),
    "gpu, half, then double": (lambda m: m.gpu().half().double(), "gpu", F64),
}


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_conversion_keeps_parameter_and_grad_objects(name):
    if "gpu" in name and not GPU:
        pytest.skip("needs MLX")
    m = TwoLayer()
    m(lucid.tensor([0, 1, 5])).sum().backward()
    params = list(m.parameters())
    grads = [p.grad for p in params]
    before = [host(p) for p in params]
    convert, device, dtype = CONVERSIONS[name]
    assert convert(m) is m
    after = list(m.parameters())
    assert all(a is b for a, b in zip(after, params))
    assert m.embed.weight is params[0] and m.body[0].weight is params[1]
    for p, g, old in zip(params, grads, before):
        assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad
        assert (p.device, p.dtype) == (device, dtype)
        assert p.grad is g and (g.device, g.dtype) == (device, dtype)
        # a cast is exact, or one float16 rounding (numpy's, round to nearest even) on the way
        expected = old.astype(np.float16) if dtype is F16 or "half" in name else old
        assert host(p).dtype == expected.astype(host(p).dtype).dtype
        np.testing.assert_array_equal(host(p), expected.astype(host(p).dtype))
    # integer buffers move but keep their dtype; float buffers follow the cast
    assert (m.steps.device, m.steps.dtype) == (device, lucid.int64)
    assert (m.scale.device, m.scale.dtype) == (device, dtype)


@needs_gpu
def test_training_continues_after_moving_to_gpu():
    """The point of identity: a list of parameters taken before the move still trains the model."""
    m = TwoLayer()
    params = list(m.parameters())
    idx = lucid.tensor([1, 2, 3])
    m(idx).sum().backward()
    m.gpu()
    m.zero_grad()
    m(idx.to("gpu")).sum().backward()
    with lucid.no_grad():
        for p in params:
            p.sub_(p.grad * 0.1)
    assert all(p.grad.device == "gpu" for p in params)
    assert all(p.device == "gpu" for p in m.parameters())


def test_module_to_rejects_integer_dtypes_and_bad_arguments():
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point dtypes"):
        nn.Linear(2, 2).to(lucid.int64)
    with pytest.raises(TypeError, match="unexpected keyword"):
        nn.Linear(2, 2).to(colour="red")
    with pytest.raises(ValueError, match="unknown device"):
        nn.Linear(2, 2).to("tpu")


def test_conversion_to_the_current_device_and_dtype_changes_nothing():
    layer = nn.Linear(2, 2)
    version = layer.weight._version
    storage = layer.weight.detach().numpy()
    layer.to("cpu").float()
    assert layer.weight._version == version
    assert np.shares_memory(layer.weight.detach().numpy(), storage)


def test_integer_buffers_skip_float_casts_but_move():
    m = nn.Module()
    m.register_buffer("count", lucid.tensor([3], dtype=lucid.int32))
    m.half()
    assert m.count.dtype is lucid.int32
    if GPU:
        m.gpu()
        assert (m.count.device, m.count.dtype) == ("gpu", lucid.int32)


# --- state dicts ---------------------------------------------------------------------------------
def test_state_dict_names_order_and_detached_values():
    m = TwoLayer()
    m.register_buffer("scratch", lucid.zeros(1), persistent=False)
    sd = m.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["steps", "scale", "embed.weight", "body.0.weight", "body.0.bias", "body.2.weight",
                        "body.2.bias"]
    assert all(not isinstance(v, nn.Parameter) and not v.requires_grad for v in sd.values())
    kept = m.state_dict(keep_vars=True)
    assert kept["embed.weight"] is m.embed.weight
    assert list(m.state_dict(prefix="net.")) == ["net." + k for k in sd]


def test_state_dict_shares_storage_on_cpu_as_torch_does():
    layer = nn.Linear(2, 2)
    sd = layer.state_dict()
    with lucid.no_grad():
        layer.weight.add_(1.0)
    assert host(sd["weight"]).tolist() == host(layer.weight).tolist()


def test_state_dict_matches_torch_key_order():
    torch = pytest.importorskip("torch")

    class T(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(6, 4)
            self.body = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
            self.register_buffer("steps", torch.tensor([0]))
            self.register_buffer("scale", torch.ones(3))

    assert list(TwoLayer().state_dict()) == list(T().state_dict())


def test_state_dict_round_trip(device):
    lucid.manual_seed(1)
    source = TwoLayer()
    lucid.manual_seed(2)
    target = TwoLayer().to(device)
    params = list(target.parameters())
    idx = lucid.tensor([[0, 5], [3, 3]])
    assert not np.allclose(host(source(idx)), host(target(idx.to(device))))
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert all(a is b for a, b in zip(target.parameters(), params))
    assert all(p.device == device and p.dtype is lucid.float32 for p in params)
    for key, value in source.state_dict().items():
        np.testing.assert_array_equal(host(target.state_dict()[key]), host(value), err_msg=key)
    # the same weights on the same device compute the same numbers, bit for bit
    same = copy.deepcopy(source).to(device)
    np.testing.assert_array_equal(host(target(idx.to(device))), host(same(idx.to(device))))


def test_load_state_dict_casts_to_the_parameter_dtype(device):
    layer = nn.Linear(2, 2).to(device, lucid.float64)
    weight = layer.weight
    layer.load_state_dict({"weight": lucid.ones(2, 2), "bias": lucid.zeros(2)})
    assert layer.weight is weight and weight.dtype is lucid.float64 and weight.device == device
    assert host(weight).tolist() == [[1.0, 1.0], [1.0, 1.0]]


def _snapshot(module):
    return {k: exact(v).copy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("bad", [
    {"weight": lucid.zeros(3, 3)},                              # wrong shape and missing bias
    {"weight": lucid.zeros(3, 2), "bias": lucid.zeros(3), "extra": lucid.zeros(1)},
    {"weight": lucid.zeros(3, 2)},                              # missing bias only
    {"weight": 5, "bias": lucid.zeros(3)},                      # not a tensor
    {"weight": lucid.zeros(3, 2), "bias": lucid.zeros(4)},      # the second entry is wrong
])
def test_failed_load_leaves_the_module_unchanged(bad):
    layer = nn.Linear(2, 3)
    before = _snapshot(layer)
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Linear"):
        layer.load_state_dict(bad)
    after = _snapshot(layer)
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_load_errors_match_torch_message():
    torch = pytest.importorskip("torch")
    bad_l = {"weight": lucid.zeros(3, 3), "foo": lucid.zeros(1)}
    bad_t = {"weight": torch.zeros(3, 3), "foo": torch.zeros(1)}
    with pytest.raises(RuntimeError) as ours:
        nn.Linear(2, 3).load_state_dict(bad_l)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Linear(2, 3).load_state_dict(bad_t)
    expected = re.sub(r"torch\.Size\(\[(\d+), (\d+)\]\)", r"(\1, \2)", str(theirs.value))
    assert str(ours.value) == expected


def test_non_strict_load_reports_keys_and_copies_the_rest():
    layer = nn.Linear(2, 3)
    result = layer.load_state_dict({"weight": lucid.zeros(3, 2), "other": lucid.ones(1)}, strict=False)
    assert result == (["bias"], ["other"])
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    assert not host(layer.weight).any()
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        layer.load_state_dict({"weight": lucid.zeros(2, 2)}, strict=False)


def test_load_state_dict_type_errors():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        nn.Linear(2, 2).load_state_dict([("weight", lucid.zeros(2, 2))])


def test_load_state_dict_of_a_shared_parameter_writes_both_names():
    layer = nn.Linear(2, 2)
    net = nn.Sequential(layer, layer)
    sd = net.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    net.load_state_dict({k: lucid.ones(v.shape) for k, v in sd.items()})
    assert host(layer.weight).tolist() == [[1.0, 1.0], [1.0, 1.0]]


# --- printing --------------------------------------------------------------------------------------
def test_repr_matches_torch():
    torch = pytest.importorskip("torch")
    ours = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(
        nn.Tanh(), nn.Embedding(4, 2, padding_idx=1, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)),
        nn.Sigmoid(), nn.Linear(3, 1, bias=False), nn.Embedding(5, 2))
    tn = torch.nn
    theirs = tn.Sequential(tn.Linear(2, 3), tn.ReLU(), tn.Sequential(
        tn.Tanh(), tn.Embedding(4, 2, padding_idx=1, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)),
        tn.Sigmoid(), tn.Linear(3, 1, bias=False), tn.Embedding(5, 2))
    assert repr(ours) == repr(theirs)


# --- Sequential --------------------------------------------------------------------------------------
def test_sequential_container_protocol():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    net = nn.Sequential(a, b)
    assert len(net) == 2 and net[0] is a and net[-1] is b and list(net) == [a, b]
    assert net.append(c) is net and net[2] is c
    sliced = net[1:]
    assert isinstance(sliced, nn.Sequential) and list(sliced) == [b, c]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        net[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        net[-4]
    net[1] = nn.Tanh()
    assert isinstance(net[1], nn.Tanh)
    del net[0]
    assert list(net._modules) == ["0", "1"] and net[1] is c
    named = nn.Sequential(OrderedDict([("first", a), ("act", b)]))
    assert list(named._modules) == ["first", "act"] and named.act is b


def test_sequential_forward_chains(device):
    lucid.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to(device)
    x = lucid.randn(5, 3, device=device)
    expected = net[2](net[1](net[0](x)))
    assert host(net(x)).tolist() == host(expected).tolist()


# --- Linear ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fan_in", [1, 3, 16, 250])
def test_linear_init_bounds_and_seed(fan_in):
    lucid.manual_seed(7)
    layer = nn.Linear(fan_in, 40)
    bound = 1 / math.sqrt(fan_in)
    w, b = host(layer.weight), host(layer.bias)
    assert w.shape == (40, fan_in) and b.shape == (40,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    # drawn from lucid.rand: the same seed gives the same numbers, weight first, then bias, each
    # U(-bound, bound) in float64 rounded once to float32 (kaiming's bound is 1 / sqrt(fan_in) up to
    # float64 rounding): within half an ulp of the largest
    lucid.manual_seed(7)
    u_w, u_b = host(lucid.rand(40, fan_in, dtype=lucid.float64)), host(lucid.rand(40, dtype=lucid.float64))
    assert normwise_ulps(w, (u_w * 2 - 1) * bound, "float32") <= CORRECTLY_ROUNDED
    assert normwise_ulps(b, (u_b * 2 - 1) * bound, "float32") <= CORRECTLY_ROUNDED


def test_linear_init_is_uniform_over_the_whole_interval():
    lucid.manual_seed(3)
    w = host(nn.Linear(100, 400).weight) * 10  # bound 0.1, scaled to 1
    assert abs(w.mean()) < 0.01
    assert abs(w.var() - 1 / 3) < 0.01       # the variance of U(-1, 1)
    assert w.min() < -0.999 and w.max() > 0.999


def test_linear_init_matches_torch_distribution():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.Linear(64, 500)
    t_bound = max(theirs.weight.abs().max().item(), theirs.bias.abs().max().item())
    ours = nn.Linear(64, 500)
    o_bound = max(np.abs(host(ours.weight)).max(), np.abs(host(ours.bias)).max())
    assert o_bound <= 1 / 8 and t_bound <= 1 / 8
    assert abs(o_bound - t_bound) < 1e-3


def test_linear_options(device):
    layer = nn.Linear(3, 2, bias=False, device=device, dtype=lucid.float64)
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    assert (layer.weight.device, layer.weight.dtype) == (device, lucid.float64)
    assert repr(layer) == "Linear(in_features=3, out_features=2, bias=False)"
    assert nn.Linear(0, 2).bias.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 4, 3)])
def test_linear_matches_torch(device, shape):
    torch = pytest.importorskip("torch")
    dtype = parity_dtype(device)
    layer = nn.Linear(3, 2, device=device, dtype=dtype)
    t_layer = torch.nn.Linear(3, 2).to(getattr(torch, dtype.name))
    x = np.random.default_rng(0).standard_normal(shape)
    # torch's weights loaded; outputs, input and weight gradients and the state compared
    module_parity(layer, t_layer, [x], device, dtype.name)


@pytest.mark.parametrize("frozen", ["input", "weight", "bias", "no bias"])
def test_linear_gradients_match_torch_with_some_inputs_needing_none(device, frozen):
    # F.linear records one node (torch's addmm); its backward skips what needs no gradient
    torch = pytest.importorskip("torch")
    dtype = parity_dtype(device)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((5, 3)), rng.standard_normal((4, 3)), rng.standard_normal(4)]
    grad = [True, True, True]
    if frozen == "no bias":
        arrays, grad = arrays[:2], grad[:2]
    else:
        grad[["input", "weight", "bias"].index(frozen)] = False
    run = function_parity(lambda *a: F.linear(*a, *[None] * (3 - len(a))), torch.nn.functional.linear, arrays,
                          device, dtype.name, grad=grad)
    assert run.ours.grad_fn.name == ("MmBackward0" if frozen == "no bias" else "AddmmBackward0")
    assert all(t.grad is None for t, wanted in zip(run.inputs, grad) if not wanted)


# --- activations -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ReLU", "Tanh", "Sigmoid"])
def test_activations_match_torch(device, name):
    torch = pytest.importorskip("torch")
    x = np.array([-30.0, -2.0, -0.5, 0.0, 0.5, 2.0, 30.0])
    # relu selects: exact, its gradient too; tanh and sigmoid judged in float32
    module_parity(getattr(nn, name)(), getattr(torch.nn, name)(), [x], device, parity_dtype(device).name,
                  exact=name == "ReLU")


def test_relu_inplace_is_refused_not_ignored():
    with pytest.raises(NotImplementedError, match="in-place"):
        nn.ReLU(inplace=True)
    with pytest.raises(NotImplementedError, match="in-place"):
        F.relu(lucid.zeros(1), inplace=True)


# --- Embedding (the module; F.embedding itself is in test_nn_functional.py) -----------------------------
def test_embedding_init_is_seeded_normal_with_zero_padding_row(device):
    lucid.manual_seed(5)
    emb = nn.Embedding(7, 3, padding_idx=2, device=device)
    lucid.manual_seed(5)
    expected = host(lucid.randn(7, 3))
    expected[2] = 0
    assert host(emb.weight).tolist() == expected.tolist()
    assert emb.weight.device == device and emb.weight.dtype is lucid.float32
    lucid.manual_seed(0)
    big = host(nn.Embedding(500, 40).weight)
    assert abs(big.mean()) < 0.02 and abs(big.std() - 1) < 0.02


def test_embedding_padding_idx_normalisation_and_errors():
    torch = pytest.importorskip("torch")
    assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
    assert nn.Embedding(5, 2, padding_idx=-5).padding_idx == 0
    for bad in (5, -6):
        # torch asserts; lucid raises ValueError with torch's words and the values
        with pytest.raises(ValueError) as ours:
            nn.Embedding(5, 2, padding_idx=bad)
        with pytest.raises(AssertionError) as theirs:
            torch.nn.Embedding(5, 2, padding_idx=bad)
        assert str(ours.value).startswith(str(theirs.value))
        assert str(ours.value).endswith(f"padding_idx={bad} for num_embeddings=5")
    for bad in (1.5, "0", True):
        with pytest.raises(TypeError, match="padding_idx must be an int or None"):
            nn.Embedding(5, 2, padding_idx=bad)


def test_embedding_padding_row_gets_no_gradient_and_stays(device):
    emb = nn.Embedding(5, 3, padding_idx=1, device=device)
    out = emb(lucid.tensor([[1, 2, 1], [0, 1, 4]], device=device))
    assert host(out[0, 0]).tolist() == [0.0, 0.0, 0.0]
    (out * 3).sum().backward()
    grad = host(emb.weight.grad)
    assert grad[1].tolist() == [0.0, 0.0, 0.0]
    assert grad[[0, 2, 4]].tolist() == [[3.0] * 3] * 3 and grad[3].tolist() == [0.0] * 3
    with lucid.no_grad():
        emb.weight.sub_(emb.weight.grad)
    assert host(emb.weight[1]).tolist() == [0.0, 0.0, 0.0]


def test_embedding_sparse_gives_a_sparse_gradient():
    emb = nn.Embedding(4, 2, sparse=True)
    assert "sparse=True" in repr(emb)
    emb(lucid.tensor([3, 1, 3])).sum().backward()
    assert emb.weight.grad.is_sparse and emb.weight.grad.indices().tolist() == [[3, 1, 3]]
    frozen = nn.Embedding.from_pretrained(lucid.zeros(4, 2), freeze=False, sparse=True)
    frozen(lucid.tensor([0])).sum().backward()
    assert frozen.weight.grad.is_sparse


def test_embedding_from_pretrained():
    table = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    frozen = nn.Embedding.from_pretrained(table, padding_idx=0)
    assert not frozen.weight.requires_grad
    assert host(frozen.weight).tolist() == host(table).tolist()  # the padding row is not zeroed
    assert frozen.padding_idx == 0 and (frozen.num_embeddings, frozen.embedding_dim) == (3, 2)
    out = frozen(lucid.tensor([2, 0]))
    assert host(out).tolist() == [[5.0, 6.0], [1.0, 2.0]] and not out.requires_grad
    trainable = nn.Embedding.from_pretrained(table, freeze=False)
    trainable(lucid.tensor([2, 2])).sum().backward()
    assert host(trainable.weight.grad).tolist() == [[0, 0], [0, 0], [2, 2]]
    with pytest.raises(ValueError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(lucid.zeros(3))
    with pytest.raises(ValueError, match="Shape of weight does not match"):
        nn.Embedding(3, 3, _weight=table)
    assert not nn.Embedding(3, 2, _weight=table, _freeze=True).weight.requires_grad


def test_embedding_max_norm_module_renormalises_looked_up_rows_in_place(device):
    torch = pytest.importorskip("torch")
    lucid.manual_seed(0)
    emb = nn.Embedding(8, 4, max_norm=0.5, device=device)
    weight = emb.weight
    before = exact(weight).copy()
    t_emb, truth = (torch.nn.Embedding.from_pretrained(torch.tensor(before, dtype=dtype), max_norm=0.5)
                    for dtype in (torch.float32, torch.float64))
    version = weight._version
    emb(lucid.tensor([[1, 3], [3, 6]], device=device))
    for module in (t_emb, truth):
        module(torch.tensor([[1, 3], [3, 6]]))
    after = exact(weight)
    assert emb.weight is weight and weight._version > version
    untouched = [0, 2, 4, 5, 7]
    assert np.array_equal(after[untouched], before[untouched])  # bit for bit
    # torch's rule: row *= max_norm / (norm + 1e-7), so the new norm is just under 0.5; the norms
    # of the float32 rows judged against the rule in float64, torch's the ceiling
    old_norms, norms, t_norms = (np.linalg.norm(host(v)[[1, 3, 6]], axis=1) for v in (before, after, t_emb.weight))
    judge(norms, t_norms, old_norms * (0.5 / (old_norms + 1e-7)), "float32", what="renormalised norms")
    agree(after, t_emb.weight, truth.weight, "float32", what="weight")


def test_embedding_module_to_gpu_keeps_weight(device):
    emb = nn.Embedding(4, 2)
    weight = emb.weight
    emb.to(device)
    assert emb.weight is weight and weight.device == device
    emb(lucid.tensor([1, 1], device=device)).sum().backward()
    assert weight.grad.device == device


# --- a small model trained with plain SGD against torch ----------------------------------------
def test_training_loop_matches_torch(device):
    torch = pytest.importorskip("torch")
    dtype = parity_dtype(device)
    t_dtype = getattr(torch, dtype.name)
    lucid.manual_seed(0)
    ours = nn.Sequential(nn.Embedding(10, 6, padding_idx=0), nn.Tanh(), nn.Linear(6, 5), nn.ReLU(),
                         nn.Linear(5, 4)).to(device, dtype)
    tn = torch.nn
    theirs = tn.Sequential(tn.Embedding(10, 6, padding_idx=0), tn.Tanh(), tn.Linear(6, 5), tn.ReLU(),
                           tn.Linear(5, 4)).to(t_dtype)
    theirs.load_state_dict({k: torch.tensor(host(v), dtype=t_dtype) for k, v in ours.state_dict().items()})
    # in float32, the same steps in float64 from the same float32 weights: the truth
    truth = truth_of(theirs) if needs_truth(dtype.name) else None
    rng = np.random.default_rng(1)
    lr = 0.5
    for _ in range(5):
        idx = rng.integers(0, 10, size=(8,))
        target = rng.integers(0, 4, size=(8,))
        loss = F.cross_entropy(ours(lucid.tensor(idx, device=device)), lucid.tensor(target, device=device),
                               label_smoothing=0.1)
        models = [model for model in (theirs, truth) if model is not None]
        t_losses = [torch.nn.functional.cross_entropy(model(torch.tensor(idx)), torch.tensor(target),
                                                      label_smoothing=0.1) for model in models]
        agree(loss.item(), t_losses[0].item(), t_losses[-1].item(), dtype.name, what="loss")
        ours.zero_grad()
        loss.backward()
        with lucid.no_grad():
            for p in ours.parameters():
                p.sub_(p.grad * lr)
        for model, t_loss in zip(models, t_losses):
            model.zero_grad()
            t_loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p.sub_(p.grad * lr)
    truths = list(truth.parameters()) if truth is not None else [None] * len(list(theirs.parameters()))
    for (name, p), t_p, h_p in zip(ours.named_parameters(), theirs.parameters(), truths):
        agree(p, t_p, h_p, dtype.name, what=name)


def test_deepcopy_and_pickle_keep_tied_parameters_tied(device):
    import copy
    import pickle

    layer = nn.Linear(3, 3)
    net = nn.Sequential(layer, nn.Tanh(), layer).to(device)
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert clone[0].weight is clone[2].weight and clone[0].weight is not layer.weight
        assert len(list(clone.parameters())) == 2
        assert clone[0].weight.device == device
        assert np.array_equal(exact(clone[0].weight), exact(layer.weight))
