"""Pieces of update rules that several optimizers share, written once."""

from __future__ import annotations

from .. import _factory
from .._dtype import float32
from .._tensor import Tensor


def scalar(value):
    """A hyperparameter as a Python number (a one-element Tensor gives its value)."""
    return value.item() if isinstance(value, Tensor) else value


def in_dtype_of(param: Tensor, value):
    """``value`` as torch uses a Tensor hyperparameter next to ``param``: cast to its dtype."""
    return value.to(param.dtype) if isinstance(value, Tensor) else value


def bias_corrections(betas, step: int):
    """``1 - beta1**t`` and ``1 - beta2**t`` for step ``t``, as torch computes them (Tensor betas give Tensors in their dtype)."""
    beta1, beta2 = betas
    return 1 - beta1**step, 1 - beta2**step


def float32_scalar(value, param: Tensor) -> Tensor:
    """A 0-d float32 Tensor on ``param``'s device holding ``value`` (rounded to float32).

    torch keeps a few per-parameter scalars in its default dtype, float32, whatever the
    parameter's dtype (ASGD's ``eta`` and ``mu``, NAdam's ``mu_product``); lucid keeps them
    the same way so that its numbers are torch's. Optimizers that keep such state list the
    keys in ``_float32_state`` so the base leaves their dtype alone.
    """
    value = value.item() if isinstance(value, Tensor) else value
    return _factory.full((), value, dtype=float32, device=param.device)


def norm(tensor: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """The 2-norm ``sqrt(sum(x * x))`` of ``tensor`` (over ``dim``, or all of it), in its dtype."""
    return (tensor * tensor).sum(dim=dim, keepdim=keepdim).sqrt()


def torch_number(value):
    """A hyperparameter as a number that rounds the way torch's arithmetic on it does.

    A Python number stays one. A one-element Tensor (a "tensor lr") becomes a NumPy scalar
    of its dtype: torch keeps such an lr as a 0-d tensor, so ``lr * x`` and ``1 - lr * wd``
    round to its dtype (float32), and a NumPy scalar does the same with Python numbers.
    Pass ``float(...)`` of the result to Tensor methods.
    """
    if isinstance(value, Tensor):
        return value._backend.to_numpy(value._data).reshape(())[()]
    return value
