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

# issue 24, the names real scripts use: torch's aliases, the deprecated scalar-first orders,
# roll, sampling, as_tensor
from ._factory import as_tensor  # noqa: E402
from ._ops.elementwise import logical_not  # noqa: E402
from ._ops.methods import _eq as eq, _ge as ge, _gt as gt, _le as le, _logical_and as logical_and  # noqa: E402
from ._ops.methods import _logical_or as logical_or, _logical_xor as logical_xor, _lt as lt, _ne as ne  # noqa: E402
from ._ops.sampling import bernoulli, multinomial  # noqa: E402
from ._ops.scaled import add, addcdiv, addcmul, sub  # type: ignore[assignment]  # noqa: E402 - add/sub with torch's deprecated order too
from ._ops.shape import diag, roll, select  # noqa: E402
from ._ops.elementwise import acos, asin, atan, rsqrt, tan  # noqa: E402
from ._ops.linalg import cross, outer  # noqa: E402
from ._ops.elementwise import bitwise_and, bitwise_not, bitwise_or, bitwise_xor  # noqa: E402
from ._ops.reduction import prod  # noqa: E402
from ._ops.sorting import unique  # noqa: E402
from ._ops.elementwise import clamp_max, clamp_min, isinf, isnan, log2, log10, reciprocal, square  # noqa: E402
from ._ops.linalg import dot  # noqa: E402
from ._ops.predicates import allclose, equal, is_tensor, isclose, numel  # noqa: E402
from ._ops.scatter import masked_select, nonzero  # noqa: E402
from ._ops.shape import movedim  # noqa: E402
from ._dtype import get_default_dtype  # noqa: E402
from . import accelerator, cuda  # noqa: E402 - torch.accelerator's and torch.cuda's device queries

multiply, subtract, divide, true_divide, absolute, negative = mul, sub, div, div, abs, neg
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
concat = concatenate = cat
swapdims = swapaxes = transpose
arcsin, arccos, arctan, ger, moveaxis = asin, acos, atan, outer, movedim

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
    # issue 24, the names real scripts use
    "as_tensor", "roll", "multinomial", "bernoulli", "addcmul", "addcdiv",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
    "multiply", "subtract", "divide", "true_divide", "absolute", "negative",
    "greater", "greater_equal", "less", "less_equal", "not_equal", "concat", "concatenate", "swapdims", "swapaxes",
    "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "rsqrt", "prod", "select", "diag", "outer", "ger",
    "unique", "accelerator", "cuda", "cross", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "log10", "log2", "square", "reciprocal", "isnan", "isinf", "clamp_min", "clamp_max", "dot", "allclose",
    "equal", "isclose", "is_tensor", "numel", "masked_select", "nonzero", "movedim", "moveaxis", "get_default_dtype",
]
