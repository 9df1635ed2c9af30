"""The in-place forms of the elementwise ops (``exp_``, ``tanh_``, ``pow_``, ...): the result
written into the tensor, its version up by one, refused on a leaf that requires grad while
gradients are on, as every in-place method here (see ``Tensor.mul_``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _dtype
from .._tensor import Tensor
from . import elementwise as ew


def _in_place(name: str, op: Callable[..., Any], example: str) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        result = op(self, *args, **kwargs)  # copy_ refuses a leaf that requires grad, bumps the version
        if result.dtype.is_floating_point and not self.dtype.is_floating_point:
            raise RuntimeError(f"result type {_dtype.scalar_type(result.dtype)} can't be cast to the desired "
                               f"output type {_dtype.scalar_type(self.dtype)}")
        return self.copy_(result)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""In place :meth:`{name[:-1]}`: the result written into this tensor.

    Examples
    --------
    >>> import lucid
    >>> {example}
    """
    return method


_OPS: list[tuple[str, Callable[..., Any], str]] = [
    ("exp_", ew.exp, "lucid.zeros(2).exp_().tolist()\n    [1.0, 1.0]"),
    ("log_", ew.log, "lucid.ones(2).log_().tolist()\n    [0.0, 0.0]"),
    ("log1p_", ew.log1p, "lucid.zeros(2).log1p_().tolist()\n    [0.0, 0.0]"),
    ("expm1_", ew.expm1, "lucid.zeros(2).expm1_().tolist()\n    [0.0, 0.0]"),
    ("sin_", ew.sin, "lucid.zeros(2).sin_().tolist()\n    [0.0, 0.0]"),
    ("cos_", ew.cos, "lucid.zeros(2).cos_().tolist()\n    [1.0, 1.0]"),
    ("tanh_", ew.tanh, "lucid.zeros(2).tanh_().tolist()\n    [0.0, 0.0]"),
    ("sigmoid_", ew.sigmoid, "lucid.zeros(2).sigmoid_().tolist()\n    [0.5, 0.5]"),
    ("relu_", ew.relu, "lucid.tensor([-1.0, 2.0]).relu_().tolist()\n    [0.0, 2.0]"),
    ("floor_", ew.floor, "lucid.tensor([1.5, -1.5]).floor_().tolist()\n    [1.0, -2.0]"),
    ("ceil_", ew.ceil, "lucid.tensor([1.5, -1.5]).ceil_().tolist()\n    [2.0, -1.0]"),
    ("round_", ew.round, "lucid.tensor([1.5, 2.5]).round_().tolist()\n    [2.0, 2.0]"),
    ("pow_", ew.pow, "lucid.tensor([2.0, 3.0]).pow_(2).tolist()\n    [4.0, 9.0]"),
    ("square_", ew.square, "lucid.tensor([2.0, 3.0]).square_().tolist()\n    [4.0, 9.0]"),
    ("reciprocal_", ew.reciprocal, "lucid.tensor([2.0, 4.0]).reciprocal_().tolist()\n    [0.5, 0.25]"),
    ("erf_", ew.erf, "lucid.zeros(2).erf_().tolist()\n    [0.0, 0.0]"),
    ("clamp_min_", ew.clamp_min, "lucid.tensor([-1.0, 2.0]).clamp_min_(0).tolist()\n    [0.0, 2.0]"),
    ("clamp_max_", ew.clamp_max, "lucid.tensor([-1.0, 2.0]).clamp_max_(0).tolist()\n    [-1.0, 0.0]"),
]
IN_PLACE: dict[str, Callable[..., Tensor]] = {name: _in_place(name, op, example) for name, op, example in _OPS}
