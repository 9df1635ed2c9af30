"""Sampling from a tensor of probabilities: ``multinomial`` and ``bernoulli``.

The draws come from lucid's generator (:func:`lucid.manual_seed`, ``generator=``), on the
host, so one seed gives the same samples on every device; they are not torch's stream.
"""

from __future__ import annotations

import numbers

from .. import _dtype
from .._autograd import record
from .._backend import random as _random
from .._generator import Generator
from .._tensor import Tensor
from .broadcast import check_fits

_P_IN_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
               "improved?  If so, please report an enhancement request to PyTorch.)")


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Category indices drawn from each row of ``input``, a 1-D or 2-D tensor of non-negative
    weights (they need not sum to 1).

    Parameters
    ----------
    input : Tensor
        Floating point, shape ``(categories,)`` or ``(rows, categories)``; no ``inf``, ``nan``
        or negative weight, and a positive sum in each row.
    num_samples : int
        How many draws per row (at most ``categories`` without replacement).
    replacement : bool, default False
        Whether a category may be drawn again. Without replacement, once the categories of
        positive weight are used up the rest come in arbitrary order, as in torch.
    generator : lucid.Generator, optional
        Draw from it instead of the default generator.

    Returns
    -------
    Tensor
        int64, shape ``(num_samples,)`` or ``(rows, num_samples)``, on ``input``'s device.

    Notes
    -----
    The distribution is torch's; the draws are lucid's own (with replacement by inverting the
    cumulative weights, without by ordering ``weight / E`` for exponential ``E``, as torch does).

    Examples
    --------
    >>> import lucid
    >>> _ = lucid.manual_seed(0)
    >>> lucid.multinomial(lucid.tensor([0.0, 1.0, 0.0]), 3, replacement=True).tolist()
    [1, 1, 1]
    >>> sorted(lucid.tensor([1.0, 2.0, 3.0]).multinomial(3).tolist())
    [0, 1, 2]
    """
    if not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, "
                        f"not {type(num_samples).__name__}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.scalar_type(input.dtype)}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    categories = input.shape[-1]
    if categories > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > categories:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    backend = input._backend
    weights = backend.to_numpy(input._data).reshape(-1, categories)
    if not (weights >= 0).all() or not (weights < float("inf")).all():  # also false for nan
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not (weights.sum(axis=1) > 0).all():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    drawn = _random.multinomial(weights, int(num_samples), bool(replacement), generator)
    shape = (num_samples,) if input.ndim == 1 else (input.shape[0], num_samples)
    return Tensor._make(backend.asarray(drawn.reshape(shape), _dtype.int64), backend)


def _probabilities(p: Tensor, backend):
    values = backend.to_numpy(p._data)
    if not ((values >= 0) & (values <= 1)).all():
        raise RuntimeError(_P_IN_RANGE)
    return values


def bernoulli(input: Tensor, p: float | None = None, *, generator: Generator | None = None) -> Tensor:
    """1 with probability ``input`` (elementwise), else 0, in ``input``'s dtype; with ``p``,
    1 with probability ``p`` everywhere, in ``input``'s shape and dtype.

    Parameters
    ----------
    input : Tensor
        The probabilities, in [0, 1] (floating point unless ``p`` is given).
    p : float, optional
        One probability for every element instead.
    generator : lucid.Generator, optional

    Notes
    -----
    The gradient, as torch's, is zero. The draws are lucid's, not torch's stream.

    Examples
    --------
    >>> import lucid
    >>> lucid.bernoulli(lucid.tensor([0.0, 1.0, 1.0])).tolist()
    [0.0, 1.0, 1.0]
    >>> lucid.zeros(4).bernoulli(1.0).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    backend = input._backend
    if p is None:
        if not input.dtype.is_floating_point:
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"'{_dtype.scalar_type(input.dtype)}'")
        probs = _probabilities(input, backend)
    else:
        _check_probability(p)
        probs = float(p)
    drawn = backend.asarray(_random.bernoulli(probs, input.shape, generator), input.dtype)
    out = Tensor._make(drawn, backend)
    return record(out, "BernoulliBackward0", (input,), lambda g: (backend.zeros_like(g),))


def _check_probability(p) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


def bernoulli_(self: Tensor, p: Tensor | float = 0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill in place with 1 with probability ``p`` (a number, or a tensor broadcast to this
    tensor's shape), else 0.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(2, 3)
    >>> x.bernoulli_(1.0) is x, x.tolist()
    (True, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    >>> x.bernoulli_(lucid.tensor([0.0, 1.0, 0.0])).tolist()
    [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if isinstance(p, Tensor):
        check_fits(self.shape, p.shape)
        probs = _probabilities(p, p._backend)
    else:
        _check_probability(p)
        probs = float(p)
    drawn = self._backend.asarray(_random.bernoulli(probs, self.shape, generator), self.dtype)
    return self.copy_(Tensor._make(drawn, self._backend))  # copy_ refuses a leaf that requires grad, bumps the version


_DEFAULT_TOP = {"float16": 2**11 + 1, "float32": 2**24 + 1, "float64": 2**53 + 1, "int32": 2**31 - 1,
                "int64": 2**63 - 1, "bool": 2}  # torch's: every integer the dtype holds exactly


def random_(self: Tensor, *bounds: int, generator: Generator | None = None) -> Tensor:
    """Fill in place with integers drawn uniformly: ``random_(to)`` from [0, to),
    ``random_(from, to)`` from [from, to), ``random_()`` from 0 to the largest integer the
    dtype holds exactly (2**24 for float32, 2**53 for float64, 2**63 - 2 for int64), as torch.

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(1000).random_(3, 7)
    >>> sorted(set(x.tolist()))
    [3.0, 4.0, 5.0, 6.0]
    """
    if len(bounds) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(bounds)} given)")
    low, high = (0, _DEFAULT_TOP[self.dtype.name]) if not bounds else (0, bounds[0]) if len(bounds) == 1 else bounds
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    drawn = _random.integers(int(low), int(high), self.shape, _dtype.int64, self._backend, generator)
    return self.copy_(Tensor._make(drawn, self._backend))


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill in place with samples of the exponential distribution of rate ``lambd`` (mean ``1 / lambd``).

    Examples
    --------
    >>> import lucid
    >>> x = lucid.zeros(10_000, dtype=lucid.float64).exponential_(2.0)
    >>> bool((x >= 0).all()), round(x.mean().item(), 1)
    (True, 0.5)
    """
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"exponential_ is implemented for floating point tensors only, got {self.dtype}")
    return self.copy_(Tensor._make(_random.exponential(self.shape, self.dtype, self._backend, lambd, generator),
                                   self._backend))
