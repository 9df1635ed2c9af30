"""Containers: modules that hold other modules."""

from __future__ import annotations

import operator
from collections import OrderedDict

from ..module import Module

__all__ = ["Sequential"]


class Sequential(Module):
    """A chain of modules: the output of each is the input of the next.

    Parameters
    ----------
    *args : Module, or one OrderedDict of names to modules
        The modules in order; given positionally they are named ``"0"``, ``"1"``, ...

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> net(lucid.ones(3, 4)).shape
    (3, 2)
    >>> len(net), net[1], net[-1].out_features
    (3, ReLU(), 2)
    >>> net[:2]
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
    )
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _index(self, idx) -> int:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return idx % size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx, module) -> None:
        key = list(self._modules)[self._index(idx)]
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        if isinstance(idx, slice):
            for key in keys[idx]:
                delattr(self, key)
        else:
            delattr(self, keys[self._index(idx)])
        # renumber, so that the names stay "0", "1", ... (as torch does)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        """Add ``module`` at the end; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> len(nn.Sequential(nn.ReLU()).append(nn.Tanh()))
        2
        """
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules) -> "Sequential":
        """Append each module of the iterable ``modules``; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> len(nn.Sequential().extend([nn.ReLU(), nn.Tanh()]))
        2
        """
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Put ``module`` before position ``index``; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Sequential(nn.ReLU()).insert(0, nn.Tanh())
        Sequential(
          (0): Tanh()
          (1): ReLU()
        )
        """
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        size = len(self)
        index = operator.index(index)
        if not -size <= index <= size:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += size
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(modules))
        return self

    def forward(self, input):
        """Pass ``input`` through each module in order and return the last output.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.Sequential(nn.ReLU(), nn.Sigmoid())(lucid.tensor([-5.0, 0.0]))
        tensor([0.5, 0.5])
        """
        for module in self:
            input = module(input)
        return input
