"""lucid.nn.functional against torch.nn.functional, values and gradients, on both devices.

Parity runs in float64 on cpu (tolerance 1e-12) and in float32 on gpu (MLX on an Apple GPU
has no float64); a float32 result is judged against the float64 truth of the same computation,
with torch's error the ceiling (``nn_parity``), or compared bit for bit where it is exact.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lucid
import lucid.nn.functional as F
from lucid import nn
from nn_parity import (
    agree, backward_both, compare_grads, function_parity, host, module_parity, needs_truth, truth_of,
)
from tolerances import close, judge

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def parity_dtype(device):
    return lucid.float64 if device == "cpu" else lucid.float32


def t_dtype(dtype):
    return getattr(torch, dtype.name)


def exact(t) -> np.ndarray:
    return np.asarray(t.detach())


def pair(array, dtype, device, requires_grad=False):
    """The same float values as a lucid tensor and a torch tensor."""
    ours = lucid.tensor(array, dtype=dtype, device=device, requires_grad=requires_grad)
    theirs = torch.tensor(np.asarray(array), dtype=t_dtype(dtype), requires_grad=requires_grad)
    return ours, theirs


def index_pair(array, device, dtype=lucid.int64):
    array = np.asarray(array)
    return (lucid.tensor(array, dtype=dtype, device=device),
            torch.tensor(array, dtype=torch.int64 if dtype is lucid.int64 else torch.int32))


# --- embedding: values and gradients ----------------------------------------------------------
EMBED_CASES = {
    "plain": {},
    "padding": {"padding_idx": 2},
    "negative padding": {"padding_idx": -1},
    "freq": {"scale_grad_by_freq": True},
    "freq and padding": {"scale_grad_by_freq": True, "padding_idx": 0},
}
INDEX_SHAPES = {
    "duplicates 2-D": [[1, 2, 1, 1], [6, 0, 2, 1]],
    "1-D": [3, 3, 3, 5],
    "0-D": 4,
    "3-D": [[[0, 6], [6, 6]], [[2, 1], [2, 0]]],
    "empty": np.zeros((0,), dtype=np.int64),
}


@pytest.mark.parametrize("case", list(EMBED_CASES))
@pytest.mark.parametrize("indices", list(INDEX_SHAPES))
def test_embedding_matches_torch(device, case, indices):
    dtype = parity_dtype(device)
    table = np.random.default_rng(0).standard_normal((7, 3))
    options = EMBED_CASES[case]
    # a gather is exact; the gradient, a sum over repeated indices, is judged
    run = function_parity(lambda w, i: F.embedding(i, w, **options), lambda w, i: TF.embedding(i, w, **options),
                          [table, np.asarray(INDEX_SHAPES[indices])], device, dtype.name, exact="output")
    assert run.ours.shape == tuple(run.theirs.shape) and run.ours.dtype is dtype and run.ours.device == device


def test_embedding_int32_indices(device):
    dtype = parity_dtype(device)
    run = function_parity(lambda w, i: F.embedding(i, w, scale_grad_by_freq=True),
                          lambda w, i: TF.embedding(i, w, scale_grad_by_freq=True),
                          [np.arange(12.0).reshape(4, 3), np.array([[3, 0], [3, 3]], dtype=np.int32)], device,
                          dtype.name, exact="output")
    assert run.ours.dtype is dtype and run.inputs[1].dtype is lucid.int32 and run.t_inputs[1].dtype == torch.int32


def test_embedding_duplicates_accumulate_and_frequency_divides(device):
    w = lucid.zeros(4, 2, device=device, requires_grad=True)
    idx = lucid.tensor([1, 1, 1, 3], device=device)
    F.embedding(idx, w).sum().backward()
    assert host(w.grad).tolist() == [[0, 0], [3, 3], [0, 0], [1, 1]]
    w.grad = None
    F.embedding(idx, w, scale_grad_by_freq=True).sum().backward()
    assert host(w.grad).tolist() == [[0, 0], [1, 1], [0, 0], [1, 1]]


def test_embedding_backward_is_one_scatter_add(device, monkeypatch):
    """No Python loop per index: the backward is one scatter-add (two with scale_grad_by_freq)."""
    w = lucid.randn(50, 4, device=device, requires_grad=True)
    backend_type = type(w._backend)
    calls = []
    original = backend_type.scatter_add

    def counting(self, shape, dtype, index, values):
        calls.append(tuple(shape))
        return original(self, shape, dtype, index, values)

    monkeypatch.setattr(backend_type, "scatter_add", counting)
    idx = lucid.tensor(np.random.default_rng(0).integers(0, 50, size=(64, 32)), device=device)
    F.embedding(idx, w, padding_idx=3).sum().backward()
    assert calls == [(50, 4)]
    calls.clear()
    w.grad = None
    F.embedding(idx, w, scale_grad_by_freq=True).sum().backward()
    assert sorted(calls) == [(50,), (50, 4)]


def test_embedding_frozen_weight_records_nothing(device):
    w = lucid.randn(4, 2, device=device)
    out = F.embedding(lucid.tensor([0, 1], device=device), w)
    assert not out.requires_grad and out.grad_fn is None


def test_embedding_through_module_matches_torch(device):
    dtype = parity_dtype(device)
    emb = nn.Embedding(6, 3, padding_idx=1, scale_grad_by_freq=True, device=device, dtype=dtype)
    t_emb = torch.nn.Embedding(6, 3, padding_idx=1, scale_grad_by_freq=True).to(t_dtype(dtype))
    module_parity(emb, t_emb, [np.array([[1, 2, 2], [5, 1, 2]])], device, dtype.name, exact="output")


# --- embedding: max_norm -------------------------------------------------------------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("max_norm", [0.3, 1.0, 2.5])
def test_max_norm_renormalises_only_looked_up_rows(device, norm_type, max_norm):
    dtype = parity_dtype(device)
    table = np.random.default_rng(1).standard_normal((9, 4))
    table[4] *= 1e-3  # a looked-up row already within every limit
    w, tw = pair(table, dtype, device)
    truth = truth_of(tw)  # renormalised in float64 from the same float32 values
    before = exact(w).copy()
    version = w._version
    rows = [4, 1, 7, 1]
    idx, tidx = index_pair([[4, 1], [7, 1]], device)
    out = F.embedding(idx, w, max_norm=max_norm, norm_type=norm_type)
    t_out = TF.embedding(tidx, tw, max_norm=max_norm, norm_type=norm_type)
    h_out = TF.embedding(tidx, truth, max_norm=max_norm, norm_type=norm_type)
    after = exact(w)
    assert w._version > version  # written in place
    untouched = [i for i in range(9) if i not in rows]
    assert np.array_equal(after[untouched], before[untouched])  # bit for bit
    assert np.array_equal(after[4], before[4])  # looked up but within the limit: unchanged
    agree(after, tw, truth, dtype.name, what="renormalised weight")
    agree(out, t_out, h_out, dtype.name, what="output")
    # the rule is torch's row *= max_norm / (norm + 1e-7): the new norm is max_norm less about
    # 1e-7 relative (what a 1e-6 tolerance used to hide), exact at the parity tolerance in float64;
    # in float32 the norms of the rounded rows are judged against the rule, beside torch's
    norms, t_norms, old_norms = (np.linalg.norm(host(v)[[1, 7]], ord=norm_type, axis=1) for v in (w, tw, before))
    limited = old_norms > max_norm
    judge(norms[limited], t_norms[limited], old_norms[limited] * (max_norm / (old_norms[limited] + 1e-7)),
          dtype.name, what="renormalised norms")


def test_max_norm_with_float32_matches_torch_float32():
    table = np.random.default_rng(2).standard_normal((6, 5)) * 3
    w, tw = pair(table, lucid.float32, "cpu")
    truth = truth_of(tw)
    idx, tidx = index_pair([0, 2, 2, 5], "cpu")
    agree(F.embedding(idx, w, max_norm=1.5), TF.embedding(tidx, tw, max_norm=1.5),
          TF.embedding(tidx, truth, max_norm=1.5), "float32", what="output")
    agree(w, tw, truth, "float32", what="renormalised weight")


def test_max_norm_keeps_gradients_right(device):
    dtype = parity_dtype(device)
    table = np.random.default_rng(3).standard_normal((5, 3)) * 2
    w, tw = pair(table, dtype, device, requires_grad=True)
    truth = truth_of(tw) if needs_truth(dtype.name) else None
    idx, tidx = index_pair([0, 3, 3], device)
    out, t_out = F.embedding(idx, w, max_norm=1.0), TF.embedding(tidx, tw, max_norm=1.0)
    h_out = None if truth is None else TF.embedding(tidx, truth, max_norm=1.0)
    backward_both(out, t_out, truth=h_out)
    compare_grads([(w, tw)], dtype.name, None if truth is None else [truth])
    agree(w, tw, truth, dtype.name, what="renormalised weight")


def test_max_norm_on_a_module_keeps_the_parameter(device):
    emb = nn.Embedding(5, 4, max_norm=0.1, device=device)
    weight = emb.weight
    emb(lucid.tensor([1, 2], device=device)).sum().backward()
    assert emb.weight is weight and weight.is_leaf and weight.grad is not None


# --- embedding: bad inputs -----------------------------------------------------------------------------
def test_embedding_rejects_non_integer_indices(device):
    w = lucid.randn(5, 2, device=device)
    for bad in (lucid.tensor([1.0], device=device), lucid.tensor([True], device=device)):
        with pytest.raises(TypeError, match="Expected tensor for argument #1 'indices' to have one of the "
                                            "following scalar types: Long, Int"):
            F.embedding(bad, w)
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        F.embedding([1, 2], w)


@pytest.mark.parametrize("bad", [5, -1, 100])
def test_embedding_rejects_out_of_range_indices(device, bad):
    w = lucid.randn(5, 2, device=device)
    with pytest.raises(IndexError, match=f"index out of range in self: index {bad} is out of range"):
        F.embedding(lucid.tensor([[0, bad], [1, 2]], device=device), w)
    with pytest.raises(IndexError):  # torch agrees
        TF.embedding(torch.tensor([[0, bad], [1, 2]]), torch.randn(5, 2))
    with pytest.raises(IndexError):  # and nothing was renormalised first
        F.embedding(lucid.tensor([bad], device=device), w, max_norm=0.1)


def test_embedding_rejects_bad_weights_and_devices():
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(lucid.tensor([0]), lucid.randn(5))
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        F.embedding(lucid.tensor([0]), lucid.randn(5, 2), padding_idx=5)
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        F.embedding(lucid.tensor([0]), lucid.randn(5, 2), padding_idx=-6)
    if lucid.is_available("gpu"):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
            F.embedding(lucid.tensor([0], device="gpu"), lucid.randn(5, 2))


def test_embedding_sparse_gives_the_weight_a_sparse_gradient():
    weight = lucid.randn(3, 2, requires_grad=True)
    F.embedding(lucid.tensor([0]), weight, sparse=True).sum().backward()
    assert weight.grad.is_sparse and weight.grad.to_dense().tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("index_dtype", [lucid.int32, lucid.int64])
@pytest.mark.parametrize("options", [{}, {"max_norm": 0.5}, {"scale_grad_by_freq": True, "padding_idx": 1}])
def test_embedding_never_mutates_the_index_tensor(device, index_dtype, options):
    idx = lucid.tensor([[3, 1], [1, 0]], dtype=index_dtype, device=device)
    values, version = idx.tolist(), idx._version
    w = lucid.randn(4, 3, device=device, requires_grad=True)
    F.embedding(idx, w, **options).sum().backward()
    assert idx.dtype is index_dtype and idx.tolist() == values and idx._version == version


def test_changing_the_indices_before_backward_is_an_error(device):
    idx = lucid.tensor([0, 1], device=device)
    w = lucid.randn(3, 2, device=device, requires_grad=True)
    out = F.embedding(idx, w)
    idx[0] = 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 8), dim=st.integers(1, 4), shape=st.lists(st.integers(0, 4), max_size=3),
       padding=st.one_of(st.none(), st.integers(-8, 7)), freq=st.booleans(), seed=st.integers(0, 2**16))
def test_embedding_property_matches_torch(rows, dim, shape, padding, freq, seed):
    rng = np.random.default_rng(seed)
    if padding is not None and not -rows <= padding < rows:
        padding = None
    table = rng.standard_normal((rows, dim))
    indices = rng.integers(0, rows, size=tuple(shape))
    w, tw = pair(table, lucid.float64, "cpu", requires_grad=True)
    idx, tidx = index_pair(indices, "cpu")
    out = F.embedding(idx, w, padding_idx=padding, scale_grad_by_freq=freq)
    t_out = TF.embedding(tidx, tw, padding_idx=padding, scale_grad_by_freq=freq)
    assert np.array_equal(host(out), t_out.detach().numpy())
    backward_both(out, t_out, seed)
    close(host(w.grad), tw.grad.numpy(), "float64")


# --- linear and relu ----------------------------------------------------------------------------------------
def test_linear_and_relu_match_torch(device):
    dtype = parity_dtype(device).name
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((2, 4)), rng.standard_normal(2)
    function_parity(lambda *a: F.relu(F.linear(*a)), lambda *a: TF.relu(TF.linear(*a)), [x, w, b], device, dtype)
    function_parity(F.linear, TF.linear, [x, w], device, dtype)


def test_linear_shape_errors_match_torch():
    x, w = lucid.randn(3, 4), lucid.randn(5, 3)
    with pytest.raises(RuntimeError) as theirs:
        TF.linear(torch.randn(3, 4), torch.randn(5, 3))
    with pytest.raises(RuntimeError) as ours:
        F.linear(x, w)
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        TF.linear(torch.randn(3, 4), torch.randn(5, 4), torch.randn(3))
    with pytest.raises(RuntimeError) as ours:
        F.linear(x, lucid.randn(5, 4), lucid.randn(3))
    assert str(ours.value) == str(theirs.value)


# --- log_softmax ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1), ((2, 3, 4), 1)])
def test_log_softmax_matches_torch(device, shape, dim):
    values = np.random.default_rng(5).standard_normal(shape) * 10
    function_parity(F.log_softmax, TF.log_softmax, [values], device, parity_dtype(device).name, dim=dim)


def test_log_softmax_extreme_values_and_implicit_dim(device):
    dtype = parity_dtype(device)
    values = [[1000.0, 0.0, -1000.0], [-float("inf"), 0.0, 1.0]]
    for row in values:  # one at a time: normwise, the first row's 2000 would drown the second's errors
        function_parity(F.log_softmax, TF.log_softmax, [[row]], device, dtype.name, grad=[False], dim=1)
    x, tx = pair(values, dtype, device)
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax has been deprecated"):
        implicit = F.log_softmax(x)
    np.testing.assert_array_equal(host(implicit), host(F.log_softmax(x, 1)))  # the same computation
    close(host(F.log_softmax(x, 1, dtype=lucid.float64)), TF.log_softmax(tx.double(), 1).numpy(), "float64")


# --- mse_loss ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_torch(device, reduction):
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    function_parity(F.mse_loss, TF.mse_loss, [x, y], device, parity_dtype(device).name, reduction=reduction)


def test_mse_loss_broadcast_warns_and_bad_shapes_raise():
    x = lucid.randn(3, 4)
    with pytest.warns(UserWarning, match="Using a target size"):
        assert F.mse_loss(x, lucid.randn(3, 1)).shape == ()
    with pytest.raises((RuntimeError, ValueError)), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F.mse_loss(x, lucid.randn(3, 2))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="bad")


# --- nll_loss and cross_entropy -------------------------------------------------------------------------------
SHAPES = {
    "(N, C)": ((6, 5), (6,)),
    "(C,)": ((5,), ()),
    "(N, C, d)": ((3, 5, 4), (3, 4)),
    "(N, C, d1, d2)": ((2, 5, 3, 2), (2, 3, 2)),
}
OPTIONS = {
    "defaults": {},
    "weight": {"weight": True},
    "ignore_index": {"ignore_index": 2},
    "weight and ignore -100": {"weight": True, "ignored": -100},
}


def _class_case(shape_name, option_name, seed=0):
    rng = np.random.default_rng(seed)
    input_shape, target_shape = SHAPES[shape_name]
    options = dict(OPTIONS[option_name])
    x = rng.standard_normal(input_shape) * 3
    target = rng.integers(0, 5, size=target_shape)
    ignored = options.pop("ignored", None)
    if ignored is not None and target.ndim:
        target.flat[0] = ignored
    if options.get("ignore_index") is not None and target.ndim:
        target.flat[-1] = options["ignore_index"]
    weight = rng.random(5) + 0.1 if options.pop("weight", False) else None
    return x, target, weight, options


def _run_both(fn, t_fn, device, x, target, weight, **kwargs):
    function_parity(fn, t_fn, [x, np.asarray(target)], device, parity_dtype(device).name,
                    constants=None if weight is None else {"weight": weight}, **kwargs)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_nll_loss_matches_torch(device, shape, option, reduction):
    x, target, weight, options = _class_case(shape, option)
    logp = x - np.log(np.exp(x).sum(axis=1 if x.ndim > 1 else 0, keepdims=True))
    _run_both(F.nll_loss, TF.nll_loss, device, logp, target, weight, reduction=reduction, **options)


@pytest.mark.parametrize("smoothing", [0.0, 0.15, 1.0])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("option", list(OPTIONS))
@pytest.mark.parametrize("shape", list(SHAPES))
def test_cross_entropy_matches_torch(device, shape, option, reduction, smoothing):
    x, target, weight, options = _class_case(shape, option, seed=1)
    _run_both(F.cross_entropy, TF.cross_entropy, device, x, target, weight, reduction=reduction,
              label_smoothing=smoothing, **options)


@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 3, 5)])
def test_cross_entropy_probability_targets_match_torch(device, shape, weighted, reduction, smoothing):
    rng = np.random.default_rng(7)
    class_dim = 1 if len(shape) > 1 else 0
    probs = rng.random(shape)
    probs /= probs.sum(axis=class_dim, keepdims=True)
    x = rng.standard_normal(shape)
    constants = {"weight": rng.random(shape[class_dim])} if weighted else None
    function_parity(F.cross_entropy, TF.cross_entropy, [x, probs], device, parity_dtype(device).name,
                    constants=constants, reduction=reduction, label_smoothing=smoothing)


def test_nll_loss_is_the_weighted_mean():
    logp = lucid.tensor([[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0], [-7.0, -8.0, -9.0]], dtype=lucid.float64)
    target = lucid.tensor([0, 2, 1])
    w = lucid.tensor([1.0, 2.0, 4.0], dtype=lucid.float64)
    expected = (1 * 1.0 + 4 * 6.0 + 2 * 8.0) / (1 + 4 + 2)
    assert F.nll_loss(logp, target, weight=w).item() == expected  # 41 / 7: integer sums, one division
    ignored = lucid.tensor([0, -100, 1])
    assert F.nll_loss(logp, ignored, weight=w).item() == (1.0 + 16.0) / 3


def test_all_targets_ignored_gives_nan_like_torch(device):
    dtype = parity_dtype(device)
    x, tx = pair(np.zeros((2, 3)), dtype, device, requires_grad=True)
    lt, tt = index_pair([-100, -100], device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = F.cross_entropy(x, lt)
    t_out = TF.cross_entropy(tx, tt)
    assert np.isnan(out.item()) and np.isnan(t_out.item())
    assert F.cross_entropy(x, lt, reduction="sum").item() == 0.0


def test_class_weights_get_no_gradient(device):
    w = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)
    x = lucid.randn(3, 2, device=device, requires_grad=True)
    F.cross_entropy(x, lucid.tensor([0, 1, 1], device=device), weight=w).backward()
    assert x.grad is not None and w.grad is None


# --- loss errors, checked against torch's exception type and message -------------------------------
def _errors_match(ours_call, theirs_call, pattern_fix=lambda s: s):
    with pytest.raises(Exception) as theirs:
        theirs_call()
    with pytest.raises(type(theirs.value)) as ours:
        ours_call()
    assert str(ours.value) == pattern_fix(str(theirs.value))


ERROR_CASES = {
    "batch mismatch": ((3, 4), [1, 2], {}),
    "target out of bounds": ((3, 4), [1, 2, 7], {}),
    "negative target": ((3, 4), [1, 2, -1], {}),
    "float target": ((3, 4), [1.0, 2.0, 3.0], {}),
    "2-D target": ((3, 4), [[1, 2, 3]], {}),
    "0-D input": ((), 1, {}),
    "weight size": ((3, 4), [1, 2, 3], {"weight": 5}),
    "bad reduction": ((3, 4), [1, 2, 3], {"reduction": "avg"}),
    "spatial target size": ((3, 4, 5), [1, 2, 3], {}),
    "1-D size mismatch": ((4,), [1, 2, 3], {}),
    "1-D input, 2-D target": ((4,), [[1]], {}),
    "2-D input, 0-D target": ((3, 4), 1, {}),
    "spatial, float target": ((3, 4, 5), [[1.0] * 5] * 3, {}),
    "weight dtype": ((3, 4), [1, 2, 3], {"weight": "float64"}),
}


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_loss_errors_match_torch(fn, case):
    shape, target, options = ERROR_CASES[case]
    x = np.random.default_rng(0).standard_normal(shape)
    target = np.asarray(target)
    lt = lucid.tensor(target)
    tt = torch.tensor(target)
    l_opts, t_opts = dict(options), dict(options)
    if options.get("weight") == "float64":
        l_opts["weight"], t_opts["weight"] = lucid.ones(4, dtype=lucid.float64), torch.ones(4, dtype=torch.float64)
    elif "weight" in options:
        l_opts["weight"], t_opts["weight"] = lucid.ones(options["weight"]), torch.ones(options["weight"])
    lx = lucid.tensor(x, dtype=lucid.float32)
    tx = torch.tensor(x, dtype=torch.float32)
    _errors_match(lambda: getattr(F, fn)(lx, lt, **l_opts), lambda: getattr(TF, fn)(tx, tt, **t_opts))


def test_cross_entropy_specific_errors_match_torch():
    x, tx = lucid.randn(3, 4), torch.randn(3, 4)
    target, t_target = lucid.tensor([1, 2, 3]), torch.tensor([1, 2, 3])
    _errors_match(lambda: F.cross_entropy(x, target, label_smoothing=1.5),
                  lambda: TF.cross_entropy(tx, t_target, label_smoothing=1.5))
    _errors_match(lambda: F.cross_entropy(x, lucid.rand(3, 4), ignore_index=1),
                  lambda: TF.cross_entropy(tx, torch.rand(3, 4), ignore_index=1))
    _errors_match(lambda: F.cross_entropy(x, lucid.rand(3, 5)), lambda: TF.cross_entropy(tx, torch.rand(3, 5)))
    _errors_match(lambda: F.cross_entropy(x, lucid.ones(3, 4, dtype=lucid.int64)),
                  lambda: TF.cross_entropy(tx, torch.ones(3, 4, dtype=torch.int64)))
    _errors_match(lambda: F.cross_entropy(x, lucid.rand(3, 4), weight=lucid.ones(5)),
                  lambda: TF.cross_entropy(tx, torch.rand(3, 4), weight=torch.ones(5)))
    _errors_match(lambda: F.cross_entropy(x, lucid.ones(3, 2, dtype=lucid.int64), label_smoothing=0.1),
                  lambda: TF.cross_entropy(tx, torch.ones(3, 2, dtype=torch.int64), label_smoothing=0.1))


def test_target_outside_but_ignored_is_fine(device):
    function_parity(F.cross_entropy, TF.cross_entropy, [np.random.default_rng(8).standard_normal((3, 4)),
                                                         np.array([1, 9, 2])], device, parity_dtype(device).name,
                    ignore_index=9)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), c=st.integers(1, 5), smoothing=st.sampled_from([0.0, 0.1, 0.5]),
       reduction=st.sampled_from(["mean", "sum", "none"]), weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_cross_entropy_property_matches_torch(n, c, smoothing, reduction, weighted, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c)) * 4
    target = rng.integers(0, c, size=n)
    target[rng.random(n) < 0.2] = -100
    if (target == -100).all() and reduction == "mean":
        target[0] = 0
    weight = rng.random(c) + 0.1 if weighted else None
    _run_both(F.cross_entropy, TF.cross_entropy, "cpu", x, target, weight, reduction=reduction,
              label_smoothing=smoothing)


def test_module_doc_names_everything_exported():
    assert {"linear", "relu", "embedding", "log_softmax", "softmax", "gelu", "silu", "dropout", "layer_norm",
            "batch_norm", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
            "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy", "one_hot"} <= set(F.__all__)
    assert all(callable(getattr(F, name)) for name in F.__all__)
    for name in F.__all__:
        doc = getattr(F, name).__doc__
        assert doc and re.search(r"Examples\n\s+-+", doc), name
