"""Activation functions, each one elementwise op: its formula and its derivative's written
once, evaluated at the backend's working precision and rounded once (see ``_unary``), in
forms that lose no digits in the tails: GELU through the normal distribution function
``Phi`` (``1 + erf(x / sqrt 2)`` cancels for negative ``x``), sigmoids of ``-|x|``, and
``1 - tanh**2`` as ``4e / (1 + e)**2``.

:mod:`lucid.nn.functional` checks the arguments and calls these.
"""

from __future__ import annotations

import math

from .. import _dtype
from .._autograd import record
from .._tensor import Tensor
from .elementwise import _sech2, _unary

__all__ = ["gelu", "gelu_tanh", "silu", "softplus", "mish", "elu", "softsign", "leaky_relu"]

_TANH_GELU_SCALE = math.sqrt(2 / math.pi)
_TANH_GELU_CUBIC = 0.044715


def _softplus(b, z):
    """``log(1 + exp(z))`` as ``max(z, 0) + log1p(exp(-|z|))``: no overflow, no lost tail."""
    return b.maximum(z, 0) + b.log1p(b.exp(-b.abs(z)))


def gelu(a: Tensor) -> Tensor:
    """``x Phi(x)``; its derivative ``Phi(x) + x phi(x)``, computed with the value (one pass, the
    backend's :meth:`~lucid._backend.base.Backend.gelu_parts`) and kept at the working precision.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import gelu
    >>> gelu(lucid.tensor([-12.0, 0.0, 1.0])).tolist()  # the tail keeps its digits: x Phi(x) = -2.1317785e-32
    [-2.1317785478098008e-32, 0.0, 0.8413447737693787]
    """
    if not a.dtype.is_floating_point:
        a = a.to(_dtype.default_float)
    backend = a._backend
    value, slope = backend.gelu_parts(a._data)  # the derivative kept, at the working precision

    def backward(g):
        return (backend.precisely(lambda b, g, s: b.multiply(g, s), g, slope),)

    return record(a._like(value), "GeluBackward0", (a,), backward, saved=(a,))


def _tanh_gelu_argument(x):
    return _TANH_GELU_SCALE * (x + _TANH_GELU_CUBIC * (x * x * x))


def gelu_tanh(a: Tensor) -> Tensor:
    """``0.5 x (1 + tanh(u))`` with ``u = sqrt(2/pi) (x + 0.044715 x**3)``, as ``x sigmoid(2u)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import gelu_tanh
    >>> gelu_tanh(lucid.tensor([1.0], dtype=lucid.float64))
    tensor([0.8412], dtype=lucid.float64)
    """
    def derivative(b, x):
        u2 = 2 * _tanh_gelu_argument(x)
        du2 = 2 * _TANH_GELU_SCALE * (1 + 3 * _TANH_GELU_CUBIC * (x * x))
        s = b.sigmoid(u2)
        return s + x * du2 * (s * b.sigmoid(-u2))

    return _unary("GeluBackward0", a, lambda b, x: x * b.sigmoid(2 * _tanh_gelu_argument(x)), derivative)


def silu(a: Tensor) -> Tensor:
    """``x sigmoid(x)``; its derivative ``sigmoid(x) (1 + x sigmoid(-x))``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import silu
    >>> silu(lucid.tensor([-100.0, 1.0]))
    tensor([-3.7204e-42,  7.3106e-01])
    """
    return _unary("SiluBackward0", a, lambda b, x: x * b.sigmoid(x),
                  lambda b, x: b.sigmoid(x) * (1 + x * b.sigmoid(-x)))


def softplus(a: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta x)) / beta``, and ``x`` where ``beta x > threshold``; the derivative
    ``sigmoid(beta x)`` (1 past the threshold).

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import softplus
    >>> softplus(lucid.tensor([-100.0, 0.0, 30.0]))
    tensor([3.7835e-44, 6.9315e-01, 3.0000e+01])
    """
    def compute(b, x):
        z = x * beta
        return b.where(z > threshold, x, _softplus(b, z) / beta)

    def derivative(b, x):
        z = x * beta
        return b.where(z > threshold, b.ones_like(z), b.sigmoid(z))

    return _unary("SoftplusBackward0", a, compute, derivative)


def mish(a: Tensor) -> Tensor:
    """``x tanh(softplus(x))``; its derivative ``t + x sech(s)**2 sigmoid(x)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import mish
    >>> mish(lucid.tensor([0.0, 1.0], dtype=lucid.float64))
    tensor([0.0000, 0.8651], dtype=lucid.float64)
    """
    def derivative(b, x):
        s = _softplus(b, x)
        return b.tanh(s) + x * _sech2(b, s) * b.sigmoid(x)

    return _unary("MishBackward0", a, lambda b, x: x * b.tanh(_softplus(b, x)), derivative)


def elu(a: Tensor, alpha: float = 1.0) -> Tensor:
    """``x`` where positive, ``alpha (exp(x) - 1)`` elsewhere; the derivative 1 or ``alpha exp(x)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import elu
    >>> elu(lucid.tensor([-1.0, 2.0], dtype=lucid.float64))
    tensor([-0.6321,  2.0000], dtype=lucid.float64)
    """
    return _unary("EluBackward0", a, lambda b, x: b.where(x > 0, x, alpha * b.expm1(b.minimum(x, 0))),
                  lambda b, x: b.where(x > 0, b.ones_like(x), alpha * b.exp(b.minimum(x, 0))))


def softsign(a: Tensor) -> Tensor:
    """``x / (1 + |x|)``; its derivative ``1 / (1 + |x|)**2``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import softsign
    >>> softsign(lucid.tensor([-1.0, 3.0]))
    tensor([-0.5000,  0.7500])
    """
    # torch composes softsign, as x / (1 + |x|): its node is the division's
    return _unary("DivBackward0", a, lambda b, x: x / (1 + b.abs(x)),
                  lambda b, x: 1 / ((1 + b.abs(x)) * (1 + b.abs(x))))


def leaky_relu(a: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, ``negative_slope x`` elsewhere.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.activation import leaky_relu
    >>> leaky_relu(lucid.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.])
    """
    return _unary("LeakyReluBackward0", a, lambda b, x: b.where(x > 0, x, x * negative_slope),
                  lambda b, x: b.where(x > 0, b.ones_like(x), b.full(b.shape(x), negative_slope, b.dtype_of(x))))
