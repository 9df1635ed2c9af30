"""What the parts of :class:`~lucid.optim.Optimizer` see of one another, declared for type checkers.

Optimizer is assembled from one class per concern (``_groups``, ``_hooks``, ``_state``,
``_state_dict``, ``_group_step``), and each part reads attributes and calls methods that
another part, or Optimizer itself, defines. Each part derives from :class:`OptimizerParts`,
which declares them; at run time it is an empty class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections import OrderedDict
    from collections.abc import Callable

    from .elementwise import Rule
    from .._dtype import dtype
    from .._tensor import Tensor
    from ._plan import GroupPlan
    from ._state import OptimizerState


class OptimizerParts:
    """The attributes and methods the parts of an optimizer share (declarations only)."""

    if TYPE_CHECKING:
        defaults: dict[str, Any]
        param_groups: list[dict[str, Any]]
        state: OptimizerState
        _flat: list[Tensor] | None  # _flat_params(), made again when the groups change
        _state_shapes: dict[int, tuple[int, ...]]  # by id(param): the shape its state was last checked at
        _plans: dict[int, GroupPlan]  # by id(group)
        _step_pre_hooks: OrderedDict[int, Callable[..., Any]]
        _step_post_hooks: OrderedDict[int, Callable[..., Any]]
        _state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]]
        _state_dict_post_hooks: OrderedDict[int, Callable[..., Any]]
        _load_state_dict_pre_hooks: OrderedDict[int, Callable[..., Any]]
        _load_state_dict_post_hooks: OrderedDict[int, Callable[..., Any]]

        # Optimizer and its subclasses
        def _check_hyperparameters(self, group: dict) -> None: ...
        def init_state(self, param: Tensor, group: dict) -> dict: ...
        def elementwise_rule(self, group: dict) -> Rule | None: ...
        def update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None: ...

        # the parts
        def _validate_hyperparameters(self, group: dict) -> None: ...
        def _flat_params(self) -> list[Tensor]: ...
        def _init_hooks(self) -> None: ...
        def _drop_plans(self) -> None: ...
        def state_shapes(self, param: Tensor, group: dict) -> dict: ...
        def _state_dtype(self, key: str, value: Tensor, param: Tensor) -> dtype: ...
        def _check_state_fits(self, index: int, param: Tensor, state: dict, group: dict) -> None: ...
        def _state_of(self, param: Tensor, group: dict) -> dict: ...
