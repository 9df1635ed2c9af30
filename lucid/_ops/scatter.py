"""Ops that read or write along an index tensor: gather, scatter, index_select, index_add, index_copy_, masked_fill.

Each is one of two backend primitives with a full index built by the backend
(:meth:`~lucid._backend.base.Backend.along_axis`): a gather (``getitem``) or a scatter-add
into zeros (``scatter_add``), and the backward of one is the other, so duplicates in an
index accumulate their gradients as in torch.
"""

from __future__ import annotations

import numbers

from .. import _dtype
from .._autograd import record
from .._tensor import Tensor
from .elementwise import _same_device
from .broadcast import broadcast_shapes
from .dims import axes as _axes
from .shape import reshape


def _index_tensor(index, fn: str, position: int, argument: str = "index"):
    """``index`` checked: a Tensor of an integer dtype (torch's TypeError and RuntimeError)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument '{argument}' (position {position}) must be Tensor, not {type(index).__name__}")
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for {argument}, got {index.dtype}")
    return index


def _check_bounds(backend, array, size: int, dim: int) -> None:
    """Every value of the non-empty integer ``array`` in ``[0, size)`` (torch takes no negative index here)."""
    low, high = backend.item(backend.min(array)), backend.item(backend.max(array))
    bad = low if low < 0 else high if high >= size else None
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _check_along(a, dim, index, fn: str, src=None):
    """The checks of gather/scatter: the same number of dimensions, and an index no larger
    than ``a`` (and ``src``) apart from dimension ``dim``."""
    (axis,) = _axes(a, dim)
    if index.ndim != a.ndim and not (index.ndim <= 1 and a.ndim <= 1):
        raise RuntimeError(f"{fn}(): Index tensor must have the same number of dimensions as input tensor")
    for d, n in enumerate(index.shape):
        if d != axis and n > a.shape[d]:
            raise RuntimeError(
                f"{fn}(): Size does not match at dimension {d} expected index {list(index.shape)} to be no "
                f"larger than self {list(a.shape)} apart from dimension {axis}"
            )
        if src is not None and n > src.shape[d]:
            raise RuntimeError(
                f"{fn}(): Expected index {list(index.shape)} to be no larger than self {list(a.shape)} apart "
                f"from dimension {axis} and to be no larger size than src {list(src.shape)}"
            )
    _same_device(a, index)
    if _numel(index.shape):
        _check_bounds(a._backend, index._data, a.shape[axis] if a.ndim else 1, axis)
    return axis


def _full_index(a, index, axis):
    backend = a._backend
    return backend.along_axis(backend.astype(index._data, _dtype.int64), axis)


def _leading(backend, array, shape):
    """The leading ``shape`` part of ``array`` (a basic slice)."""
    if tuple(backend.shape(array)) == tuple(shape):
        return array
    return backend.getitem(array, tuple(slice(0, n) for n in shape))


def _pad(backend, array, shape, dtype):
    """``array`` as the leading part of zeros of ``shape``."""
    if tuple(backend.shape(array)) == tuple(shape):
        return array
    return backend.setitem(backend.zeros(shape, dtype), tuple(slice(0, n) for n in backend.shape(array)), array)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """Values of ``input`` along ``dim`` at the positions ``index`` names.

    ``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim=0`` (and so on): the result has
    ``index``'s shape, which may be smaller than ``input``'s apart from ``dim``. The
    gradient is scattered back, so a position named twice gets both gradients.

    Parameters
    ----------
    input : Tensor
    dim : int
        The dimension to index along.
    index : Tensor
        int64 (or int32), with ``input``'s number of dimensions.
    sparse_grad : bool, default False
        Accepted for torch's signature; the gradient is dense.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = lucid.gather(x, 1, lucid.tensor([[0, 0], [1, 0]]))
    >>> y
    tensor([[1., 1.],
            [4., 3.]], grad_fn=<GatherBackward0>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([[2., 0.],
            [1., 1.]])
    """
    _index_tensor(index, "gather", 3)
    axis = _check_along(input, dim, index, "gather")
    backend, shape, dtype = input._backend, input.shape, input.dtype
    if input.ndim == 0:
        out = input._like(backend.broadcast_to(input._data, index.shape))
        return record(out, "GatherBackward0", (input,), lambda g: (backend.sum(g),))
    full = _full_index(input, index, axis)
    out = input._like(backend.getitem(input._data, full))
    return record(out, "GatherBackward0", (input,), lambda g: (backend.scatter_add(shape, dtype, full, g),),
                  saved=(index,))


def _scatter_src(input, src, fn: str):
    """``src`` as an array of ``input``'s dtype (a number, or a tensor of the same dtype)."""
    if isinstance(src, Tensor):
        _same_device(input, src)
        if src.dtype is not input.dtype:
            raise RuntimeError(f"{fn}(): Expected self.dtype to be equal to src.dtype")
        return src
    if isinstance(src, numbers.Number):
        return None
    raise TypeError(f"{fn}(): argument 'src' must be Tensor or a number, not {type(src).__name__}")


def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | float | None = None, *,
            value: Tensor | float | None = None, reduce: str | None = None) -> Tensor:
    """A copy of ``input`` with ``src``'s values written at the positions ``index`` names along ``dim``.

    The inverse of :func:`gather`: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``.
    ``src`` is a tensor (its leading ``index.shape`` part is used) or a number. Where
    ``index`` names a position twice, one of the values is kept (which one is unspecified,
    as in torch). Gradients: ``input``'s, except at the written positions; ``src``'s,
    gathered from the written positions.

    Parameters
    ----------
    input : Tensor
    dim : int
    index : Tensor
        int64, with ``input``'s number of dimensions.
    src : Tensor or number
        The values (also accepted as the keyword ``value``, as torch's overload).
    reduce : None
        torch's deprecated ``reduce=`` argument is not supported: use :func:`scatter_add`.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).scatter(1, lucid.tensor([[2], [0]]), lucid.tensor([[5.0], [6.0]]))
    tensor([[0., 0., 5.],
            [6., 0., 0.]])
    >>> lucid.zeros(3).scatter(0, lucid.tensor([1]), 2.5)
    tensor([0.0000, 2.5000, 0.0000])
    """
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is deprecated in torch and not in lucid: use scatter_add")
    if src is None:
        src = value
    _index_tensor(index, "scatter", 3)
    source = _scatter_src(input, src, "scatter")
    axis = _check_along(input, dim, index, "scatter", source)
    backend, dtype = input._backend, input.dtype
    scalar = input.ndim == 0  # one element: the index can only name it
    full = (Ellipsis,) if scalar else _full_index(input, index, axis)
    if source is None:
        values = backend.full(index.shape, src, dtype)
    else:
        values = _leading(backend, source._data, index.shape)
    values = backend.reshape(values, () if scalar else index.shape)
    out = input._like(backend.setitem(backend.copy(input._data), full, values) if index.numel() else
                      backend.copy(input._data))
    inputs = (input,) if source is None else (input, source)
    src_shape = None if source is None else source.shape

    def backward(g):
        ga = backend.setitem(backend.copy(g), full, 0)
        if source is None:
            return (ga,)
        picked = backend.reshape(g, index.shape) if scalar else backend.getitem(g, full)
        return ga, _pad(backend, picked, src_shape, dtype)

    return record(out, "ScatterBackward1" if source is None else "ScatterBackward0", inputs, backward, saved=(index,))


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy of ``input`` with ``src``'s values added at the positions ``index`` names along ``dim``.

    ``out[index[i][j]][j] += src[i][j]`` for ``dim=0``; a position named twice gets both
    values. The gradient of ``input`` passes through, that of ``src`` is gathered.

    Parameters
    ----------
    input : Tensor
    dim : int
    index : Tensor
        int64, with ``input``'s number of dimensions, no larger than ``src``.
    src : Tensor
        Of ``input``'s dtype.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(3).scatter_add(0, lucid.tensor([0, 2, 0]), lucid.tensor([1.0, 2.0, 3.0]))
    tensor([4., 0., 2.])
    """
    _index_tensor(index, "scatter_add", 3)
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 4) must be Tensor, not {type(src).__name__}")
    _scatter_src(input, src, "scatter_add")
    axis = _check_along(input, dim, index, "scatter_add", src)
    backend, shape, dtype = input._backend, input.shape, input.dtype
    scalar = input.ndim == 0
    full = (Ellipsis,) if scalar else _full_index(input, index, axis)
    values = _leading(backend, src._data, index.shape)
    if scalar:
        values = backend.sum(values)
    out = input._like(backend.add(input._data, backend.scatter_add(shape, dtype, full, values)))
    src_shape = src.shape

    def backward(g):
        picked = backend.broadcast_to(g, index.shape) if scalar else backend.getitem(g, full)
        return g, _pad(backend, picked, src_shape, dtype)

    return record(out, "ScatterAddBackward0", (input, src), backward, saved=(index,))


def _vector_index(index, fn: str, size: int, dim: int):
    _index_tensor(index, fn, 3)
    if index.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")
    if index.numel():
        backend = index._backend
        low, high = backend.item(backend.min(index._data)), backend.item(backend.max(index._data))
        bad = low if low < 0 else high if high >= size else None
        if bad is not None:
            raise IndexError(f"{fn}(): index {bad} is out of bounds for dimension {dim} with size {size}")
    return index._backend.reshape(index._backend.astype(index._data, _dtype.int64), (-1,))


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` along ``dim`` that the 1-D ``index`` names, in its order.

    Parameters
    ----------
    input : Tensor
    dim : int
    index : Tensor
        A vector (or a single value) of int64; repeats are allowed and accumulate gradients.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1, 2, 3], [4, 5, 6]])
    >>> x.index_select(1, lucid.tensor([2, 0, 2]))
    tensor([[3, 1, 3],
            [6, 4, 6]])
    """
    if isinstance(index, Tensor):
        _same_device(input, index)
    (axis,) = _axes(input, dim)
    if input.ndim == 0:
        return reshape(index_select(reshape(input, 1), 0, index), index.shape)
    idx = _vector_index(index, "index_select", input.shape[axis], axis)
    backend, shape, dtype = input._backend, input.shape, input.dtype
    full = (slice(None),) * axis + (idx,)
    out = input._like(backend.getitem(input._data, full))
    return record(out, "IndexSelectBackward0", (input,), lambda g: (backend.scatter_add(shape, dtype, full, g),),
                  saved=(index,))


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: float = 1) -> Tensor:
    """A copy of ``input`` with ``alpha * source[k]`` added to slice ``index[k]`` along ``dim``.

    Parameters
    ----------
    input : Tensor
    dim : int
    index : Tensor
        A vector of int64, one entry per slice of ``source`` along ``dim``; repeats accumulate.
    source : Tensor
        Of ``input``'s dtype, shaped as ``input`` except ``source.shape[dim] == len(index)``.
    alpha : number, default 1

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(3, 2).index_add(0, lucid.tensor([0, 2, 0]), lucid.ones(3, 2), alpha=2)
    tensor([[4., 4.],
            [0., 0.],
            [2., 2.]])
    """
    if not isinstance(source, Tensor):
        raise TypeError(f"index_add(): argument 'source' (position 3) must be Tensor, not {type(source).__name__}")
    _same_device(input, source)
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"index_add_(): self ({input.dtype}) and source ({source.dtype}) must have the same scalar type"
        )
    (axis,) = _axes(input, dim)
    if input.ndim == 0:
        return reshape(index_add(reshape(input, 1), 0, index, reshape(source, -1), alpha=alpha), ())
    idx = _vector_index(index, "index_add", input.shape[axis], axis)
    count = index.numel()
    if source.ndim != input.ndim or source.shape[axis] != count:
        raise RuntimeError(
            f"index_add_(): Number of indices ({count}) should be equal to source.size(dim): "
            f"({source.shape[axis] if source.ndim > axis else source.numel()}), for dim: {axis}"
        )
    expected = input.shape[:axis] + (count,) + input.shape[axis + 1:]
    if source.shape != expected:
        raise RuntimeError(f"index_add_(): source shape {list(source.shape)} does not match {list(expected)}")
    backend, shape, dtype = input._backend, input.shape, input.dtype
    full = (slice(None),) * axis + (idx,)
    values = source._data if alpha == 1 else backend.multiply(source._data, alpha)
    out = input._like(backend.add(input._data, backend.scatter_add(shape, dtype, full, values)))

    def backward(g):
        picked = backend.getitem(g, full)
        return g, (picked if alpha == 1 else backend.multiply(picked, alpha))

    return record(out, "IndexAddBackward0", (input, source), backward, saved=(index,))


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Slice ``index[k]`` of ``input`` along ``dim`` set to slice ``k`` of ``source``, in place.

    Only the named slices are read and written (O(len(index)) of them, never the whole
    tensor): an optimizer's row update of an embedding table. Not recorded by autograd,
    like every in-place method; an index named twice keeps one of its slices.

    Parameters
    ----------
    input : Tensor
        At least one dimension.
    dim : int
    index : Tensor
        A vector of int64 (or int32), one entry per slice of ``source`` along ``dim``.
    source : Tensor
        Of ``input``'s dtype and device, shaped as ``input`` except
        ``source.shape[dim] == len(index)``.

    Returns
    -------
    Tensor
        ``input``.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(3, 2).index_copy_(0, lucid.tensor([2, 0]), lucid.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[3., 4.],
            [0., 0.],
            [1., 2.]])
    """
    if not isinstance(source, Tensor):
        raise TypeError(f"index_copy_(): argument 'source' (position 3) must be Tensor, not {type(source).__name__}")
    input._check_inplace(source)
    _same_device(input, source)
    if source.dtype is not input.dtype:
        raise RuntimeError(
            f"index_copy_(): self ({input.dtype}) and source ({source.dtype}) must have the same scalar type"
        )
    if input.ndim == 0:
        raise RuntimeError("index_copy_(): self must have at least one dimension")
    (axis,) = _axes(input, dim)
    idx = _vector_index(index, "index_copy_", input.shape[axis], axis)
    expected = input.shape[:axis] + (index.numel(),) + input.shape[axis + 1:]
    if source.shape != expected:
        raise RuntimeError(f"index_copy_(): source shape {list(source.shape)} does not match {list(expected)}")
    if not index.numel():
        return input
    backend = input._backend
    input._data = backend.setitem(input._data, (slice(None),) * axis + (idx,), source._data)
    input._version += 1
    return input


def nonzero_rows(input: Tensor) -> Tensor:
    """The indices of the rows (slices along dim 0) of ``input`` that hold a nonzero value.

    A 0-d ``input`` counts as one row. One scan of ``input`` (a host sync on MLX, as any
    ``nonzero``); the result is an int64 vector on ``input``'s device, ascending.

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([[0.0, 0.0], [0.0, -1.0], [0.0, 0.0], [2.0, 0.0]]).nonzero_rows()
    tensor([1, 3])
    """
    backend = input._backend
    data = input._data if input.ndim else backend.reshape(input._data, (1,))
    return input._like(backend.asarray(backend.nonzero_rows(data), _dtype.int64))


def masked_fill(input: Tensor, mask: Tensor, value: Tensor | float) -> Tensor:
    """``input`` with ``value`` where the boolean ``mask`` (broadcast) is True.

    ``value`` is a number or a 0-d tensor, cast to ``input``'s dtype; a 0-d tensor that
    requires grad gets the sum of the gradient at the filled positions.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.masked_fill(x > 2, 0.0)
    tensor([[1., 2.],
            [0., 0.]])
    """
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_fill(): argument 'mask' (position 1) must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    _same_device(input, mask)
    shape = broadcast_shapes(input.shape, mask.shape)
    backend, x, m = input._backend, input._data, mask._data
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
            )
        _same_device(input, value)
        fill = backend.astype(value._data, input.dtype)
    elif isinstance(value, numbers.Number):
        fill = backend.full((), value, input.dtype)
    else:
        raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-d Tensor, not {type(value).__name__}")
    out = input._like(backend.where(m, fill, backend.broadcast_to(x, shape)))
    inputs = (input, value) if isinstance(value, Tensor) else (input,)

    def backward(g):
        zeros = backend.zeros_like(g)
        ga = backend.where(m, zeros, g)
        if len(inputs) == 1:
            return (ga,)
        return ga, backend.sum(backend.where(m, g, zeros))

    return record(out, f"MaskedFillBackward{len(inputs) - 1}", inputs,  # value: a number, a tensor
                  backward, saved=(mask,))
