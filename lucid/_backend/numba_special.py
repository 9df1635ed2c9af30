"""erf and erfc compiled by numba: libm's, one loop over the elements (a few times faster
than :mod:`erf64`, NumPy's rational approximations, which serve where numba is missing),
and GELU's value and derivative of a float32 array in one such loop.

numba keeps the machine code in its cache (``cache=True``), so a second process loads it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, vectorize


@vectorize(["float64(float64)"], cache=True)
def erf(x):
    return math.erf(x)


@vectorize(["float64(float64)"], cache=True)
def erfc(x):
    return math.erfc(x)


_SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


@njit(["UniTuple(float64[::1], 2)(float32[::1])"], cache=True)
def _gelu_parts32(x):
    value, slope = np.empty(x.size, np.float64), np.empty(x.size, np.float64)
    for i in range(x.size):
        v = np.float64(x[i])
        phi = 0.5 * math.erfc(-v * _SQRT1_2)
        value[i] = v * phi
        slope[i] = phi + v * (_INV_SQRT_2PI * math.exp(-0.5 * (v * v)))  # v * v: exact for a float32 v
    return value, slope


def gelu_parts32(x):
    """GELU of a float32 array in one pass, in float64: its value (rounded to float32) and its
    derivative (kept in float64), as :meth:`Backend.gelu_parts` computes them over whole arrays."""
    value, slope = _gelu_parts32(np.ascontiguousarray(x).reshape(-1))
    return value.astype(np.float32).reshape(x.shape), slope.reshape(x.shape)
