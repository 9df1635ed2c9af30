"""Autograd against central finite differences, in float64 on NumPy, for every op.

For a case ``out = fn(*inputs)`` and a random cotangent ``v``, backward computes
``d(v . out)/d(input)``; the check perturbs each input element by ``±eps`` and compares
``v . (out(x + eps) - out(x - eps)) / (2 eps)`` with it. Broadcasting is checked on
shapes drawn by hypothesis for every binary op.
"""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import lucid
from op_cases import CASES, draw
from tolerances import GRADCHECK, close


def _tensors(arrays, requires_grad):
    return [lucid.tensor(a, dtype=lucid.float64, requires_grad=requires_grad) for a in arrays]


def gradcheck(fn, arrays, seed=0):
    """Assert autograd's vector-Jacobian product of ``fn`` matches finite differences."""
    inputs = _tensors(arrays, requires_grad=True)
    out = fn(*inputs)
    assert out.dtype is lucid.float64, f"float64 inputs gave {out.dtype}"
    v = np.random.default_rng(seed + 1).standard_normal(out.shape)
    out.backward(lucid.tensor(v, dtype=lucid.float64))

    eps = GRADCHECK["eps"]

    def value(trial):
        with lucid.no_grad():
            return fn(*_tensors(trial, requires_grad=False)).numpy()

    for i, (array, tensor) in enumerate(zip(arrays, inputs)):
        numeric = np.zeros_like(array)
        for j in np.ndindex(array.shape):
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][j] += eps
            minus[i][j] -= eps
            numeric[j] = np.sum(v * (value(plus) - value(minus))) / (2 * eps)
        assert tensor.grad is not None, f"input {i} got no gradient"
        assert tensor.grad.dtype is lucid.float64 and tensor.grad.shape == array.shape
        np.testing.assert_allclose(
            tensor.grad.numpy(), numeric, rtol=GRADCHECK["rtol"], atol=GRADCHECK["atol"],
            err_msg=f"gradient of input {i}",
        )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradcheck(case):
    gradcheck(functools.partial(case.fn, lucid), case.arrays())


@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors of dimension other than 2")
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_values_and_gradients_match_torch(case):
    """The same case through torch, in float64: outputs and gradients to rounding."""
    torch = pytest.importorskip("torch")
    arrays = case.arrays()
    ours = [lucid.tensor(a, dtype=lucid.float64, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    out, tout = case.fn(lucid, *ours), case.fn(torch, *theirs)
    assert out.shape == tuple(tout.shape) and out.dtype is lucid.float64
    close(out.detach().numpy(), tout.detach().numpy(), "float64")
    v = np.random.default_rng(1).standard_normal(out.shape)
    out.backward(lucid.tensor(v, dtype=lucid.float64))
    tout.backward(torch.tensor(v, dtype=torch.float64))
    for mine, reference in zip(ours, theirs):
        close(mine.grad.numpy(), reference.grad.numpy(), "float64")


# --- broadcasting of every binary op, on shapes hypothesis draws ----------------------------

BINARY = {
    "add": (lambda a, b: a + b, "any"),
    "sub": (lambda a, b: a - b, "any"),
    "mul": (lambda a, b: a * b, "any"),
    "div": (lambda a, b: a / b, "pos"),
    "pow": (lambda a, b: a ** b, "pos"),
    "where": (lambda a, b: lucid.where(a > b * 1.2, a, b), "any"),
    "clamp_min": (lambda a, b: a.clamp(min=b), "any"),
    "clamp_max": (lambda a, b: a.clamp(max=b), "any"),
    "alias": (lambda a, b: a * b + a, "any"),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=12, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), seed=st.integers(0, 2**16))
def test_gradcheck_broadcasting(name, shapes, seed):
    fn, domain = BINARY[name]
    gradcheck(fn, draw(shapes.input_shapes, domain, seed), seed)


@settings(max_examples=12, deadline=None)
@given(
    shapes=mutually_broadcastable_shapes(signature=np.matmul.signature, max_dims=2, max_side=3),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_matmul_broadcasting(shapes, seed):
    gradcheck(lambda a, b: a @ b, draw(shapes.input_shapes, "any", seed), seed)


@settings(max_examples=12, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=4).map(tuple),
    data=st.data(),
)
def test_gradcheck_reductions(shape, data):
    ndim = len(shape)
    dims = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                              unique_by=lambda d: d % ndim).map(tuple))
    keepdim = data.draw(st.booleans())
    dim = data.draw(st.integers(-ndim, ndim - 1))
    (x,) = draw([shape], "any", seed=len(dims))
    gradcheck(lambda a: a.sum(dims, keepdim=keepdim), [x])
    gradcheck(lambda a: a.mean(dims, keepdim=keepdim), [x])
    gradcheck(lambda a: a.max(dim, keepdim=keepdim).values, [x])
    gradcheck(lambda a: a.min(dim, keepdim=keepdim)[0], [x])
    gradcheck(lambda a: a.log_softmax(dim), [x])


def test_gradcheck_negative_slice_step():
    """NumPy's negative steps, which torch does not accept."""
    gradcheck(lambda a: a[::-1, 3:0:-2], draw([(3, 4)]))


# --- what finite differences cannot see -------------------------------------------------------

def test_to_dtype_gradient_is_cast_back_exactly():
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.float64, requires_grad=True)
    y = x.to(lucid.float32)
    assert y.dtype is lucid.float32 and y.grad_fn is not None
    v = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    y.backward(lucid.tensor(v))
    assert x.grad.dtype is lucid.float64
    np.testing.assert_array_equal(x.grad.numpy(), v.astype(np.float64))
    z = lucid.tensor([1.0, 2.0], requires_grad=True)
    (z.double() * 3).sum().backward()
    assert z.grad.dtype is lucid.float32
    np.testing.assert_array_equal(z.grad.numpy(), [3.0, 3.0])


def test_max_min_ties_share_the_gradient_like_torch():
    torch = pytest.importorskip("torch")
    data = [[1.0, 3.0, 3.0], [3.0, 0.0, 3.0]]
    for name in ("max", "min"):
        x = lucid.tensor(data, dtype=lucid.float64, requires_grad=True)
        tx = torch.tensor(data, dtype=torch.float64, requires_grad=True)
        getattr(x, name)().backward()
        getattr(tx, name)().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
        # with a dim, the gradient goes to the element the index names
        x.grad = None
        tx.grad = None
        values, indices = getattr(x, name)(dim=1)
        tvalues, tindices = getattr(tx, name)(dim=1)
        np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
        values.sum().backward()
        tvalues.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_max_min_with_dim_return_values_and_indices():
    x = lucid.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    out = x.max(dim=1)
    values, indices = out
    assert out.values is values and out.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype is lucid.int64 and not indices.requires_grad
    values, indices = lucid.min(x, 0, keepdim=True)
    assert values.tolist() == [[1.0, 0.0, 2.0]] and indices.tolist() == [[0, 1, 0]]


@pytest.mark.parametrize("op", ["pow_scalar", "pow_tensor"])
def test_pow_gradients_at_zero_match_torch(op):
    torch = pytest.importorskip("torch")
    base, exponent = [0.0, 0.0, 0.0, 2.0], [0.0, 1.0, 2.0, 0.0]
    x = lucid.tensor(base, dtype=lucid.float64, requires_grad=True)
    tx = torch.tensor(base, dtype=torch.float64, requires_grad=True)
    if op == "pow_scalar":
        (x ** 0).sum().backward()
        (tx ** 0).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
        return
    y = lucid.tensor(exponent, dtype=lucid.float64, requires_grad=True)
    ty = torch.tensor(exponent, dtype=torch.float64, requires_grad=True)
    (x ** y).sum().backward()
    (tx ** ty).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())


def test_clamp_tensor_bounds_gradients_match_torch():
    torch = pytest.importorskip("torch")
    data = {"x": [-2.0, -0.2, 0.3, 2.0, 0.0], "lo": [-1.0, 0.0, 0.0, -1.0, 1.0], "hi": [1.0, 1.0, 1.0, 1.0, -1.0]}
    ours = {k: lucid.tensor(v, dtype=lucid.float64, requires_grad=True) for k, v in data.items()}
    theirs = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in data.items()}
    for kwargs in ({"min": "lo"}, {"max": "hi"}, {"min": "lo", "max": "hi"}):
        for t in list(ours.values()) + list(theirs.values()):
            t.grad = None
        out = ours["x"].clamp(**{k: ours[v] for k, v in kwargs.items()})
        tout = theirs["x"].clamp(**{k: theirs[v] for k, v in kwargs.items()})
        np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
        out.backward(lucid.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=lucid.float64))
        tout.backward(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=torch.float64))
        for k in ours:
            expected = theirs[k].grad
            got = ours[k].grad
            if expected is None:
                assert got is None or not got.numpy().any(), (kwargs, k)
            else:
                np.testing.assert_array_equal(got.numpy(), expected.numpy(), err_msg=f"{kwargs} {k}")


def test_relu_abs_gradient_at_zero_is_zero_like_torch():
    x = lucid.tensor([0.0, 1.0, -1.0], dtype=lucid.float64, requires_grad=True)
    (x.relu() + x.abs()).sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, -1.0]


def test_clamp_gradient_passes_at_the_bounds_like_torch():
    x = lucid.tensor([-1.0, 0.0, 1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    x.clamp(-1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0, 0.0]
