"""``pad``: constant, reflect, replicate and circular padding, as torch's ``F.pad``."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from ... import _dtype, _factory
from ..._autograd import renamed
from ..._ops.conv import constant_pad
from ..._ops.scatter import index_select
from ..._tensor import Tensor
from .checks import require_tensor

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")


def _source_index(mode: str, n: int, lo: int, hi: int) -> list:
    """The element of a dimension of length ``n`` that each padded position copies."""
    if mode == "circular":  # torch crops a negative width first, then wraps around what is left
        start, length = max(-lo, 0), n - max(-lo, 0) - max(-hi, 0)
        return [start + i % length for i in range(-max(lo, 0), length + max(hi, 0))]
    if mode == "replicate":
        return [min(max(i, 0), n - 1) for i in range(-lo, n + hi)]
    return [-i if i < 0 else 2 * (n - 1) - i if i >= n else i for i in range(-lo, n + hi)]  # reflect


def _check_widths(input, pad) -> list:
    """``pad`` as torch gives it (last dimension first, before then after) checked, as
    ``(before, after)`` per dimension from the first padded one."""
    if not isinstance(pad, Sequence) or isinstance(pad, str):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for k, v in enumerate(pad):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(v).__name__} at pos {k}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    pairs = [(int(pad[2 * k]), int(pad[2 * k + 1])) for k in range(len(pad) // 2)]
    return pairs[::-1]


def _check_mode(input, mode: str, widths, pad) -> None:
    dims = len(widths)
    if dims not in (1, 2, 3) or input.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.")
    first = input.ndim - dims
    for k, ((lo, hi), n) in enumerate(zip(widths, input.shape[first:])):
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {first + k} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n == 0:
            raise RuntimeError(f"Expected {first + 1}D or {first + 2}D (batch mode) tensor with possibly 0 batch size "
                               f"and other non-zero dimensions for input, but got: {list(input.shape)}")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions of ``input``.

    Parameters
    ----------
    input : Tensor
    pad : sequence of int
        ``(before_last, after_last, before_second_last, after_second_last, ...)``; a negative
        width removes elements instead.
    mode : {"constant", "reflect", "replicate", "circular"}, default "constant"
        ``"constant"`` fills with ``value``; ``"reflect"`` mirrors the elements next to the
        edge (without repeating it), ``"replicate"`` repeats the edge, ``"circular"`` wraps
        around. The last three pad 1 to 3 trailing dimensions of an input with one or two
        more (batch and channel).
    value : float, optional
        The fill of ``"constant"`` (0 by default); the other modes refuse one.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[0.0, 1.0, 2.0]])
    >>> F.pad(x, (2, 1)).tolist()
    [[0.0, 0.0, 0.0, 1.0, 2.0, 0.0]]
    >>> F.pad(x, (2, 1), mode="reflect").tolist()
    [[2.0, 1.0, 0.0, 1.0, 2.0, 1.0]]
    >>> F.pad(x, (1, 2), mode="circular").tolist()
    [[2.0, 0.0, 1.0, 2.0, 0.0, 1.0]]
    """
    require_tensor(input, "input", "pad", 1)
    widths = _check_widths(input, pad)
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        first = input.ndim - len(widths)
        full = [(0, 0)] * first + widths
        for (lo, hi), n in zip(full, input.shape):
            if n + min(lo, 0) + min(hi, 0) < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return constant_pad(input, full, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_mode(input, mode, widths, pad)
    out = input
    first = input.ndim - len(widths)
    for k, (lo, hi) in enumerate(widths):
        dim = first + k
        index = _factory.tensor(_source_index(mode, input.shape[dim], lo, hi), dtype=_dtype.int64,
                                device=input.device.type)
        out = index_select(out, dim, index)
    # torch's node: its kernel's for reflect and replicate, the copy into a new tensor for circular
    names = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0", "circular": "CopySlices"}
    return out if out is input else renamed(out, names[mode].format(len(widths)))
