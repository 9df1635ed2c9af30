"""The vocabulary elementwise update rules are written in (see :func:`elementwise`).

A rule is a pure function of one parameter's elements, its gradient's, its state's and a
few scalars, in the shape of its paper's algorithm box; each backend decides how it runs
(numba loops on "cpu", MLX arrays on "gpu", NumPy array expressions without numba).

Examples
--------
>>> from lucid.optim.elementwise import elementwise, sqrt
>>> @elementwise(state=("square_sum",))
... def adagrad_like(param, grad, square_sum, eps, neg_lr):
...     square_sum = square_sum + grad * grad
...     return param + grad * neg_lr / (sqrt(square_sum) + eps), square_sum
>>> [float(v) for v in adagrad_like(1.0, 2.0, 0.0, 0.0, -0.5)]
[0.5, 4.0]
"""

from .._backend.rules import Rule, abs, elementwise, helper, lerp, maximum, minimum, sign, sqrt, where

__all__ = ["Rule", "elementwise", "helper", "sqrt", "abs", "sign", "maximum", "minimum", "where", "lerp"]
