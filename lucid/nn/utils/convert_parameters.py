"""One flat vector from many parameters, and back, as ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ..._ops.shape import cat as _cat
from .clip_grad import _tensor_list

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _one_device(params: list, caller: str) -> None:
    devices = sorted({p.device for p in params})
    if len(devices) > 1:
        raise TypeError(
            f"{caller}: found two parameters on different devices ({', '.join(devices)}), "
            "this is currently not supported."
        )


def parameters_to_vector(parameters: Tensor | Iterable[Tensor]) -> Tensor:
    """Flatten ``parameters`` into one 1-D tensor, in order.

    The result is recorded by autograd (gradients flow back to the parameters), as torch's.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor

    Returns
    -------
    Tensor
        The concatenation of every parameter flattened; its dtype is the parameters' common
        (promoted) dtype.

    Raises
    ------
    TypeError
        If ``parameters`` is not an iterable of Tensors, or they are on different devices
        (torch's TypeError).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.utils import parameters_to_vector
    >>> layer = nn.Linear(2, 1)
    >>> with lucid.no_grad():
    ...     _ = layer.weight.fill_(1.0)
    ...     _ = layer.bias.fill_(-1.0)
    >>> parameters_to_vector(layer.parameters())
    tensor([ 1.,  1., -1.], grad_fn=<CatBackward0>)
    """
    caller = "parameters_to_vector"
    params = _tensor_list(parameters, "parameters", caller)
    if not params:
        raise ValueError(f"{caller}: got no parameters")
    _one_device(params, caller)
    return _cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Tensor | Iterable[Tensor]) -> None:
    """Write the consecutive slices of the 1-D ``vec`` into ``parameters``, in order.

    Each parameter's storage is replaced by its slice (``param.data = ...``), as torch does:
    the Parameter objects stay the same, so a module and an optimizer built on them see the
    new values.

    Parameters
    ----------
    vec : Tensor
        A 1-D tensor with as many elements as the parameters together.
    parameters : Tensor or iterable of Tensor

    Raises
    ------
    TypeError
        If ``vec`` is not a Tensor, or the parameters are on different devices.
    ValueError
        If ``vec`` is not 1-D or its length is not the parameters' total size (torch fails
        later, or silently leaves the trailing elements unused).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.nn.utils import vector_to_parameters
    >>> layer = nn.Linear(2, 1)
    >>> vector_to_parameters(lucid.tensor([1.0, 2.0, 3.0]), layer.parameters())
    >>> layer.weight, layer.bias
    (Parameter containing:
    tensor([[1., 2.]], requires_grad=True), Parameter containing:
    tensor([3.], requires_grad=True))
    """
    caller = "vector_to_parameters"
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected lucid.Tensor, but got: {type(vec).__name__}")
    params = _tensor_list(parameters, "parameters", caller)
    _one_device(params, caller)
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(
            f"{caller}: vec must be a 1-D tensor of the parameters' total size {total}, got shape {vec.shape}"
        )
    pointer = 0
    for param in params:
        n = param.numel()
        param.data = vec.detach()[pointer:pointer + n].reshape(param.shape).to(param.device, param.dtype)
        pointer += n
