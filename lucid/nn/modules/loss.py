"""Losses as modules: each holds its options and calls the function of :mod:`lucid.nn.functional`.

As in torch, a class weight (and BCEWithLogitsLoss's ``pos_weight``) is a buffer: it
follows ``.to()`` and appears in ``state_dict`` when given.
"""

from __future__ import annotations

from .. import functional as F
from .._functional.checks import check_class_loss, check_reduction, legacy_reduction
from ..._tensor import Tensor
from ..module import Module

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss"]


class _Loss(Module):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)
        check_reduction(self.reduction)  # where the loss is built (torch: at its first call)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """The mean (``reduction``) absolute error; see :func:`lucid.nn.functional.l1_loss`.

    Parameters
    ----------
    size_average, reduce : bool, optional
        Deprecated (as in torch): when given they set ``reduction``, with a warning.
    reduction : {"mean", "sum", "none"}, default "mean"

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.L1Loss()(lucid.tensor([1.0, 2.0]), lucid.tensor([0.0, 0.0])).item()
    1.5
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """The mean (``reduction``) squared error; see :func:`lucid.nn.functional.mse_loss`.

    Parameters
    ----------
    size_average, reduce : bool, optional
        Deprecated: when given they set ``reduction``, with a warning.
    reduction : {"mean", "sum", "none"}, default "mean"

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.MSELoss(reduction="sum")(lucid.tensor([1.0, 2.0]), lucid.tensor([0.0, 0.0])).item()
    5.0
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above; see :func:`lucid.nn.functional.smooth_l1_loss`.

    Parameters
    ----------
    size_average, reduce : bool, optional
        Deprecated: when given they set ``reduction``, with a warning.
    reduction : {"mean", "sum", "none"}, default "mean"
    beta : float, default 1.0

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.SmoothL1Loss(beta=0.5)(lucid.tensor([0.25, 2.0]), lucid.tensor([0.0, 0.0])).item()
    0.90625
    """

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, ``delta``-scaled linear above; see :func:`lucid.nn.functional.huber_loss`.

    Parameters
    ----------
    reduction : {"mean", "sum", "none"}, default "mean"
    delta : float, default 1.0

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.HuberLoss(delta=0.5)(lucid.tensor([0.25, 2.0]), lucid.tensor([0.0, 0.0])).item()
    0.453125
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """The negative log likelihood of log-probabilities; see :func:`lucid.nn.functional.nll_loss`.

    Parameters
    ----------
    weight : Tensor, optional
        A weight per class (a buffer).
    size_average, reduce : bool, optional
        Deprecated: when given they set ``reduction``, with a warning.
    ignore_index : int, default -100
    reduction : {"mean", "sum", "none"}, default "mean"

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> nn.NLLLoss()(lucid.tensor([[-1.0, -2.0], [-3.0, -4.0]]), lucid.tensor([0, 1])).item()
    2.5
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        check_class_loss("nll_loss_nd", ignore_index)
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Softmax cross-entropy of logits; see :func:`lucid.nn.functional.cross_entropy`.

    Targets are class indices or, of the input's shape, class probabilities.

    Parameters
    ----------
    weight : Tensor, optional
        A weight per class (a buffer).
    size_average, reduce : bool, optional
        Deprecated: when given they set ``reduction``, with a warning.
    ignore_index : int, default -100
    reduction : {"mean", "sum", "none"}, default "mean"
    label_smoothing : float, default 0.0

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> loss = nn.CrossEntropyLoss(weight=lucid.tensor([1.0, 2.0]), label_smoothing=0.1)
    >>> list(loss.state_dict())
    ['weight']
    >>> round(loss(lucid.zeros(2, 2), lucid.tensor([0, 1])).item(), 6)
    0.693147
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        check_class_loss("cross_entropy_loss", ignore_index, label_smoothing)
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities; see :func:`lucid.nn.functional.binary_cross_entropy`.

    Parameters
    ----------
    weight : Tensor, optional
        A weight per element, broadcast (a buffer).
    size_average, reduce : bool, optional
        Deprecated: when given they set ``reduction``, with a warning.
    reduction : {"mean", "sum", "none"}, default "mean"

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> round(nn.BCELoss()(lucid.tensor([0.5]), lucid.tensor([1.0])).item(), 6)
    0.693147
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross-entropy of logits; see :func:`lucid.nn.functional.binary_cross_entropy_with_logits`.

    Parameters
    ----------
    weight : Tensor, optional
        A weight per element, broadcast (a buffer).
    size_average, reduce : bool, optional
        Deprecated: when given they set ``reduction``, with a warning.
    reduction : {"mean", "sum", "none"}, default "mean"
    pos_weight : Tensor, optional
        The weight of positive examples, one per class (a buffer).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> loss = nn.BCEWithLogitsLoss(pos_weight=lucid.tensor([3.0]))
    >>> list(loss.state_dict())
    ['pos_weight']
    >>> round(loss(lucid.tensor([[0.0]]), lucid.tensor([[1.0]])).item(), 6)
    2.079442
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)
