"""A tensor's ``dtype`` and ``shape`` are derived once per array and cached (the training
step asks for them thousands of times): whatever gives a tensor another array must show
through at once. Each test reads both first, so that a stale cache would answer."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import nn


def _layout(t):
    return t.dtype, t.shape


def _actual(t):
    """What the values say, read around the cache (through NumPy)."""
    values = np.asarray(t.detach().tolist())
    return values.shape


def test_assigning_data_shows_its_dtype_and_shape(device):
    t = lucid.zeros(2, 3, device=device)
    alias = t.detach()
    assert _layout(t) == _layout(alias) == (lucid.float32, (2, 3))
    version = t._version
    t.data = lucid.ones(4, dtype=lucid.float64, device=device)
    assert _layout(t) == (lucid.float64, (4,)) and _actual(t) == (4,)
    assert t.ndim == 1 and t.numel() == 4 and len(t) == 4
    assert t._version == version + 1
    # as in torch, an alias taken before keeps the old storage, and so its old dtype and shape
    assert _layout(alias) == (lucid.float32, (2, 3))


def test_a_parameter_converted_by_its_module_shows_the_new_dtype(device):
    layer = nn.Linear(3, 2, device=device)
    weight = layer.weight
    assert weight.dtype is lucid.float32 and weight.grad is None
    layer.half()
    assert weight.dtype is lucid.float16 and layer.bias.dtype is lucid.float16
    layer.double()
    assert weight.dtype is lucid.float64
    out = layer(lucid.ones(1, 3, dtype=lucid.float64, device=device))
    assert out.dtype is lucid.float64 and out.shape == (1, 2)


def test_conversions_make_new_tensors_and_leave_the_source_as_it_was(device):
    x = lucid.tensor([1.5, 2.5], device=device)
    assert _layout(x) == (lucid.float32, (2,))
    assert x.half().dtype is lucid.float16 and x.to(lucid.float64).dtype is lucid.float64
    assert x.to(lucid.int64).dtype is lucid.int64
    assert _layout(x) == (lucid.float32, (2,))


def test_in_place_writes_keep_the_layout_and_the_alias_sees_the_values(device):
    x = lucid.zeros(2, 2, device=device)
    alias = x.detach()
    assert _layout(x) == _layout(alias)
    x.add_(1).mul_(lucid.tensor([2.0, 3.0], device=device))
    x[0] = 7.0
    x.copy_(lucid.tensor([[1, 2]], device=device))  # int64 values, written as float32
    assert _layout(x) == _layout(alias) == (lucid.float32, (2, 2))
    assert alias.tolist() == [[1.0, 2.0], [1.0, 2.0]]


def test_a_view_shows_its_own_shape_after_its_base_is_written(device):
    base = lucid.arange(6, dtype=lucid.float32, device=device)
    view = base.view(2, 3)
    assert _layout(view) == (lucid.float32, (2, 3))
    base.add_(1)
    assert _layout(view) == (lucid.float32, (2, 3)) and _actual(view) == (2, 3)
    assert view.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    view.mul_(2)
    assert _layout(base) == (lucid.float32, (6,)) and base.tolist()[-1] == 12.0


def test_vector_to_parameters_rebinds_each_parameters_storage(device):
    layer = nn.Linear(2, 2, device=device, dtype=lucid.float64)
    assert [p.shape for p in layer.parameters()] == [(2, 2), (2,)]
    nn.utils.vector_to_parameters(lucid.arange(6, dtype=lucid.float64, device=device), layer.parameters())
    assert [p.shape for p in layer.parameters()] == [(2, 2), (2,)]
    assert layer.weight.tolist() == [[0.0, 1.0], [2.0, 3.0]] and layer.bias.tolist() == [4.0, 5.0]


def test_a_stale_saved_value_is_still_caught_after_the_layout_was_read(device):
    w = lucid.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = w * 2
    y = h * h
    assert _layout(h) == (lucid.float32, (2,))
    with lucid.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
