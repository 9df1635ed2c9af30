"""Row-sparse tensors: the gradient ``Embedding(sparse=True)`` gives its weight.

A :class:`SparseTensor` is torch's sparse COO layout with one sparse dimension: a list of
row indices, one row of values per index, and the dense shape they belong to. Rows not
listed are zero. Indices may repeat (an *uncoalesced* tensor: the rows add up); gradients of
several backward calls accumulate by concatenation, and :meth:`SparseTensor.coalesce` sums
duplicates lazily, once, with a stable sort and a segment sum in the backend. Nothing here
allocates an array of the dense shape except :meth:`SparseTensor.to_dense`.
"""

from __future__ import annotations

import builtins
import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, overload

from . import _backend, _device, _dtype, _tensor_str
from ._tensor import Tensor, _check_dtype, _parse_to_args, register_gradient_type

if TYPE_CHECKING:
    from ._backend.base import Backend

__all__ = ["SparseTensor", "sparse_coo_tensor"]


class SparseTensor:
    """A tensor whose rows (slices along dim 0) are zero except those it lists.

    ``values()[k]`` is row ``indices()[0, k]``; an index listed twice means the sum of its
    rows. Made by ``Embedding(sparse=True)``'s backward or :func:`lucid.sparse_coo_tensor`.

    Examples
    --------
    >>> import lucid
    >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], (4, 2))
    >>> g.is_sparse, g.is_coalesced(), g._nnz()
    (True, False, 3)
    >>> c = g.coalesce()
    >>> c.indices(), c.values()
    (tensor([[0, 2]]), tensor([[2., 2.],
            [4., 4.]]))
    >>> g.to_dense()
    tensor([[2., 2.],
            [0., 0.],
            [4., 4.],
            [0., 0.]])
    """

    is_sparse = True
    layout = "sparse_coo"
    requires_grad = False
    grad = None
    grad_fn = None
    is_leaf = True

    __slots__ = ("_rows", "_vals", "_shape", "_backend", "_coalesced", "__weakref__")
    _rows: Any  # native arrays of the backend
    _vals: Any
    _shape: tuple[int, ...]
    _backend: Backend
    _coalesced: bool

    @classmethod
    def _make(cls, rows, values, shape, backend, coalesced=False) -> "SparseTensor":
        """Wrap native arrays: ``rows`` 1-D int64, ``values`` of shape ``(len(rows),) + shape[1:]``."""
        out = object.__new__(cls)
        out._rows, out._vals, out._shape = rows, values, tuple(shape)
        out._backend, out._coalesced = backend, bool(coalesced)
        return out

    # --- what it is --------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The dense shape, a tuple.

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2)).shape
        (4, 2)
        """
        return self._shape

    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The dense shape, or its length along ``dim``.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2))
        >>> g.size(), g.size(1)
        ((4, 2), 2)
        """
        return self._shape if dim is None else self._shape[dim]

    @property
    def ndim(self) -> int:
        """The number of dimensions of the dense shape.

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2)).ndim
        2
        """
        return len(self._shape)

    def dim(self) -> int:
        """The number of dimensions of the dense shape (as :attr:`ndim`).

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2)).dim()
        2
        """
        return len(self._shape)

    def numel(self) -> int:
        """How many elements the dense tensor has, listed or not.

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2)).numel()
        8
        """
        return math.prod(self._shape)

    @property
    def dtype(self) -> _dtype.dtype:
        """The dtype of the values.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.dtype
        lucid.float32
        """
        return self._backend.dtype_of(self._vals)

    @property
    def device(self) -> _device.device:
        """The :class:`lucid.device` of the indices and values.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.device
        device(type='cpu')
        """
        return _device.of(self._backend.device)

    def is_floating_point(self) -> bool:
        """Whether the values have a floating-point dtype.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.is_floating_point()
        True
        """
        return self.dtype.is_floating_point

    def sparse_dim(self) -> int:
        """How many dimensions are sparse: always 1 (the rows).

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2)).sparse_dim()
        1
        """
        return 1

    def dense_dim(self) -> int:
        """How many dimensions each listed row has (``ndim - 1``).

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], (4, 2)).dense_dim()
        1
        """
        return len(self._shape) - 1

    def _nnz(self) -> int:
        """How many rows are listed (duplicates counted)."""
        return self._backend.shape(self._rows)[0]

    def indices(self) -> Tensor:
        """The row indices, shape ``(1, nnz)`` int64, as torch's.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.indices()
        tensor([[2, 0, 2]])
        """
        b = self._backend
        return Tensor._make(b.reshape(self._rows, (1, -1)), b)

    _indices = indices

    def values(self) -> Tensor:
        """The listed rows, shape ``(nnz,) + shape[1:]``.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.values()
        tensor([1., 2., 3.])
        """
        return Tensor._make(self._vals, self._backend)

    _values = values

    def is_coalesced(self) -> bool:
        """Whether the indices are sorted and unique (known, not scanned for).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.is_coalesced(), g.coalesce().is_coalesced()
        (False, True)
        """
        return self._coalesced

    # --- conversions ---------------------------------------------------------------------
    def coalesce(self) -> "SparseTensor":
        """The same tensor with unique, ascending indices: duplicate rows summed.

        O(nnz log nnz): a sort and a segment sum in the backend; self when already
        coalesced. (torch adds duplicates in the order of its unstable sort: sums of
        three or more rows may differ from torch's in the last bits.)

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> c = g.coalesce()
        >>> c.indices(), c.values()
        (tensor([[0, 2]]), tensor([2., 4.]))
        """
        if self._coalesced:
            return self
        rows, values = self._backend.coalesce_rows(self._rows, self._vals)
        return SparseTensor._make(rows, values, self._shape, self._backend, coalesced=True)

    def to_dense(self) -> Tensor:
        """The dense tensor: zeros with the listed rows added (the one table-sized allocation).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.to_dense()
        tensor([2., 0., 4., 0.])
        """
        b = self._backend
        out = b.zeros(self._shape, self.dtype)
        out = b.index_add_rows(out, self._rows, self._vals, unique=self._coalesced)
        return Tensor._make(out, b)

    def to(self, *args: str | _dtype.dtype | Tensor, **kwargs: Any) -> "SparseTensor":
        """This tensor on another device and/or with another dtype (self when nothing changes).

        Takes the arguments of :meth:`Tensor.to <lucid.Tensor.to>`.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.to(lucid.float64).dtype, g.to("cpu") is g
        (lucid.float64, True)
        """
        kwargs.pop("copy", None)
        device, dtype = _parse_to_args(self, args, kwargs)
        if device == self.device and dtype is self.dtype:
            return self
        b, target = self._backend, _backend.get(device)
        if device != self.device:
            rows = target.asarray(b.to_numpy(self._rows), _dtype.int64)
            values = target.asarray(b.to_numpy(self._vals), dtype)
        else:
            rows, values = self._rows, b.astype(self._vals, dtype)
        return SparseTensor._make(rows, values, self._shape, target, self._coalesced)

    def cpu(self) -> "SparseTensor":
        """This tensor on the ``"cpu"`` (NumPy) device: a new tensor, or self if already there.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.cpu() is g
        True
        """
        return self.to("cpu")

    def gpu(self) -> "SparseTensor":
        """This tensor on the ``"gpu"`` (MLX) device: a new tensor, or self if already there.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> str(g.gpu().device) if lucid.is_available("gpu") else "gpu"
        'gpu'
        """
        return self.to("gpu")

    def float(self) -> "SparseTensor":
        """This tensor with float32 values (self if they already are).

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0]], [1.0], (2,), dtype=lucid.float64).float().dtype
        lucid.float32
        """
        return self.to(_dtype.float32)

    def double(self) -> "SparseTensor":
        """This tensor with float64 values (self if they already are).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.double().dtype
        lucid.float64
        """
        return self.to(_dtype.float64)

    def half(self) -> "SparseTensor":
        """This tensor with float16 values (self if they already are).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.half().dtype
        lucid.float16
        """
        return self.to(_dtype.float16)

    def clone(self) -> "SparseTensor":
        """A copy with indices and values of its own.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> c = g.clone()
        >>> c.mul_(10).values(), g.values()
        (tensor([10., 20., 30.]), tensor([1., 2., 3.]))
        """
        b = self._backend
        return SparseTensor._make(b.copy(self._rows), b.copy(self._vals), self._shape, b, self._coalesced)

    def detach(self) -> "SparseTensor":
        """A new sparse tensor on the same indices and values (a sparse tensor has no graph).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> d = g.detach()
        >>> d is g, d.to_dense()
        (False, tensor([2., 0., 4., 0.]))
        """
        return SparseTensor._make(self._rows, self._vals, self._shape, self._backend, self._coalesced)

    def detach_(self) -> "SparseTensor":
        """Self: a sparse tensor records no graph to detach from.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.detach_() is g
        True
        """
        return self

    def requires_grad_(self, requires_grad: bool = True) -> "SparseTensor":
        """Self, for ``requires_grad=False``; lucid's sparse tensors record no gradients.

        Raises
        ------
        RuntimeError
            For ``requires_grad=True``.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.requires_grad_(False) is g
        True
        >>> g.requires_grad_()
        Traceback (most recent call last):
            ...
        RuntimeError: lucid's sparse tensors do not record gradients
        """
        if requires_grad:
            raise RuntimeError("lucid's sparse tensors do not record gradients")
        return self

    # --- arithmetic (what gradients need) ------------------------------------------------
    def _scalar(self, other):
        if isinstance(other, Tensor):
            if other.numel() != 1:
                raise RuntimeError("a sparse tensor can be multiplied by a number or a one-element tensor only")
            return self._backend.astype(self._backend.reshape(other.to(self.device)._data, ()), self.dtype)
        if isinstance(other, numbers.Number):
            return other
        raise TypeError(f"a sparse tensor can be multiplied by a number, not by {type(other).__name__}")

    def mul(self, other: Tensor | builtins.float) -> "SparseTensor":
        """The values times a number or a one-element tensor (``self * other``; the rows stay).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> (g * 2).values(), g.mul(lucid.tensor(0.5)).to_dense()
        (tensor([2., 4., 6.]), tensor([1., 0., 2., 0.]))
        """
        b = self._backend
        values = b.astype(b.multiply(self._vals, self._scalar(other)), self.dtype)
        return SparseTensor._make(self._rows, values, self._shape, b, self._coalesced)

    __mul__ = __rmul__ = mul

    def mul_(self, other: Tensor | builtins.float) -> "SparseTensor":
        """Scale the values in place (the rows stay as they are).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.mul_(10).values()
        tensor([10., 20., 30.])
        """
        self._vals = self.mul(other)._vals
        return self

    def div_(self, other: Tensor | builtins.float) -> "SparseTensor":
        """Divide the values in place by a number or a one-element tensor.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.div_(2).values()
        tensor([0.5000, 1.0000, 1.5000])
        """
        b = self._backend
        self._vals = b.astype(b.divide(self._vals, self._scalar(other)), self.dtype)
        return self

    def div(self, other: Tensor | builtins.float) -> "SparseTensor":
        """The values divided by a number or a one-element tensor (``self / other``).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> (g / 2).to_dense()
        tensor([1., 0., 2., 0.])
        """
        b = self._backend
        values = b.astype(b.divide(self._vals, self._scalar(other)), self.dtype)
        return SparseTensor._make(self._rows, values, self._shape, b, self._coalesced)

    __truediv__ = div

    def add_(self, other: SparseTensor, alpha: builtins.float = 1) -> "SparseTensor":
        """``self += alpha * other`` for a sparse ``other``: its rows appended (uncoalesced).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.add_(lucid.sparse_coo_tensor([[1]], [5.0], (4,)), alpha=2)._nnz()
        4
        >>> g.to_dense()
        tensor([ 2., 10.,  4.,  0.])
        """
        if not isinstance(other, SparseTensor):
            raise TypeError(f"a sparse tensor can add a sparse tensor in place, not a {type(other).__name__}")
        total = self.add(other, alpha=alpha)
        self._rows, self._vals, self._coalesced = total._rows, total._vals, total._coalesced
        return self

    def clamp_(self, min: builtins.float | None = None,  # noqa: A002 - torch's names
               max: builtins.float | None = None) -> "SparseTensor":  # noqa: A002
        """Clamp the listed values in place (the unlisted zeros are left as they are).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.clamp_(max=2.5).values()
        tensor([1.0000, 2.0000, 2.5000])
        """
        b = self._backend
        low = -math.inf if min is None else min
        high = math.inf if max is None else max
        self._vals = b.astype(b.clip(self._vals, low, high), self.dtype)
        return self

    def isfinite(self) -> Tensor:
        """Whether each *listed* value is finite (the unlisted zeros are): a dense bool tensor
        shaped like :meth:`values`.

        Examples
        --------
        >>> import lucid
        >>> lucid.sparse_coo_tensor([[0, 3]], [1.0, float("inf")], (4,)).isfinite()
        tensor([ True, False])
        """
        return Tensor._make(self._backend.isfinite(self._vals), self._backend)

    @property
    def data(self) -> "SparseTensor":
        """The tensor, detached; setting it to a sparse tensor adopts that one's rows and values
        (how ``module.to()`` converts a gradient in place).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.data = lucid.sparse_coo_tensor([[1]], [5.0], (4,))
        >>> g.to_dense()
        tensor([0., 5., 0., 0.])
        """
        return self.detach()

    @data.setter
    def data(self, other: "SparseTensor") -> None:
        """Adopt ``other``'s rows and values (how ``module.to()`` converts a gradient in place)."""
        if not isinstance(other, SparseTensor):
            raise TypeError(f"a sparse tensor's data must be a sparse tensor, not a {type(other).__name__}")
        self._rows, self._vals, self._shape = other._rows, other._vals, other._shape
        self._backend, self._coalesced = other._backend, other._coalesced

    def __neg__(self) -> "SparseTensor":
        b = self._backend
        return SparseTensor._make(self._rows, b.negative(self._vals), self._shape, b, self._coalesced)

    def neg(self) -> "SparseTensor":
        """The values negated (``-self``).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.neg().values()
        tensor([-1., -2., -3.])
        """
        return -self

    def zero_(self) -> "SparseTensor":
        """Drop every row (torch's ``zero_`` on a sparse tensor): O(1), nothing table-sized.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> g.zero_()._nnz(), g.to_dense()
        (0, tensor([0., 0., 0., 0.]))
        """
        b = self._backend
        self._rows = b.zeros((0,), _dtype.int64)
        self._vals = b.zeros((0,) + self._shape[1:], self.dtype)
        self._coalesced = True
        return self

    @overload
    def add(self, other: SparseTensor, alpha: builtins.float = 1) -> SparseTensor: ...
    @overload
    def add(self, other: Tensor, alpha: builtins.float = 1) -> Tensor: ...
    def add(self, other: SparseTensor | Tensor, alpha: builtins.float = 1) -> SparseTensor | Tensor:
        """``self + alpha * other``: sparse for a sparse ``other`` (the rows concatenated,
        uncoalesced), dense for a dense one.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (4,))
        >>> (g + g).indices()
        tensor([[2, 0, 2, 2, 0, 2]])
        >>> g.add(lucid.ones(4), alpha=2)
        tensor([4., 2., 6., 2.])
        """
        if isinstance(other, SparseTensor):
            _check_same(self, other)
            if alpha != 1:
                other = other.mul(alpha)
            return _concatenate(self, other)
        if isinstance(other, Tensor):
            b = self._backend
            dense = other.detach().to(self.device, self.dtype)._data
            if alpha != 1:
                dense = b.astype(b.multiply(dense, alpha), self.dtype)
            return Tensor._make(self._add_to_array(dense, b, owned=alpha != 1), b)
        raise TypeError(f"can't add a {type(other).__name__} to a sparse tensor")

    __add__ = add

    def __radd__(self, other: Tensor) -> Tensor:
        return self.add(other)

    def _add_to_array(self, array, backend, owned: bool):
        """``array + self`` as a native ``array`` of ``backend`` (into ``array`` itself when
        ``owned``): how autograd adds a row-sparse gradient to a dense one, without importing
        this module (which builds on it)."""
        if not owned:
            array = backend.copy(array)
        if self._nnz() == 0:
            return array
        return backend.index_add_rows(array, self._rows, self._vals, unique=self._coalesced)

    # --- the rest ------------------------------------------------------------------------
    def _describe(self) -> str:
        return f"sparse tensor of shape {list(self._shape)} and dtype {self.dtype} on {self.device}"

    def __repr__(self) -> str:
        return _tensor_str.tensor_repr(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> "SparseTensor":
        return self.clone()

    def __reduce_ex__(self, protocol):
        b = self._backend
        return (_rebuild, (b.to_numpy(self._rows), b.to_numpy(self._vals), self._shape, self.device,
                           self.dtype, self._coalesced))


register_gradient_type(SparseTensor)


def _rebuild(rows, values, shape, device, dtype, coalesced):
    b = _backend.get(device)
    return SparseTensor._make(b.asarray(rows, _dtype.int64), b.asarray(values, dtype), shape, b, coalesced)


def _check_same(a: SparseTensor, b: SparseTensor) -> None:
    if a.shape != b.shape:
        raise RuntimeError(f"sparse tensors of shapes {list(a.shape)} and {list(b.shape)} cannot be added")
    if a.device != b.device or a.dtype is not b.dtype:
        raise RuntimeError(f"cannot add a {b._describe()} to a {a._describe()}")


def _concatenate(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """The rows of ``a`` then those of ``b``: their sum, uncoalesced (no table-sized work)."""
    if b._nnz() == 0:
        return a
    if a._nnz() == 0:
        return b
    be = a._backend
    rows = be.concatenate([a._rows, b._rows], 0)
    values = be.concatenate([a._vals, b._vals], 0)
    return SparseTensor._make(rows, values, a._shape, be)


def sparse_coo_tensor(indices: object, values: object, size: Sequence[int] | None = None, *,
                      dtype: _dtype.dtype | None = None, device: str | None = None) -> SparseTensor:
    """A row-sparse tensor from row ``indices`` and their ``values`` (torch's COO layout, one sparse dim).

    Parameters
    ----------
    indices : Tensor or array-like of int
        Shape ``(1, nnz)`` (torch's layout) or ``(nnz,)``; indices may repeat.
    values : Tensor or array-like
        Shape ``(nnz,) + size[1:]``.
    size : tuple of int, optional
        The dense shape; by default ``(max(indices) + 1,) + values.shape[1:]``.
    dtype, device : optional
        Of the values (default: those of ``values``, or float32 on "cpu").

    Examples
    --------
    >>> import lucid
    >>> g = lucid.sparse_coo_tensor([[1, 1]], [[1.0], [2.0]], (3, 1))
    >>> g.coalesce().values()
    tensor([[3.]])
    """
    if not isinstance(values, Tensor):
        values = Tensor(values, dtype=dtype, device=device or "cpu")
    if dtype is not None or device is not None:
        values = values.to(device or values.device, _check_dtype(dtype) if dtype is not None else values.dtype)
    b = values._backend
    if isinstance(indices, Tensor):
        indices = indices.to(values.device, _dtype.int64)
    else:
        indices = Tensor(indices, dtype=_dtype.int64, device=values.device)
    if indices.ndim == 2:
        if indices.shape[0] != 1:
            raise ValueError(
                f"lucid's sparse tensors have one sparse dimension: indices must have shape (1, nnz), got {indices.shape}"
            )
        indices = indices.reshape(-1)
    if indices.ndim != 1:
        raise ValueError(f"indices must have shape (1, nnz) or (nnz,), got {indices.shape}")
    nnz = indices.shape[0]
    if values.ndim == 0 or values.shape[0] != nnz:
        raise ValueError(f"values must have one row per index: {nnz} indices, values of shape {values.shape}")
    if size is None:
        rows = int(indices.max().item()) + 1 if nnz else 0
        size = (rows,) + tuple(values.shape[1:])
    size = tuple(int(n) for n in size)
    if tuple(size[1:]) != tuple(values.shape[1:]):
        raise ValueError(f"values of shape {values.shape} do not fit a sparse tensor of size {size}")
    if nnz and (int(indices.min().item()) < 0 or int(indices.max().item()) >= size[0]):
        raise ValueError(f"an index is out of range for a sparse tensor of {size[0]} rows")
    return SparseTensor._make(b.copy(indices._data), b.copy(values._data), size, b)
