"""Gradient clipping, as ``torch.nn.utils.clip_grad``: by total norm and by value.

The total norm is computed in one pass: a norm per gradient, those norms stacked, and the
norm of the stack, all as device arrays. Nothing is read back to the host (on the lazy MLX
backend nothing is even evaluated) unless ``error_if_nonfinite`` asks for a check. The
scaling multiplies every gradient by ``min(max_norm / (total_norm + 1e-6), 1)`` whatever
its value, as torch does, so that no branch has to wait for the norm.
"""

from __future__ import annotations

import math
import numbers
import types
import warnings
from collections.abc import Iterable

from ..._arguments import describe, fits_float
from ..._autograd import no_grad
from ..._factory import zeros as _zeros
from ..._sparse import SparseTensor
from ..._tensor import Tensor
from ..._ops.elementwise import abs as _abs
from ..._ops.elementwise import sqrt as _sqrt
from ..._ops.reduction import max as _max
from ..._ops.reduction import sum as _sum
from ..._ops.shape import stack as _stack

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _tensor_list(tensors: Tensor | Iterable[Tensor], what: str, caller: str) -> list:
    """``tensors`` (a Tensor or an iterable of them) as a list, with a clear TypeError otherwise."""
    if isinstance(tensors, Tensor):
        return [tensors]
    try:
        items = list(tensors)
    except TypeError:
        raise TypeError(
            f"{caller}: {what} must be a Tensor or an iterable of Tensors, got {type(tensors).__name__}"
        ) from None
    for item in items:
        if not isinstance(item, (Tensor, SparseTensor)):
            raise TypeError(
                f"{caller}: {what} must be a Tensor or an iterable of Tensors, but one of them is "
                f"{type(item).__name__}"
            )
    return items


def _parameters(parameters: Tensor | Iterable[Tensor], caller: str) -> list:
    """The parameters as a list; an empty generator warns, as in torch."""
    is_generator = isinstance(parameters, types.GeneratorType)
    params = _tensor_list(parameters, "parameters", caller)
    if is_generator and not params:
        warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    return params


def _norm_type(norm_type: float | str, caller: str) -> float:
    """``norm_type`` as a float (``'inf'`` allowed); only p > 0 and inf make a total norm."""
    try:
        p = float(norm_type)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{caller}: norm_type must be a positive number or 'inf', got {describe(norm_type)}") from None
    if not p > 0:
        # torch accepts 0 (the count of nonzero per-tensor norms, not of nonzero entries),
        # negative orders and -inf, none of which clipping can use.
        raise ValueError(f"{caller}: norm_type must be a positive number or 'inf', got {norm_type!r}")
    return p


def _positive(value, name: str, caller: str, torch_does: str) -> float:
    """``value`` as a float > 0 (inf allowed), else a ValueError saying what torch would do."""
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{caller}: {name} must be a real number, got {type(value).__name__}")
    if not fits_float(value):
        raise ValueError(f"{caller}: {name} must be within the range of a float, got {describe(value)}")
    value = float(value)
    if not value > 0:
        raise ValueError(f"{caller}: {name} must be positive, got {value} ({torch_does})")
    return value


_MAX_NORM_IN_TORCH = "torch would zero the gradients for 0 and flip their sign for a negative value"
_CLIP_VALUE_IN_TORCH = "torch would zero the gradients for 0 and set them all to the negative value otherwise"


def _same_device(tensors: list, caller: str) -> None:
    devices = sorted({t.device for t in tensors})
    if len(devices) > 1:
        raise RuntimeError(
            f"{caller}: the gradients are on different devices ({', '.join(devices)}); "
            "move the model to one device first"
        )


def _tensor_norm(tensor: Tensor, p: float) -> Tensor:
    """The p-norm of one tensor, as a 0-d tensor of its dtype (no host sync)."""
    if p == math.inf:
        return _max(_abs(tensor))
    if p == 1.0:
        return _sum(_abs(tensor))
    if p == 2.0:
        return _sqrt(_sum(tensor * tensor))
    return _sum(_abs(tensor) ** p) ** (1.0 / p)


def _dense_part(tensor):
    """What a tensor's norm is taken over: itself, or a sparse tensor's coalesced values (the
    rows it does not list are zero, so they add nothing to a norm)."""
    if not tensor.is_sparse:
        return tensor.detach()
    values = tensor.coalesce().values()
    if values.numel() == 0:  # no rows: a norm of 0 (a max over nothing would fail)
        return _zeros1(values)
    return values


def _zeros1(like):
    return _zeros(1, dtype=like.dtype, device=like.device)


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float | str = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of ``tensors`` taken together, as if they were concatenated into one vector.

    Parameters
    ----------
    tensors : Tensor or iterable of Tensor
        The tensors themselves (gradients, usually), not parameters.
    norm_type : float or 'inf', default 2.0
        The order p of the norm, any p > 0 or ``inf`` (the float or the string ``'inf'``).
    error_if_nonfinite : bool, default False
        Raise RuntimeError when the total norm is NaN or infinite (this reads it back: one sync).
    foreach : bool, optional
        Accepted as torch accepts it; lucid has one implementation.

    Returns
    -------
    Tensor
        A 0-d tensor on the tensors' device, of the widest dtype among them; ``tensor(0.)``
        (float32, "cpu") for no tensors.

    Raises
    ------
    TypeError
        If ``tensors`` is not a Tensor or an iterable of Tensors.
    ValueError
        If ``norm_type`` is not a positive number or ``inf``.
    RuntimeError
        If the tensors are on different devices, or (with ``error_if_nonfinite``) the norm
        is not finite.

    Notes
    -----
    The norm of each tensor is computed on its device, the norms are stacked (promoted to
    the widest dtype) and reduced again: ``(sum_t ||t||_p^p)^(1/p)``, the max for ``inf``.
    torch moves the per-tensor norms to the first tensor's device; lucid refuses tensors on
    different devices. torch also accepts ``norm_type`` 0 and negative orders, which give no
    usable total norm; lucid raises ValueError.

    Examples
    --------
    >>> import lucid
    >>> from lucid.nn.utils import get_total_norm
    >>> get_total_norm([lucid.tensor([3.0]), lucid.tensor([4.0])])
    tensor(5.)
    >>> get_total_norm([lucid.tensor([3.0]), lucid.tensor([-4.0])], norm_type="inf")
    tensor(4.)
    """
    caller = "get_total_norm"
    tensors = _tensor_list(tensors, "tensors", caller)
    p = _norm_type(norm_type, caller)
    if not tensors:
        return Tensor(0.0)
    _same_device(tensors, caller)
    with no_grad():
        norms = _stack([_tensor_norm(_dense_part(t), p) for t in tensors])
        total = _tensor_norm(norms, p)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {p} for gradients from `parameters` is non-finite, so it cannot "
            "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(max_norm / (total_norm + 1e-6), 1)``.

    The second half of :func:`clip_grad_norm_`, for a ``total_norm`` computed beforehand
    (e.g. by :func:`get_total_norm` over several models). Parameters without a gradient are
    skipped. The multiply always happens, also when the factor is 1: deciding not to would
    read the norm back from the device.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        The parameters whose ``.grad`` to scale.
    max_norm : float
        The largest total norm to allow; must be > 0 (``inf`` leaves the gradients as they are).
    total_norm : Tensor
        The total norm of the gradients, a 0-d tensor.
    foreach : bool, optional
        Accepted as torch accepts it; lucid has one implementation.

    Raises
    ------
    ValueError
        If ``max_norm`` is not positive (torch would zero the gradients for 0 and flip their
        sign for a negative value).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.utils import clip_grads_with_norm_, get_total_norm
    >>> w = nn.Parameter(lucid.zeros(2))
    >>> w.grad = lucid.tensor([30.0, 40.0])
    >>> clip_grads_with_norm_([w], 10.0, get_total_norm([w.grad]))
    >>> w.grad
    tensor([6., 8.])
    """
    caller = "clip_grads_with_norm_"
    params = _tensor_list(parameters, "parameters", caller)
    max_norm = _positive(max_norm, "max_norm", caller, _MAX_NORM_IN_TORCH)
    if not isinstance(total_norm, Tensor):
        raise TypeError(f"{caller}: total_norm must be a Tensor, got {type(total_norm).__name__}")
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    _same_device(grads, caller)
    with no_grad():
        coef = (max_norm / (total_norm.detach() + 1e-6)).clamp(max=1.0)
        factors = {}  # one factor per (device, dtype): torch multiplies in the gradient's dtype
        for grad in grads:
            key = (grad.device, grad.dtype)
            if key not in factors:
                factors[key] = coef.to(grad.device, grad.dtype)
            grad.mul_(factors[key])


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float | str = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Clip the gradients of ``parameters`` to a total norm of at most ``max_norm``, in place.

    The total norm is that of all gradients together, as if concatenated into one vector.
    Every gradient is multiplied by ``min(max_norm / (total_norm + 1e-6), 1)``: gradients are
    scaled down when the norm exceeds ``max_norm`` and never scaled up. The same as
    :func:`get_total_norm` followed by :func:`clip_grads_with_norm_`.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        The parameters whose ``.grad`` to clip; those without a gradient are skipped.
    max_norm : float
        The largest total norm to allow; must be > 0 (``inf`` computes the norm and changes
        nothing).
    norm_type : float or 'inf', default 2.0
        The order p of the norm, any p > 0 or ``inf`` (the float or the string ``'inf'``).
    error_if_nonfinite : bool, default False
        Raise RuntimeError, before changing anything, when the total norm is NaN or
        infinite. By default such a norm is returned and the gradients are scaled by it (to
        NaN or 0), as in torch.
    foreach : bool, optional
        Accepted as torch accepts it; lucid has one implementation.

    Returns
    -------
    Tensor
        The total norm *before* clipping, a 0-d tensor on the gradients' device (``tensor(0.)``
        when no parameter has a gradient). Logging it is the usual way to watch for spikes.

    Raises
    ------
    TypeError
        If ``parameters`` is not a Tensor or an iterable of Tensors.
    ValueError
        If ``max_norm`` is not positive or ``norm_type`` is not a positive number or ``inf``.
    RuntimeError
        If the gradients are on different devices, or (with ``error_if_nonfinite``) the norm
        is not finite.

    Warns
    -----
    UserWarning
        If ``parameters`` is an empty generator (often one already consumed).

    Notes
    -----
    As torch: no host sync unless ``error_if_nonfinite`` (the norm and the factor stay on
    the device), mixed dtypes give the norm in the widest dtype, and each gradient is
    multiplied in its own dtype. Unlike torch: ``max_norm <= 0`` (torch zeroes the gradients
    for 0 and flips their sign below), ``norm_type <= 0`` (torch's order-0 "total" counts
    tensors, not entries) and gradients on different devices (torch moves the norms to the
    first device) raise instead.

    Row-sparse gradients (``Embedding(sparse=True)``) count as the dense gradients they stand
    for: the norm is taken over their coalesced rows, and clipping scales their values, in
    O(listed rows). torch 2.13 raises NotImplementedError for them (no sparse
    ``linalg.vector_norm``).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.utils import clip_grad_norm_
    >>> w, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(1))
    >>> w.grad, b.grad = lucid.tensor([30.0, 0.0]), lucid.tensor([40.0])
    >>> clip_grad_norm_([w, b], max_norm=5.0)  # the norm before clipping
    tensor(50.)
    >>> w.grad, b.grad
    (tensor([3., 0.]), tensor([4.]))
    """
    caller = "clip_grad_norm_"
    params = _parameters(parameters, caller)
    max_norm = _positive(max_norm, "max_norm", caller, _MAX_NORM_IN_TORCH)
    grads = [p.grad for p in params if p.grad is not None]
    _same_device(grads, caller)
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        The parameters whose ``.grad`` to clamp; those without a gradient are skipped.
    clip_value : float
        The largest magnitude to allow; must be > 0.
    foreach : bool, optional
        Accepted as torch accepts it; lucid has one implementation.

    Raises
    ------
    ValueError
        If ``clip_value`` is not positive (torch would set every gradient to ``clip_value``
        for a negative value, and zero them for 0).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.utils import clip_grad_value_
    >>> w = nn.Parameter(lucid.zeros(3))
    >>> w.grad = lucid.tensor([-5.0, 0.5, 2.0])
    >>> clip_grad_value_([w], 1.0)
    >>> w.grad
    tensor([-1.0000,  0.5000,  1.0000])
    """
    caller = "clip_grad_value_"
    params = _tensor_list(parameters, "parameters", caller)
    clip_value = _positive(clip_value, "clip_value", caller, _CLIP_VALUE_IN_TORCH)
    with no_grad():
        for param in params:
            if param.grad is not None:
                param.grad.clamp_(min=-clip_value, max=clip_value)
