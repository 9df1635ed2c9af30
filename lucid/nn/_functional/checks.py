"""Argument checks and reductions that the functions of :mod:`lucid.nn.functional` share."""

from __future__ import annotations

import numbers
import warnings

from ..._tensor import Tensor

# torch's names of the dtypes, as its messages spell them
TORCH_TYPE = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
              "bool": "Bool"}

INPLACE_REASON = (
    "inplace=True is not supported: lucid does not record in-place operations in the autograd graph; "
    "use inplace=False"
)


def require_tensor(value, name: str, fn: str, position: int) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")


def refuse_inplace(inplace: bool) -> None:
    if inplace:
        raise NotImplementedError(INPLACE_REASON)


def same_device(*tensors) -> None:
    devices = {t.device for t in tensors if t is not None}
    if len(devices) > 1:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            + " and ".join(sorted(devices)) + "!"
        )


def check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_reduction(size_average, reduce, reduction: str) -> str:
    """torch's ``_Reduction.legacy_get_string``: the deprecated flags, when given, decide (with a warning)."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.",
                  stacklevel=3)
    return result


def reduce(losses, reduction: str):
    if reduction == "mean":
        return losses.mean()
    if reduction == "sum":
        return losses.sum()
    return losses


def warn_if_broadcast(input, target) -> None:
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def check_dropout_probability(p) -> None:
    """torch's ValueError for a probability outside [0, 1], which NaN is (torch's ``p < 0 or
    p > 1`` lets NaN through in F.dropout's functional form, and every output is NaN)."""
    if not isinstance(p, numbers.Real) or not 0 <= p <= 1:  # type: ignore[operator]  # typeshed's numbers ABCs do not compare with int
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
