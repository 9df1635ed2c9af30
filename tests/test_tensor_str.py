"""Tensors print as torch 2.13 prints them, character for character, live against torch.

A few hundred tensors drawn with a fixed seed (every dtype, 0-d to 4-D, empty, across the
summary threshold; integer-valued, small and large magnitudes, mixed, nan/inf/-0.0; leaves
that require grad and results with a ``grad_fn``) are printed by both, under the default
options and under variations of ``set_printoptions``. On the gpu, torch's text is its cpu text
with its default device moved elsewhere, so that it names the cpu (``device='cpu'``, as long
as ``device='gpu'``): the same layout, the same suffixes. Where lucid names a dtype or a
layout, it says ``lucid.`` where torch says ``torch.``. The ``grad_fn`` names are checked
against torch's for every case of ``tests/op_cases.py`` and the common ``nn.functional`` ops.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import lucid
import lucid.nn.functional as F
from lucid import nn
from lucid._tensor_str import get_printoptions, printoptions
from op_cases import CASES

DTYPES = ["float32", "float64", "float16", "int64", "int32", "bool"]
SHAPES = [(), (0,), (0, 3), (2, 0, 4), (1,), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 3), (30,), (1000,), (1001,),
          (4, 300), (40, 30), (3, 7, 50), (2, 2, 2, 130)]
KINDS = ["normal", "integers", "small", "large", "mixed", "specials", "zeros", "ties", "huge_integers"]
OPTIONS = [{}, {"precision": 2}, {"precision": 7}, {"threshold": 5}, {"threshold": 30, "edgeitems": 1},
           {"edgeitems": 0, "threshold": 10}, {"linewidth": 40}, {"linewidth": 120}, {"sci_mode": True},
           {"sci_mode": False}, {"profile": "short"}, {"profile": "full", "linewidth": 100}]


def _values(rng, shape, kind):
    """float64 host values of ``shape`` of one kind."""
    n = math.prod(shape)
    if kind == "integers":
        data = rng.integers(-20, 20, n).astype(float)
    elif kind == "small":
        data = rng.standard_normal(n) * 1e-6
    elif kind == "large":
        data = rng.standard_normal(n) * 1e9
    elif kind == "mixed":
        data = rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)
    elif kind == "specials":
        data = rng.standard_normal(n)
        special = rng.random(n) < 0.3
        data[special] = rng.choice([np.nan, np.inf, -np.inf, -0.0, 0.0], size=n)[special]
    elif kind == "zeros":
        data = np.zeros(n) * rng.choice([1.0, -1.0], n)
    elif kind == "ties":  # halfway between printed digits, as far as the dtype allows
        data = rng.integers(-400, 400, n) * 0.00005 + 0.00005
    elif kind == "huge_integers":
        data = rng.integers(-10**6, 10**6, n) * 1e6
    else:
        data = rng.standard_normal(n) * rng.choice([1, 3, 50])
    return data.reshape(shape)


def _cases():
    """``(values, dtype, grad, options)`` for the tensors printed: grad is "none", "leaf" or "node"."""
    rng = np.random.default_rng(2413)
    for shape in SHAPES:
        for kind in KINDS:
            dtype = DTYPES[rng.integers(len(DTYPES))]
            grad = rng.choice(["none", "leaf", "node"]) if dtype.startswith("float") else "none"
            options = OPTIONS[rng.integers(len(OPTIONS))] if rng.random() < 0.5 else {}
            yield _values(rng, shape, kind), dtype, str(grad), options


CASES_PRINTED = list(_cases())


def _make(m, values, dtype, grad, device):
    """The tensor of module ``m`` (torch or lucid) with ``values``: ``x * 1`` for a node."""
    if dtype == "bool":
        host = values > 0
    elif dtype.startswith("int"):
        host = np.nan_to_num(values, posinf=7, neginf=-7).clip(-2**31, 2**31 - 1).astype(dtype)
    else:
        with np.errstate(over="ignore"):  # large values are inf in float16, as in torch
            host = values.astype(dtype)
    x = m.tensor(host.tolist() if host.ndim else host.item(), dtype=getattr(m, dtype), device=device)
    if grad != "none":
        x.requires_grad_(True)
    return x * 1 if grad == "node" else x


@pytest.fixture
def torch_on(device, monkeypatch):
    """Torch's printing as it would be of a tensor on a device other than its default one."""
    if device == "gpu":
        monkeypatch.setattr(torch._C, "_get_default_device", lambda: "meta")
    return lambda text: text.replace("torch.", "lucid.").replace("device='cpu'", "device='gpu'")


@pytest.fixture
def options():
    """Set print options on both sides; the defaults come back after the test."""
    def set_both(**kwargs):
        torch.set_printoptions(**kwargs)
        lucid.set_printoptions(**kwargs)
    yield set_both
    torch.set_printoptions(profile="default")
    lucid.set_printoptions(profile="default")


def test_the_cases_cover_what_they_promise():
    dtypes = {dtype for _, dtype, _, _ in CASES_PRINTED}
    assert dtypes == set(DTYPES) and len(CASES_PRINTED) == len(SHAPES) * len(KINDS) > 100
    assert {grad for _, _, grad, _ in CASES_PRINTED} == {"none", "leaf", "node"}
    assert sum(bool(o) for *_, o in CASES_PRINTED) > 30


@pytest.mark.parametrize("start", range(0, len(CASES_PRINTED), 24))
def test_generated_tensors_print_as_torch(start, device, torch_on, options):
    for values, dtype, grad, kwargs in CASES_PRINTED[start:start + 24]:
        options(**kwargs)
        theirs = torch_on(repr(_make(torch, values, dtype, grad, "cpu")))
        ours = _make(lucid, values, dtype, grad, device)
        assert repr(ours) == theirs, (values.shape, dtype, grad, kwargs)
        assert str(ours) == theirs
        options(profile="default")


@pytest.mark.parametrize("kwargs", OPTIONS)
def test_print_options_change_the_text_as_torch(kwargs, device, torch_on, options):
    rng = np.random.default_rng(7)
    options(**kwargs)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for shape, kind in [((12,), "normal"), ((6, 9), "mixed"), ((3, 4, 5), "integers"), ((50,), "small")]:
        values = _values(rng, shape, kind)
        assert repr(_make(lucid, values, "float32", "none", device)) == torch_on(
            repr(_make(torch, values, "float32", "none", "cpu")))


def test_options_persist_and_sci_mode_resets(options):
    options(precision=3, sci_mode=True)
    options(linewidth=60)  # as torch: every call without sci_mode sets it back to None
    assert get_printoptions() == {"precision": 3, "threshold": 1000, "edgeitems": 3, "linewidth": 60,
                                  "sci_mode": None} == torch._tensor_str.get_printoptions()
    with printoptions(precision=1), torch._tensor_str.printoptions(precision=1):
        assert repr(lucid.tensor([0.25, 1.0])) == repr(torch.tensor([0.25, 1.0])) == "tensor([0.2, 1.0])"
    assert get_printoptions()["precision"] == 3


def test_values_torch_rounds_at_the_edge(device, torch_on):
    # float32 values whose double is just below or above a printed halfway point, and the
    # boundaries where the formatter changes notation
    for values in ([0.00015, 0.00025, 1.00005, 2.5e-5], [1e8, 1.0], [1e8 + 8, 1.0], [1e-4, 0.1], [9.99e-5, 1.0],
                   [1000.0, 1.0], [1000.5, 1.0], [1001.0, 1.0], [-0.0, 0.0], [-0.0, 1.5], [float("nan")] * 2,
                   [float("inf"), 2.0], [float("-inf"), 2.5], [123456789.0], [0.1, -0.0, float("nan")]):
        for dtype in ("float32", "float64", "float16"):
            ours = lucid.tensor(values, dtype=getattr(lucid, dtype), device=device)
            assert repr(ours) == torch_on(repr(torch.tensor(values, dtype=getattr(torch, dtype)))), (values, dtype)


def test_parameters_print_as_torch(device, torch_on):
    rng = np.random.default_rng(3)
    for shape in [(3,), (2, 5), (0,)]:
        values = rng.standard_normal(shape)
        ours = nn.Parameter(lucid.tensor(values.tolist(), device=device))
        theirs = torch.nn.Parameter(torch.tensor(values.tolist()))
        assert repr(ours) == torch_on(repr(theirs))
        frozen = nn.Parameter(lucid.tensor(values.tolist(), device=device), requires_grad=False)
        assert repr(frozen) == torch_on(repr(torch.nn.Parameter(torch.tensor(values.tolist()), requires_grad=False)))


def test_a_tutorials_prints_read_the_same(device, torch_on):
    # the case: an embedding lookup wraps, its grad_fn on a line of its own
    torch.manual_seed(0)
    layers = [torch.nn.Embedding(10, 6), torch.nn.Linear(6, 3)]
    ours = [nn.Embedding(10, 6), nn.Linear(6, 3)]
    for mine, theirs in zip(ours, layers):
        mine.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        mine.to(device)
    index = [[1, 2, 4, 5], [4, 3, 2, 9]]
    t_rows, l_rows = layers[0](torch.tensor(index)), ours[0](lucid.tensor(index, device=device))
    last_line = repr(l_rows).split("\n")[-1]
    assert repr(l_rows) == torch_on(repr(t_rows)) and last_line.endswith(" grad_fn=<EmbeddingBackward0>)")
    assert last_line.startswith(" " * len("tensor(")) and "]" not in last_line
    assert repr(ours[1](l_rows)) == torch_on(repr(layers[1](t_rows)))
    assert repr(ours[1].weight) == torch_on(repr(layers[1].weight))
    assert repr(ours[1](l_rows).sum()) == torch_on(repr(layers[1](t_rows).sum()))


def test_a_subclass_prints_its_name_as_torch():
    class Wrapped(lucid.Tensor):
        pass

    class TorchWrapped(torch.Tensor):
        pass

    theirs = torch.tensor([1.5, 2.0]).as_subclass(TorchWrapped)
    assert repr(Wrapped([1.5, 2.0])) == repr(theirs).replace("TorchWrapped", "Wrapped") == "Wrapped([1.5000, 2.0000])"


def test_sparse_tensors_print_as_torch(device, torch_on):
    for indices, values, size in [([[2, 0, 2]], [[1.0, 1.0], [2.0, 2.5], [3.0, 3.0]], (4, 2)),
                                  ([[1]], [[1e-6, 3.0, 7.0]], (3, 3)), ([[]], np.zeros((0, 2)), (3, 2))]:
        for dtype in ("float32", "float64"):
            ours = lucid.sparse_coo_tensor(indices, lucid.tensor(np.asarray(values)), size,
                                           dtype=getattr(lucid, dtype), device=device)
            theirs = torch.sparse_coo_tensor(torch.tensor(indices, dtype=torch.int64), torch.tensor(np.asarray(values)),
                                             size, dtype=getattr(torch, dtype))
            assert repr(ours) == torch_on(repr(theirs))


# --- the names of the nodes ------------------------------------------------------------------


def _node_name(grad_fn) -> str | None:
    """A node's name: lucid's ``Node.name``, torch's node type's name."""
    if grad_fn is None:
        return None
    return grad_fn.name if isinstance(grad_fn.name, str) else type(grad_fn).__name__


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_grad_fn_names_are_torchs_for_every_op_case(case):
    outputs = []
    for m in (torch, lucid):
        inputs = [m.tensor(a, dtype=m.float64, requires_grad=True) for a in case.arrays()]
        outputs.append(case.fn(m, *inputs).grad_fn)
    assert _node_name(outputs[1]) == _node_name(outputs[0])


NN_CASES = {
    "linear": lambda m, F, x, w, b, v: F.linear(x, w, b),
    "linear_no_bias": lambda m, F, x, w, b, v: F.linear(x, w),
    "linear_3d": lambda m, F, x, w, b, v: F.linear(x.reshape(3, 1, 4), w, b),
    "linear_3d_no_bias": lambda m, F, x, w, b, v: F.linear(x.reshape(1, 3, 4), w),
    "linear_1d": lambda m, F, x, w, b, v: F.linear(v, w, b),
    "gelu": lambda m, F, x, w, b, v: F.gelu(x),
    "gelu_tanh": lambda m, F, x, w, b, v: F.gelu(x, approximate="tanh"),
    "silu": lambda m, F, x, w, b, v: F.silu(x),
    "softplus": lambda m, F, x, w, b, v: F.softplus(x),
    "mish": lambda m, F, x, w, b, v: F.mish(x),
    "elu": lambda m, F, x, w, b, v: F.elu(x),
    "softsign": lambda m, F, x, w, b, v: F.softsign(x),
    "leaky_relu": lambda m, F, x, w, b, v: F.leaky_relu(x),
    "relu": lambda m, F, x, w, b, v: F.relu(x),
    "log_softmax": lambda m, F, x, w, b, v: F.log_softmax(x, -1),
    "layer_norm": lambda m, F, x, w, b, v: F.layer_norm(x, (4,), v, v),
    "embedding": lambda m, F, x, w, b, v: F.embedding(m.tensor([0, 2]), x),
    "mse_loss": lambda m, F, x, w, b, v: F.mse_loss(x, w),
    "mse_loss_none": lambda m, F, x, w, b, v: F.mse_loss(x, w, reduction="none"),
    "l1_loss": lambda m, F, x, w, b, v: F.l1_loss(x, w),
    "l1_loss_sum": lambda m, F, x, w, b, v: F.l1_loss(x, w, reduction="sum"),
    "l1_loss_none": lambda m, F, x, w, b, v: F.l1_loss(x, w, reduction="none"),
    "smooth_l1_loss": lambda m, F, x, w, b, v: F.smooth_l1_loss(x, w),
    "huber_loss": lambda m, F, x, w, b, v: F.huber_loss(x, w),
    "bce": lambda m, F, x, w, b, v: F.binary_cross_entropy(x.sigmoid(), w.sigmoid()),
    "bce_with_logits": lambda m, F, x, w, b, v: F.binary_cross_entropy_with_logits(x, w.sigmoid()),
    "rsub": lambda m, F, x, w, b, v: 1.5 - x,
    "t": lambda m, F, x, w, b, v: x.t(),
    "bmm": lambda m, F, x, w, b, v: m.bmm(x.reshape(1, 3, 4), w.reshape(1, 4, 3)),
    "clamp_min_tensor": lambda m, F, x, w, b, v: x.clamp(min=v),
    "split": lambda m, F, x, w, b, v: x.split(2, 1)[0],
    "split_sizes": lambda m, F, x, w, b, v: x.split([1, 3], 1)[1],
    "chunk": lambda m, F, x, w, b, v: x.chunk(2)[1],
    "unbind": lambda m, F, x, w, b, v: x.unbind(1)[0],
    "narrow": lambda m, F, x, w, b, v: x.narrow(0, 1, 2),
    "stack": lambda m, F, x, w, b, v: m.stack([x, x]),
    "sort": lambda m, F, x, w, b, v: x.sort(0)[0],
    "topk": lambda m, F, x, w, b, v: x.topk(2)[0],
    "repeat": lambda m, F, x, w, b, v: x.repeat(1, 2),
    "index_alias": lambda m, F, x, w, b, v: x[:, :],
    "index_ellipsis": lambda m, F, x, w, b, v: x[...],
    "index_none_then_int": lambda m, F, x, w, b, v: x[None, 1],
    "index_one_slice": lambda m, F, x, w, b, v: x[:],
    "to_double": lambda m, F, x, w, b, v: x.double(),
    "clone": lambda m, F, x, w, b, v: x.clone(),
    "squeeze_dims": lambda m, F, x, w, b, v: x.unsqueeze(0).squeeze((0,)),
    "dropout": lambda m, F, x, w, b, v: F.dropout(x, 0.5),
    "cross_entropy": lambda m, F, x, w, b, v: F.cross_entropy(x, m.tensor([0, 1, 2])),
    "cross_entropy_none": lambda m, F, x, w, b, v: F.cross_entropy(x, m.tensor([0, 3, 2]), reduction="none"),
    "cross_entropy_smoothing": lambda m, F, x, w, b, v: F.cross_entropy(x, m.tensor([0, 1, 2]), label_smoothing=0.1),
    "nll_loss": lambda m, F, x, w, b, v: F.nll_loss(x, m.tensor([0, 1, 2])),
    "batch_norm": lambda m, F, x, w, b, v: F.batch_norm(x, None, None, training=True),
    "embedding_bag": lambda m, F, x, w, b, v: F.embedding_bag(m.tensor([[0, 1], [2, 0]]), x),
    "embedding_bag_max": lambda m, F, x, w, b, v: F.embedding_bag(m.tensor([[0, 1], [2, 0]]), x, mode="max"),
    "hardtanh": lambda m, F, x, w, b, v: F.hardtanh(x),
    "relu6": lambda m, F, x, w, b, v: F.relu6(x * 4),
}


@pytest.mark.parametrize("name", NN_CASES)
def test_grad_fn_names_are_torchs_for_nn_functional(name):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in [(3, 4), (3, 4), (3,), (4,)]]  # x, weight (or target), bias, v
    names = []
    for m, functional in ((torch, TF), (lucid, F)):
        x, w, b, v = [m.tensor(a, requires_grad=True) for a in arrays]
        names.append(_node_name(NN_CASES[name](m, functional, x, w, b, v).grad_fn))
    assert names[1] == names[0]
