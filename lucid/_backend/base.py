"""The interface every backend implements.

Most of it is shared: NumPy and ``mlx.core`` spell most array functions the same way, so
the methods here call ``self._xp`` and a backend overrides only what differs (creation from
host data, dtype mapping, scatter-add, in-place writes, evaluation).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype

# The only names the string-dispatched methods take: the operations lucid itself uses, so
# that a name never reaches the array namespace unchecked.
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_LOGICAL = ("logical_and", "logical_or", "logical_xor")
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor")  # issue 24
_INPLACE = ("add", "multiply", "divide", "negative", "sqrt", "abs", "sign", "maximum", "minimum")
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT1_2 = math.sqrt(0.5)


# a - m along an axis as shifted + error exactly, exp(a - m), m (0 where not finite), and the
# log of the sum of the exponentials, log_total, and the sum itself, total
_SoftmaxParts = namedtuple("_SoftmaxParts", "shifted error exp_shifted peak log_total total")


def window_counts(size, kernel, stride, dilation) -> tuple:
    """How many windows fit along each dimension (see :meth:`Backend.windows`)."""
    return tuple((n - d * (k - 1) - 1) // s + 1 for n, k, s, d in zip(size, kernel, stride, dilation))


def _window_slices(offset, out, stride, dilation) -> tuple:
    """The elements that kernel position ``offset`` reads in every window, as slices."""
    return tuple(slice(k * d, k * d + s * (n - 1) + 1, s) for k, n, s, d in zip(offset, out, stride, dilation))


def _check_name(name: str, allowed: tuple, kind: str) -> None:
    if name not in allowed:
        raise ValueError(f"unknown {kind} {name!r}; expected one of {', '.join(allowed)}")


class Backend:
    """An array library behind a lucid device."""

    device: str = ""
    _xp: Any = None  # the array namespace, numpy or mlx.core: private to the backends
    # whether reshape, transpose and basic indexing give arrays that share memory with their
    # source (NumPy); if not (MLX), lucid's views write back to their base themselves
    views_share_memory: bool = True
    library: str = ""  # the array library's name, for messages
    max_dimension: int = 2**63 - 1  # the largest size of one dimension of an array (MLX's are int32)
    lazy: bool = False  # whether arrays are computed only when evaluated (MLX): see eval
    # lucid's dtypes as the library's, and back (a backend sets the first; the base derives the second)
    to_native: dict = {}
    from_native: dict = {}
    # the backend of any native array, lucid._backend.of_array (to read another backend's
    # array): set by the package, which loads the backends, as importing it back would be a cycle
    of_array: Callable[[Any], Backend]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "to_native" in cls.__dict__:
            cls.from_native = {native: dtype for dtype, native in cls.to_native.items()}

    # --- arrays and dtypes -------------------------------------------------------------
    def owns(self, array) -> bool:
        """Whether ``array`` is this backend's native array type."""
        raise NotImplementedError

    def native_dtype(self, dtype: _dtype.dtype):
        """The library's dtype for the lucid ``dtype``."""
        return self.to_native[dtype]

    def dtype_of(self, array) -> _dtype.dtype:
        """The lucid dtype of the native ``array``; TypeError for a dtype lucid does not have."""
        try:
            return self.from_native[array.dtype]
        except KeyError:
            raise TypeError(f"lucid has no dtype for {self.library}'s {array.dtype}") from None

    def asarray(self, data, dtype: _dtype.dtype):
        """A native array of ``dtype`` holding ``data`` (host data or another backend's array)."""
        raise NotImplementedError

    def to_numpy(self, array) -> np.ndarray:
        """A NumPy copy of ``array``."""
        raise NotImplementedError

    def copy(self, array):
        """An array that no later in-place write through ``array`` can change."""
        raise NotImplementedError

    def native(self, value):
        """``value`` (a native array, a NumPy scalar or a Python number) as a native array, uncopied."""
        return value if self.owns(value) and hasattr(value, "shape") else self._xp.asarray(value)

    def as_numpy(self, array) -> np.ndarray:
        """``array`` as a NumPy array, sharing its memory where the backend's arrays are NumPy's."""
        return self.to_numpy(array)

    def astype(self, array, dtype: _dtype.dtype):
        return array.astype(self.native_dtype(dtype))

    def shape(self, array) -> tuple:
        return tuple(array.shape)

    def item(self, array):
        return array.item()

    def eval(self, arrays) -> None:
        """Force the computation of lazily evaluated ``arrays`` (a no-op for eager backends)."""

    # --- precision -----------------------------------------------------------------------
    # The dtypes whose formulas this backend evaluates in a wider one (see precisely).
    working_dtypes: dict = {}

    def working_dtype(self, dtype: _dtype.dtype) -> _dtype.dtype:
        """The dtype in which this backend evaluates a formula over arrays of ``dtype``: a wider
        one where the library has it at little cost (float64 on NumPy), so that a formula of
        several operations rounds once instead of at each operation."""
        return self.working_dtypes.get(dtype, dtype)

    def precisely(self, formula, *arrays):
        """``formula(self, *arrays)`` evaluated at the working precision of the first array's
        dtype (:meth:`working_dtype`), and rounded once to that dtype.

        ``formula`` is an elementwise expression (reductions included) over this backend's
        methods; arrays of other dtypes (integer indices, masks) are passed as they are.
        """
        dtype = self.dtype_of(arrays[0])
        work = self.working_dtype(dtype)
        if work is dtype:
            return formula(self, *arrays)
        wide = [self.astype(a, work) if self.dtype_of(a) is dtype else a for a in arrays]
        return self.astype(formula(self, *wide), dtype)

    # --- creation ------------------------------------------------------------------------
    def zeros(self, shape, dtype):
        return self._xp.zeros(tuple(shape), dtype=self.native_dtype(dtype))

    def ones(self, shape, dtype):
        return self._xp.ones(tuple(shape), dtype=self.native_dtype(dtype))

    def full(self, shape, value, dtype):
        return self._xp.full(tuple(shape), value, dtype=self.native_dtype(dtype))

    def zeros_like(self, a):
        """Zeros of ``a``'s shape and dtype."""
        return self._xp.zeros_like(a)

    def ones_like(self, a):
        """Ones of ``a``'s shape and dtype."""
        return self._xp.ones_like(a)

    def arange(self, start, stop, step, dtype):
        # torch's values on every device: start + i * step in float64 (or int64), then cast
        # (np.arange steps by (start + step) - start, which is not step in floating point)
        count = max(math.ceil((stop - start) / step), 0)
        exact = all(isinstance(v, numbers.Integral) for v in (start, stop, step))
        host = start + step * np.arange(count, dtype=np.int64 if exact else np.float64)
        return self.asarray(host, dtype)

    def linspace(self, start, end, steps, dtype):
        # torch's kernel: from both ends towards the middle, so the last value is exactly end
        if steps == 1:
            return self.asarray(np.array([start]), dtype)
        step = (end - start) / (steps - 1) if steps > 1 else 0.0
        i = np.arange(steps, dtype=np.float64)
        host = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
        return self.asarray(host, dtype)

    def eye(self, n, m, dtype):
        return self.asarray(np.eye(n, m), dtype)

    # --- elementwise ---------------------------------------------------------------------
    def add(self, a, b):
        return self._xp.add(a, b)

    def subtract(self, a, b):
        return self._xp.subtract(a, b)

    def multiply(self, a, b):
        return self._xp.multiply(a, b)

    def divide(self, a, b):
        return self._xp.divide(a, b)

    def power(self, a, b):
        return self._xp.power(a, b)

    def negative(self, a):
        return self._xp.negative(a)

    def exp(self, a):
        return self._xp.exp(a)

    def log(self, a):
        return self._xp.log(a)

    def sqrt(self, a):
        return self._xp.sqrt(a)

    def log1p(self, a):
        return self._xp.log1p(a)

    def expm1(self, a):
        return self._xp.expm1(a)

    def abs(self, a):
        return self._xp.abs(a)

    def sign(self, a):
        return self._xp.sign(a)

    def tanh(self, a):
        return self._xp.tanh(a)

    def sin(self, a):
        return self._xp.sin(a)

    def erf(self, a):
        return self._xp.erf(a)

    # issue 24, the names real scripts use
    def tan(self, a):
        return self._xp.tan(a)

    def arcsin(self, a):
        return self._xp.arcsin(a)

    def arccos(self, a):
        return self._xp.arccos(a)

    def arctan(self, a):
        return self._xp.arctan(a)

    def log10(self, a):
        return self._xp.log10(a)

    def log2(self, a):
        return self._xp.log2(a)

    def prod(self, a, axis, keepdims=False):
        return self._xp.prod(a, axis=axis, keepdims=keepdims)

    def cumprod_exclusive(self, a, axis, reverse=False):
        """Running products along ``axis`` of the elements before each (from the end when
        ``reverse``): 1 first, then ``a[0]``, ``a[0] a[1]``, ..."""
        if reverse:
            return self.flip(self.cumprod_exclusive(self.flip(a, axis), axis), axis)
        index = [slice(None)] * len(self.shape(a))
        index[axis] = slice(None, -1)
        ones = list(self.shape(a))
        ones[axis] = 1
        head = self.ones(ones, self.dtype_of(a))
        return self.concatenate([head, self._xp.cumprod(a[tuple(index)], axis=axis)], axis)

    def unique(self, a, return_inverse=False, return_counts=False):
        """The sorted distinct values of ``a`` (flattened), and where requested the index of
        each element's value among them (in ``a``'s shape) and how often each occurs, int64."""
        host = self.to_numpy(a)
        values, inverse, counts = np.unique(host.reshape(-1), return_inverse=True, return_counts=True)
        dtype = self.dtype_of(a)
        out = [self.asarray(values, dtype)]
        if return_inverse:
            out.append(self.asarray(inverse.reshape(host.shape), _dtype.int64))
        if return_counts:
            out.append(self.asarray(counts, _dtype.int64))
        return out

    def erfc(self, a):
        """``1 - erf(a)``, without the cancellation of that difference where ``a`` is large."""
        raise NotImplementedError

    def ndtr(self, a):
        """The standard normal distribution function ``Phi(a) = erfc(-a / sqrt(2)) / 2``."""
        return self.multiply(0.5, self.erfc(self.multiply(-_SQRT1_2, a)))

    def gelu_parts(self, a):
        """GELU at ``a``: its value ``a Phi(a)`` rounded to ``a``'s dtype, and its derivative
        ``Phi(a) + a phi(a)`` left at the working precision (:meth:`working_dtype`), where the
        backward multiplies it by the gradient and rounds once."""
        dtype = self.dtype_of(a)
        work = self.working_dtype(dtype)
        x = a if work is dtype else self.astype(a, work)
        phi = self.ndtr(x)
        slope = self.add(phi, self.multiply(x, self.multiply(_INV_SQRT_2PI, self.exp_neg_square(x, 0.5))))
        value = self.multiply(x, phi)
        return (value if work is dtype else self.astype(value, dtype)), slope

    def exp_neg_square(self, a, scale=1.0):
        """``exp(-scale * a**2)`` (``scale`` 1 or 1/2): where the format has no digits to
        spare, a backend keeps the rounding of ``a**2`` (times ``scale a**2``) out of it."""
        return self.exp(self.multiply(-scale, self.multiply(a, a)))

    def floor(self, a):
        return self._xp.floor(a)

    def ceil(self, a):
        return self._xp.ceil(a)

    def round(self, a):
        """To the nearest integer, halves to even (as torch)."""
        return self._xp.round(a)

    def remainder(self, a, b):
        """``a - floor(a / b) * b``: the sign of ``b``, as Python's ``%`` and torch's."""
        return self._xp.remainder(a, b)

    def floor_divide(self, a, b):
        """``floor(a / b)``, as Python's ``//`` and torch's."""
        return self._xp.floor_divide(a, b)

    def cos(self, a):
        return self._xp.cos(a)

    def sigmoid(self, a):
        # exp of a non-positive number only, so large |a| neither overflows nor loses the tail
        e = self.exp(self.negative(self.abs(a)))
        return self.where(a >= 0, 1 / (1 + e), e / (1 + e))

    def maximum(self, a, b):
        return self._xp.maximum(a, b)

    def minimum(self, a, b):
        return self._xp.minimum(a, b)

    def clip(self, a, low, high):
        return self._xp.clip(a, low, high)

    def where(self, condition, a, b):
        return self._xp.where(condition, a, b)

    def keep_where(self, condition, a):
        """``a`` where ``condition`` holds, ``+0`` elsewhere (``a``'s shape; ``condition`` broadcasts
        to it): the backward of a mask, of relu, of dropout."""
        return self.where(condition, a, self.zeros_like(a))

    def compare(self, op: str, a, b):
        """``op`` is one of equal, not_equal, less, less_equal, greater, greater_equal."""
        _check_name(op, _COMPARE, "comparison")
        return getattr(self._xp, op)(a, b)

    def logical(self, op: str, a, b):
        """``op`` is one of logical_and, logical_or, logical_xor; the result is a bool array."""
        _check_name(op, _LOGICAL, "logical operation")
        return getattr(self._xp, op)(a, b)

    def logical_not(self, a):
        return self._xp.logical_not(a)

    def bitwise(self, op: str, a, b):
        """``op`` is one of bitwise_and, bitwise_or, bitwise_xor, on integer or bool arrays."""
        _check_name(op, _BITWISE, "bitwise operation")
        return getattr(self._xp, op)(a, b)

    def bitwise_not(self, a):
        """Each bit inverted, as ``a ^ -1`` (a bool array: its logical not)."""
        return self._xp.logical_not(a) if self.dtype_of(a) is _dtype.bool_ else self._xp.bitwise_xor(a, -1)

    def isfinite(self, a):
        return self._xp.isfinite(a)

    # --- reductions ----------------------------------------------------------------------
    def sum(self, a, axis=None, keepdims=False):
        return self._xp.sum(a, axis=axis, keepdims=keepdims)

    def mean(self, a, axis=None, keepdims=False):
        return self._xp.mean(a, axis=axis, keepdims=keepdims)

    def max(self, a, axis=None, keepdims=False):
        return self._xp.max(a, axis=axis, keepdims=keepdims)

    def min(self, a, axis=None, keepdims=False):
        return self._xp.min(a, axis=axis, keepdims=keepdims)

    def any(self, a, axis=None, keepdims=False):
        return self._xp.any(a, axis=axis, keepdims=keepdims)

    def all(self, a, axis=None, keepdims=False):
        return self._xp.all(a, axis=axis, keepdims=keepdims)

    def argmax(self, a, axis, keepdims=False):
        return self._xp.argmax(a, axis=axis, keepdims=keepdims)

    def argmin(self, a, axis, keepdims=False):
        return self._xp.argmin(a, axis=axis, keepdims=keepdims)

    def cumsum(self, a, axis, reverse=False):
        """Running sums along ``axis``; from the end when ``reverse``."""
        if reverse:
            return self.flip(self._xp.cumsum(self.flip(a, axis), axis=axis), axis)
        return self._xp.cumsum(a, axis=axis)

    def argsort(self, a, axis, descending=False):
        """The indices that sort ``a`` along ``axis``, stably (ties keep their order), as int64.

        Descending sorts the reversed array ascending and reverses back, which keeps ties
        in order and puts nan first (torch's order: nan is the largest value) on any dtype.
        """
        if not descending:
            return self.astype(self._argsort(a, axis), _dtype.int64)
        n = self.shape(a)[axis]
        order = self.flip(self._argsort(self.flip(a, axis), axis), axis)
        return self.astype(self.subtract(n - 1, order), _dtype.int64)

    def _argsort(self, a, axis):
        """A stable ascending argsort: what a backend implements."""
        raise NotImplementedError

    def flip(self, a, axis):
        index = [slice(None)] * len(self.shape(a))
        index[axis] = slice(None, None, -1)
        return a[tuple(index)]

    # --- the softmax family ------------------------------------------------------------------
    # Written as (a - m) - log1p(r): m the largest element along the axis, r the sum of
    # exp(a - m) over every element but one largest. The two terms have one sign, so nothing
    # cancels where the largest element dominates, where a - log(sum(exp(a))) loses every
    # digit; and a - m carries its own rounding error (Knuth's TwoSum) into the exponentials.
    def _softmax_parts(self, a, axis) -> "_SoftmaxParts":
        raw = self.max(a, axis=axis, keepdims=True)
        finite = self.isfinite(raw)
        peak = self.where(finite, raw, self.zeros_like(raw))
        d = self.subtract(a, peak)
        z = self.subtract(d, a)
        err = self.add(self.subtract(a, self.subtract(d, z)), self.subtract(self.negative(peak), z))
        err = self.where(self.isfinite(d), err, self.zeros_like(err))
        e = self.multiply(self.exp(d), self.add(err, 1))  # exp(d + err), to first order in err
        ndim = len(self.shape(a))
        positions = self.reshape(self.arange(0, self.shape(a)[axis], 1, _dtype.int64),
                                 [-1 if i == axis % ndim else 1 for i in range(ndim)])
        largest = self.compare("equal", positions, self.argmax(a, axis, keepdims=True))
        first = self.sum(self.where(largest, e, self.zeros_like(e)), axis=axis, keepdims=True)
        rest = self.sum(self.where(largest, self.zeros_like(e), e), axis=axis, keepdims=True)
        # with a finite m the largest term is exp(0) = 1 exactly; else (a row of -inf, or an
        # inf) the plain sum is right, and gives torch's nan and inf
        total = self.where(finite, self.add(rest, 1), self.add(first, rest))
        shift = self.where(finite, self.log1p(rest), self.log(total))
        return _SoftmaxParts(d, err, e, peak, shift, total)

    def log_softmax(self, a, axis):
        """``a - logsumexp(a)`` along ``axis``, with no cancellation (see above)."""
        return self.log_softmax_and_softmax(a, axis)[0]

    def softmax(self, a, axis):
        """``exp(a) / sum(exp(a))`` along ``axis``, from ``exp(a - m)``."""
        return self.log_softmax_and_softmax(a, axis)[1]

    def log_softmax_and_softmax(self, a, axis):
        """Both, from one pass over ``a``: the softmax is not the exp of the log-softmax,
        whose rounding (relative, of a number up to 100 and more) exp would magnify."""
        parts = self._softmax_parts(a, axis)
        log_softmax = self.subtract(parts.shifted, self.subtract(parts.log_total, parts.error))
        return log_softmax, self.divide(parts.exp_shifted, parts.total)

    def logsumexp(self, a, axis, keepdims=False):
        """``log(sum(exp(a)))`` over ``axis`` (an int or a tuple), as ``m + log1p(r)``."""
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        if len(axes) > 1:  # over the trailing dimension of the axes moved to the end, flattened
            ndim = len(self.shape(a))
            axes = tuple(x % ndim for x in axes)
            kept = [i for i in range(ndim) if i not in axes]
            moved = self.transpose(a, kept + list(axes))
            flat = self.reshape(moved, [self.shape(a)[i] for i in kept] + [-1])
            out = self.logsumexp(flat, -1, keepdims=False)
            if keepdims:
                out = self.reshape(out, [1 if i in axes else n for i, n in enumerate(self.shape(a))])
            return out
        parts = self._softmax_parts(a, axes[0])
        out = self.add(parts.peak, parts.log_total)
        return out if keepdims else self._xp.squeeze(out, axis=axes[0])

    # --- shape ---------------------------------------------------------------------------
    def reshape(self, a, shape):
        return self._xp.reshape(a, tuple(shape))

    def transpose(self, a, axes):
        return self._xp.transpose(a, axes)

    def expand_dims(self, a, axis):
        return self._xp.expand_dims(a, axis)

    def squeeze(self, a, axis):
        return self._xp.squeeze(a, axis)

    def swapaxes(self, a, axis1, axis2):
        return self._xp.swapaxes(a, axis1, axis2)

    def broadcast_to(self, a, shape):
        return self._xp.broadcast_to(a, tuple(shape))

    def concatenate(self, arrays, axis):
        return self._xp.concatenate(list(arrays), axis=axis)

    def stack(self, arrays, axis):
        return self._xp.stack(list(arrays), axis=axis)

    def matmul(self, a, b):
        return self._xp.matmul(a, b)

    def eigh(self, a):
        """``(eigenvalues, eigenvectors)`` of the symmetric matrices ``a`` (its lower triangle
        read), eigenvalues ascending, eigenvectors as columns: LAPACK's ``syevd``. Each
        eigenvector is unique only up to its sign (and, for a repeated eigenvalue, up to a
        rotation within its eigenspace): which one comes back is the LAPACK build's choice."""
        return tuple(self._xp.linalg.eigh(a))

    def qr(self, a):
        """``(Q, R)`` of the reduced QR decomposition of the matrices ``a`` (Householder, LAPACK's
        ``geqrf``): ``Q`` with orthonormal columns, ``R`` upper triangular."""
        return tuple(self._xp.linalg.qr(a))

    def einsum(self, subscripts, *operands):
        """``subscripts`` in explicit form (``"ij,jk->ik"``), letters only, no ellipsis."""
        return self._xp.einsum(subscripts, *operands)

    def triangle(self, a, diagonal, lower):
        """``a`` with the elements above (``lower``) or below the ``diagonal``-th diagonal of
        its last two dimensions set to zero: ``tril``/``triu``, the same on every backend."""
        rows, cols = self.shape(a)[-2:]
        offset = self.subtract(self.reshape(self.arange(0, cols, 1, _dtype.int64), (1, cols)),
                               self.reshape(self.arange(0, rows, 1, _dtype.int64), (rows, 1)))
        keep = self.compare("less_equal" if lower else "greater_equal", offset, diagonal)
        return self.where(keep, a, self.zeros_like(a))

    # --- sliding windows: padding, convolution, pooling ------------------------------------
    # An array of shape (N, C, *spatial) with d spatial dimensions; a kernel, a stride and a
    # dilation of d ints each. A convolution is a matrix product with its input's windows laid
    # out as columns (im2col), (N, groups, C / groups * K, L): K the kernel's elements, L the
    # windows, so that every product writes its result contiguous, in the layout the next
    # one reads. Its gradients are the two other products, the input's summed back over the
    # windows (col2im).
    def pad(self, a, widths, value=0.0):
        """``a`` with ``widths[i] = (before, after)`` elements of ``value`` added around
        dimension ``i`` (of the leading ones); a negative width removes that many instead."""
        shape = self.shape(a)
        if any(lo < 0 or hi < 0 for lo, hi in widths):
            a = a[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, shape))]
        grow = [(max(lo, 0), max(hi, 0)) for lo, hi in widths] + [(0, 0)] * (len(shape) - len(widths))
        if not any(lo or hi for lo, hi in grow):
            return a
        return self._xp.pad(a, grow, constant_values=value)

    def windows(self, a, kernel, stride, dilation):
        """The sliding windows of ``a`` over its trailing ``len(kernel)`` dimensions, shape
        ``(N, C, *kernel, *out)`` with ``out[i] = (size[i] - dilation[i] * (kernel[i] - 1) - 1)
        // stride[i] + 1``: element ``[n, c, *k, *o]`` is ``a[n, c, *(o * stride + k * dilation)]``."""
        shape = self.shape(a)
        out = window_counts(shape[2:], kernel, stride, dilation)
        parts = [a[(slice(None), slice(None)) + _window_slices(offset, out, stride, dilation)]
                 for offset in itertools.product(*(range(k) for k in kernel))]
        return self.reshape(self.stack(parts, axis=2), tuple(shape[:2]) + tuple(kernel) + tuple(out))

    def unwindow(self, cols, size, stride, dilation):
        """The adjoint of :meth:`windows`: ``cols`` of shape ``(N, C, *kernel, *out)`` summed
        back into an array of shape ``(N, C, *size)``, each window onto the elements it read."""
        shape = self.shape(cols)
        d = len(size)
        kernel, out = tuple(shape[2:2 + d]), tuple(shape[2 + d:])
        if tuple(stride) == kernel and all(v == 1 for v in dilation):  # the windows tile: a transpose
            order = (0, 1) + tuple(i for k in range(d) for i in (2 + d + k, 2 + k))
            tiled = self.reshape(self.transpose(cols, order),
                                 tuple(shape[:2]) + tuple(o * k for o, k in zip(out, kernel)))
            return self.pad(tiled, [(0, 0), (0, 0)] + [(0, n - o * k) for n, o, k in zip(size, out, kernel)])
        total = self.zeros(tuple(shape[:2]) + tuple(size), self.dtype_of(cols))
        for offset in itertools.product(*(range(k) for k in kernel)):
            where = (slice(None), slice(None)) + _window_slices(offset, out, stride, dilation)
            total = self._add_into(total, where, cols[(slice(None), slice(None)) + offset])
        return total

    def _add_into(self, a, index, values):
        """``a`` with ``values`` added to ``a[index]`` (basic indexing: no element twice)."""
        return self.setitem(a, index, self.add(self.getitem(a, index), values))

    def conv_columns(self, x, kernel, stride, dilation, groups):
        """The windows of ``x`` as columns: (N, groups, C / groups * K, L), and their count ``out``."""
        cols = self.windows(x, tuple(kernel), stride, dilation)
        n, c = self.shape(cols)[:2]
        out = tuple(self.shape(cols)[2 + len(kernel):])
        return self.reshape(cols, (n, groups, -1, math.prod(out))), out

    def conv(self, x, w, stride, dilation, groups):
        """The cross-correlation of ``x`` (N, C, *size), unpadded, with ``w`` (O, C / groups, *kernel):
        ``(y, saved)``, ``y`` of shape (N, O, *out) as torch's convolution without padding or
        bias, and what :meth:`conv_weight_grad` may take instead of ``x`` (the columns)."""
        kernel, o = tuple(self.shape(w)[2:]), self.shape(w)[0]
        cols, out = self.conv_columns(x, kernel, stride, dilation, groups)
        y = self.matmul(self.reshape(w, (groups, o // groups, -1)), cols)  # (N, G, Og, L)
        return self.reshape(y, (self.shape(x)[0], o) + out), cols

    def conv_input_grad(self, g, w, size, stride, dilation, groups):
        """The gradient of :meth:`conv` with respect to its input of spatial ``size``, given
        the output's ``g``: torch's transposed convolution."""
        kernel, o = tuple(self.shape(w)[2:]), self.shape(w)[0]
        n, out = self.shape(g)[0], tuple(self.shape(g)[2:])
        grads = self.reshape(g, (n, groups, o // groups, -1))
        cols = self.matmul(self.swapaxes(self.reshape(w, (groups, o // groups, -1)), 1, 2), grads)
        cols = self.reshape(cols, (n, groups * self.shape(w)[1]) + kernel + out)
        return self.unwindow(cols, tuple(size), stride, dilation)

    def conv_weight_grad(self, x, g, kernel, stride, dilation, groups, saved=None):
        """The gradient of :meth:`conv` with respect to its weight (of spatial ``kernel``),
        given the input ``x`` (or the columns :meth:`conv` ``saved``) and the output's ``g``."""
        n, o = self.shape(g)[:2]
        cols = saved if saved is not None else self.conv_columns(x, kernel, stride, dilation, groups)[0]
        grads = self.reshape(g, (n, groups, o // groups, -1))
        per_sample = self.matmul(grads, self.swapaxes(cols, 2, 3))  # (N, G, Og, Cg * K)
        return self.reshape(self.sum(per_sample, axis=0), (o, -1) + tuple(kernel))

    def max_windows(self, a, kernel, stride, dilation):
        """The largest element of each window of ``a`` (see :meth:`windows`) and its position
        in the window (row-major over the kernel, int64): the first largest, or where a nan
        is, the last nan (nan propagates), as torch's kernel finds them."""
        cols = self.windows(a, kernel, stride, dilation)
        pieces = [cols[(slice(None), slice(None)) + offset]
                  for offset in itertools.product(*(range(k) for k in kernel))]
        peak = pieces[0]
        for piece in pieces[1:]:
            peak = self.maximum(peak, piece)  # nan wins
        position = self.full(self.shape(peak), len(pieces) - 1, _dtype.int64)
        for k in reversed(range(len(pieces) - 1)):  # the first position that holds the peak
            position = self.where(self.compare("equal", pieces[k], peak), k, position)
        if bool(self.any(self.compare("not_equal", peak, peak))):
            for k, piece in enumerate(pieces):  # the last nan
                position = self.where(self.compare("not_equal", piece, piece), k, position)
        return peak, position

    def unmax_windows(self, g, position, kernel, size, stride, dilation):
        """The adjoint of :meth:`max_windows`: ``g`` (N, C, *out) added at each window's
        largest element, in an array of shape (N, C, *size)."""
        zero = self.zeros((), self.dtype_of(g))
        pieces = [self.where(self.compare("equal", position, k), g, zero) for k in range(math.prod(kernel))]
        shape = self.shape(g)
        cols = self.reshape(self.stack(pieces, axis=2), tuple(shape[:2]) + tuple(kernel) + tuple(shape[2:]))
        return self.unwindow(cols, size, stride, dilation)

    # --- indexing ------------------------------------------------------------------------
    def normalize_index(self, index):
        """``index`` (a tuple of ints, slices, None, Ellipsis and native arrays) as this backend indexes."""
        return index

    def getitem(self, a, index):
        return a[index]

    def scatter_add(self, shape, dtype, index, values):
        """A zero array of ``shape`` with ``values`` added at ``index``; duplicates accumulate."""
        raise NotImplementedError

    def setitem(self, a, index, values):
        """``a`` with ``a[index] = values``: written in place where the backend can, else a new array."""
        raise NotImplementedError

    def along_axis(self, index, axis):
        """The full index that names, for each element of ``index``, the element of an array
        at that position with its coordinate along ``axis`` replaced by the element's value:
        ``index`` there, an open grid elsewhere. :meth:`getitem` with it is torch's
        ``gather``, :meth:`scatter_add` and :meth:`setitem` with it are ``scatter_add`` and
        ``scatter`` (an index smaller than the array names its leading part, as in torch)."""
        shape = self.shape(index)
        parts = []
        for d, n in enumerate(shape):
            if d == axis:
                parts.append(index)
            else:
                grid = [1] * len(shape)
                grid[d] = n
                parts.append(self.reshape(self.arange(0, n, 1, _dtype.int64), grid))
        return tuple(parts)


    # --- row-sparse gradients -------------------------------------------------------------
    def coalesce_rows(self, indices, values):
        """Sum the rows of ``values`` that share an index: ``(rows, sums)``, ``rows`` ascending.

        ``indices`` is a 1-D int64 array, ``values`` has one row (a slice along dim 0) per
        index. A sort and a segment sum, no loop per index. The order in which duplicates
        are added is the backend's (NumPy's ``reduceat`` sums long segments pairwise);
        torch adds them one by one in the order of its unstable sort, so sums of three or
        more rows may differ from torch's in the last bits.
        """
        raise NotImplementedError

    def index_add_rows(self, a, rows, values, unique: bool = False):
        """``a`` with ``values[k]`` added to row ``rows[k]`` for every k, one after the other
        (duplicates accumulate, in order); written in place where the backend can.
        ``unique`` promises no duplicate rows (a faster path)."""
        raise NotImplementedError

    def nonzero_rows(self, a) -> np.ndarray:
        """The indices of the rows (slices along dim 0) of ``a`` holding a nonzero value, as int64."""
        n = self.shape(a)[0]
        if 0 in tuple(self.shape(a)):  # no values at all (MLX cannot reshape an empty array to (n, -1))
            return np.zeros(0, dtype=np.int64)
        mask = self.any(self.compare("not_equal", self.reshape(a, (n, -1)), 0), axis=1)
        return self.nonzero(mask)

    def argwhere(self, a):
        """The indices of the nonzero elements of ``a``, one row of ``ndim`` per element, as int64."""
        return self.asarray(np.argwhere(self.to_numpy(a)).astype(np.int64), _dtype.int64)

    def nonzero(self, a) -> np.ndarray:
        """The indices of the nonzero elements of the 1-D ``a``, as int64 (a host sync on lazy backends)."""
        return np.flatnonzero(self.to_numpy(a)).astype(np.int64)

    # --- in place ------------------------------------------------------------------------
    def assign(self, a, value):
        """``a`` holding ``value`` (an array or a number, broadcast and cast to ``a``'s dtype).

        Written into ``a``'s buffer where the backend can, so every holder of it sees the
        new values; the caller must rebind to the return value (as with :meth:`inplace`).
        """
        raise NotImplementedError

    def inplace(self, name: str, a, *args):
        """``a = _xp.<name>(a, *args)``, written into ``a``'s buffer where the backend can.

        ``name`` is one of add, multiply, divide, negative, sqrt, abs, sign, maximum, minimum.
        The caller must own ``a`` and rebind to the return value: NumPy writes in place and
        returns ``a``; MLX arrays are values, so it returns a new array.
        """
        _check_name(name, _INPLACE, "in-place operation")
        return self._inplace(name, a, *args)

    def _inplace(self, name: str, a, *args):
        """:meth:`inplace` once ``name`` is checked: what a backend implements."""
        raise NotImplementedError

    def is_exclusive(self, array) -> bool:
        """Whether ``array`` owns its memory, so it may be kept without a copy."""
        return True

    # --- elementwise update rules (see rules.py) -------------------------------------------
    def run_rule(self, rule, items) -> list:
        """Run the elementwise ``rule`` (a :class:`~lucid._backend.rules.Rule`) once per item.

        Each item is ``(arrays, grad, scalars)``: ``arrays`` the parameter and its state
        arrays in the rule's order, then the rule's scalars (Python numbers and bools).
        Returns, per item, the new arrays in the same order; a backend that writes in place
        returns the arrays it was given, and the caller rebinds to what it gets. A rule with
        ``sums`` also returns, after the arrays, each sum over the item's elements as a float.
        """
        raise NotImplementedError

    def rule_batch(self, rule, arrays):
        """A runner of ``rule`` over the same items step after step (by default
        :meth:`run_rule` on each step; a backend may have one faster).

        ``arrays`` holds the items' arrays flat (per item the parameter, then its state
        arrays in the rule's order), of one dtype. The runner's ``run(arrays, grads,
        scalars)`` takes the current arrays so, one gradient per item, and ``scalars``, one tuple for
        every item or a list of one per item; it returns the new arrays in that order (the
        same arrays where the backend writes in place). The caller checks the gradients.
        A rule with ``sums`` has none: it runs through :meth:`run_rule`.
        """
        if rule.sums:
            raise NotImplementedError(f"rule {rule.name} has sums: run it with run_rule")
        return _EachStep(self, rule)

    @property
    def rule_runner(self) -> str:
        """How this backend runs update rules here (for benchmarks and messages)."""
        return "array expressions"


class _EachStep:
    """The general runner of :meth:`Backend.rule_batch`: :meth:`Backend.run_rule` each step."""

    __slots__ = ("_backend", "_rule", "_width")

    def __init__(self, backend: Backend, rule) -> None:
        self._backend, self._rule, self._width = backend, rule, 1 + len(rule.state)

    def run(self, arrays, grads, scalars) -> list:
        width, shared = self._width, isinstance(scalars, tuple)
        items = [(arrays[j * width:(j + 1) * width], grad, scalars if shared else scalars[j])
                 for j, grad in enumerate(grads)]
        return [array for out in self._backend.run_rule(self._rule, items) for array in out]
