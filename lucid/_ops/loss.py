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


def class_cross_entropy(input: Tensor, target: Tensor, ignore_index: int, reduction: str) -> Tensor:
    """The cross-entropy of logits ``input`` ``(N, C)`` against class indices ``target`` ``(N,)``
    (checked by the caller), as one op: ``-log_softmax(input)[n, target[n]]`` over the rows whose
    target is not ``ignore_index``, summed, or averaged over them (``reduction``); its backward
    ``(softmax - onehot) g`` (over the count for a mean), torch's closed form, from the forward
    pass's softmax (at the target ``-sum`` of the other probabilities, which does not cancel),
    at the working precision and rounded once.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.loss import class_cross_entropy
    >>> logits = lucid.tensor([[0.0, 0.0], [0.0, 0.0]], requires_grad=True)
    >>> loss = class_cross_entropy(logits, lucid.tensor([0, 1]), -100, "mean")
    >>> round(loss.item(), 6)
    0.693147
    >>> loss.backward(); logits.grad.tolist()
    [[-0.25, 0.25], [0.25, -0.25]]
    """
    b = input._backend
    dtype = b.dtype_of(input._data)
    work = b.working_dtype(dtype)
    x = input._data if work is dtype else b.astype(input._data, work)
    rows, classes = b.shape(x)
    labels = target._data
    kept = b.compare("not_equal", labels, ignore_index)
    safe = b.where(kept, labels, b.zeros_like(labels))
    logp, probs = b.log_softmax_and_softmax(x, 1)
    chosen = b.compare("equal", b.reshape(b.arange(0, classes, 1, b.dtype_of(safe)), (1, classes)),
                       b.reshape(safe, (rows, 1)))  # the one-hot of the targets
    losses = b.keep_where(kept, b.negative(b.sum(b.keep_where(chosen, logp), axis=1)))
    count = b.sum(b.astype(kept, work))
    total = b.sum(losses)
    value = b.divide(total, count) if reduction == "mean" else total

    def backward(g):
        g = g if b.dtype_of(g) is work else b.astype(g, work)
        scale = b.divide(g, count) if reduction == "mean" else g
        # softmax - onehot; at the target, -(the other classes' probabilities): p - 1 would cancel
        others = b.sum(b.where(chosen, b.zeros_like(probs), probs), axis=1, keepdims=True)
        grad = b.multiply(b.where(chosen, b.negative(others), probs), scale)
        return (b.keep_where(b.reshape(kept, (rows, 1)), grad),)

    out = value if work is dtype else b.astype(value, dtype)
    return record(input._like(out), "NllLossBackward0", (input,), backward, saved=(input, target))
