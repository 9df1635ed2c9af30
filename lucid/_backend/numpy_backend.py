"""The NumPy backend: device ``"cpu"``."""

from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .base import Backend

_TO_NATIVE = {
    _dtype.bool_: np.dtype(np.bool_),
    _dtype.int32: np.dtype(np.int32),
    _dtype.int64: np.dtype(np.int64),
    _dtype.float16: np.dtype(np.float16),
    _dtype.float32: np.dtype(np.float32),
    _dtype.float64: np.dtype(np.float64),
}


_ERF = np.frompyfunc(math.erf, 1, 1)


def host_erf(a: np.ndarray) -> np.ndarray:
    """erf elementwise with the C library's, per element (NumPy has none; it is correctly rounded in practice)."""
    a = np.asarray(a)
    return _ERF(a).astype(a.dtype) if a.size else a.copy()


class NumpyBackend(Backend):
    device = "cpu"
    _xp = np
    library = "NumPy"
    to_native = _TO_NATIVE

    def owns(self, array) -> bool:
        return isinstance(array, (np.ndarray, np.generic))

    def asarray(self, data, dtype):
        if not isinstance(data, np.ndarray) and type(data).__module__.startswith("mlx"):
            from . import of_array

            data = of_array(data).to_numpy(data)
        return np.array(data, dtype=_TO_NATIVE[dtype], copy=True)

    def to_numpy(self, array):
        return np.array(array, copy=True)

    def native(self, value):
        return np.asarray(value)

    def as_numpy(self, array):
        return array

    def copy(self, array):
        return np.array(array, copy=True)

    def astype(self, array, dtype):
        return np.asarray(array).astype(_TO_NATIVE[dtype])

    def sigmoid(self, a):
        # exp of a non-positive number only, so large |a| neither overflows nor warns
        e = np.exp(-np.abs(a))
        return np.where(a >= 0, 1 / (1 + e), e / (1 + e))

    def erf(self, a):
        return host_erf(a)

    def getitem(self, a, index):
        if len(index) == 1 and isinstance(index[0], np.ndarray) and index[0].dtype.kind == "i" and a.ndim:
            return np.take(a, index[0], axis=0)  # rows by index (embedding lookups): take is faster
        return a[index]

    def scatter_add(self, shape, dtype, index, values):
        out = np.zeros(shape, dtype=_TO_NATIVE[dtype])
        if all(part is None or part is Ellipsis or isinstance(part, (int, slice)) for part in index):
            out[index] = values  # basic indexing names each element once: a plain write
        else:
            np.add.at(out, index, values)
        return out

    def setitem(self, a, index, values):
        a[index] = values
        return a

    def nonzero(self, a):
        return np.flatnonzero(a).astype(np.int64)

    def coalesce_rows(self, indices, values):
        if indices.shape[0] < 2:
            return indices, values
        order = np.argsort(indices, kind="stable")
        ordered = indices[order]
        first = np.empty(ordered.shape[0], dtype=bool)
        first[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        values = values[order]
        if starts.shape[0] == ordered.shape[0]:  # no duplicates: nothing to sum
            return ordered, values
        # a segment sum, np.add.reduceat, over the rows that repeat only: its cost is per
        # segment, and most rows of a batch appear once (a one-row segment is a copy)
        counts = np.diff(starts, append=ordered.shape[0])
        out = values[starts]
        repeated = np.flatnonzero(counts > 1)
        if repeated.shape[0] * 2 > starts.shape[0]:
            return ordered[starts], np.add.reduceat(values, starts, axis=0)
        lengths = counts[repeated]
        offsets = np.cumsum(lengths) - lengths  # where each repeated segment starts in `picked`
        picked = np.repeat(starts[repeated] - offsets, lengths) + np.arange(offsets[-1] + lengths[-1])
        out[repeated] = np.add.reduceat(values[picked], offsets, axis=0)
        return ordered[starts], out

    def index_add_rows(self, a, rows, values, unique=False):
        if unique:
            a[rows] += values
        else:
            np.add.at(a, rows, values)  # sequential: duplicates accumulate in order
        return a

    def nonzero_rows(self, a):
        n = a.shape[0]
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        flat = a.reshape(n, -1)
        width = flat.shape[1] * flat.dtype.itemsize
        if not flat.flags.c_contiguous or width == 0:
            return super().nonzero_rows(a)
        # OR the bits of each row as whole words (a long-word reduction, twice as fast as
        # any(a != 0) on a large table), then keep the candidates whose values are nonzero:
        # -0.0 has a set bit but is zero
        word = next(w for w in (np.uint64, np.uint32, np.uint16, np.uint8) if width % np.dtype(w).itemsize == 0)
        bits = np.bitwise_or.reduce(flat.view(word), axis=1)
        candidates = np.flatnonzero(bits)
        if flat.dtype.kind == "f" and candidates.shape[0]:
            candidates = candidates[(flat[candidates] != 0).any(axis=1)]
        return candidates.astype(np.int64, copy=False)

    def is_exclusive(self, array):
        return isinstance(array, np.ndarray) and array.base is None and array.flags.writeable

    def argmax(self, a, axis, keepdims=False):
        return np.argmax(a, axis=axis, keepdims=keepdims)

    def argmin(self, a, axis, keepdims=False):
        return np.argmin(a, axis=axis, keepdims=keepdims)

    def assign(self, a, value):
        np.copyto(a, value, casting="unsafe")
        return a

    def _inplace(self, name, a, *args):
        getattr(np, name)(a, *args, out=a)
        return a

