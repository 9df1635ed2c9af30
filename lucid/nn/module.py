"""``lucid.nn.Module``: the base class of every layer and model.

A Module owns three ordered dicts, filled by plain attribute assignment:

- ``_parameters``: the :class:`~lucid.nn.Parameter` objects it trains;
- ``_buffers``: tensors that are state but not trained (registered with :meth:`Module.register_buffer`);
- ``_modules``: its child modules.

Conversions (``to``, ``half``, ``gpu``, ...) change each Parameter *in place*, so the Parameter
objects an optimizer was built on stay the ones the module uses.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .. import _dtype
from .._autograd import no_grad
from .._tensor import Tensor, parse_to
from ..utils.hooks import RemovableHandle, add_hook
from .parameter import Parameter

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Module", "train_hooks_paused"]

#: Set while :func:`train_hooks_paused` holds: ``Module.train`` then runs no train hooks.
_TRAIN_HOOKS_PAUSED: ContextVar[bool] = ContextVar("train_hooks_paused", default=False)


@contextmanager
def train_hooks_paused() -> Iterator[None]:
    """Within the block, :meth:`Module.train` and :meth:`Module.eval` change modes only,
    running no hook of :meth:`Module.register_train_hook`.

    For code that switches a model's mode for a moment and back, such as
    :func:`lucid.optim.swa_utils.update_bn` (BatchNorm statistics in training mode): an
    optimizer following the model (Schedule-Free's ``follow``) keeps its weights meanwhile.

    Examples
    --------
    >>> from lucid import nn
    >>> from lucid.nn.module import train_hooks_paused
    >>> net = nn.Linear(1, 1)
    >>> handle = net.register_train_hook(lambda module, mode: print("mode", mode))
    >>> _ = net.eval()
    mode False
    >>> with train_hooks_paused():
    ...     _ = net.train()
    >>> net.training
    True
    """
    token = _TRAIN_HOOKS_PAUSED.set(True)
    try:
        yield
    finally:
        _TRAIN_HOOKS_PAUSED.reset(token)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What :meth:`Module.load_state_dict` returns: the keys it did not find, and those it did not use."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return f"lucid.{type(value).__name__}"
    return type(value).__name__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _parse_to(args, kwargs):
    """``Module.to``'s arguments as ``(device or None, dtype or None)``; devices may be objects
    with a ``type`` (torch.device)."""
    if len(args) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments ({len(args)} given)")
    device, dtype = parse_to(args, kwargs, is_device=lambda arg: isinstance(arg, str) or hasattr(arg, "type"))
    if dtype is not None and not dtype.is_floating_point:
        raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
    return device, dtype


def _convert_in_place(tensor: Tensor, fn) -> None:
    """Give ``tensor`` the storage of ``fn(tensor)``, keeping the object (a no-op when fn changes nothing)."""
    detached = tensor.detach()
    converted = fn(detached)
    if converted is not detached:
        tensor.data = converted


class Module:
    """Base class for all neural-network modules; subclass it and define ``forward``.

    Assigning a :class:`~lucid.nn.Parameter`, a Module, or (for a registered name) a buffer as
    an attribute registers it, so that :meth:`parameters`, :meth:`state_dict`, :meth:`to` and the
    rest reach it. A subclass must call ``super().__init__()`` before assigning any of them.

    Attributes
    ----------
    training : bool
        Whether the module is in training mode (see :meth:`train` and :meth:`eval`).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> class Affine(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = nn.Parameter(lucid.ones(2))
    ...         self.shift = nn.Parameter(lucid.zeros(2))
    ...     def forward(self, x):
    ...         return x * self.scale + self.shift
    >>> m = Affine()
    >>> m(lucid.tensor([1.0, 2.0]))
    tensor([1., 2.], grad_fn=<AddBackward0>)
    >>> [name for name, _ in m.named_parameters()]
    ['scale', 'shift']
    >>> m
    Affine()
    """

    training: bool
    _parameters: OrderedDict[str, Parameter | None]
    _buffers: OrderedDict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: OrderedDict[str, Module | None]
    _train_hooks: OrderedDict[int, Callable[[Module, bool], Any]]

    def __init__(self) -> None:
        super().__setattr__("training", True)
        super().__setattr__("_parameters", OrderedDict())
        super().__setattr__("_buffers", OrderedDict())
        super().__setattr__("_non_persistent_buffers_set", set())
        super().__setattr__("_modules", OrderedDict())
        super().__setattr__("_train_hooks", OrderedDict())

    def __getstate__(self) -> dict:
        # train hooks tie this module to something outside it (an optimizer that follows its
        # mode): a copy or a pickle has none, so that switching a copy moves nobody's weights
        return {**self.__dict__, "_train_hooks": OrderedDict()}

    # --- calling ---------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module; every subclass defines it. Call the module, not this.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Module().forward()
        Traceback (most recent call last):
        ...
        NotImplementedError: Module [Module] is missing the required "forward" function
        """
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # --- registration ----------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add ``param`` (a Parameter, or None for an absent one) to the module as ``name``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> m = nn.Module()
        >>> m.register_parameter("w", nn.Parameter(lucid.zeros(1)))
        >>> m.register_parameter("b", None)
        >>> list(m._parameters)
        ['w', 'b']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(lucid.nn.Parameter or None required)"
            )
        if param is not None and not param.is_leaf:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add ``tensor`` (or None) to the module as the buffer ``name``: state, but not trained.

        Buffers follow :meth:`to` and, if ``persistent``, appear in :meth:`state_dict`.
        Floating-point casts (``half``, ``double``, ``to(dtype)``) skip integer buffers.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> m = nn.Module()
        >>> m.register_buffer("steps", lucid.tensor([0]))
        >>> m.steps
        tensor([0])
        >>> m.double().steps.dtype
        lucid.int64
        >>> list(m.state_dict())
        ['steps']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (lucid.Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add the child ``module`` (or None) as ``name``; the same as assigning the attribute.

        Examples
        --------
        >>> from lucid import nn
        >>> m = nn.Module()
        >>> m.add_module("act", nn.ReLU())
        >>> m
        Module(
          (act): ReLU()
        )
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def __setattr__(self, name: str, value: object) -> None:
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(lucid.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' (lucid.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (lucid.Tensor or None expected)")
            buffers[name] = value
            return
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> Any:  # a registered parameter, buffer or submodule
        # only called when ordinary lookup fails: look in the three registries
        state = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = state.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = itertools.chain(super().__dir__(), self._parameters, self._buffers, self._modules)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # --- walking the tree ------------------------------------------------------------------
    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Yield ``(name, module)`` for this module and every module below it, each once.

        Parameters
        ----------
        memo : set, optional
            Modules already yielded (used by the recursion).
        prefix : str, default ""
            Prepended to every name.
        remove_duplicate : bool, default True
            Yield a module reachable by several paths only the first time.

        Examples
        --------
        >>> from lucid import nn
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        >>> [name for name, _ in net.named_modules()]
        ['', '0', '1']
        """
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Yield this module and every module below it, each once.

        Examples
        --------
        >>> from lucid import nn
        >>> relu = nn.ReLU()
        >>> net = nn.Sequential(relu, relu)
        >>> len(list(net.modules()))
        2
        """
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Yield ``(name, module)`` for each direct child, each once.

        Examples
        --------
        >>> from lucid import nn
        >>> [name for name, _ in nn.Sequential(nn.Tanh(), nn.Sigmoid()).named_children()]
        ['0', '1']
        """
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        """Yield each direct child module, each once.

        Examples
        --------
        >>> from lucid import nn
        >>> list(nn.Sequential(nn.Tanh()).children())
        [Tanh()]
        """
        for _, module in self.named_children():
            yield module

    def _named_members(self, members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Yield ``(name, parameter)`` pairs; a Parameter shared by several modules comes once.

        Parameters
        ----------
        prefix : str, default ""
            Prepended to every name.
        recurse : bool, default True
            Include the parameters of submodules; False gives only this module's own.
        remove_duplicate : bool, default True
            Yield a shared Parameter only under its first name.

        Examples
        --------
        >>> from lucid import nn
        >>> net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1, bias=False))
        >>> [(name, p.shape) for name, p in net.named_parameters()]
        [('0.weight', (2, 3)), ('0.bias', (2,)), ('1.weight', (1, 2))]
        """
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Yield the module's Parameters (with those of submodules if ``recurse``), each once.

        This is what an optimizer is built on.

        Examples
        --------
        >>> from lucid import nn
        >>> layer = nn.Linear(4, 4)
        >>> tied = nn.Sequential(layer, nn.ReLU(), layer)
        >>> len(list(tied.parameters()))
        2
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Yield ``(name, buffer)`` pairs, like :meth:`named_parameters` for buffers.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> m = nn.Sequential(nn.Module())
        >>> m[0].register_buffer("mean", lucid.zeros(3))
        >>> [name for name, _ in m.named_buffers()]
        ['0.mean']
        """
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Yield the module's buffers (with those of submodules if ``recurse``), each once.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> m = nn.Module()
        >>> m.register_buffer("mean", lucid.zeros(3))
        >>> [b.shape for b in m.buffers()]
        [(3,)]
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn: Callable[[Module], object]) -> Self:
        """Call ``fn`` on every submodule (children first) and then on this module; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> names = []
        >>> _ = nn.Sequential(nn.Linear(1, 1), nn.ReLU()).apply(lambda m: names.append(type(m).__name__))
        >>> names
        ['Linear', 'ReLU', 'Sequential']
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- modes and gradients -------------------------------------------------------------
    def train(self, mode: bool = True) -> Self:
        """Set training mode (``mode=True``) or evaluation mode on this module and all below; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> net = nn.Sequential(nn.ReLU())
        >>> net.train(False)[0].training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        if not _TRAIN_HOOKS_PAUSED.get():
            for hook in list(self.__dict__.get("_train_hooks", {}).values()):
                hook(self, mode)
        return self

    def register_train_hook(self, hook: Callable[[Module, bool], Any]) -> RemovableHandle:
        """Register ``hook(module, mode)``, run after :meth:`train` (``mode=True``) or
        :meth:`eval` (``mode=False``) of this module has set the modes; returns a handle with
        ``remove()``.

        torch's Module has no such hook; lucid's Schedule-Free optimizers use it to follow a
        model's mode (``optimizer.follow(model)``). It runs for calls on this module, not for
        ``train()`` of a child alone, nor within :func:`train_hooks_paused`. A copy of the
        module (``copy.deepcopy``, pickling) has no train hooks.

        Examples
        --------
        >>> from lucid import nn
        >>> net = nn.Sequential(nn.Linear(2, 2))
        >>> handle = net.register_train_hook(lambda module, mode: print("training:", mode))
        >>> _ = net.eval()
        training: False
        >>> handle.remove()
        >>> _ = net.train()
        """
        if "_train_hooks" not in self.__dict__:  # a module whose __init__ skipped Module's
            super().__setattr__("_train_hooks", OrderedDict())
        return add_hook(self._train_hooks, hook)

    def eval(self) -> Self:
        """Set evaluation mode, the same as ``train(False)``; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.ReLU().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        """Set ``requires_grad`` on every parameter (e.g. False to freeze them); return self.

        Examples
        --------
        >>> from lucid import nn
        >>> layer = nn.Linear(2, 2).requires_grad_(False)
        >>> [p.requires_grad for p in layer.parameters()]
        [False, False]
        """
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters.

        Parameters
        ----------
        set_to_none : bool, default True
            Set each ``.grad`` to None. If False, write zeros into the existing gradient
            tensors instead (in place, keeping the same objects).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.Linear(2, 1)
        >>> layer(lucid.ones(2)).sum().backward()
        >>> grad = layer.weight.grad
        >>> layer.zero_grad(set_to_none=False)
        >>> layer.weight.grad is grad, layer.weight.grad
        (True, tensor([[0., 0.]]))
        >>> layer.zero_grad()
        >>> layer.weight.grad is None
        True
        """
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                with no_grad():
                    grad.zero_()

    # --- conversions ---------------------------------------------------------------------
    def _apply(self, fn):
        """Convert every parameter (and its grad) in place and replace every buffer with ``fn(tensor)``."""
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                _convert_in_place(param, fn)
                if param.grad is not None:
                    _convert_in_place(param.grad, fn)
            for name, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[name] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Self:
        """Move and/or cast the parameters and buffers; return self.

        Accepts a device (``"cpu"``, ``"gpu"``), a floating-point dtype, both, or a tensor to copy
        both from. Each Parameter is converted in place: it stays the same object (so an
        optimizer built on it keeps working), and its ``.grad``, if any, follows it. Integer
        buffers change device but keep their dtype.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.Linear(2, 2)
        >>> weight = layer.weight
        >>> layer.to(lucid.float64).weight is weight, weight.dtype
        (True, lucid.float64)
        >>> layer.to(lucid.int64)
        Traceback (most recent call last):
        ...
        TypeError: nn.Module.to only accepts floating point dtypes, but got desired dtype=lucid.int64
        """
        device, dtype = _parse_to(args, kwargs)

        def convert(t):
            return t.to(device or t.device, dtype if dtype is not None and t.is_floating_point() else t.dtype)

        return self._apply(convert)

    def _cast(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def half(self) -> Self:
        """Cast floating-point parameters and buffers to ``float16`` in place; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Linear(2, 2).half().weight.dtype
        lucid.float16
        """
        return self._cast(_dtype.float16)

    def float(self) -> Self:
        """Cast floating-point parameters and buffers to ``float32`` in place; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Linear(2, 2).double().float().weight.dtype
        lucid.float32
        """
        return self._cast(_dtype.float32)

    def double(self) -> Self:
        """Cast floating-point parameters and buffers to ``float64`` in place; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Linear(2, 2).double().weight.dtype
        lucid.float64
        """
        return self._cast(_dtype.float64)

    def cpu(self) -> Self:
        """Move all parameters and buffers to the ``"cpu"`` (NumPy) device; return self.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Linear(2, 2).cpu().weight.device
        device(type='cpu')
        """
        return self.to("cpu")

    def gpu(self) -> Self:
        """Move all parameters and buffers to the ``"gpu"`` (MLX) device; return self.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.Linear(2, 2)
        >>> weight = layer.weight
        >>> if lucid.is_available("gpu"):
        ...     _ = layer.gpu()
        ...     assert layer.weight is weight and weight.device == "gpu"
        """
        return self.to("gpu")

    # --- state dict ----------------------------------------------------------------------
    def _state_items(self, prefix=""):
        """``(name, tensor)`` for every parameter and persistent buffer, every path (shared ones repeat)."""
        for name, param in self._parameters.items():
            if param is not None:
                yield prefix + name, param
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                yield prefix + name, buf
        for name, module in self._modules.items():
            if module is not None:
                yield from module._state_items(prefix + name + ".")

    def state_dict(self, *, destination: dict[str, Tensor] | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """An ordered dict from names to the module's parameters and persistent buffers.

        The values are detached tensors that share storage with the module's (as in torch),
        unless ``keep_vars`` asks for the Parameters themselves. On the ``"gpu"`` device, where
        arrays are values, a later in-place update of the module rebinds its storage, so the
        dict keeps the values it was taken with; copy explicitly if you rely on either behaviour.

        Parameters
        ----------
        destination : dict, optional
            Where to put the entries (a new OrderedDict by default); returned.
        prefix : str, default ""
            Prepended to every key.
        keep_vars : bool, default False
            Return the Parameters and buffers themselves instead of detached tensors.

        Examples
        --------
        >>> from lucid import nn
        >>> net = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        >>> sd = net.state_dict()
        >>> list(sd), sd["0.weight"].requires_grad
        (['0.weight', '0.bias'], False)
        """
        if destination is None:
            destination = OrderedDict()
        for name, tensor in self._state_items(prefix):
            destination[name] = tensor if keep_vars else tensor.detach()
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> _IncompatibleKeys:
        """Copy the values of ``state_dict`` into the module's parameters and buffers, in place.

        Every entry is checked (missing and unexpected keys, non-tensors, shape mismatches)
        before anything is copied, so a failing load leaves the module unchanged. Values are
        written with ``copy_`` under :class:`lucid.no_grad`: each Parameter stays the same object
        and keeps its device and dtype (values are moved and cast to them).

        Parameters
        ----------
        state_dict : Mapping
            Names to tensors, as :meth:`state_dict` returns.
        strict : bool, default True
            Raise if the keys of ``state_dict`` and of the module differ. Shape mismatches and
            non-tensor values raise either way.

        Returns
        -------
        IncompatibleKeys
            A named tuple ``(missing_keys, unexpected_keys)`` of lists of names.

        Raises
        ------
        RuntimeError
            Listing every problem found, with the module unchanged.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        >>> b.load_state_dict({"weight": lucid.zeros(2, 2)}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        own: OrderedDict[str, Tensor] = OrderedDict()
        for name, tensor in self._state_items():
            own.setdefault(name, tensor)
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        errors = []
        for name, tensor in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{name}", expected lucid.Tensor or Tensor-like '
                    f"object from checkpoint but received {type(value)}"
                )
            elif value.shape != tensor.shape:
                errors.append(
                    f"size mismatch for {name}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {tensor.shape}."
                )
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        with no_grad():
            for name, tensor in self._state_items():
                if name in state_dict:
                    tensor.copy_(state_dict[name])
        return _IncompatibleKeys(missing, unexpected)

    # --- printing ------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The module's own settings for :func:`repr` (empty by default); override it in layers.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + _addindent(repr(module), 2) for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"
