"""The convolution, pooling, padding and resizing layers and functions against torch, live.

Values, input gradients, parameter gradients and the state_dict after forward and backward,
on every device: float64 to PARITY, float32 judged against the float64 truth with torch's
error as the ceiling (``nn_parity``). Then torch's errors for bad arguments, signatures,
reprs, the initialisation and a torch state_dict loaded into a small network.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from helpers import assert_same_signature
import ulps
from nn_parity import (
    DEVICE_DTYPES, DEVICES, assert_same_error, function_parity, host, ids, leaves, load_torch_state, module_parity,
    to_lucid, truth_of,
)
from tolerances import JUDGED, close

torch = pytest.importorskip("torch")
TF = torch.nn.functional
# torch's note that it copies the input to pad it (lucid pads 'same' by a copy too)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")

# (layer, arguments, input shape): small shapes that reach every option
CONV_CASES = {
    "conv1d": ("Conv1d", (4, 6, 3), {}, (2, 4, 9)),
    "conv1d strided grouped": ("Conv1d", (4, 6, 2), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2,
                                                     "bias": False}, (2, 4, 11)),
    "conv1d same even kernel": ("Conv1d", (3, 2, 4), {"padding": "same"}, (2, 3, 7)),
    "conv1d reflect": ("Conv1d", (3, 2, 3), {"padding": 2, "padding_mode": "reflect"}, (2, 3, 6)),
    "conv1d unbatched": ("Conv1d", (4, 3, 3), {"padding": "valid"}, (4, 8)),
    "conv2d": ("Conv2d", (3, 4, 3), {}, (2, 3, 7, 6)),
    "conv2d strided dilated grouped": ("Conv2d", (4, 6, (3, 2)), {"stride": (2, 1), "padding": (1, 2),
                                                                  "dilation": (1, 2), "groups": 2}, (2, 4, 7, 8)),
    "conv2d depthwise": ("Conv2d", (4, 8, 3), {"groups": 4, "padding": 1}, (2, 4, 5, 5)),
    "conv2d same": ("Conv2d", (3, 4, (3, 2)), {"padding": "same", "dilation": (2, 1)}, (2, 3, 6, 5)),
    "conv2d reflect": ("Conv2d", (3, 2, 3), {"padding": "same", "padding_mode": "reflect"}, (2, 3, 5, 6)),
    "conv2d replicate": ("Conv2d", (3, 2, 3), {"padding": (2, 1), "padding_mode": "replicate"}, (2, 3, 5, 6)),
    "conv2d circular": ("Conv2d", (3, 2, (2, 3)), {"padding": 1, "padding_mode": "circular", "bias": False},
                        (2, 3, 5, 6)),
    "conv2d unbatched": ("Conv2d", (2, 3, 2), {"stride": 2}, (2, 5, 5)),
    "convT1d": ("ConvTranspose1d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
                (2, 4, 5)),
    "convT1d dilated": ("ConvTranspose1d", (3, 2, 2), {"dilation": 2, "bias": False}, (2, 3, 6)),
    "convT2d": ("ConvTranspose2d", (4, 6, (3, 2)), {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2),
                                                   "groups": 2}, (2, 4, 4, 3)),
    "convT2d dilated": ("ConvTranspose2d", (3, 2, 3), {"dilation": 2, "padding": 2}, (2, 3, 4, 5)),
    "convT2d unbatched": ("ConvTranspose2d", (2, 3, 2), {"stride": 2}, (2, 3, 3)),
    # output_padding past the stride (below the dilation): output elements no window reaches
    "convT2d output_padding past stride": ("ConvTranspose2d", (2, 3, 3), {"dilation": 3, "output_padding": (2, 1)},
                                          (1, 2, 3, 4)),
}


def _pair(case, dtype):
    name, args, kwargs, _ = CONV_CASES[case]
    lucid.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args, **kwargs, dtype=getattr(torch, dtype))
    return getattr(nn, name)(*args, **kwargs, dtype=getattr(lucid, dtype)), theirs


def _sums_parity(ours, theirs, x, device, dtype, call=None):
    """:func:`nn_parity.module_parity` for a layer whose results are sums of products (a
    convolution): in float32 each element's error is counted in ulps of the size of its
    terms where they cancel, ``max(|truth|, scale)`` (``ulps.errors``), the scale being the
    same computation on the absolute values (weights, input and upstream gradient), and
    lucid's largest is held to JUDGED of torch's."""
    call = call or (lambda module, t: module(t))
    if dtype == "float64":
        return module_parity(ours, theirs, [x], device, dtype, call=call)
    load_torch_state(ours, theirs, device, dtype)
    truth, size = truth_of(theirs), truth_of(theirs)
    with torch.no_grad():
        for p in size.parameters():
            p.abs_()
    (mine,), (reference,), (exact,) = leaves([x], device, dtype)
    magnitude = exact.detach().abs().requires_grad_()
    outs = [call(ours, mine), call(theirs, reference), call(truth, exact), call(size, magnitude)]
    g = np.random.default_rng(0).standard_normal(tuple(outs[1].shape))
    upstream = torch.tensor(g, dtype=getattr(torch, dtype)).double()
    (outs[0] * lucid.tensor(g, dtype=getattr(lucid, dtype), device=device)).sum().backward()
    (outs[1] * torch.tensor(g, dtype=getattr(torch, dtype))).sum().backward()
    (outs[2] * upstream).sum().backward()
    (outs[3] * upstream.abs()).sum().backward()
    results = [("output", outs[0], outs[1], outs[2], outs[3]), ("input's gradient", mine.grad, reference.grad,
                                                                exact.grad, magnitude.grad)]
    named = [dict(m.named_parameters()) for m in (theirs, truth, size)]
    results += [(f"{name}'s gradient", p.grad, named[0][name].grad, named[1][name].grad, named[2][name].grad)
                for name, p in ours.named_parameters()]
    factor, floor = JUDGED[dtype]
    for what, a, b, t, scale in results:
        assert tuple(a.shape) == tuple(b.shape), what
        lucid_error = ulps.worst(host(a), host(t), dtype, scale=host(scale))[0]
        torch_error = ulps.worst(host(b), host(t), dtype, scale=host(scale))[0]
        bound = max(factor * torch_error, floor)
        assert lucid_error <= bound, f"{what}: lucid's error {lucid_error:.3g} ulps > {bound:.3g} (torch's " \
                                     f"{torch_error:.3g})"
    return outs[0], outs[1]


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(CONV_CASES))
def test_convolutions_match_torch(case, device, dtype):
    ours, theirs = _pair(case, dtype)
    ours = ours.to(device)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(1).standard_normal(CONV_CASES[case][3])
    _sums_parity(ours, theirs, x, device, dtype)


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
def test_transposed_convolution_reaches_the_output_size_asked_for(device, dtype):
    ours = nn.ConvTranspose2d(3, 2, 3, stride=2, dtype=getattr(lucid, dtype))
    theirs = torch.nn.ConvTranspose2d(3, 2, 3, stride=2, dtype=getattr(torch, dtype))
    x = np.random.default_rng(2).standard_normal((1, 3, 4, 4))
    out, _ = _sums_parity(ours.to(device), theirs, x, device, dtype,
                          call=lambda module, t: module(t, output_size=[10, 9]))
    assert out.shape == (1, 2, 10, 9)
    # torch's message ends "(for an input of torch.Size([4, 4]))"; lucid has no Size type
    with pytest.raises(ValueError, match=r"requested an output size of \[12, 9\], but valid sizes range from "
                                         r"\[9, 9\] to \[10, 10\] \(for an input of \[4, 4\]\)"):
        ours(lucid.zeros(1, 3, 4, 4, dtype=getattr(lucid, dtype), device=device), output_size=[12, 9])
    assert_same_error(lambda: ours(lucid.zeros(1, 3, 4, 4, dtype=getattr(lucid, dtype), device=device),
                                   output_size=[12, 9, 3]),
                      lambda: theirs(torch.zeros(1, 3, 4, 4, dtype=getattr(torch, dtype)), output_size=[12, 9, 3]))


POOL_CASES = {
    "max1d": ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9), True),
    "max1d ceil dilated": ("MaxPool1d", (2,), {"stride": 2, "dilation": 2, "ceil_mode": True}, (2, 3, 8), "output"),
    "max2d": ("MaxPool2d", (2,), {}, (2, 3, 6, 7), True),
    "max2d overlapping": ("MaxPool2d", ((3, 2),), {"stride": (2, 1), "padding": 1, "dilation": (1, 2),
                                                   "ceil_mode": True}, (2, 3, 7, 6), "output"),
    "max2d indices": ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "return_indices": True}, (2, 2, 7, 7), "output"),
    "max2d unbatched": ("MaxPool2d", (2,), {"ceil_mode": True}, (3, 5, 5), True),
    "avg1d": ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 8), False),
    "avg1d exclude pad": ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False},
                          (2, 3, 8), False),
    "avg2d": ("AvgPool2d", (2,), {}, (2, 3, 6, 6), False),
    "avg2d ceil exclude pad": ("AvgPool2d", ((3, 2),), {"stride": 2, "padding": 1, "ceil_mode": True,
                                                        "count_include_pad": False}, (2, 3, 7, 6), False),
    "avg2d ceil include pad": ("AvgPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (2, 3, 6, 6),
                               False),
    "avg2d divisor": ("AvgPool2d", (3,), {"stride": 1, "divisor_override": 4}, (2, 3, 5, 5), False),
    "adaptive1d": ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10), False),
    "adaptive2d": ("AdaptiveAvgPool2d", ((3, 4),), {}, (2, 3, 7, 9), False),
    "adaptive2d keep": ("AdaptiveAvgPool2d", ((2, None),), {}, (2, 3, 5, 4), False),
    "adaptive2d global": ("AdaptiveAvgPool2d", (1,), {}, (3, 4, 5), False),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(POOL_CASES))
def test_pooling_matches_torch(case, device, dtype):
    name, args, kwargs, shape, exact = POOL_CASES[case]
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    if name.startswith("Max"):
        x.reshape(-1)[: x.size // 3] = 0.0  # ties, as after a ReLU: the first largest takes the gradient
    module_parity(ours, theirs, [x], device, dtype, exact=exact)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool_takes_nan_and_infinities_as_torch(device):
    # a nan wins (the last one where there are two), -inf windows point at their first element,
    # a tie at the largest at the first of them
    x = np.array([[[1.0, np.nan, 3.0, np.nan, 5.0, np.nan, -np.inf, -np.inf, -np.inf, np.inf, 2.0, np.inf]]])
    out, where = F.max_pool1d(lucid.tensor(x, device=device), 3, return_indices=True)
    t_out, t_where = TF.max_pool1d(torch.tensor(x), 3, return_indices=True)
    np.testing.assert_array_equal(host(out), t_out.numpy())
    assert where.tolist() == t_where.tolist() == [[[1, 5, 6, 9]]]


BATCH_NORM_CASES = {
    "plain": {},
    "momentum": {"momentum": 0.3},
    "cumulative": {"momentum": None},
    "no affine": {"affine": False},
    "no running stats": {"track_running_stats": False},
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(BATCH_NORM_CASES))
def test_batch_norm_2d_trains_and_evaluates_as_torch(case, device, dtype):
    options = BATCH_NORM_CASES[case]
    theirs = torch.nn.BatchNorm2d(3, dtype=getattr(torch, dtype), **options)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(0)))
    ours = nn.BatchNorm2d(3, device=device, dtype=getattr(lucid, dtype), **options)
    assert repr(ours) == repr(theirs)
    rng = np.random.default_rng(4)
    for step in range(2):  # two training batches: the running statistics accumulate
        module_parity(ours, theirs, [rng.standard_normal((2, 3, 4, 3)) * (step + 1) + step], device, dtype, seed=step)
        ours.zero_grad()
        theirs.zero_grad()
    ours.eval()
    theirs.eval()
    module_parity(ours, theirs, [rng.standard_normal((2, 3, 4, 3))], device, dtype)
    assert_same_error(lambda: ours(lucid.zeros(3, 4, 3, device=device)), lambda: theirs(torch.zeros(3, 4, 3)))


PAD_CASES = {
    "constant": ((2, 3, 4), (2, 1), {"value": 1.5}),
    "constant negative": ((2, 3, 4, 5), (-1, 2, 1, -2), {}),
    "constant three dims": ((2, 3, 4), (1, 1, 0, 2, 1, 0), {}),
    "reflect 1d": ((2, 3, 5), (2, 3), {"mode": "reflect"}),
    "reflect 2d": ((2, 3, 4, 5), (1, 2, 3, 1), {"mode": "reflect"}),
    "replicate 2d": ((3, 4, 5), (2, 0, 1, 3), {"mode": "replicate"}),
    "circular 2d": ((2, 3, 4, 5), (2, 1, 3, 2), {"mode": "circular"}),
    "circular negative": ((2, 3, 5), (-2, 3), {"mode": "circular"}),
    "reflect negative": ((2, 3, 5), (-2, 3), {"mode": "reflect"}),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(PAD_CASES))
def test_pad_matches_torch(case, device, dtype):
    shape, widths, options = PAD_CASES[case]
    x = np.random.default_rng(5).standard_normal(shape)
    function_parity(lambda t: F.pad(t, widths, **options), lambda t: TF.pad(t, widths, **options), [x], device,
                    dtype, exact="output")


RESIZE_CASES = {
    "nearest size": ((2, 3, 5, 4), {"size": (7, 3)}),
    "nearest scale": ((2, 3, 5, 4), {"scale_factor": (1.7, 2.0)}),
    "nearest 1d": ((2, 3, 6), {"scale_factor": 0.6}),
    "linear": ((2, 3, 6), {"size": 10, "mode": "linear"}),
    "linear corners": ((2, 3, 6), {"scale_factor": 1.5, "mode": "linear", "align_corners": True}),
    "bilinear": ((2, 3, 4, 5), {"scale_factor": 2.3, "mode": "bilinear"}),
    "bilinear down": ((2, 3, 7, 6), {"size": (3, 4), "mode": "bilinear"}),
    "bilinear corners": ((2, 3, 4, 5), {"size": (6, 9), "mode": "bilinear", "align_corners": True}),
    "bilinear recomputed": ((2, 3, 4, 5), {"scale_factor": 1.3, "mode": "bilinear", "recompute_scale_factor": True}),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("case", list(RESIZE_CASES))
def test_interpolate_matches_torch(case, device, dtype):
    shape, options = RESIZE_CASES[case]
    x = np.random.default_rng(6).standard_normal(shape)
    exact = "output" if options.get("mode", "nearest") == "nearest" else False
    function_parity(lambda t: F.interpolate(t, **options), lambda t: TF.interpolate(t, **options), [x], device, dtype,
                    exact=exact)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout2d_zeroes_whole_channels(device):
    lucid.manual_seed(3)
    x = lucid.tensor(np.random.default_rng(0).standard_normal((8, 16, 3, 2)) + 5, device=device, requires_grad=True)
    drop = nn.Dropout2d(0.25)
    out = drop(x)
    kept = host(out) != 0
    per_channel = kept.reshape(8, 16, -1)
    assert (per_channel.all(axis=2) | ~per_channel.any(axis=2)).all()  # a channel is kept or zeroed whole
    assert 0.5 < per_channel.all(axis=2).mean() < 0.95
    np.testing.assert_array_equal(host(out), np.where(kept, host(x) * (1 / 0.75), 0.0))
    out.sum().backward()
    np.testing.assert_array_equal(host(x.grad), np.where(kept, 1 / 0.75, 0.0))
    assert drop.eval()(x) is x
    with pytest.warns(UserWarning, match="Received a 3D input to dropout2d"):
        F.dropout2d(lucid.ones(2, 3, 4, device=device))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(lucid.ones(2, 3, 4, 4, device=device))
    assert_same_error(lambda: nn.Dropout2d(1.5), lambda: torch.nn.Dropout2d(1.5))


# --- errors, signatures, initialisation, state dicts --------------------------------------------
X4, X3 = (2, 4, 5, 5), (2, 4, 5)
BAD_CALLS = {
    "conv2d 2-D input": lambda m: m.conv2d(m.zeros(2, 3), m.zeros(6, 4, 3, 3)),
    "conv2d channels": lambda m: m.conv2d(m.zeros(2, 3, 7, 8), m.zeros(6, 4, 3, 3)),
    "conv2d kernel too large": lambda m: m.conv2d(m.zeros(2, 4, 2, 2), m.zeros(6, 4, 3, 3)),
    "conv2d same strided": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), stride=2, padding="same"),
    "conv2d groups": lambda m: m.conv2d(m.zeros(*X4), m.zeros(5, 2, 3, 3), groups=2),
    "conv2d bias": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), m.zeros(5)),
    "conv2d stride": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), stride=0),
    "conv2d stride length": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), stride=(1, 1, 1)),
    "conv2d padding": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), padding=-1),
    "conv2d padding string": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), padding="full"),
    "conv2d dilation": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), dilation=0),
    "conv2d non-positive groups": lambda m: m.conv2d(m.zeros(*X4), m.zeros(6, 4, 3, 3), groups=0),
    "conv1d 4-D input": lambda m: m.conv1d(m.zeros(*X4), m.zeros(6, 4, 3)),
    "conv_transpose2d output_padding": lambda m: m.conv_transpose2d(m.zeros(*X4), m.zeros(4, 3, 3, 3), stride=2,
                                                                    output_padding=2),
    "conv_transpose2d channels": lambda m: m.conv_transpose2d(m.zeros(2, 3, 5, 5), m.zeros(4, 3, 3, 3)),
    "conv_transpose2d padding string": lambda m: m.conv_transpose2d(m.zeros(*X4), m.zeros(4, 3, 3, 3), padding="same"),
    "max_pool2d padding": lambda m: m.max_pool2d(m.zeros(*X4), 3, padding=2),
    "max_pool2d too small": lambda m: m.max_pool2d(m.zeros(2, 4, 2, 2), 3),
    "max_pool2d 2-D input": lambda m: m.max_pool2d(m.zeros(4, 5), 3),
    "max_pool2d kernel": lambda m: m.max_pool2d(m.zeros(*X4), 0, stride=1),
    "max_pool2d stride": lambda m: m.max_pool2d(m.zeros(*X4), 2, stride=0),
    "max_pool2d dilation": lambda m: m.max_pool2d(m.zeros(*X4), 2, dilation=0),
    "max_pool2d kernel length": lambda m: m.max_pool2d(m.zeros(*X4), (2, 2, 2)),
    "max_pool1d 4-D input": lambda m: m.max_pool1d(m.zeros(*X4), 3),
    "max_pool1d too small": lambda m: m.max_pool1d(m.zeros(2, 4, 2), 3),
    "max_pool1d padding": lambda m: m.max_pool1d(m.zeros(*X3), 3, padding=2),
    "max_pool1d kernel": lambda m: m.max_pool1d(m.zeros(*X3), 0),
    "avg_pool2d padding": lambda m: m.avg_pool2d(m.zeros(*X4), 3, padding=2),
    "avg_pool2d too small": lambda m: m.avg_pool2d(m.zeros(2, 4, 2, 2), 3),
    "avg_pool2d divisor": lambda m: m.avg_pool2d(m.zeros(*X4), 3, divisor_override=0),
    "avg_pool1d 4-D input": lambda m: m.avg_pool1d(m.zeros(*X4), 3),
    "avg_pool1d too small": lambda m: m.avg_pool1d(m.zeros(2, 4, 2), 3),
    "adaptive_avg_pool2d size": lambda m: m.adaptive_avg_pool2d(m.zeros(*X4), (2, 2, 2)),
    "adaptive_avg_pool2d negative": lambda m: m.adaptive_avg_pool2d(m.zeros(*X4), (-1, 2)),
    "adaptive_avg_pool1d 4-D input": lambda m: m.adaptive_avg_pool1d(m.zeros(*X4), 2),
    "adaptive_avg_pool1d size": lambda m: m.adaptive_avg_pool1d(m.zeros(*X3), (2, 2)),
    "pad odd": lambda m: m.pad(m.zeros(*X4), (1, 2, 3)),
    "pad too long": lambda m: m.pad(m.zeros(*X4), (1,) * 10),
    "pad reflect dims": lambda m: m.pad(m.zeros(*X4), (5, 2), mode="reflect"),
    "pad reflect size": lambda m: m.pad(m.zeros(*X4), (5, 2, 0, 0), mode="reflect"),
    "pad circular size": lambda m: m.pad(m.zeros(*X4), (6, 2, 0, 0), mode="circular"),
    "pad mode": lambda m: m.pad(m.zeros(*X4), (1, 2), mode="wrap"),
    "pad value": lambda m: m.pad(m.zeros(*X4), (1, 2, 1, 1), mode="reflect", value=1.0),
    "pad crop": lambda m: m.pad(m.zeros(*X4), (-6, 2)),
    "pad float": lambda m: m.pad(m.zeros(*X4), [1.5, 2]),
    "interpolate no size": lambda m: m.interpolate(m.zeros(*X4), mode="bilinear"),
    "interpolate both": lambda m: m.interpolate(m.zeros(*X4), size=3, scale_factor=2),
    "interpolate bilinear 3-D": lambda m: m.interpolate(m.zeros(*X3), size=3, mode="bilinear"),
    "interpolate corners": lambda m: m.interpolate(m.zeros(*X4), size=3, align_corners=True),
    "interpolate size length": lambda m: m.interpolate(m.zeros(*X4), size=(3, 3, 3)),
    "dropout2d p": lambda m: m.dropout2d(m.zeros(*X4), p=1.5),
}


class _Namespace:
    """lucid's or torch's functional module, with the framework's ``zeros``."""

    def __init__(self, functional, framework):
        self._functional, self.zeros = functional, framework.zeros

    def __getattr__(self, name):
        return getattr(self._functional, name)


@pytest.mark.parametrize("case", list(BAD_CALLS))
def test_bad_arguments_raise_what_torch_raises(case):
    call = BAD_CALLS[case]
    assert_same_error(lambda: call(_Namespace(F, lucid)), lambda: call(_Namespace(TF, torch)), first_line=True)


BAD_LAYERS = {
    "groups": lambda m: m.Conv2d(4, 6, 3, groups=0),
    "in_channels": lambda m: m.Conv2d(3, 6, 3, groups=2),
    "out_channels": lambda m: m.Conv2d(4, 5, 3, groups=2),
    "same strided": lambda m: m.Conv1d(4, 6, 3, stride=2, padding="same"),
    "transposed padding mode": lambda m: m.ConvTranspose2d(4, 6, 3, padding_mode="reflect"),
}


@pytest.mark.parametrize("case", list(BAD_LAYERS))
def test_bad_layers_raise_what_torch_raises(case):
    assert_same_error(lambda: BAD_LAYERS[case](nn), lambda: BAD_LAYERS[case](torch.nn))


def test_bad_padding_names_are_refused_with_the_choices():
    # torch lists the choices from a set, in an order that changes between processes
    with pytest.raises(ValueError, match="Invalid padding string 'full', should be one of"):
        nn.Conv2d(2, 2, 3, padding="full")
    with pytest.raises(ValueError, match="padding_mode must be one of .*, but got padding_mode='wrap'"):
        nn.Conv2d(2, 2, 3, padding_mode="wrap")


LAYERS = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "MaxPool1d", "MaxPool2d", "AvgPool1d",
          "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "BatchNorm2d", "Dropout2d"]


@pytest.mark.parametrize("name", LAYERS)
def test_layer_signatures_match_torch(name):
    assert_same_signature(getattr(nn, name).__init__, getattr(torch.nn, name).__init__)


@pytest.mark.parametrize("name", ["adaptive_avg_pool2d", "dropout2d", "interpolate", "conv_transpose1d"])
def test_functional_signatures_match_torch(name):
    theirs = getattr(TF, name)
    try:
        import inspect

        inspect.signature(theirs)
    except ValueError:  # a builtin in torch: the parameter names from its documentation instead
        names = {"conv_transpose1d": ["input", "weight", "bias", "stride", "padding", "output_padding", "groups",
                                      "dilation"]}[name]
        import inspect

        assert list(inspect.signature(getattr(F, name)).parameters) == names
        return
    assert_same_signature(getattr(F, name), theirs)


@pytest.mark.parametrize("name,args", [("Conv2d", (6, 8, (3, 2))), ("ConvTranspose2d", (6, 4, 3)),
                                       ("Conv1d", (4, 6, 5, 1, 0, 1, 2))])
def test_initialisation_is_torchs_distribution(name, args):
    lucid.manual_seed(0)
    layer = getattr(nn, name)(*args)
    reference = getattr(torch.nn, name)(*args)
    assert layer.weight.shape == tuple(reference.weight.shape) and layer.bias.shape == tuple(reference.bias.shape)
    fan_in = reference.weight.shape[1] * math.prod(reference.weight.shape[2:])
    bound = 1 / math.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) and the bias's rule
    for ours in (host(layer.weight), host(layer.bias)):
        assert np.abs(ours).max() <= bound and np.abs(ours).max() > 0.8 * bound
    weights = host(layer.weight).reshape(-1)
    assert abs(weights.std() - bound / math.sqrt(3)) < 0.2 * bound / math.sqrt(3)


def test_a_torch_convolutional_state_dict_loads_and_runs_alike():
    def build(m):
        return m.nn.Sequential(m.nn.Conv2d(1, 4, 3, padding=1), m.nn.BatchNorm2d(4), m.nn.ReLU(), m.nn.MaxPool2d(2),
                               m.nn.ConvTranspose2d(4, 2, 2, stride=2), m.nn.AdaptiveAvgPool2d(2), m.nn.Flatten(),
                               m.nn.Linear(8, 3))

    torch.manual_seed(0)
    theirs = build(torch).double().eval()
    ours = build(lucid).double().eval()
    result = ours.load_state_dict({k: to_lucid(v) for k, v in theirs.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(7).standard_normal((2, 1, 6, 6))
    close(host(ours(lucid.tensor(x))), theirs(torch.tensor(x)).detach().numpy(), "float64")


# --- the printed node of each result: torch's (an unbatched input, 1-D pooling, every pad) ---------
NODE_CASES = {
    "conv1d_unbatched": (lambda F, r: F.conv1d(r(3, 7), r(2, 3, 3))),
    "conv2d_unbatched": (lambda F, r: F.conv2d(r(3, 5, 5), r(4, 3, 3, 3))),
    "conv_transpose1d": (lambda F, r: F.conv_transpose1d(r(2, 4, 3), r(4, 1, 2), padding=1)),
    "conv_transpose2d_unbatched": (lambda F, r: F.conv_transpose2d(r(2, 3, 3), r(2, 3, 3, 2))),
    "max_pool1d_indices": (lambda F, r: F.max_pool1d(r(2, 3, 7), 2, return_indices=True)[0]),
    "max_pool2d_unbatched": (lambda F, r: F.max_pool2d(r(2, 6, 5), 2)),
    "avg_pool1d": (lambda F, r: F.avg_pool1d(r(3, 7), 2)),
    "avg_pool2d_unbatched": (lambda F, r: F.avg_pool2d(r(2, 6, 5), 2)),
    "adaptive_avg_pool1d": (lambda F, r: F.adaptive_avg_pool1d(r(2, 3, 7), 3)),
    "adaptive_avg_pool2d_unbatched": (lambda F, r: F.adaptive_avg_pool2d(r(2, 5, 7), (2, 3))),
    "reflect1d_unbatched": (lambda F, r: F.pad(r(3, 4), (1, 1), mode="reflect")),
    "reflect2d_unbatched": (lambda F, r: F.pad(r(2, 4, 3), (1, 1, 1, 1), mode="reflect")),
    "replicate2d": (lambda F, r: F.pad(r(1, 2, 4, 3), (1, 1, 1, 1), mode="replicate")),
    "circular1d": (lambda F, r: F.pad(r(2, 3, 4), (1, 1), mode="circular")),
    "nearest1d": (lambda F, r: F.interpolate(r(1, 2, 3), scale_factor=2)),
    "linear1d": (lambda F, r: F.interpolate(r(1, 2, 3), size=5, mode="linear")),
}


@pytest.mark.parametrize("name", sorted(NODE_CASES))
def test_the_result_prints_torchs_node(name):
    def grad_fn_name(module, F):
        out = NODE_CASES[name](F, lambda *s: module.ones(*s, dtype=module.float64, requires_grad=True))
        return type(out.grad_fn).__name__ if module is torch else out.grad_fn.name

    assert grad_fn_name(lucid, F) == grad_fn_name(torch, torch.nn.functional)


# --- the padding layers: F.pad with their mode, torch's widths and reprs -----------------------
PAD_LAYERS = {
    "ReflectionPad1d": ((2,), (2, 3, 5)), "ReflectionPad2d": (((1, 0, 2, 1),), (2, 3, 4, 5)),
    "ReplicationPad1d": (((0, 3),), (3, 5)), "ReplicationPad2d": ((2,), (2, 3, 4, 5)),
    "CircularPad1d": ((1,), (2, 3, 5)), "CircularPad2d": (((2, 1, 0, 3),), (1, 2, 4, 5)),
    "ConstantPad1d": (((1, 2), 0.5), (2, 3, 5)), "ConstantPad2d": ((1, -2.5), (2, 4, 5)),
    "ZeroPad1d": (((-1, 2),), (2, 3, 5)), "ZeroPad2d": (((1, 1, 0, 2),), (2, 3, 4, 5)),
}


@pytest.mark.parametrize("device,dtype", DEVICE_DTYPES, ids=ids(DEVICE_DTYPES))
@pytest.mark.parametrize("name", sorted(PAD_LAYERS))
def test_padding_layers_match_torch(name, device, dtype):
    args, shape = PAD_LAYERS[name]
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs) and ours.padding == theirs.padding
    x = np.random.default_rng(6).standard_normal(shape)
    module_parity(ours, theirs, [x], device, dtype, exact="output")  # the gradients sum in their own order


def test_padding_layers_refuse_what_torch_refuses():
    assert_same_error(lambda: nn.ReflectionPad1d(3)(lucid.ones(1, 2, 3)),
                      lambda: torch.nn.ReflectionPad1d(3)(torch.ones(1, 2, 3)))
    assert_same_error(lambda: nn.ReflectionPad2d((1, 2))(lucid.ones(1, 2, 3, 3)),
                      lambda: torch.nn.ReflectionPad2d((1, 2))(torch.ones(1, 2, 3, 3)), first_line=True)
