"""The everyday torch surface (issue 13) against torch 2.13, live, on every device.

Differentiable ops are the ``SURFACE`` cases of ``op_cases`` (finite differences and the
MLX-and-NumPy comparison run them too): here each runs through lucid and torch on every
device, in float64 outputs and gradients within ``PARITY``, in float32 against the float64
truth of the same computation on the same float32 values, exactly where the case is exact
by construction (``op_cases.EXACT``), else judged in ulps with torch's float32 error as the
ceiling (``tolerances.judge``). Then what has
no gradient (indices, integer results, factories, random fills), the names (dtype aliases,
tensor types, devices, generators) and the errors of bad arguments, each compared with
what torch raises.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import lucid
import op_cases
from helpers import case_truth, judge_case, run_case
from helpers import raised as _raised
from conftest import DEVICES
from op_cases import SURFACE
from tolerances import close, judge

torch = pytest.importorskip("torch")

def _pair(array, dtype, device):
    ours = lucid.tensor(array, dtype=getattr(lucid, dtype), device=device, requires_grad=True)
    theirs = torch.tensor(array, dtype=getattr(torch, dtype), requires_grad=True)
    return ours, theirs


@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors of dimension other than 2")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", SURFACE, ids=lambda c: c.name)
def test_op_matches_torch(case, device):
    pairs = [_pair(a, "float64", device) for a in case.arrays(seed=3)]
    ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
    out, expected = case.fn(lucid, *ours), case.fn(torch, *theirs)
    assert out.shape == tuple(expected.shape) and out.dtype is lucid.float64 and out.device == device
    close(out.detach().cpu().numpy(), expected.detach().numpy(), "float64")
    cotangent = np.random.default_rng(5).standard_normal(out.shape)
    out.backward(lucid.tensor(cotangent, dtype=out.dtype, device=device))
    expected.backward(torch.tensor(cotangent, dtype=expected.dtype))
    for mine, reference in zip(ours, theirs):
        close(mine.grad.cpu().numpy(), reference.grad.numpy(), "float64")


@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors of dimension other than 2")
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", SURFACE, ids=lambda c: c.name)
def test_op_in_float32_against_the_truth(case, device):
    """The same case in float32 from the same inputs, rounded to float32, and a cotangent of
    ``op_cases.cotangent``'s: lucid's output and gradients against the float64 truth (torch's
    float64 run on those float32 values), torch's float32 run the ceiling."""
    arrays = [a.astype(np.float32) for a in case.arrays(seed=3)]
    cotangent = functools.partial(op_cases.cotangent, seed=5)
    out, *mine = run_case(case, lucid, arrays, "float32", cotangent, device)
    _, *reference = run_case(case, torch, arrays, "float32", cotangent)
    assert out.dtype is lucid.float32 and out.device == device
    judge_case(case, mine, reference, case_truth(case, arrays, cotangent), "float32", f"{case.name} on {device}")


# --- results without gradients ------------------------------------------------------------------

TIES = np.array([[3.0, 1.0, 2.0, 1.0, 3.0], [0.5, 0.5, 0.5, -1.0, 2.0], [np.nan, 1.0, -np.inf, 1.0, np.inf]])


def _both(fn, array, device):
    return fn(lucid.tensor(array, device=device)), fn(torch.tensor(array))


def _same(ours, theirs):
    assert ours.shape == tuple(theirs.shape), (ours.shape, theirs.shape)
    np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())


@pytest.mark.parametrize("name,fn", [
    ("argmax", lambda t: t.argmax()),
    ("argmax_dim", lambda t: t.argmax(dim=1)),
    ("argmax_keepdim", lambda t: t.argmax(0, keepdim=True)),
    ("argmin_dim", lambda t: t.argmin(1)),
    ("argmin_none_keepdim", lambda t: t.argmin(keepdim=True)),
    ("argsort_stable", lambda t: t.argsort(dim=1, stable=True)),
    ("argsort_desc_stable", lambda t: t.argsort(dim=1, descending=True, stable=True)),
    ("argsort_dim0", lambda t: t.argsort(dim=0, stable=True)),
    ("sort_stable", lambda t: t.sort(dim=1, stable=True)[1]),
    ("sort_values", lambda t: t.sort(1, descending=True)[0]),
    ("cumsum_int", lambda t: (t > 1).cumsum(1)),
    ("cumsum_long", lambda t: t.long().cumsum(0)),
])
def test_indices_and_integer_results_match_torch(name, fn, device):
    array = TIES if "cumsum_long" not in name else np.array([[1, 2, 3], [4, 5, 6]])
    ours, theirs = _both(fn, array, device)
    _same(ours, theirs)


@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"])
def test_comparison_methods_match_torch(name, device):
    a, b = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), np.array([2.0, 2.0, 2.0])
    if name.startswith("logical"):
        a, b = a > 1.5, b > 2.5
    ours = getattr(lucid.tensor(a, device=device), name)(lucid.tensor(b, device=device))
    theirs = getattr(torch.tensor(a), name)(torch.tensor(b))
    _same(ours, theirs)
    assert ours.dtype is lucid.bool


@pytest.mark.parametrize("name,args", [
    ("masked_fill_", lambda m: (m.tensor([True, False, True]), -1.0)),
    ("scatter_", lambda m: (1, m.tensor([[2], [0]]), 5.0)),
    ("scatter_add_", lambda m: (0, m.tensor([[1, 1, 0]]), m.ones(1, 3, dtype=m.float64))),
    ("index_add_", lambda m: (1, m.tensor([2, 2]), m.ones(2, 2, dtype=m.float64))),
])
def test_in_place_variants_write_into_self_as_torch(name, args, device):
    ours = lucid.tensor(np.arange(6.0).reshape(2, 3), device=device)
    theirs = torch.tensor(np.arange(6.0).reshape(2, 3))
    version = ours._version
    out = getattr(ours, name)(*[a.to(device) if isinstance(a, lucid.Tensor) else a for a in args(lucid)])
    getattr(theirs, name)(*args(torch))
    assert out is ours and ours._version > version
    _same(ours, theirs)


def test_one_hot_matches_torch(device):
    import torch.nn.functional as TF

    for values, classes in [([0, 3, 1], -1), ([[1, 0], [2, 2]], 4), ([], 3)]:
        ours = lucid.nn.functional.one_hot(lucid.tensor(values, dtype=lucid.int64, device=device), classes)
        _same(ours, TF.one_hot(torch.tensor(values, dtype=torch.int64), classes))
        assert ours.device == device
    for values, classes in [([0, 3], 2), ([-1], -1), ([], -1)]:
        ours = _raised(lambda: lucid.nn.functional.one_hot(lucid.tensor(values, dtype=lucid.int64), classes))
        theirs = _raised(lambda: TF.one_hot(torch.tensor(values, dtype=torch.int64), classes))
        assert type(ours) is type(theirs) is RuntimeError
    assert type(_raised(lambda: lucid.nn.functional.one_hot(lucid.tensor([0.0])))) is RuntimeError


@pytest.mark.parametrize("name", ["maximum", "minimum", "max", "min"])
def test_elementwise_extremes_share_ties_as_torch(name, device):
    a, b = np.array([1.0, 2.0, 3.0, 2.0]), np.array([1.0, 3.0, 2.0, 2.0])
    ours = [lucid.tensor(v, dtype=lucid.float64, device=device, requires_grad=True) for v in (a, b)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, b)]
    getattr(lucid, name)(*ours).sum().backward()
    getattr(torch, name)(*theirs).sum().backward()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_array_equal(mine.grad.cpu().numpy(), reference.grad.numpy())
    assert type(_raised(lambda: lucid.maximum(ours[0], 2.0))) is type(_raised(lambda: torch.maximum(theirs[0], 2.0)))


@pytest.mark.parametrize("fn", [
    lambda m: m.tensor([-7, 7, 0, 5]) // 2, lambda m: m.tensor([-7, 7, 9]) % m.tensor([3, -3, 4]),
    lambda m: 7 % m.tensor([3, -3]), lambda m: -7 // m.tensor([2, -2]), lambda m: m.tensor([-3.5, 2.5, 7.0]) // 2,
    lambda m: m.floor_divide(m.tensor([-3.5, 2.5]), -1.5), lambda m: m.tensor([1, -2]).floor(),
    lambda m: m.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4]).round(), lambda m: m.ceil(m.tensor([-0.5, 0.2])),
], ids=lambda f: "")
def test_integer_and_rounding_results_match_torch(fn, device):
    with lucid.no_grad():
        ours = fn(lucid).to(device)
    theirs = fn(torch)
    _same(ours, theirs)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")


def test_topk_indices_match_torch_without_ties(device):
    array = np.random.default_rng(0).permutation(24).reshape(4, 6).astype(np.float64)
    for k, dim, largest in [(3, -1, True), (2, 0, False), (6, 1, True), (0, 1, True)]:
        ours, theirs = _both(lambda t: t.topk(k, dim, largest), array, device)
        _same(ours.values, theirs.values)
        _same(ours.indices, theirs.indices)


@pytest.mark.parametrize("args", [(0, 1, 5), (-2.5, 3, 7), (10, 0, 4), (0, 1, 1), (0, 1, 0), (1, 2, 100)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_linspace_matches_torch(args, dtype, device):
    ours = lucid.linspace(*args, dtype=getattr(lucid, dtype), device=device)
    theirs = torch.linspace(*args, dtype=getattr(torch, dtype))
    assert ours.shape == tuple(theirs.shape) and ours.dtype is getattr(lucid, dtype)
    truth = np.linspace(*args)
    if dtype == "int64":
        _same(ours, theirs)
    elif dtype == "float64":
        close(ours.numpy(), theirs.numpy(), "float64")
    else:  # start + i * step, rounded: against the float64 truth, torch's float32 error the ceiling
        judge(ours.numpy(), theirs.numpy(), truth, dtype, what=f"linspace{args}")


def test_factories_match_torch_shapes_and_dtypes(device):
    cases = [
        (lambda m: m.eye(3), None), (lambda m: m.eye(2, 4, dtype=m.float64), None),
        (lambda m: m.full((2, 3), 1.5), None), (lambda m: m.full((2,), True), None),
        (lambda m: m.empty(2, 3), "shape"), (lambda m: m.empty((4,), dtype=m.long), "shape"),
        (lambda m: m.randint(3, (5,)), "shape"), (lambda m: m.randint(-3, 3, (2, 2), dtype=m.int32), "shape"),
        (lambda m: m.randperm(6), "shape"), (lambda m: m.zeros(2).new_zeros(3, 2), None),
        (lambda m: m.ones(1, dtype=m.float64).new_ones((2,)), None),
        (lambda m: m.zeros(1, dtype=m.int64).new_full((2,), 7), None),
        (lambda m: m.zeros(1, dtype=m.float64).new_tensor([1, 2]), None),
        (lambda m: m.zeros(1).new_empty(2), "shape"), (lambda m: m.full_like(m.zeros(2, dtype=m.int32), 4), None),
        (lambda m: m.zeros_like(m.ones(3)).new_zeros((1, 2), dtype=m.int64), None),
    ]
    for make, what in cases:
        ours, theirs = make(lucid), make(torch)
        assert ours.shape == tuple(theirs.shape)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), (ours.dtype, theirs.dtype)
        if what is None:
            _same(ours, theirs)
    on_device = lucid.zeros(1, device=device).new_zeros(2)
    assert on_device.device == device


def test_random_factories_are_in_range_and_reproducible(device):
    x = lucid.randint(-2, 5, (2000,), device=device)
    assert x.dtype is lucid.int64 and x.device == device
    assert set(x.tolist()) == set(range(-2, 5))
    p = lucid.randperm(50, device=device)
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    g = lucid.Generator().manual_seed(5)
    first = [lucid.randint(10, (4,), generator=g).tolist(), lucid.randperm(8, generator=g).tolist(),
             lucid.randn(3, generator=g).tolist(), lucid.rand(3, generator=g).tolist()]
    g.manual_seed(5)
    again = [lucid.randint(10, (4,), generator=g).tolist(), lucid.randperm(8, generator=g).tolist(),
             lucid.randn(3, generator=g).tolist(), lucid.rand(3, generator=g).tolist()]
    assert first == again
    # a generator of its own leaves the default stream alone
    lucid.manual_seed(1)
    expected = lucid.randn(4).tolist()
    lucid.manual_seed(1)
    lucid.randn(100, generator=lucid.Generator().manual_seed(2))
    assert lucid.randn(4).tolist() == expected


def test_manual_seed_returns_the_default_generator():
    g = lucid.manual_seed(11)
    assert isinstance(g, lucid.Generator) and g.initial_seed() == 11 == lucid.initial_seed()
    assert lucid.Generator().initial_seed() == torch.Generator().initial_seed()
    with pytest.raises(TypeError):
        lucid.Generator().manual_seed(1.5)


@pytest.mark.parametrize("method,args,check", [
    ("uniform_", (-2.0, 3.0), lambda x: bool((x >= -2).all()) and bool((x < 3).all()) and abs(x.mean().item() - 0.5) < 0.1),
    ("normal_", (1.0, 2.0), lambda x: abs(x.mean().item() - 1) < 0.1 and abs(x.std().item() - 2) < 0.1),
    ("fill_", (2.5,), lambda x: bool((x == 2.5).all())),
    ("zero_", (), lambda x: bool((x == 0).all())),
])
def test_in_place_fills_work_on_a_parameter_through_data(method, args, check, device):
    w = lucid.nn.Parameter(lucid.ones(4000, dtype=lucid.float64, device=device))
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(w, method)(*args)
    version = w._version
    out = getattr(w.data, method)(*args)
    assert check(w.detach()) and out.device == device
    with lucid.no_grad():
        getattr(w, method)(*args)
    assert check(w.detach()) and w._version > version
    g = lucid.Generator().manual_seed(3)
    if method in ("uniform_", "normal_"):
        a = getattr(w.data, method)(*args, generator=g).tolist()
        g.manual_seed(3)
        assert getattr(w.data, method)(*args, generator=g).tolist() == a


def test_random_fills_refuse_bad_bounds_as_torch():
    for fn in (lambda m: m.zeros(3).uniform_(1, 0), lambda m: m.zeros(3).normal_(0, -1)):
        ours, theirs = _raised(lambda: fn(lucid)), _raised(lambda: fn(torch))
        assert type(ours) is type(theirs) is RuntimeError
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.zeros(3, dtype=lucid.int64).uniform_()


def test_from_numpy_shares_memory_and_keeps_the_dtype():
    for dtype in (np.float64, np.float32, np.int64, np.int32, np.bool_):
        a = np.zeros(3, dtype=dtype)
        t = lucid.from_numpy(a)
        assert t.dtype.name == str(torch.from_numpy(a).dtype).removeprefix("torch.")
        a[1] = 1
        assert t.tolist()[1] == 1
    with pytest.raises(TypeError, match="expected np.ndarray"):
        lucid.from_numpy([1.0])
    with pytest.raises(TypeError):
        lucid.from_numpy(np.zeros(2, dtype=np.uint16))


# --- names: dtypes, tensor types, devices ---------------------------------------------------------


def test_dtype_aliases_are_torchs():
    for alias in ("float", "double", "half", "long", "int", "bool", "float32", "float64", "int64", "int32"):
        assert getattr(lucid, alias).name == str(getattr(torch, alias)).removeprefix("torch."), alias
    assert repr(lucid.float) == "lucid.float32" == str(lucid.float32)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "BoolTensor"])
def test_tensor_types_make_and_recognise_tensors_as_torch(name):
    ours, theirs = getattr(lucid, name), getattr(torch, name)
    for args in [(2, 3), ([1, 0, 2],), ([[1.5, -2.0]],), ()]:
        a, b = ours(*args), theirs(*args)
        assert a.shape == tuple(b.shape) and a.dtype.name == str(b.dtype).removeprefix("torch.")
        if args and not isinstance(args[0], int):
            _same(a, b)
        assert isinstance(a, ours) and not isinstance(a.to(lucid.float64 if name != "DoubleTensor" else lucid.int64), ours)
    assert lucid.zeros(2).type(ours).dtype.name == str(torch.zeros(2).type(theirs).dtype).removeprefix("torch.")
    assert lucid.zeros(2).type(f"torch.{name}").dtype is ours.dtype


def test_type_names_the_type_and_converts():
    x = lucid.tensor([1.5, -2.5])
    assert x.type() == "lucid.FloatTensor" and x.double().type() == "lucid.DoubleTensor"
    _same(x.type(lucid.int64), torch.tensor([1.5, -2.5]).type(torch.int64))
    with pytest.raises(ValueError, match="invalid type"):
        x.type("foo")


def test_device_prints_as_torch_and_equals_its_name(device):
    d = lucid.device(device)
    assert repr(lucid.device("cpu")) == repr(torch.device("cpu")) == "device(type='cpu')"
    assert repr(lucid.device("cpu", 0)) == repr(torch.device("cpu", 0))
    assert str(lucid.device("cpu:0")) == str(torch.device("cpu:0")) == "cpu:0"
    assert lucid.device("cpu:0").index == 0 and d.type == device and d == device
    x = lucid.zeros(2, device=d)
    assert x.device == d and repr(x.device) == f"device(type='{device}')"
    model = lucid.nn.Linear(2, 2).to(lucid.device(device))
    assert model.weight.device == device
    for bad in ("foo", "cpu:x"):
        assert type(_raised(lambda: lucid.device(bad))) is type(_raised(lambda: torch.device(bad))) is RuntimeError


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32", "bool"])
def test_zero_dimensional_tensors_print_as_torch(dtype):
    values = [2.5, 3.0, 0.1, 1e-8, 123456.7, float("nan"), float("-inf"), -0.5, 1e9, 0.0, -3.0, 12345678.9, 1e-4]
    if dtype in ("int64", "int32"):
        values = [0, -3, 12345]
    elif dtype == "bool":
        values = [True, False]
    for v in values:
        ours = repr(lucid.tensor(v, dtype=getattr(lucid, dtype))).replace("lucid.", "torch.")
        assert ours == repr(torch.tensor(v, dtype=getattr(torch, dtype)))
        assert str(lucid.tensor(v, dtype=getattr(lucid, dtype))).replace("lucid.", "torch.") == ours


def test_zero_dimensional_values_format_as_torch():
    assert f"{lucid.tensor(0.5):.2f}" == f"{torch.tensor(0.5):.2f}"


def test_inference_mode_records_nothing_and_restores():
    x = lucid.ones(2, requires_grad=True)
    with lucid.inference_mode():
        assert not (x * 2).requires_grad and not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()
    with lucid.inference_mode(False):
        assert (x * 2).requires_grad

    @lucid.inference_mode
    def bare(t):
        return t * 2

    assert not bare(x).requires_grad and lucid.is_grad_enabled()


# --- bad arguments: torch's error types -----------------------------------------------------------



def _i(m, values):
    return m.tensor(values)


BAD = {
    "mm_3d": lambda m: m.mm(m.zeros(2, 3, 4), m.zeros(4, 2)),
    "mm_shapes": lambda m: m.mm(m.zeros(2, 3), m.zeros(2, 3)),
    "mm_dtypes": lambda m: m.zeros(2, 3).mm(m.zeros(3, 2, dtype=m.float64)),
    "bmm_2d": lambda m: m.bmm(m.zeros(2, 3), m.zeros(2, 3, 4)),
    "bmm_batch": lambda m: m.bmm(m.zeros(2, 3, 4), m.zeros(3, 4, 5)),
    "t_3d": lambda m: m.zeros(2, 3, 4).t(),
    "narrow_length": lambda m: m.zeros(2, 3).narrow(1, 2, 2),
    "narrow_start": lambda m: m.zeros(2, 3).narrow(1, 4, 0),
    "narrow_dim": lambda m: m.zeros(2, 3).narrow(2, 0, 1),
    "narrow_negative_length": lambda m: m.zeros(2, 3).narrow(1, 0, -1),
    "split_zero": lambda m: m.zeros(2, 3).split(0, 1),
    "split_sizes": lambda m: m.zeros(2, 3).split([1, 1], 1),
    "split_negative": lambda m: m.zeros(3).split(-1),
    "chunk_zero": lambda m: m.zeros(3).chunk(0),
    "gather_bounds": lambda m: m.zeros(2, 3).gather(1, _i(m, [[0], [5]])),
    "gather_float_index": lambda m: m.zeros(2, 3).gather(1, m.tensor([[0.0]])),
    "gather_ndim": lambda m: m.zeros(2, 3).gather(1, _i(m, [0])),
    "gather_size": lambda m: m.zeros(2, 3).gather(1, m.zeros(3, 1, dtype=m.int64)),
    "gather_list": lambda m: m.zeros(2, 3).gather(1, [[0]]),
    "scatter_bounds": lambda m: m.zeros(2, 3).scatter(1, _i(m, [[0], [5]]), 1.0),
    "scatter_dtype": lambda m: m.zeros(2, 3).scatter(1, _i(m, [[0], [1]]), m.ones(2, 1, dtype=m.float64)),
    "scatter_src_small": lambda m: m.zeros(2, 3).scatter(1, _i(m, [[0, 1, 2, 0]]), m.ones(1, 2)),
    "scatter_add_number": lambda m: m.zeros(2, 3).scatter_add(1, _i(m, [[0], [1]]), 2),
    "index_select_2d": lambda m: m.zeros(2, 3).index_select(1, _i(m, [[0]])),
    "index_select_float": lambda m: m.zeros(2, 3).index_select(1, m.tensor([0.0])),
    "index_select_list": lambda m: m.zeros(2, 3).index_select(1, [0]),
    "index_add_count": lambda m: m.zeros(2, 3).index_add(1, _i(m, [0]), m.ones(2, 2)),
    "index_add_dtype": lambda m: m.zeros(2, 3).index_add(1, _i(m, [0]), m.ones(2, 1, dtype=m.float64)),
    "masked_fill_long_mask": lambda m: m.zeros(2, 3).masked_fill(_i(m, [1, 0, 1]), 1.0),
    "masked_fill_shape": lambda m: m.zeros(2, 3).masked_fill(m.ones(3, 3, dtype=m.bool), 1.0),
    "masked_fill_value_1d": lambda m: m.zeros(2, 3).masked_fill(m.ones(3, dtype=m.bool), m.ones(2)),
    "topk_k": lambda m: m.zeros(2, 3).topk(4),
    "topk_negative": lambda m: m.zeros(2, 3).topk(-1),
    "sort_dim": lambda m: m.zeros(2, 3).sort(3),
    "cumsum_dim": lambda m: m.zeros(2, 3).cumsum(2),
    "cumsum_no_dim": lambda m: m.zeros(2, 3).cumsum(),
    "argmax_empty": lambda m: m.zeros(0).argmax(),
    "argmax_dim": lambda m: m.zeros(2, 3).argmax(5),
    "norm_long": lambda m: m.tensor([1, 2]).norm(),
    "norm_order": lambda m: m.zeros(2, 3).norm(p="abc"),
    "softmax_long": lambda m: m.tensor([1, 2]).softmax(0),
    "softmax_no_dim": lambda m: m.zeros(2, 3).softmax(),
    "tril_1d": lambda m: m.zeros(3).tril(),
    "einsum_sizes": lambda m: m.einsum("ij,jk", m.zeros(2, 3), m.zeros(2, 3)),
    "einsum_operands": lambda m: m.einsum("ij,jk->ik", m.zeros(2, 3)),
    "einsum_output": lambda m: m.einsum("ij->k", m.zeros(2, 3)),
    "einsum_diagonal": lambda m: m.einsum("ii->i", m.ones(2, 3)),
    "linspace_steps": lambda m: m.linspace(0, 1, -1),
    "randint_bounds": lambda m: m.randint(5, 3, (2,)),
    "randint_size": lambda m: m.randint(3, 2),
    "randperm_negative": lambda m: m.randperm(-1),
    "clamp_nothing": lambda m: m.zeros(2).clamp(),
    "var_long": lambda m: m.tensor([1, 2]).var(),
    "expand_size": lambda m: m.zeros(2, 3).expand(3, 3),
    "expand_fewer": lambda m: m.zeros(2, 3).expand(3),
    "repeat_fewer": lambda m: m.zeros(2, 3).repeat(2),
    "type_name": lambda m: m.zeros(2).type("foo"),
    "integer_remainder_by_zero": lambda m: m.tensor([1, 2]) % m.tensor([1, 0]),
    "integer_floor_divide_by_zero": lambda m: m.tensor([1, 2]) // 0,
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_torchs_error_type(name, recwarn):
    ours, theirs = _raised(lambda: BAD[name](lucid)), _raised(lambda: BAD[name](torch))
    assert theirs is not None, "torch accepts this: the case is wrong"
    assert ours is not None, f"lucid accepted what torch refuses ({type(theirs).__name__}: {theirs})"
    assert isinstance(ours, type(theirs)), f"lucid raised {type(ours).__name__}: {ours}; torch {type(theirs).__name__}"
    assert str(ours), "the message says what was wrong"


# --- shapes hypothesis draws ----------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402 - this section's own imports
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import array_shapes  # noqa: E402


def _dim_ops():
    """Ops of (module, tensor, dim) -> tensor, each differentiable, for any shape with a dimension."""
    return {
        "softmax": lambda m, x, d: x.softmax(d),
        "log_softmax": lambda m, x, d: x.log_softmax(d),
        "cumsum": lambda m, x, d: x.cumsum(d),
        "sort": lambda m, x, d: x.sort(dim=d, descending=True).values,
        "norm": lambda m, x, d: x.norm(dim=d),
        "norm_3": lambda m, x, d: x.norm(p=3, dim=d, keepdim=True),
        "var": lambda m, x, d: x.var(d),
        "logsumexp": lambda m, x, d: x.logsumexp(d),
        "chunk": lambda m, x, d: m.cat(x.chunk(2, d)[::-1], d),
        "split": lambda m, x, d: x.split(1, d)[-1] * 2,
        "flip": lambda m, x, d: x.flip(d) * x,
        "gather": lambda m, x, d: x.gather(d, x.argsort(dim=d)),
        "narrow": lambda m, x, d: x.narrow(d, x.shape[d] // 2, (x.shape[d] + 1) // 2),
        "index_select": lambda m, x, d: x.index_select(d, m.tensor([0, x.shape[d] - 1, 0])),
        "topk": lambda m, x, d: x.topk(1, dim=d).values,
        "einsum_last": lambda m, x, d: m.einsum("...i,...i->...", x, x),
    }


DIM_OPS = _dim_ops()


@pytest.mark.parametrize("name", sorted(DIM_OPS))
@settings(max_examples=10, deadline=None)
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4), data=st.data())
def test_dim_ops_match_torch_on_drawn_shapes(name, shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    # distinct values, so sorts and argsorts have no ties to order differently
    array = np.random.default_rng(seed).permutation(np.prod(shape)).reshape(shape) / np.prod(shape) - 0.5
    ours, theirs = _pair(array, "float64", "cpu")
    fn = DIM_OPS[name]
    with np.errstate(divide="ignore", invalid="ignore"):  # var of one element is nan, as torch's
        out, expected = fn(lucid, ours, dim), fn(torch, theirs, dim)
    assert out.shape == tuple(expected.shape)
    close(out.detach().numpy(), expected.detach().numpy(), "float64")
    cotangent = np.random.default_rng(seed + 1).standard_normal(out.shape)
    out.backward(lucid.tensor(cotangent, dtype=lucid.float64))
    expected.backward(torch.tensor(cotangent))
    close(ours.grad.numpy(), theirs.grad.numpy(), "float64")
