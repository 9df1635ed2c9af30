"""Regression and binary-classification losses, as torch.nn.functional's.

Each takes torch's arguments in torch's order, the deprecated ``size_average`` and
``reduce`` included (when given they decide the reduction, with torch's warning).
"""

from __future__ import annotations

from ..._ops.elementwise import where
from ..._tensor import Tensor

from ..._ops import loss as _loss
from ..._ops.broadcast import broadcast_shapes
from ..._ops.precision import in_working_precision
from .checks import check_reduction, legacy_reduction, require_tensor, same_device, warn_if_broadcast
from .checks import reduce as apply_reduction  # torch's parameter ``reduce`` takes the short name

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


def _pointwise_inputs(input, target, fn: str):
    require_tensor(input, "input", fn, 1)
    require_tensor(target, "target", fn, 2)
    warn_if_broadcast(input, target)
    same_device(input, target)


def _weighted(losses, weight, input, reduction: str, mean_over_weight: bool = True):
    """torch's per-element ``weight`` of mse_loss, l1_loss and huber_loss (same shape as ``input``)."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    weighted = losses * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        # torch divides by the weights' sum for mse and l1, but takes a plain mean for huber
        return weighted.sum() / weight.sum() if mean_over_weight else weighted.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@in_working_precision("MseLossBackward0")
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The squared error ``(input - target) ** 2``, reduced.

    Parameters
    ----------
    input, target : Tensor
        Of the same shape; other broadcastable shapes are used with a warning, as torch does.
    size_average, reduce : bool, optional
        Deprecated (as in torch): when either is given it sets the reduction, with a warning.
    reduction : {"mean", "sum", "none"}, default "mean"
    weight : Tensor, optional
        A weight per element, of ``input``'s shape; ``"mean"`` is then the weighted mean
        ``sum(w * loss) / sum(w)``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.mse_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 4.0])).item()
    2.0
    >>> F.mse_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 4.0]), reduction="none")
    tensor([0., 4.])
    >>> F.mse_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 4.0]), weight=lucid.tensor([1.0, 3.0])).item()
    3.0
    """
    _pointwise_inputs(input, target, "mse_loss")
    reduction = legacy_reduction(size_average, reduce, reduction)
    diff = input - target
    if weight is not None:
        return _weighted(diff * diff, weight, input, reduction)
    check_reduction(reduction)
    return apply_reduction(diff * diff, reduction)


@in_working_precision(None)  # torch composes it: abs, then mean or sum
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """The absolute error ``|input - target|``, reduced; its gradient at 0 is 0, as torch's.

    Parameters
    ----------
    input, target : Tensor
    size_average, reduce : bool, optional
        Deprecated, as for :func:`mse_loss`.
    reduction : {"mean", "sum", "none"}, default "mean"
    weight : Tensor, optional
        A weight per element; ``"mean"`` divides by its sum.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.l1_loss(lucid.tensor([1.0, 2.0]), lucid.tensor([0.0, 5.0])).item()
    2.0
    """
    _pointwise_inputs(input, target, "l1_loss")
    reduction = legacy_reduction(size_average, reduce, reduction)
    errors = (input - target).abs()
    if weight is not None:
        return _weighted(errors, weight, input, reduction)
    check_reduction(reduction)
    return apply_reduction(errors, reduction)


def _quadratic_then_linear(diff, threshold: float, scale_quadratic: bool):
    """``0.5 z^2 (/ threshold)`` for ``z = |diff| < threshold``, else linear: smooth L1 and Huber."""
    z = diff.abs()
    if scale_quadratic:  # smooth L1: 0.5 z^2 / beta, else z - 0.5 beta
        return where(z < threshold, 0.5 * z * z / threshold, z - 0.5 * threshold)
    return where(z < threshold, 0.5 * z * z, threshold * (z - 0.5 * threshold))  # Huber


@in_working_precision("SmoothL1LossBackward0")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """``0.5 z**2 / beta`` where ``z = |input - target| < beta``, else ``z - 0.5 beta``, reduced.

    With ``beta = 0`` it is :func:`l1_loss`, as in torch. It equals :func:`huber_loss` divided by ``beta``.

    Parameters
    ----------
    input, target : Tensor
    size_average, reduce : bool, optional
        Deprecated, as for :func:`mse_loss`.
    reduction : {"mean", "sum", "none"}, default "mean"
    beta : float, default 1.0
        Where the loss turns from quadratic to linear; ``>= 0``.

    Raises
    ------
    RuntimeError
        If ``beta`` is negative.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.smooth_l1_loss(lucid.tensor([0.5, 3.0]), lucid.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _pointwise_inputs(input, target, "smooth_l1_loss")
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(input, target, reduction=reduction)
    return apply_reduction(_quadratic_then_linear(input - target, beta, scale_quadratic=True), reduction)


@in_working_precision("HuberLossBackward0")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """``0.5 z**2`` where ``z = |input - target| < delta``, else ``delta (z - 0.5 delta)``, reduced.

    Parameters
    ----------
    input, target : Tensor
    reduction : {"mean", "sum", "none"}, default "mean"
    delta : float, default 1.0
        Where the loss turns from quadratic to linear; ``> 0``.
    weight : Tensor, optional
        A weight per element. As in torch, ``"mean"`` is then the plain mean of the weighted
        losses (not divided by the weights' sum, unlike :func:`mse_loss`).

    Raises
    ------
    RuntimeError
        If ``delta <= 0``.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> F.huber_loss(lucid.tensor([0.5, 3.0]), lucid.tensor([0.0, 0.0]), reduction="none", delta=2.0)
    tensor([0.1250, 4.0000])
    """
    _pointwise_inputs(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    losses = _quadratic_then_linear(input - target, delta, scale_quadratic=False)
    if weight is not None:
        return _weighted(losses, weight, input, reduction, mean_over_weight=False)
    check_reduction(reduction)
    return apply_reduction(losses, reduction)


def _binary_arguments(input, target, size_average, reduce, reduction: str, fn: str) -> str:
    """Check the tensors and return the reduction (the deprecated flags decide when given)."""
    require_tensor(input, "input", fn, 1)
    require_tensor(target, "target", fn, 2)
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    return reduction


def _binary_weight(weight, input):
    """A per-element weight (no gradient, as in torch), broadcast to ``input``'s shape."""
    if weight is None:
        return None
    require_tensor(weight, "weight", "binary_cross_entropy", 3)
    same_device(input, weight)
    return weight.detach().to(input.dtype)


@in_working_precision("BinaryCrossEntropyBackward0")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``-w (y log x + (1 - y) log(1 - x))`` for probabilities ``input``, reduced.

    As in torch, each log is clamped to at least -100 (so 0 and 1 give finite losses) and
    the gradient is ``w (x - y) / max(x (1 - x), 1e-12)``.

    Parameters
    ----------
    input : Tensor
        Probabilities in [0, 1].
    target : Tensor
        Of ``input``'s shape, values in [0, 1].
    weight : Tensor, optional
        Broadcast against ``input``; gets no gradient.
    size_average, reduce : bool, optional
        Deprecated, as for :func:`mse_loss`.
    reduction : {"mean", "sum", "none"}, default "mean"

    Raises
    ------
    ValueError
        If the shapes differ.
    RuntimeError
        If a value of ``input`` or ``target`` is outside [0, 1].

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> round(F.binary_cross_entropy(lucid.tensor([0.5, 0.5]), lucid.tensor([1.0, 0.0])).item(), 6)
    0.693147
    """
    reduction = _binary_arguments(input, target, size_average, reduce, reduction, "binary_cross_entropy")
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    same_device(input, target)
    if input.numel() and not bool(((input >= 0) & (input <= 1)).all()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if target.numel() and not bool(((target >= 0) & (target <= 1)).all()):
        raise RuntimeError("all elements of target should be between 0 and 1")
    weight = _binary_weight(weight, input)
    losses = _loss.binary_cross_entropy(input, target.to(input.dtype))
    if weight is not None:
        losses = losses * weight
    return apply_reduction(losses, reduction)


@in_working_precision("BinaryCrossEntropyWithLogitsBackward0")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """:func:`binary_cross_entropy` of ``sigmoid(input)``, computed stably from the logits.

    ``(1 - y) x - (1 + (p - 1) y) log(sigmoid(x))``, times ``weight``, reduced: torch's
    arithmetic, and torch's gradient ``w ((1 + (p - 1) y) sigmoid(x) - p y)``.

    Parameters
    ----------
    input : Tensor
        Logits.
    target : Tensor
        Of ``input``'s shape, values usually in [0, 1].
    weight : Tensor, optional
        Broadcast against ``input``; gets no gradient.
    size_average, reduce : bool, optional
        Deprecated, as for :func:`mse_loss`.
    reduction : {"mean", "sum", "none"}, default "mean"
    pos_weight : Tensor, optional
        The weight of positive examples, broadcast against ``input`` (one per class, along
        the last dimension); gets no gradient.

    Raises
    ------
    ValueError
        If the shapes differ.

    Examples
    --------
    >>> import lucid
    >>> import lucid.nn.functional as F
    >>> round(F.binary_cross_entropy_with_logits(lucid.tensor([0.0, 0.0]), lucid.tensor([1.0, 0.0])).item(), 6)
    0.693147
    >>> round(F.binary_cross_entropy_with_logits(lucid.tensor([0.0]), lucid.tensor([1.0]), pos_weight=lucid.tensor([2.0])).item(), 6)
    1.386294
    """
    reduction = _binary_arguments(input, target, size_average, reduce, reduction, "binary_cross_entropy_with_logits")
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    same_device(input, target)
    if pos_weight is not None:
        require_tensor(pos_weight, "pos_weight", "binary_cross_entropy_with_logits", 7)
        same_device(input, pos_weight)
        broadcast_shapes(pos_weight.shape, input.shape)
        pos_weight = pos_weight.detach().to(input.dtype)
    weight = _binary_weight(weight, input)
    losses = _loss.binary_cross_entropy_with_logits(input, target.to(input.dtype), pos_weight)
    if weight is not None:
        losses = losses * weight
    return apply_reduction(losses, reduction)
