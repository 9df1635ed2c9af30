"""Functions that make tensors: ``tensor``, ``zeros``, ``randn`` and the rest."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import _backend, _dtype, _generator
from ._backend import random as _random
from ._generator import Generator
from ._backend.host import is_array as host_is_array
from ._tensor import Tensor, _check_dtype

if TYPE_CHECKING:
    from ._backend.host import ndarray


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for n in size:
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"sizes must be non-negative integers, got {size!r}")
    return tuple(int(n) for n in size)


def _dtype_or(dtype, default) -> _dtype.dtype:
    return default if dtype is None else _check_dtype(dtype)


def _floating(dtype, name) -> _dtype.dtype:
    dtype = _dtype_or(dtype, _dtype.default_float)
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name}() draws floating point numbers; got dtype {dtype}")
    return dtype


def _finish(array, backend, requires_grad):
    out = Tensor._make(array, backend)
    out.requires_grad = requires_grad
    return out


def tensor(data: object, dtype: _dtype.dtype | None = None, device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (see :class:`lucid.Tensor`).

    Examples
    --------
    >>> import lucid
    >>> lucid.tensor([1, 2, 3])
    tensor([1, 2, 3])
    >>> lucid.tensor(2.5).dtype
    lucid.float32
    """
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros(*size: int | Sequence[int], dtype: _dtype.dtype | None = None, device: str = "cpu",
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of shape ``size`` (float32 unless ``dtype`` says otherwise).

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros(2, 3).shape
    (2, 3)
    """
    backend = _backend.get(device)
    return _finish(backend.zeros(_shape(size), _dtype_or(dtype, _dtype.default_float)), backend, requires_grad)


def ones(*size: int | Sequence[int], dtype: _dtype.dtype | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of shape ``size``.

    Examples
    --------
    >>> import lucid
    >>> lucid.ones(2)
    tensor([1., 1.])
    """
    backend = _backend.get(device)
    return _finish(backend.ones(_shape(size), _dtype_or(dtype, _dtype.default_float)), backend, requires_grad)


def full(size: int | Sequence[int], fill_value: float, dtype: _dtype.dtype | None = None, device: str = "cpu",
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it, as torch does).

    Examples
    --------
    >>> import lucid
    >>> lucid.full((2,), 7)
    tensor([7, 7])
    """
    backend = _backend.get(device)
    dtype = _dtype_or(dtype, _dtype.promote_scalar(_dtype.bool_, fill_value))
    return _finish(backend.full(_shape((size,)), fill_value, dtype), backend, requires_grad)


def zeros_like(t: Tensor, dtype: _dtype.dtype | None = None, device: str | None = None,
               requires_grad: bool = False) -> Tensor:
    """Zeros shaped like ``t``, on its device and with its dtype unless told otherwise.

    Examples
    --------
    >>> import lucid
    >>> lucid.zeros_like(lucid.tensor([1, 2]))
    tensor([0, 0])
    """
    return zeros(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype: _dtype.dtype | None = None, device: str | None = None,
              requires_grad: bool = False) -> Tensor:
    """Ones shaped like ``t``.

    Examples
    --------
    >>> import lucid
    >>> lucid.ones_like(lucid.zeros(2, dtype=lucid.float64))
    tensor([1., 1.], dtype=lucid.float64)
    """
    return ones(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def randn(*size: int | Sequence[int], generator: Generator | None = None, dtype: _dtype.dtype | None = None,
          device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """Samples of N(0, 1) of shape ``size``; the same numbers on every device for one seed.

    ``generator`` (a :class:`lucid.Generator`) draws from its own stream instead of the
    default one.

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(0)
    >>> a = lucid.randn(3)
    >>> _ = lucid.manual_seed(0)
    >>> bool((lucid.randn(3) == a).all())
    True
    """
    backend = _backend.get(device)
    array = _random.normal(_shape(size), _floating(dtype, "randn"), backend, generator=generator)
    return _finish(array, backend, requires_grad)


def rand(*size: int | Sequence[int], generator: Generator | None = None, dtype: _dtype.dtype | None = None,
         device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """Samples of U[0, 1) of shape ``size``.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.rand(100)
    >>> bool(((x >= 0) & (x < 1)).all())
    True
    """
    backend = _backend.get(device)
    array = _random.uniform(_shape(size), _floating(dtype, "rand"), backend, generator=generator)
    return _finish(array, backend, requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, dtype: _dtype.dtype | None = None,
           device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless any bound is a float.

    Examples
    --------
    >>> import lucid
    >>> lucid.arange(4)
    tensor([0, 1, 2, 3])
    >>> lucid.arange(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    floating = any(isinstance(v, float) for v in (start, end, step))
    dtype = _dtype_or(dtype, _dtype.default_float if floating else _dtype.default_int)
    backend = _backend.get(device)
    return _finish(backend.arange(start, end, step, dtype), backend, requires_grad)


def manual_seed(seed: int) -> Generator:
    """Seed lucid's default random numbers (shared by every device); returns the default
    :class:`lucid.Generator`, as torch does.

    Examples
    --------
    >>> import lucid
    >>> lucid.manual_seed(42).initial_seed()
    42
    """
    return _generator.default_generator.manual_seed(seed)


def initial_seed() -> int:
    """The seed of the default generator (see :func:`manual_seed`).

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(7)
    >>> lucid.initial_seed()
    7
    """
    return _generator.default_generator.initial_seed()


def seed() -> int:
    """Seed the default generator from fresh entropy and return the seed (a 64-bit number).

    Examples
    --------
    >>> import lucid
    >>> lucid.seed() == lucid.initial_seed()
    True
    """
    return _generator.default_generator.seed()


def get_rng_state() -> Tensor:
    """The default generator's whole state, as a tensor for :func:`set_rng_state`.

    Save it in a checkpoint (:func:`lucid.save`) beside the model's and the optimizer's
    state dicts, and a resumed run draws the same dropout masks and shuffled orders as an
    uninterrupted one, on every device.

    Returns
    -------
    Tensor
        A new cpu tensor of 8 int64 words; drawing does not change it.

    Notes
    -----
    torch returns a uint8 tensor (its Mersenne Twister's bytes). lucid has no uint8 dtype
    and a generator of its own (NumPy's PCG64), so its state is 8 int64 words, each the
    two's complement of an unsigned 64-bit word: a tag, the initial seed, PCG64's 128-bit
    state and increment, and the 32-bit draw NumPy holds back. An int64 tensor round-trips
    exactly through :func:`lucid.save` and :func:`lucid.load`. The state of one lucid is
    not torch's, nor the other way round.

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(0)
    >>> state = lucid.get_rng_state()
    >>> a = lucid.randn(3)
    >>> lucid.set_rng_state(state)
    >>> bool((lucid.randn(3) == a).all()), state.dtype, state.shape
    (True, lucid.int64, (8,))
    """
    return _generator.default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator to a state :func:`get_rng_state` gave.

    The next draws (``randn``, ``rand``, ``randint``, ``randperm``, dropout, a shuffling
    ``DataLoader`` without a generator of its own, ...) are the ones that followed that
    state, on every device, and :func:`initial_seed` is the seed it came from.

    Parameters
    ----------
    new_state : Tensor
        The 8 int64 words of :func:`get_rng_state` or ``Generator.get_state()``, on any
        device (a checkpoint loaded with ``map_location="gpu"`` is fine).

    Raises
    ------
    TypeError
        If ``new_state`` is not a Tensor, or not of dtype int64.
    RuntimeError
        If it does not hold 8 words, or they are not a lucid random state. The generator
        is unchanged then.

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(7)
    >>> state = lucid.get_rng_state()
    >>> _ = lucid.manual_seed(8)
    >>> lucid.set_rng_state(state)
    >>> lucid.initial_seed()
    7
    """
    _generator.set_default_state(new_state)


def empty(*size: int | Sequence[int], dtype: _dtype.dtype | None = None, device: str = "cpu",
          requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` whose values are to be overwritten.

    torch leaves them uninitialised; lucid gives zeros, so nothing depends on memory left
    over from before.

    Examples
    --------
    >>> import lucid
    >>> lucid.empty(2, 3).shape, lucid.empty((2,), dtype=lucid.int64).dtype
    ((2, 3), lucid.int64)
    """
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(t: Tensor, dtype: _dtype.dtype | None = None, device: str | None = None,
               requires_grad: bool = False) -> Tensor:
    """A tensor shaped like ``t`` to be overwritten (zeros here; see :func:`empty`).

    Examples
    --------
    >>> import lucid
    >>> lucid.empty_like(lucid.ones(2, dtype=lucid.float64)).dtype
    lucid.float64
    """
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value: float, dtype: _dtype.dtype | None = None, device: str | None = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor shaped like ``t``, with its dtype and device unless told otherwise, filled with ``fill_value``.

    Examples
    --------
    >>> import lucid
    >>> lucid.full_like(lucid.zeros(2, dtype=lucid.int64), 7)
    tensor([7, 7])
    """
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def rand_like(t: Tensor, dtype: _dtype.dtype | None = None, device: str | None = None,
              requires_grad: bool = False) -> Tensor:
    """Samples of U[0, 1) shaped like ``t`` (see :func:`rand`).

    Examples
    --------
    >>> import lucid
    >>> lucid.rand_like(lucid.zeros(2, 3)).shape
    (2, 3)
    """
    return rand(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def randn_like(t: Tensor, dtype: _dtype.dtype | None = None, device: str | None = None,
               requires_grad: bool = False) -> Tensor:
    """Samples of N(0, 1) shaped like ``t`` (see :func:`randn`).

    Examples
    --------
    >>> import lucid
    >>> lucid.randn_like(lucid.zeros(4, dtype=lucid.float64)).dtype
    lucid.float64
    """
    return randn(t.shape, dtype=dtype or t.dtype, device=device or t.device, requires_grad=requires_grad)


def _size_tuple(size, fn: str, position: int) -> tuple:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'size' (position {position}) must be tuple of ints, not {type(size).__name__}")
    return _shape(tuple(size))


def randint(*args: int | Sequence[int], low: int | None = None, high: int | None = None,
            size: Sequence[int] | None = None, generator: Generator | None = None,
            dtype: _dtype.dtype | None = None, device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``.

    Parameters
    ----------
    low : int, default 0
    high : int
        One above the largest value.
    size : tuple of int
    generator : lucid.Generator, optional
    dtype : lucid.dtype, default lucid.int64

    Examples
    --------
    >>> import lucid
    >>> x = lucid.randint(3, 10, (2, 4))
    >>> x.shape, x.dtype, bool(((x >= 3) & (x < 10)).all())
    ((2, 4), lucid.int64, True)
    """
    if high is not None:  # by keyword: randint(high=5, size=(2,)), randint(0, high=5, ...)
        args = ((low if low is not None else (args[0] if args else 0)), high) + args[1:]
    elif low is not None:
        args = (low,) + args
    if size is not None:
        args = args + (size,)
    given: tuple[Any, ...] = args  # (high, size) or (low, high, size), each checked below
    if len(given) == 2:
        low, (high, size) = 0, given
    elif len(given) == 3:
        low, high, size = given
    else:
        raise TypeError("randint() expects (high, size) or (low, high, size)")
    shape = _size_tuple(size, "randint", len(args))
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    backend = _backend.get(device)
    array = _random.integers(low, high, shape, _dtype_or(dtype, _dtype.default_int), backend, generator)
    return _finish(array, backend, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: _dtype.dtype | None = None,
             device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 by default).

    Examples
    --------
    >>> import lucid
    >>> sorted(lucid.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    backend = _backend.get(device)
    array = _random.permutation(int(n), _dtype_or(dtype, _dtype.default_int), backend, generator)
    return _finish(array, backend, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: _dtype.dtype | None = None, device: str = "cpu",
             requires_grad: bool = False) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` (both included), as torch computes them.

    Examples
    --------
    >>> import lucid
    >>> lucid.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    if not isinstance(steps, numbers.Integral):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    backend = _backend.get(device)
    array = backend.linspace(float(start), float(end), int(steps), _dtype_or(dtype, _dtype.default_float))
    return _finish(array, backend, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: _dtype.dtype | None = None, device: str = "cpu",
        requires_grad: bool = False) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m = n`` by default).

    Examples
    --------
    >>> import lucid
    >>> lucid.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    m = n if m is None else m
    for name, value in (("n", n), ("m", m)):
        if not isinstance(value, numbers.Integral) or value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    backend = _backend.get(device)
    return _finish(backend.eye(int(n), int(m), _dtype_or(dtype, _dtype.default_float)), backend, requires_grad)


def from_numpy(array: ndarray) -> Tensor:
    """A cpu tensor that shares memory with the NumPy ``array`` (writes to either show in both).

    Examples
    --------
    >>> import lucid
    >>> import numpy as np
    >>> a = np.array([1.0, 2.0])
    >>> t = lucid.from_numpy(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 2.], dtype=lucid.float64)
    """
    backend = _backend.get("cpu")
    if not host_is_array(array):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    backend.dtype_of(array)  # TypeError for a dtype lucid has no name for
    return Tensor._make(array, backend)


def truncated_normal(shape, mean, std, low, high, *, generator=None, dtype=None, device="cpu") -> Tensor:
    """Samples of N(mean, std**2) conditioned on ``[low, high]`` (what ``nn.init.trunc_normal_`` draws)."""
    backend = _backend.get(device)
    dtype = _floating(dtype, "trunc_normal_")
    return _finish(_random.truncated_normal(_shape((shape,)), dtype, backend, mean, std, low, high, generator),
                   backend, False)


def orthogonal(rows, cols, *, generator=None, dtype=None, device="cpu") -> Tensor:
    """A random matrix with orthonormal rows or columns (what ``nn.init.orthogonal_`` draws)."""
    backend = _backend.get(device)
    return _finish(_random.orthogonal(rows, cols, _floating(dtype, "orthogonal_"), backend, generator), backend, False)
