"""Weight averaging, as ``torch.optim.swa_utils``: SWA and EMA models, and the SWA schedule.

- :class:`AveragedModel` keeps a running average of a model's parameters (and optionally
  buffers): the equal-weight average of Stochastic Weight Averaging by default, or an
  exponential moving average with :func:`get_ema_multi_avg_fn`.
- :class:`SWALR` anneals each group's lr to a fixed SWA lr.
- :func:`update_bn` recomputes batch-norm statistics for an averaged model.

The numbers are torch's, including where torch rounds: see the Notes of
:func:`get_swa_multi_avg_fn`.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._autograd import no_grad
from .._dtype import int64
from .._tensor import Tensor, eval as lucid_eval
from ..nn.module import Module, train_hooks_paused
from . import _checks
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = [
    "AveragedModel", "update_bn", "SWALR",
    "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn",
]


def _check_decay(decay) -> None:
    if not 0.0 <= decay <= 1.0:  # NaN too
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[list[Tensor], list[Tensor], Tensor | int], None]:
    """The in-place exponential moving average over lists of tensors, for :class:`AveragedModel`.

    ``ema = decay * ema + (1 - decay) * p``, computed as torch does, with
    ``ema.lerp_(p, 1 - decay)`` for floating-point tensors.

    Parameters
    ----------
    decay : float, default 0.999
        In [0, 1].

    Returns
    -------
    callable
        ``fn(ema_params, current_params, num_averaged)``, updating ``ema_params`` in place.

    Raises
    ------
    ValueError
        If ``decay`` is outside [0, 1].

    Examples
    --------
    >>> import lucid
    >>> from lucid.optim.swa_utils import get_ema_multi_avg_fn
    >>> ema, current = [lucid.tensor([0.0, 10.0])], [lucid.tensor([10.0, 0.0])]
    >>> get_ema_multi_avg_fn(0.9)(ema, current, 1)
    >>> ema[0]
    tensor([1., 9.])
    """
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point():
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[[list[Tensor], list[Tensor], Tensor | int], None]:
    """The in-place equal-weight (SWA) average over lists of tensors, for :class:`AveragedModel`.

    ``avg += (p - avg) / (n + 1)``, computed as torch does: ``avg.lerp_(p, 1 / (n + 1))``.

    Returns
    -------
    callable
        ``fn(averaged_params, current_params, num_averaged)``, updating ``averaged_params``
        in place; ``num_averaged`` is an int or an integer 0-d tensor.

    Notes
    -----
    torch computes the weight ``1 / (num_averaged + 1)`` from the ``n_averaged`` tensor, in
    its default dtype: float32. lucid does the same, so its numbers are torch's, and for
    float64 parameters the average differs from the exact one by about 1e-7 relative
    (torch's too). :class:`AveragedModel` without an averaging function averages exactly
    (as torch does on the CPU). With a Python int ``num_averaged`` the weight is a Python
    float, as in torch.

    Examples
    --------
    >>> import lucid
    >>> from lucid.optim.swa_utils import get_swa_multi_avg_fn
    >>> avg, current = [lucid.tensor([1.0])], [lucid.tensor([4.0])]
    >>> get_swa_multi_avg_fn()(avg, current, 2)  # the average of [1, 1, 4]
    >>> avg[0]
    tensor([2.])
    """

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                # torch: 1 / (n + 1) of an integer tensor is a float32 tensor, then a Python scalar
                weight = (1 / (num_averaged + 1)).item() if isinstance(num_averaged, Tensor) else 1 / (num_averaged + 1)
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.lerp_(p_model, weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Tensor | int], Tensor]:
    """The exponential moving average of one tensor, for ``AveragedModel(avg_fn=...)``.

    Parameters
    ----------
    decay : float, default 0.999
        In [0, 1].

    Returns
    -------
    callable
        ``fn(ema_param, current_param, num_averaged)`` returning
        ``decay * ema_param + (1 - decay) * current_param``.

    Raises
    ------
    ValueError
        If ``decay`` is outside [0, 1].

    Examples
    --------
    >>> import lucid
    >>> from lucid.optim.swa_utils import get_ema_avg_fn
    >>> get_ema_avg_fn(0.75)(lucid.tensor([0.0]), lucid.tensor([4.0]), 1)
    tensor([1.])
    """
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Tensor | int], Tensor]:
    """The equal-weight (SWA) average of one tensor, for ``AveragedModel(avg_fn=...)``.

    Returns
    -------
    callable
        ``fn(averaged_param, current_param, num_averaged)`` returning
        ``averaged_param + (current_param - averaged_param) / (num_averaged + 1)``.

    Examples
    --------
    >>> import lucid
    >>> from lucid.optim.swa_utils import get_swa_avg_fn
    >>> get_swa_avg_fn()(lucid.tensor([1.0]), lucid.tensor([4.0]), 2)
    tensor([2.])
    """

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of a model whose parameters are a running average of the model's (SWA or EMA).

    Parameters
    ----------
    model : Module
        The model to average; deep-copied into ``self.module``.
    device : {"cpu", "gpu"}, optional
        Keep the averaged copy (and ``n_averaged``) on this device.
    avg_fn : callable, optional
        ``avg_fn(averaged_param, model_param, num_averaged)`` returning the new average of one
        tensor (e.g. :func:`get_ema_avg_fn`).
    multi_avg_fn : callable, optional
        ``multi_avg_fn(averaged_params, model_params, num_averaged)`` updating lists of
        tensors in place (e.g. :func:`get_ema_multi_avg_fn`), called once per device and
        dtype. Without either function: the equal-weight average, exactly.
    use_buffers : bool, default False
        Average the buffers too; otherwise each update copies the model's buffers.

    Attributes
    ----------
    module : Module
        The averaged copy; calling the AveragedModel calls it.
    n_averaged : Tensor
        An int64 0-d buffer: how many models have been averaged (in ``state_dict``).

    Raises
    ------
    AssertionError
        If both ``avg_fn`` and ``multi_avg_fn`` are given (as torch).

    Notes
    -----
    The first :meth:`update_parameters` copies the model; later ones average. ``avg_fn`` and
    ``multi_avg_fn`` are not saved in ``state_dict``. The default average is
    ``avg + (p - avg) / (n + 1)`` in the parameter's dtype on every device (torch uses it on
    the CPU; on CUDA it uses :func:`get_swa_multi_avg_fn`'s float32 weight).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.optim.swa_utils import AveragedModel
    >>> model = nn.Linear(1, 1)
    >>> swa = AveragedModel(model)
    >>> for w in (1.0, 2.0, 6.0):
    ...     with lucid.no_grad():
    ...         _ = model.weight.fill_(w)
    ...     swa.update_parameters(model)
    >>> swa.module.weight.item(), swa.n_averaged
    (3.0, tensor(3))
    >>> list(swa.state_dict())
    ['n_averaged', 'module.weight', 'module.bias']
    """

    def __init__(self, model: Module, device: str | None = None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable[[list[Tensor], list[Tensor], Tensor | int], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel averages a lucid.nn.Module, got {type(model).__name__}")
        for name, fn in (("avg_fn", avg_fn), ("multi_avg_fn", multi_avg_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be callable or None, got {type(fn).__name__}")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", Tensor(0, dtype=int64, device=device or "cpu"))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True) -> Any:
        """:meth:`lucid.nn.Module.load_state_dict`, with ``n_averaged`` checked as the count it
        is (a whole number, at least 0) before anything loads.

        Notes
        -----
        torch loads a negative count (the next average divides by zero, or weighs the model
        wrongly) and truncates a fractional one; lucid refuses both, changing nothing.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> from lucid.optim.swa_utils import AveragedModel
        >>> swa = AveragedModel(nn.Linear(2, 1))
        >>> swa.load_state_dict({**swa.state_dict(), "n_averaged": lucid.tensor(-1)})
        Traceback (most recent call last):
            ...
        ValueError: n_averaged must be at least 0, got -1
        """
        count = state_dict.get("n_averaged") if isinstance(state_dict, Mapping) else None
        if count is not None and getattr(count, "shape", None) == ():
            _checks.count("n_averaged", count.item())
        return super().load_state_dict(state_dict, strict)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Call the averaged copy of the model.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> from lucid.optim.swa_utils import AveragedModel
        >>> model = nn.Linear(2, 1)
        >>> x = lucid.ones(1, 2)
        >>> bool((AveragedModel(model)(x) == model(x)).all())
        True
        """
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average (the first call copies them).

        Parameters
        ----------
        model : Module
            A model with the same parameters (and buffers) as the one averaged.

        Raises
        ------
        ValueError
            If ``model`` has a different number of parameters (or buffers) than the average.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn
        >>> from lucid.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
        >>> model = nn.Linear(1, 1, bias=False)
        >>> with lucid.no_grad():
        ...     _ = model.weight.fill_(0.0)
        >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
        >>> ema.update_parameters(model)  # copies: 0
        >>> with lucid.no_grad():
        ...     _ = model.weight.fill_(8.0)
        >>> ema.update_parameters(model)
        >>> ema.module.weight.item()
        4.0
        """
        if self.use_buffers:
            averaged = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            current = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            averaged, current = list(self.parameters()), list(model.parameters())
        if len(averaged) != len(current):
            kind = "parameters and buffers" if self.use_buffers else "parameters"
            raise ValueError(
                f"update_parameters: the model has {len(current)} {kind}, the averaged model {len(averaged)}"
            )
        for index, (a, c) in enumerate(zip(averaged, current)):  # checked before any is averaged
            if a.shape != c.shape:
                raise ValueError(f"update_parameters: tensor {index} of the model has shape {c.shape}, the "
                                 f"averaged model's {a.shape}")
        with no_grad():
            current = [c.detach().to(a.device) for a, c in zip(averaged, current)]
            if self.n_averaged.item() == 0:
                for a, c in zip(averaged, current):
                    a.copy_(c)
            elif self.avg_fn is None:
                groups: dict = {}  # by (device, dtype), in order, as torch groups them
                for a, c in zip(averaged, current):
                    pair = groups.setdefault((a.device, a.dtype), ([], []))
                    pair[0].append(a)
                    pair[1].append(c)
                for (device, _), (group_avg, group_cur) in groups.items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(group_avg, group_cur, n_averaged)
                    else:
                        average = get_swa_avg_fn()
                        for a, c in zip(group_avg, group_cur):
                            a.copy_(average(a.detach(), c, n_averaged))
            else:
                for a, c in zip(averaged, current):
                    a.copy_(self.avg_fn(a.detach(), c, self.n_averaged.to(a.device)))
            if not self.use_buffers:
                own, theirs = list(self.module.buffers()), list(model.buffers())
                if len(own) != len(theirs):
                    raise ValueError(
                        f"update_parameters: the model has {len(theirs)} buffers, the averaged model {len(own)}"
                    )
                for b_avg, b_model in zip(own, theirs):
                    b_avg.copy_(b_model.detach().to(b_avg.device))
            self.n_averaged.add_(1)
        lucid_eval(averaged, list(self.module.buffers()))


def update_bn(loader: Iterable[Any], model: Module, device: str | None = None) -> None:
    """Recompute the batch-norm running statistics of ``model`` with one pass over ``loader``.

    torch's ``update_bn``: each batch-norm module's running statistics are reset and its
    ``momentum`` set to None (a cumulative average), the model runs in training mode over
    every batch (the first element of a list or tuple batch), and then the momenta and the
    training mode are restored.

    Parameters
    ----------
    loader : iterable
        Batches: tensors, or lists/tuples whose first element is the input.
    model : Module
        The model (e.g. an :class:`AveragedModel`) whose statistics to update.
    device : {"cpu", "gpu"}, optional
        Move each batch there first.

    Notes
    -----
    A module counts as a batch-norm layer if it has a ``reset_running_stats()`` method and
    a ``momentum`` attribute, as :class:`lucid.nn.BatchNorm1d` (and torch's ``_BatchNorm``)
    has; for a model without any, this returns at once without running the model, as
    torch's does. The model's mode is switched without its train hooks
    (:meth:`lucid.nn.Module.register_train_hook`), so that an optimizer following it (a
    Schedule-Free optimizer's ``follow``) keeps the weights where they are: after
    ``model.eval()``, the statistics are those of the evaluation weights.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> from lucid.optim.swa_utils import update_bn
    >>> model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    >>> update_bn([lucid.ones(4, 2), lucid.zeros(4, 2)], model)
    >>> model[1].num_batches_tracked, model[1].momentum
    (tensor(2), 0.1)
    >>> update_bn([lucid.ones(4, 2)], nn.Linear(2, 1))  # no batch norm: nothing to do
    """
    momenta = {}
    for module in model.modules():
        if callable(getattr(module, "reset_running_stats", None)) and hasattr(module, "momentum"):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    with train_hooks_paused():  # an optimizer following the model's mode keeps its weights
        model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    with train_hooks_paused():
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs``, then hold it.

    torch's ``SWALR``: ``step()`` after ``optimizer.step()`` once per epoch. At epoch ``t``
    (the construction is epoch 0) the lr is ``swa_lr * alpha + lr0 * (1 - alpha)`` with
    ``alpha = f(min(t / anneal_epochs, 1))``, ``f`` the cosine ``(1 - cos(pi * x)) / 2`` or
    the identity. As in torch it is computed from the group's current lr (chainable), with
    torch's arithmetic, so the sequence is torch's to the last bit.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose groups' ``"lr"`` to set; each group also gets ``"swa_lr"``.
    swa_lr : float or list of float
        The final lr, for all groups or one per group.
    anneal_epochs : int, default 10
        Epochs of annealing, ``>= 0`` (0 switches to ``swa_lr`` at the construction).
    anneal_strategy : {"cos", "linear"}, default "cos"
    last_epoch : int, default -1
        The last epoch seen; ``>= 0`` resumes and needs ``"initial_lr"`` in every group.

    Raises
    ------
    TypeError
        If ``optimizer`` is not an Optimizer.
    ValueError
        For an unknown ``anneal_strategy``, a negative or non-int ``anneal_epochs``, or a
        list ``swa_lr`` of the wrong length (torch's messages).

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> from lucid.optim.swa_utils import SWALR
    >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> scheduler = SWALR(optimizer, swa_lr=0.1, anneal_epochs=3)
    >>> lrs = [optimizer.param_groups[0]["lr"]]
    >>> for epoch in range(4):
    ...     optimizer.step()
    ...     scheduler.step()
    ...     lrs.append(round(optimizer.param_groups[0]["lr"], 6))
    >>> lrs
    [1.0, 0.775, 0.325, 0.1, 0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        # every check before the groups are written
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        _checks.at_least("swa_lr", swa_lrs)
        self._check_hyperparameters(dict(_anneal_strategy=anneal_strategy, anneal_epochs=anneal_epochs))
        for value, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = value
        self._set_anneal_func(anneal_strategy)
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _check_hyperparameters(self, values: dict) -> None:
        if values["_anneal_strategy"] not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{values['_anneal_strategy']}")
        epochs = values["anneal_epochs"]
        if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {epochs}")

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self) -> list:
        """The next lr of every group (called by :meth:`step`; use :meth:`get_last_lr` to read).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.swa_utils import SWALR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = SWALR(optimizer, swa_lr=0.5, anneal_epochs=0)
        >>> scheduler.get_last_lr()
        [0.5]
        """
        self._warn_get_lr_called_within_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha) for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self) -> dict:
        """Every attribute but the optimizer and the annealing function (as torch).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.swa_utils import SWALR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> sorted(SWALR(optimizer, swa_lr=0.1).state_dict())  # doctest: +NORMALIZE_WHITESPACE
        ['_anneal_strategy', '_get_lr_called_within_step', '_is_initial', '_last_lr', '_step_count',
         'anneal_epochs', 'base_lrs', 'last_epoch']
        """
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict` (the optimizer's lrs are not changed: load its state too).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> from lucid.optim.swa_utils import SWALR
        >>> optimizer = optim.SGD([nn.Parameter(lucid.zeros(1))], lr=1.0)
        >>> scheduler = SWALR(optimizer, swa_lr=0.1, anneal_strategy="linear")
        >>> scheduler.load_state_dict({**scheduler.state_dict(), "_anneal_strategy": "cos"})
        >>> scheduler.anneal_func(1.0)
        1.0
        """
        super().load_state_dict(state_dict)
        self._set_anneal_func(self._anneal_strategy)
