"""Optimizers whose step count is the group's, as pytorch-optimizer keeps it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .optimizer import Optimizer

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._tensor import Tensor


class GroupStepOptimizer(Optimizer):
    """An optimizer whose groups count every step in ``group["step"]`` (parameters with or
    without a gradient alike) before their update, as pytorch-optimizer's do; a step that
    raises takes the count back."""

    def run_step(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        counts = [group.get("step") for group in self.param_groups]
        for group, count in zip(self.param_groups, counts):
            group["step"] = (count or 0) + 1
        try:
            return super().run_step(closure)
        except BaseException:
            for group, count in zip(self.param_groups, counts):
                if count is None:
                    del group["step"]
                else:
                    group["step"] = count
            raise
