"""Multi-head attention, torch's ``nn.MultiheadAttention`` (which torch keeps in
``torch.nn.modules.activation``; here it has a file of its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import _factory
from .._functional.attention import canonical_mask, multi_head_attention_forward, none_or_dtype
from .._functional.checks import check_dropout_probability
from ..._tensor import Tensor
from .. import init
from ..module import Module
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention over ``num_heads`` heads: project the query, key and value, attend in each
    head (``softmax(q k^T / sqrt(head_dim)) v``), concatenate the heads and project the result.

    Parameters
    ----------
    embed_dim : int
        The model's width ``E`` (the query's features); divisible by ``num_heads``.
    num_heads : int
    dropout : float, default 0.0
        Dropout on the attention probabilities, in training.
    bias : bool, default True
        Biases for the input and output projections.
    add_bias_kv : bool, default False
        A learnt key and value appended to the sequence of keys and values.
    add_zero_attn : bool, default False
        A key and value of zeros appended to it.
    kdim, vdim : int, optional
        The key's and value's features (``embed_dim`` by default); where either differs, the
        projections are three weights (``q_proj_weight``, ...) instead of ``in_proj_weight``.
    batch_first : bool, default False
        Inputs and outputs as ``(N, L, E)`` instead of ``(L, N, E)``.
    device, dtype : optional
        Of the parameters.

    Attributes
    ----------
    in_proj_weight : Parameter
        ``(3 E, E)``, the query, key and value projections stacked; Xavier-uniform.
    in_proj_bias : Parameter or None
        ``(3 E,)``, zeros.
    out_proj : NonDynamicallyQuantizableLinear
        ``E -> E``; its bias zeros.
    bias_k, bias_v : Parameter or None
        ``(1, 1, E)`` with ``add_bias_kv``; Xavier-normal.

    Notes
    -----
    torch's inference fast path (``torch._native_multi_head_attention``, taken in eval mode
    without gradients) computes the same function; lucid always runs the general one.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
    >>> [name for name, _ in mha.named_parameters()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    >>> x = lucid.randn(3, 5, 8)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    >>> mha(x, x, x, need_weights=False)[1] is None
    True
    """

    bias_k: Parameter | None
    bias_v: Parameter | None

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: str | None = None,
                 dtype: lucid.dtype | None = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        check_dropout_probability(dropout)  # torch: at the first forward in training; NaN: never
        kwargs: dict[str, Any] = {"device": device or "cpu", "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_factory.empty(embed_dim, embed_dim, **kwargs))
            self.k_proj_weight = Parameter(_factory.empty(embed_dim, self.kdim, **kwargs))
            self.v_proj_weight = Parameter(_factory.empty(embed_dim, self.vdim, **kwargs))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_factory.empty(3 * embed_dim, embed_dim, **kwargs))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_factory.empty(3 * embed_dim, **kwargs))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kwargs)
        if add_bias_kv:
            self.bias_k = Parameter(_factory.empty(1, 1, embed_dim, **kwargs))
            self.bias_v = Parameter(_factory.empty(1, 1, embed_dim, **kwargs))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's: Xavier-uniform projections, zero biases, Xavier-normal ``bias_k``/``bias_v``."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` (``(L, N, E)``, ``(N, L, E)`` with ``batch_first``, or ``(L, E)``)
        to ``key`` and ``value``; return the output and (with ``need_weights``) the weights.

        ``key_padding_mask`` ``(N, S)`` and ``attn_mask`` ``(L, S)`` or ``(N * num_heads, L, S)``:
        bool (True: not attended) or float (added to the scores). ``is_causal`` is a hint that
        ``attn_mask`` is the causal mask. The weights are ``(N, L, S)`` averaged over the heads
        (``average_attn_weights``) or ``(N, num_heads, L, S)``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> mha = nn.MultiheadAttention(4, 1)
        >>> x = lucid.randn(3, 2, 4)  # (L, N, E)
        >>> padding = lucid.tensor([[False, False, True], [False, False, False]])
        >>> _, weights = mha(x, x, x, key_padding_mask=padding)
        >>> weights[0, :, 2].tolist()
        [0.0, 0.0, 0.0]
        """
        is_batched = query.ndim == 3
        key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", none_or_dtype(attn_mask),
                                          "attn_mask", query.dtype)
        attn_mask = canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate: dict[str, Any] = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight}
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None,
                    query: Tensor) -> tuple[Tensor | None, int | None]:
        """torch's: one mask ``(N, num_heads, L, L)`` from both (float ones), and its type (1: padding only, 2: both).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> mha = nn.MultiheadAttention(4, 2, batch_first=True)
        >>> mask, kind = mha.merge_masks(None, lucid.zeros(3, 5), lucid.zeros(3, 5, 4))
        >>> mask.shape, kind
        ((3, 5), 1)
        """
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                expanded = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                expanded = attn_mask.reshape(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            merged = expanded
            if key_padding_mask is not None:
                merged = expanded + key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(
                    -1, self.num_heads, -1, -1)
        return merged, mask_type
