"""The NumPy backend: device ``"cpu"``.

Update rules run compiled by numba where it is installed (one in-place loop over the
elements, see :mod:`~lucid._backend.numba_rules`) and as NumPy array expressions otherwise,
or when the environment sets ``LUCID_JIT=0``.
"""

from __future__ import annotations

import importlib
import math
import os
import weakref

import numpy as np

from .. import _dtype
from . import erf64
from . import rules as _rules
from .base import Backend, window_counts

_JIT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _all_contiguous(arrays) -> bool:
    for array in arrays:
        if not array.flags.c_contiguous:
            return False
    return True


def _load_numba(module: str):
    """The numba-compiled ``module`` of this package, or None where numba is missing or
    ``LUCID_JIT=0`` turns it off."""
    if os.environ.get("LUCID_JIT", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    try:
        import numba  # noqa: F401 - only whether it imports
    except ImportError:
        return None
    return importlib.import_module(f"{__package__}.{module}")


def _padded_to_2d(values: tuple, fill: int) -> tuple:
    """A pooling's sizes of one or two dimensions as those of two (a 1-D pooling is H = 1)."""
    return (fill,) * (2 - len(values)) + tuple(values)


def _load_numba_rules():
    """:mod:`numba_rules`, or None (see :func:`_load_numba`)."""
    return _load_numba("numba_rules")

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
    _xp = np
    library = "NumPy"
    to_native = _TO_NATIVE

    def owns(self, array) -> bool:
        return isinstance(array, (np.ndarray, np.generic))

    def asarray(self, data, dtype):
        if not isinstance(data, np.ndarray) and type(data).__module__.startswith("mlx"):
            data = self.of_array(data).to_numpy(data)
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

    # float16 and float32 formulas are evaluated in float64 and rounded once (see precisely):
    # as accurate as the format allows, whatever NumPy's float32 kernels on this CPU do
    working_dtypes = {_dtype.float16: _dtype.float64, _dtype.float32: _dtype.float64}

    def erf(self, a):
        return _erf(a)

    def erfc(self, a):
        return _erfc(a)

    _SAME_WIDTH_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}

    def keep_where(self, condition, a):
        # the bits of a, and-ed with all ones or all zeros: exact (NaN and inf kept, +0 elsewhere)
        # and branch-free, where np.where over a random mask runs ten times slower
        bits = self._SAME_WIDTH_INT.get(a.dtype)
        if bits is None or condition.dtype != np.bool_:
            return super().keep_where(condition, a)
        mask = np.negative(condition, dtype=bits)  # True -> -1 (all ones), False -> 0
        return np.bitwise_and(np.ascontiguousarray(a).view(bits), mask).view(a.dtype)

    def gelu_parts(self, a):
        special = _special_functions()
        if a.dtype == np.float32 and hasattr(special, "gelu_parts32"):  # one compiled pass
            return special.gelu_parts32(a)
        return super().gelu_parts(a)

    def _softmax_parts(self, a, axis):
        # a -inf entry (a masked attention score) makes TwoSum's d - a a NaN that the formula
        # then discards: NumPy's warning about it would be noise (torch gives none)
        with np.errstate(invalid="ignore"):
            return super()._softmax_parts(a, axis)

    def windows(self, a, kernel, stride, dilation):
        # a strided view: no copy (the product that reads it makes the one im2col copy)
        a = np.asarray(a)
        out = window_counts(a.shape[2:], kernel, stride, dilation)
        spatial = a.strides[2:]
        strides = a.strides[:2] + tuple(t * r for t, r in zip(spatial, dilation)) + tuple(
            t * s for t, s in zip(spatial, stride))
        return np.lib.stride_tricks.as_strided(a, a.shape[:2] + tuple(kernel) + out, strides, writeable=False)

    def _add_into(self, a, index, values):
        view = a[index]
        np.add(view, values, out=view)
        return a

    _numba_windows = False  # not looked for yet

    def _windows_jit(self, a, kernel):
        """:mod:`numba_windows` where numba serves this pooling (float32/64, 1-D or 2-D), else None."""
        if self._numba_windows is False:
            NumpyBackend._numba_windows = _load_numba("numba_windows")
        if self._numba_windows is None or np.asarray(a).dtype not in _JIT_DTYPES or len(kernel) not in (1, 2):
            return None
        return self._numba_windows

    def unwindow(self, cols, size, stride, dilation):
        d = len(size)
        kernel = cols.shape[2:2 + d]
        jit = self._windows_jit(cols, kernel)
        if jit is None or (tuple(stride) == tuple(kernel) and all(v == 1 for v in dilation)):
            return super().unwindow(cols, size, stride, dilation)  # a tiling is a transpose: NumPy's
        out = np.zeros(cols.shape[:2] + _padded_to_2d(size, 1), dtype=cols.dtype)
        spatial = cols.shape[2:]
        if d == 1:
            cols = cols.reshape(cols.shape[:2] + (1,) + spatial[:1] + (1,) + spatial[1:])
        jit.col2im(cols, *_padded_to_2d(stride, 1), *_padded_to_2d(dilation, 1), out)
        return out.reshape(out.shape[:2] + tuple(size))

    def max_windows(self, a, kernel, stride, dilation):
        jit = self._windows_jit(a, kernel)
        if jit is None:
            return super().max_windows(a, kernel, stride, dilation)
        a = np.ascontiguousarray(a)
        lead, out = a.shape[:2], window_counts(a.shape[2:], kernel, stride, dilation)
        flat = a.reshape((-1,) + _padded_to_2d(a.shape[2:], 1))
        values = np.empty((flat.shape[0],) + _padded_to_2d(out, 1), dtype=a.dtype)
        position = np.empty(values.shape, dtype=np.int64)
        jit.max_pool(flat, *_padded_to_2d(kernel, 1), *_padded_to_2d(stride, 1), *_padded_to_2d(dilation, 1),
                     values, position)
        return values.reshape(lead + out), position.reshape(lead + out)

    def unmax_windows(self, g, position, kernel, size, stride, dilation):
        jit = self._windows_jit(g, kernel)
        if jit is None:
            return super().unmax_windows(g, position, kernel, size, stride, dilation)
        lead, out = g.shape[:2], g.shape[2:]
        grad = np.zeros((math.prod(lead),) + _padded_to_2d(size, 1), dtype=g.dtype)
        jit.max_unpool(np.ascontiguousarray(g).reshape((-1,) + _padded_to_2d(out, 1)),
                       np.ascontiguousarray(position).reshape((-1,) + _padded_to_2d(out, 1)),
                       *_padded_to_2d(kernel, 1), *_padded_to_2d(stride, 1), *_padded_to_2d(dilation, 1), grad)
        return grad.reshape(lead + tuple(size))

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

    def _argsort(self, a, axis):
        return np.argsort(a, axis=axis, kind="stable")

    def assign(self, a, value):
        np.copyto(a, value, casting="unsafe")
        return a

    def _inplace(self, name, a, *args):
        getattr(np, name)(a, *args, out=a)
        return a

    _numba_rules = False  # not looked for yet

    @property
    def rule_runner(self):
        return "numba" if self._jit() is not None else "NumPy array expressions"

    def _jit(self):
        if self._numba_rules is False:
            NumpyBackend._numba_rules = _load_numba_rules()
        return self._numba_rules

    def run_rule(self, rule, items):
        jit = self._jit()
        kernel = jit.kernel(rule) if jit is not None else None
        packed: dict = {}  # the scalars of a step are shared by its parameters: packed once
        out = []
        for arrays, grad, scalars in items:
            dtype = arrays[0].dtype
            if kernel is None or dtype not in _JIT_DTYPES or not _all_contiguous(arrays):
                sums = self._evaluate_rule(rule, arrays, grad, scalars)
                out.append((*arrays, *sums) if rule.sums else arrays)
                continue
            key = (id(scalars), dtype)
            numbers = packed.get(key)
            if numbers is None:
                numbers = packed[key] = np.array(scalars, dtype=dtype)
            if not grad.flags.c_contiguous:
                grad = np.ascontiguousarray(grad)
            totals = (np.zeros(len(rule.sums)),) if rule.sums else ()
            if arrays[0].ndim == 1:  # the loop takes 1-D arrays; reshape only what is not
                kernel(arrays[0], grad, *arrays[1:], numbers, *totals)
            else:
                kernel(*(a.reshape(-1) for a in arrays[:1]), grad.reshape(-1), *(a.reshape(-1) for a in arrays[1:]),
                       numbers, *totals)
            out.append((*arrays, *totals[0].tolist()) if rule.sums else arrays)
        return out

    def rule_batch(self, rule, arrays):
        jit = self._jit()
        if jit is None or arrays[0].dtype not in _JIT_DTYPES or rule.sums:
            return super().rule_batch(rule, arrays)
        width = 1 + len(rule.state)
        return _NumbaBatch(jit, rule, [tuple(arrays[j:j + width]) for j in range(0, len(arrays), width)])

    @staticmethod
    def _evaluate_rule(rule, arrays, grad, scalars):
        """``rule`` as NumPy array expressions, its results written into ``arrays``; returns the
        sums of a rule with sums (each term summed in float64)."""
        cast = arrays[0].dtype.type
        fn = rule.with_vocabulary(_rules.NUMPY_VOCABULARY)
        results = fn(arrays[0], grad, *arrays[1:], *(v if isinstance(v, bool) else cast(v) for v in scalars))
        # a result that is one of the arrays about to be overwritten is copied first
        results = [r.copy() if any(r is a for a in arrays) else r for r in results]
        for target, value in zip(arrays, results):
            np.copyto(target, value, casting="unsafe")
        return [float(np.sum(term, dtype=np.float64)) for term in results[len(arrays):]]


class _NumbaBatch:
    """One rule over the same parameter and state arrays (one dtype) step after step, in one
    compiled call: their addresses are kept in a table, and only a gradient that is a new
    array since the last step has its address read again. An array that is not contiguous
    (a parameter, a state, or a gradient) is run on its own by the per-tensor path."""

    def __init__(self, jit, rule, arrays):
        self._rule, self._kernel, self._address = rule, jit.multi_kernel(rule), jit.address_function()
        self._dtype = arrays[0][0].dtype
        self._alone = [k for k, item in enumerate(arrays) if not _all_contiguous(item)]
        self._arrays = arrays
        table = [(item[0].size, *(self._address(a) for a in item)) for item in arrays if _all_contiguous(item)]
        self._table = np.array(table, dtype=np.int64).reshape(len(table), 2 + len(rule.state))
        self._in_table = [k for k, item in enumerate(arrays) if _all_contiguous(item)]
        self._grads = [None] * len(self._in_table)  # weak references to the gradients whose addresses are below
        self._grad_addresses = np.zeros(len(self._in_table), dtype=np.int64)
        self._shared_row = np.zeros(len(self._in_table), dtype=np.int64)
        self._own_rows = np.arange(len(self._in_table), dtype=np.int64)

    def run(self, arrays, grads, scalars):
        """Update every array from ``grads`` (one per item, in order, each of its parameter's
        shape and dtype), in place; ``scalars`` is one tuple for all, or a list of one per
        item. ``arrays`` (the same arrays, flat) are returned as they are."""
        shared = isinstance(scalars, tuple)
        dtype, kept, addresses = self._dtype, self._grads, self._grad_addresses
        held = []  # contiguous copies of strided gradients, alive until the call returns
        for j, k in enumerate(self._in_table):
            grad = grads[k]
            known = kept[j]
            if known is None or known() is not grad:
                where = self._address(grad)
                if where < 0:
                    grad = np.ascontiguousarray(grad)
                    held.append(grad)
                    where = self._address(grad)
                    kept[j] = None
                else:
                    kept[j] = weakref.ref(grad)  # weak: a gradient set to None is still freed
                addresses[j] = where
        if shared:
            rows, index = np.array([scalars], dtype=dtype), self._shared_row
        else:
            rows, index = np.array([scalars[k] for k in self._in_table], dtype=dtype), self._own_rows
        self._kernel(self._table, addresses, rows, index)
        for k in self._alone:
            NumpyBackend._evaluate_rule(self._rule, self._arrays[k], grads[k], scalars if shared else scalars[k])
        return arrays


_special = None  # erf and erfc in float64: numba's where it is on, else erf64's (see _erf)


def _erf(a):
    """The error function of a NumPy array, in float64 (NumPy has none), rounded to its dtype."""
    a = np.asarray(a)
    return _special_functions().erf(a.astype(np.float64, copy=False)).astype(a.dtype, copy=False)


def _erfc(a):
    """``1 - erf(a)`` likewise."""
    a = np.asarray(a)
    return _special_functions().erfc(a.astype(np.float64, copy=False)).astype(a.dtype, copy=False)


def _special_functions():
    global _special
    if _special is None:
        _special = _load_numba("numba_special") or erf64
    return _special
