"""Errors in ulps of the true value: how float32 and float16 results are judged.

A result is compared with a float64 (or better) truth computed from the same inputs, never
with another library's float32 result: two libraries each round differently, and on each CPU
differently, so their difference says nothing about which one is right. The error of one
element is ``|actual - truth| / ulp(truth)``, where ``ulp(t)`` is the spacing of the
format's numbers at ``|t|`` (the subnormal spacing below the smallest normal number), so a
correctly rounded result is within 0.5 ulps. A truth beyond the format's range is met only by
the infinity it rounds to; NaN meets only NaN.

``flush=True`` measures a device that flushes subnormal numbers to zero, as GPUs do (Metal
by default, and MLX's CPU kernels in ``exp``): there the format's numbers below the smallest
normal one ``tiny`` are 0 and ``±tiny``, so the spacing below ``tiny`` is ``tiny`` itself,
and a subnormal truth met by 0 is at most one ulp away.
"""

from __future__ import annotations

import numpy as np

# (mantissa bits with the implicit one, smallest normal exponent) per format
_FORMATS = {"float32": (24, -126), "float16": (11, -14), "float64": (53, -1022)}


def ulp(truth, dtype: str, flush: bool = False) -> np.ndarray:
    """The spacing of ``dtype``'s numbers at each ``|truth|`` (a float64 array)."""
    digits, emin = _FORMATS[dtype]
    truth = np.abs(np.asarray(truth, dtype=np.float64))
    _, exponent = np.frexp(truth)  # truth = m * 2**exponent with 0.5 <= m < 1
    exponent = np.where(truth > 0, exponent - 1, emin)
    spacing = np.ldexp(1.0, np.maximum(exponent, emin) - (digits - 1))
    return np.where(truth < 2.0**emin, 2.0**emin, spacing) if flush else spacing


def errors(actual, truth, dtype: str, flush: bool = False, scale=None) -> np.ndarray:
    """Each element's error in ulps of its true value (0 where both agree, inf where
    ``actual`` is not finite and the rounded truth is not that same value).

    ``scale``, where given, is the size of the terms whose sum (or difference) the true value
    is, where they can cancel (a sum of numbers of both signs, ``x - mean(x)``): the error is
    then counted in ulps of ``max(|truth|, scale)``, the best that any algorithm rounding
    those terms can promise.
    """
    actual = np.asarray(actual, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    actual, truth = np.broadcast_arrays(actual, truth)
    size = np.abs(truth) if scale is None else np.maximum(np.abs(truth), np.abs(np.asarray(scale, dtype=np.float64)))
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = truth.astype(dtype).astype(np.float64)  # where the truth overflows the format
        out = np.abs(actual - truth) / ulp(size, dtype, flush)
    same = (actual == rounded) & ~np.isfinite(rounded)
    out = np.where(same | (np.isnan(actual) & np.isnan(truth)), 0.0, out)
    return np.where(np.isnan(out), np.inf, out)


def worst(actual, truth, dtype: str, flush: bool = False, scale=None) -> tuple[float, int]:
    """The largest error in ulps and the flat index of the element that has it."""
    err = errors(actual, truth, dtype, flush, scale).reshape(-1)
    if err.size == 0:
        return 0.0, -1
    k = int(np.argmax(err))
    return float(err[k]), k
