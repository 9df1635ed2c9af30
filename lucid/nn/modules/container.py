"""Containers: modules that hold other modules."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

from ..._tensor import Tensor
from ..module import Module, _addindent
from ..parameter import Parameter

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


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

    # a container's children are modules, never None (Module's registry allows None)
    _modules: OrderedDict[str, Module]  # type: ignore[assignment]

    @overload
    def __init__(self, *args: Module) -> None: ...
    @overload
    def __init__(self, modules: OrderedDict[str, Module], /) -> None: ...
    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _index(self, idx: SupportsIndex) -> int:
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return idx % size

    @overload
    def __getitem__(self, idx: slice) -> Self: ...
    @overload
    def __getitem__(self, idx: SupportsIndex) -> Module: ...
    def __getitem__(self, idx: slice | SupportsIndex) -> Self | Module:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[self._index(idx)]

    def __setitem__(self, idx: SupportsIndex, module: Module) -> None:
        key = list(self._modules)[self._index(idx)]
        setattr(self, key, module)

    def __delitem__(self, idx: slice | SupportsIndex) -> None:
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

    def __iter__(self) -> Iterator[Module]:
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

    def extend(self, modules: Iterable[Module]) -> "Sequential":
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

    def forward(self, input: Any) -> Any:
        """Pass ``input`` through each module in order and return the last output.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> nn.Sequential(nn.ReLU(), nn.Sigmoid())(lucid.tensor([-5.0, 0.0]))
        tensor([0.5000, 0.5000])
        """
        for module in self:
            input = module(input)
        return input


def _index(idx: SupportsIndex, size: int, kind: str = "index") -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"{kind} {idx} is out of range")
    return idx % size


class ModuleList(Module):
    """A list of modules, registered as children ``"0"``, ``"1"``, ... so that their parameters count.

    Parameters
    ----------
    modules : iterable of Module, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    >>> layers.append(nn.ReLU())
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
      (3): ReLU()
    )
    >>> len(layers), len(list(layers.parameters())), type(layers[1:]).__name__
    (4, 6, 'ModuleList')
    """

    # a container's children are modules, never None (Module's registry allows None)
    _modules: OrderedDict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @overload
    def __getitem__(self, idx: slice) -> Self: ...
    @overload
    def __getitem__(self, idx: SupportsIndex) -> Module: ...
    def __getitem__(self, idx: slice | SupportsIndex) -> Self | Module:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: SupportsIndex, module: Module) -> None:
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx: slice | SupportsIndex) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules)[idx]:
                delattr(self, key)
        else:
            delattr(self, str(_index(idx, len(self))))
        self._modules = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return type(self)([*self, *other])

    def append(self, module: Module) -> "ModuleList":
        """Add ``module`` at the end; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> len(nn.ModuleList().append(nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append each module of the iterable ``modules``; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> len(nn.ModuleList([nn.ReLU()]).extend([nn.Tanh(), nn.ReLU()]))
        3
        """
        if isinstance(modules, (str, bytes)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put ``module`` before position ``index``.

        Examples
        --------
        >>> from lucid import nn
        >>> layers = nn.ModuleList([nn.ReLU()])
        >>> layers.insert(0, nn.Tanh())
        >>> layers[0]
        Tanh()
        """
        modules = list(self._modules.values())
        modules.insert(operator.index(index), module)
        self._modules = OrderedDict()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)

    def pop(self, key: SupportsIndex = -1) -> Module:
        """Remove the module at position ``key`` (the last by default) and return it.

        Examples
        --------
        >>> from lucid import nn
        >>> layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        >>> layers.pop(0), len(layers)
        (ReLU(), 1)
        """
        module = self[key]
        del self[key]
        return module

    def __repr__(self) -> str:
        # torch's: runs of modules that print alike are shown once, as "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        lines, start = [], 0
        for end in range(1, len(reprs) + 1):
            if end == len(reprs) or reprs[end] != reprs[start]:
                text = _addindent(reprs[start], 2)
                if end - start == 1:
                    lines.append(f"({start}): {text}")
                else:
                    lines.append(f"({start}-{end - 1}): {end - start} x {text}")
                start = end
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered as children under their keys.

    Parameters
    ----------
    modules : mapping or iterable of (str, Module) pairs, optional

    Examples
    --------
    >>> from lucid import nn
    >>> heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Tanh()})
    >>> heads["c"] = nn.ReLU()
    >>> list(heads), "a" in heads, len(heads)
    (['a', 'b', 'c'], True, 3)
    >>> list(heads.state_dict())
    ['a.weight', 'a.bias']
    """

    # a container's children are modules, never None (Module's registry allows None)
    _modules: OrderedDict[str, Module]  # type: ignore[assignment]

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module.

        Examples
        --------
        >>> from lucid import nn
        >>> d = nn.ModuleDict({"a": nn.ReLU()})
        >>> d.clear(); len(d)
        0
        """
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module ``key`` and return it.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.ModuleDict({"a": nn.ReLU()}).pop("a")
        ReLU()
        """
        module = self[key]
        del self[key]
        return module

    def keys(self) -> KeysView[str]:
        """The keys, in order.

        Examples
        --------
        >>> from lucid import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).keys())
        ['a']
        """
        return self._modules.keys()

    def items(self) -> ItemsView[str, Module]:
        """The ``(key, module)`` pairs, in order.

        Examples
        --------
        >>> from lucid import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).items())
        [('a', ReLU())]
        """
        return self._modules.items()

    def values(self) -> ValuesView[Module]:
        """The modules, in order.

        Examples
        --------
        >>> from lucid import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).values())
        [ReLU()]
        """
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) the modules of a mapping or of an iterable of ``(key, module)`` pairs.

        Examples
        --------
        >>> from lucid import nn
        >>> d = nn.ModuleDict()
        >>> d.update([("x", nn.ReLU()), ("y", nn.Tanh())])
        >>> list(d)
        ['x', 'y']
        """
        given: Any = modules  # a mapping, a ModuleDict or (key, module) pairs, told apart as torch does
        if isinstance(given, (OrderedDict, ModuleDict, dict)) or hasattr(given, "keys"):
            for key, module in given.items():
                self[key] = module
            return
        for j, pair in enumerate(given):
            if not hasattr(pair, "__iter__") or isinstance(pair, (str, bytes)):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is "
                                + type(pair).__name__)
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required")
            self[pair[0]] = pair[1]


def _as_parameter(value):
    """A Tensor that is not yet a Parameter becomes one, as torch's ParameterList/Dict do."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _parameter_line(key, value) -> str:
    if isinstance(value, Tensor):
        kind = "Parameter containing" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(n) for n in value.shape)
        device = "" if value.device == "cpu" else f" ({value.device})"
        return f"({key}): {kind}: [{value.dtype} of size {size}{device}]"
    return f"({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of Parameters, registered under ``"0"``, ``"1"``, ...; tensors given are made Parameters.

    Parameters
    ----------
    values : iterable, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> params = nn.ParameterList([lucid.zeros(2), nn.Parameter(lucid.ones(3, 2))])
    >>> params
    ParameterList(
        (0): Parameter containing: [lucid.float32 of size 2]
        (1): Parameter containing: [lucid.float32 of size 3x2]
    )
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx: slice | SupportsIndex) -> Any:  # a Parameter, or a value that is not a tensor
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self))))

    def __setitem__(self, idx: SupportsIndex, param: Any) -> None:
        setattr(self, str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def append(self, value: Any) -> "ParameterList":
        """Add ``value`` (a Parameter; a Tensor is made one) at the end; return self.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> len(nn.ParameterList().append(lucid.zeros(1)))
        1
        """
        index = len(self)
        self._size += 1
        setattr(self, str(index), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append each value of the iterable ``values``; return self.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> len(nn.ParameterList().extend([lucid.zeros(1), lucid.ones(1)]))
        2
        """
        if isinstance(values, (str, bytes, Tensor)) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(i, p) for i, p in enumerate(self))

    def __repr__(self) -> str:
        body = self.extra_repr()
        return self._get_name() + "(" + ("\n    " + body.replace("\n", "\n    ") + "\n" if body else "") + ")"


class ParameterDict(Module):
    """An ordered dict of Parameters, registered under their keys; tensors given are made Parameters.

    Parameters
    ----------
    parameters : mapping or iterable of (str, value) pairs, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> params = nn.ParameterDict({"shift": lucid.zeros(2), "scale": lucid.ones(2)})  # a dict is sorted by key
    >>> params["bias"] = lucid.zeros(2)
    >>> list(params), isinstance(params["bias"], nn.Parameter)
    (['scale', 'shift', 'bias'], True)
    >>> list(params.state_dict())
    ['scale', 'shift', 'bias']
    """

    def __init__(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}  # the keys in order (a dict as an ordered set)
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:  # a Parameter, or a value that is not a tensor
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"attribute name should be a string. Got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> KeysView[str]:
        """The keys, in order.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> list(nn.ParameterDict({"w": lucid.zeros(1)}).keys())
        ['w']
        """
        return self._keys.keys()

    def items(self) -> Iterator[tuple[str, Any]]:
        """The ``(key, parameter)`` pairs, in order.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> [k for k, _ in nn.ParameterDict({"w": lucid.zeros(1)}).items()]
        ['w']
        """
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Iterator[Any]:
        """The parameters, in order.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> [p.shape for p in nn.ParameterDict({"w": lucid.zeros(1)}).values()]
        [(1,)]
        """
        return (self[k] for k in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        """The parameter ``key``, or ``default`` if there is none.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.ParameterDict().get("w", 0)
        0
        """
        return self[key] if key in self else default

    def pop(self, key: str) -> Any:
        """Remove the parameter ``key`` and return it.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> d = nn.ParameterDict({"w": lucid.zeros(1)})
        >>> d.pop("w").shape, len(d)
        ((1,), 0)
        """
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        """Remove every parameter.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> d = nn.ParameterDict({"w": lucid.zeros(1)})
        >>> d.clear(); len(d)
        0
        """
        for key in list(self._keys):
            del self[key]

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add (or replace) the values of a mapping or of an iterable of ``(key, value)`` pairs.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> d = nn.ParameterDict()
        >>> d.update([("a", lucid.zeros(1)), ("b", lucid.ones(1))])
        >>> list(d)
        ['a', 'b']
        """
        given: Any = parameters  # a mapping, a ParameterDict or (key, value) pairs, told apart as torch does
        if isinstance(given, (OrderedDict, ParameterDict)):
            pairs = [(key, given[key]) for key in given.keys()]
        elif hasattr(given, "keys"):  # a plain mapping: sorted by key, as torch does
            pairs = sorted((key, given[key]) for key in given.keys())
        else:
            pairs = []
            for j, pair in enumerate(given):
                pair = tuple(pair)
                if len(pair) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(pair)}; "
                                     "2 is required")
                pairs.append(pair)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_parameter_line(k, p) for k, p in self.items())

    __repr__ = ParameterList.__repr__
