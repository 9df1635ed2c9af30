"""The functions that make tensors: dtypes, shapes, devices and values, against torch."""

import numpy as np
import pytest

import lucid
from helpers import torch_or_skip
from tolerances import close, judge


def _same_dtype(ours, theirs):
    assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1], (ours.dtype, theirs.dtype)


@pytest.mark.parametrize(
    "data",
    [1.5, 7, True, [1, 2, 3], [1.0, 2], [[True, False]], [[1, 2], [3, 4]], [], [[]], np.float64(2.5),
     np.array([1, 2], dtype=np.int32), np.array([1.5], dtype=np.float16), np.arange(3.0)],
    ids=repr,
)
def test_tensor_infers_dtype_and_shape_like_torch(device, data):
    torch = torch_or_skip()
    ours = lucid.tensor(data, device=device)
    theirs = torch.tensor(data)
    _same_dtype(ours, theirs)
    assert ours.shape == tuple(theirs.shape) and ours.device == device
    assert ours.tolist() == theirs.tolist()


def test_tensor_copies_its_data(device):
    host = np.array([1.0, 2.0])
    t = lucid.tensor(host, device=device)
    host[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    u = lucid.tensor(t)
    with lucid.no_grad():
        u.add_(1)
    assert t.tolist() == [1.0, 2.0]


def test_tensor_with_dtype_and_requires_grad(device):
    t = lucid.tensor([1, 2], dtype=lucid.float64, device=device, requires_grad=True)
    assert t.dtype is lucid.float64 and t.requires_grad and t.is_leaf
    assert lucid.tensor([1.7, -1.7], dtype=lucid.int64, device=device).tolist() == [1, -1]
    assert lucid.tensor([0.0, 2.0], dtype=lucid.bool, device=device).tolist() == [False, True]


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_zeros_ones(device, name):
    torch = torch_or_skip()
    make = getattr(lucid, name)
    for args in [(2, 3), ((2, 3),), ([4],), ((),), (0, 2)]:
        ours, theirs = make(*args, device=device), getattr(torch, name)(*args)
        assert ours.shape == tuple(theirs.shape) and ours.device == device
        _same_dtype(ours, theirs)
        assert ours.tolist() == theirs.tolist()
    x = make(2, dtype=lucid.int32, device=device, requires_grad=False)
    assert x.dtype is lucid.int32
    assert make(2, device=device, requires_grad=True).requires_grad


def test_full(device):
    torch = torch_or_skip()
    for value in (7, 2.5, True, -1):
        ours, theirs = lucid.full((2, 2), value, device=device), torch.full((2, 2), value)
        _same_dtype(ours, theirs)
        assert ours.tolist() == theirs.tolist()
    assert lucid.full(3, 1, dtype=lucid.float16, device=device).dtype is lucid.float16
    assert lucid.full([2], 0.5, device=device).tolist() == [0.5, 0.5]


def test_like_factories(device):
    base = lucid.tensor([[1, 2, 3]], dtype=lucid.int32, device=device)
    for make, value in ((lucid.zeros_like, 0), (lucid.ones_like, 1)):
        t = make(base)
        assert t.shape == (1, 3) and t.dtype is lucid.int32 and t.device == device
        assert t.tolist() == [[value] * 3]
        f = make(base, dtype=lucid.float64)
        assert f.dtype is lucid.float64 and not f.requires_grad
        assert make(base, dtype=lucid.float32, requires_grad=True).requires_grad
    other = "gpu" if device == "cpu" else "cpu"
    if lucid.is_available("gpu"):
        assert lucid.zeros_like(base, device=other).device == other


@pytest.mark.parametrize(
    "args",
    [(5,), (2, 7), (1, 10, 3), (0, 1, 0.1), (0.0, 1.0, 0.1), (1.5,), (-3, 3, 0.7), (10, 0, -3), (0, 1, 1 / 3),
     (0, 0), (5, 5, 1), (0.1, 0.5, 0.1)],
    ids=repr,
)
def test_arange_matches_torch(device, args):
    torch = torch_or_skip()
    ours, theirs = lucid.arange(*args, device=device), torch.arange(*args)
    _same_dtype(ours, theirs)
    assert ours.shape == tuple(theirs.shape)
    start, _, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if float(start).is_integer() and float(step).is_integer():  # integers: the same values, exactly
        assert ours.tolist() == theirs.tolist()
    else:  # start + i * step, rounded: against the float64 truth, torch's float32 error the ceiling
        truth = start + np.arange(ours.shape[0]) * step
        judge(ours.numpy(), theirs.numpy(), truth, "float32", what=f"arange{args}")
    # torch's float64 kernel may fuse start + i * step into one FMA: equal to the last bit or so
    ours64 = lucid.arange(*args, dtype=lucid.float64, device=device)
    theirs64 = torch.arange(*args, dtype=torch.float64)
    assert ours64.shape == tuple(theirs64.shape)
    close(ours64.numpy(), theirs64.numpy(), "float64")


def test_arange_dtype_rules(device):
    assert lucid.arange(4, device=device).dtype is lucid.int64
    assert lucid.arange(4.0, device=device).dtype is lucid.float32
    assert lucid.arange(0, 4, 0.5, device=device).dtype is lucid.float32
    assert lucid.arange(4, dtype=lucid.float64, device=device).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert lucid.arange(0, 1, 0.25, device=device, requires_grad=True).requires_grad


def test_randn_statistics(device):
    lucid.manual_seed(0)
    x = lucid.randn(100_000, device=device)
    assert x.dtype is lucid.float32 and x.shape == (100_000,)
    values = x.numpy().astype(np.float64)
    # mean within 5 standard errors (0.0032 each), std within 1%
    assert abs(values.mean()) < 5 / np.sqrt(values.size)
    assert abs(values.std() - 1) < 0.01
    assert (np.abs(values) < 4.5).mean() > 0.9999
    assert lucid.randn(2, 3, dtype=lucid.float64, device=device).dtype is lucid.float64
    assert lucid.randn((4, 1), device=device).shape == (4, 1)


def test_rand_statistics(device):
    lucid.manual_seed(1)
    values = lucid.rand(100_000, device=device).numpy().astype(np.float64)
    assert values.min() >= 0 and values.max() < 1
    assert abs(values.mean() - 0.5) < 0.005
    assert abs(values.var() - 1 / 12) < 0.002


def test_manual_seed_repeats_and_devices_agree():
    lucid.manual_seed(123)
    a, b = lucid.randn(5), lucid.rand(5)
    lucid.manual_seed(123)
    assert lucid.randn(5).tolist() == a.tolist() and lucid.rand(5).tolist() == b.tolist()
    lucid.manual_seed(124)
    assert lucid.randn(5).tolist() != a.tolist()
    if lucid.is_available("gpu"):
        lucid.manual_seed(123)
        assert lucid.randn(5, device="gpu").tolist() == a.tolist()
        assert lucid.rand(5, device="gpu").tolist() == b.tolist()
    # as torch, manual_seed returns the default generator, seeded
    assert isinstance(lucid.manual_seed(7), lucid.Generator) and lucid.manual_seed(7).initial_seed() == 7


def test_random_factories_refuse_integer_dtypes(device):
    for make in (lucid.randn, lucid.rand):
        with pytest.raises(RuntimeError, match="floating point"):
            make(3, dtype=lucid.int64, device=device)


def test_factories_make_leaves(device):
    for t in (lucid.zeros(2, device=device, requires_grad=True), lucid.randn(2, device=device, requires_grad=True),
              lucid.tensor([1.0], device=device, requires_grad=True)):
        assert t.is_leaf and t.grad is None and t.grad_fn is None


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda d: lucid.tensor([1.5, 2.0], dtype=lucid.float16, device=d), "tensor([1.5000, 2.0000]{dev}, dtype=lucid.float16)"),
        (lambda d: lucid.tensor([1.5, 2.0], dtype=lucid.float64, device=d), "tensor([1.5000, 2.0000]{dev}, dtype=lucid.float64)"),
        (lambda d: lucid.tensor([1, 2], device=d), "tensor([1, 2]{dev})"),
        (lambda d: lucid.tensor([1, 2], dtype=lucid.int32, device=d), "tensor([1, 2]{dev}, dtype=lucid.int32)"),
        (lambda d: lucid.tensor(True, device=d), "tensor(True{dev})"),
        (lambda d: lucid.tensor(2.5, device=d, requires_grad=True), "tensor(2.5000{dev}, requires_grad=True)"),
        (lambda d: lucid.tensor([1.0], device=d, requires_grad=True) * 2, "tensor([2.]{dev}, grad_fn=<MulBackward0>)"),
        (lambda d: lucid.zeros(0, device=d), "tensor([]{dev})"),
        (lambda d: lucid.zeros(2, 0, device=d), "tensor([]{dev}, size=(2, 0))"),
        (lambda d: lucid.tensor([], dtype=lucid.int64, device=d), "tensor([]{dev}, dtype=lucid.int64)"),
    ],
)
def test_repr(device, make, expected):
    dev = ", device='gpu'" if device == "gpu" else ""
    assert repr(make(device)) == expected.format(dev=dev)
