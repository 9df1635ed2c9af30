"""Functions behind the layers: ``linear``, ``embedding``, activations and losses.

Import it as ``import lucid.nn.functional as F``. Every function takes and returns
:class:`lucid.Tensor` objects and follows the torch function of the same name: arguments,
defaults, the numbers it computes and the errors it raises.
"""

from __future__ import annotations

import collections
import numbers

from .. import _dtype, _factory
from .._arguments import describe, real
from .._autograd import named_node, no_grad
from .._ops.elementwise import clamp, matmul, where
from .._ops.reduction import log_softmax as _log_softmax, max as _max, min as _min
from .._ops.shape import cat
from .._ops.embedding import lookup_rows
from .._tensor import Tensor
from .._ops.linalg import linear as _linear
from .._ops.loss import class_cross_entropy as _class_cross_entropy
from .._ops.precision import widened
from ._functional import activation as _activation
from ._functional.activation import (  # noqa: F401 - re-exported
    elu, gelu, hardtanh, leaky_relu, log_softmax, mish, relu, relu6, sigmoid, silu, softmax, softplus, softsign, tanh,
)
from ._functional.checks import TORCH_TYPE as _TORCH_TYPE
from ._functional.checks import check_class_loss as _check_class_loss
from ._functional.checks import check_reduction as _check_reduction
from ._functional.checks import legacy_reduction as _legacy_reduction
from ._functional.checks import require_tensor as _require_tensor
from ._functional.checks import same_device as _same_device
from ._functional.loss import (  # noqa: F401 - re-exported
    binary_cross_entropy, binary_cross_entropy_with_logits, huber_loss, l1_loss, mse_loss, smooth_l1_loss,
)
from ._functional.normalization import batch_norm, dropout, layer_norm  # noqa: F401 - re-exported
# attention (issue 24)
from ._functional.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: F401 - re-exported
# convolutions, pooling, padding and resizing (issue 24)
from ._functional.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d  # noqa: F401 - re-exported
from ._functional.normalization import dropout2d  # noqa: F401 - re-exported
from ._functional.padding import pad  # noqa: F401 - re-exported
from ._functional.pooling import (  # noqa: F401 - re-exported
    adaptive_avg_pool1d, adaptive_avg_pool2d, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d,
)
from ._functional.upsampling import interpolate  # noqa: F401 - re-exported

__all__ = [
    "linear", "embedding", "embedding_bag", "dropout", "layer_norm", "batch_norm", *_activation.__all__,
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "nll_loss", "cross_entropy", "one_hot",
    # attention (issue 24)
    "scaled_dot_product_attention", "multi_head_attention_forward",
    # convolutions, pooling, padding and resizing (issue 24)
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
    "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "dropout2d", "pad", "interpolate",
]

# --- layers --------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """The affine map ``input @ weight.T + bias``.

    Parameters
    ----------
    input : Tensor
        Shape ``(*, in_features)``.
    weight : Tensor
        Shape ``(out_features, in_features)``.
    bias : Tensor, optional
        Shape ``(out_features,)``.

    Returns
    -------
    Tensor
        Shape ``(*, out_features)``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> x = lucid.tensor([[1.0, 2.0]])
    >>> w = lucid.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, -1.0]])
    >>> F.linear(x, w, lucid.tensor([0.0, 0.5, 1.0]))
    tensor([[ 1.0000,  3.5000, -1.0000]])
    >>> F.linear(x, lucid.ones(3, 3))
    Traceback (most recent call last):
    ...
    RuntimeError: mat1 and mat2 shapes cannot be multiplied (1x2 and 3x3)
    """
    _require_tensor(input, "input", "linear", 1)
    _require_tensor(weight, "weight", "linear", 2)
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"linear(): weight must be 1-D or 2-D, got {weight.ndim}-D")
    if bias is not None:
        _require_tensor(bias, "bias", "linear", 3)
    if (weight.ndim == 2 and input.ndim and input.device == weight.device and input.dtype is weight.dtype
            and input.dtype.is_floating_point
            and (bias is None or (bias.shape == weight.shape[:1] and bias.dtype is input.dtype
                                  and bias.device == input.device))):
        return _linear(input, weight, bias)  # one node, torch's addmm
    out = matmul(input, weight.T if weight.ndim == 2 else weight)
    if bias is not None:
        if bias.shape != out.shape[-1:] and bias.numel() != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({out.shape[-1] if out.ndim else 1}) must match the existing "
                f"size ({bias.shape[-1] if bias.ndim else 1}) at non-singleton dimension {max(out.ndim - 1, 0)}.  "
                f"Target sizes: {list(out.shape)}.  Tensor sizes: {list(bias.shape)}"
            )
        out = out + bias
    return out


def _validate_padding_idx(padding_idx, num_embeddings: int):
    """torch's normalisation: a negative index counts from the end.

    torch asserts (AssertionError, or an IndexError or TypeError for a float or a string);
    lucid raises TypeError for anything but an int and ValueError, with torch's words, for
    an index out of range.
    """
    if padding_idx is None:
        return None
    if not isinstance(padding_idx, numbers.Integral) or isinstance(padding_idx, bool):
        raise TypeError(f"padding_idx must be an int or None, got {padding_idx!r}")
    if padding_idx >= num_embeddings or padding_idx < -num_embeddings:  # type: ignore[operator]  # typeshed's numbers ABCs do not compare with int
        raise ValueError(f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} for "
                         f"num_embeddings={num_embeddings}")
    if padding_idx < 0:
        padding_idx = num_embeddings + padding_idx
    return int(padding_idx)


def _check_indices(input, weight) -> None:
    """``input`` must be an int32/int64 tensor on ``weight``'s device with values in [0, rows)."""
    _require_tensor(input, "input", "embedding", 1)
    _require_tensor(weight, "weight", "embedding", 2)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input.dtype not in (_dtype.int64, _dtype.int32):
        raise TypeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.dtype} instead (while checking arguments for embedding)"
        )
    _same_device(input, weight)
    rows = weight.shape[0]
    if input.numel() and bool(((input < 0) | (input >= rows)).any()):  # one host sync
        low, high = _min(input).item(), _max(input).item()
        raise IndexError(
            f"index out of range in self: index {low if low < 0 else high} is out of range for an "
            f"embedding of {rows} rows"
        )


def _row_norms(rows, norm_type: float):
    """The ``norm_type``-norm of each row of ``rows``, kept as a column (torch's ``Tensor.norm(p)``)."""
    p = float(norm_type)
    magnitude = rows.abs()
    if p == float("inf"):
        return _max(magnitude, dim=-1, keepdim=True).values
    if p == float("-inf"):
        return _min(magnitude, dim=-1, keepdim=True).values
    if p == 0:
        return (magnitude != 0).to(rows.dtype).sum(dim=-1, keepdim=True)
    if p == 1:
        return magnitude.sum(dim=-1, keepdim=True)
    if p == 2:
        return (rows * rows).sum(dim=-1, keepdim=True).sqrt()
    return (magnitude ** p).sum(dim=-1, keepdim=True) ** (1.0 / p)


def _check_renorm(max_norm, norm_type) -> None:
    """``max_norm`` None or a number >= 0 and ``norm_type`` a number (infinity allowed), refused
    otherwise before a row is touched (torch takes a NaN of either and renormalises nothing, or
    fails on a string inside ``embedding_renorm_``)."""
    if max_norm is not None and (isinstance(max_norm, bool) or not isinstance(max_norm, numbers.Real)):
        raise TypeError(f"max_norm must be None or a number, got {describe(max_norm)}")
    if max_norm is not None and not max_norm >= 0:  # type: ignore[operator]  # typeshed's numbers ABCs do not compare with int
        raise ValueError(f"max_norm must be None or a number >= 0, got {max_norm!r}")
    real("norm_type", norm_type)


def _renorm_rows_(weight, flat_indices, max_norm: float, norm_type: float) -> None:
    """torch's ``embedding_renorm_``: scale, in place, each looked-up row whose norm exceeds ``max_norm``.

    A row's scale is ``max_norm / (norm + 1e-7)``. Rows not named by ``flat_indices`` are not
    touched; named rows within the limit are written back unchanged.
    """
    with no_grad():
        rows = weight.index_select(0, flat_indices)
        (wide,), narrow = widened(rows, name="EmbeddingRenormBackward")  # torch computes the scale in double
        norms = _row_norms(wide, norm_type)
        scaled = narrow(wide * (max_norm / (norms + 1e-7)))
        weight[flat_indices] = where(norms > max_norm, scaled, rows)


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of ``weight``: ``out[..., :] = weight[input[...], :]``.

    The lookup is one vectorised gather; its backward one scatter-add of the output gradient
    into a zero ``weight``-shaped gradient, so an index that appears twice gets both
    contributions.

    Parameters
    ----------
    input : Tensor
        Indices, an ``int64`` or ``int32`` tensor of any shape with values in
        ``[0, weight.shape[0])``; it is never modified.
    weight : Tensor
        The table, shape ``(num_embeddings, embedding_dim)``.
    padding_idx : int, optional
        A row that gets no gradient (its entries of the gradient are zero). Negative values
        count from the end. The forward returns the stored row unchanged, as torch does.
    max_norm : float, optional
        Before the lookup, each row named in ``input`` whose ``norm_type``-norm exceeds
        ``max_norm`` is rescaled in place (under :class:`lucid.no_grad`) to norm ``max_norm``:
        ``row *= max_norm / (norm + 1e-7)``. Other rows are not touched. This writes into
        ``weight`` and bumps its version.
    norm_type : float, default 2.0
        The ``p`` of the norm for ``max_norm`` (``inf`` allowed).
    scale_grad_by_freq : bool, default False
        Divide the gradient of each row by the number of times it appears in ``input``.
    sparse : bool, default False
        Give ``weight`` a row-sparse gradient (a :class:`lucid.SparseTensor`): the looked-up
        indices and the output gradient's rows, uncoalesced, as torch's. Its backward costs
        O(batch), whatever the table's size; :class:`lucid.optim.SparseAdam`, ``SGD`` and
        ``Adagrad`` consume it in O(touched rows). Rows at ``padding_idx`` are left out;
        ``scale_grad_by_freq`` raises at backward, as in torch.

    Returns
    -------
    Tensor
        Shape ``input.shape + (embedding_dim,)``.

    Raises
    ------
    TypeError
        If ``input`` is not an integer tensor.
    IndexError
        If an index is negative or ``>= num_embeddings``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> weight = lucid.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> idx = lucid.tensor([[1, 2], [2, 0]])
    >>> out = F.embedding(idx, weight, padding_idx=0)
    >>> out.shape
    (2, 2, 2)
    >>> out.sum().backward()
    >>> weight.grad
    tensor([[0., 0.],
            [1., 1.],
            [2., 2.]])
    >>> F.embedding(lucid.tensor([3]), weight)
    Traceback (most recent call last):
    ...
    IndexError: index out of range in self: index 3 is out of range for an embedding of 3 rows
    """
    _check_indices(input, weight)
    rows = weight.shape[0]
    padding_idx = _validate_padding_idx(padding_idx, rows)
    _check_renorm(max_norm, norm_type)
    flat = input.reshape(-1)
    if max_norm is not None:
        _renorm_rows_(weight, flat, max_norm, norm_type)
    return lookup_rows(input, flat, weight, padding_idx, scale_grad_by_freq, sparse)


_BAG_MODES = ("sum", "mean", "max")


def _bag_layout(input, offsets, per_sample_weights, include_last_offset: bool):
    """The flat indices, the start of each bag and the flat per-sample weights, checked as torch checks them."""
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {type(offsets).__name__}"
            )
        starts = _factory.arange(input.shape[0], device=input.device) * input.shape[1]
        flat_weights = None if per_sample_weights is None else per_sample_weights.reshape(-1)
        return input.reshape(-1), starts, flat_weights, input.numel()
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    _require_tensor(offsets, "offsets", "embedding_bag", 3)
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    if offsets.dtype not in (_dtype.int64, _dtype.int32):
        raise TypeError(f"offsets must be an int32 or int64 tensor, got {offsets.dtype}")
    _same_device(input, offsets)
    n = input.numel()
    if offsets.numel():
        first, last = offsets[0].item(), offsets[-1].item()
        if first != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
                f"However, got {first}"
            )
        if last > n:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {last}"
            )
    starts = offsets.to(_dtype.int64)
    if include_last_offset:  # the last offset closes the last bag, which torch runs to the end of input anyway
        if offsets.numel() == 0:
            raise RuntimeError("include_last_offset: number of offsets should be at least 1")
        starts = starts[:-1]
    return input, starts, per_sample_weights, n


def _torch_frequency_scales(flat, weight):
    """The factor torch's CPU backward of ``embedding_bag`` puts on each entry's gradient.

    It means to divide each row's gradient by the row's count in the batch, but divides the
    k-th distinct index (in sorted order) by the count of the k-th entry of the *sorted*
    indices, which is another row's count once a repeated index precedes it.
    """
    values = flat.tolist()
    counts, ordered = collections.Counter(values), sorted(values)
    divisor = {row: counts[ordered[k]] for k, row in enumerate(sorted(counts))}
    return _factory.tensor([1.0 / divisor[v] for v in values], dtype=weight.dtype, device=weight.device).reshape(-1, 1)


def _scale_gradient(tensor, scale):
    """``tensor`` itself, whose gradient is multiplied by ``scale``: the detached value plus a zero that carries it."""
    return tensor.detach() + (tensor - tensor.detach()) * scale


@named_node("EmbeddingBagBackward0")  # printing (issue 24): torch's node for the whole bag
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of each bag of rows of ``weight``, without building the looked-up rows per bag.

    A bag is a row of a 2-D ``input``, or, for a 1-D ``input``, the slice from one entry of
    ``offsets`` to the next (the last bag runs to the end, or to the last offset with
    ``include_last_offset``). Entries equal to ``padding_idx`` are left out of their bag (and
    of its count, for the mean); an empty bag gives zeros. The rows are looked up once with
    :func:`embedding` (so ``sparse``, ``scale_grad_by_freq`` and ``max_norm`` act as there),
    then laid out as ``(bags, longest bag)`` and reduced.

    Parameters
    ----------
    input : Tensor
        Indices (``int64`` or ``int32``): ``(B, N)`` for ``B`` bags of ``N``, or 1-D with ``offsets``.
    weight : Tensor
        The table, ``(num_embeddings, embedding_dim)``.
    offsets : Tensor, optional
        1-D, the start of each bag in ``input`` (the first is 0); only with a 1-D ``input``.
    max_norm : float, optional
        Renormalise, in place, each looked-up row whose ``norm_type``-norm exceeds it.
    norm_type : float, default 2
    scale_grad_by_freq : bool, default False
        Divide each row's gradient by its count in ``input`` (not with ``mode="max"``).
    mode : {"sum", "mean", "max"}, default "mean"
    sparse : bool, default False
        Give ``weight`` a row-sparse gradient (not with ``mode="max"``).
    per_sample_weights : Tensor, optional
        A weight per entry of ``input`` (its shape), multiplying each row before the sum
        (``mode="sum"`` only); it gets a gradient.
    include_last_offset : bool, default False
        ``offsets`` has one more entry, the end of the last bag.
    padding_idx : int, optional
        Entries equal to it are left out of the bags (negative counts from the end).

    Returns
    -------
    Tensor
        ``(B, embedding_dim)``.

    Notes
    -----
    With ``scale_grad_by_freq`` (dense gradients) lucid reproduces torch's CPU numbers,
    which are not what torch documents: torch divides the gradient of the k-th distinct
    index, in sorted order, by the count of the k-th entry of the sorted indices. For
    ``[1, 1, 3]`` row 3's gradient is halved although it appears once. Each row is divided
    by its own count only when no index repeats before it in sorted order. With
    ``include_last_offset`` the last bag runs to the end of ``input`` whatever the last
    offset says, as in torch.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> weight = lucid.tensor([[1.0, 1.0], [2.0, 4.0], [3.0, 9.0]], requires_grad=True)
    >>> F.embedding_bag(lucid.tensor([0, 1, 2, 2]), weight, lucid.tensor([0, 1]), mode="sum")
    tensor([[ 1.,  1.],
            [ 8., 22.]], grad_fn=<EmbeddingBagBackward0>)
    >>> F.embedding_bag(lucid.tensor([[0, 2], [1, 1]]), weight, mode="max")
    tensor([[3., 9.],
            [2., 4.]], grad_fn=<EmbeddingBagBackward0>)
    >>> F.embedding_bag(lucid.tensor([[0, 2], [1, 0]]), weight, padding_idx=0).detach()  # a mean of the rest
    tensor([[3., 9.],
            [2., 4.]])
    """
    _require_tensor(input, "input", "embedding_bag", 1)
    _require_tensor(weight, "weight", "embedding_bag", 2)
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None:
        _require_tensor(per_sample_weights, "per_sample_weights", "embedding_bag", 9)
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
                f"mode='sum' (got mode='{mode}'). Please open a feature request on GitHub."
            )
        if per_sample_weights.shape != input.shape:
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, then it must "
                f"have the same shape as the input ({list(input.shape)})"
            )
        if per_sample_weights.dtype is not weight.dtype:
            raise RuntimeError(
                f"expected scalar type {_TORCH_TYPE[weight.dtype.name]} but found "
                f"{_TORCH_TYPE[per_sample_weights.dtype.name]}"
            )
    _check_indices(input, weight)
    padding_idx = _validate_padding_idx(padding_idx, weight.shape[0])
    flat, starts, sample_weights, end = _bag_layout(input, offsets, per_sample_weights, include_last_offset)
    # torch divides by the frequencies itself, in its own way (see Notes), except for sparse gradients
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq and sparse, sparse)
    if scale_grad_by_freq and not sparse and flat.numel():
        rows = _scale_gradient(rows, _torch_frequency_scales(flat, weight))
    bags, dim, device = starts.shape[0], weight.shape[1], weight.device
    if bags == 0:
        return rows[:0].reshape(0, dim) if rows.numel() else _factory.zeros(0, dim, dtype=weight.dtype, device=device)
    # the positions of each bag's entries, laid out as (bags, longest); position n is a sentinel
    n = flat.numel()
    stops = cat([starts[1:], _factory.tensor([end], device=device)]) if bags > 1 else _factory.tensor([end], device=device)
    stops = clamp(stops, max=end)
    lengths = clamp(stops - starts, min=0)
    longest = max(int(_max(lengths).item()), 1)
    positions = starts.reshape(bags, 1) + _factory.arange(longest, device=device).reshape(1, longest)
    inside = _factory.arange(longest, device=device).reshape(1, longest) < lengths.reshape(bags, 1)
    if padding_idx is not None:
        extended = cat([flat.to(_dtype.int64), _factory.tensor([padding_idx], device=device)])
        inside = inside & (extended[where(inside, positions, n)] != padding_idx)
    positions = where(inside, positions, n)
    sentinel = _factory.zeros(1, dim, dtype=weight.dtype, device=device)
    laid_out = cat([rows, sentinel])[positions]  # (bags, longest, dim)
    if mode == "max":
        floor = _factory.full((1,), float("-inf"), dtype=weight.dtype, device=device)
        best = _max(where(inside.unsqueeze(-1), laid_out, floor), dim=1).values
        return where(inside.any(dim=1, keepdim=True), best, 0.0)
    if sample_weights is not None:
        scales = cat([sample_weights, _factory.zeros(1, dtype=weight.dtype, device=device)])[positions]
        laid_out = laid_out * scales.unsqueeze(-1)
    total = laid_out.sum(dim=1)
    if mode == "sum":
        return total
    counts = inside.sum(dim=1, keepdim=True).to(weight.dtype)
    return total / clamp(counts, min=1)


# --- losses ----------------------------------------------------------------------------------
def _class_weight(weight, input, classes: int, fn: str = ""):
    if weight is None:
        return None
    _require_tensor(weight, "weight", "nll_loss", 3)
    if weight.ndim != 1 or weight.numel() != classes:
        raise RuntimeError(
            f"{fn}weight tensor should be defined either for all {classes} classes or no classes but got weight "
            f"tensor of shape: {list(weight.shape)}"
        )
    if weight.dtype is not input.dtype:
        raise RuntimeError(
            f"expected scalar type {_TORCH_TYPE[input.dtype.name]} but found {_TORCH_TYPE[weight.dtype.name]}"
        )
    _same_device(input, weight)
    return weight.detach()  # as in torch, the class weights get no gradient


def _check_target_dtype(target) -> None:
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_TORCH_TYPE[target.dtype.name]}")


def _check_class_target(input, target) -> None:
    """torch's rules for class-index targets, checked in torch's order, with its messages."""
    _require_tensor(target, "target", "nll_loss", 2)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim == 1:  # no batch: a 0-D target, or a 1-D one of size 1
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        _check_target_dtype(target)
        if target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
    else:
        batch = target.shape[0] if target.ndim else 0
        if input.shape[0] != batch:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({batch}).")
        if input.ndim == 2 and target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim > 2 and target.shape[1:] != input.shape[2:]:
            expected = [input.shape[0]] + list(input.shape[2:])
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
        _check_target_dtype(target)
    _same_device(input, target)


def _check_target_range(labels, classes: int, ignore_index: int):
    """Which ``labels`` are ``ignore_index``; torch's IndexError where another is outside [0, classes)."""
    ignored = labels == ignore_index
    outside = (labels < 0) | (labels >= classes)
    if labels.numel() and bool((outside & ~ignored).any()):  # one host sync
        bad = where(ignored, 0, labels)
        low, high = _min(bad).item(), _max(bad).item()
        raise IndexError(f"Target {low if low < 0 else high} is out of bounds.")
    return ignored


def _picked_losses(input, target, weight, ignore_index):
    """Per-element ``-w[y] * input[y]`` (0 where ignored) and the per-element weights, both target-shaped.

    ``input`` is ``(C,)`` with a 0-D target, or ``(N, C, d1, ...)`` with a ``(N, d1, ...)`` one.
    """
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if input.ndim == 1:
        scores = input.reshape(1, classes)
    elif input.ndim == 2:
        scores = input
    else:  # move the class dimension last: (N, d1, ..., C)
        scores = input.permute(0, *range(2, input.ndim), 1).reshape(-1, classes)
    labels = target.reshape(-1)
    ignored = _check_target_range(labels, classes, ignore_index)
    safe = where(ignored, 0, labels)
    picked = scores[_factory.arange(labels.numel(), device=labels.device), safe]
    if weight is None:
        weights = where(ignored, 0.0, _factory.ones(labels.shape, dtype=input.dtype, device=input.device))
    else:
        weights = where(ignored, 0.0, weight[safe])
    losses = where(ignored, 0.0, -picked * weights)
    shape = () if input.ndim == 1 else target.shape  # a (1,) target of a 1-D input gives a 0-D loss
    return losses.reshape(shape), weights.reshape(shape)


@named_node("NllLossBackward0")  # printing (issue 24): torch's node for the loss
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """The negative log likelihood loss: ``-w[y_i] * input[i, y_i]`` for log-probabilities ``input``.

    With ``reduction="mean"`` this is torch's *weighted* mean,
    ``sum_i w[y_i] * -input[i, y_i] / sum_i w[y_i]`` over the samples whose target is not
    ``ignore_index`` (nan if there are none).

    Parameters
    ----------
    input : Tensor
        Log-probabilities, shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.
    target : Tensor
        Class indices (``int64``), shape ``()``, ``(N,)`` or ``(N, d1, ...)``, each in ``[0, C)``
        or equal to ``ignore_index``.
    weight : Tensor, optional
        A weight per class, shape ``(C,)``; it receives no gradient.
    size_average, reduce : bool, optional
        Deprecated (as in torch): when either is given it sets the reduction, with a warning.
    ignore_index : int, default -100
        A target value that contributes neither loss nor gradient.
    reduction : {"mean", "sum", "none"}, default "mean"

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> logp = lucid.tensor([[-1.0, -2.0], [-3.0, -4.0]])
    >>> F.nll_loss(logp, lucid.tensor([0, 1]))
    tensor(2.5000)
    >>> F.nll_loss(logp, lucid.tensor([0, 1]), weight=lucid.tensor([1.0, 3.0]))
    tensor(3.2500)
    >>> F.nll_loss(logp, lucid.tensor([0, -100]), reduction="none")
    tensor([1., 0.])
    >>> F.nll_loss(logp, lucid.tensor([0, 2]))
    Traceback (most recent call last):
    ...
    IndexError: Target 2 is out of bounds.
    """
    _require_tensor(input, "input", "nll_loss", 1)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_class_loss("nll_loss_nd", ignore_index)
    _check_class_target(input, target)
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    weight = _class_weight(weight, input, classes)
    losses, weights = _picked_losses(input, target, weight, ignore_index)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / weights.sum()


def _smoothed_class_loss(logp, target, weight, ignore_index, reduction, label_smoothing, classes):
    """torch's ``cross_entropy`` with class-index targets and ``label_smoothing > 0``."""
    class_dim = 1 if logp.ndim > 1 else 0
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if logp.ndim == 1:
        target = target.reshape(())
    ignored = target == ignore_index
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = classes
        smooth = -(logp * weight.detach().reshape(shape)).sum(dim=class_dim)
    else:
        smooth = -logp.sum(dim=class_dim)
    smooth = where(ignored, 0.0, smooth)
    if reduction == "mean":
        if weight is not None:
            safe = where(ignored, 0, target)
            kept = where(ignored, 0.0, weight.detach()[safe])
            smooth = smooth.sum() / kept.sum()
        else:
            smooth = smooth.sum() / (~ignored).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / classes)


def _probability_loss(logp, target, weight, reduction, label_smoothing, classes):
    """torch's ``cross_entropy`` with class-probability targets (``target.shape == input.shape``)."""
    class_dim = 1 if logp.ndim > 1 else 0
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    product = logp * target
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = classes
        product = product * weight.reshape(shape)
    losses = -product.sum(dim=class_dim)
    if reduction == "mean":
        return losses.sum() / (logp.numel() // classes)
    if reduction == "sum":
        return losses.sum()
    return losses


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """The cross-entropy between the softmax of the logits ``input`` and ``target``.

    With class-index targets it is ``nll_loss(log_softmax(input, 1), target, ...)``. With
    ``label_smoothing = e > 0`` it is, as in torch,
    ``(1 - e) * nll + e / C * smooth``, where ``smooth`` is the (weighted) sum of
    ``-log_softmax`` over the classes, reduced like the nll term (for ``"mean"``, divided by
    the same total weight). A ``target`` of the same shape as ``input`` is read as class
    probabilities instead.

    Parameters
    ----------
    input : Tensor
        Unnormalised scores, shape ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)``.
    target : Tensor
        Class indices (``int64``) as for :func:`nll_loss`, or floating-point class
        probabilities of ``input``'s shape.
    weight : Tensor, optional
        A weight per class, shape ``(C,)``.
    size_average, reduce : bool, optional
        Deprecated, as for :func:`nll_loss`.
    ignore_index : int, default -100
        A target value that contributes nothing (class-index targets only).
    reduction : {"mean", "sum", "none"}, default "mean"
    label_smoothing : float, default 0.0
        In ``[0, 1]``: the share of the target mass spread uniformly over the classes.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> logits = lucid.tensor([[0.0, 0.0], [0.0, 0.0]], requires_grad=True)
    >>> loss = F.cross_entropy(logits, lucid.tensor([0, 1]))
    >>> round(loss.item(), 6)  # log 2
    0.693147
    >>> loss.backward()
    >>> logits.grad
    tensor([[-0.2500,  0.2500],
            [ 0.2500, -0.2500]])
    >>> round(F.cross_entropy(logits, lucid.tensor([0, 1]), label_smoothing=0.2).item(), 6)
    0.693147
    """
    _require_tensor(input, "input", "cross_entropy", 1)
    _require_tensor(target, "target", "cross_entropy", 2)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_class_loss("cross_entropy_loss", ignore_index, label_smoothing)
    if input.shape == target.shape:  # class probabilities, as torch decides
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_TORCH_TYPE[target.dtype.name]}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    class_dim = 1 if input.ndim > 1 else 0
    classes = input.shape[class_dim]
    if input.shape == target.shape:
        _same_device(input, target)
        weight = _class_weight(weight, input, classes, fn="cross_entropy: ")
        return _probability_loss(_log_softmax(input, class_dim), target, weight, reduction,
                                 label_smoothing, classes)
    if (input.ndim == 2 and weight is None and label_smoothing == 0 and reduction != "none"
            and input.dtype.is_floating_point and target.ndim == 1):
        _check_class_target(input, target)
        _check_target_range(target, classes, ignore_index)
        return _class_cross_entropy(input, target, ignore_index, reduction)  # one node, torch's closed form
    logp = _log_softmax(input, class_dim)
    if label_smoothing > 0:
        _check_class_target(input, target)
        weight = _class_weight(weight, input, classes)
        return _smoothed_class_loss(logp, target, weight, ignore_index, reduction, label_smoothing, classes)
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


# --- encodings --------------------------------------------------------------------------------
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """The int64 one-hot encoding of the class indices in ``tensor``: shape ``tensor.shape + (num_classes,)``.

    Parameters
    ----------
    tensor : Tensor
        int64 class indices, non-negative.
    num_classes : int, default -1
        The number of classes; -1 means one more than the largest index.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.one_hot(lucid.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    >>> F.one_hot(lucid.tensor([1]), num_classes=4)
    tensor([[0, 1, 0, 0]])
    """
    _require_tensor(tensor, "tensor", "one_hot", 1)
    if tensor.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    empty = tensor.numel() == 0
    if not empty and bool((tensor < 0).any()):
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if empty:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    elif num_classes < 1 and not empty:
        raise RuntimeError("num_classes should be positive")
    elif not empty and int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _factory.arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()
