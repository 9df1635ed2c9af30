"""Pieces of update rules that several optimizers share, written once."""

from __future__ import annotations

from typing import Any

from .. import _factory
from .._backend import host
from .._dtype import dtype, float32
from .._tensor import Tensor


def scalar(value: object, dtype: dtype | None = None) -> Any:  # a Python number or a NumPy scalar
    """A hyperparameter as a number that rounds the way torch's arithmetic on it does.

    The one place where a hyperparameter becomes a number. A Python number stays one (torch
    computes with it in double precision). A one-element Tensor (a "tensor lr", Tensor
    betas) becomes a host scalar of its dtype, or of ``dtype`` where torch first casts it to
    the parameter's dtype: arithmetic on the result with Python numbers then rounds as
    torch's arithmetic on the 0-d tensor does (a float32 ``lr * x`` rounds to float32). A
    host scalar (a NumPy number read from a checkpoint) is cast to ``dtype`` when one is
    given. ``float(...)`` of the result, for the rules' scalars, is the same value.

    Examples
    --------
    >>> import lucid
    >>> from lucid.optim.optimizer import scalar
    >>> scalar(0.1), float(scalar(lucid.tensor(0.1)))
    (0.1, 0.10000000149011612)
    >>> float(1 - scalar(lucid.tensor(0.9), lucid.float64))  # cast first, then double arithmetic
    0.10000002384185791
    """
    if isinstance(value, Tensor):
        return host.scalar(value.item(), value.dtype if dtype is None else dtype)
    if dtype is not None and host.is_scalar(value):
        return host.scalar(value, dtype)
    return value


def bias_corrections(betas, step: int):
    """``1 - beta1**t`` and ``1 - beta2**t`` for step ``t``, as torch computes them (Tensor betas give Tensors in their dtype)."""
    return tuple(1 - beta**step for beta in betas)


def float32_state(value, param: Tensor) -> Tensor:
    """A 0-d float32 state Tensor on ``param``'s device holding ``value`` (rounded to float32).

    torch keeps a few per-parameter scalars in its default dtype, float32, whatever the
    parameter's dtype (ASGD's ``eta`` and ``mu``, NAdam's ``mu_product``); lucid keeps them
    the same way so that its numbers are torch's. Optimizers that keep such state list the
    keys in ``float32_keys`` so the base leaves their dtype alone.
    """
    return _factory.full((), float(scalar(value, float32)), dtype=float32, device=param.device)


def norm(tensor: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The 2-norm ``sqrt(sum(x * x))`` of ``tensor`` (over ``dim``, or all of it), in its dtype."""
    return (tensor * tensor).sum(dim=dim, keepdim=keepdim).sqrt()
