"""Functions where MLX's own lose accuracy, written with MLX's accurate ones.

float64 (MLX's CPU device only): MLX's exp, sin and cos have float32 accuracy in float64
(ml-explore/mlx #3047), and its erf too; these are reduced by hand or taken from libm.

float32: MLX's exp overflows from 88.0 (the format reaches 88.72), its erf returns 0 (or
a few correct digits) below |x| = 1e-5, and it has no erfc. The normal distribution
function and density that GELU needs are built here without the two losses of the naive
formulas: ``1 + erf(x / sqrt(2))`` cancels in the left tail, and ``exp(-x**2 / 2)`` turns
the rounding of ``x**2`` (relative 2**-24, times ``x**2 / 2`` up to 100) into 100 ulps; so
``x**2`` is split into an exact square and a small remainder (as fdlibm's erfcf does).
"""

from __future__ import annotations

import math

import mlx.core as mx
import numpy as np

from . import erf64 as _host

# --- float64 --------------------------------------------------------------------------------

# exp: MLX's expm1 and power are accurate in float64: reduce to |r| <= ln(2)/2, scale by 2**k
_LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts (fdlibm's), so k * _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.4426950408889634


def exp64(x):
    k = mx.round(x * _INV_LN2)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    two = mx.array(2.0, dtype=mx.float64)
    half = mx.floor(k / 2)
    # two factors, so 2**k neither overflows before exp(x) does nor underflows too early
    out = (mx.expm1(r) + 1) * mx.power(two, half) * mx.power(two, k - half)
    out = mx.where(x > 709.79, mx.array(np.inf, dtype=mx.float64), out)
    return mx.where(mx.isnan(x), x, mx.where(x < -745.2, mx.zeros_like(x), out))


# sin and cos: reduce to |r| <= pi/4 by multiples of pi/2 (in two parts, fdlibm's, so
# n * _PIO2_HI is exact for |x| < 2**20 pi) and evaluate fdlibm's kernel polynomials
_PIO2_HI = 1.57079632673412561417e+00
_PIO2_LO = 6.07710050650619224932e-11
_TWO_OVER_PI = 6.36619772367581382433e-01
_SIN = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
        2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_COS = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
        -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)


def _polynomial(z, coefficients):
    """``c[0] + c[1] z + c[2] z**2 + ...`` in Horner's form, in ``z``'s dtype."""
    out = mx.full(z.shape, coefficients[-1], dtype=z.dtype)
    for c in reversed(coefficients[:-1]):
        out = out * z + c
    return out


def sin_cos64(x, cosine: bool):
    n = mx.round(x * _TWO_OVER_PI)
    r = (x - n * _PIO2_HI) - n * _PIO2_LO
    z = r * r
    sin_r = r + (z * r) * _polynomial(z, _SIN)
    half = 0.5 * z
    w = 1.0 - half
    cos_r = w + (((1.0 - w) - half) + z * (z * _polynomial(z, _COS)))
    quadrant = (n - 4 * mx.floor(n / 4)) + (1 if cosine else 0)  # cos(x) = sin(x + pi/2)
    quadrant = quadrant - 4 * mx.floor(quadrant / 4)
    out = mx.where(quadrant == 0, sin_r, mx.where(quadrant == 1, cos_r,
                   mx.where(quadrant == 2, -sin_r, -cos_r)))
    return mx.where(mx.isfinite(x), out, mx.array(np.nan, dtype=mx.float64))


def erf64(x):
    """erf through the host, in NumPy (see erf64.py), where MLX's has float32 accuracy."""
    return mx.array(_host.erf(np.array(x)), dtype=mx.float64)


def erfc64(x):
    return mx.array(_host.erfc(np.array(x)), dtype=mx.float64)

# --- float32 --------------------------------------------------------------------------------

# exp: MLX's float32 exp reduces its argument with one constant, which leaves up to 60 ulps
# at |x| ~ 80, overflows from 88.0 and flushes results below 2**-126 to zero; reduce with
# fdlibm's expf constants (ln 2 in two parts, k * _LN2_HI32 exact for |k| < 2**9) to
# |r| <= ln(2)/2, where MLX's expm1 is accurate, and scale by 2**k built from its bits
_LN2_HI32 = 6.9314575195e-01
_LN2_LO32 = 1.4286067653e-06


def _power_of_two32(n):
    """``2.0 ** n`` for integral float32 ``n`` in [-126, 127], exactly (its exponent bits)."""
    return mx.left_shift((n + 127).astype(mx.int32), 23).view(mx.float32)


def exp32(x):
    k = mx.round(x * _INV_LN2)
    r = (x - k * _LN2_HI32) - k * _LN2_LO32
    k = mx.clip(k, -150, 128)  # beyond: 0 or inf either way
    half = mx.floor(k / 2)
    # two factors, so 2**k neither overflows before exp(x) does nor leaves the normal range
    out = (mx.expm1(r) + 1) * _power_of_two32(half) * _power_of_two32(k - half)
    out = mx.where(x > 88.72284, mx.array(np.inf, dtype=mx.float32), out)
    return mx.where(mx.isnan(x), x, mx.where(x < -103.98, mx.zeros_like(x), out))


# erf(x) = 2/sqrt(pi) (x - x**3/3 + x**5/10 - ...): below |x| = 0.5, the terms to x**13
# leave 4e-10 relative
_ERF_SERIES = tuple(2 / math.sqrt(math.pi) * (-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(7))


def erf32(x):
    small = mx.abs(x) < 0.5
    series = x * _polynomial(x * x, _ERF_SERIES)
    return mx.where(small, series, mx.erf(x))


# exp(z**2) erfc(z) for z >= 0 (Numerical Recipes' erfcc, fractional error below 1.2e-7):
# t exp(P(t)) with t = 1 / (1 + z/2)
_ERFCX = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
          1.48851587, -0.82215223, 0.17087277)


def _erfcx(z):
    t = 1 / (1 + 0.5 * z)
    return t * exp32(_polynomial(t, _ERFCX))


def exp_neg_square32(x, scale=1.0):
    """``exp(-scale * x**2)`` for ``scale`` 1 or 1/2, with ``x**2`` as ``h**2 + (x - h)(x + h)``:
    ``h`` is ``x`` to 1/256, 12 bits for |x| < 16, so ``h**2`` (and half of it) is exact."""
    x = mx.minimum(mx.abs(x), 15.0)  # exp(-112.5) or less: 0 in float32
    h = mx.round(x * 256.0) / 256.0
    return exp32(-scale * (h * h)) * exp32(-scale * ((x - h) * (x + h)))


def erfc32(x):
    z = mx.abs(x)
    tail = _erfcx(z) * exp_neg_square32(z)
    positive = mx.where(z < 0.5, 1 - erf32(z), tail)  # erfc(|x|)
    return mx.where(x < 0, 2 - positive, positive)


_SQRT1_2 = math.sqrt(0.5)


def ndtr32(x):
    """Phi(x): ``(1 + erf(x / sqrt 2)) / 2`` where that cannot cancel, else the tail."""
    z = x * _SQRT1_2
    body = 0.5 * (1 + erf32(z))
    tail = 0.5 * _erfcx(mx.maximum(-z, 0.0)) * exp_neg_square32(x, 0.5)
    return mx.where(z < -0.5, tail, body)



# --- sums --------------------------------------------------------------------------------------
# MLX's CPU kernels sum float32 one element after another (34 ulps over 20,001 numbers of one
# sign, 108 over a million), where NumPy and torch sum pairwise; summing blocks of 8, then
# blocks of those sums, bounds the error by the depth instead of the length (0.4-1.1 ulps there).
BLOCK = 8


def _blocks(a, fill=0.0):
    """``a`` (its last axis padded with ``fill`` to a multiple of BLOCK) as ``(..., n / BLOCK, BLOCK)``."""
    n = a.shape[-1]
    m = -(-n // BLOCK) * BLOCK
    if m != n:
        a = mx.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, m - n)], constant_values=fill)
    return a.reshape(*a.shape[:-1], m // BLOCK, BLOCK)


def _sum_last(a):
    while a.shape[-1] > BLOCK:
        a = mx.sum(_blocks(a), axis=-1)
    return mx.sum(a, axis=-1)


def sum32(a, axis=None, keepdims=False):
    """``mx.sum`` of a float32 array in blocks, the reduced axes moved last and flattened."""
    ndim = a.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(x % ndim for x in ((axis,) if isinstance(axis, int) else axis))
    count = 1
    for x in axes:
        count *= a.shape[x]
    if count <= BLOCK * BLOCK or ndim == 0:
        return mx.sum(a, axis=axis, keepdims=keepdims)
    kept = [x for x in range(ndim) if x not in axes]
    flat = mx.transpose(a, kept + list(axes)).reshape(*[a.shape[x] for x in kept], count)
    out = _sum_last(flat)
    if keepdims:
        out = out.reshape([1 if x in axes else n for x, n in enumerate(a.shape)])
    return out


def _cumsum_last(a):
    n = a.shape[-1]
    if n <= BLOCK * BLOCK:
        return mx.cumsum(a, axis=-1)
    blocks = mx.cumsum(_blocks(a), axis=-1)  # running sums inside each block
    totals = _cumsum_last(blocks[..., -1])  # running sums of the blocks' totals
    before = mx.concatenate([mx.zeros_like(totals[..., :1]), totals[..., :-1]], axis=-1)
    return (blocks + before[..., None]).reshape(*a.shape[:-1], -1)[..., :n]


def cumsum32(a, axis):
    """``mx.cumsum`` of a float32 array in blocks: each block's running sums plus the running
    sum of the blocks before it."""
    moved = mx.moveaxis(a, axis, -1)
    return mx.moveaxis(_cumsum_last(moved), -1, axis)
