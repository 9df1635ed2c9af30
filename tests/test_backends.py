"""MLX ("gpu") and NumPy ("cpu"): the same op on the same numbers, right on both.

Every case of ``op_cases`` runs on both devices from the same inputs. In float32 each
device's output and gradients are held to the float64 truth of the same computation on the
same float32 values, never to the other device's float32 result: exactly where the case is
exact by construction, else in ulps (``tolerances.judge``) with torch's float32 error on the
same inputs as the ceiling. In float64 (where MLX has it) the devices agree within
``BACKENDS``. Then dtypes (inference, promotion, float64 and float16 surviving the trip
between devices), ``to()`` round trips, and the gathers and scatter-adds of indexing, which
must accumulate duplicates and stay vectorised on MLX. The accuracy of the elementwise ops,
activations and reductions over their hard regions is tests/test_accuracy.py's.
"""


import functools

import numpy as np
import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

import lucid
import op_cases
from helpers import case_truth, judge_case, run_case, torch_or_none
from op_cases import CASES
from tolerances import BACKENDS, close, judge

pytestmark = pytest.mark.skipif(not lucid.is_available("gpu"), reason="MLX is not installed")


def _mlx_has_float64() -> bool:
    """MLX computes float64 on its CPU device only (the Linux build, or a Mac's CPU stream)."""
    try:
        import mlx.core as mx
    except ImportError:
        return False
    return mx.default_device() == mx.cpu


def _close(actual, expected, dtype_name):
    assert actual.dtype is expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    close(np.asarray(actual), np.asarray(expected), dtype_name, table=BACKENDS)


def _run(case, device, dtype, arrays, cotangent):
    """``case`` on ``device`` in ``dtype``: ``(output, gradients)`` as float64 host arrays."""
    out, value, grads = run_case(case, lucid, arrays, dtype, cotangent, device)
    assert out.device == device and out.dtype is getattr(lucid, dtype)
    return value, grads


@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors of dimension other than 2")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_op_forward_and_gradients_float32(case):
    """Each device's float32 output and gradients against the float64 truth of the same
    computation on the same float32 values: exact where the case is (``op_cases.EXACT``),
    else judged in ulps with torch's float32 error on the same inputs as the ceiling (lucid
    "cpu"'s where torch is not installed: it evaluates in float64 and rounds once per op)."""
    arrays = [a.astype(np.float32) for a in case.arrays()]
    cotangent = functools.partial(op_cases.cotangent, seed=7)
    truth = case_truth(case, arrays, cotangent)
    cpu, gpu = (_run(case, device, "float32", arrays, cotangent) for device in ("cpu", "gpu"))
    torch = torch_or_none()
    reference = run_case(case, torch, arrays, "float32", cotangent)[1:] if torch else cpu
    judge_case(case, gpu, reference, truth, "float32", f"{case.name} on gpu")
    if torch:
        judge_case(case, cpu, reference, truth, "float32", f"{case.name} on cpu")


def _normal(shape):
    return np.random.default_rng(7).standard_normal(shape)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_op_forward_and_gradients_match_in_float64(case):
    if not _mlx_has_float64():
        pytest.skip("MLX has no float64 on the GPU")
    (out_cpu, grads_cpu), (out_gpu, grads_gpu) = (
        _run(case, device, "float64", case.arrays(), _normal) for device in ("cpu", "gpu"))
    close(out_gpu, out_cpu, "float64", table=BACKENDS)
    for g_gpu, g_cpu in zip(grads_gpu, grads_cpu):
        close(g_gpu, g_cpu, "float64", table=BACKENDS)


def test_the_float32_comparisons_can_fail():
    """An exact case one ulp off its truth fails; a judged one fails past its bound."""
    exact, judged = op_cases.BY_NAME["transpose"], op_cases.BY_NAME["exp"]
    for case, ulps, fails in ((exact, 1, True), (judged, 3, False), (judged, 5, True)):
        arrays = [a.astype(np.float32) for a in case.arrays()]
        out, grads = case_truth(case, arrays, functools.partial(op_cases.cotangent, seed=7))
        rounded = out.astype(np.float32).astype(np.float64)
        spacing = np.spacing(np.float32(np.abs(out).max()))
        off = rounded.copy()
        off.flat[0] += ulps * spacing
        mine, reference = (off, [g.astype(np.float32) for g in grads]), (rounded, grads)
        if fails:
            with pytest.raises(AssertionError):
                judge_case(case, mine, reference, (out, grads), "float32", case.name)
        else:
            judge_case(case, mine, reference, (out, grads), "float32", case.name)


def test_float64_exp_and_sigmoid_are_accurate_on_mlx():
    if not _mlx_has_float64():
        pytest.skip("MLX has no float64 on the GPU")
    x = np.concatenate([np.linspace(-740.0, 709.0, 20001), [0.0, -50.0, 50.0]])
    cpu = lucid.tensor(x, dtype=lucid.float64)
    gpu = cpu.to("gpu")
    _close(gpu.exp().cpu(), cpu.exp(), "float64")
    _close(gpu.sigmoid().cpu(), cpu.sigmoid(), "float64")
    special = lucid.tensor([float("inf"), float("-inf"), float("nan"), 1000.0, -1000.0], dtype=lucid.float64)
    np.testing.assert_array_equal(special.gpu().exp().numpy(), special.exp().numpy())
    np.testing.assert_array_equal(special.gpu().sigmoid().numpy(), special.sigmoid().numpy())


def test_non_differentiable_ops_match():
    lucid.manual_seed(3)
    x = lucid.randn(4, 5)
    y = lucid.randn(4, 5)
    for device in ("cpu", "gpu"):
        a, b = x.to(device), y.to(device)
        results = {
            "compare": [(a < b), (a <= 0), (a == a), (a != b), (a > 0.5), (a >= b)],
            "logical": [(a > 0) & (b > 0), (a > 0) | (b > 0), (a > 0) ^ (b > 0), ~(a > 0)],
            "reduce": [(a > 0).any(), (a > 0).all(dim=1), (a > 0).sum(), a.max(1).indices, a.min(0).indices],
            "sign": [a.sign(), a.isfinite(), lucid.isfinite(a / 0)],
            "int": [lucid.arange(10, device=device) * 3, lucid.arange(6, device=device).reshape(2, 3).sum(0),
                    lucid.arange(4, device=device) ** 2],
        }
        if device == "cpu":
            expected = results
        else:
            for key in expected:
                for got, want in zip(results[key], expected[key]):
                    assert got.device == "gpu" and got.dtype is want.dtype and got.shape == want.shape
                    np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=key)


def test_integer_matmul_on_both_devices():
    a = [[1, 2, 3], [4, 5, 6]]
    b = [[1, 0], [0, 1], [2, 2]]
    for device in ("cpu", "gpu"):
        x, y = lucid.tensor(a, device=device), lucid.tensor(b, device=device)
        assert (x @ y).tolist() == [[7, 8], [16, 17]]
        assert (x @ y).dtype is lucid.int64
        assert (x[0] @ y).tolist() == [7, 8]
        assert (x @ y[:, 0]).tolist() == [7, 16]
        assert (x[0] @ x[1]).item() == 32


# --- dtypes ------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "data, expected",
    [(1.5, "float32"), ([1, 2], "int64"), ([True, False], "bool"), ([1, 2.5], "float32"), (3, "int64")],
)
def test_python_data_dtypes(device, data, expected):
    torch = pytest.importorskip("torch")
    t = lucid.tensor(data, device=device)
    assert t.dtype is getattr(lucid, expected)
    assert str(torch.tensor(data).dtype) == f"torch.{expected}"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "bool"])
def test_dtypes_survive_every_device_move(dtype):
    ldtype = getattr(lucid, dtype)
    host = np.array([0.1, 1e-3, -2.5, 3.0, 1 / 3]).astype(dtype)
    cpu = lucid.tensor(host)
    assert cpu.dtype is ldtype
    gpu = cpu.to("gpu")
    assert gpu.dtype is ldtype and gpu.device == "gpu"
    np.testing.assert_array_equal(gpu.numpy(), host)  # bit for bit, float64 included
    back = gpu.cpu()
    assert back.dtype is ldtype and back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), host)
    direct = lucid.tensor(host, device="gpu")
    assert direct.dtype is ldtype
    np.testing.assert_array_equal(direct.numpy(), host)


def test_float64_values_from_python_keep_their_precision_on_mlx():
    values = [0.1, 1 / 3, 1e-300, 2.0 ** 0.5]
    t = lucid.tensor(values, dtype=lucid.float64, device="gpu")
    assert t.tolist() == values
    assert lucid.full((2,), 0.1, dtype=lucid.float64, device="gpu").tolist() == [0.1, 0.1]
    x = lucid.zeros(3, dtype=lucid.float64, device="gpu")
    with lucid.no_grad():
        x.fill_(0.1)
        assert x.tolist() == [0.1] * 3
        x.add_(1 / 3)
        assert x.tolist() == [0.1 + 1 / 3] * 3
    assert (lucid.ones(2, dtype=lucid.float64, device="gpu") * 0.1).tolist() == [0.1, 0.1]


def test_tensor_from_mlx_array_with_explicit_dtype():
    mx = pytest.importorskip("mlx.core")
    source = mx.array([1.5, 2.25, -3.0])
    for device in ("cpu", "gpu"):
        t = lucid.Tensor(source, dtype=lucid.float64, device=device)
        assert t.dtype is lucid.float64 and t.device == device
        assert t.tolist() == [1.5, 2.25, -3.0]
        i = lucid.Tensor(source, dtype=lucid.int64, device=device)
        assert i.dtype is lucid.int64 and i.tolist() == [1, 2, -3]
        assert lucid.Tensor(source, device=device).dtype is lucid.float32
    half = mx.array([1.5, 2.0], dtype=mx.bfloat16)
    assert lucid.Tensor(half, dtype=lucid.float32).tolist() == [1.5, 2.0]
    assert lucid.Tensor(half, dtype=lucid.float32, device="gpu").tolist() == [1.5, 2.0]
    # a copy: writing into the source afterwards does not reach the tensor
    t = lucid.Tensor(source, device="gpu")
    source += 1
    assert t.tolist() == [1.5, 2.25, -3.0]


PROMOTIONS = [
    # (left, right): dtype names, "0d:<dtype>" for a zero-dim tensor, or a Python number
    ("int64", 2.5), ("int64", 2), ("int32", 7), ("bool", 3), ("bool", True), ("bool", 1.5),
    ("float16", 2.5), ("float16", "float32"), ("float16", "0d:float64"), ("int64", "0d:float64"),
    ("int32", "0d:int64"), ("bool", "0d:int32"), ("0d:float16", "float32"), ("0d:float64", "0d:float16"),
    ("int32", "float16"), ("int64", "bool"), ("float32", "float64"), ("0d:int64", 2.5), ("int32", "int64"),
]


def _make(spec, module, device):
    if not isinstance(spec, str):
        return spec
    zero_dim = spec.startswith("0d:")
    name = spec[3:] if zero_dim else spec
    data = 1 if zero_dim else [1, 0]
    if module == "torch":
        import torch

        return torch.tensor(data, dtype=getattr(torch, name))
    return lucid.tensor(data, dtype=getattr(lucid, name), device=device)


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "where"])
@pytest.mark.parametrize("left, right", PROMOTIONS, ids=str)
def test_promotion_matches_torch(device, left, right, op):
    torch = pytest.importorskip("torch")
    ours = (_make(left, "lucid", device), _make(right, "lucid", device))
    theirs = (_make(left, "torch", device), _make(right, "torch", device))
    if op == "where":
        got = lucid.where(lucid.tensor([True, False], device=device), *ours)
        want = torch.where(torch.tensor([True, False]), *theirs)
    else:
        name = f"__{op}__" if op != "div" else "__truediv__"
        try:
            want = getattr(theirs[0], name)(theirs[1])
        except RuntimeError as error:  # torch refuses to subtract booleans: so must lucid
            with pytest.raises(RuntimeError, match=str(error).split(".")[0]):
                getattr(ours[0], name)(ours[1])
            return
        got = getattr(ours[0], name)(ours[1])
    dtype = str(want.dtype).split(".")[1]
    assert str(got.dtype).split(".")[1] == dtype
    assert got.device == device
    got, want = got.numpy().astype(np.float64), want.numpy().astype(np.float64)
    if op != "div":  # sums, differences, products and choices of 0, 1, 2.5 and 7: exact
        np.testing.assert_array_equal(got, want)
        return
    with np.errstate(divide="ignore", invalid="ignore"):  # 1/0 and 0/0 are inf and nan
        truth = np.divide(_values(left), _values(right))
    judge(got, want, truth, dtype, what=f"{left} / {right}")


def _values(spec):
    """The float64 values :func:`_make` gives ``spec``."""
    if not isinstance(spec, str):
        return np.float64(spec)
    return np.float64(1) if spec.startswith("0d:") else np.array([1.0, 0.0])


def test_unary_and_reduction_dtypes_match_torch(device):
    torch = pytest.importorskip("torch")
    ints = [[1, -2], [3, 4]]
    cases = {
        "exp": lambda m, t: t.exp(), "sqrt": lambda m, t: t.abs().sqrt(), "sigmoid": lambda m, t: t.sigmoid(),
        "relu": lambda m, t: t.relu(), "abs": lambda m, t: t.abs(), "neg": lambda m, t: -t,
        "sum": lambda m, t: t.sum(), "sum_bool": lambda m, t: (t > 0).sum(), "sum_bool_dim": lambda m, t: (t > 0).sum(1),
        "max": lambda m, t: t.max(), "clamp_float": lambda m, t: t.clamp(min=0.5), "clamp_int": lambda m, t: t.clamp(0, 2),
        "pow_float": lambda m, t: t ** 2.0, "pow_int": lambda m, t: t ** 2, "rpow": lambda m, t: 2 ** t,
        "rpow_float": lambda m, t: 2.5 ** t, "div": lambda m, t: t / 2, "log_softmax": lambda m, t: t.float().log_softmax(1),
        "cat": lambda m, t: m.cat([t, t.float()]), "half_sum": lambda m, t: t.half().sum(),
    }
    x = np.array(ints, dtype=np.float64)
    # the float32 results that are not exact, and their float64 truths; the others (integers,
    # halves, a sum of four integers) are
    truths = {"exp": np.exp(x), "sqrt": np.sqrt(np.abs(x)), "sigmoid": 1 / (1 + np.exp(-x)), "rpow_float": 2.5 ** x,
              "log_softmax": x - np.log(np.exp(x).sum(1, keepdims=True))}
    for name, fn in cases.items():
        got = fn(lucid, lucid.tensor(ints, device=device))
        want = fn(torch, torch.tensor(ints))
        dtype = str(want.dtype).split(".")[1]
        assert str(got.dtype).split(".")[1] == dtype, name
        if name in truths:
            assert dtype == "float32", name
            judge(got.numpy(), want.numpy(), truths[name], dtype, what=name)
        else:
            np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)


def test_integer_power_matches_torch(device):
    torch = pytest.importorskip("torch")
    base, exponent = [2, 1, -1, -1, 0, 3, -2, 5], [-2, -3, -1, -2, -1, 0, -1, 2]
    got = lucid.tensor(base, device=device) ** lucid.tensor(exponent, device=device)
    want = torch.tensor(base) ** torch.tensor(exponent)
    assert got.dtype is lucid.int64 and got.tolist() == want.tolist()
    assert (2 ** lucid.tensor([-1, 0, 3], device=device)).tolist() == [0, 1, 8]
    with pytest.raises(RuntimeError, match="negative integer powers"):
        lucid.tensor([1, 2], device=device) ** -1


def test_float16_reductions_accumulate_in_float32_like_torch(device):
    """Held to the float64 sums of the same values, torch's float16 error (one rounding of
    a float32 accumulation, under half an ulp) the ceiling, within 2 ulps: accumulated one by
    one in float16, the sum of the 20000 numbers (uniform in [0, 1)) stalls at 2048, where
    they fall below half an ulp, the sums of rows of 500 are 5.3 ulps off and the means of
    columns of 40 3.4."""
    torch = pytest.importorskip("torch")
    host = np.random.default_rng(0).uniform(0, 1, (40, 500)).astype(np.float16)
    ours, theirs = lucid.tensor(host, device=device), torch.tensor(host)
    for name, fn in {"sum": lambda t: t.sum(), "mean": lambda t: t.mean(), "sum_dim": lambda t: t.sum(1),
                     "mean_dim": lambda t: t.mean(0)}.items():
        got, want = fn(ours), fn(theirs)
        assert got.dtype is lucid.float16, name
        judge(got.numpy(), want.numpy(), fn(host.astype(np.float64)), "float16", what=name)


def test_float16_log_softmax_like_torch(device):
    """torch computes half log_softmax in float32 and rounds once; so does lucid: value and
    gradient judged against the float64 truth on the same float16 values, torch's float16
    error the ceiling."""
    torch = pytest.importorskip("torch")
    host = np.random.default_rng(0).standard_normal((4, 50)).astype(np.float16)
    cotangent = np.random.default_rng(1).standard_normal((4, 50)).astype(np.float16)
    results = {}
    for dtype in (torch.float16, torch.float64):
        t = torch.tensor(host, dtype=dtype, requires_grad=True)
        out = t.log_softmax(1)
        out.backward(torch.tensor(cotangent, dtype=dtype))
        results[dtype] = out.detach().numpy(), t.grad.numpy()
    x = lucid.tensor(host, device=device, requires_grad=True)
    y = x.log_softmax(1)
    y.backward(lucid.tensor(cotangent, device=device))
    assert y.dtype is lucid.float16 and x.grad.dtype is lucid.float16
    for what, mine, theirs, truth in zip(("value", "gradient"), (y.detach().numpy(), x.grad.numpy()),
                                         results[torch.float16], results[torch.float64]):
        judge(mine, theirs, truth, "float16", what=what)


def test_float16_arithmetic_on_both_devices():
    """``x * 0.5`` is exact, and ``+ 1`` is exact in float32 (and float64), where each device
    evaluates it: rounded once to float16, both give the correctly rounded sum, bit for bit."""
    x = np.array([0.1, 1.5, -2.25, 65000.0], dtype=np.float16)
    rounded = (x.astype(np.float64) * 0.5 + 1).astype(np.float16)
    for device in ("cpu", "gpu"):
        t = lucid.tensor(x, device=device)
        assert t.dtype is lucid.float16
        y = t * 0.5 + 1
        assert y.dtype is lucid.float16
        assert (t + lucid.ones(4, device=device)).dtype is lucid.float32
        np.testing.assert_array_equal(y.numpy(), rounded, err_msg=device)


# --- moving between devices ---------------------------------------------------------------------

def test_to_round_trip_keeps_values_and_makes_new_tensors():
    x = lucid.randn(3, 4, dtype=lucid.float64)
    g = x.to("gpu")
    assert g is not x and g.device == "gpu" and x.device == "cpu"
    assert g.to("gpu") is g and g.gpu() is g
    back = g.to("cpu")
    assert back is not x
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    both = x.to("gpu", lucid.float32)
    assert both.device == "gpu" and both.dtype is lucid.float32
    assert x.to(device="gpu", dtype=lucid.float16).dtype is lucid.float16
    like = lucid.zeros(1, dtype=lucid.float16, device="gpu")
    assert x.to(like).device == "gpu" and x.to(like).dtype is lucid.float16
    assert x.to("mlx").device == "gpu"  # the other names of the MLX device


def test_gradient_flows_through_device_moves():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.to("gpu")
    assert y.requires_grad and y.grad_fn is not None
    z = (y * y).sum().to("cpu") + (x.gpu().double() * 2).sum().cpu().float()
    z.backward()
    assert x.grad.device == "cpu" and x.grad.dtype is lucid.float32
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0, 8.0])
    w = lucid.tensor([1.0, 2.0], device="gpu", requires_grad=True)
    (w.cpu() ** 2).sum().backward()
    assert w.grad.device == "gpu"
    assert w.grad.tolist() == [2.0, 4.0]


def test_randn_gives_the_same_numbers_on_both_devices():
    for dtype in (lucid.float32, lucid.float64, lucid.float16):
        lucid.manual_seed(11)
        a = lucid.randn(50, dtype=dtype)
        lucid.manual_seed(11)
        b = lucid.randn(50, dtype=dtype, device="gpu")
        assert b.device == "gpu" and b.dtype is dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    lucid.manual_seed(5)
    a = lucid.rand(7, 3)
    lucid.manual_seed(5)
    np.testing.assert_array_equal(lucid.rand(7, 3, device="gpu").numpy(), a.numpy())


# --- gathers and scatter-adds --------------------------------------------------------------------

def test_index_backward_accumulates_duplicates_on_mlx():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device="gpu", requires_grad=True)
    idx = lucid.tensor([2, 0, 2, 2, -1], device="gpu")
    (x[idx] * lucid.tensor([[1.0], [2.0], [3.0], [4.0], [5.0]], device="gpu")).sum().backward()
    assert x.grad.device == "gpu"
    assert x.grad.tolist() == [[2.0, 2.0], [0.0, 0.0], [13.0, 13.0]]
    y = lucid.zeros(2, 3, device="gpu", requires_grad=True)
    y[[0, 0, 1], [2, 2, 2]].sum().backward()
    assert y.grad.tolist() == [[0.0, 0.0, 2.0], [0.0, 0.0, 1.0]]


def test_a_million_index_gather_and_its_scatter_add_on_mlx():
    """What the gather returns and what its backward accumulates, for a million indices
    (how fast it runs is measured in benchmarks/, not here)."""
    n = 1_000_000
    lucid.manual_seed(0)
    index = (lucid.rand(n, device="gpu") * 10).long()
    x = lucid.arange(10, dtype=lucid.float32, device="gpu").requires_grad_()
    picked = x[index]
    np.testing.assert_array_equal(picked.detach().numpy(), index.numpy().astype(np.float32))
    picked.sum().backward()
    assert x.grad.sum().item() == n
    np.testing.assert_array_equal(x.grad.numpy(), np.bincount(index.numpy(), minlength=10))


def test_boolean_mask_indexing_on_mlx():
    x = lucid.tensor([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], device="gpu", requires_grad=True)
    y = x[x > 0]
    assert y.tolist() == [1.0, 3.0, 5.0]
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]


def test_empty_selections_on_mlx():
    """MLX 0.32 dies of SIGFPE scattering nothing through array indices: lucid never asks it to."""
    x = lucid.ones(2, 2, 3, device="gpu", requires_grad=True)
    y = x[[0, 1], [0], 0:0]
    assert y.shape == (2, 0)
    y.sum().backward()
    assert x.grad.tolist() == np.zeros((2, 2, 3)).tolist()
    z = lucid.ones(2, 2, 3, device="gpu")
    z[[0, 1], [0], 0:0] = 5.0
    z[z > 10] = 0.0
    z[lucid.tensor([], dtype=lucid.int64, device="gpu")] = 2.0
    assert z.sum().item() == 12.0


EMPTY_OPS = {
    "sum": lambda m, x: x.sum(), "sum_dim": lambda m, x: x.sum(1), "mean_dim": lambda m, x: x.mean(0),
    "max_dim": lambda m, x: x.max(1)[0], "min_dim_keepdim": lambda m, x: x.min(1, keepdim=True)[0],
    "log_softmax": lambda m, x: x.log_softmax(1), "log_softmax_0": lambda m, x: x.log_softmax(0),
    "exp": lambda m, x: x.exp(), "matmul": lambda m, x: x.T @ x, "matmul_t": lambda m, x: x @ x.T,
    "cat": lambda m, x: m.cat([x, x]), "stack": lambda m, x: m.stack([x, x], 1), "mask": lambda m, x: x[x > 0],
    "where": lambda m, x: m.where(x > 0, x, 0.0), "clamp": lambda m, x: x.clamp(0, 1), "pow": lambda m, x: x ** x,
    "reshape": lambda m, x: x.reshape(-1), "sigmoid": lambda m, x: x.sigmoid(), "index": lambda m, x: x[:, [0, 0]] if x.shape[1] else x[:0],
}


@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value encountered")
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)], ids=str)
@pytest.mark.parametrize("op", sorted(EMPTY_OPS))
def test_empty_tensors_like_torch(op, shape):
    torch = pytest.importorskip("torch")
    t = torch.zeros(*shape, requires_grad=True)
    try:
        expected = EMPTY_OPS[op](torch, t)
    except (IndexError, RuntimeError):
        for device in ("cpu", "gpu"):
            with pytest.raises((IndexError, RuntimeError)):
                EMPTY_OPS[op](lucid, lucid.zeros(*shape, device=device))
        return
    for device in ("cpu", "gpu"):
        x = lucid.zeros(*shape, device=device, requires_grad=True)
        got = EMPTY_OPS[op](lucid, x)
        assert got.shape == tuple(expected.shape) and got.device == device
        np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())
        got.sum().backward()
        assert x.grad.shape == shape


_INDEX_PART = st.one_of(
    st.integers(-3, 2).map(lambda i: ("int", i)),
    st.tuples(st.sampled_from([None, -3, -1, 0, 1, 2]), st.sampled_from([None, -2, 0, 1, 3]),
              st.sampled_from([None, 1, 2])).map(lambda t: ("slice", slice(*t))),
    st.just(("none", None)),
    st.just(("ellipsis", Ellipsis)),
    st.lists(st.integers(-3, 2), min_size=1, max_size=3).map(lambda v: ("list", v)),
    st.lists(st.lists(st.integers(-3, 2), min_size=2, max_size=2), min_size=2, max_size=2).map(lambda v: ("tensor", v)),
    st.lists(st.booleans(), min_size=3, max_size=3).map(lambda v: ("mask", v)),
)


def _index(parts, module, device):
    out = []
    for kind, value in parts:
        if kind in ("tensor", "mask"):
            out.append(module.tensor(value, device=device) if module is lucid else module.tensor(value))
        else:
            out.append(value)
    return tuple(out)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_INDEX_PART, min_size=1, max_size=4), seed=st.integers(0, 100))
def test_random_indexing_matches_torch(parts, seed):
    """Any index torch accepts gives torch's values, gradients and writes, on both devices,
    exactly: the values are float32 numbers and the cotangent's (``op_cases.cotangent``) add
    up exactly where an index repeats."""
    torch = pytest.importorskip("torch")
    if sum(kind == "ellipsis" for kind, _ in parts) > 1:
        return
    host = np.random.default_rng(seed).standard_normal((3, 3, 3)).astype(np.float32).astype(np.float64)
    t = torch.tensor(host, requires_grad=True)
    try:
        expected = t[_index(parts, torch, None)]
    except (IndexError, RuntimeError, ValueError, TypeError):
        for device in ("cpu", "gpu"):
            with pytest.raises((IndexError, RuntimeError, ValueError, TypeError)):
                lucid.tensor(host, device=device)[_index(parts, lucid, device)]
        return
    cotangent = op_cases.cotangent(tuple(expected.shape), seed + 1)
    expected.backward(torch.tensor(cotangent))
    positions = torch.arange(27).reshape(3, 3, 3)[_index(parts, torch, None)].reshape(-1).tolist()
    written = t.detach().clone()
    written[_index(parts, torch, None)] = torch.tensor(cotangent)
    for device in ("cpu", "gpu"):
        x = lucid.tensor(host, dtype=lucid.float32, device=device, requires_grad=True)
        got = x[_index(parts, lucid, device)]
        assert got.shape == tuple(expected.shape)
        np.testing.assert_array_equal(got.detach().numpy(), expected.detach().numpy())
        got.backward(lucid.tensor(cotangent, dtype=lucid.float32, device=device))
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())
        if len(set(positions)) == len(positions):  # duplicate writes are unordered in torch too
            y = x.detach().clone()
            y[_index(parts, lucid, device)] = lucid.tensor(cotangent, dtype=lucid.float32, device=device)
            np.testing.assert_array_equal(y.numpy(), written.numpy())


@pytest.mark.parametrize("device_", ["cpu", "gpu"])
def test_setitem_paths(device_):
    x = lucid.zeros(3, 4, device=device_)
    x[0] = 1.0
    x[1, 1:3] = lucid.tensor([2.0, 3.0], device=device_)
    x[:, 3] = lucid.tensor([7, 8, 9], device=device_)  # cast to the target's dtype
    x[lucid.tensor([2, 2], device=device_), lucid.tensor([0, 1], device=device_)] = 5.0
    x[x == 0] = -1.0
    x[..., None][2, 2] = 4.0  # through a view: on MLX written back into the base
    assert x.dtype is lucid.float32
    assert x.tolist()[2] == [5.0, 5.0, 4.0, 9.0]
    x[[-1]] = lucid.tensor([[6.0, 6.0, 6.0, 6.0]], device=device_)
    assert x.tolist()[:2] == [[1.0, 1.0, 1.0, 7.0], [-1.0, 2.0, 3.0, 8.0]]
    assert x.tolist()[2] == [6.0, 6.0, 6.0, 6.0]
    v = x._version
    x[0, 0] = 0.5
    assert x._version == v + 1
