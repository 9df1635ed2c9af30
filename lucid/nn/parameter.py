"""``lucid.nn.Parameter``: the tensors a Module trains and an optimizer keys on."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor that is a module's trainable weight.

    Assigning a Parameter to a :class:`~lucid.nn.Module` attribute registers it. Its identity
    is what optimizers key their state on: ``Module.to()``, ``.half()`` and ``.double()``
    convert a Parameter in place and keep the same object.

    Parameters
    ----------
    data : Tensor, optional
        The initial values (shared with ``data`` where possible, as in torch). Empty if omitted.
    requires_grad : bool, default True

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> p = nn.Parameter(lucid.zeros(2))
    >>> p
    Parameter containing:
    tensor([0., 0.], requires_grad=True)
    >>> p.is_leaf, p.requires_grad
    (True, True)
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = Tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor as data, got {type(data).__name__}")
        # a Tensor subclass building itself on data's storage: Tensor's construction seam
        backend = data._backend
        array = data._data if backend.is_exclusive(data._data) else backend.copy(data._data)
        self._init(array, backend)
        self.requires_grad = requires_grad

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    @classmethod
    def _prints_as_tensor(cls) -> bool:
        return cls is Parameter  # as torch's: a subclass prints by its own name

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        # as torch's Parameter: new storage, the same requires_grad, and no grad
        result = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.detach(), self.requires_grad))


def _rebuild(data, requires_grad):
    return Parameter(data, requires_grad)
