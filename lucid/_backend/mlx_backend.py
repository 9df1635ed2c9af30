"""The MLX backend: device ``"gpu"``.

MLX runs on the Apple GPU where there is one and on its CPU device elsewhere (the
``mlx[cpu]`` build on Linux), so this same code is tested on machines without a GPU.
MLX arrays are lazy values: nothing here writes into an array another holder can see,
and :meth:`eval` is how the optimizer materialises a step.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .base import Backend

try:
    import mlx.core as mx
except ImportError as error:  # pragma: no cover - exercised only without mlx
    raise RuntimeError(
        "the 'gpu' device needs MLX, which is not installed: "
        "pip install 'lucid[mlx]' (or pip install mlx on macOS, 'mlx[cpu]' on Linux)"
    ) from error

_TO_NATIVE = {
    _dtype.bool_: mx.bool_,
    _dtype.int32: mx.int32,
    _dtype.int64: mx.int64,
    _dtype.float16: mx.float16,
    _dtype.float32: mx.float32,
    _dtype.float64: mx.float64,
}
_FROM_NATIVE = {v: k for k, v in _TO_NATIVE.items()}


class MlxBackend(Backend):
    device = "gpu"
    xp = mx

    def owns(self, array) -> bool:
        return isinstance(array, mx.array)

    def native_dtype(self, dtype):
        return _TO_NATIVE[dtype]

    def dtype_of(self, array):
        try:
            return _FROM_NATIVE[array.dtype]
        except KeyError:
            raise TypeError(f"lucid has no dtype for MLX's {array.dtype}") from None

    def asarray(self, data, dtype):
        if isinstance(data, mx.array):
            return data.astype(_TO_NATIVE[dtype])
        # through NumPy, naming the dtype: mx.array(float64 ndarray) would give float32
        host = np.asarray(data, dtype=np.dtype(dtype.name if dtype is not _dtype.bool_ else "bool"))
        return mx.array(host, dtype=_TO_NATIVE[dtype])

    def to_numpy(self, array):
        return np.array(array, copy=True)

    def copy(self, array):
        return array  # arrays are values here: no write can reach another holder

    def eval(self, arrays):
        mx.eval(list(arrays))

    def sigmoid(self, a):
        return mx.sigmoid(a)

    def normalize_index(self, index):
        # MLX cannot index with boolean masks: turn each into the integer indices it selects
        out = []
        for part in index:
            if isinstance(part, mx.array) and part.dtype == mx.bool_:
                out.extend(mx.array(i) for i in np.nonzero(np.array(part)))
            else:
                out.append(part)
        return tuple(out)

    def scatter_add(self, shape, dtype, index, values):
        return mx.zeros(tuple(shape), dtype=_TO_NATIVE[dtype]).at[index].add(values)

    def setitem(self, a, index, values):
        out = mx.array(a)  # a copy we own: the caller's array stays as it was
        out[index] = values
        return out

    def argmax(self, a, axis, keepdims=False):
        return mx.argmax(a, axis=axis, keepdims=keepdims)

    def argmin(self, a, axis, keepdims=False):
        return mx.argmin(a, axis=axis, keepdims=keepdims)

    def inplace(self, name, a, *args):
        out = getattr(mx, name)(a, *args)
        # an in-place op keeps its target's dtype, as NumPy's out= and torch do
        return out if out.dtype == a.dtype else out.astype(a.dtype)
