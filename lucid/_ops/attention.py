"""Scaled dot-product attention as one recorded op: ``softmax(q k^T scale + mask) v``.

One node instead of the eight of its parts (two products, a scale, a mask, a softmax, a
dropout, ...), with the backward of FlashAttention's paper written out: from the saved
probabilities ``P``, ``dV = P^T g``, ``dS = P (dP - rowsum(dP P))`` with ``dP = g V^T``, then
``dQ = dS K scale`` and ``dK = dS^T Q scale``. The softmax is evaluated at the backend's working
precision and rounded once; a row every key of which is masked gives zeros (torch's
``_safe_softmax``), not NaN. :func:`lucid.nn.functional.scaled_dot_product_attention` checks
the arguments, builds the masks and calls this.
"""

from __future__ import annotations

from .._autograd import record
from .._tensor import Tensor

__all__ = ["attention"]


def _safe_softmax(b, scores):
    """``softmax(scores)`` over the last axis; a row of ``-inf`` only (every key masked) gives zeros."""
    peak = b.max(scores, axis=-1, keepdims=True)
    peak = b.where(b.isfinite(peak), peak, b.zeros_like(peak))
    e = b.exp(b.subtract(scores, peak))
    total = b.sum(e, axis=-1, keepdims=True)
    return b.divide(e, b.where(b.compare("equal", total, 0), b.ones_like(total), total))


def _softmax_gradient(b, probs, g_probs):
    """The gradient of the scores from that of the probabilities: ``P (dP - rowsum(dP P))``."""
    return b.multiply(probs, b.subtract(g_probs, b.sum(b.multiply(g_probs, probs), axis=-1, keepdims=True)))


def attention(query: Tensor, key: Tensor, value: Tensor, allowed: Tensor | None = None,
              bias: Tensor | None = None, scale: float = 1.0, keep: Tensor | None = None,
              keep_scale: float = 1.0) -> Tensor:
    """``softmax(query key^T scale + bias, masked to allowed) (keep keep_scale) value``.

    Parameters
    ----------
    query, key, value : Tensor
        ``(..., L, E)``, ``(..., S, E)`` and ``(..., S, Ev)``, their batch dimensions broadcasting;
        checked by the caller (one dtype and device).
    allowed : Tensor, optional
        Bool, broadcasting to ``(..., L, S)``: the keys each query may attend to.
    bias : Tensor, optional
        Float, broadcasting to ``(..., L, S)``: added to the scores (it gets a gradient).
    scale : float
    keep : Tensor, optional
        Bool, ``(..., L, S)``: dropout's mask of the probabilities kept, scaled by ``keep_scale``.

    Examples
    --------
    >>> import lucid
    >>> from lucid._ops.attention import attention
    >>> q = lucid.zeros(1, 2, 2)
    >>> v = lucid.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    >>> attention(q, q, v).tolist()
    [[[2.0, 3.0], [2.0, 3.0]]]
    >>> attention(q, q, v, allowed=lucid.tensor([[True, False], [False, False]])).tolist()
    [[[1.0, 2.0], [0.0, 0.0]]]
    """
    b = query._backend
    q, k, v = query._data, key._data, value._data
    mask = None if allowed is None else allowed._data
    kept = None if keep is None else keep._data
    scores = b.multiply(b.matmul(q, b.swapaxes(k, -1, -2)), scale)
    if bias is not None:
        scores = b.add(scores, bias._data)
    if mask is not None:  # -inf where masked, added: over the mask's own (broadcast) shape, not the scores'
        scores = b.add(scores, b.where(mask, b.zeros(b.shape(mask), query.dtype),
                                       b.full(b.shape(mask), float("-inf"), query.dtype)))
    dtype = b.dtype_of(scores)
    work = b.working_dtype(dtype)
    wide = _safe_softmax(b, scores if work is dtype else b.astype(scores, work))  # kept for the backward
    probs = wide if work is dtype else b.astype(wide, dtype)
    used = probs if kept is None else b.multiply(b.keep_where(kept, probs), keep_scale)

    def backward(g):
        g_used = b.matmul(g, b.swapaxes(v, -1, -2))
        g_probs = g_used if kept is None else b.multiply(b.keep_where(kept, g_used), keep_scale)
        g_scores = b.precisely(lambda b, dp, p: _softmax_gradient(b, p, dp), g_probs, wide)
        g_q = b.multiply(b.matmul(g_scores, k), scale)
        g_k = b.multiply(b.matmul(b.swapaxes(g_scores, -1, -2), q), scale)
        g_v = b.matmul(b.swapaxes(used, -1, -2), g)
        return (g_q, g_k, g_v) + ((g_scores,) if bias is not None else ())

    inputs = (query, key, value) + ((bias,) if bias is not None else ())
    return record(query._like(b.matmul(used, v)), "ScaledDotProductFlashAttentionForCpuBackward0", inputs, backward,
                  saved=(query, key, value))
