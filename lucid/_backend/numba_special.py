"""erf and erfc compiled by numba: libm's, one loop over the elements (a few times faster
than :mod:`erf64`, NumPy's rational approximations, which serve where numba is missing).

numba keeps the machine code in its cache (``cache=True``), so a second process loads it.
"""

from __future__ import annotations

import math

from numba import vectorize


@vectorize(["float64(float64)"], cache=True)
def erf(x):
    return math.erf(x)


@vectorize(["float64(float64)"], cache=True)
def erfc(x):
    return math.erfc(x)
