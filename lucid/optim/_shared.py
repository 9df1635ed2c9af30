"""Pieces of update rules that several optimizers share, written once."""

from __future__ import annotations

from .._tensor import Tensor


def weight_decay(param: Tensor, grad: Tensor, lr, decay, decoupled: bool = False) -> Tensor:
    """Apply weight decay the way torch's Adam family does.

    L2 (``decoupled=False``) returns ``grad + decay * param`` and leaves ``param``;
    decoupled (AdamW) shrinks ``param`` by ``1 - lr * decay`` in place and returns ``grad``.
    """
    if decay == 0:
        return grad
    if decoupled:
        param.mul_(1 - lr * decay)
        return grad
    return grad.add(param, alpha=decay)


def bias_corrections(betas, step: int):
    """``1 - beta1**t`` and ``1 - beta2**t`` for step ``t`` (Python floats, as torch computes them)."""
    beta1, beta2 = betas
    return 1 - beta1**step, 1 - beta2**step
