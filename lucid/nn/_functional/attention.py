"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``, torch's.

``scaled_dot_product_attention`` checks its arguments with torch's messages, builds the masks
(a boolean ``attn_mask`` says where to attend, a float one is added, ``is_causal`` keeps the
lower triangle) and the dropout mask, and calls the fused op of :mod:`lucid._ops.attention`.
``multi_head_attention_forward`` is torch's function line for line: the packed projections,
the masks as additive float masks (``canonical_mask``), the per-head attention (the fused
op when the weights are not wanted, the explicit softmax when they are) and the output
projection.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ... import _dtype, _factory
from ..._ops.attention import attention
from ..._ops.broadcast import broadcast_shapes
from ..._ops.linalg import linear
from ..._ops.reduction import softmax
from ..._ops.shape import cat
from ..._tensor import Tensor
from .checks import require_tensor, same_device
from .normalization import dropout

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

# the C++ names torch's attention messages give the dtypes
_CPP_TYPE = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int", "int64": "long int",
             "bool": "bool"}


def _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal) -> None:
    for name, position, t in (("query", 1, query), ("key", 2, key), ("value", 3, value)):
        require_tensor(t, name, "scaled_dot_product_attention", position)
    if attn_mask is not None:
        require_tensor(attn_mask, "attn_mask", "scaled_dot_product_attention", 4)
    same_device(query, key, value, attn_mask)
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_CPP_TYPE[query.dtype.name]} key.dtype: {_CPP_TYPE[key.dtype.name]} and value.dtype: "
            f"{_CPP_TYPE[value.dtype.name]} instead.")
    if min(query.ndim, key.ndim, value.ndim) < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead.")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type Float but found {query.dtype.name.capitalize()}")
    if attn_mask is not None and attn_mask.dtype is not _dtype.bool_ and attn_mask.dtype is not query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
            f"{_CPP_TYPE[attn_mask.dtype.name]} and  query.dtype: {_CPP_TYPE[query.dtype.name]} instead.")
    if not isinstance(dropout_p, numbers.Real) or not 0 <= dropout_p <= 1:  # type: ignore[operator]  # typeshed's numbers ABCs do not compare with int
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query's last dimension ({query.shape[-1]}) must equal "
                           f"key's ({key.shape[-1]})")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, "
                           f"got {key.shape[-2]} and {value.shape[-2]}")


def _repeat_heads(t: Tensor, heads: int) -> Tensor:
    """``t`` (``(..., h, S, E)``) with each head repeated ``heads / h`` times in place: torch's
    ``repeat_interleave(heads // h, -3)``."""
    h = t.shape[-3]
    if heads % h:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")  # torch's words, cut short
    if h == heads:
        return t
    lead, rest = t.shape[:-3], t.shape[-2:]
    return t.unsqueeze(-3).expand(*lead, h, heads // h, *rest).reshape(*lead, heads, *rest)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value``, torch's attention.

    Parameters
    ----------
    query : Tensor
        ``(..., L, E)``.
    key : Tensor
        ``(..., S, E)``; its batch dimensions broadcast with ``query``'s.
    value : Tensor
        ``(..., S, Ev)``.
    attn_mask : Tensor, optional
        Broadcasting to ``(..., L, S)``: bool (True where a query may attend to a key), or of
        ``query``'s dtype, added to the scores (it gets a gradient).
    dropout_p : float, default 0.0
        Dropout on the attention probabilities (applied whatever the module's mode, as in torch).
    is_causal : bool, default False
        Attend only to keys at or before each query's position (the lower triangle of
        ``(L, S)``); ``attn_mask`` must then be None.
    scale : float, optional
        ``1 / sqrt(E)`` by default.
    enable_gqa : bool, default False
        Grouped-query attention: ``key`` and ``value`` may have fewer heads (dimension -3),
        each serving ``query``'s heads in consecutive groups.

    Returns
    -------
    Tensor
        ``(..., L, Ev)``.

    Notes
    -----
    A query all of whose keys are masked gets zeros, and zero gradients (torch's too). The
    dropout masks come from lucid's generator, not torch's. ``is_causal`` with an ``attn_mask``
    is refused, as torch documents and its general kernel does (its CPU flash kernel, chosen
    where ``Ev == E``, combines the two instead). Shape errors that torch reports
    from inside its kernels (``bmm``'s messages) are reported in lucid's words.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> q = k = lucid.zeros(1, 3, 2)
    >>> v = lucid.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    >>> F.scaled_dot_product_attention(q, k, v, is_causal=True)[0, 1].tolist()
    [0.5, 0.5]
    >>> F.scaled_dot_product_attention(q, k, v, attn_mask=lucid.tensor([False, False, True]))[0, 0].tolist()
    [1.0, 1.0]
    """
    _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal)
    if enable_gqa and query.ndim >= 3:
        key, value = _repeat_heads(key, query.shape[-3]), _repeat_heads(value, query.shape[-3])
    batch = broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    length, source = query.shape[-2], key.shape[-2]
    scores_shape = broadcast_shapes(batch + (length, source), () if attn_mask is None else attn_mask.shape)
    allowed = bias = None
    if attn_mask is not None:
        if attn_mask.dtype is _dtype.bool_:
            allowed = attn_mask
        else:
            bias = attn_mask
    if is_causal:
        allowed = _factory.ones(length, source, dtype=_dtype.bool_, device=query.device).tril()
    keep = None
    if dropout_p > 0:
        keep = _factory.rand(*scores_shape, dtype=_dtype.float64, device=query.device) >= dropout_p
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    return attention(query, key, value, allowed, bias, factor, keep, 1.0 / (1.0 - dropout_p) if dropout_p < 1 else 0.0)


# --- multi-head attention ------------------------------------------------------------------
def none_or_dtype(input):
    """torch's ``F._none_or_dtype``: ``input``'s dtype, or None."""
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def canonical_mask(mask, mask_name: str, other_type, other_name: str, target_type, check_other: bool = True):
    """torch's ``F._canonical_mask``: a boolean mask (True: masked) as a float one of
    ``target_type`` (``-inf`` where masked), a float mask as it is."""
    if mask is None:
        return None
    if mask.dtype is not _dtype.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if mask.dtype is _dtype.bool_:
        return _factory.zeros(*mask.shape, dtype=target_type, device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """torch's ``_mha_shape_check``: whether the input is batched, or its AssertionError."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    n = query.ndim
    kind = "batched (3-D)" if n == 3 else "unbatched (2-D)"
    if key.ndim != n or value.ndim != n:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {n}-D but found {key.ndim}-D and "
                             f"{value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != n - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {n - 1}-D but found "
                             f"{key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if n == 2 and attn_mask.ndim == 3 and attn_mask.shape != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {_size(attn_mask.shape)}")
    return n == 3


def _in_projection(query, key, value, w, b, separate):
    """torch's ``_in_projection_packed`` (one product for self-attention, two for a shared key
    and value) or, with ``separate`` (the three weights), ``_in_projection``."""
    e = query.shape[-1]
    if separate is not None:
        b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
        return linear(query, separate[0], b_q), linear(key, separate[1], b_k), linear(value, separate[2], b_v)
    if key is value:
        if query is key:
            return linear(query, w, b).chunk(3, dim=-1)
        w_q, w_kv = w.split([e, 2 * e])
        b_q, b_kv = (None, None) if b is None else b.split([e, 2 * e])
        return (linear(query, w_q, b_q), *linear(key, w_kv, b_kv).chunk(2, dim=-1))
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _pad_key(mask):
    """``mask`` with one more key (a last column of zeros), for the added bias or zero key."""
    if mask is None:
        return None
    return cat([mask, _factory.zeros(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)], dim=-1)


def _check_attn_mask_shape(attn_mask, tgt_len, src_len, batch_heads):
    if attn_mask.ndim == 2:
        if attn_mask.shape != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {_size(attn_mask.shape)}, but should be "
                               f"{(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.ndim == 3:
        if attn_mask.shape != (batch_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {_size(attn_mask.shape)}, but should be "
                               f"{(batch_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
        k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """The computation of :class:`lucid.nn.MultiheadAttention`, torch's function of that name.

    Inputs are sequence-first: ``query`` ``(L, N, E)`` (or ``(L, E)`` unbatched), ``key`` and
    ``value`` ``(S, N, kdim)`` and ``(S, N, vdim)``. Returns the output ``(L, N, E)`` and, with
    ``need_weights``, the attention weights ``(N, L, S)`` (averaged over the heads) or
    ``(N, num_heads, L, S)``, else None. Masks: ``key_padding_mask`` ``(N, S)`` and
    ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)``, bool (True: not attended) or float
    (added).

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.ones(3, 1, 4)
    >>> w, o = lucid.eye(4).repeat(3, 1), lucid.eye(4)
    >>> out, weights = F.multi_head_attention_forward(x, x, x, 4, 2, w, None, None, None, False, 0.0, o, None)
    >>> out.shape, weights.shape
    ((3, 1, 4), (1, 3, 3))
    >>> [round(w, 6) for w in weights[0, 0].tolist()]
    [0.333333, 0.333333, 0.333333]
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", none_or_dtype(attn_mask), "attn_mask",
                                      query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint alone serves
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {_size(key.shape[:2])} do not match value's "
                                 f"{_size(value.shape[:2])}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        q, k, v = _in_projection(query, key, value, None, in_proj_bias, (q_proj_weight, k_proj_weight, v_proj_weight))
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {_size(key.shape)} does not match value shape {_size(value.shape)}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, None)
    if attn_mask is not None:
        attn_mask = _check_attn_mask_shape(attn_mask, tgt_len, src_len, bsz * num_heads)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k, v = cat([k, bias_k.repeat(1, bsz, 1)]), cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, bsz, num_heads, head_dim, "k")
    v = _heads(v, static_v, bsz, num_heads, head_dim, "v")
    if add_zero_attn:
        zeros = _factory.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = cat([k, zeros], dim=1), cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        scores = q_scaled @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = attn_mask + scores  # torch's baddbmm
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, out_proj_weight.shape[0])
    return (out if is_batched else out.squeeze(1)), None


def _heads(t, static, bsz, num_heads, head_dim, name):
    """``t`` ``(S, N, E)`` as ``(N * num_heads, S, head_dim)``, or the given ``static`` one, checked."""
    if static is None:
        return t.reshape(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * num_heads}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static
