"""Optimizer hooks, as torch.optim's: global and per-optimizer step hooks, state_dict hooks."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..utils.hooks import RemovableHandle, add_hook
from ._parts import OptimizerParts

_global_step_pre_hooks: OrderedDict = OrderedDict()
_global_step_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run before every optimizer's ``step``.

    Returns a handle whose ``remove()`` unregisters it.

    Examples
    --------
    >>> import lucid.optim as optim
    >>> handle = optim.register_optimizer_step_pre_hook(lambda opt, args, kwargs: None)
    >>> handle.remove()
    """
    return add_hook(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """Register ``hook(optimizer, args, kwargs)`` to run after every optimizer's ``step``.

    Examples
    --------
    >>> import lucid.optim as optim
    >>> handle = optim.register_optimizer_step_post_hook(lambda opt, args, kwargs: None)
    >>> handle.remove()
    """
    return add_hook(_global_step_post_hooks, hook)


def _with_step_hooks(step):
    """``step`` wrapped so the step hooks run around it, seeing its arguments as called.

    Hooks get ``(optimizer, args, kwargs)`` with ``args[0]`` the optimizer, as in torch: a
    closure passed by keyword is in ``kwargs``. A pre-hook may return ``(new_args,
    new_kwargs)`` for the step. A subclass's ``step`` that calls ``super().step()`` runs
    the hooks once, around the outer call.
    """

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        if getattr(self, "_in_step", False):
            return step(*args, **kwargs)
        for hook in (*_global_step_pre_hooks.values(), *self._step_pre_hooks.values()):
            result = hook(self, args, kwargs)
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
        for hook in (*self._step_post_hooks.values(), *_global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out

    wrapper._with_step_hooks = True
    return wrapper


class OptimizerHooks(OptimizerParts):
    """The hook registries of an optimizer (a part of :class:`~lucid.optim.Optimizer`)."""

    _HOOK_REGISTRIES = ("_step_pre_hooks", "_step_post_hooks", "_state_dict_pre_hooks",
                        "_state_dict_post_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")

    def _init_hooks(self) -> None:
        for name in self._HOOK_REGISTRIES:
            setattr(self, name, OrderedDict())

    def register_step_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)``, run before ``step``; it may return
        ``(new_args, new_kwargs)``. Returns a handle with ``remove()``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> calls = []
        >>> handle = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
        >>> opt.step()
        >>> handle.remove()
        >>> opt.step()
        >>> calls
        ['pre']
        """
        return add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(optimizer, args, kwargs)``, run after ``step``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> handle = opt.register_step_post_hook(lambda o, args, kwargs: print("stepped"))
        >>> opt.step()
        stepped
        """
        return add_hook(self._step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)``, run before ``state_dict`` builds its result.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> handle = opt.register_state_dict_pre_hook(lambda o: print("saving"))
        >>> _ = opt.state_dict()
        saving
        """
        return add_hook(self._state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict)``, which may return a replacement dict.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> def tag(o, sd):
        ...     sd["tag"] = "v1"
        >>> handle = opt.register_state_dict_post_hook(tag)
        >>> opt.state_dict()["tag"]
        'v1'
        """
        return add_hook(self._state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer, state_dict)``, run before loading; it may return a
        replacement dict.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)
        >>> def halve_lr(o, sd):
        ...     sd["param_groups"][0]["lr"] /= 2
        >>> handle = opt.register_load_state_dict_pre_hook(halve_lr)
        >>> opt.load_state_dict(opt.state_dict())
        >>> opt.param_groups[0]["lr"]
        0.05
        """
        return add_hook(self._load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Register ``hook(optimizer)``, run after loading.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> opt = optim.SGD([nn.Parameter(lucid.zeros(1))])
        >>> handle = opt.register_load_state_dict_post_hook(lambda o: print("loaded"))
        >>> opt.load_state_dict(opt.state_dict())
        loaded
        """
        return add_hook(self._load_state_dict_post_hooks, hook, prepend)
