"""Layer normalisation as one recorded op, with the closed-form backward torch's
``NativeLayerNormBackward`` computes.

Over the normalised axes, with ``xhat = (x - mean) * rstd`` and ``rstd = 1 / sqrt(var + eps)``:
``dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))`` where ``dxhat = g weight``; the
weight's gradient is the sum of ``g xhat`` over the other axes, the bias's that of ``g``.
Everything is evaluated at the backend's working precision and rounded once.
:func:`lucid.nn.functional.layer_norm` checks the arguments and calls this.
"""

from __future__ import annotations

from .._autograd import record
from .._tensor import Tensor

__all__ = ["layer_norm"]


def layer_norm(input: Tensor, axes: tuple, weight: Tensor | None, bias: Tensor | None, eps: float) -> Tensor:
    """``(input - mean) / sqrt(var + eps) * weight + bias`` over ``axes`` (the trailing ones), the
    variance biased; ``weight`` and ``bias`` (optional) of ``input``'s dtype and of the axes' shape.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.normalization import layer_norm
    >>> x = lucid.tensor([[1.0, 3.0], [2.0, 6.0]], requires_grad=True)
    >>> layer_norm(x, (1,), None, None, 0.0).tolist()
    [[-1.0, 1.0], [-1.0, 1.0]]
    """
    b = input._backend
    dtype = b.dtype_of(input._data)
    work = b.working_dtype(dtype)

    def wide(t):
        return None if t is None else (t._data if work is dtype else b.astype(t._data, work))

    x, w, shift = wide(input), wide(weight), wide(bias)
    mean = b.mean(x, axis=axes, keepdims=True)
    centred = b.subtract(x, mean)
    rstd = b.divide(1.0, b.sqrt(b.add(b.mean(b.multiply(centred, centred), axis=axes, keepdims=True), eps)))
    xhat = b.multiply(centred, rstd)
    out = xhat if w is None else b.multiply(xhat, w)
    if shift is not None:
        out = b.add(out, shift)
    batch_axes = tuple(range(len(b.shape(x)) - len(axes)))

    def backward(g):
        g = g if b.dtype_of(g) is work else b.astype(g, work)
        dxhat = g if w is None else b.multiply(g, w)
        grad_input = None
        if input.requires_grad:
            inner = b.add(b.mean(dxhat, axis=axes, keepdims=True),
                          b.multiply(xhat, b.mean(b.multiply(dxhat, xhat), axis=axes, keepdims=True)))
            grad_input = b.multiply(rstd, b.subtract(dxhat, inner))
        grads = [grad_input]
        if weight is not None:
            grads.append(b.sum(b.multiply(g, xhat), axis=batch_axes) if weight.requires_grad else None)
        if bias is not None:
            grads.append(b.sum(g, axis=batch_axes) if bias.requires_grad else None)
        return tuple(grads)

    inputs = (input,) + tuple(t for t in (weight, bias) if t is not None)
    result = out if work is dtype else b.astype(out, dtype)
    return record(input._like(result), "NativeLayerNormBackward0", inputs, backward, saved=inputs)
