"""Attention and the Transformer against torch, live: ``F.scaled_dot_product_attention``,
``nn.MultiheadAttention`` and the Transformer layers.

Values, input gradients, parameter gradients and the state afterwards (torch's state dicts
loaded into lucid's modules), in training (dropout 0) and evaluation mode, on every device:
float64 to PARITY, float32 judged against the float64 truth. Dropout paths, whose masks come
from lucid's generator, are held to invariants: each kept probability is the undropped one
over ``1 - p``, and the gradient is that of the function with the mask fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from helpers import assert_same_signature
from tolerances import JUDGED_RECURRENT, close
from nn_parity import DEVICE_DTYPES, assert_same_error, function_parity, ids, module_parity, to_lucid

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# --- F.scaled_dot_product_attention ----------------------------------------------------------
# (query, key, value shapes, the mask's kind or None, keyword arguments)
SDPA_CASES = {
    "plain": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, {}),
    "bool-mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "bool", {}),
    "float-mask": ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "float", {}),
    "causal-scale": ((2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3), None, {"is_causal": True, "scale": 0.7}),
    "gqa": ((1, 4, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), None, {"enable_gqa": True}),
    "broadcast-2d": ((3, 4), (1, 5, 4), (1, 5, 2), "bool", {}),
}


def _sdpa_arrays(case, rng):
    q, k, v, mask, options = SDPA_CASES[case]
    arrays = [rng.standard_normal(s) for s in (q, k, v)]
    constants = {}
    if mask == "bool":
        allowed = rng.random((q[-2], k[-2])) > 0.4
        allowed[0] = False  # a query that sees no key: zeros, and zero gradients
        constants["attn_mask"] = allowed
    elif mask == "float":
        arrays.append(rng.standard_normal((q[-2], k[-2])))  # added to the scores: it has a gradient
    return arrays, constants, options


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_scaled_dot_product_attention_matches_torch(case, device, dtype):
    arrays, constants, options = _sdpa_arrays(case, np.random.default_rng(0))
    function_parity(F.scaled_dot_product_attention, TF.scaled_dot_product_attention, arrays, device, dtype,
                    constants=constants, **options)


def test_a_masked_out_query_gets_zeros_and_zero_gradients():
    q = lucid.randn(1, 2, 3, dtype=lucid.float64, requires_grad=True)
    k, v = lucid.randn(1, 4, 3, dtype=lucid.float64), lucid.randn(1, 4, 2, dtype=lucid.float64)
    allowed = lucid.tensor([[False] * 4, [True, False, True, False]])
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    out.sum().backward()
    assert out[0, 0].tolist() == [0.0, 0.0] and q.grad[0, 0].tolist() == [0.0, 0.0, 0.0]
    assert bool(out[0, 1].isfinite().all()) and bool((q.grad[0, 1] != 0).any())


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_attention_dropout_keeps_probabilities_scaled_and_its_gradient_is_the_masked_functions(device):
    # value = the identity: the output is the attention matrix itself, dropped
    q = lucid.randn(2, 6, 4, dtype=lucid.float32, device=device)
    k = lucid.randn(2, 8, 4, dtype=lucid.float32, device=device)
    v = lucid.eye(8, device=device).expand(2, 8, 8)
    p = 0.25
    whole = F.scaled_dot_product_attention(q, k, v).numpy()
    _ = lucid.manual_seed(3)
    dropped = F.scaled_dot_product_attention(q, k, v, dropout_p=p).numpy()
    zero = dropped == 0
    assert 0.05 < zero.mean() < 0.5
    np.testing.assert_allclose(dropped[~zero], whole[~zero] / (1 - p), rtol=1e-6)
    # the gradient of q through the same mask (the seed replayed) against central differences
    k64, v64 = k[:1].double(), lucid.randn(1, 8, 3, dtype=lucid.float64, device=device)

    def f(query):
        _ = lucid.manual_seed(5)
        return F.scaled_dot_product_attention(query, k64, v64, dropout_p=p).sum()

    q64 = q[:1].double().requires_grad_()
    f(q64).backward()
    base, step = q64.detach().numpy(), 1e-6
    numeric = np.zeros_like(base)
    for index in np.ndindex(*base.shape):
        for sign in (1, -1):
            shifted = base.copy()
            shifted[index] += sign * step
            numeric[index] += sign * f(lucid.tensor(shifted, device=device)).item() / (2 * step)
    np.testing.assert_allclose(q64.grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


SDPA_ERRORS = {
    "dtype": lambda m, q, k, v: m.scaled_dot_product_attention(q, k.double(), v),
    "one-dim": lambda m, q, k, v: m.scaled_dot_product_attention(q[0, 0], k[0, 0], v[0, 0]),
    "mask-dtype": lambda m, q, k, v: m.scaled_dot_product_attention(q, k, v, attn_mask=(q[0, :, :3] > 0).long()),
    "dropout": lambda m, q, k, v: m.scaled_dot_product_attention(q, k, v, dropout_p=1.5),
    "causal-and-mask": lambda m, q, k, v: m.scaled_dot_product_attention(q, k, v, attn_mask=q[0, :, :3] > 0,
                                                                        is_causal=True),
    "gqa-heads": lambda m, q, k, v: m.scaled_dot_product_attention(q, k[:, :2], v[:, :2], enable_gqa=True),
}


@pytest.mark.parametrize("case", list(SDPA_ERRORS))
def test_scaled_dot_product_attention_refuses_what_torch_refuses(case):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((2, 3, 4)).astype(np.float32),
              rng.standard_normal((2, 3, 5)).astype(np.float32)]
    if case == "gqa-heads":  # 2 key heads for 3 query heads
        arrays = [a.reshape(1, 2, 3, -1).repeat(2, axis=1)[:, :3] for a in arrays]
    ours = [lucid.tensor(a) for a in arrays]
    theirs = [torch.tensor(a) for a in arrays]
    assert_same_error(lambda: SDPA_ERRORS[case](F, *ours), lambda: SDPA_ERRORS[case](TF, *theirs), first_line=True)


def test_functional_signatures_match_torch():
    assert_same_signature(F.multi_head_attention_forward, TF.multi_head_attention_forward)


# --- nn.MultiheadAttention -------------------------------------------------------------------
# constructor arguments (embed_dim 8, 2 heads), input shapes (query, key, value), call options
MHA_CASES = {
    "self-weights": ({}, [(5, 3, 8)] * 3, {"need_weights": True}, "self"),
    "batch-first-masks": ({"batch_first": True}, [(3, 5, 8), (3, 6, 8), (3, 6, 8)],
                          {"need_weights": False, "masks": ("bool-padding", "float-attn")}, None),
    "per-head-weights": ({"bias": False}, [(4, 2, 8), (6, 2, 8), (6, 2, 8)],
                         {"average_attn_weights": False, "masks": ("bool-padding", "bool-attn")}, None),
    "kdim-vdim": ({"kdim": 5, "vdim": 3, "batch_first": True}, [(2, 4, 8), (2, 6, 5), (2, 6, 3)],
                  {"need_weights": False, "masks": ("bool-attn",)}, None),
    "bias-kv-zero-attn": ({"add_bias_kv": True, "add_zero_attn": True}, [(4, 2, 8), (5, 2, 8), (5, 2, 8)],
                          {"masks": ("bool-padding", "float-attn")}, None),
    "unbatched-causal": ({}, [(5, 8)] * 3, {"need_weights": False, "masks": ("causal",)}, "self"),
}


def _masks(kinds, query_shape, key_shape, batch_first, rng, heads=2):
    """Keyword masks of ``kinds`` as NumPy arrays (bool True: not attended)."""
    batched = len(query_shape) == 3
    length = query_shape[1 if batch_first and batched else 0]
    source = key_shape[1 if batch_first and batched else 0]
    batch = query_shape[0 if batch_first else 1] if batched else None
    out = {}
    for kind in kinds:
        if kind == "bool-padding":
            padding = np.zeros((batch, source), dtype=bool)
            padding[:, -1] = True
            padding[0, 1] = True
            out["key_padding_mask"] = padding
        elif kind == "bool-attn":
            attn = rng.random((length, source)) < 0.3
            attn[:, 0] = False  # every query keeps a key
            out["attn_mask"] = attn
        elif kind == "float-attn":
            out["attn_mask"] = rng.standard_normal((length, source))
        elif kind == "causal":
            out["attn_mask"] = np.triu(np.full((length, source), -np.inf), 1)
            out["is_causal"] = True
    return out


def _mask_tensors(masks, device, dtype):
    mine, theirs = {}, {}
    for key, value in masks.items():
        if isinstance(value, bool):
            mine[key] = theirs[key] = value
            continue
        t = torch.tensor(value if value.dtype == bool else value.astype(dtype))
        theirs[key], mine[key] = t, to_lucid(t, device)
    return mine, theirs


def _attention_call(masks_ours, masks_theirs, options, self_attention):
    """A ``call`` for module_parity: the module on its inputs with the masks of its framework."""
    def call(module, *inputs):
        masks = masks_ours if isinstance(module, nn.Module) else masks_theirs
        if self_attention:
            inputs = (inputs[0],) * 3
        out, weights = module(*inputs, **masks, **options)
        assert (weights is None) == (options.get("need_weights", True) is False)
        return out if weights is None else (out, weights)
    return call


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_torch(case, train, device, dtype):
    kwargs, shapes, options, mode = MHA_CASES[case]
    options = dict(options)
    rng = np.random.default_rng(1)
    masks = _masks(options.pop("masks", ()), shapes[0], shapes[1], kwargs.get("batch_first", False), rng)
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
    ours = nn.MultiheadAttention(8, 2, **kwargs)
    assert repr(ours) == repr(theirs)
    ours.train(train), theirs.train(train)
    masks_ours, masks_theirs = _mask_tensors(masks, device, dtype)
    inputs = [rng.standard_normal(s) for s in (shapes[:1] if mode == "self" else shapes)]
    module_parity(ours.to(device=device, dtype=getattr(lucid, dtype)), theirs.to(getattr(torch, dtype)), inputs, device, dtype,
                  call=_attention_call(masks_ours, masks_theirs, options, mode == "self"))


def test_multihead_attention_initialises_as_torch_does():
    _ = lucid.manual_seed(0)
    mha = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    bound = np.sqrt(6 / (16 + 48))  # Xavier-uniform over the stacked (48, 16) weight
    weight = mha.in_proj_weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert mha.in_proj_bias.tolist() == [0.0] * 48 and mha.out_proj.bias.tolist() == [0.0] * 16
    assert mha.bias_k.shape == (1, 1, 16) and bool((mha.bias_k != 0).any())
    separate = nn.MultiheadAttention(8, 2, kdim=3)
    assert separate.in_proj_weight is None and separate.k_proj_weight.shape == (8, 3)


def test_multihead_attention_dropout_drops_weights_and_scales_the_rest():
    _ = lucid.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, dropout=0.3, batch_first=True)
    x = lucid.randn(2, 6, 8)
    with lucid.no_grad():
        _, dropped = mha(x, x, x, average_attn_weights=False)
        mha.eval()
        _, whole = mha(x, x, x, average_attn_weights=False)
    dropped, whole = dropped.numpy(), whole.numpy()
    zero = dropped == 0
    assert 0.1 < zero.mean() < 0.5
    np.testing.assert_allclose(dropped[~zero], whole[~zero] / 0.7, rtol=1e-6)


MHA_ERRORS = {
    "key-dims": lambda n, x: n(8, 2)(x, x[0], x[0]),
    "padding-dims": lambda n, x: n(8, 2)(x, x, x, key_padding_mask=x[:, :, 0] > 0),
    "attn-mask-shape": lambda n, x: n(8, 2)(x, x, x, attn_mask=x[0, :, :2] > 0),
    "attn-mask-3d": lambda n, x: n(8, 2)(x, x, x, attn_mask=(x[:3, :, :3] > 0)),
    "embed-dim": lambda n, x: n(4, 2)(x, x, x),
    "int-mask": lambda n, x: n(8, 2)(x, x, x, attn_mask=(x[0, :, :3] > 0).long()),
    "causal-without-mask": lambda n, x: n(8, 2)(x, x, x, is_causal=True),
    "zero-heads": lambda n, x: n(8, 0),
    "indivisible": lambda n, x: n(8, 3),
}


@pytest.mark.parametrize("case", list(MHA_ERRORS))
def test_multihead_attention_refuses_what_torch_refuses(case):
    x = np.random.default_rng(0).standard_normal((3, 2, 8)).astype(np.float32)
    assert_same_error(lambda: MHA_ERRORS[case](nn.MultiheadAttention, lucid.tensor(x)),
                      lambda: MHA_ERRORS[case](torch.nn.MultiheadAttention, torch.tensor(x)), first_line=True)


# --- the Transformer layers ------------------------------------------------------------------
def _gelu_of(framework):
    return (F if framework is nn else TF).gelu


LAYER_CASES = {
    "encoder-post-norm": ("TransformerEncoderLayer", {}, ("bool-padding", "bool-attn")),
    "encoder-pre-norm-gelu": ("TransformerEncoderLayer", {"norm_first": True, "activation": "gelu",
                                                          "batch_first": True}, ("causal",)),
    "decoder-callable-activation": ("TransformerDecoderLayer", {"activation": "callable-gelu"}, ("causal",)),
    "decoder-pre-norm": ("TransformerDecoderLayer", {"norm_first": True, "batch_first": True, "bias": False},
                         ("bool-padding",)),
}


def _layer(framework, name, kwargs):
    kwargs = dict(kwargs)
    if kwargs.get("activation") == "callable-gelu":
        kwargs["activation"] = _gelu_of(framework)
    return getattr(framework, name)(8, 2, dim_feedforward=12, dropout=0.0, **kwargs)


def _layer_masks(name, kinds, shape, batch_first, rng):
    masks = _masks(kinds, shape, shape, batch_first, rng)
    rename = ({"attn_mask": "src_mask", "key_padding_mask": "src_key_padding_mask"} if "Encoder" in name else
              {"attn_mask": "tgt_mask", "key_padding_mask": "tgt_key_padding_mask", "is_causal": "tgt_is_causal"})
    return {rename.get(k, k): v for k, v in masks.items()}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("case", list(LAYER_CASES))
def test_transformer_layers_match_torch(case, train, device, dtype):
    name, kwargs, kinds = LAYER_CASES[case]
    batch_first = kwargs.get("batch_first", False)
    shape = (2, 5, 8) if batch_first else (5, 2, 8)
    rng = np.random.default_rng(2)
    masks_ours, masks_theirs = _mask_tensors(_layer_masks(name, kinds, shape, batch_first, rng), device, dtype)
    torch.manual_seed(0)
    theirs, ours = _layer(torch.nn, name, kwargs), _layer(nn, name, kwargs)
    ours.train(train), theirs.train(train)
    inputs = [rng.standard_normal(shape)]
    if "Decoder" in name:
        inputs.append(rng.standard_normal((2, 4, 8) if batch_first else (4, 2, 8)))  # the memory

    def call(module, *args):
        return module(*args, **(masks_ours if isinstance(module, nn.Module) else masks_theirs))

    module_parity(ours.to(device=device, dtype=getattr(lucid, dtype)), theirs.to(getattr(torch, dtype)), inputs, device, dtype, call=call)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
def test_transformer_matches_torch(device, dtype):
    kwargs = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1, "dim_feedforward": 12,
              "dropout": 0.0, "batch_first": True}
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        theirs = torch.nn.Transformer(**{**kwargs, "norm_first": True})
    with pytest.warns(UserWarning, match="enable_nested_tensor is True"):
        ours = nn.Transformer(**{**kwargs, "norm_first": True})
    rng = np.random.default_rng(3)
    src, tgt = rng.standard_normal((2, 6, 8)), rng.standard_normal((2, 4, 8))
    padding = np.zeros((2, 6), dtype=bool)
    padding[1, -2:] = True
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=getattr(torch, dtype))
    masks_theirs = {"tgt_mask": mask, "src_key_padding_mask": torch.tensor(padding),
                    "memory_key_padding_mask": torch.tensor(padding)}
    masks_ours = {"tgt_mask": nn.Transformer.generate_square_subsequent_mask(4, device=device,
                                                                              dtype=getattr(lucid, dtype)),
                  "src_key_padding_mask": lucid.tensor(padding, device=device),
                  "memory_key_padding_mask": lucid.tensor(padding, device=device)}

    def call(module, *args):
        return module(*args, **(masks_ours if isinstance(module, nn.Module) else masks_theirs))

    # three layers deep, the backward carries each last-bit difference through all the layers below
    # (as a recurrence's steps): over 3 seeds x 2 devices x norm_first, lucid's largest float32 error
    # was 8.9 ulps where torch's was 4.3 (a LayerNorm bias's gradient, a sum), on cpu and gpu alike
    module_parity(ours.to(device=device, dtype=getattr(lucid, dtype)), theirs.to(getattr(torch, dtype)), [src, tgt],
                  device, dtype, call=call, table=JUDGED_RECURRENT)


def test_transformer_initialises_every_matrix_xavier_uniform_and_its_state_dict_is_torchs():
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, 1, 2, 16)
    _ = lucid.manual_seed(0)
    ours = nn.Transformer(8, 2, 1, 2, 16)
    assert repr(ours) == repr(theirs)
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(reference)
    for key, value in reference.items():
        assert mine[key].shape == tuple(value.shape), key
        if value.ndim > 1:  # Xavier-uniform: within sqrt(6 / (fan_in + fan_out)), nearly reaching it
            bound = np.sqrt(6 / sum(value.shape))
            assert 0.8 * bound < np.abs(mine[key].detach().numpy()).max() <= bound, key
    # a torch state dict loads and gives torch's output (in float64, to PARITY)
    ours.load_state_dict({k: to_lucid(v) for k, v in reference.items()})
    ours.double().eval(), theirs.double().eval()
    src, tgt = np.random.default_rng(0).standard_normal((2, 5, 2, 8))
    with torch.no_grad():
        expected = theirs(torch.tensor(src), torch.tensor(tgt)).numpy()
    with lucid.no_grad():
        close(ours(lucid.tensor(src), lucid.tensor(tgt)).numpy(), expected, "float64")


def test_generate_square_subsequent_mask_and_causal_detection_are_torchs():
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=lucid.float64)
    assert mask.tolist() == torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64).tolist()
    assert mask.dtype is lucid.float64
    from lucid.nn.modules.transformer import _detect_is_causal_mask

    assert _detect_is_causal_mask(mask) and not _detect_is_causal_mask(mask.T) and _detect_is_causal_mask(None, True)


TRANSFORMER_ERRORS = {
    "batch": lambda n, x: n.Transformer(8, 2, 1, 1, 16)(x, x[:, :1]),
    "features": lambda n, x: n.Transformer(4, 2, 1, 1, 16)(x, x),
    "activation": lambda n, x: n.TransformerEncoderLayer(8, 2, activation="tanh"),
}


@pytest.mark.parametrize("case", list(TRANSFORMER_ERRORS))
def test_transformer_refuses_what_torch_refuses(case):
    x = np.random.default_rng(0).standard_normal((3, 2, 8)).astype(np.float32)
    assert_same_error(lambda: TRANSFORMER_ERRORS[case](nn, lucid.tensor(x)),
                      lambda: TRANSFORMER_ERRORS[case](torch.nn, torch.tensor(x)), first_line=True)


@pytest.mark.parametrize("name", ["MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
                                  "TransformerEncoderLayer", "TransformerDecoderLayer"])
def test_layer_signatures_match_torch(name):
    import inspect

    for method in ("__init__", "forward"):
        ours = inspect.signature(getattr(getattr(nn, name), method)).parameters
        theirs = inspect.signature(getattr(getattr(torch.nn, name), method)).parameters
        assert list(ours) == list(theirs)
        for key, parameter in theirs.items():
            assert ours[key].kind == parameter.kind, key
            if key == "activation":  # each framework's own F.relu
                assert ours[key].default is F.relu and parameter.default is TF.relu
            else:
                assert ours[key].default == parameter.default, key
