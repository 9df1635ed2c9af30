"""``lucid.Tensor``: an array on a device, a dtype, and its place in the autograd graph."""

from __future__ import annotations

import builtins
import copy
import numbers
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, overload

from . import _autograd, _backend, _device, _dtype, _tensor_str
from ._autograd import record
from ._deprecation import scalar_first
from ._backend import host
from ._backend import random as _random
from ._ops.broadcast import broadcast_shapes, check_fits

if TYPE_CHECKING:
    from ._autograd import Node
    from ._backend.base import Backend
    from ._backend.host import ndarray
    from ._ops import elementwise as _ew
    from ._ops import indexing as _indexing
    from ._ops import inplace_math as _inplace_math
    from ._ops import inplace_shape as _inplace_shape
    from ._ops import predicates as _predicates
    from ._ops import linalg as _linalg
    from ._ops import methods as _methods
    from ._ops import reduction as _reduction
    from ._ops import sampling as _sampling
    from ._ops import scaled as _scaled
    from ._ops import scatter as _scatter
    from ._ops import shape as _shape
    from ._ops import sorting as _sorting
    from ._sparse import SparseTensor


def _infer_dtype(data) -> _dtype.dtype:
    """torch's rule: NumPy and device arrays keep their dtype; Python floats give float32."""
    if isinstance(data, Tensor):
        return data.dtype
    if hasattr(data, "dtype") and not isinstance(data, (list, tuple)):
        return _backend.of_array(data).dtype_of(data)
    return host.infer_dtype(data)


# what a ``.grad`` may hold besides a Tensor: the types registered by the modules that define
# them (lucid.SparseTensor: _sparse.py builds on this module, so this one cannot import it)
_other_gradient_types: tuple[type, ...] = ()


def register_gradient_type(cls: type) -> None:
    """Let ``cls`` be assigned to a tensor's ``.grad``, as a Tensor can."""
    global _other_gradient_types
    _other_gradient_types += (cls,)


def _check_dtype(dtype) -> _dtype.dtype:
    if not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"dtype must be a lucid dtype such as lucid.float32, got {dtype!r}")
    return dtype


class Tensor:
    """A multi-dimensional array with autograd, on the ``"cpu"`` (NumPy) or ``"gpu"`` (MLX) device.

    Parameters
    ----------
    data : array_like or Tensor
        Python numbers or (nested) lists, a NumPy array, an MLX array or a Tensor; copied.
    dtype : lucid.dtype, optional
        The element type. By default as torch infers it: Python floats give ``float32``,
        integers ``int64``, booleans ``bool``; arrays keep their own dtype.
    device : {"cpu", "gpu"}, default "cpu"
    requires_grad : bool, default False
        Whether ``backward`` should compute a gradient for this tensor.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([[2., 4.],
            [6., 8.]])
    >>> x.shape, x.dtype, x.device
    ((2, 2), lucid.float32, device(type='cpu'))
    """

    is_sparse = False  # dense; lucid.SparseTensor is the row-sparse kind (gradients of Embedding(sparse=True))

    __slots__ = ("_box", "_backend", "_requires_grad", "_grad", "_node", "_versions",
                 "_retains_grad", "_base", "_as_view", "_write_back", "_seen", "__weakref__")
    __array_priority__ = 1000  # NumPy defers to our reflected operators
    _box: list[Any]  # [native array, cached (dtype, shape) or None]
    _backend: Backend
    _requires_grad: bool
    _grad: Tensor | SparseTensor | None
    _node: Node | None
    _versions: list[int]
    _retains_grad: bool
    _base: Tensor | None
    _as_view: Callable[[Any], Any]
    _write_back: Callable[[Any, Any], Any]
    _seen: int

    def __init__(self, data: object, dtype: _dtype.dtype | None = None, device: str = "cpu",
                 requires_grad: bool = False) -> None:
        backend = _backend.get(device)
        dtype = _infer_dtype(data) if dtype is None else _check_dtype(dtype)
        if isinstance(data, Tensor):
            data = data._data
        self._init(backend.asarray(data, dtype), backend)
        self.requires_grad = requires_grad

    def _init(self, array, backend):
        # the array and its cached (dtype, shape), shared by exact aliases (detach, .data);
        # whatever rebinds the array clears the cache (the ``_data`` setter)
        self._box = [array, None]
        self._backend = backend
        self._requires_grad = False
        self._grad = None
        self._node = None
        self._versions = [0]  # one counter, shared by the tensors that share this storage
        self._retains_grad = False
        self._base = None  # for a view on a backend whose views are copies: see _view

    @classmethod
    def _make(cls, array, backend) -> "Tensor":
        """Wrap a native ``array`` of ``backend`` (or a scalar) without copying it."""
        tensor = object.__new__(cls)
        tensor._init(backend.native(array), backend)
        return tensor

    def _like(self, array) -> "Tensor":
        return Tensor._make(array, self._backend)

    @property
    def _data(self):
        """The native array. A view on a backend without views (MLX) is re-derived from its
        base when the storage they share has been written since."""
        base = self._base
        if base is not None and self._seen != self._versions[0]:
            self._box[:] = self._as_view(base._data), None
            self._seen = self._versions[0]
        return self._box[0]

    @_data.setter
    def _data(self, array) -> None:
        box = self._box
        box[0], box[1] = array, None
        if self._base is not None:  # write through to the base, as a shared buffer would
            self._base._data = self._write_back(self._base._data, array)

    def _view(self, array, as_view=None, write_back=None) -> "Tensor":
        """A view of ``self``: the same storage seen through ``array``'s shape, as in torch.

        ``array`` is what ``as_view(base_array)`` gives. It shares ``self``'s version counter,
        so an in-place write through either one makes a backward that saved the other raise.
        On NumPy ``array`` shares memory with ``self``'s. On MLX, whose arrays are values,
        the view keeps ``as_view`` and ``write_back(base_array, view_array) -> base_array``:
        an in-place write to the view is written back into the base, and the view is
        re-derived from the base after any write to their storage. Without the two
        functions the view is an exact alias and shares ``self``'s array box too.
        """
        out = Tensor._make(array, self._backend)
        out._versions = self._versions
        if as_view is None:
            out._box = self._box
            if self._base is not None:
                out._base, out._as_view, out._write_back, out._seen = (
                    self._base, self._as_view, self._write_back, self._seen)
        elif not self._backend.views_share_memory:
            out._base, out._as_view, out._write_back, out._seen = self, as_view, write_back, self._versions[0]
        return out

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's storage has had (torch's ``_version``)."""
        return self._versions[0]

    @_version.setter
    def _version(self, value: int) -> None:
        self._versions[0] = value

    # --- what it is ----------------------------------------------------------------------
    def _layout(self) -> tuple:
        """``(dtype, shape)`` of the array, derived once per array: the hot paths ask for them
        thousands of times a step. A view on a backend without views is re-derived first."""
        box = self._box
        if self._base is not None:
            self._data  # noqa: B018 - re-derives a stale view, which clears the cache
        layout = box[1]
        if layout is None:
            array = box[0]
            layout = box[1] = (self._backend.dtype_of(array), self._backend.shape(array))
        return layout

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension, a tuple of ints.

        Examples
        --------
        >>> import lucid
        >>> lucid.zeros(2, 3).shape
        (2, 3)
        """
        layout = self._box[1]
        return (layout if layout is not None and self._base is None else self._layout())[1]

    @overload
    def size(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of dimension ``dim``.

        Parameters
        ----------
        dim : int, optional
            A dimension (negative counts from the end); all of them if omitted.

        Examples
        --------
        >>> import lucid
        >>> x = lucid.zeros(2, 3)
        >>> x.size(), x.size(-1)
        ((2, 3), 3)
        """
        return self.shape if dim is None else self.shape[dim]

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        Examples
        --------
        >>> import lucid
        >>> lucid.zeros(2, 3).ndim
        2
        """
        return len(self.shape)

    def dim(self) -> int:
        """The number of dimensions (torch's method spelling of :attr:`ndim`).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor(1.0).dim()
        0
        """
        return self.ndim

    def numel(self) -> int:
        """The number of elements.

        Examples
        --------
        >>> import lucid
        >>> lucid.zeros(2, 3).numel(), lucid.tensor(1.0).numel()
        (6, 1)
        """
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def dtype(self) -> _dtype.dtype:
        """The element type, a :class:`lucid.dtype`.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1, 2]).dtype
        lucid.int64
        """
        layout = self._box[1]
        return (layout if layout is not None and self._base is None else self._layout())[0]

    @property
    def device(self) -> _device.device:
        """The :class:`lucid.device`: ``cpu`` (NumPy) or ``gpu`` (MLX); it equals its name.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0]).device
        device(type='cpu')
        >>> lucid.tensor([1.0]).device == "cpu"
        True
        """
        return _device.of(self._backend.device)

    @property
    def is_floating_point_(self) -> bool:
        """Whether the dtype is a floating point type (property spelling).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1]).is_floating_point_
        False
        """
        return self.dtype.is_floating_point

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating point type.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0]).is_floating_point(), lucid.tensor([1]).is_floating_point()
        (True, False)
        """
        return self.dtype.is_floating_point

    # --- autograd state ------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        """Whether ``backward`` computes a gradient for this tensor (settable on leaves).

        Examples
        --------
        >>> import lucid
        >>> w = lucid.zeros(2)
        >>> w.requires_grad = True
        >>> w.requires_grad, (w * 2).requires_grad
        (True, True)
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self._node is not None and not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set :attr:`requires_grad` in place and return self (floating point leaves only).

        Examples
        --------
        >>> import lucid
        >>> w = lucid.zeros(2).requires_grad_()
        >>> w.requires_grad, w.is_leaf
        (True, True)
        """
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Tensor | SparseTensor | None:
        """The gradient accumulated by ``backward``, a Tensor like this one, or None.

        Examples
        --------
        >>> import lucid
        >>> w = lucid.tensor([1.0, 2.0], requires_grad=True)
        >>> (w * w).sum().backward()
        >>> w.grad
        tensor([2., 4.])
        """
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | SparseTensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor) and not isinstance(value, _other_gradient_types):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got {type(value).__name__}")
            if value.device != self.device:
                raise RuntimeError(
                    f"assigned grad has data located on a different device ({value.device}) "
                    f"than the tensor ({self.device})"
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"assigned grad has data of a different type ({value.dtype}) than the tensor ({self.dtype})"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size {value.shape} than the tensor {self.shape}"
                )
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user rather than by a recorded op (as in torch).

        Examples
        --------
        >>> import lucid
        >>> w = lucid.ones(2, requires_grad=True)
        >>> w.is_leaf, (w * 2).is_leaf
        (True, False)
        """
        return self._node is None

    @property
    def grad_fn(self) -> Node | None:
        """The node that made this tensor in the graph, or None for a leaf.

        Examples
        --------
        >>> import lucid
        >>> w = lucid.ones(2, requires_grad=True)
        >>> w.grad_fn is None, (w * 2).grad_fn is not None
        (True, True)
        """
        return self._node

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during ``backward``.

        Examples
        --------
        >>> import lucid
        >>> w = lucid.ones(2, requires_grad=True)
        >>> h = w * 3
        >>> h.retain_grad()
        >>> h.sum().backward()
        >>> h.grad
        tensor([1., 1.])
        """
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        """Whether this non-leaf tensor keeps its ``.grad`` (:meth:`retain_grad` was called), as torch's.

        Examples
        --------
        >>> import lucid
        >>> h = lucid.ones(2, requires_grad=True) * 3
        >>> h.retains_grad, (h.retain_grad(), h.retains_grad)[1]
        (False, True)
        """
        return self._retains_grad

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None,
                 create_graph: bool = False) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of the leaves below it.

        Parameters
        ----------
        gradient : Tensor, optional
            d(loss)/d(self); may be omitted only for a single-element tensor (then 1).
        retain_graph : bool, optional
            Keep the graph so that ``backward`` can run through it again; by default False.
        create_graph : bool, default False
            torch's; True raises NotImplementedError (lucid computes first derivatives only,
            see :func:`lucid.autograd.grad`).

        Examples
        --------
        >>> import lucid
        >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
        >>> (x * 3).backward(lucid.tensor([1.0, 10.0]))
        >>> x.grad
        tensor([ 3., 30.])
        """
        if create_graph:
            raise NotImplementedError(_autograd.NO_HIGHER_ORDER)
        if not self._requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is not None and not isinstance(gradient, Tensor):
            gradient = Tensor(gradient, dtype=self.dtype, device=self.device)
        _autograd.run_backward(self, _autograd.output_gradient(self, gradient, 0), bool(retain_graph))

    def detach(self) -> "Tensor":
        """A tensor with the same values, outside the graph (shares storage, as in torch).

        Examples
        --------
        >>> import lucid
        >>> w = lucid.ones(2, requires_grad=True)
        >>> d = (w * 2).detach()
        >>> d, d.requires_grad
        (tensor([2., 2.]), False)
        """
        return self._view(self._data)  # an exact alias: writes through it reach self on every device

    def detach_(self) -> "Tensor":
        """Take this tensor out of the graph in place: it becomes a leaf that needs no grad.

        Examples
        --------
        >>> import lucid
        >>> h = lucid.ones(2, requires_grad=True) * 2
        >>> h.detach_() is h, h.is_leaf, h.requires_grad
        (True, True, False)
        """
        self._node = None
        self._requires_grad = False
        return self

    @property
    def data(self) -> "Tensor":
        """The values without autograd history; assigning replaces this tensor's storage.

        As in torch, it shares this tensor's storage but not its version counter, so autograd
        does not see in-place writes through it (``detach()`` is the tracked alias).

        Examples
        --------
        >>> import lucid
        >>> w = lucid.ones(2, requires_grad=True)
        >>> w.data.requires_grad, w.data
        (False, tensor([1., 1.]))
        """
        alias = self.detach()
        if alias._base is None:  # a view on MLX is re-derived by its base's counter: keep it
            alias._versions = [0]
        return alias

    @data.setter
    def data(self, value: "Tensor") -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        # share value's storage (as torch's set_data): its array box, and on MLX its view link
        self._box, self._backend, self._base = value._box, value._backend, value._base
        if value._base is not None:
            self._as_view, self._write_back, self._seen = value._as_view, value._write_back, value._seen
            self._versions = value._versions  # the view's staleness is judged on this counter
        self._version += 1

    # --- values out ----------------------------------------------------------------------
    def item(self) -> int | float | bool:
        """The single value of a one-element tensor as a Python number.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([2.5]).item()
        2.5
        """
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return self._backend.item(self._backend.reshape(self._data, ()))

    def tolist(self) -> Any:
        """The values as (nested) Python lists.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([[1, 2], [3, 4]]).tolist()
        [[1, 2], [3, 4]]
        """
        return self._backend.to_numpy(self._data).tolist()

    def numpy(self) -> ndarray:
        """The values as a NumPy array (shares memory on the cpu device, as torch does).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 2.0]).numpy()
        array([1., 2.], dtype=float32)
        """
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._backend.as_numpy(self._data)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> ndarray:
        array = self._backend.to_numpy(self._data)
        return array if dtype is None else array.astype(dtype)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __format__(self, spec: str) -> str:
        """A 0-d Tensor formats as its value (as torch's does): ``f"{lr}"`` gives ``0.1``."""
        if self.ndim == 0 and type(self) is Tensor:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __deepcopy__(self, memo: dict[int, Any]) -> "Tensor":
        """A copy with its own storage, the same ``requires_grad``, and a deep copy of ``grad``.

        Only leaves can be copied, as in torch; the copy is a leaf on the same backend.
        """
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
            )
        new = object.__new__(type(self))
        new._init(self._backend.copy(self._data), self._backend)
        new._requires_grad = self._requires_grad
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        if hasattr(self, "__dict__"):
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new

    def __reduce_ex__(self, protocol):
        # rebuilt on the device's one backend (not a pickled copy of it); grad is not saved, as in torch
        return (_rebuild_tensor, (self._backend.to_numpy(self._data), self.device, self.dtype, self._requires_grad))

    def _describe(self) -> str:
        return _dtype.describe(self.dtype, self.shape)

    def __repr__(self) -> str:
        """The tensor as torch prints it (see :func:`lucid.set_printoptions`).

        Notes
        -----
        Character for character torch's text, except the names lucid gives: a dtype prints as
        ``dtype=lucid.float64``, and a tensor on the gpu as ``device='gpu'`` (its device's
        ``str``, where torch prints ``device='cuda:0'``); as in torch, the default device, the
        cpu, is not printed. Lucid has no strides, so a ``reshape`` of a transposed tensor
        shows ``ViewBackward0`` where torch, which copies first, shows ``UnsafeViewBackward0``.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([0.5, -1.5, 2.0])
        tensor([ 0.5000, -1.5000,  2.0000])
        >>> lucid.tensor([1.0, 2.0], requires_grad=True) * 2
        tensor([2., 4.], grad_fn=<MulBackward0>)
        """
        # torch prints a subclass (but not Parameter, whose repr adds its own line) by its name
        return _tensor_str.tensor_repr(self, "tensor(" if self._prints_as_tensor() else f"{type(self).__name__}(")

    @classmethod
    def _prints_as_tensor(cls) -> bool:
        return cls is Tensor

    # --- conversions (each returns a new tensor, as in torch) ----------------------------
    def to(self, *args: str | _dtype.dtype | Tensor, **kwargs: Any) -> "Tensor":
        """This tensor on another device and/or with another dtype.

        Accepts a device (``"cpu"``, ``"gpu"``), a dtype, both, or another tensor to copy
        both from. Returns ``self`` when nothing changes, a new tensor otherwise (recorded by
        autograd, so gradients flow back through the conversion).

        Examples
        --------
        >>> import lucid
        >>> x = lucid.tensor([1.0, 2.0])
        >>> x.to(lucid.float64)
        tensor([1., 2.], dtype=lucid.float64)
        >>> x.to("cpu") is x
        True
        """
        copy = bool(kwargs.pop("copy", False))
        device, dtype = _parse_to_args(self, args, kwargs)
        if copy and device == self.device and dtype is self.dtype:
            return self.clone()
        return _convert(self, device, dtype)

    def half(self) -> "Tensor":
        """This tensor as float16: a new tensor (autograd records the cast), or self if already.

        ``float``, ``double``, ``long``, ``int`` and ``bool`` convert the same way, and ``cpu``
        and ``gpu`` move between devices; none of them changes ``self``.

        Examples
        --------
        >>> import lucid
        >>> x = lucid.tensor([1.5, 2.0])
        >>> h = x.half()
        >>> h, x.dtype, h is x
        (tensor([1.5000, 2.0000], dtype=lucid.float16), lucid.float32, False)
        """
        return self.to(_dtype.float16)

    def float(self) -> "Tensor":
        """This tensor as float32 (see :meth:`half`).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1, 2]).float()
        tensor([1., 2.])
        """
        return self.to(_dtype.float32)

    def double(self) -> "Tensor":
        """This tensor as float64 (see :meth:`half`).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 2.0]).double()
        tensor([1., 2.], dtype=lucid.float64)
        """
        return self.to(_dtype.float64)

    def long(self) -> "Tensor":
        """This tensor as int64 (see :meth:`half`).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.5, -2.5]).long()
        tensor([ 1, -2])
        """
        return self.to(_dtype.int64)

    def int(self) -> "Tensor":
        """This tensor as int32 (see :meth:`half`).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.5, 2.0]).int()
        tensor([1, 2], dtype=lucid.int32)
        """
        return self.to(_dtype.int32)

    def bool(self) -> "Tensor":
        """This tensor as bool (see :meth:`half`).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([0.0, 2.0]).bool()
        tensor([False,  True])
        """
        return self.to(_dtype.bool_)

    def cpu(self) -> "Tensor":
        """This tensor on the ``"cpu"`` (NumPy) device: a new tensor, or self if already there.

        Examples
        --------
        >>> import lucid
        >>> x = lucid.tensor([1.0])
        >>> x.cpu() is x
        True
        """
        return self.to("cpu")

    def gpu(self) -> "Tensor":
        """This tensor on the ``"gpu"`` (MLX) device: a new tensor, or self if already there.

        Examples
        --------
        >>> import lucid
        >>> str(lucid.tensor([1.0]).gpu().device) if lucid.is_available("gpu") else "gpu"
        'gpu'
        """
        return self.to("gpu")

    def type_as(self, other: "Tensor") -> "Tensor":
        """This tensor with ``other``'s dtype (see :meth:`to`).

        Parameters
        ----------
        other : Tensor
            The tensor whose dtype to take.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1, 2]).type_as(lucid.tensor(0.5))
        tensor([1., 2.])
        """
        return self.to(other.dtype)

    # --- in place (the vocabulary update rules are written in) ---------------------------
    def _check_inplace(self, *others) -> None:
        if _autograd.is_grad_enabled() and (
            self._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
        ):
            if self._node is None and self._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            raise RuntimeError(
                "lucid does not record in-place operations in the autograd graph; "
                "run them under lucid.no_grad() or use the out-of-place op"
            )

    def _operand(self, other, check=True, floating=False):
        """``other`` as a native array of this tensor's device, or a Python scalar.

        Checks what an in-place op needs: the same device, a shape that broadcasts to this
        tensor's without growing it, and (unless only copying) a result type this tensor's
        dtype can hold, as torch does (an int64 tensor can't take ``add_(0.5)``).
        """
        if isinstance(other, Tensor):
            if other._backend is not self._backend:
                raise RuntimeError(
                    "Expected all tensors to be on the same device, but found at least two devices, "
                    f"{self.device} and {other.device}!"
                )
        elif not isinstance(other, numbers.Number):
            other = Tensor(other, dtype=self.dtype, device=self.device)
        if not check:
            return other._data if isinstance(other, Tensor) else other
        own = self.dtype
        if isinstance(other, Tensor):
            if other.shape != self.shape:
                check_fits(self.shape, other.shape)
            result = own if other.dtype is own else _dtype.result_type(self, other)
        else:
            result = _dtype.promote_scalar(own, other)
        if floating and not result.is_floating_point:
            result = _dtype.default_float
        if result.category > own.category:
            raise RuntimeError(f"result type {result.name} can't be cast to the desired output type {own.name}")
        return other._data if isinstance(other, Tensor) else other

    def _inplace(self, name, *args) -> "Tensor":
        self._data = self._backend.inplace(name, self._data, *args)
        self._version += 1
        return self

    def _assign(self, value) -> "Tensor":
        self._data = self._backend.assign(self._data, value)
        self._version += 1
        return self

    def add_(self, other: Tensor | builtins.float | SparseTensor, alpha: builtins.float = 1) -> "Tensor":
        """``self += alpha * other``.

        Parameters
        ----------
        other : Tensor, SparseTensor or number
            Broadcast to this tensor's shape. A row-sparse :class:`lucid.SparseTensor` of this
            tensor's shape changes only the rows it lists (O(listed rows), as torch's
            ``dense.add_(sparse)``).
        alpha : number, default 1
            The factor on ``other``.

        Notes
        -----
        torch's deprecated ``add_(Number alpha, Tensor other)`` (``p.data.add_(-lr, p.grad.data)``)
        is accepted, with torch's UserWarning, once per process.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 2.0]).add_(lucid.tensor([1.0, 1.0]), alpha=2)
        tensor([3., 4.])
        >>> lucid.zeros(3).add_(lucid.sparse_coo_tensor([[2, 0, 2]], [1.0, 2.0, 3.0], (3,)), alpha=-1)
        tensor([-2.,  0., -4.])
        """
        if isinstance(other, numbers.Number) and isinstance(alpha, Tensor):  # add_(-lr, grad): torch's old order
            scalar_first("add_", "alpha", "Tensor other")
            other, alpha = alpha, other
        self._check_inplace(other)
        if getattr(other, "is_sparse", False):
            return self._add_sparse_(other, alpha)
        other = self._operand(other)
        if alpha != 1:
            other = other * alpha if isinstance(other, numbers.Number) else self._backend.multiply(other, alpha)
        return self._inplace("add", other)

    def _add_sparse_(self, other, alpha) -> "Tensor":
        """``add_`` of a row-sparse ``other``: only its rows are read and written, each listed
        row added in turn (duplicates one after the other), as torch adds a sparse tensor to a
        dense one; ``alpha`` multiplies the values first."""
        if other._backend is not self._backend:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{self.device} and {other.device}!"
            )
        if other.shape != self.shape:
            raise RuntimeError(f"add_: expected sizes to match, got {list(self.shape)} and {list(other.shape)}")
        if other._nnz() == 0:
            return self
        b, values = self._backend, other._vals
        if alpha != 1:
            values = b.multiply(values, alpha)
        values = b.astype(values, self.dtype)
        self._data = b.index_add_rows(self._data, other._rows, values, unique=other.is_coalesced())
        self._version += 1
        return self

    def sub_(self, other: Tensor | builtins.float, alpha: builtins.float = 1) -> "Tensor":
        """``self -= alpha * other``.

        Parameters
        ----------
        other : Tensor or number
            Broadcast to this tensor's shape.
        alpha : number, default 1
            The factor on ``other``.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 2.0]).sub_(0.5)
        tensor([0.5000, 1.5000])
        """
        if isinstance(other, numbers.Number) and isinstance(alpha, Tensor):  # torch's deprecated sub_(alpha, other)
            scalar_first("sub_", "alpha", "Tensor other")
            other, alpha = alpha, other
        return self.add_(other, alpha=-alpha)

    def mul_(self, other: Tensor | builtins.float) -> "Tensor":
        """``self *= other``.

        Like every in-place method here it writes into this tensor's storage (on NumPy;
        MLX rebinds), bumps its version, keeps its shape and dtype, and refuses a leaf that
        requires grad unless gradients are off.

        Examples
        --------
        >>> import lucid
        >>> w = lucid.ones(2, requires_grad=True)
        >>> with lucid.no_grad():
        ...     _ = w.mul_(lucid.tensor([2.0, 3.0]))
        >>> w
        tensor([2., 3.], requires_grad=True)
        """
        self._check_inplace(other)
        return self._inplace("multiply", self._operand(other))

    def div_(self, other: Tensor | builtins.float) -> "Tensor":
        """``self /= other`` (true division: integer tensors raise, as in torch).

        Parameters
        ----------
        other : Tensor or number
            The divisor, broadcast to this tensor's shape.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 3.0]).div_(2)
        tensor([0.5000, 1.5000])
        """
        self._check_inplace(other)
        return self._inplace("divide", self._operand(other, floating=True))

    def neg_(self) -> "Tensor":
        """``self = -self``.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, -2.0]).neg_()
        tensor([-1.,  2.])
        """
        self._check_inplace()
        return self._inplace("negative")

    def sqrt_(self) -> "Tensor":
        """``self = sqrt(self)``.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([4.0, 9.0]).sqrt_()
        tensor([2., 3.])
        """
        self._check_inplace()
        return self._inplace("sqrt")

    def abs_(self) -> "Tensor":
        """``self = abs(self)``.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([-1.0, 2.0]).abs_()
        tensor([1., 2.])
        """
        self._check_inplace()
        return self._inplace("abs")

    def sign_(self) -> "Tensor":
        """``self = sign(self)``.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([-3.0, 0.0, 2.0]).sign_()
        tensor([-1.,  0.,  1.])
        """
        self._check_inplace()
        return self._inplace("sign")

    def maximum_(self, other: Tensor | builtins.float) -> "Tensor":
        """``self = maximum(self, other)`` elementwise.

        Parameters
        ----------
        other : Tensor or number
            Broadcast to this tensor's shape.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 5.0]).maximum_(lucid.tensor([3.0, 4.0]))
        tensor([3., 5.])
        """
        self._check_inplace(other)
        return self._inplace("maximum", self._operand(other))

    def clamp_(self, min: Tensor | builtins.float | None = None,
               max: Tensor | builtins.float | None = None) -> "Tensor":
        """Limit ``self`` to [min, max] in place (numbers or tensors).

        Parameters
        ----------
        min, max : Tensor or number, optional
            The bounds; a missing one does not limit.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([-2.0, 0.5, 3.0]).clamp_(min=0.0, max=1.0)
        tensor([0.0000, 0.5000, 1.0000])
        """
        self._check_inplace(min, max)
        version = self._version
        if min is not None:
            self._inplace("maximum", self._operand(min))
        if max is not None:
            self._inplace("minimum", self._operand(max))
        self._version = version + 1  # one write, as torch counts it, whichever bounds
        return self

    def lerp_(self, end: Tensor | builtins.float, weight: Tensor | builtins.float) -> "Tensor":
        """``self += weight * (end - self)``, torch's formula for either half of [0, 1].

        Parameters
        ----------
        end : Tensor or number
            Where to move towards.
        weight : Tensor or number
            How far, 0 (stay) to 1 (reach ``end``).

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([0.0, 10.0]).lerp_(lucid.tensor([10.0, 20.0]), 0.25)
        tensor([ 2.5000, 12.5000])
        """
        self._check_inplace(end, weight)
        b = self._backend
        end = self._operand(end)
        diff = b.subtract(end, self._data)
        if isinstance(weight, numbers.Number):
            if -0.5 < weight < 0.5:  # torch's |weight| < 0.5, negative weights included
                return self._inplace("add", b.multiply(diff, weight))
            # end - (end - self) * (1 - weight): exact at weight == 1
            return self._assign(b.subtract(end, b.multiply(diff, 1 - weight)))
        w = self._operand(weight)
        low = b.add(self._data, b.multiply(diff, w))
        high = b.subtract(end, b.multiply(diff, b.subtract(1, w)))
        small = b.compare("less", b.abs(w), 0.5)
        return self._assign(b.where(small, low, high))

    def addcmul_(self, tensor1: Tensor | builtins.float, tensor2: Tensor | builtins.float,
                 value: builtins.float = 1) -> "Tensor":
        """``self += value * tensor1 * tensor2``.

        Parameters
        ----------
        tensor1, tensor2 : Tensor or number
            The factors.
        value : number, default 1
            The scale of their product.
            torch's deprecated ``addcmul_(value, tensor1, tensor2)`` is accepted too, with its warning.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 1.0]).addcmul_(lucid.tensor([2.0, 3.0]), lucid.tensor([4.0, 5.0]), value=0.5)
        tensor([5.0000, 8.5000])
        """
        if isinstance(tensor1, numbers.Number) and isinstance(value, Tensor):  # addcmul_(value, t1, t2), deprecated
            scalar_first("addcmul_", "value", "Tensor tensor1, Tensor tensor2")
            tensor1, tensor2, value = tensor2, value, tensor1
        self._check_inplace(tensor1, tensor2)
        product = self._backend.multiply(self._operand(tensor1), self._operand(tensor2))
        if value != 1:
            product = self._backend.multiply(product, value)
        return self._inplace("add", product)

    def addcdiv_(self, tensor1: Tensor | builtins.float, tensor2: Tensor | builtins.float,
                 value: builtins.float = 1) -> "Tensor":
        """``self += (value * tensor1) / tensor2``, in torch's order (bit-identical to its CPU kernel).

        Parameters
        ----------
        tensor1 : Tensor or number
            The numerator.
        tensor2 : Tensor or number
            The denominator.
        value : number, default 1
            The scale of the numerator.
            torch's deprecated ``addcdiv_(value, tensor1, tensor2)`` is accepted too, with its warning.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 1.0]).addcdiv_(lucid.tensor([2.0, 3.0]), lucid.tensor([4.0, 2.0]), value=2)
        tensor([2., 4.])
        """
        if isinstance(tensor1, numbers.Number) and isinstance(value, Tensor):  # addcdiv_(value, t1, t2), deprecated
            scalar_first("addcdiv_", "value", "Tensor tensor1, Tensor tensor2")
            tensor1, tensor2, value = tensor2, value, tensor1
        self._check_inplace(tensor1, tensor2)
        numerator = self._operand(tensor1)
        if value != 1:
            numerator = self._backend.multiply(numerator, value)
        return self._inplace("add", self._backend.divide(numerator, self._operand(tensor2, floating=True)))

    def copy_(self, src: object) -> "Tensor":
        """Write ``src``'s values (broadcast, cast to this dtype, moved to this device) into self.

        Parameters
        ----------
        src : Tensor, number or array-like
            The values, broadcast to this tensor's shape.

        Examples
        --------
        >>> import lucid
        >>> lucid.zeros(2, 2).copy_(lucid.tensor([1, 2]))
        tensor([[1., 2.],
                [1., 2.]])
        """
        self._check_inplace(src)
        if isinstance(src, Tensor) and src.device != self.device:
            src = src.to(self.device)
        if isinstance(src, Tensor):
            check_fits(self.shape, src.shape)
        return self._assign(self._operand(src, check=False))

    def zero_(self) -> "Tensor":
        """Fill with zeros.

        Examples
        --------
        >>> import lucid
        >>> lucid.tensor([1.0, 2.0]).zero_()
        tensor([0., 0.])
        """
        return self.fill_(0)

    def uniform_(self, from_: builtins.float = 0.0, to: builtins.float = 1.0, *,
                 generator: _random.HostGenerator | None = None) -> "Tensor":
        """Fill with samples of U[``from_``, ``to``) (torch calls the first argument ``from``,
        a Python keyword: pass it by position).

        Parameters
        ----------
        from\\_ : float, default 0
            The lower bound, at most ``to``.
        to : float, default 1
            The upper bound (excluded).
        generator : lucid.Generator, optional
            Draw from it instead of the default generator.

        Examples
        --------
        >>> import lucid
        >>> w = lucid.zeros(1000).uniform_(-2, 3)
        >>> bool((w >= -2).all() and (w < 3).all())
        True
        """
        if from_ > to:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
        self._check_inplace()
        self._check_floating("uniform_")
        return self._assign(_random.uniform(self.shape, self.dtype, self._backend, from_, to, generator))

    def normal_(self, mean: builtins.float = 0.0, std: builtins.float = 1.0, *,
                generator: _random.HostGenerator | None = None) -> "Tensor":
        """Fill with samples of N(mean, std**2).

        Parameters
        ----------
        mean : float, default 0
        std : float, default 1
            Non-negative.
        generator : lucid.Generator, optional

        Examples
        --------
        >>> import lucid
        >>> w = lucid.zeros(10_000, dtype=lucid.float64).normal_(3.0, 0.5)
        >>> round(w.mean().item(), 1), round(w.std().item(), 1)
        (3.0, 0.5)
        """
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        self._check_inplace()
        self._check_floating("normal_")
        return self._assign(_random.normal(self.shape, self.dtype, self._backend, mean, std, generator))

    def _check_floating(self, name: str) -> None:
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{name} is implemented for floating point tensors only, got {self.dtype}")

    def fill_(self, value: Tensor | builtins.float) -> "Tensor":
        """Fill with ``value`` (a number or a 0-d tensor).

        Parameters
        ----------
        value : number or Tensor
            The value; a tensor must be 0-d.

        Examples
        --------
        >>> import lucid
        >>> lucid.zeros(3).fill_(7)
        tensor([7., 7., 7.])
        """
        self._check_inplace(value)
        if isinstance(value, Tensor):
            if value.ndim:
                raise RuntimeError(
                    f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
                )
            value = value.item()
        return self._assign(value)

    def _set_at(self, index: tuple, value: Tensor | builtins.float) -> None:
        """``self[index] = value`` for an ``index`` the backend reads (lucid._ops.indexing's
        ``setitem`` makes it), not recorded by autograd."""
        b = self._backend
        value = self._operand(value, check=False)
        if not isinstance(value, numbers.Number):
            target, value_shape = b.shape(b.getitem(self._data, index)), b.shape(value)
            try:
                fits = broadcast_shapes(target, value_shape) == target
            except RuntimeError:
                fits = False
            if not fits:
                raise RuntimeError(
                    f"shape mismatch: value tensor of shape {list(value_shape)} cannot be broadcast to "
                    f"indexing result of shape {list(target)}"
                )
            value = b.astype(value, self.dtype)
        self._data = b.setitem(self._data, index, value)
        self._version += 1

    def _become_view(self, view: Callable[["Tensor"], "Tensor"]) -> "Tensor":
        """Make this tensor ``view(self)``, a view of itself in a new shape, keeping its identity:
        the machinery of ``unsqueeze_``, ``t_``, ``transpose_``, ... (lucid._ops.inplace_shape).

        As in torch: a leaf that requires grad is refused while gradients are on; with them on,
        the tensor's ``grad_fn`` becomes the view's (its input the tensor as it was); with them
        off, the ``grad_fn`` stays; the storage's version counter goes up by one.

        Examples
        --------
        >>> import lucid
        >>> x = lucid.zeros(2, 3)
        >>> x._become_view(lambda t: t.reshape(3, 2)) is x, x.shape, x._version
        (True, (3, 2), 1)
        """
        if _autograd.is_grad_enabled() and self._requires_grad and self._node is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        former = object.__new__(Tensor)  # this tensor as it was: the view's input in the graph
        for slot in ("_box", "_backend", "_requires_grad", "_grad", "_node", "_versions", "_base", "_as_view",
                     "_write_back", "_seen"):
            if hasattr(self, slot):
                setattr(former, slot, getattr(self, slot))
        former._retains_grad = False
        out = view(former)
        self._box, self._base = out._box, out._base
        if out._base is not None:
            self._as_view, self._write_back, self._seen = out._as_view, out._write_back, out._seen
        if out._node is not None:
            self._node = out._node
        self._version += 1
        return self

    def clone(self) -> "Tensor":
        """A copy with its own storage, recorded by autograd (gradients flow to ``self``).

        Examples
        --------
        >>> import lucid
        >>> x = lucid.tensor([1.0, 2.0])
        >>> y = x.clone()
        >>> with lucid.no_grad():
        ...     _ = y.add_(1)
        >>> x, y
        (tensor([1., 2.]), tensor([2., 3.]))
        """
        out = self._like(self._backend.copy(self._data))
        return record(out, "CloneBackward0", (self,), lambda g: (g,))

    if TYPE_CHECKING:  # the ops lucid._ops.methods attaches to the class (its METHODS), for type checkers
        __add__ = __radd__ = _ew.add
        __sub__ = __rsub__ = _ew.sub
        __mul__ = __rmul__ = _ew.mul
        __truediv__ = __rtruediv__ = _ew.div
        __pow__ = __rpow__ = _ew.pow
        __matmul__ = __rmatmul__ = _ew.matmul
        __mod__ = __rmod__ = _ew.remainder
        __floordiv__ = __rfloordiv__ = _ew.floor_divide
        __neg__, __abs__, __invert__ = _ew.neg, _ew.abs, _methods._invert
        # elementwise, as torch's: a bool tensor where object's say bool
        __eq__ = _methods._eq  # type: ignore[assignment]
        __ne__ = _methods._ne  # type: ignore[assignment]
        __lt__, __le__, __gt__, __ge__ = _methods._lt, _methods._le, _methods._gt, _methods._ge
        # bitwise, as torch's (logical on bool tensors)
        __and__ = __rand__ = _ew.bitwise_and
        __or__ = __ror__ = _ew.bitwise_or
        __xor__ = __rxor__ = _ew.bitwise_xor
        __getitem__ = _indexing.getitem
        __setitem__ = _indexing.setitem
        add, sub, mul, div, pow, matmul = _ew.add, _ew.sub, _ew.mul, _ew.div, _ew.pow, _ew.matmul
        neg, exp, log, sqrt, abs, sign = _ew.neg, _ew.exp, _ew.log, _ew.sqrt, _ew.abs, _ew.sign
        log1p, expm1, erf, tanh, sigmoid, relu = _ew.log1p, _ew.expm1, _ew.erf, _ew.tanh, _ew.sigmoid, _ew.relu
        clamp = clip = _ew.clamp
        isfinite, logical_not = _ew.isfinite, _ew.logical_not
        eq, ne, lt, le, gt, ge = _methods._eq, _methods._ne, _methods._lt, _methods._le, _methods._gt, _methods._ge
        logical_and, logical_or = _methods._logical_and, _methods._logical_or
        sum, mean, max, min = _reduction.sum, _reduction.mean, _reduction.max, _reduction.min
        any, all, log_softmax = _reduction.any, _reduction.all, _reduction.log_softmax
        reshape = view = _shape.reshape
        permute, transpose, unsqueeze, squeeze = _shape.permute, _shape.transpose, _shape.unsqueeze, _shape.squeeze
        flatten = _shape.flatten
        remainder, floor_divide, floor, ceil, round = _ew.remainder, _ew.floor_divide, _ew.floor, _ew.ceil, _ew.round
        sin, cos, maximum, minimum, tril, triu = _ew.sin, _ew.cos, _ew.maximum, _ew.minimum, _ew.tril, _ew.triu
        softmax, logsumexp, cumsum = _reduction.softmax, _reduction.logsumexp, _reduction.cumsum
        argmax, argmin, var, std = _reduction.argmax, _reduction.argmin, _reduction.var, _reduction.std
        t, narrow, split, chunk = _shape.t, _shape.narrow, _shape.split, _shape.chunk
        contiguous, view_as, expand = _shape.contiguous, _shape.view_as, _shape.expand
        expand_as, repeat, flip, unbind = _shape.expand_as, _shape.repeat, _shape.flip, _shape.unbind
        mm, bmm, norm = _linalg.mm, _linalg.bmm, _linalg.norm
        gather, scatter, scatter_add = _scatter.gather, _scatter.scatter, _scatter.scatter_add
        index_select, index_add, masked_fill = _scatter.index_select, _scatter.index_add, _scatter.masked_fill
        index_copy_, nonzero_rows = _scatter.index_copy_, _scatter.nonzero_rows
        sort, argsort, topk = _sorting.sort, _sorting.argsort, _sorting.topk
        new_zeros, new_ones, new_empty = _methods._new_zeros, _methods._new_ones, _methods._new_empty
        new_full, new_tensor, type = _methods._new_full, _methods._new_tensor, _methods._type
        masked_fill_, scatter_, scatter_add_ = _methods._masked_fill_, _methods._scatter_, _methods._scatter_add_
        index_add_ = _methods._index_add_
        # issue 24, the names real scripts use
        addcmul, addcdiv = _scaled.addcmul, _scaled.addcdiv
        multiply, subtract, divide, true_divide = _ew.mul, _scaled.sub, _ew.div, _ew.div
        absolute, negative, logical_xor = _ew.abs, _ew.neg, _methods._logical_xor
        multiply_, subtract_, divide_, true_divide_ = mul_, sub_, div_, div_
        absolute_, negative_, clip_ = abs_, neg_, clamp_
        greater, greater_equal, less, less_equal = _methods._gt, _methods._ge, _methods._lt, _methods._le
        not_equal, swapdims, swapaxes = _methods._ne, _shape.transpose, _shape.transpose
        ndimension, nelement = dim, numel
        unsqueeze_, squeeze_, t_ = _inplace_shape.unsqueeze_, _inplace_shape.squeeze_, _inplace_shape.t_
        transpose_ = swapdims_ = swapaxes_ = _inplace_shape.transpose_
        roll, multinomial = _shape.roll, _sampling.multinomial
        bernoulli, bernoulli_, random_ = _sampling.bernoulli, _sampling.bernoulli_, _sampling.random_
        tan, asin, acos, atan, rsqrt = _ew.tan, _ew.asin, _ew.acos, _ew.atan, _ew.rsqrt
        arcsin, arccos, arctan, prod = _ew.asin, _ew.acos, _ew.atan, _reduction.prod
        select, diag, outer, ger = _shape.select, _shape.diag, _linalg.outer, _linalg.outer
        unique, where, cross = _sorting.unique, _methods._where, _linalg.cross
        bitwise_and, bitwise_or, bitwise_xor, bitwise_not = _ew.bitwise_and, _ew.bitwise_or, _ew.bitwise_xor, _ew.bitwise_not
        log10, log2, square, reciprocal, isnan, isinf = _ew.log10, _ew.log2, _ew.square, _ew.reciprocal, _ew.isnan, _ew.isinf
        clamp_min, clamp_max, dot, movedim, moveaxis = _ew.clamp_min, _ew.clamp_max, _linalg.dot, _shape.movedim, _shape.movedim
        masked_select, nonzero, exponential_ = _scatter.masked_select, _scatter.nonzero, _sampling.exponential_
        isclose, allclose, equal = _predicates.isclose, _predicates.allclose, _predicates.equal
        exp_ = log_ = log1p_ = expm1_ = sin_ = cos_ = tanh_ = sigmoid_ = relu_ = _inplace_math.IN_PLACE["exp_"]
        floor_ = ceil_ = round_ = pow_ = square_ = reciprocal_ = erf_ = clamp_min_ = clamp_max_ = _inplace_math.IN_PLACE["exp_"]

        @property
        def T(self) -> Tensor: ...


def eval(*tensors: object) -> None:  # noqa: A001 - mx.eval's name, as lucid.eval
    """Compute the values of ``tensors`` now: MLX (``"gpu"``) is lazy and builds a graph
    until something needs the numbers; on NumPy (``"cpu"``) this does nothing.

    Optimizers call it once at the end of each step, on every parameter and state array the
    step changed, so that one step never leaves a growing graph behind. Arguments may be
    tensors (dense or :class:`lucid.SparseTensor`), or lists, tuples or dicts of them;
    anything else is ignored.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.ones(3)
    >>> y = x * 2 + 1
    >>> lucid.eval(x, [y], {"y": y})
    >>> y
    tensor([3., 3., 3.])
    """
    by_backend: dict = {}
    pending: list[Any] = list(tensors)
    while pending:
        value = pending.pop()
        if isinstance(value, Tensor):
            if value._backend.lazy:
                by_backend.setdefault(value._backend, []).append(value._data)
        elif getattr(value, "is_sparse", False):  # a lucid.SparseTensor: its rows and values
            if value._backend.lazy:
                by_backend.setdefault(value._backend, []).extend((value._rows, value._vals))
        elif isinstance(value, (list, tuple)):
            pending.extend(value)
        elif isinstance(value, dict):
            pending.extend(value.values())
    for backend, arrays in by_backend.items():
        backend.eval(arrays)


def lazy_only(tensors) -> list:
    """The tensors among ``tensors`` whose device computes lazily (MLX), which :func:`eval`
    would evaluate; an empty list where there is nothing to evaluate.

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import lazy_only
    >>> lazy_only([lucid.zeros(2)])
    []
    """
    return [t for t in tensors if t._backend.lazy]


def same_layout(a, b) -> bool:
    """Whether tensors ``a`` and ``b`` are dense, on one device, of one dtype and one shape.

    A cheap test with no message, for hot paths (an optimizer's step) that run their full
    checks, with messages, only when it fails.

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import same_layout
    >>> same_layout(lucid.zeros(2), lucid.ones(2)), same_layout(lucid.zeros(2), lucid.zeros(3))
    (True, False)
    """
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)) or a._backend is not b._backend:
        return False
    x, y = a._box[0], b._box[0]
    return x.dtype == y.dtype and x.shape == y.shape


def same_kind(a, b) -> bool:
    """Whether dense tensors ``a`` and ``b`` are on one device with one dtype (any shapes); cheap.

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import same_kind
    >>> same_kind(lucid.zeros(2), lucid.ones(3)), same_kind(lucid.zeros(2), lucid.zeros(2, dtype=lucid.float64))
    (True, False)
    """
    return a._backend is b._backend and a._box[0].dtype == b._box[0].dtype


def backend_of(tensor):
    """The backend that holds ``tensor``'s array: what computes on it (see :mod:`lucid._backend`).

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import backend_of
    >>> backend_of(lucid.zeros(2)).lazy
    False
    """
    return tensor._backend


def arrays_of(tensors) -> list:
    """The native arrays of dense ``tensors``, for a backend to compute on (a view on a
    backend whose views are copies is re-derived from its base first).

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import arrays_of
    >>> [a.shape for a in arrays_of([lucid.zeros(2), lucid.zeros(1, 3)])]
    [(2,), (1, 3)]
    """
    return [t._data if t._base is not None else t._box[0] for t in tensors]


def rebind_(tensors, arrays=None) -> None:
    """Make each of ``tensors`` hold the array beside it, of its dtype and shape, and count an
    in-place write to each (its version), as an in-place method would: what a backend that
    computes new arrays (MLX) or writes in place (NumPy, the same arrays back) returned.
    Without ``arrays`` (written in place), only the writes are counted.

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import arrays_of, rebind_
    >>> t = lucid.zeros(2)
    >>> rebind_([t], arrays_of([lucid.ones(2)]))
    >>> t, t._version
    (tensor([1., 1.]), 1)
    """
    if arrays is None:
        for tensor in tensors:
            tensor._versions[0] += 1
        return
    for tensor, array in zip(tensors, arrays):
        box = tensor._box
        if box[0] is not array:
            if tensor._base is None:
                box[0] = array  # the same dtype and shape: the cached layout still holds
            else:
                tensor._data = array  # written back into the base
        tensor._versions[0] += 1


def grad_arrays(params, seen: list | None = None) -> list | None:
    """The arrays of the gradients of ``params``, or None unless each has a dense gradient of
    its device, dtype and shape that is not a view on a backend whose views are copies: a
    cheap test for an optimizer's planned step, which takes the checked path otherwise.
    ``seen`` (one entry per parameter, kept by the caller) holds weak references to the
    arrays found last time: an array seen before skips the layout test.

    Examples
    --------
    >>> import lucid
    >>> from lucid._tensor import grad_arrays
    >>> w = lucid.zeros(2, requires_grad=True)
    >>> grad_arrays([w]) is None
    True
    >>> w.grad = lucid.ones(2)
    >>> len(grad_arrays([w]))
    1
    """
    out = []
    for j, param in enumerate(params):
        grad = param._grad
        if grad is None or grad.__class__ is not Tensor or grad._base is not None:
            return None
        array = grad._box[0]
        known = seen[j] if seen is not None else None
        if known is None or known() is not array:
            own = param._box[0]
            if grad._backend is not param._backend or array.dtype != own.dtype or array.shape != own.shape:
                return None
            if seen is not None:
                seen[j] = weakref.ref(array)  # weak: zero_grad(set_to_none=True) still frees it
        out.append(array)
    return out


def _rebuild_tensor(array, device, dtype, requires_grad) -> Tensor:
    return Tensor(array, dtype=dtype, device=device, requires_grad=requires_grad)


def parse_to(args, kwargs, is_device=lambda arg: isinstance(arg, str)):
    """The arguments of a ``to()`` (``Tensor.to``, ``Module.to``) as ``(device, dtype)``, None where unnamed.

    By position: devices (what ``is_device`` accepts: names, by default), dtypes, and Tensors
    (for their device and dtype); by keyword: ``device``, ``dtype`` and ``non_blocking``
    (ignored). A later argument overrides an earlier one.
    """
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for arg in args:
        if isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, _dtype.dtype):
            dtype = arg
        elif is_device(arg):
            device = arg
        else:
            raise TypeError(f"to() expected a device, a dtype or a Tensor, got {arg!r}")
    return (None if device is None else _backend.canonical_device(device)), dtype


def _parse_to_args(tensor, args, kwargs):
    """``Tensor.to``'s arguments as ``(device, dtype)``, ``tensor``'s own where unnamed."""
    device, dtype = parse_to(args, kwargs)
    return (tensor.device if device is None else device), (tensor.dtype if dtype is None else _check_dtype(dtype))


def _convert(tensor, device, dtype):
    """``tensor`` on ``device`` with ``dtype``, a new tensor recorded by autograd; self if unchanged."""
    if device == tensor.device and dtype is tensor.dtype:
        return tensor
    source_device, source_dtype = tensor.device, tensor.dtype
    target = _backend.get(device)
    array = tensor._data
    if device != source_device:
        array = target.asarray(tensor._backend.to_numpy(array), dtype)
    elif dtype is not source_dtype:
        array = target.astype(array, dtype)
    out = Tensor._make(array, target)
    if not dtype.is_floating_point:
        return out

    def backward(grad):
        back = Tensor._make(grad, target).to(source_device, source_dtype)
        return (back._data,)

    if source_device != device:
        # the engine walks one backend; crossing devices, the gradient goes back through here
        return record(out, "ToCopyBackward0", (tensor,), backward)
    return record(out, "ToCopyBackward0", (tensor,), lambda g: (tensor._backend.astype(g, source_dtype),))
