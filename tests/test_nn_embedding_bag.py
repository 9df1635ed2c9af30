"""EmbeddingBag (function and module) against torch live: every mode and option, the weight
and per-sample-weight gradients, sparse gradients trained with SparseAdam, SGD and Adagrad,
and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lucid
import lucid.nn.functional as F
from lucid import nn
from helpers import assert_same_signature
from nn_parity import (
    DEVICES, agree, assert_same_error, compare_grads, compare_outputs, function_parity, host, load_torch_state,
    needs_truth, to_torch, truth_of,
)

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DEVICE_DTYPES = [("cpu", "float64")] + [("gpu", "float32")] * ("gpu" in DEVICES)
ROWS, DIM = 9, 3
# (input, offsets): 1-D with offsets (an empty bag in the middle, repeated rows), or 2-D
LAYOUTS = {
    "offsets": ([1, 2, 4, 5, 4, 3, 2, 8, 0, 1], [0, 3, 3, 7]),
    "2-D": ([[1, 2, 4], [4, 4, 0], [8, 7, 6]], None),
    "one bag": ([3, 3, 5], [0]),
}
OPTIONS = {
    "plain": {},
    "padding": {"padding_idx": 4},
    "freq": {"scale_grad_by_freq": True},
    "last offset": {"include_last_offset": True},
    "max_norm": {"max_norm": 1.5},
}


def _data(layout, options):
    indices, offsets = LAYOUTS[layout]
    if options.get("include_last_offset") and offsets is not None:
        offsets = offsets + [len(indices)]
    return np.array(indices), None if offsets is None else np.array(offsets)


def _run(mode, layout, option, device, dtype, weighted=False, sparse=False):
    options = OPTIONS[option]
    indices, offsets = _data(layout, options)
    table = np.random.default_rng(0).standard_normal((ROWS, DIM)) * 2
    arrays = [table] + ([np.random.default_rng(1).standard_normal(indices.shape)] if weighted else [])

    def bag(F, tensor):
        lookup = tensor(indices), None if offsets is None else tensor(offsets)
        return lambda weight, *psw: F.embedding_bag(lookup[0], weight, lookup[1], mode=mode,
                                                    per_sample_weights=psw[0] if psw else None, sparse=sparse,
                                                    **options)

    # a max is exact (unless the rows were renormalised first); sums and means are judged in float32
    run = function_parity(bag(F, lambda v: lucid.tensor(v, device=device)), bag(TF, torch.tensor), arrays, device,
                          dtype, seed=2, exact="output" if mode == "max" and "max_norm" not in options else False)
    if "max_norm" in options:  # the looked-up rows were renormalised in place, as torch's
        agree(run.inputs[0], run.t_inputs[0], run.h_inputs and run.h_inputs[0], dtype, what="renormalised weight")
    if sparse:
        assert run.inputs[0].grad.is_sparse and run.t_inputs[0].grad.is_sparse


# include_last_offset needs offsets; max refuses scale_grad_by_freq (tested with the errors)
CASES = [(mode, layout, option) for mode in ("sum", "mean", "max") for layout in LAYOUTS for option in OPTIONS
         if not (option == "last offset" and layout == "2-D") and not (mode == "max" and option == "freq")]


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=[f"{d}-{t}" for d, t in DEVICE_DTYPES])
@pytest.mark.parametrize("mode,layout,option", CASES, ids=["-".join(case) for case in CASES])
def test_embedding_bag_matches_torch(mode, layout, option, device, dtype):
    _run(mode, layout, option, device, dtype)


WEIGHTED = [(layout, option) for layout in LAYOUTS for option in ("plain", "padding", "last offset")
            if not (option == "last offset" and layout == "2-D")]


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=[f"{d}-{t}" for d, t in DEVICE_DTYPES])
@pytest.mark.parametrize("layout,option", WEIGHTED, ids=["-".join(case) for case in WEIGHTED])
def test_per_sample_weights_get_torchs_gradient(layout, option, device, dtype):
    _run("sum", layout, option, device, dtype, weighted=True)


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("option", ["plain", "padding"])
def test_sparse_gradient_has_torchs_values(mode, option):
    _run(mode, "offsets", option, "cpu", "float64", sparse=True)


@pytest.mark.parametrize("optimizer,options", [("SparseAdam", {"lr": 0.05}), ("SGD", {"lr": 0.1, "momentum": 0.0}),
                                               ("Adagrad", {"lr": 0.1})])
@pytest.mark.parametrize("device", DEVICES)
def test_sparse_embedding_bag_trains_as_torch(optimizer, options, device):
    dtype = "float64" if device == "cpu" else "float32"
    theirs = torch.nn.EmbeddingBag(30, 4, mode="mean", sparse=True, padding_idx=0, dtype=getattr(torch, dtype))
    ours = nn.EmbeddingBag(30, 4, mode="mean", sparse=True, padding_idx=0, dtype=getattr(lucid, dtype),
                           device=device)
    load_torch_state(ours, theirs, device, dtype)
    # in float32, torch's steps in float64 from the same float32 weights: the truth
    models = [theirs] + ([truth_of(theirs)] if needs_truth(dtype) else [])
    opt = getattr(lucid.optim, optimizer)(ours.parameters(), **options)
    t_opts = [getattr(torch.optim, optimizer)(model.parameters(), **options) for model in models]
    rng = np.random.default_rng(7)
    for _ in range(5):
        indices = rng.integers(0, 30, 12)
        offsets = np.array([0, 4, 4, 9])
        target = rng.standard_normal((4, 4))
        loss = ((ours(lucid.tensor(indices, device=device), lucid.tensor(offsets, device=device))
                 - lucid.tensor(target, dtype=getattr(lucid, dtype), device=device)) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        assert ours.weight.grad.is_sparse
        opt.step()
        for model, t_opt in zip(models, t_opts):
            t_target = to_torch(target, dtype).to(model.weight.dtype)  # the same rounded target
            t_loss = ((model(torch.tensor(indices), torch.tensor(offsets)) - t_target) ** 2).sum()
            t_opt.zero_grad()
            t_loss.backward()
            t_opt.step()
        agree(ours.weight, theirs.weight, models[-1].weight, dtype, what="weight")


def test_frequency_scaling_has_torchs_quirk_and_its_intent_where_they_agree():
    """torch divides the k-th distinct index by the count of the k-th sorted entry (see Notes)."""
    weight = lucid.ones(5, 1, dtype=lucid.float64, requires_grad=True)
    F.embedding_bag(lucid.tensor([1, 1, 3]), weight, lucid.tensor([0]), mode="sum", scale_grad_by_freq=True).backward()
    assert host(weight.grad).ravel().tolist() == [0.0, 1.0, 0.0, 0.5, 0.0]  # row 3 halved, as torch
    weight.grad = None
    F.embedding_bag(lucid.tensor([3, 1, 1]), weight, lucid.tensor([0]), mode="sum", scale_grad_by_freq=True).backward()
    assert host(weight.grad).ravel().tolist() == [0.0, 1.0, 0.0, 0.5, 0.0]  # the order of input does not matter
    weight.grad = None
    F.embedding_bag(lucid.tensor([0, 3, 3]), weight, lucid.tensor([0]), mode="sum", scale_grad_by_freq=True).backward()
    assert host(weight.grad).ravel().tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]  # no repeat before: own counts


def test_module_defaults_repr_and_state_dict_match_torch():
    lucid.manual_seed(0)
    ours, theirs = nn.EmbeddingBag(10, 3, padding_idx=2, max_norm=1.0), torch.nn.EmbeddingBag(10, 3, padding_idx=2,
                                                                                               max_norm=1.0)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert host(ours.weight)[2].tolist() == [0.0, 0.0, 0.0]
    pretrained = nn.EmbeddingBag.from_pretrained(lucid.ones(4, 2), mode="max")
    assert not pretrained.weight.requires_grad and pretrained.mode == "max"
    assert_same_signature(nn.EmbeddingBag.__init__, torch.nn.EmbeddingBag.__init__)
    assert_same_signature(F.embedding_bag, TF.embedding_bag)


@pytest.mark.parametrize("case", [
    lambda F, t, w: F.embedding_bag(t([[1, 2]]), w, t([0])),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([[0]])),
    lambda F, t, w: F.embedding_bag(t([[[1]]]), w),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([0]), mode="median"),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([0]), mode="max", scale_grad_by_freq=True),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([0]), mode="max", sparse=True),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([0]), mode="mean", per_sample_weights=w[0, :2]),
    lambda F, t, w: F.embedding_bag(t([1, 2]), w, t([1])),
])
def test_errors_match_torch(case):
    weight = lucid.ones(5, 2)
    assert_same_error(lambda: case(F, lambda v: lucid.tensor(v), weight),
                      lambda: case(TF, lambda v: torch.tensor(v), torch.ones(5, 2)), first_line=True)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 8), dim=st.integers(1, 3), lengths=st.lists(st.integers(0, 4), min_size=1, max_size=5),
       mode=st.sampled_from(["sum", "mean", "max"]), padding=st.one_of(st.none(), st.integers(0, 7)),
       weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_embedding_bag_property_matches_torch(rows, dim, lengths, mode, padding, weighted, seed):
    """Any bags (empty ones too), any repeated rows, with or without padding and per-sample weights."""
    rng = np.random.default_rng(seed)
    padding = None if padding is None or padding >= rows else padding
    weighted = weighted and mode == "sum"
    indices = rng.integers(0, rows, sum(lengths))
    offsets = np.cumsum([0] + lengths[:-1])
    table = rng.standard_normal((rows, dim))
    weight, t_weight = lucid.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    psw = rng.standard_normal(indices.shape) if weighted else None
    out = F.embedding_bag(lucid.tensor(indices), weight, lucid.tensor(offsets), mode=mode, padding_idx=padding,
                          per_sample_weights=None if psw is None else lucid.tensor(psw))
    t_out = TF.embedding_bag(torch.tensor(indices), t_weight, torch.tensor(offsets), mode=mode, padding_idx=padding,
                             per_sample_weights=None if psw is None else torch.tensor(psw))
    compare_outputs(out, t_out, "float64")
    g = rng.standard_normal(tuple(t_out.shape))
    (out * lucid.tensor(g)).sum().backward()
    (t_out * torch.tensor(g)).sum().backward()
    compare_grads([(weight, t_weight)], "float64")
