"""Indexing: ints, slices, None, Ellipsis, integer tensors or lists, boolean masks.

The backward of an index is a scatter-add into zeros, so an index that names an element
twice gives it both gradients (``x[[0, 0, 2]].sum()`` gives ``x.grad == [2, 0, 1]``).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from .. import _dtype
from .._autograd import record
from .._backend import host
from .._tensor import Tensor


def _index_array(tensor, part):
    """An index part given as a Tensor, list or array, as a native array of ``tensor``'s device."""
    if isinstance(part, Tensor):
        dtype = part.dtype
        array = part._data if part.device == tensor.device else tensor._backend.asarray(
            part._backend.to_numpy(part._data), dtype)
    else:
        values, dtype = host.index_array(part)
        array = tensor._backend.asarray(values, dtype)
    if dtype.is_floating_point:
        raise IndexError("tensors used as indices must be long, int or bool tensors")
    return array, dtype


def _is_integer(part) -> bool:
    return isinstance(part, numbers.Integral) and not isinstance(part, bool)


def _is_basic(part) -> bool:
    return part is None or part is Ellipsis or isinstance(part, slice) or _is_integer(part)


def split_integers(index):
    """``(basic, advanced)`` when ``index`` mixes integers with tensor indices, else None.

    torch applies integers first, as basic indexing: ``x[0, :, [2, 1]]`` is ``x[0][:, [2, 1]]``
    (shape ``(n, 2)``). NumPy (and MLX) count an integer next to an array as one more array
    index, which moves the indexed dimensions to the front (``(2, n)``). Indexing with
    ``basic`` then ``advanced`` gives torch's result on every backend.
    """
    parts = index if isinstance(index, tuple) else (index,)
    if not any(_is_integer(p) for p in parts) or all(_is_basic(p) for p in parts):
        return None
    basic, advanced = [], []
    for part in parts:
        if _is_basic(part):
            basic.append(part)
            if not _is_integer(part):  # integers are gone after the first step
                advanced.append(Ellipsis if part is Ellipsis else slice(None))
        else:
            if isinstance(part, Tensor):
                mask, ndim = part.dtype is _dtype.bool_, part.ndim
            else:
                values, dtype = host.index_array(part)
                mask, ndim = dtype is _dtype.bool_, values.ndim
            ndim = ndim if mask else 1
            basic.extend([slice(None)] * ndim)  # a mask spans as many dimensions as it has
            advanced.append(part)
    return tuple(basic), tuple(advanced)


def normalize_index(tensor, index):
    """``index`` as a tuple the backend can use, every integer checked against its dimension."""
    if not isinstance(index, tuple):
        index = (index,)
    backend = tensor._backend
    # arrays first, so a boolean mask counts for as many dimensions as it has
    parts = [
        part if part is None or part is Ellipsis or isinstance(part, slice)
        or (isinstance(part, numbers.Integral) and not isinstance(part, bool))
        else _index_array(tensor, part)
        for part in index
    ]
    consumed = sum(
        0 if part is None or part is Ellipsis else
        len(backend.shape(part[0])) if isinstance(part, tuple) and part[1] is _dtype.bool_ else 1
        for part in parts
    )
    if consumed > tensor.ndim:
        raise IndexError(f"too many indices for tensor of dimension {tensor.ndim}")
    if sum(part is Ellipsis for part in parts) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    shape, dim, out = tensor.shape, 0, []
    for part in parts:
        if part is None:
            out.append(None)
        elif part is Ellipsis:
            # spelled out: an Ellipsis over no dimensions must not separate two array indices
            # (NumPy would then move their dimensions to the front; torch does not)
            out.extend([slice(None)] * (tensor.ndim - consumed))
            dim += tensor.ndim - consumed
        elif isinstance(part, slice):
            out.append(part)
            dim += 1
        elif not isinstance(part, tuple):
            size = shape[dim]
            if not -size <= part < size:
                raise IndexError(f"index {part} is out of bounds for dimension {dim} with size {size}")
            out.append(int(part))
            dim += 1
        else:
            array, dtype = part
            array_shape = backend.shape(array)
            if dtype is _dtype.bool_:
                if array_shape != shape[dim:dim + len(array_shape)]:
                    raise IndexError(
                        f"The shape of the mask {list(array_shape)} does not match the shape of the "
                        f"indexed tensor {list(shape[dim:dim + len(array_shape)])} at dimension {dim}"
                    )
                dim += len(array_shape)
            else:
                size = shape[dim]
                if math.prod(array_shape):
                    low, high = backend.item(backend.min(array)), backend.item(backend.max(array))
                    bad = low if low < -size else high if high >= size else None
                    if bad is not None:
                        raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
                dim += 1
            out.append(array)
    return backend.normalize_index(tuple(out))


def _is_whole(part: slice, size: int) -> bool:
    """Whether torch skips the slice in an index of several parts: ``:``, ``0:``, ``:n``..."""
    return part.start in (None, 0) and part.step in (None, 1) and (part.stop is None or part.stop >= size)


def _node_name(a: Tensor, index: Any) -> str:
    """The name of torch's last node for ``a[index]``: torch applies the basic parts in turn
    (an integer selects, a slice slices, None unsqueezes; whole slices are skipped, except
    alone), an alias when nothing was applied, and an index of tensors last."""
    names = {"int": "SelectBackward0", "slice": "SliceBackward0", "None": "UnsqueezeBackward0"}
    if not isinstance(index, tuple):
        if index is Ellipsis:
            return "AliasBackward0"
        if index is None:
            return names["None"]
        return names["slice"] if isinstance(index, slice) else names["int"] if _is_integer(index) else "IndexBackward0"
    if not all(_is_basic(part) for part in index):
        return "IndexBackward0"
    name, dim = "AliasBackward0", 0
    spanned = sum(part is not None and part is not Ellipsis for part in index)
    for part in index:
        if part is Ellipsis:
            dim += a.ndim - spanned
        elif part is None:
            name = names["None"]
        else:
            if not (isinstance(part, slice) and dim < a.ndim and _is_whole(part, a.shape[dim])):
                name = names["slice" if isinstance(part, slice) else "int"]
            dim += 1
    return name


def getitem(a: Tensor, index: Any) -> Tensor:
    split = split_integers(index)
    if split is not None:
        basic, advanced = split
        return getitem(getitem(a, basic), advanced)
    # index tensors are read again by backward: an in-place write to one must make it raise
    saved = tuple(part for part in (index if isinstance(index, tuple) else (index,)) if isinstance(part, Tensor))
    name = _node_name(a, index)
    index = normalize_index(a, index)
    backend, shape, dtype = a._backend, a.shape, a.dtype
    basic = all(part is None or part is Ellipsis or isinstance(part, (int, slice)) for part in index)
    result = backend.getitem(a._data, index)
    if basic:  # basic indexing gives a view, as in torch
        out = a._view(result, lambda base: backend.getitem(base, index),
                      lambda base, view: backend.setitem(base, index, view))
    else:
        out = a._like(result)
    return record(out, name, (a,), lambda g: (backend.scatter_add(shape, dtype, index, g),), saved=saved)


def setitem(a: Tensor, index: Any, value: Tensor | float) -> None:
    """In-place assignment ``a[index] = value`` (not recorded by autograd)."""
    a._check_inplace(value)
    split = split_integers(index)
    if split is not None:  # torch's order: integers first, into a view; then the tensor indices
        basic, advanced = split
        getitem(a, basic)[advanced] = value
        return
    a._set_at(normalize_index(a, index), value)
