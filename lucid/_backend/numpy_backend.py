"""The NumPy backend: device ``"cpu"``."""

from __future__ import annotations

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


class NumpyBackend(Backend):
    device = "cpu"
    xp = np
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

    def is_exclusive(self, array):
        return isinstance(array, np.ndarray) and array.base is None and array.flags.writeable

    def argmax(self, a, axis, keepdims=False):
        return np.argmax(a, axis=axis, keepdims=keepdims)

    def argmin(self, a, axis, keepdims=False):
        return np.argmin(a, axis=axis, keepdims=keepdims)

    def assign(self, a, value):
        np.copyto(a, value, casting="unsafe")
        return a

    def inplace(self, name, a, *args):
        getattr(np, name)(a, *args, out=a)
        return a

