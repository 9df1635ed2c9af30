"""Loss primitives whose gradients torch computes with a formula of their own.

The binary cross-entropies are written as torch's kernels: the values elementwise, and the
backward as torch's closed forms (``(x - y) / max(x (1 - x), 1e-12)`` and ``-logit(x)`` for probabilities,
``sigmoid(x) - y`` for logits), which a composition of elementwise ops would round
differently where ``x`` is close to ``y``. Both return the unreduced, per-element loss;
:mod:`lucid.nn.functional` applies the weights' broadcast and the reduction.
"""

from __future__ import annotations

from .._autograd import record
from .._tensor import Tensor

# torch's clamp of x (1 - x) in the backward of binary_cross_entropy: the float 1e-12, widened
_EPSILON = 9.999999960041972e-13
_LOG_FLOOR = -100.0  # torch clamps each log to at least -100, so that 0 and 1 give finite losses


def binary_cross_entropy(input: Tensor, target: Tensor) -> Tensor:
    """``(y - 1) max(log1p(-x), -100) - y max(log x, -100)`` elementwise (same shapes, one dtype).

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.loss import binary_cross_entropy
    >>> binary_cross_entropy(lucid.tensor([0.5, 0.0]), lucid.tensor([1.0, 0.5]))  # log 0 counts as -100
    tensor([ 0.6931, 50.0000])
    """
    backend, x, y = input._backend, input._data, target._data
    log_x = backend.maximum(backend.log(x), _LOG_FLOOR)
    log_1mx = backend.maximum(backend.log1p(backend.negative(x)), _LOG_FLOOR)
    out = input._like(backend.subtract(backend.multiply(backend.subtract(y, 1), log_1mx), backend.multiply(y, log_x)))

    def backward(g):
        denominator = backend.maximum(backend.multiply(backend.subtract(1, x), x), _EPSILON)
        grad_input = backend.multiply(g, backend.divide(backend.subtract(x, y), denominator))
        # torch's -logit(x) = -log(x / (1 - x)), not clamped (infinite at 0 and 1)
        grad_target = backend.multiply(g, backend.negative(backend.log(backend.divide(x, backend.subtract(1, x)))))
        return grad_input, grad_target

    return record(out, "BinaryCrossEntropyBackward0", (input, target), backward, saved=(input, target))


def _log_sigmoid(backend, x):
    """``min(x, 0) - log1p(exp(-|x|))``: log(sigmoid(x)) without overflow, as torch's kernel."""
    return backend.subtract(backend.minimum(x, 0), backend.log1p(backend.exp(backend.negative(backend.abs(x)))))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, pos_weight=None) -> Tensor:
    """``(1 - y) x - (1 + (p - 1) y) log(sigmoid(x))`` elementwise, torch's arithmetic.

    ``pos_weight`` (``p``, broadcast against the last dimension) gets no gradient.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.loss import binary_cross_entropy_with_logits
    >>> binary_cross_entropy_with_logits(lucid.tensor([0.0]), lucid.tensor([1.0]))
    tensor([0.6931])
    """
    backend, x, y = input._backend, input._data, target._data
    log_sig = _log_sigmoid(backend, x)
    p = None if pos_weight is None else pos_weight._data
    if p is not None:
        log_sig = backend.multiply(log_sig, backend.add(backend.multiply(backend.subtract(p, 1), y), 1))
    out = input._like(backend.subtract(backend.multiply(backend.subtract(1, y), x), log_sig))

    def backward(g):
        s = backend.sigmoid(x)
        if p is None:
            # sigmoid(x) - y, as (1 - y) - sigmoid(-x) for x >= 0: no cancellation where y = 1
            grad_input = backend.where(backend.compare("greater_equal", x, 0),
                                       backend.subtract(backend.subtract(1, y), backend.sigmoid(backend.negative(x))),
                                       backend.subtract(s, y))
            grad_target = backend.negative(x)
        else:
            t = backend.multiply(p, y)
            grad_input = backend.subtract(backend.multiply(backend.subtract(backend.add(t, 1), y), s), t)
            grad_target = backend.subtract(_log_sigmoid(backend, backend.negative(x)),
                                           backend.multiply(_log_sigmoid(backend, x), p))
        return backend.multiply(g, grad_input), backend.multiply(g, grad_target)

    return record(out, "BinaryCrossEntropyWithLogitsBackward0", (input, target), backward, saved=(input, target))
