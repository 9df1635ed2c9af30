"""Optimizer hooks, as torch.optim's: global and per-optimizer step hooks, state_dict hooks."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..utils.hooks import RemovableHandle, add_hook

# The step hooks of every optimizer (register_optimizer_step_pre_hook and _post_hook).
_GLOBAL: dict[str, OrderedDict] = {"step_pre": OrderedDict(), "step_post": OrderedDict()}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``.

    Returns a handle whose ``remove()`` unregisters it.

    Examples
    --------
    >>> import lucid.optim as optim
    >>> handle = optim.register_optimizer_step_pre_hook(lambda opt, args, kwargs: None)
    >>> handle.remove()
    """
    return add_hook(_GLOBAL["step_pre"], hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``.

    Examples
    --------
    >>> import lucid.optim as optim
    >>> handle = optim.register_optimizer_step_post_hook(lambda opt, args, kwargs: None)
    >>> handle.remove()
    """
    return add_hook(_GLOBAL["step_post"], hook)


#: The names of an optimizer's hook registries, each an ordered dict of handles to hooks.
NAMES = ("step_pre", "step_post", "state_dict_pre", "state_dict_post", "load_state_dict_pre",
         "load_state_dict_post")


class Hooks:
    """An optimizer's hook registries (``step_pre``, ``step_post``, ``state_dict_pre``,
    ``state_dict_post``, ``load_state_dict_pre``, ``load_state_dict_post``: ordered dicts
    of handles to hooks), :meth:`run` for the state_dict ones, and :meth:`run_step`, the
    step between its hooks."""

    def __init__(self) -> None:
        self.by_name: dict[str, OrderedDict] = {name: OrderedDict() for name in NAMES}
        self._in_step = False

    def run(self, name: str, optimizer, *value):
        """Run the hooks ``name`` on ``(optimizer, *value)``; where there is a value (a state
        dict), one a hook returns replaces it for the next hook, and the last is returned."""
        for hook in self.by_name[name].values():
            replaced = hook(optimizer, *value)
            if value and replaced is not None:
                value = (replaced,)
        return value[0] if value else None

    def run_step(self, step: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        """``step(*args, **kwargs)`` with the step hooks around it, seeing its arguments as called.

        Hooks get ``(optimizer, args, kwargs)`` with ``args[0]`` the optimizer, as in torch: a
        closure passed by keyword is in ``kwargs``. A pre-hook may return ``(new_args,
        new_kwargs)`` for the step. A subclass's ``step`` that calls ``super().step()`` runs
        the hooks once, around the outer call.
        """
        if self._in_step:
            return step(*args, **kwargs)
        optimizer = args[0]
        for hook in (*_GLOBAL["step_pre"].values(), *self.by_name["step_pre"].values()):
            result = hook(optimizer, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        f"{hook} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
                args, kwargs = result
        self._in_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_step = False
        for hook in (*self.by_name["step_post"].values(), *_GLOBAL["step_post"].values()):
            hook(optimizer, args, kwargs)
        return out


def with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step``, a method of an optimizer, run by its hooks' :meth:`Hooks.run_step` (the
    base's ``step`` is; an optimizer whose ``step`` does not call the base's decorates it).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.optimizer import with_step_hooks
    >>> class Frozen(optim.SGD):
    ...     @with_step_hooks
    ...     def step(self, closure=None):  # does nothing, but its hooks still run
    ...         return None
    >>> opt = Frozen([nn.Parameter(lucid.zeros(1))])
    >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: print("pre-hook"))
    >>> opt.step()
    pre-hook
    """

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        return args[0]._hooks.run_step(step, args, kwargs)  # every Optimizer keeps its Hooks there

    return wrapper
