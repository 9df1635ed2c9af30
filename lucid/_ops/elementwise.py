"""Elementwise arithmetic and math, with torch's broadcasting and type promotion."""

from __future__ import annotations

import numbers

from .. import _dtype
from .._autograd import _unbroadcast, record, renamed
from .._tensor import Tensor
from .broadcast import broadcast_shapes


def _scalar(value):
    """Python/NumPy numbers as Python numbers (weakly typed, as torch treats them)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def _same_device(*tensors) -> None:
    first = tensors[0]
    for t in tensors[1:]:
        if t.device != first.device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{first.device} and {t.device}!"
            )


def coerce(a: Tensor | float, b: Tensor | float, floating: bool = False) -> tuple[Tensor, Tensor]:
    """Two tensors of one device and dtype (torch's promotion) with broadcastable shapes.

    Either may be a Python number (weakly typed, as torch treats it) or array-like data;
    the shapes are checked here, so a mismatch raises torch's RuntimeError on every device.
    """
    if not isinstance(a, Tensor):
        if not isinstance(b, Tensor):
            raise TypeError(f"expected at least one Tensor, got {type(a).__name__} and {type(b).__name__}")
        b2, a2 = coerce(b, a, floating)
        return a2, b2
    if not isinstance(b, (Tensor, numbers.Number)):
        b = Tensor(b, device=a.device)  # lists and host arrays are tensors with dimensions
    if isinstance(b, Tensor):
        _same_device(a, b)
        broadcast_shapes(a.shape, b.shape)
    dtype = _dtype.result_type(a, b)
    if floating and not dtype.is_floating_point:
        dtype = _dtype.default_float
    if not isinstance(b, Tensor):
        b = Tensor._make(a._backend.asarray(_scalar(b), dtype), a._backend)
    return (a if a.dtype is dtype else a.to(dtype)), (b if b.dtype is dtype else b.to(dtype))


def add(a: Tensor | float, b: Tensor | float, *, alpha: float = 1) -> Tensor:
    """``a + alpha * b`` with broadcasting and torch's type promotion (either may be a number).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]) + 0.5
    tensor([1.5000, 2.5000])
    >>> lucid.add(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 1.0]), alpha=-2)
    tensor([-1.,  0.])
    """
    if alpha != 1:
        b = mul(b, alpha)
    a, b = coerce(a, b)
    out = a._like(a._backend.add(a._data, b._data))
    return record(out, "AddBackward0", (a, b), lambda g: (g, g))


def sub(a: Tensor | float, b: Tensor | float, *, alpha: float = 1) -> Tensor:
    """``a - alpha * b`` with broadcasting and torch's type promotion.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1.0], [2.0]]) - lucid.tensor([1.0, 2.0])
    tensor([[ 0., -1.],
            [ 1.,  0.]])
    >>> lucid.tensor([1.0, 2.0]).sub(lucid.tensor([1.0, 1.0]), alpha=2)
    tensor([-1.,  0.])
    """
    bools = [isinstance(x, bool) or (isinstance(x, Tensor) and x.dtype is _dtype.bool_) for x in (a, b)]
    if all(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if any(bools):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    name = "SubBackward0" if isinstance(a, Tensor) else "RsubBackward1"  # torch: number - tensor is rsub
    if alpha != 1:
        b = mul(b, alpha)
    a, b = coerce(a, b)
    backend = a._backend
    out = a._like(backend.subtract(a._data, b._data))
    return record(out, name, (a, b), lambda g: (g, backend.negative(g)))


def mul(a: Tensor | float, b: Tensor | float) -> Tensor:
    """``a * b`` with broadcasting and torch's type promotion.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2], dtype=lucid.int32) * 3
    tensor([3, 6], dtype=lucid.int32)
    """
    a, b = coerce(a, b)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.multiply(x, y))
    return record(out, "MulBackward0", (a, b),
                  lambda g: (backend.multiply(g, y), backend.multiply(g, x)), saved=(a, b))


def div(a: Tensor | float, b: Tensor | float) -> Tensor:
    """True division ``a / b``; integers divide to float32, as in torch.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]) / 4
    tensor([0.2500, 0.5000])
    """
    name = "DivBackward0" if isinstance(a, Tensor) else "MulBackward0"  # torch: number / t is t.reciprocal() * number
    a, b = coerce(a, b, floating=True)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.divide(x, y))

    def backward(g):
        ga = backend.divide(g, y)
        return ga, backend.negative(backend.multiply(ga, backend.divide(x, y)))

    return record(out, name, (a, b), backward, saved=(a, b))


def _check_integer_power(base, exponent) -> None:
    if base.dtype is _dtype.bool_:
        raise NotImplementedError("pow is not implemented for 'Bool' (as in torch): convert to an integer dtype")
    if not base.dtype.is_floating_point and isinstance(exponent, numbers.Integral) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _integer_power(backend, x, y):
    """torch's integer ``x ** y``: where y < 0, 1 if x == 1, ±1 if x == -1, else 0."""
    negative = backend.compare("less", y, 0)
    out = backend.power(x, backend.where(negative, backend.zeros_like(y), y))
    one, zero = backend.ones_like(out), backend.zeros_like(out)
    odd = backend.compare("equal", backend.abs(y) % 2, 1)
    minus_one = backend.where(odd, backend.negative(one), one)
    special = backend.where(backend.compare("equal", x, 1), one,
                            backend.where(backend.compare("equal", x, -1), minus_one, zero))
    return backend.where(negative, special, out)


# torch's CPU kernel for tensor ** number: exact special cases, and for float32 and float16
# the power of the value in the next wider type, rounded once (NumPy's powf rounds
# differently in about one case in ten, e.g. Adam's bias corrections with Tensor betas)
_WIDER = {_dtype.float32: _dtype.float64, _dtype.float16: _dtype.float32}


def _power_scalar(backend, x, exponent, dtype):
    """``x ** exponent`` for a Python number ``exponent``, rounded as torch's CPU kernel rounds it."""
    if not dtype.is_floating_point:
        return backend.power(x, exponent)
    if exponent == 2:
        return backend.multiply(x, x)
    if exponent == 3:
        return backend.multiply(backend.multiply(x, x), x)
    if exponent == 0.5:
        return backend.sqrt(x)
    if exponent == -1:
        return backend.divide(1, x)
    if exponent == -0.5:
        return backend.divide(1, backend.sqrt(x))
    if exponent == -2:
        return backend.divide(1, backend.multiply(x, x))
    wider = _WIDER.get(dtype)
    if wider is None:
        return backend.power(x, exponent)
    return backend.astype(backend.power(backend.astype(x, wider), exponent), dtype)


def pow(a: Tensor | float, b: Tensor | float) -> Tensor:
    """``a ** b`` for tensors and numbers on either side.

    The gradients are torch's: 0 (not nan) where the exponent is 0, and for the exponent 0
    where the base is 0. Integer tensors raise to negative integer tensor powers as torch
    does (0 unless the base is ±1); a negative integer scalar exponent raises.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([0.0, 2.0], requires_grad=True)
    >>> (x ** 0).sum().backward()
    >>> x.grad
    tensor([0., 0.])
    >>> 2 ** lucid.tensor([1, 3])
    tensor([2, 8])
    """
    if isinstance(b, numbers.Number) and isinstance(a, Tensor):
        exponent = _scalar(b)
        if a.dtype is _dtype.bool_ and isinstance(exponent, bool):  # torch keeps bool here
            return pow(a.to(_dtype.int64), int(exponent)).to(_dtype.bool_)
        a = a.to(_dtype.result_type(a, exponent))
        _check_integer_power(a, exponent)
        backend, x = a._backend, a._data
        out = a._like(_power_scalar(backend, x, exponent, a.dtype))

        def scalar_backward(g):
            if exponent == 0:
                return (backend.zeros_like(g),)
            power = _power_scalar(backend, x, exponent - 1, a.dtype)
            return (backend.multiply(g, backend.multiply(power, exponent)),)

        return record(out, "PowBackward0", (a,), scalar_backward, saved=(a,))
    name = "PowBackward1" if isinstance(a, Tensor) else "PowBackward2"  # tensor ** tensor, number ** tensor
    a, b = coerce(a, b)
    _check_integer_power(a, 1)
    backend, x, y = a._backend, a._data, b._data
    if a.dtype.is_floating_point:
        out_array = backend.precisely(lambda b, x, y: b.power(x, y), x, y)
    else:
        out_array = _integer_power(backend, x, y)
    out = a._like(out_array)

    def gradient_base(b, g, x, y):
        # y x**(y-1), taken as 0 where y == 0 (also at x == 0); as y (x**y / x) where that is
        # finite: y - 1 rounds (to 32 ulps of the power in float32), x**y / x does not
        ratio = b.power(x, y) / b.where(b.compare("equal", x, 0), b.ones_like(x), x)
        direct = b.where(b.isfinite(ratio) & (ratio != 0), ratio, b.power(x, y - 1))
        return b.where(b.compare("equal", y, 0), b.zeros_like(g), g * (y * direct))

    def gradient_exponent(b, g, x, y):  # x**y log x, taken as 0 where x == 0 and y >= 0 (torch's convention)
        at_zero = b.logical("logical_and", b.compare("equal", x, 0), b.compare("greater_equal", y, 0))
        safe_log = b.log(b.where(at_zero, b.ones_like(x), x))
        return b.where(at_zero, b.zeros_like(g), g * (b.power(x, y) * safe_log))

    def backward(g):
        return backend.precisely(gradient_base, g, x, y), backend.precisely(gradient_exponent, g, x, y)

    return record(out, name, (a, b), backward, saved=(a, b, out))


def _matmul_shape(a_shape: tuple, b_shape: tuple) -> tuple:
    """The shape of ``a @ b``, or torch's RuntimeError when the shapes don't fit."""
    if not a_shape or not b_shape:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {len(a_shape)}D and {len(b_shape)}D"
        )
    inner = b_shape[-2] if len(b_shape) > 1 else b_shape[0]
    if a_shape[-1] != inner:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a_shape))} and "
            f"{'x'.join(map(str, b_shape))})"
        )
    batch = broadcast_shapes(a_shape[:-2], b_shape[:-2])
    return batch + a_shape[-2:-1] + b_shape[-1:] if len(b_shape) > 1 else batch + a_shape[-2:-1]


def _matmul_node_name(a_shape: tuple, b_shape: tuple) -> str:
    """The name of torch's last node in ``a @ b``: the aten op its matmul ends with."""
    n, m = len(a_shape), len(b_shape)
    if n <= 2 and m <= 2:
        return {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (1, 2): "SqueezeBackward4"}.get((n, m), "MmBackward0")
    if n == 2:  # torch folds into b's batch and transposes back: a copy, unless that is contiguous
        return "TransposeBackward0" if a_shape[0] == 1 or b_shape[-1] == 1 else "CloneBackward0"
    return "UnsafeViewBackward0"


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """The matrix product ``a @ b``, with NumPy's and torch's rules.

    1-D operands are vectors (a dot product, or a matrix-vector product); operands with more
    than two dimensions are stacks of matrices whose leading dimensions broadcast. Both must
    have the same dtype and device.

    Examples
    --------
    >>> import lucid
    >>> a = lucid.ones(2, 1, 2, 3)
    >>> b = lucid.ones(4, 3, 5)
    >>> (a @ b).shape
    (2, 4, 2, 5)
    >>> lucid.tensor([1.0, 2.0]) @ lucid.tensor([3.0, 4.0])
    tensor(11.)
    """
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"matmul expects two Tensors, got {type(a).__name__} and {type(b).__name__}")
    _same_device(a, b)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}")
    if a.dtype is _dtype.bool_:
        raise NotImplementedError("matmul is not implemented for 'Bool' (as in torch)")
    _matmul_shape(a.shape, b.shape)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.matmul(x, y))
    # treat vectors as matrices so one formula serves: (1, n) on the left, (n, 1) on the right
    x2 = x if a.ndim > 1 else backend.reshape(x, (1,) + a.shape)
    y2 = y if b.ndim > 1 else backend.reshape(y, b.shape + (1,))
    shape2 = _matmul_shape(backend.shape(x2), backend.shape(y2))

    def backward(g):
        g2 = backend.reshape(g, shape2)
        ga = backend.matmul(g2, backend.swapaxes(y2, -1, -2))
        gb = backend.matmul(backend.swapaxes(x2, -1, -2), g2)
        # sum the batch dimensions broadcasting added, then drop the vector padding
        ga = backend.reshape(_unbroadcast(backend, ga, backend.shape(x2), a.dtype), a.shape)
        gb = backend.reshape(_unbroadcast(backend, gb, backend.shape(y2), b.dtype), b.shape)
        return ga, gb

    return record(out, _matmul_node_name(a.shape, b.shape), (a, b), backward, saved=(a, b))


def _unary(name, a, compute, derivative):
    """An elementwise op ``compute(backend, x)`` with ``grad_in = grad_out * derivative(backend, x)``,
    each formula evaluated at the backend's working precision and rounded once
    (:meth:`~lucid._backend.base.Backend.precisely`): the derivative from the input, not from
    the rounded output (``1 - tanh(x)**2`` from ``tanh(x)`` loses every digit as it nears 1)."""
    if not a.dtype.is_floating_point:
        a = a.to(_dtype.default_float)
    backend, x = a._backend, a._data
    out = a._like(backend.precisely(compute, x))

    def backward(g):
        return (backend.precisely(lambda b, g, x: b.multiply(g, derivative(b, x)), g, x),)

    return record(out, name, (a,), backward, saved=(a,))


def _sech2(b, x):
    """``1 - tanh(x)**2`` as ``4e / (1 + e)**2`` with ``e = exp(-2|x|)``: no cancellation as tanh -> ±1."""
    e = b.exp(b.multiply(-2, b.abs(x)))
    return b.divide(b.multiply(4, e), b.multiply(b.add(e, 1), b.add(e, 1)))


def _sigmoid_derivative(b, x):
    """``sigmoid(x) (1 - sigmoid(x))`` as ``e / (1 + e)**2`` with ``e = exp(-|x|)``: no cancellation in the tails."""
    e = b.exp(b.negative(b.abs(x)))
    return b.divide(e, b.multiply(b.add(e, 1), b.add(e, 1)))


def neg(a: Tensor) -> Tensor:
    """``-a`` (bool tensors raise: use ``~`` to invert a mask).

    Examples
    --------
    >>> import lucid
    >>> -lucid.tensor([1.0, -2.0])
    tensor([-1.,  2.])
    """
    if a.dtype is _dtype.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    out = a._like(a._backend.negative(a._data))
    return record(out, "NegBackward0", (a,), lambda g: (a._backend.negative(g),))


def exp(a: Tensor) -> Tensor:
    """The elementwise exponential (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.exp(lucid.tensor([0.0, 1.0])).tolist()  # each value the float32 nearest the true one
    [1.0, 2.7182817459106445]
    """
    return _unary("ExpBackward0", a, lambda b, x: b.exp(x), lambda b, x: b.exp(x))


def log(a: Tensor) -> Tensor:
    """The elementwise natural logarithm (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.log(lucid.tensor([1.0, 4.0])).tolist()
    [0.0, 1.3862943649291992]
    """
    return _unary("LogBackward0", a, lambda b, x: b.log(x), lambda b, x: b.divide(1, x))


def sqrt(a: Tensor) -> Tensor:
    """The elementwise square root (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.sqrt(lucid.tensor([4, 9]))
    tensor([2., 3.])
    """
    return _unary("SqrtBackward0", a, lambda b, x: b.sqrt(x), lambda b, x: b.divide(0.5, b.sqrt(x)))


def tanh(a: Tensor) -> Tensor:
    """The elementwise hyperbolic tangent.

    Examples
    --------
    >>> import lucid
    >>> lucid.tanh(lucid.tensor([0.0]))
    tensor([0.])
    """
    return _unary("TanhBackward0", a, lambda b, x: b.tanh(x), lambda b, x: _sech2(b, x))


def sigmoid(a: Tensor) -> Tensor:
    """The logistic function ``1 / (1 + exp(-a))``, computed without overflow.

    Examples
    --------
    >>> import lucid
    >>> lucid.sigmoid(lucid.tensor([-1000.0, 0.0, 1000.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _unary("SigmoidBackward0", a, lambda b, x: b.sigmoid(x), lambda b, x: _sigmoid_derivative(b, x))


def log1p(a: Tensor) -> Tensor:
    """``log(1 + a)`` elementwise, accurate where ``a`` is tiny.

    Examples
    --------
    >>> import lucid
    >>> lucid.log1p(lucid.tensor([1e-20, 0.0], dtype=lucid.float64))
    tensor([1.0000e-20, 0.0000e+00], dtype=lucid.float64)
    """
    return _unary("Log1PBackward0", a, lambda b, x: b.log1p(x), lambda b, x: b.divide(1, b.add(x, 1)))


def expm1(a: Tensor) -> Tensor:
    """``exp(a) - 1`` elementwise, accurate where ``a`` is tiny.

    Examples
    --------
    >>> import lucid
    >>> lucid.expm1(lucid.tensor([1e-20, 0.0], dtype=lucid.float64))
    tensor([1.0000e-20, 0.0000e+00], dtype=lucid.float64)
    """
    # the derivative is exp(a), not out + 1, which would lose every digit where exp(a) is tiny
    return _unary("Expm1Backward0", a, lambda b, x: b.expm1(x), lambda b, x: b.exp(x))


def relu(a: Tensor) -> Tensor:
    """``max(a, 0)`` elementwise; the gradient at 0 is 0, as in torch.

    Examples
    --------
    >>> import lucid
    >>> lucid.relu(lucid.tensor([-1.0, 0.0, 2.0]))
    tensor([0., 0., 2.])
    """
    backend, x = a._backend, a._data
    zero = backend.zeros((), a.dtype)  # broadcast: no array of zeros to fill and read
    out = a._like(backend.maximum(x, zero))
    positive = backend.compare("greater", x, 0)
    return record(out, "ReluBackward0", (a,),
                  lambda g: (backend.keep_where(positive, g),))


def abs(a: Tensor) -> Tensor:
    """The elementwise absolute value; the gradient at 0 is 0, as in torch.

    Examples
    --------
    >>> import lucid
    >>> abs(lucid.tensor([-1.5, 2.0]))
    tensor([1.5000, 2.0000])
    """
    backend, x = a._backend, a._data
    out = a._like(backend.abs(x))
    return record(out, "AbsBackward0", (a,), lambda g: (backend.multiply(g, backend.sign(x)),), saved=(a,))


def sign(a: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element (not differentiable).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-2.0, 0.0, 3.0]).sign()
    tensor([-1.,  0.,  1.])
    """
    if a.dtype is _dtype.bool_:  # its own sign; NumPy has no bool sign
        return a._like(a._backend.copy(a._data))
    return a._like(a._backend.sign(a._data))


def clamp(a: Tensor, min: Tensor | float | None = None, max: Tensor | float | None = None) -> Tensor:
    """Limit values to [min, max] (numbers or tensors, broadcast), with torch's gradients.

    The gradient passes to ``a`` where min <= a <= max, to ``min`` where a < min and to
    ``max`` where a > max (where min > max, the result and the gradient are max's). The
    result type is torch's promotion of ``a`` and the bounds.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    >>> y = x.clamp(-1, 1)
    >>> y
    tensor([-1.0000,  0.5000,  1.0000], grad_fn=<ClampBackward1>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([0., 1., 0.])
    >>> lucid.clamp(lucid.tensor([1, 5]), max=lucid.tensor([2.5, 2.5]))
    tensor([1.0000, 2.5000])
    """
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [bound for bound in (min, max) if bound is not None]
    for i, bound in enumerate(bounds):
        if isinstance(bound, Tensor):
            _same_device(a, bound)
        elif not isinstance(bound, numbers.Number):
            bounds[i] = Tensor(bound, device=a.device)
    broadcast_shapes(a.shape, *(b.shape for b in bounds if isinstance(b, Tensor)))
    dtype = _dtype.result_type(a, *bounds)
    if dtype is _dtype.bool_ and not all(isinstance(b, Tensor) for b in bounds):
        raise NotImplementedError("clamp with a number is not implemented for 'Bool' (as in torch)")
    a = a.to(dtype)
    bounds = [b.to(dtype) if isinstance(b, Tensor) else _scalar(b) for b in bounds]
    low, high = (bounds.pop(0) if min is not None else None), (bounds.pop(0) if max is not None else None)
    backend, x = a._backend, a._data
    lo = low._data if isinstance(low, Tensor) else low
    hi = high._data if isinstance(high, Tensor) else high
    y = x
    if low is not None:
        y = backend.maximum(y, lo)
    if high is not None:
        y = backend.minimum(y, hi)
    out = a._like(y)
    inputs = [a] + [b for b in (low, high) if isinstance(b, Tensor)]

    def backward(g):
        zeros = backend.zeros_like(g)
        if low is not None and high is not None:
            inside = backend.logical("logical_and", backend.compare("greater_equal", x, lo),
                                     backend.compare("less_equal", x, hi))
            to_low = backend.logical("logical_and", backend.compare("less", x, lo), backend.compare("less", lo, hi))
            to_high = backend.logical("logical_or", backend.compare("greater", x, hi), backend.compare("less", hi, lo))
        elif low is not None:
            inside, to_low, to_high = backend.compare("greater_equal", x, lo), backend.compare("less", x, lo), None
        else:
            inside, to_low, to_high = backend.compare("less_equal", x, hi), None, backend.compare("greater", x, hi)
        grads = [backend.where(inside, g, zeros)]
        for bound, mask in ((low, to_low), (high, to_high)):
            if isinstance(bound, Tensor):
                grads.append(backend.where(mask, g, zeros))
        return tuple(grads)

    return record(out, "ClampBackward0" if len(inputs) > 1 else "ClampBackward1", tuple(inputs), backward, saved=tuple(inputs))


def where(condition: Tensor, a: Tensor | float, b: Tensor | float) -> Tensor:
    """Elements of ``a`` where ``condition`` holds, of ``b`` elsewhere (broadcast; either may be a number).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([-1.0, 2.0, -3.0])
    >>> lucid.where(x > 0, x, 0.0)
    tensor([0., 2., 0.])
    >>> lucid.where(x > 0, 1, 0)
    tensor([0, 1, 0])
    """
    if not isinstance(condition, Tensor):
        raise TypeError(f"where() expects condition to be a Tensor, got {type(condition).__name__}")
    if condition.dtype is not _dtype.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype}"
        )
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = Tensor(a, device=condition.device)
    a, b = coerce(a, b)
    _same_device(condition, a)
    broadcast_shapes(condition.shape, a.shape, b.shape)
    backend, c = a._backend, condition._data
    out = a._like(backend.where(c, a._data, b._data))

    def backward(g):
        zeros = backend.zeros_like(g)
        return backend.where(c, g, zeros), backend.where(c, zeros, g)

    return record(out, "WhereBackward0", (a, b), backward, saved=(condition,))


def compare(op: str, a: Tensor | float, b: Tensor | float) -> Tensor:
    """``a <op> b`` elementwise as a bool tensor; ``op`` names the comparison (``"less"``, ...).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2, 3]) > 1.5
    tensor([False,  True,  True])
    """
    a, b = coerce(a, b)
    return a._like(a._backend.compare(op, a._data, b._data))


def logical(op: str, a: Tensor | float, b: Tensor | float) -> Tensor:
    """``op`` is logical_and, logical_or or logical_xor; the result is a bool tensor."""
    a, b = coerce(a, b)
    return a._like(a._backend.logical(op, a._data, b._data))


def logical_not(a: Tensor) -> Tensor:
    """``~a``: the elementwise logical not, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> ~lucid.tensor([True, False])
    tensor([False,  True])
    """
    return a._like(a._backend.logical_not(a._data))


def isfinite(a: Tensor) -> Tensor:
    """Whether each element is neither infinite nor nan.

    Examples
    --------
    >>> import lucid
    >>> lucid.isfinite(lucid.tensor([1.0, float("inf"), float("nan")]))
    tensor([ True, False, False])
    """
    return a._like(a._backend.isfinite(a._data))


def sin(a: Tensor) -> Tensor:
    """The elementwise sine (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.sin(lucid.tensor([0.0, 1.5707963267948966], dtype=lucid.float64))
    tensor([0., 1.], dtype=lucid.float64)
    """
    return _unary("SinBackward0", a, lambda b, x: b.sin(x), lambda b, x: b.cos(x))


def cos(a: Tensor) -> Tensor:
    """The elementwise cosine (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.cos(lucid.tensor([0.0]))
    tensor([1.])
    """
    return _unary("CosBackward0", a, lambda b, x: b.cos(x), lambda b, x: b.negative(b.sin(x)))


def _extremum(a, b, largest: bool):
    name = "maximum" if largest else "minimum"
    for position, t in ((1, a), (2, b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{'input' if position == 1 else 'other'}' (position {position}) "
                            f"must be Tensor, not {type(t).__name__}")
    a, b = coerce(a, b)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.maximum(x, y) if largest else backend.minimum(x, y))

    def backward(g):
        # ties share the gradient half and half, as torch's
        half = backend.multiply(g, 0.5)
        a_wins = backend.compare("greater" if largest else "less", x, y)
        tie = backend.compare("equal", x, y)
        zeros = backend.zeros_like(g)
        ga = backend.where(a_wins, g, backend.where(tie, half, zeros))
        gb = backend.where(a_wins, zeros, backend.where(tie, half, g))
        return ga, gb

    return record(out, "MaximumBackward0" if largest else "MinimumBackward0", (a, b), backward, saved=(a, b))


def maximum(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise larger of two tensors (broadcast, promoted); ties share the gradient.

    Examples
    --------
    >>> import lucid
    >>> lucid.maximum(lucid.tensor([1.0, 4.0]), lucid.tensor([3.0, 2.0]))
    tensor([3., 4.])
    """
    return _extremum(input, other, largest=True)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise smaller of two tensors (see :func:`maximum`).

    Examples
    --------
    >>> import lucid
    >>> lucid.minimum(lucid.tensor([1, 4]), lucid.tensor([3, 2]))
    tensor([1, 2])
    """
    return _extremum(input, other, largest=False)


def _check_integer_divisor(b) -> None:
    if not b.dtype.is_floating_point and b.numel() and not bool(b._backend.item(b._backend.all(b._data))):
        raise RuntimeError("ZeroDivisionError")


def remainder(a: Tensor | float, b: Tensor | float) -> Tensor:
    """``a - floor(a / b) * b`` elementwise: the remainder with the sign of ``b``, as Python's ``%``.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-7, 7]) % 3
    tensor([2, 1])
    >>> lucid.remainder(lucid.tensor([5.0, -5.0]), 3.0)
    tensor([2., 1.])
    """
    name = "RemainderBackward1" if isinstance(b, Tensor) else "RemainderBackward0"
    a, b = coerce(a, b)
    _check_integer_divisor(b)
    backend, x, y = a._backend, a._data, b._data
    out = a._like(backend.remainder(x, y))
    return record(out, name, (a, b), lambda g: (
        g, backend.negative(backend.multiply(g, backend.floor(backend.divide(x, y))))), saved=(a, b))


def floor_divide(a: Tensor | float, b: Tensor | float) -> Tensor:
    """``floor(a / b)`` elementwise, as Python's ``//`` (integers stay integers). Not differentiable.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-7, 7]) // 2
    tensor([-4,  3])
    """
    a, b = coerce(a, b)
    _check_integer_divisor(b)
    return a._like(a._backend.floor_divide(a._data, b._data))


def _rounding(name, a, fn):
    """floor, ceil, round: integers as they are; floats with a zero gradient, as torch's."""
    backend = a._backend
    if not a.dtype.is_floating_point:
        return a._like(backend.copy(a._data))
    out = a._like(fn(backend, a._data))
    return record(out, name, (a,), lambda g: (backend.zeros_like(g),))


def floor(a: Tensor) -> Tensor:
    """The largest integer not above each element (its gradient is zero).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-1.5, 2.5]).floor()
    tensor([-2.,  2.])
    """
    return _rounding("FloorBackward0", a, lambda b, x: b.floor(x))


def ceil(a: Tensor) -> Tensor:
    """The smallest integer not below each element (its gradient is zero).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-1.5, 2.5]).ceil()
    tensor([-1.,  3.])
    """
    return _rounding("CeilBackward0", a, lambda b, x: b.ceil(x))


def round(a: Tensor) -> Tensor:
    """The nearest integer to each element, halves to even, as torch (its gradient is zero).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([0.5, 1.5, 2.5, -0.4]).round()
    tensor([0., 2., 2., -0.])
    """
    return _rounding("RoundBackward0", a, lambda b, x: b.round(x))


_TWO_OVER_SQRT_PI = 1.1283791670955126


def erf(a: Tensor) -> Tensor:
    """The error function ``2/sqrt(pi) * integral of exp(-t**2) from 0 to a`` (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.erf(lucid.tensor([0.0, 1.0], dtype=lucid.float64))
    tensor([0.0000, 0.8427], dtype=lucid.float64)
    """
    return _unary("ErfBackward0", a, lambda b, x: b.erf(x),
                  lambda b, x: b.multiply(_TWO_OVER_SQRT_PI, b.exp_neg_square(x)))


def _triangle(a, diagonal, lower):
    name = "tril" if lower else "triu"
    if a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    backend, diagonal = a._backend, int(diagonal)
    out = a._like(backend.triangle(a._data, diagonal, lower))
    return record(out, "TrilBackward0" if lower else "TriuBackward0", (a,),
                  lambda g: (backend.triangle(g, diagonal, lower),))


def tril(a: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dimensions: elements above the ``diagonal``-th
    diagonal (0 the main one, positive above it) become zero.

    Examples
    --------
    >>> import lucid
    >>> lucid.ones(3, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]])
    """
    return _triangle(a, diagonal, lower=True)


def triu(a: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dimensions (see :func:`tril`).

    Examples
    --------
    >>> import lucid
    >>> lucid.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]])
    """
    return _triangle(a, diagonal, lower=False)


# --- issue 24, the names real scripts use ----------------------------------------------------
def tan(a: Tensor) -> Tensor:
    """The elementwise tangent (radians).

    Examples
    --------
    >>> import lucid
    >>> lucid.tan(lucid.tensor([0.0])).tolist()
    [0.0]
    """
    return _unary("TanBackward0", a, lambda b, x: b.tan(x),
                  lambda b, x: b.divide(1, b.multiply(b.cos(x), b.cos(x))))


def _sqrt_one_minus_square(b, x):
    """``sqrt(1 - x**2)`` as ``sqrt((1 - x)(1 + x))``: no cancellation as ``|x|`` nears 1."""
    return b.sqrt(b.multiply(b.subtract(1, x), b.add(1, x)))


def asin(a: Tensor) -> Tensor:
    """The elementwise arcsine, in [-pi/2, pi/2] (nan outside [-1, 1]); also ``arcsin``.

    Examples
    --------
    >>> import lucid
    >>> lucid.asin(lucid.tensor([0.0, 1.0])).tolist() == [0.0, lucid.tensor(1.5707963267948966).item()]
    True
    """
    return _unary("AsinBackward0", a, lambda b, x: b.arcsin(x), lambda b, x: b.divide(1, _sqrt_one_minus_square(b, x)))


def acos(a: Tensor) -> Tensor:
    """The elementwise arccosine, in [0, pi] (nan outside [-1, 1]); also ``arccos``.

    Examples
    --------
    >>> import lucid
    >>> lucid.acos(lucid.tensor([1.0])).tolist()
    [0.0]
    """
    return _unary("AcosBackward0", a, lambda b, x: b.arccos(x), lambda b, x: b.divide(-1, _sqrt_one_minus_square(b, x)))


def atan(a: Tensor) -> Tensor:
    """The elementwise arctangent, in (-pi/2, pi/2); also ``arctan``.

    Examples
    --------
    >>> import lucid
    >>> lucid.atan(lucid.tensor([0.0])).tolist()
    [0.0]
    """
    return _unary("AtanBackward0", a, lambda b, x: b.arctan(x), lambda b, x: b.divide(1, b.add(1, b.multiply(x, x))))


def rsqrt(a: Tensor) -> Tensor:
    """``1 / sqrt(a)`` elementwise.

    Examples
    --------
    >>> import lucid
    >>> lucid.rsqrt(lucid.tensor([4.0, 0.25])).tolist()
    [0.5, 2.0]
    """
    return _unary("RsqrtBackward0", a, lambda b, x: b.divide(1, b.sqrt(x)),
                  lambda b, x: b.divide(-0.5, b.multiply(x, b.sqrt(x))))


def _bitwise_operands(name: str, *tensors: Tensor | int) -> None:
    for t in tensors:
        if isinstance(t, Tensor) and t.dtype.is_floating_point:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.scalar_type(t.dtype)}'")


def bitwise(op: str, a: Tensor | int, b: Tensor | int) -> Tensor:
    """``op`` is bitwise_and, bitwise_or or bitwise_xor, on integer and bool tensors (bools stay bool)."""
    _bitwise_operands(op, a, b)
    a, b = coerce(a, b)
    return a._like(a._backend.bitwise(op, a._data, b._data))


def bitwise_and(input: Tensor | int, other: Tensor | int) -> Tensor:
    """The elementwise bitwise and of integer or bool tensors.

    Examples
    --------
    >>> import lucid
    >>> lucid.bitwise_and(lucid.tensor([12, 5]), 6).tolist()
    [4, 4]
    """
    return bitwise("bitwise_and", input, other)


def bitwise_or(input: Tensor | int, other: Tensor | int) -> Tensor:
    """The elementwise bitwise or of integer or bool tensors.

    Examples
    --------
    >>> import lucid
    >>> lucid.bitwise_or(lucid.tensor([12, 5]), 6).tolist()
    [14, 7]
    """
    return bitwise("bitwise_or", input, other)


def bitwise_xor(input: Tensor | int, other: Tensor | int) -> Tensor:
    """The elementwise bitwise exclusive or of integer or bool tensors.

    Examples
    --------
    >>> import lucid
    >>> lucid.bitwise_xor(lucid.tensor([1, 5, 11]), lucid.tensor([2, 7, 10])).tolist()
    [3, 2, 1]
    """
    return bitwise("bitwise_xor", input, other)


def bitwise_not(input: Tensor) -> Tensor:
    """Each bit of an integer tensor inverted (``-x - 1``); of a bool tensor, its logical not.

    Examples
    --------
    >>> import lucid
    >>> lucid.bitwise_not(lucid.tensor([0, 5])).tolist(), lucid.bitwise_not(lucid.tensor([True])).tolist()
    ([-1, -6], [False])
    """
    _bitwise_operands("bitwise_not", input)
    return input._like(input._backend.bitwise_not(input._data))


_LN10, _LN2 = 2.302585092994046, 0.6931471805599453


def log10(a: Tensor) -> Tensor:
    """The elementwise base-10 logarithm (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.log10(lucid.tensor([100.0, 1.0])).tolist()
    [2.0, 0.0]
    """
    return _unary("Log10Backward0", a, lambda b, x: b.log10(x), lambda b, x: b.divide(1, b.multiply(x, _LN10)))


def log2(a: Tensor) -> Tensor:
    """The elementwise base-2 logarithm (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.log2(lucid.tensor([8.0, 0.5])).tolist()
    [3.0, -1.0]
    """
    return _unary("Log2Backward0", a, lambda b, x: b.log2(x), lambda b, x: b.divide(1, b.multiply(x, _LN2)))


def square(a: Tensor) -> Tensor:
    """``a * a`` (integers stay integers, as torch's).

    Examples
    --------
    >>> import lucid
    >>> lucid.square(lucid.tensor([2, -3])).tolist()
    [4, 9]
    """
    return renamed(mul(a, a), "PowBackward0")


def reciprocal(a: Tensor) -> Tensor:
    """``1 / a`` elementwise (integers give float32).

    Examples
    --------
    >>> import lucid
    >>> lucid.reciprocal(lucid.tensor([2, 4])).tolist()
    [0.5, 0.25]
    """
    return renamed(div(1, a), "ReciprocalBackward0")


def isnan(a: Tensor) -> Tensor:
    """Whether each element is nan, as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.isnan(lucid.tensor([1.0, float("nan")])).tolist()
    [False, True]
    """
    return compare("not_equal", a, a)


def isinf(a: Tensor) -> Tensor:
    """Whether each element is infinite (either sign), as a bool tensor.

    Examples
    --------
    >>> import lucid
    >>> lucid.isinf(lucid.tensor([1.0, float("-inf"), float("nan")])).tolist()
    [False, True, False]
    """
    return logical("logical_and", logical_not(isfinite(a)), compare("equal", a, a))


def clamp_min(a: Tensor, min: Tensor | float) -> Tensor:
    """:func:`clamp` with a lower bound only.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-1.0, 2.0]).clamp_min(0).tolist()
    [0.0, 2.0]
    """
    return renamed(clamp(a, min=min), "ClampMinBackward0")


def clamp_max(a: Tensor, max: Tensor | float) -> Tensor:
    """:func:`clamp` with an upper bound only.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([-1.0, 2.0]).clamp_max(0).tolist()
    [-1.0, 0.0]
    """
    return renamed(clamp(a, max=max), "ClampMaxBackward0")
