"""lucid: a small, readable autograd framework on NumPy (``"cpu"``) and MLX (``"gpu"``).

Its centrepiece is :mod:`lucid.optim`, torch.optim's semantics to the last bit.

Examples
--------
>>> import lucid
>>> w = lucid.tensor([1.0, -2.0], requires_grad=True)
>>> loss = ((w * 3) ** 2).sum()
>>> loss.backward()
>>> w.grad
tensor([ 18., -36.])
"""

from . import _backend
from ._autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._dtype import bool_ as bool  # noqa: A001 - torch's name
from ._dtype import dtype, finfo, float16, float32, float64, int32, int64
from ._factory import arange, full, manual_seed, ones, ones_like, rand, randn, tensor, zeros, zeros_like
from ._ops import methods as _methods  # noqa: F401 - attaches the ops to Tensor
from ._ops.elementwise import abs, clamp, exp, isfinite, log, matmul, relu, sigmoid, sqrt, tanh, where
from ._ops.reduction import all, any, log_softmax, max, mean, min, sum
from ._ops.shape import cat, flatten, permute, reshape, squeeze, stack, transpose, unsqueeze
from ._tensor import Tensor, eval  # noqa: A004 - mx.eval's name: evaluate lazy (MLX) tensors now
from ._sparse import SparseTensor, sparse_coo_tensor

from . import nn, optim  # noqa: E402 - after the core they build on, as torch.nn and torch.optim
from .serialization import load, save  # noqa: E402 - checkpoints hold nn.Parameters

half, double, long = float16, float64, int64
clip = clamp

__version__ = "0.1.0"


def is_available(device) -> bool:
    """Whether ``device`` ("cpu" or "gpu") can be used here; "gpu" needs MLX installed.

    Examples
    --------
    >>> import lucid
    >>> lucid.is_available("cpu")
    True
    """
    return _backend.is_available(device)


__all__ = [
    "Tensor", "dtype", "finfo", "bool", "float16", "float32", "float64", "int32", "int64", "half", "double", "long",
    "tensor", "zeros", "ones", "full", "zeros_like", "ones_like", "randn", "rand", "arange", "manual_seed",
    "eval", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "is_available",
    "abs", "clamp", "clip", "exp", "isfinite", "log", "matmul", "relu", "sigmoid", "sqrt", "tanh", "where",
    "all", "any", "log_softmax", "max", "mean", "min", "sum",
    "cat", "flatten", "permute", "reshape", "squeeze", "stack", "transpose", "unsqueeze",
    "SparseTensor", "sparse_coo_tensor",
    "save", "load",
]
