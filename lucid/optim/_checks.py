"""Hyperparameter validation with torch.optim's exact messages."""

from __future__ import annotations

from .._tensor import Tensor


def learning_rate(lr, strict=False) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not (0.0 < lr if strict else 0.0 <= lr):
        raise ValueError(f"Invalid learning rate: {lr}")


def epsilon(eps, strict=False) -> None:
    if not (0.0 < eps if strict else 0.0 <= eps):
        raise ValueError(f"Invalid epsilon value: {eps}")


def betas(values) -> None:
    if not isinstance(values, (tuple, list)) or len(values) != 2:
        raise ValueError(f"betas must be a pair of floats, got {values!r}")
    for index, beta in enumerate(values):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")


def non_negative(label: str, value) -> None:
    """``Invalid {label} value: {value}`` unless value >= 0 (torch's wording for most options)."""
    if not 0.0 <= value:
        raise ValueError(f"Invalid {label} value: {value}")


def implementation_flags(foreach, fused, differentiable) -> None:
    """torch's ``foreach``/``fused``/``differentiable`` flags: accepted, checked, and documented."""
    if differentiable:
        raise NotImplementedError(
            "differentiable=True is not supported: lucid's optimizer steps run without recording "
            "a graph, so gradients cannot flow through an update"
        )
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
