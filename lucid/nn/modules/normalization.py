"""Dropout and the normalisation layers: ``Dropout``, ``Dropout2d``, ``LayerNorm``, ``BatchNorm1d``, ``BatchNorm2d``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ... import _dtype, _factory
from ..._arguments import at_least, count, number
from ..._autograd import no_grad
from .. import functional as F
from .._functional.checks import check_dropout_probability, refuse_inplace
from .._functional.normalization import check_batch_statistics, normalized_shape_tuple
from ..._tensor import Tensor
from ..module import Module
from ..parameter import Parameter

if TYPE_CHECKING:
    import lucid  # the annotations' lucid.dtype

__all__ = ["Dropout", "Dropout2d", "LayerNorm", "BatchNorm1d", "BatchNorm2d"]


class Dropout(Module):
    """In training, zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    In evaluation mode (``model.eval()``) it returns its input unchanged. The masks come from
    lucid's generator, seeded by :func:`lucid.manual_seed` (not torch's stream of numbers).

    Parameters
    ----------
    p : float, default 0.5
        In [0, 1].
    inplace : bool, default False
        True raises ``NotImplementedError``.

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1].

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> _ = lucid.manual_seed(0)
    >>> drop = nn.Dropout(0.5)
    >>> drop
    Dropout(p=0.5, inplace=False)
    >>> sorted(set(drop(lucid.ones(100)).tolist()))
    [0.0, 2.0]
    >>> drop.eval()(lucid.ones(2))
    tensor([1., 1.])
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        check_dropout_probability(p)
        refuse_inplace(inplace)
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """In training, zero whole channels (each ``input[n, c]``) with probability ``p`` and
    scale the rest by ``1 / (1 - p)``: see :func:`lucid.nn.functional.dropout2d`.

    Parameters
    ----------
    p : float, default 0.5
    inplace : bool, default False
        True raises ``NotImplementedError``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> drop = nn.Dropout2d(0.25)
    >>> drop
    Dropout2d(p=0.25, inplace=False)
    >>> drop.eval()(lucid.ones(1, 2, 1, 1)).tolist()
    [[[[1.0]], [[1.0]]]]
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training)


def _factory_kwargs(device, dtype) -> dict:
    return {"device": device or "cpu", "dtype": dtype}


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dimensions, then scale and shift.

    See :func:`lucid.nn.functional.layer_norm`.

    Parameters
    ----------
    normalized_shape : int or sequence of int
        The trailing dimensions to normalise over.
    eps : float, default 1e-5
        Added to the variance.
    elementwise_affine : bool, default True
        Learn ``weight`` (ones at first) and ``bias`` (zeros at first) of shape ``normalized_shape``.
    bias : bool, default True
        Learn the bias (with ``elementwise_affine``).
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> norm = nn.LayerNorm(2, eps=0.0)
    >>> norm
    LayerNorm((2,), eps=0.0, elementwise_affine=True, bias=True)
    >>> norm(lucid.tensor([[1.0, 3.0]]))
    tensor([[-1.,  1.]], grad_fn=<NativeLayerNormBackward0>)
    >>> list(norm.state_dict())
    ['weight', 'bias']
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: str | None = None, dtype: lucid.dtype | None = None) -> None:
        super().__init__()
        self.normalized_shape = normalized_shape_tuple(normalized_shape)
        at_least("eps", eps)  # torch takes NaN, and every output is NaN
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kwargs = _factory_kwargs(device, dtype)
        if elementwise_affine:
            self.weight = Parameter(_factory.ones(*self.normalized_shape, **kwargs))
            if bias:
                self.bias = Parameter(_factory.zeros(*self.normalized_shape, **kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Set the weight to ones and the bias to zeros.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> norm = nn.LayerNorm(2)
        >>> _ = norm.weight.data.fill_(3.0)
        >>> norm.reset_parameters()
        >>> norm.weight.tolist()
        [1.0, 1.0]
        """
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if self.bias is not None:
                self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class _BatchNorm(Module):
    """What the batch normalisations share; a subclass checks the input's dimensions."""

    _input_dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: str | None = None, dtype: lucid.dtype | None = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        count("num_features", num_features)
        at_least("eps", eps)  # torch takes NaN or a negative eps, and the outputs are NaN
        if momentum is not None:
            number("momentum", momentum)  # torch takes NaN, and the running statistics become NaN
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kwargs = _factory_kwargs(device, dtype)
        if affine:
            self.weight = Parameter(_factory.ones(num_features, **kwargs))
            if bias:
                self.bias = Parameter(_factory.zeros(num_features, **kwargs))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _factory.zeros(num_features, **kwargs))
            self.register_buffer("running_var", _factory.ones(num_features, **kwargs))
            self.register_buffer("num_batches_tracked",
                                 _factory.tensor(0, dtype=_dtype.int64, device=kwargs["device"]))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Zero ``running_mean`` and ``num_batches_tracked``, set ``running_var`` to ones.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> bn = nn.BatchNorm1d(1)
        >>> _ = bn(lucid.tensor([[1.0], [3.0]]))
        >>> bn.reset_running_stats()
        >>> bn.running_mean, bn.running_var, bn.num_batches_tracked
        (tensor([0.]), tensor([1.]), tensor(0))
        """
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, the weight to ones and the bias to zeros.

        Examples
        --------
        >>> from lucid import nn
        >>> bn = nn.BatchNorm1d(2)
        >>> bn.reset_parameters()
        >>> bn.weight.tolist(), bn.bias.tolist()
        ([1.0, 1.0], [0.0, 0.0])
        """
        self.reset_running_stats()
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if self.bias is not None:
                self.bias.zero_()

    def _check_input_dim(self, input: Tensor) -> None:
        if input.ndim not in self._input_dims:
            wanted = " or ".join(f"{n}D" for n in self._input_dims)
            raise ValueError(f"expected {wanted} input (got {input.ndim}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if self.training:
            check_batch_statistics(input)  # before the count moves (torch counts the failed batch)
        # torch's _BatchNorm.forward: which statistics, and the factor of the running average
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked.item()) if self.momentum is None else self.momentum
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Normalise each feature (channel) over the batch, keeping running statistics for evaluation.

    The input is ``(N, C)`` or ``(N, C, L)``. In training mode the batch statistics normalise
    and, with ``track_running_stats``, update ``running_mean`` and ``running_var`` (the
    unbiased batch variance) in place: ``running = (1 - momentum) * running + momentum *
    batch``, or with ``momentum=None`` the cumulative average over the
    ``num_batches_tracked`` batches seen. In evaluation mode the running statistics
    normalise. See :func:`lucid.nn.functional.batch_norm`.

    Parameters
    ----------
    num_features : int
        ``C``.
    eps : float, default 1e-5
    momentum : float or None, default 0.1
    affine : bool, default True
        Learn ``weight`` (ones at first) and ``bias`` (zeros at first).
    track_running_stats : bool, default True
        Keep the buffers ``running_mean`` (zeros), ``running_var`` (ones) and
        ``num_batches_tracked`` (an int64 0-d tensor); without them the batch statistics are
        used in evaluation mode too.
    device : {"cpu", "gpu"}, optional
    dtype : lucid.dtype, optional
    bias : bool, default True
        Keyword-only: learn the bias (with ``affine``).

    Notes
    -----
    A training batch with one value per channel raises ``ValueError`` before anything
    changes; torch raises it after counting the batch in ``num_batches_tracked``.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> bn = nn.BatchNorm1d(2)
    >>> bn
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> [(k, v.shape, v.dtype) for k, v in bn.state_dict().items()]  # doctest: +NORMALIZE_WHITESPACE
    [('weight', (2,), lucid.float32), ('bias', (2,), lucid.float32), ('running_mean', (2,), lucid.float32),
     ('running_var', (2,), lucid.float32), ('num_batches_tracked', (), lucid.int64)]
    >>> _ = bn(lucid.tensor([[1.0, 10.0], [3.0, 30.0]]))
    >>> bn.running_mean, bn.num_batches_tracked
    (tensor([0.2000, 2.0000]), tensor(1))
    """


    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Normalise each channel of ``(N, C, H, W)`` over the batch and the spatial dimensions,
    keeping running statistics for evaluation: :class:`BatchNorm1d`'s rules and arguments.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> bn = nn.BatchNorm2d(3)
    >>> bn
    BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> bn(lucid.ones(2, 3, 4, 4)).shape
    (2, 3, 4, 4)
    >>> bn.running_mean.shape, bn.num_batches_tracked.item()
    ((3,), 1)
    >>> bn(lucid.ones(3, 4, 4))
    Traceback (most recent call last):
    ...
    ValueError: expected 4D input (got 3D input)
    """

    _input_dims = (4,)
