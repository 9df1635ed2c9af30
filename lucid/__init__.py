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

import builtins

from . import _backend
from ._autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from ._generator import Generator
from ._device import device
from ._dtype import bool_ as bool  # noqa: A001 - torch's name
from ._dtype import dtype, finfo, float16, float32, float64, int32, int64
from ._factory import (arange, empty, empty_like, eye, from_numpy, full, full_like, get_rng_state, initial_seed,
                       linspace, manual_seed, ones, ones_like, rand, rand_like, randint, randn, randn_like, randperm,
                       seed, set_rng_state, tensor, zeros, zeros_like)
from ._ops import methods as _methods  # noqa: F401 - attaches the ops to Tensor
from ._ops.elementwise import (abs, add, ceil, clamp, cos, div, erf, exp, expm1, floor, floor_divide, isfinite, log,
                               log1p, matmul, maximum, minimum, mul, neg, pow, relu, remainder, round, sigmoid, sign,
                               sin, sqrt, sub, tanh, tril, triu, where)
from ._ops.linalg import bmm, einsum, mm, norm
from ._ops.reduction import (all, any, argmax, argmin, cumsum, log_softmax, logsumexp, max, mean, min, softmax, std,
                             sum, var)
from ._ops.scatter import gather, index_add, index_select, masked_fill, scatter, scatter_add
from ._ops.shape import (cat, chunk, flatten, flip, narrow, permute, reshape, split, squeeze, stack, t, transpose,
                         unbind, unsqueeze)
from ._ops.sorting import argsort, sort, topk
from ._tensor import Tensor, eval  # noqa: A004 - mx.eval's name: evaluate lazy (MLX) tensors now
from ._tensor_types import BoolTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor
from ._sparse import SparseTensor, sparse_coo_tensor
from ._tensor_str import set_printoptions  # printing (issue 24): torch keeps get_printoptions in _tensor_str too

from . import nn, optim, utils  # noqa: E402 - after the core they build on, as torch.nn and torch.optim
from . import random  # noqa: E402 - torch.random's names for the generator's seed and state
from .serialization import load, save  # noqa: E402 - checkpoints hold nn.Parameters
from . import autograd  # noqa: E402 - issue 24 (autograd): torch.autograd's names, over the core and nn

# torch's other names for the dtypes
half, float, double, long, int = float16, float32, float64, int64, int32  # noqa: A001
clip = clamp

__version__ = "0.1.0"


def is_available(device: str) -> builtins.bool:
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
    "float", "int", "device", "Generator",
    "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "BoolTensor",
    "tensor", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "empty", "empty_like", "eye",
    "randn", "rand", "randn_like", "rand_like", "randint", "randperm", "arange", "linspace", "from_numpy",
    "manual_seed", "initial_seed", "seed", "get_rng_state", "set_rng_state",
    "eval", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode", "is_available",
    "add", "sub", "mul", "div", "pow", "neg", "sign", "maximum", "minimum", "remainder", "floor_divide",
    "floor", "ceil", "round",
    "abs", "clamp", "clip", "cos", "erf", "exp", "expm1", "isfinite", "log", "log1p", "matmul", "relu", "sigmoid", "sin", "sqrt", "tanh",
    "tril", "triu", "where", "mm", "bmm", "einsum", "norm",
    "all", "any", "argmax", "argmin", "cumsum", "log_softmax", "logsumexp", "max", "mean", "min", "softmax",
    "std", "sum", "var",
    "gather", "scatter", "scatter_add", "index_select", "index_add", "masked_fill", "sort", "argsort", "topk",
    "cat", "chunk", "flatten", "flip", "narrow", "permute", "reshape", "split", "squeeze", "stack", "t", "transpose",
    "unbind", "unsqueeze",
    "SparseTensor", "sparse_coo_tensor",
    "save", "load",
    # printing (issue 24)
    "set_printoptions",
]
