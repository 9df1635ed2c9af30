"""Host-side data: what lucid needs NumPy for outside any device's arrays.

Python data (numbers, nested lists) is read on the host before it becomes a device array,
and a few optimizers (L-BFGS, a "tensor lr") compute with scalars that must round as a lucid
dtype does, as torch's 0-d tensors do. These helpers are the only place outside the backends that knows that the
host is NumPy.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype

ndarray = np.ndarray  # the host array type, for annotations outside the seam (Tensor.numpy())

_BY_KIND = {"b": _dtype.bool_, "i": _dtype.default_int, "u": _dtype.default_int, "f": _dtype.default_float}


def infer_dtype(data) -> _dtype.dtype:
    """torch's dtype for Python data: bools give ``bool``, integers ``int64``, floats ``float32``.

    >>> infer_dtype([[1, 2], [3, 4.5]])
    lucid.float32
    """
    kind = np.asarray(data).dtype.kind
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise TypeError(f"cannot make a tensor from {type(data).__name__} data of kind {kind!r}") from None


def index_array(part):
    """``(host array, dtype)`` of an index given as a list or a host array: int64 or bool.

    Raises torch's IndexError for a non-empty index of any other kind (floats).
    """
    host = np.asarray(part)
    if host.dtype.kind not in "biu" and host.size:
        raise IndexError("tensors used as indices must be long, int or bool tensors")
    if host.dtype.kind == "b":
        return host.astype(bool), _dtype.bool_
    return host.astype(np.int64), _dtype.int64


def is_array(value) -> bool:
    """Whether ``value`` is a host array (of any number of dimensions)."""
    return isinstance(value, np.ndarray)


def is_scalar(value) -> bool:
    """Whether ``value`` is a host floating-point scalar or a host array (see :func:`scalar`)."""
    return isinstance(value, (np.floating, np.ndarray))


def scalar(value, dtype: _dtype.dtype):
    """``value`` as a host scalar of ``dtype``: arithmetic with it and with Python numbers rounds
    to ``dtype``, as torch's arithmetic on a 0-d tensor of that dtype does.

    >>> float(scalar(0.1, _dtype.float32))
    0.10000000149011612
    """
    return np.dtype(dtype.name).type(value)


def sqrt(value):
    """The square root of a number; of a host scalar (see :func:`scalar`) in its dtype."""
    return np.sqrt(value)


def is_host_scalar(value) -> bool:
    """Whether ``value`` is a NumPy scalar (``np.float32(1)``, ``np.int64(2)``...)."""
    return isinstance(value, np.generic)


def as_array(values):
    """Host scalars (or arrays) as one host array, keeping their dtype."""
    return np.asarray(values)
