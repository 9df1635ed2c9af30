"""Ops that rearrange elements: reshape, transpose, squeeze, concatenation."""

from __future__ import annotations

from collections.abc import Sequence

from .. import _dtype
from .._autograd import record, renamed
from .._tensor import Tensor
from .dims import axes as _axes
from .dims import sizes as _sizes
from .indexing import getitem


def reshape(a: Tensor, *shape: int | Sequence[int]) -> Tensor:
    """The same elements in a new shape; one dimension may be -1 (inferred).

    On the cpu device the result shares memory with ``a`` where NumPy can, as torch's views
    do, and either way shares its version counter.

    Examples
    --------
    >>> import lucid
    >>> lucid.arange(6).reshape(2, -1)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    shape = _sizes(shape)
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if shape.count(-1) > 1 or (-1 not in shape and known != a.numel()) or (
        -1 in shape and (known == 0 or a.numel() % known)
    ):
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {a.numel()}")
    backend, source = a._backend, a.shape
    out = a._view(backend.reshape(a._data, shape), lambda base: backend.reshape(base, shape),
                  lambda base, view: backend.reshape(view, source))
    return record(out, "ViewBackward0", (a,), lambda g: (backend.reshape(g, source),))


def permute(a: Tensor, *dims: int | Sequence[int]) -> Tensor:
    """The dimensions reordered: output dimension ``i`` is input dimension ``dims[i]``.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3, 4).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    axes = _axes(a, dims)
    if sorted(axes) != list(range(a.ndim)):
        raise RuntimeError(f"permute(): dims {list(dims)} are not a permutation of {a.ndim} dimensions")
    backend = a._backend
    inverse = [0] * len(axes)
    for i, axis in enumerate(axes):
        inverse[axis] = i
    out = a._view(backend.transpose(a._data, axes), lambda base: backend.transpose(base, axes),
                  lambda base, view: backend.transpose(view, inverse))
    return record(out, "PermuteBackward0", (a,), lambda g: (backend.transpose(g, inverse),))


def transpose(a: Tensor, dim0: int, dim1: int) -> Tensor:
    """``a`` with dimensions ``dim0`` and ``dim1`` swapped.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1, 2, 3]]).transpose(0, 1)
    tensor([[1],
            [2],
            [3]])
    """
    if a.ndim < 2 and a.ndim == 0:
        return a
    d0, d1 = _axes(a, (dim0, dim1))
    axes = list(range(a.ndim))
    axes[d0], axes[d1] = axes[d1], axes[d0]
    return renamed(permute(a, axes), "TransposeBackward0")


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    """``a`` with a new dimension of size 1 at ``dim`` (in ``[-a.ndim - 1, a.ndim]``).

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).unsqueeze(-1).shape
    (2, 3, 1)
    """
    ndim = a.ndim + 1
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    shape = list(a.shape)
    shape.insert(dim % ndim, 1)
    return renamed(reshape(a, shape), "UnsqueezeBackward0")


def squeeze(a: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """``a`` without its dimensions of size 1 (only those in ``dim``, if given).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(1, 2, 1)
    >>> x.squeeze().shape, x.squeeze(0).shape, x.squeeze((0, 2)).shape
    ((2,), (2, 1), (2,))
    """
    axes = _axes(a, dim) if dim is not None else tuple(range(a.ndim))
    shape = [n for i, n in enumerate(a.shape) if not (i in axes and n == 1)]
    # torch's three overloads: squeeze(), squeeze(int), squeeze(dims)
    overload = 0 if dim is None else 1 if isinstance(dim, int) else 2
    return renamed(reshape(a, shape), f"SqueezeBackward{overload}")


def flatten(a: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """``a`` with dimensions ``start_dim`` to ``end_dim`` merged into one.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(2, 3, 4)
    >>> x.flatten().shape, x.flatten(1).shape, lucid.flatten(x, 0, 1).shape
    ((24,), (2, 12), (6, 4))
    """
    if a.ndim == 0:
        return reshape(a, (1,))
    (start,), (end,) = _axes(a, start_dim), _axes(a, end_dim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = a.shape
    middle = 1
    for n in shape[start:end + 1]:
        middle *= n
    return reshape(a, shape[:start] + (middle,) + shape[end + 1:])


def _same_device_dtype(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): expected a sequence of Tensors, got {type(t).__name__}")
    first = tensors[0]
    for t in tensors[1:]:
        if t.device != first.device:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found {first.device} and {t.device}")
    dtype = first.dtype
    for t in tensors[1:]:
        dtype = _dtype.promote(dtype, t.dtype)
    return [t.to(dtype) for t in tensors]


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim`` (their dtypes are promoted).

    Examples
    --------
    >>> import lucid
    >>> lucid.cat([lucid.zeros(1, 2), lucid.ones(2, 2)]).shape
    (3, 2)
    >>> lucid.cat([lucid.tensor([1]), lucid.tensor([2.5])])
    tensor([1.0000, 2.5000])
    """
    tensors = _same_device_dtype(tensors, "cat")
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    (axis,) = _axes(first, dim)
    for i, t in enumerate(tensors[1:], 1):
        if t.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} and {t.ndim}")
        for d, (m, n) in enumerate(zip(first.shape, t.shape)):
            if d != axis and m != n:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected size {m} but got "
                    f"size {n} for tensor number {i} in the list."
                )
    backend = first._backend
    out = first._like(backend.concatenate([t._data for t in tensors], axis=axis))
    bounds = [0]
    for t in tensors:
        bounds.append(bounds[-1] + t.shape[axis])

    def backward(g):
        prefix = (slice(None),) * axis
        return tuple(g[prefix + (slice(lo, hi),)] for lo, hi in zip(bounds, bounds[1:]))

    return record(out, "CatBackward0", tuple(tensors), backward)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dimension ``dim``.

    Examples
    --------
    >>> import lucid
    >>> lucid.stack([lucid.tensor([1, 2]), lucid.tensor([3, 4])], dim=1)
    tensor([[1, 3],
            [2, 4]])
    """
    tensors = _same_device_dtype(tensors, "stack")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at entry 0 "
                f"and {list(t.shape)} at entry {i}"
            )
    return renamed(cat([unsqueeze(t, dim) for t in tensors], dim=dim), "StackBackward0")


def t(a: Tensor) -> Tensor:
    """The transpose of a matrix; a vector or a 0-d tensor is returned as it is.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1, 2, 3]]).t()
    tensor([[1],
            [2],
            [3]])
    """
    if a.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D")
    return renamed(transpose(a, 0, 1), "TBackward0") if a.ndim == 2 else a


def narrow(a: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The view of ``a`` holding ``length`` elements of dimension ``dim`` from ``start`` on.

    ``start`` may be negative (counted from the end). The result shares ``a``'s storage,
    as torch's does.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.arange(12).reshape(3, 4)
    >>> x.narrow(1, 1, 2)
    tensor([[ 1,  2],
            [ 5,  6],
            [ 9, 10]])
    """
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    (axis,) = _axes(a, dim)
    start, length = int(start), int(length)
    size = a.shape[axis]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return renamed(getitem(a, (slice(None),) * axis + (slice(start, start + length),)), "SliceBackward0")


def split(a: Tensor, split_size_or_sections: int | list[int] | tuple[int, ...], dim: int = 0) -> tuple[Tensor, ...]:
    """``a`` cut along ``dim`` into pieces of ``split_size_or_sections`` elements (the last
    may be smaller), or into pieces of the sizes a list gives; a tuple of views.

    Examples
    --------
    >>> import lucid
    >>> [p.tolist() for p in lucid.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [p.shape for p in lucid.zeros(2, 5).split([1, 4], dim=1)]
    [(2, 1), (2, 4)]
    """
    (axis,) = _axes(a, dim)
    size = a.shape[axis] if a.ndim else 0
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(n) for n in split_size_or_sections]
        if any(n < 0 for n in sizes) or sum(sizes) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {axis}), but got split_sizes={sizes}"
            )
    else:
        step = int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0:
            if size:
                raise RuntimeError(
                    f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                )
            return (narrow(a, axis, 0, 0),)
        sizes = [min(step, size - lo) for lo in range(0, size, step)] or [0]
    name = "SplitWithSizesBackward0" if isinstance(split_size_or_sections, (list, tuple)) else "SplitBackward0"
    pieces, start = [], 0
    for n in sizes:
        pieces.append(renamed(narrow(a, axis, start, n), name))
        start += n
    return tuple(pieces)


def chunk(a: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``a`` cut along ``dim`` into at most ``chunks`` pieces of ``ceil(size / chunks)``
    elements (the last may be smaller, and there may be fewer pieces), as torch does.

    Examples
    --------
    >>> import lucid
    >>> [p.tolist() for p in lucid.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    """
    chunks = int(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    (axis,) = _axes(a, dim)
    size = a.shape[axis]
    return split(a, max(-(-size // chunks), 1) if size else 0, axis) if size else split(a, [0] * chunks, axis)


def contiguous(a: Tensor, memory_format: object = None) -> Tensor:
    """``a`` itself: lucid's tensors are always laid out contiguously as far as any op can
    tell (a view is re-read through its base), so there is nothing to copy.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(2, 3).t()
    >>> x.contiguous() is x
    True
    """
    return a


def view_as(a: Tensor, other: Tensor) -> Tensor:
    """``a`` viewed with ``other``'s shape (see :func:`reshape`).

    Examples
    --------
    >>> import lucid
    >>> lucid.arange(6).view_as(lucid.zeros(2, 3)).shape
    (2, 3)
    """
    return reshape(a, other.shape)


def expand(a: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """``a`` broadcast to ``sizes`` (-1 keeps a dimension), without copying on the cpu device.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1], [2]]).expand(2, 3)
    tensor([[1, 1, 1],
            [2, 2, 2]])
    """
    sizes = _sizes(sizes)
    if len(sizes) < a.ndim:
        raise RuntimeError(
            f"expand(): the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({a.ndim})"
        )
    lead = len(sizes) - a.ndim
    target = []
    for i, n in enumerate(sizes):
        own = a.shape[i - lead] if i >= lead else None
        if n == -1:
            if own is None:
                raise RuntimeError(f"expand(): -1 is not allowed in a leading, non-existing dimension {i}")
            n = own
        elif own is not None and own != 1 and own != n:
            raise RuntimeError(
                f"The expanded size of the tensor ({n}) must match the existing size ({own}) at non-singleton "
                f"dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(a.shape)}"
            )
        target.append(n)
    backend = a._backend
    out = a._like(backend.broadcast_to(a._data, tuple(target)))
    return record(out, "ExpandBackward0", (a,), lambda g: (g,))


def expand_as(a: Tensor, other: Tensor) -> Tensor:
    """``a`` broadcast to ``other``'s shape (see :func:`expand`).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).expand_as(lucid.zeros(2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return expand(a, other.shape)


def repeat(a: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """``a`` tiled ``sizes[i]`` times along dimension ``i`` (new leading dimensions first).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    sizes = _sizes(sizes)
    if len(sizes) < a.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    shape = (1,) * (len(sizes) - a.ndim) + a.shape
    # tile as a broadcast of (1, s0, 1, s1, ...) against (r0, 1, r1, 1, ...), then merge pairs
    paired = []
    for r, s in zip(sizes, shape):
        paired += [1, s]
    expanded = []
    for r, s in zip(sizes, shape):
        expanded += [r, s]
    return renamed(reshape(expand(reshape(a, paired), expanded), [r * s for r, s in zip(sizes, shape)]), "RepeatBackward0")


def flip(a: Tensor, dims: int | Sequence[int]) -> Tensor:
    """``a`` with the order of its elements reversed along each dimension in ``dims``.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1, 2], [3, 4]]).flip(1)
    tensor([[2, 1],
            [4, 3]])
    """
    axes = _axes(a, dims)
    backend = a._backend

    def reverse(array):
        for axis in axes:
            array = backend.flip(array, axis)
        return array

    out = a._like(reverse(a._data) if axes else backend.copy(a._data))
    return record(out, "FlipBackward0", (a,), lambda g: (reverse(g),))


def unbind(a: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``a`` along ``dim``, as a tuple of views without that dimension.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[1, 2], [3, 4]]).unbind(1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    (axis,) = _axes(a, dim)
    return tuple(renamed(getitem(a, (slice(None),) * axis + (i,)), "UnbindBackward0") for i in range(a.shape[axis]))
