"""The ops whose float32 and float16 results are judged in ulps against a float64 truth.

Each :class:`Case` names an op as the docs' accuracy table does, calls it the same way on
lucid and on torch (``call(lib, F, *tensors)``, ``lib`` being ``lucid`` or ``torch`` and
``F`` its ``nn.functional``), and gives its true value (and its gradient's) from the same
inputs, computed in float64 with formulas that lose no digits where the op is hard: tails,
near zero, huge magnitudes, long rows. No torch import here: torch is the ceiling when it is
installed (tests/test_accuracy.py), and lucid's own ceilings are in tests/tolerances.py.

Inputs are NumPy arrays; floating ones are given in the dtype under test (their float64
values are exact), integer ones (class indices) as they are. ``grad`` is the true gradient
of ``sum(out * w)`` with respect to the first input, ``w`` the weights :func:`weights`
gives (ones for elementwise ops, so that the gradient is the derivative itself).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

ROW = 20_001  # the long rows of the softmax family and the reductions


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # "elementwise", "activation", "softmax", "reduction", "normalisation", "loss"
    call: Callable
    truth: Callable
    inputs: Callable  # dtype name -> tuple of arrays
    grad: Optional[Callable] = None  # (w, *inputs) -> the gradient of sum(out * w) by the first input
    elementwise: bool = True  # whether w is ones (the output has the input's shape, elementwise)
    # where the true value is a sum whose terms can cancel: the size of those terms (see
    # ulps.errors), of the output (from the inputs) and of the gradient (from w and the inputs)
    scale: Optional[Callable] = None
    grad_scale: Optional[Callable] = None


# --- inputs -----------------------------------------------------------------------------------

def _finfo(dtype):
    return np.finfo(np.dtype(dtype))


def _cast(dtype, *parts):
    """The parts concatenated and rounded to ``dtype``, each value once, in float64."""
    values = np.concatenate([np.asarray(p, dtype=np.float64).reshape(-1) for p in parts])
    with np.errstate(over="ignore"):
        values = values.astype(dtype)
    values = values[np.isfinite(values)]
    return np.unique(values)


def dense(lo, hi, n=4001):
    return np.linspace(lo, hi, n)


def magnitudes(lo_exp, hi_exp, n=300, signed=True):
    """``10**e`` for e evenly in [lo_exp, hi_exp], and their negatives if ``signed``."""
    v = np.logspace(lo_exp, hi_exp, n)
    return np.concatenate([v, -v]) if signed else v


def near_zero(dtype, signed=True):
    """From the smallest subnormal number up to 1e-2, and 0."""
    lo = math.log10(float(_finfo(dtype).smallest_subnormal))
    return np.concatenate([[0.0], magnitudes(lo, -2, 300, signed)])


def huge(dtype, signed=True):
    """From 10 up to the largest finite number."""
    return magnitudes(1, math.log10(float(_finfo(dtype).max)), 300, signed)


def _range(dtype, f32, f16):
    return f32 if dtype == "float32" else f16


def _rng(tag: str):
    return np.random.default_rng(zlib.crc32(tag.encode()))


def _unary(lo32, hi32, lo16, hi16, zero=True, big=False):
    """Inputs over [lo, hi] (per format), near zero, and with ``big`` huge ones of both signs."""
    def inputs(dtype):
        lo, hi = _range(dtype, (lo32, hi32), (lo16, hi16))
        parts = [dense(lo, hi)]
        if zero:
            parts.append(near_zero(dtype))
        if big:
            parts.append(huge(dtype))
        x = _cast(dtype, *parts)
        return (x if big else x[(x >= lo) & (x <= hi)],)
    return inputs


def weights(case: Case, out_shape, dtype):
    """The upstream gradient: ones for elementwise ops, else fixed normal numbers in ``dtype``."""
    if case.elementwise:
        return np.ones(out_shape, dtype=dtype)
    return _rng(case.name).standard_normal(out_shape).astype(dtype)


# --- float64 truths ----------------------------------------------------------------------------

_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_erf = np.vectorize(math.erf, otypes=[np.float64])
_SQRT1_2 = 1 / math.sqrt(2)
_PDF = 1 / math.sqrt(2 * math.pi)


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x):
    return np.logaddexp(0.0, x)


def _phi(x):
    """The normal distribution function, from erfc (no cancellation in either tail)."""
    return 0.5 * _erfc(-x * _SQRT1_2)


def _gelu_tanh(x):
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    # 0.5 * (1 + tanh(u)) = sigmoid(2u): no cancellation where tanh(u) -> -1
    return x * _sigmoid(2 * inner)


def _gelu_tanh_grad(x):
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
    du = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x**2)
    s = _sigmoid(2 * u)
    return s + x * 2 * du * s * _sigmoid(-2 * u)


def _mish(x):
    return x * np.tanh(_softplus(x))


def _mish_grad(x):
    t = np.tanh(_softplus(x))
    return t + x * (1 - t * t) * _sigmoid(x)


def _sech2(x):
    return 1 / np.cosh(np.clip(x, -710, 710)) ** 2


def _logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))).squeeze(axis)


def _log_softmax(x):
    """``(x - m) - log1p(r)``, ``r`` the sum over all but one maximal element: two numbers of
    one sign added, so no digit is lost where the largest element dominates the row."""
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    first = np.argmax(x, axis=-1)[..., None]
    np.put_along_axis(e, first, 0.0, axis=-1)
    return (x - m) - np.log1p(np.sum(e, axis=-1, keepdims=True))


def _softmax(x):
    return np.exp(_log_softmax(x))


def _exact_sum(x, axis=-1):
    return np.apply_along_axis(math.fsum, axis, x)


def _var(x, correction=1):
    mean = _exact_sum(x) / x.shape[-1]
    d = x - mean[..., None]
    return _exact_sum(d * d) / (x.shape[-1] - correction)


def _layer_norm(x, w, b, eps=1e-5):
    mean = _exact_sum(x) / x.shape[-1]
    d = x - mean[..., None]
    var = _exact_sum(d * d) / x.shape[-1]
    return d / np.sqrt(var + eps)[..., None] * w + b


def _layer_norm_grad(g, x, w, b, eps=1e-5):
    n = x.shape[-1]
    mean = _exact_sum(x) / n
    d = x - mean[..., None]
    rstd = 1 / np.sqrt(_exact_sum(d * d) / n + eps)[..., None]
    xhat = d * rstd
    gw = g * w
    return rstd * (gw - np.mean(gw, -1, keepdims=True) - xhat * np.mean(gw * xhat, -1, keepdims=True))


def _batch_norm(x, eps=1e-5):
    """Training mode over dim 0 of an (N, C) input, no affine."""
    mean = _exact_sum(x.T) / x.shape[0]
    d = x - mean
    var = _exact_sum((d * d).T) / x.shape[0]
    return d / np.sqrt(var + eps)


def _batch_norm_grad(g, x, eps=1e-5):
    return _layer_norm_grad(g.T, x.T, 1.0, 0.0, eps).T


def _smooth_l1(d, beta=1.0):
    z = np.abs(d)
    return np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)


def _huber(d, delta=1.0):
    z = np.abs(d)
    return np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))


def _bce_logits(x, t):
    """``log(1 + exp(x)) - t * x``, the softplus from logaddexp."""
    return np.logaddexp(0.0, x) - t * x


_BCE_EPSILON = float(np.float32(1e-12))  # torch's clamp of p (1 - p) in the derivative, a float


def _bce(p, t):
    logp = np.maximum(np.log(p), -100.0)
    log1mp = np.maximum(np.log1p(-p), -100.0)
    return -(t * logp + (1 - t) * log1mp)


def _cross_entropy(x, target):
    ls = _log_softmax(x)
    return -np.mean(np.take_along_axis(ls, target[:, None], axis=1))


def _cross_entropy_grad(g, x, target):
    """``g (softmax - onehot) / N``, with ``p - 1`` at the target as ``expm1(log p)``."""
    ls = _log_softmax(x)
    grad = np.exp(ls)
    np.put_along_axis(grad, target[:, None], np.expm1(np.take_along_axis(ls, target[:, None], axis=1)), axis=1)
    return g * grad / x.shape[0]


# --- the sizes of the terms where a true value is a sum that can cancel -------------------------

def _mean_spread(x):
    """``|x| + mean(|x|)`` over the last axis: the size of the terms of ``x - mean(x)``."""
    return np.abs(x) + np.mean(np.abs(x), -1, keepdims=True)


def _layer_norm_scale(x, w, b, eps=1e-5):
    rstd = 1 / np.sqrt(_var(x, 0) + eps)[..., None]
    return _mean_spread(x) * rstd * np.abs(w) + np.abs(b)


def _layer_norm_grad_scale(g, x, w, b, eps=1e-5):
    rstd = 1 / np.sqrt(_var(x, 0) + eps)[..., None]
    gw = np.abs(g * w)
    xhat = (x - np.mean(x, -1, keepdims=True)) * rstd
    return rstd * (gw + np.mean(gw, -1, keepdims=True) + _mean_spread(x) * rstd * np.mean(gw * np.abs(xhat), -1, keepdims=True))


def _softmax_grad_scale(w, x):
    y = _softmax(x)
    return y * (np.abs(w) + np.sum(np.abs(w) * y, -1, keepdims=True))


def _log_softmax_grad_scale(w, x):
    return np.abs(w) + _softmax(x) * np.sum(np.abs(w), -1, keepdims=True)


# --- inputs of the non-elementwise cases -----------------------------------------------------

def _rows(dtype):
    """Long rows of the softmax family: spread normals; one element dominating by far, by a
    little, and by just enough that the rest sums to about one ulp of 1; equal elements;
    a large common offset."""
    rng = _rng("rows")
    spread = rng.standard_normal(ROW) * _range(dtype, 10.0, 2.0)
    lead = rng.standard_normal(ROW) * 0.5
    lead[ROW // 3] = _range(dtype, 30.0, 12.0)
    near = rng.standard_normal(ROW) * 0.5
    near[7] = _range(dtype, 12.0, 8.0)
    offset = rng.standard_normal(ROW) + _range(dtype, 1e4, 1e3)
    flat = np.full(ROW, 0.25)
    return (np.stack([spread, lead, near, offset, flat]).astype(dtype),)


def _short_rows(dtype):
    rng = _rng("short")
    x = rng.standard_normal((64, 16)) * _range(dtype, 30.0, 4.0)
    x[::4, 0] += _range(dtype, 80.0, 10.0)
    return (x.astype(dtype),)


def _long_positive(dtype):
    return (_rng("positive").uniform(0.5, 2.0, (4, ROW)).astype(dtype),)


def _long_mixed(dtype):
    rng = _rng("mixed")
    x = rng.standard_normal((4, ROW))
    x[1] += 3.0
    x[2] *= 1e-3
    x[3] = rng.standard_normal(ROW) * 0.1 + _range(dtype, 300.0, 30.0)  # a variance under a large mean
    return (x.astype(dtype),)


def _norm_rows(dtype):
    """Rows to normalise: unit normals, a large mean over a small spread, tiny values."""
    rng = _rng("norm")
    x = rng.standard_normal((6, 1024))
    x[1] = x[1] * 0.1 + _range(dtype, 100.0, 10.0)
    x[2] *= 1e-3
    x[3] = x[3] * 50
    w = rng.uniform(0.5, 1.5, 1024)
    b = rng.standard_normal(1024)
    return x.astype(dtype), w.astype(dtype), b.astype(dtype)


def _batch(dtype):
    rng = _rng("batch")
    x = rng.standard_normal((256, 8))
    x[:, 1] = x[:, 1] * 0.1 + _range(dtype, 100.0, 10.0)
    x[:, 2] *= 1e-3
    return (x.astype(dtype),)


def _batch_and_statistics(dtype):
    x, = _batch(dtype)
    rng = _rng("statistics")
    mean = x.astype(np.float64).mean(0) + rng.standard_normal(x.shape[1]) * 1e-3
    var = x.astype(np.float64).var(0) * rng.uniform(0.5, 2.0, x.shape[1])
    return x, mean.astype(dtype), var.astype(dtype)


def _pairs(dtype):
    rng = _rng("pairs")
    x = rng.standard_normal(4096) * 3
    t = x + rng.standard_normal(4096) * np.repeat([1e-3, 0.5, 5.0, 50.0], 1024)
    return x.astype(dtype), t.astype(dtype)


def _logits_targets(dtype):
    rng = _rng("logits")
    x = np.concatenate([rng.standard_normal(4096) * _range(dtype, 30.0, 8.0),
                        dense(*_range(dtype, (-100, 100), (-15, 15)), 4001)])
    t = rng.uniform(0, 1, x.size)
    t[::3] = np.round(t[::3])
    return x.astype(dtype), t.astype(dtype)


def _probabilities_targets(dtype):
    rng = _rng("probs")
    tiny = float(_finfo(dtype).tiny)
    p = np.concatenate([rng.uniform(0, 1, 4096), magnitudes(math.log10(tiny), -1, 500, signed=False),
                        1 - magnitudes(math.log10(float(_finfo(dtype).eps)) - 0.3, -1, 500, signed=False)])
    t = rng.uniform(0, 1, p.size)
    t[::2] = np.round(t[::2])
    return p.astype(dtype), t.astype(dtype)


def _classes(dtype):
    rng = _rng("classes")
    x = rng.standard_normal((64, 1000)) * _range(dtype, 8.0, 3.0)
    x[::8, 3] += _range(dtype, 40.0, 9.0)
    target = rng.integers(0, 1000, 64)
    target[::8] = 3
    return x.astype(dtype), target.astype(np.int64)


def _log_probabilities(dtype):
    x, target = _classes(dtype)
    return _log_softmax(x.astype(np.float64)).astype(dtype), target


def _binary(dtype, tag):
    rng = _rng(tag)
    a = rng.standard_normal(8192) * np.exp(rng.uniform(-8, 8, 8192))
    b = rng.standard_normal(8192) * np.exp(rng.uniform(-8, 8, 8192))
    return a.astype(dtype), b.astype(dtype)


def _powers(dtype):
    rng = _rng("pow")
    base = np.exp(rng.uniform(-4, 4, 8192))
    exponent = rng.uniform(*_range(dtype, (-10, 10), (-3, 3)), 8192)
    return base.astype(dtype), exponent.astype(dtype)


# --- the cases ---------------------------------------------------------------------------------

def _fn(name):
    return lambda lib, F, x: getattr(lib, name)(x)


def _act(name, **kwargs):
    return lambda lib, F, x: getattr(F, name)(x, **kwargs)


def _with_w(derivative):
    return lambda w, *x: w * derivative(*x)


CASES = [
    # elementwise math
    Case("exp", "elementwise", _fn("exp"), np.exp, _unary(-104, 89, -17.5, 11.1), _with_w(np.exp)),
    Case("log", "elementwise", _fn("log"), np.log,
         lambda d: (_cast(d, dense(0.5, 2.0), near_zero(d, signed=False)[1:], huge(d, signed=False)),),
         _with_w(lambda x: 1 / x)),
    Case("sqrt", "elementwise", _fn("sqrt"), np.sqrt,
         lambda d: (_cast(d, dense(2.0**-20, 4), near_zero(d, signed=False)[1:], huge(d, signed=False)),),
         _with_w(lambda x: 0.5 / np.sqrt(x))),
    Case("log1p", "elementwise", _fn("log1p"), np.log1p,
         lambda d: (_cast(d, dense(-0.99, 10), near_zero(d), huge(d, signed=False)),),
         _with_w(lambda x: 1 / (1 + x))),
    Case("expm1", "elementwise", _fn("expm1"), np.expm1, _unary(-30, 88, -12, 11), _with_w(np.exp)),
    Case("tanh", "elementwise", _fn("tanh"), np.tanh, _unary(-12, 12, -6, 6), _with_w(_sech2)),
    Case("sigmoid", "elementwise", _fn("sigmoid"), _sigmoid, _unary(-110, 90, -20, 12),
         _with_w(lambda x: _sigmoid(x) * _sigmoid(-x))),
    Case("erf", "elementwise", _fn("erf"), _erf, _unary(-6, 6, -4, 4),
         _with_w(lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x))),
    Case("sin", "elementwise", _fn("sin"), np.sin, _unary(-10, 10, -10, 10), _with_w(np.cos)),
    Case("cos", "elementwise", _fn("cos"), np.cos, _unary(-10, 10, -10, 10), _with_w(lambda x: -np.sin(x))),
    Case("add", "elementwise", lambda lib, F, a, b: a + b, np.add, lambda d: _binary(d, "add"),
         _with_w(lambda a, b: np.ones_like(a))),
    Case("mul", "elementwise", lambda lib, F, a, b: a * b, np.multiply, lambda d: _binary(d, "mul"),
         _with_w(lambda a, b: b)),
    Case("div", "elementwise", lambda lib, F, a, b: a / b, np.divide, lambda d: _binary(d, "div"),
         _with_w(lambda a, b: 1 / b)),
    Case("pow", "elementwise", lambda lib, F, a, b: a ** b, np.power, _powers,
         _with_w(lambda a, b: b * a ** (b - 1))),
    # activations
    Case("gelu", "activation", _act("gelu"), lambda x: x * _phi(x), _unary(-20, 10, -8, 8),
         _with_w(lambda x: _phi(x) + x * _PDF * np.exp(-0.5 * x * x)),  # 0 at x = -0.75
         grad_scale=_with_w(lambda x: _phi(x) + np.abs(x) * _PDF * np.exp(-0.5 * x * x))),
    Case("gelu (tanh)", "activation", _act("gelu", approximate="tanh"), _gelu_tanh, _unary(-20, 10, -8, 8),
         _with_w(_gelu_tanh_grad)),
    Case("silu", "activation", _act("silu"), lambda x: x * _sigmoid(x), _unary(-110, 90, -20, 12),
         _with_w(lambda x: _sigmoid(x) * (1 + x * _sigmoid(-x)))),
    Case("softplus", "activation", _act("softplus"), lambda x: np.where(x > 20, x, _softplus(x)),
         _unary(-110, 30, -20, 30), _with_w(lambda x: np.where(x > 20, 1.0, _sigmoid(x)))),
    Case("mish", "activation", _act("mish"), _mish, _unary(-30, 30, -12, 12), _with_w(_mish_grad),  # 0 at -1.19
         grad_scale=_with_w(lambda x: np.tanh(_softplus(x)) + np.abs(x) * _sech2(_softplus(x)) * _sigmoid(x))),
    Case("elu", "activation", _act("elu"), lambda x: np.where(x > 0, x, np.expm1(x)), _unary(-20, 20, -12, 12),
         _with_w(lambda x: np.where(x > 0, 1.0, np.exp(x)))),
    Case("softsign", "activation", _act("softsign"), lambda x: x / (1 + np.abs(x)),
         _unary(-100, 100, -100, 100, big=True), _with_w(lambda x: 1 / (1 + np.abs(x)) ** 2)),
    Case("leaky_relu", "activation", _act("leaky_relu"), lambda x: np.where(x > 0, x, 0.01 * x),
         _unary(-100, 100, -100, 100, big=True), _with_w(lambda x: np.where(x > 0, 1.0, 0.01))),
    # the softmax family, over long rows and short ones
    Case("softmax", "softmax", lambda lib, F, x: F.softmax(x, dim=-1), _softmax, _rows,
         lambda w, x: _softmax(x) * (w - np.sum(w * _softmax(x), -1, keepdims=True)), elementwise=False,
         grad_scale=_softmax_grad_scale),
    Case("log_softmax", "softmax", lambda lib, F, x: F.log_softmax(x, dim=-1), _log_softmax, _rows,
         lambda w, x: w - _softmax(x) * np.sum(w, -1, keepdims=True), elementwise=False,
         grad_scale=_log_softmax_grad_scale),
    Case("log_softmax (short rows)", "softmax", lambda lib, F, x: F.log_softmax(x, dim=-1), _log_softmax,
         _short_rows, lambda w, x: w - _softmax(x) * np.sum(w, -1, keepdims=True), elementwise=False,
         grad_scale=_log_softmax_grad_scale),
    Case("logsumexp", "softmax", lambda lib, F, x: lib.logsumexp(x, dim=-1), _logsumexp, _rows,
         lambda w, x: w[..., None] * _softmax(x), elementwise=False),
    # reductions over long rows
    Case("sum", "reduction", lambda lib, F, x: x.sum(dim=-1), _exact_sum, _long_mixed,
         lambda w, x: np.broadcast_to(w[..., None], x.shape), elementwise=False,
         scale=lambda x: _exact_sum(np.abs(x))),
    Case("mean", "reduction", lambda lib, F, x: x.mean(dim=-1), lambda x: _exact_sum(x) / x.shape[-1], _long_positive,
         lambda w, x: np.broadcast_to(w[..., None] / x.shape[-1], x.shape), elementwise=False),
    Case("var", "reduction", lambda lib, F, x: x.var(dim=-1), _var, _long_mixed,
         lambda w, x: w[..., None] * 2 * (x - np.mean(x, -1, keepdims=True)) / (x.shape[-1] - 1),
         elementwise=False, grad_scale=lambda w, x: np.abs(w[..., None]) * 2 * _mean_spread(x) / (x.shape[-1] - 1)),
    Case("std", "reduction", lambda lib, F, x: x.std(dim=-1), lambda x: np.sqrt(_var(x)), _long_mixed,
         lambda w, x: (w / np.sqrt(_var(x)))[..., None] * (x - np.mean(x, -1, keepdims=True)) / (x.shape[-1] - 1),
         elementwise=False,
         grad_scale=lambda w, x: np.abs(w / np.sqrt(_var(x)))[..., None] * _mean_spread(x) / (x.shape[-1] - 1)),
    Case("norm", "reduction", lambda lib, F, x: x.norm(dim=-1), lambda x: np.sqrt(_exact_sum(x * x)), _long_mixed,
         lambda w, x: (w / np.sqrt(_exact_sum(x * x)))[..., None] * x, elementwise=False),
    Case("cumsum", "reduction", lambda lib, F, x: x.cumsum(dim=-1), lambda x: np.cumsum(x, -1), _long_positive,
         lambda w, x: np.cumsum(w[..., ::-1], -1)[..., ::-1], elementwise=False,
         grad_scale=lambda w, x: np.cumsum(np.abs(w[..., ::-1]), -1)[..., ::-1]),
    # normalisations
    Case("layer_norm", "normalisation", lambda lib, F, x, w, b: F.layer_norm(x, (x.shape[-1],), w, b),
         _layer_norm, _norm_rows, _layer_norm_grad, elementwise=False,
         scale=_layer_norm_scale, grad_scale=_layer_norm_grad_scale),
    Case("batch_norm", "normalisation", lambda lib, F, x: F.batch_norm(x, None, None, training=True),
         _batch_norm, _batch, _batch_norm_grad, elementwise=False,
         scale=lambda x: _layer_norm_scale(x.T, 1.0, 0.0).T,
         grad_scale=lambda g, x: _layer_norm_grad_scale(g.T, x.T, 1.0, 0.0).T),
    Case("batch_norm (eval)", "normalisation", lambda lib, F, x, m, v: F.batch_norm(x, m, v, training=False),
         lambda x, m, v: (x - m) / np.sqrt(v + 1e-5), _batch_and_statistics,
         lambda w, x, m, v: w / np.sqrt(v + 1e-5), elementwise=False,
         scale=lambda x, m, v: (np.abs(x) + np.abs(m)) / np.sqrt(v + 1e-5)),
    # losses (the mean over the batch, as by default; the gradient by the input)
    Case("mse_loss", "loss", lambda lib, F, x, t: F.mse_loss(x, t), lambda x, t: np.mean((x - t) ** 2), _pairs,
         lambda w, x, t: w * 2 * (x - t) / x.size, elementwise=False),
    Case("l1_loss", "loss", lambda lib, F, x, t: F.l1_loss(x, t), lambda x, t: np.mean(np.abs(x - t)), _pairs,
         lambda w, x, t: w * np.sign(x - t) / x.size, elementwise=False),
    Case("smooth_l1_loss", "loss", lambda lib, F, x, t: F.smooth_l1_loss(x, t),
         lambda x, t: np.mean(_smooth_l1(x - t)), _pairs,
         lambda w, x, t: w * np.clip(x - t, -1, 1) / x.size, elementwise=False),
    Case("huber_loss", "loss", lambda lib, F, x, t: F.huber_loss(x, t), lambda x, t: np.mean(_huber(x - t)), _pairs,
         lambda w, x, t: w * np.clip(x - t, -1, 1) / x.size, elementwise=False),
    Case("cross_entropy", "loss", lambda lib, F, x, t: F.cross_entropy(x, t), _cross_entropy, _classes,
         _cross_entropy_grad, elementwise=False),
    Case("nll_loss", "loss", lambda lib, F, x, t: F.nll_loss(x, t),
         lambda x, t: -np.mean(np.take_along_axis(x, t[:, None], axis=1)), _log_probabilities,
         lambda w, x, t: -w * np.eye(x.shape[1])[t] / x.shape[0], elementwise=False),
    Case("binary_cross_entropy", "loss", lambda lib, F, p, t: F.binary_cross_entropy(p, t),
         lambda p, t: np.mean(_bce(p, t)), _probabilities_targets,
         lambda w, p, t: w * (p - t) / np.maximum(p * (1 - p), _BCE_EPSILON) / p.size,  # torch's derivative
         elementwise=False, grad_scale=lambda w, p, t: np.abs(w) * (p + t) / np.maximum(p * (1 - p), _BCE_EPSILON) / p.size),
    Case("binary_cross_entropy_with_logits", "loss",
         lambda lib, F, x, t: F.binary_cross_entropy_with_logits(x, t), lambda x, t: np.mean(_bce_logits(x, t)),
         _logits_targets, lambda w, x, t: w * (_sigmoid(x) - t) / x.size, elementwise=False,
         grad_scale=lambda w, x, t: np.abs(w) * (_sigmoid(x) + t) / x.size),
]

BY_NAME = {case.name: case for case in CASES}
DTYPES = ("float32", "float16")


# --- measuring ---------------------------------------------------------------------------------

def _float64(arrays):
    return tuple(a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays)


@dataclass(frozen=True)
class Truth:
    inputs: tuple  # in the dtype under test
    w: np.ndarray  # the upstream gradient, in that dtype
    out: np.ndarray  # float64
    grad: Optional[np.ndarray]
    scale: Optional[np.ndarray]
    grad_scale: Optional[np.ndarray]


def truths(case: Case, dtype: str) -> Truth:
    """The inputs of ``case`` in ``dtype`` and the true values from them."""
    inputs = case.inputs(dtype)
    wide = _float64(inputs)
    out = np.asarray(case.truth(*wide), dtype=np.float64)
    w = weights(case, out.shape, dtype)
    w64 = w.astype(np.float64)
    grad = None if case.grad is None else np.asarray(case.grad(w64, *wide), dtype=np.float64)
    scale = None if case.scale is None else case.scale(*wide)
    grad_scale = None if case.grad_scale is None else case.grad_scale(w64, *wide)
    return Truth(inputs, w, out, grad, scale, grad_scale)


def run(lib, functional, to_tensor, to_numpy, case: Case, inputs, w):
    """``(output, gradient of the first input)`` of ``case`` run by ``lib``, as float64 arrays."""
    tensors = [to_tensor(a, a.dtype.kind == "f" and i == 0) for i, a in enumerate(inputs)]
    out = case.call(lib, functional, *tensors)
    grad = None
    if case.grad is not None:
        (out * to_tensor(w, False)).sum().backward()
        grad = to_numpy(tensors[0].grad)
    return to_numpy(out), grad
