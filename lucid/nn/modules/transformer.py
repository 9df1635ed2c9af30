"""The Transformer of "Attention Is All You Need", torch's layers: ``TransformerEncoderLayer``,
``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder`` and ``Transformer``.

Their submodules carry torch's names (``self_attn``, ``multihead_attn``, ``linear1``,
``norm1``, ``layers.0``, ...), so torch's state dicts load. torch's inference fast paths
(nested tensors, ``torch._transformer_encoder_layer_fwd``) compute the same function; lucid
always runs the general one, and keeps the flags that choose them (``enable_nested_tensor``,
``use_nested_tensor``) with torch's warnings.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ... import _factory
from .. import functional as F
from .. import init
from .._functional.attention import canonical_mask, none_or_dtype
from ..._tensor import Tensor
from ..module import Module
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .linear import Linear
from .normalization import Dropout, LayerNorm

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """``(sz, sz)``: ``-inf`` above the diagonal, zeros elsewhere (each position sees itself and the past)."""
    return _factory.full((sz, sz), float("-inf"), dtype=dtype, device=device or "cpu").triu(diagonal=1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int:
    if src.ndim == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size: int | None = None) -> bool:
    """torch's: ``is_causal`` where given, else whether ``mask`` is the causal mask of ``size``."""
    make_causal = is_causal is True
    if is_causal is None and mask is not None:
        sz = size if size is not None else mask.shape[-2]
        causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
        make_causal = mask.shape == causal.shape and bool((mask == causal).all())
    return make_causal


def _get_clones(module: Module, n: int) -> ModuleList:
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _add_blocks(layer, attentions, d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first,
                norm_first, bias, kwargs) -> None:
    """A layer's submodules in torch's order (its state dict's): the attentions, ``linear1``,
    ``dropout``, ``linear2``, then a LayerNorm (``norm1``, ...) and a Dropout (``dropout1``, ...)
    for each of its residual blocks (the attentions and the feed-forward network)."""
    for name in attentions:
        setattr(layer, name, MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                                **kwargs))
    layer.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kwargs)
    layer.dropout = Dropout(dropout)
    layer.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kwargs)
    layer.norm_first = norm_first
    blocks = range(1, len(attentions) + 2)
    for k in blocks:
        setattr(layer, f"norm{k}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs))
    for k in blocks:
        setattr(layer, f"dropout{k}", Dropout(dropout))


def _self_attention_block(layer, x, attn_mask, key_padding_mask, is_causal):
    """``dropout1(self_attn(x, x, x))``: the self-attention block of a layer."""
    x = layer.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                        is_causal=is_causal)[0]
    return layer.dropout1(x)


def _feed_forward(layer, x):
    """``linear2(dropout(activation(linear1(x))))``: the feed-forward block before its last dropout."""
    return layer.linear2(layer.dropout(layer.activation(layer.linear1(x))))


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward network, each with a residual connection and a LayerNorm.

    ``x = norm1(x + dropout1(self_attn(x)))``, then ``x = norm2(x + dropout2(linear2(dropout(
    activation(linear1(x))))))``; with ``norm_first`` each norm applies to the branch's input
    instead (``x + block(norm(x))``).

    Parameters
    ----------
    d_model : int
    nhead : int
    dim_feedforward : int, default 2048
    dropout : float, default 0.1
    activation : {"relu", "gelu"} or callable, default F.relu
    layer_norm_eps : float, default 1e-5
    batch_first : bool, default False
        ``(N, L, E)`` instead of ``(L, N, E)``.
    norm_first : bool, default False
    bias : bool, default True
        Biases in the Linear and LayerNorm layers.
    device, dtype : optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(lucid.randn(3, 5, 8)).shape
    (3, 5, 8)
    >>> sorted({name.split(".")[0] for name, _ in layer.named_parameters()})
    ['linear1', 'linear2', 'norm1', 'norm2', 'self_attn']
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        _add_blocks(self, ("self_attn",), d_model, nhead, dim_feedforward, dropout, layer_norm_eps, batch_first,
                    norm_first, bias, {"device": device, "dtype": dtype})
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        """``src`` ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``, or ``(L, E)``) through the layer.

        ``src_mask`` ``(L, L)`` or ``(N * nhead, L, L)`` and ``src_key_padding_mask`` ``(N, L)``:
        bool (True: not attended) or float (added); ``is_causal``: a hint that ``src_mask`` is causal.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
        >>> mask = nn.Transformer.generate_square_subsequent_mask(3)
        >>> layer(lucid.randn(3, 2, 4), src_mask=mask, is_causal=True).shape
        (3, 2, 4)
        """
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                              none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        return _self_attention_block(self, x, attn_mask, key_padding_mask, is_causal)

    def _ff_block(self, x):
        return self.dropout2(_feed_forward(self, x))


class TransformerDecoderLayer(Module):
    """Self-attention, attention to the encoder's output (``memory``) and a feed-forward
    network, each with a residual connection and a LayerNorm (``norm1``, ``norm2``, ``norm3``).

    Parameters are :class:`TransformerEncoderLayer`'s; the attention to the memory is ``multihead_attn``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> layer = nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(lucid.randn(4, 2, 8), lucid.randn(6, 2, 8)).shape
    (4, 2, 8)
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        _add_blocks(self, ("self_attn", "multihead_attn"), d_model, nhead, dim_feedforward, dropout, layer_norm_eps,
                    batch_first, norm_first, bias, {"device": device, "dtype": dtype})
        self.activation = _get_activation_fn(activation) if isinstance(activation, str) else activation

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        """``tgt`` through the layer, attending to ``memory``; the masks as :class:`TransformerEncoderLayer`'s.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> layer = nn.TransformerDecoderLayer(4, 2, 8, batch_first=True, norm_first=True)
        >>> layer(lucid.randn(2, 3, 4), lucid.randn(2, 5, 4)).shape
        (2, 3, 4)
        """
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        return _self_attention_block(self, x, attn_mask, key_padding_mask, is_causal)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(_feed_forward(self, x))


def _why_no_nested_tensor(layer) -> str:
    """torch's reason a TransformerEncoder of ``layer`` cannot take its nested-tensor path ('' if none)."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (``layers.0``, ``layers.1``, ...), then ``norm``.

    Parameters
    ----------
    encoder_layer : TransformerEncoderLayer
        Deep-copied: every layer starts with its parameters.
    num_layers : int
    norm : Module, optional
    enable_nested_tensor : bool, default True
        torch's inference path over padded batches (lucid has none; kept with torch's warning).
    mask_check : bool, default True

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    >>> encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8))
    >>> encoder(lucid.randn(2, 5, 8)).shape
    (2, 5, 8)
    >>> len(encoder.layers)
    2
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why_not}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        """``src`` through every layer, then the norm; ``is_causal=None`` detects a causal ``mask``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 1, enable_nested_tensor=False)
        >>> encoder(lucid.randn(3, 2, 4), src_key_padding_mask=lucid.zeros(2, 3, dtype=lucid.bool)).shape
        (3, 2, 4)
        """
        src_key_padding_mask = canonical_mask(src_key_padding_mask, "src_key_padding_mask", none_or_dtype(mask),
                                              "mask", src.dtype)
        mask = canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, each attending to the memory, then ``norm``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), num_layers=2)
    >>> decoder(lucid.randn(4, 2, 8), lucid.randn(6, 2, 8)).shape
    (4, 2, 8)
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """``tgt`` through every layer, attending to ``memory``, then the norm.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 1)
        >>> decoder(lucid.randn(3, 1, 4), lucid.randn(2, 1, 4), tgt_mask=nn.Transformer.generate_square_subsequent_mask(3)).shape
        (3, 1, 4)
        """
        output = tgt
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                           tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """An encoder (``encoder``: ``num_encoder_layers`` layers and a LayerNorm) and a decoder
    (``decoder``) of the same width; every parameter of two or more dimensions Xavier-uniform.

    Parameters
    ----------
    d_model : int, default 512
    nhead : int, default 8
    num_encoder_layers, num_decoder_layers : int, default 6
    dim_feedforward : int, default 2048
    dropout : float, default 0.1
    activation : {"relu", "gelu"} or callable, default F.relu
    custom_encoder, custom_decoder : Module, optional
    layer_norm_eps : float, default 1e-5
    batch_first, norm_first, bias : bool
        As :class:`TransformerEncoderLayer`'s.
    device, dtype : optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                        dim_feedforward=16, batch_first=True)
    >>> src, tgt = lucid.randn(2, 5, 8), lucid.randn(2, 3, 8)
    >>> model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(3)).shape
    (2, 3, 8)
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = F.relu, custom_encoder: Any | None = None,
                 custom_decoder: Any | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: str | None = None,
                 dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        options = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias)
        kwargs: dict[str, Any] = {"device": device, "dtype": dtype}

        def stack(stack_type, layer_type, layers):
            norm = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kwargs)
            return stack_type(layer_type(*options, **kwargs), layers, norm)

        self.encoder = custom_encoder if custom_encoder is not None else stack(
            TransformerEncoder, TransformerEncoderLayer, num_encoder_layers)
        self.decoder = custom_decoder if custom_decoder is not None else stack(
            TransformerDecoder, TransformerDecoderLayer, num_decoder_layers)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode ``src``, decode ``tgt`` attending to the encoding; ``(T, N, E)`` (``(N, T, E)`` with ``batch_first``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> model = nn.Transformer(4, 2, 1, 1, 8)
        >>> model(lucid.randn(5, 2, 4), lucid.randn(3, 1, 4))
        Traceback (most recent call last):
        ...
        RuntimeError: the batch number of src and tgt must be equal
        """
        is_batched = src.ndim == 3
        if not self.batch_first and src.shape[1] != tgt.shape[1] and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if self.batch_first and src.shape[0] != tgt.shape[0] and is_batched:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: str | None = None,
                                        dtype: lucid.dtype | None = None) -> Tensor:
        """The causal mask of ``sz`` positions: ``-inf`` above the diagonal, zeros elsewhere.

        Examples
        --------
        >>> from lucid import nn
        >>> nn.Transformer.generate_square_subsequent_mask(3).tolist()
        [[0.0, -inf, -inf], [0.0, 0.0, -inf], [0.0, 0.0, 0.0]]
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
