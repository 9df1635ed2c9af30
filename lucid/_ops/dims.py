"""Dimension arguments (``dim=``) as the ops take them: one reading for every op."""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Iterable, Sequence
from typing import Any


def axes(tensor, dim):
    """``dim`` (None, an int or a sequence) as a tuple of distinct non-negative axes, validated."""
    if dim is None:
        return tuple(range(tensor.ndim))
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    ndim = builtins.max(tensor.ndim, 1)
    out = []
    for d in dims:
        if not isinstance(d, numbers.Integral) or isinstance(d, bool):
            raise TypeError(f"dimensions must be integers, got {d!r}")
        if not -ndim <= d < ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})"
            )
        if d % ndim in out:
            raise RuntimeError(f"dim {d % ndim} appears multiple times in the list of dims")
        out.append(int(d) % ndim)
    return tuple(out) if tensor.ndim else ()


def sizes(args: tuple[int | Sequence[int], ...]) -> tuple[int, ...]:
    """Sizes given as ints or as one sequence of them (``reshape(x, 2, 3)``, ``reshape(x, (2, 3))``), as ints."""
    first = args[0] if len(args) == 1 else None
    values: Iterable[Any] = first if isinstance(first, (tuple, list)) else args  # int() refuses anything else
    return tuple(int(n) for n in values)
