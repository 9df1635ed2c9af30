"""``interpolate``: resizing by nearest neighbour, and by linear interpolation along each
spatial dimension (``linear`` for 3-D inputs, ``bilinear`` for 4-D ones), as torch.

Nearest is a gather along each dimension (exact, its gradient a scatter-add); linear and
bilinear are products with one (out, in) matrix per dimension holding torch's two weights
per row, so their gradient is the product with the transposes.
"""

from __future__ import annotations

import math
import numbers
import struct
from collections.abc import Sequence

from ... import _dtype, _factory
from ..._autograd import renamed
from ..._ops.elementwise import matmul
from ..._ops.scatter import index_select
from ..._tensor import Tensor
from .checks import require_tensor

__all__ = ["interpolate"]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_LINEAR = {"linear": 3, "bilinear": 4}


def _float32(x: float) -> float:
    """``x`` rounded to float32: torch computes nearest's source index in float32."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _nearest_index(n: int, out: int, scale) -> list:
    """torch's ``nearest_idx``: ``min(floor(i * s), n - 1)``, ``s = 1 / scale`` or ``n / out``, in float32."""
    if out == n:
        return list(range(n))
    if out == 2 * n:
        return [i >> 1 for i in range(out)]
    s = _float32(1.0 / scale) if scale is not None and scale > 0 else _float32(_float32(n) / out)
    return [min(math.floor(_float32(i * s)), n - 1) for i in range(out)]


def _linear_matrix(n: int, out: int, scale, align_corners: bool, like) -> Tensor:
    """(out, n): row i holds torch's weights of its two source elements."""
    if align_corners:
        s = (n - 1) / (out - 1) if out > 1 else 0.0
    else:
        s = 1.0 / scale if scale is not None and scale > 0 else n / out
    rows = []
    for i in range(out):
        source = s * i if align_corners else max(s * (i + 0.5) - 0.5, 0.0)
        low = min(int(source), n - 1)
        high = low + (1 if low < n - 1 else 0)
        weight = source - low
        row = [0.0] * n
        row[low] += 1.0 - weight
        row[high] += weight
        rows.append(row)
    return _factory.tensor(rows, dtype=like.dtype, device=like.device).reshape(out, n)


def _output_sizes(input, size, scale_factor, d: int, recompute_scale_factor) -> tuple:
    """The output's spatial sizes, and the scales torch's kernels use (None: from the sizes)."""
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    spatial = input.shape[2:]
    if size is not None:
        wanted = [size] * d if isinstance(size, numbers.Integral) else list(size)
        if len(wanted) != d:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(spatial)} and output size of {size}. Please provide input "
                             f"tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        return tuple(int(s) for s in wanted), (None,) * d
    scales = [scale_factor] * d if isinstance(scale_factor, numbers.Real) else list(scale_factor)
    if len(scales) != d:
        raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {list(spatial)} and scale_factor of shape {scale_factor}. Please "
                         f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                         f"format.")
    sizes = tuple(math.floor(float(n) * float(s)) for n, s in zip(spatial, scales))
    return sizes, ((None,) * d if recompute_scale_factor else tuple(float(s) for s in scales))


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of ``input`` ``(N, C, *spatial)`` to ``size``, or by ``scale_factor``.

    Parameters
    ----------
    input : Tensor
        3-D ``(N, C, L)`` or 4-D ``(N, C, H, W)``.
    size : int or sequence of int, optional
    scale_factor : float or sequence of float, optional
        Exactly one of ``size`` and ``scale_factor``; the size is ``floor(n * scale_factor)``.
    mode : {"nearest", "linear", "bilinear"}, default "nearest"
        ``"linear"`` for 3-D inputs, ``"bilinear"`` for 4-D ones.
    align_corners : bool, optional
        Linear modes only: whether the corner elements of input and output are aligned
        (False by default), rather than their corners' edges.
    recompute_scale_factor : bool, optional
        With ``scale_factor``: whether the kernel takes its scale from the sizes instead.
    antialias : bool, default False
        True raises ``NotImplementedError``.

    Raises
    ------
    NotImplementedError
        For the modes lucid does not have yet (bicubic, trilinear, area, nearest-exact),
        and for torch's shape errors.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[[1.0, 2.0]]])
    >>> F.interpolate(x, scale_factor=2).tolist()
    [[[1.0, 1.0, 2.0, 2.0]]]
    >>> F.interpolate(x, size=4, mode="linear").tolist()
    [[[1.0, 1.25, 1.75, 2.0]]]
    >>> F.interpolate(x, size=3, mode="linear", align_corners=True).tolist()
    [[[1.0, 1.5, 2.0]]]
    """
    require_tensor(input, "input", "interpolate", 1)
    if mode not in _MODES:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode not in ("nearest", "linear", "bilinear"):
        raise NotImplementedError(f"interpolate(): mode {mode!r} is not in lucid yet (nearest, linear, bilinear are)")
    if antialias:
        raise NotImplementedError("interpolate(): antialias=True is not in lucid yet")
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"interpolate(): lucid resizes 3-D and 4-D inputs, got a {input.ndim}-D one")
    if mode in _LINEAR and input.ndim != _LINEAR[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR[mode]}D input")
    d = input.ndim - 2
    sizes, scales = _output_sizes(input, size, scale_factor, d, recompute_scale_factor)
    out = input
    for k, (n, o, scale) in enumerate(zip(input.shape[2:], sizes, scales)):
        axis = 2 + k
        if mode == "nearest":
            index = _factory.tensor(_nearest_index(n, o, scale), dtype=_dtype.int64, device=input.device)
            out = index_select(out, axis, index)
            continue
        weights = _linear_matrix(n, o, scale, bool(align_corners), input)
        out = matmul(weights, out) if axis == input.ndim - 2 else matmul(out, weights.T)
    return renamed(out, {"nearest": f"UpsampleNearest{d}DBackward0", "linear": "UpsampleLinear1DBackward0",
                         "bilinear": "UpsampleBilinear2DBackward0"}[mode])
