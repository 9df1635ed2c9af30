"""Elementwise arithmetic and math, with torch's broadcasting and type promotion."""

from __future__ import annotations

import numbers

from .. import _dtype
from .._autograd import record
from .._tensor import Tensor


def _scalar(value):
    """Python/NumPy numbers as Python numbers (weakly typed, as torch treats them)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def coerce(a, b, floating=False):
    """Two tensors of one device and dtype (torch's promotion), from tensors or scalars."""
    if not isinstance(a, Tensor):
        b2, a2 = coerce(b, a, floating)
        return a2, b2
    if isinstance(b, Tensor):
        if a.device != b.device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{a.device} and {b.device}!"
            )
        dtype = _dtype.promote(a.dtype, b.dtype)
    elif isinstance(b, numbers.Number):
        b = _scalar(b)
        dtype = _dtype.promote_scalar(a.dtype, b)
        b = Tensor._make(a._backend.asarray(b, dtype), a._backend)
    else:
        b = Tensor(b, device=a.device)
        dtype = _dtype.promote(a.dtype, b.dtype)
    if floating and not dtype.is_floating_point:
        dtype = _dtype.default_float
    return a.to(dtype), b.to(dtype)


def add(a, b):
    a, b = coerce(a, b)
    out = a._like(a._backend.add(a._data, b._data))
    return record(out, "AddBackward", (a, b), lambda g: (g, g))


def sub(a, b):
    a, b = coerce(a, b)
    backend = a._backend
    out = a._like(backend.subtract(a._data, b._data))
    return record(out, "SubBackward", (a, b), lambda g: (g, backend.negative(g)))


def mul(a, b):
    a, b = coerce(a, b)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.multiply(x, y))
    return record(out, "MulBackward", (a, b),
                  lambda g: (backend.multiply(g, y), backend.multiply(g, x)), saved=(a, b))


def div(a, b):
    a, b = coerce(a, b, floating=True)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.divide(x, y))

    def backward(g):
        ga = backend.divide(g, y)
        return ga, backend.negative(backend.multiply(ga, backend.divide(x, y)))

    return record(out, "DivBackward", (a, b), backward, saved=(a, b))


def pow(a, b):
    if isinstance(b, numbers.Number) and isinstance(a, Tensor):
        exponent = _scalar(b)
        if isinstance(exponent, float) and not a.dtype.is_floating_point:
            a = a.to(_dtype.default_float)
        backend, x = a._backend, a._data
        out = a._like(backend.power(x, exponent))

        def backward(g):
            return (backend.multiply(g, backend.multiply(backend.power(x, exponent - 1), exponent)),)

        return record(out, "PowBackward0", (a,), backward, saved=(a,))
    a, b = coerce(a, b)
    backend, x, y = a._backend, a._data, b._data
    out_array = backend.power(x, y)
    out = a._like(out_array)

    def backward(g):
        ga = backend.multiply(g, backend.multiply(y, backend.power(x, backend.subtract(y, 1))))
        # d/dy x**y = x**y log x, taken as 0 where x == 0 (torch's convention)
        safe_log = backend.log(backend.where(backend.compare("equal", x, 0), backend.xp.ones_like(x), x))
        return ga, backend.multiply(g, backend.multiply(out_array, safe_log))

    return record(out, "PowBackward1", (a, b), backward, saved=(a, b))


def matmul(a, b):
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul expects two Tensors")
    if a.device != b.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found {a.device} and {b.device}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and "
            f"{'x'.join(map(str, b.shape))})"
        )
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.matmul(x, y))
    # treat vectors as matrices so one formula serves: (1, n) on the left, (n, 1) on the right
    x2 = x if a.ndim > 1 else backend.reshape(x, (1,) + a.shape)
    y2 = y if b.ndim > 1 else backend.reshape(y, b.shape + (1,))

    def backward(g):
        g2 = backend.reshape(g, backend.shape(backend.matmul(x2, y2)))
        ga = backend.matmul(g2, backend.xp.swapaxes(y2, -1, -2))
        gb = backend.matmul(backend.xp.swapaxes(x2, -1, -2), g2)
        # sum the batch dimensions broadcasting added, then drop the vector padding
        from .._autograd import _unbroadcast

        ga = backend.reshape(_unbroadcast(backend, ga, backend.shape(x2), a.dtype), a.shape)
        gb = backend.reshape(_unbroadcast(backend, gb, backend.shape(y2), b.dtype), b.shape)
        return ga, gb

    return record(out, "MmBackward", (a, b), backward, saved=(a, b))


def _unary(name, a, compute, derivative, saved_input=True):
    """An elementwise op with ``grad_in = grad_out * derivative(x, out)``."""
    if not a.dtype.is_floating_point:
        a = a.to(_dtype.default_float)
    backend, x = a._backend, a._data
    y = compute(backend, x)
    out = a._like(y)
    saved = (a, out) if saved_input else (out,)
    return record(out, name, (a,), lambda g: (backend.multiply(g, derivative(backend, x, y)),), saved=saved)


def neg(a):
    out = a._like(a._backend.negative(a._data))
    return record(out, "NegBackward", (a,), lambda g: (a._backend.negative(g),))


def exp(a):
    return _unary("ExpBackward", a, lambda b, x: b.exp(x), lambda b, x, y: y, saved_input=False)


def log(a):
    return _unary("LogBackward", a, lambda b, x: b.log(x), lambda b, x, y: b.divide(1, x))


def sqrt(a):
    return _unary("SqrtBackward", a, lambda b, x: b.sqrt(x),
                  lambda b, x, y: b.divide(0.5, y), saved_input=False)


def tanh(a):
    return _unary("TanhBackward", a, lambda b, x: b.tanh(x),
                  lambda b, x, y: b.subtract(1, b.multiply(y, y)), saved_input=False)


def sigmoid(a):
    return _unary("SigmoidBackward", a, lambda b, x: b.sigmoid(x),
                  lambda b, x, y: b.multiply(y, b.subtract(1, y)), saved_input=False)


def relu(a):
    backend, x = a._backend, a._data
    out = a._like(backend.maximum(x, backend.xp.zeros_like(x)))
    positive = backend.compare("greater", x, 0)
    return record(out, "ReluBackward", (a,),
                  lambda g: (backend.where(positive, g, backend.xp.zeros_like(g)),))


def abs(a):
    backend, x = a._backend, a._data
    out = a._like(backend.abs(x))
    return record(out, "AbsBackward", (a,), lambda g: (backend.multiply(g, backend.sign(x)),), saved=(a,))


def sign(a):
    return a._like(a._backend.sign(a._data))


def clamp(a, min=None, max=None):
    """Limit values to [min, max]; the gradient passes where min <= x <= max, as in torch."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    backend, x = a._backend, a._data
    inside = None
    y = x
    for bound, op, keep in ((min, backend.maximum, "greater_equal"), (max, backend.minimum, "less_equal")):
        if bound is None:
            continue
        bound = bound._data if isinstance(bound, Tensor) else _scalar(bound)
        y = op(y, bound)
        mask = backend.compare(keep, x, bound)
        inside = mask if inside is None else backend.xp.logical_and(inside, mask)
    out = a._like(y)
    return record(out, "ClampBackward", (a,),
                  lambda g: (backend.where(inside, g, backend.xp.zeros_like(g)),), saved=(a,))


def where(condition, a, b):
    """Elements of ``a`` where ``condition`` holds, of ``b`` elsewhere (broadcast)."""
    if not isinstance(condition, Tensor):
        raise TypeError("where() expects condition to be a Tensor")
    if condition.dtype is not _dtype.bool_:
        raise TypeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype}")
    a, b = coerce(a, b)
    if condition.device != a.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found {condition.device} and {a.device}")
    backend, c = a._backend, condition._data
    out = a._like(backend.where(c, a._data, b._data))

    def backward(g):
        zeros = backend.xp.zeros_like(g)
        return backend.where(c, g, zeros), backend.where(c, zeros, g)

    return record(out, "WhereBackward", (a, b), backward)


def compare(op, a, b):
    a, b = coerce(a, b)
    return a._like(a._backend.compare(op, a._data, b._data))


def logical(op, a, b):
    """``op`` is logical_and, logical_or or logical_xor; the result is a bool tensor."""
    a, b = coerce(a, b)
    return a._like(getattr(a._backend.xp, op)(a._data, b._data))


def logical_not(a):
    return a._like(a._backend.logical_not(a._data))


def isfinite(a):
    return a._like(a._backend.isfinite(a._data))
