"""Removable hook handles, as torch.utils.hooks has them."""

from __future__ import annotations

import itertools
from collections import OrderedDict


class RemovableHandle:
    """A handle that removes the hook it was returned for.

    Examples
    --------
    >>> from collections import OrderedDict
    >>> hooks = OrderedDict()
    >>> handle = RemovableHandle(hooks)
    >>> hooks[handle.id] = print
    >>> handle.remove()
    >>> len(hooks)
    0
    """

    _ids = itertools.count()

    def __init__(self, hooks_dict: OrderedDict):
        self._hooks = hooks_dict
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(hooks: OrderedDict, hook, prepend: bool = False) -> RemovableHandle:
    """Register ``hook`` in ``hooks`` (first if ``prepend``) and return its handle."""
    if not callable(hook):
        raise TypeError(f"hook must be callable, got {type(hook).__name__}")
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle
