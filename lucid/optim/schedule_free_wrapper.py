"""Schedule-Free around any optimizer, as ``schedulefree.ScheduleFreeWrapper`` 1.4.1 computes it."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._autograd import no_grad
from .._tensor import Tensor, eval as lucid_eval
from . import _checks
from ._shared import scalar
from ._state_dict import deep_copy
from .schedule_free import ScheduleFreeModes, advance_average, split_weights
from .wrappers import _OptimizerWrapper, _run_closure

if TYPE_CHECKING:
    from ..nn.module import Module
    from .optimizer import Optimizer


def _swap(a: Tensor, b: Tensor) -> None:
    """Exchange the values of ``a`` and ``b`` in place (the reference's xor swap)."""
    held = a.detach().clone()
    a.copy_(b)
    b.copy_(held)


class ScheduleFreeWrapper(_OptimizerWrapper):
    r"""Make any optimizer Schedule-Free, as ``schedulefree.ScheduleFreeWrapper`` 1.4.1.

    The wrapped optimizer steps the base sequence :math:`z`; the wrapper keeps the average
    :math:`x` and gives the gradient at :math:`y`. Per step, for a parameter with a
    gradient (:math:`\beta` the momentum, :math:`\lambda_y` ``weight_decay_at_y``,
    :math:`\gamma` the group's lr times its ``"d"``, 1 without):

    .. math::
        \begin{aligned}
        z &\leftarrow z - \gamma\lambda_y y, \quad y \leftarrow y - \gamma\lambda_y (1 - \beta) y \\
        x &\leftarrow \bigl(y - (1 - \beta) z\bigr) / \beta \quad\text{(lerp by } 1 - 1/\beta) \\
        z &\leftarrow \text{the wrapped optimizer's step from } z \text{ with the gradient at } y \\
        w_k &\leftarrow (k+1)^r \bigl(\max \gamma\bigr)^{p}, \quad c \leftarrow w_k / \textstyle\sum w \\
        x &\leftarrow (1 - c) x + c z, \quad y \leftarrow (1 - \beta) z + \beta x
        \end{aligned}

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer of the base sequence (its momentum may be turned off: the wrapper's
        interpolation takes its place). Its schedulers work as usual: the wrapper reads each
        group's ``"lr"``.
    weight_decay_at_y : float, default 0.0
        Weight decay :math:`\lambda_y` taken at :math:`y` (the wrapped optimizer's own weight
        decay is taken at :math:`z`).
    momentum : float, default 0.9
        Interpolation :math:`\beta`, between 0 and 1 exclusive.
    weight_lr_power : float, default 2
        Power :math:`p` of the largest learning rate so far in the average's weights.
    r : float, default 0
        Power of the polynomial weighting in the average.

    Attributes
    ----------
    optimizer : Optimizer
        The wrapped optimizer (``param_groups``, ``state``, ``defaults`` are its).
    momentum, weight_decay_at_y, weight_lr_power, r : float
        The settings.
    train_mode : bool
        The mode (the reference's attribute; see :attr:`training`).

    Notes
    -----
    The arithmetic is the reference's, in its order (float64 agreement to 1e-12 relative over
    1,000 steps, tested with torch.optim's SGD and Adam inside). Where lucid differs: the
    wrapper starts in training mode; it wraps any optimizer (the reference's puts ``z`` into
    the wrapped optimizer's state, so that torch's Adam or RMSprop, which build their state
    on the first step, fail with a KeyError); ``step()`` in evaluation mode raises a RuntimeError that
    says to call :meth:`train`; :meth:`follow` ties the mode to a module's; the base sequence
    ``z`` and the averaging counters (``k``, ``lr_max``, ``weight_sum`` by group) are the
    wrapper's own, saved beside the wrapped optimizer's state dict (the reference writes them
    into the wrapped optimizer's state and groups), with the mode and each parameter's
    evaluation weights ``x`` (and ``y`` in training mode), which loading writes back. A step
    whose wrapped step raises leaves the parameters and ``z`` as they were. The swap of
    :math:`x` and :math:`z` is a copy (the reference swaps bytes). It is not fused: the
    wrapped optimizer's step is whatever it is.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.1), momentum=0.9)
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> optimizer.eval()
    >>> w
    Parameter containing:
    tensor([ 0.7200, -1.4400], requires_grad=True)
    >>> sorted(optimizer.state_dict())
    ['optimizer', 'schedule_free']
    """

    _state_key = "schedule_free"

    def __init__(self, optimizer: Optimizer, weight_decay_at_y: float = 0.0, momentum: float = 0.9,
                 weight_lr_power: float = 2, r: float = 0) -> None:
        super().__init__(optimizer)
        _checks.at_least("weight_decay_at_y", weight_decay_at_y)
        if _checks.number("momentum", momentum) <= 0 or momentum >= 1:
            raise ValueError(f"Momentum must be between 0 and 1 exclusive: {momentum}")
        self.weight_decay_at_y = float(weight_decay_at_y)
        self.momentum = float(momentum)
        self.weight_lr_power = _checks.number("weight_lr_power", weight_lr_power)
        self.r = _checks.number("r", r)
        self.train_mode = True
        self._z: dict[int, Tensor] = {}  # the base sequence, by id of its parameter
        self._averages: list[dict] = []  # k, lr_max and weight_sum, by group
        self._compose()

    def _compose(self) -> None:
        # the modes part, in one mode for every group (the wrapper's train_mode); it reaches the
        # wrapper through a weak proxy, as an optimizer's parts do: no reference cycle
        me = weakref.proxy(self)
        self._modes = ScheduleFreeModes(type(self).__name__, self.param_groups, lambda group: me.beta(group),
                                        lambda param: me.base_sequence(param), lambda group: me.train_mode,
                                        lambda group, mode: setattr(me, "train_mode", mode))

    def __getstate__(self) -> dict:
        # the modes part is rebuilt, not copied (its callables hold a proxy of this wrapper)
        return {key: value for key, value in self.__dict__.items() if key != "_modes"}

    def __setstate__(self, saved: dict) -> None:
        self.__dict__.update(saved)
        self._compose()

    # --- the modes (the part this wrapper holds; see ScheduleFreeOptimizer for each) ------------
    def beta(self, group: dict) -> float:
        """:math:`\\beta` of the interpolation: the wrapper's ``momentum``, for every group.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([nn.Parameter(lucid.zeros(1))]), momentum=0.8)
        >>> optimizer.beta(optimizer.param_groups[0])
        0.8
        """
        return self.momentum

    def base_sequence(self, param: Tensor) -> Tensor | None:
        """``param``'s base sequence :math:`z` (the wrapper's), or None before its first step.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.5))
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.base_sequence(w)
        tensor([0.5000])
        """
        return self._z.get(id(param))

    @property
    def training(self) -> bool:
        """Whether the wrapper is in training mode (the parameters hold ``y``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optim.ScheduleFreeWrapper(optim.SGD([nn.Parameter(lucid.zeros(1))])).training
        True
        """
        return self._modes.training

    def train(self) -> None:
        """Training mode: each parameter from ``x`` to :math:`y = (1 - \\beta) z + \\beta x`;
        nothing happens in training mode.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([nn.Parameter(lucid.zeros(1))]))
        >>> optimizer.eval(); optimizer.train()
        >>> optimizer.training
        True
        """
        self._modes.train()

    def eval(self) -> None:
        """Evaluation mode: each parameter from ``y`` to ``x``; nothing happens in evaluation mode.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.5))
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.eval()
        >>> w.detach(), optimizer.train_mode
        (tensor([0.5000]), False)
        """
        self._modes.eval()

    def check_training(self) -> None:
        """RuntimeError unless in training mode (where ``step`` may run); changes nothing.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([nn.Parameter(lucid.zeros(1))]))
        >>> optimizer.eval()
        >>> optimizer.check_training()
        Traceback (most recent call last):
            ...
        RuntimeError: ScheduleFreeWrapper.step() was called in evaluation mode, where the parameters hold the evaluation weights x: call optimizer.train() before training (and optimizer.eval() before evaluating or saving), or let the optimizer follow the model's mode with optimizer.follow(model)
        """
        self._modes.check_training()

    def follow(self, module: Module | None) -> None:
        """Take ``module``'s mode now and at each of its ``train()``/``eval()`` (None: stop).

        Raises
        ------
        TypeError
            Where ``module`` is not a :class:`lucid.nn.Module` (or None).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> model = nn.Linear(2, 1)
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD(model.parameters()))
        >>> optimizer.follow(model)
        >>> _ = model.eval()
        >>> optimizer.training
        False
        """
        self._modes.follow(module, self)

    @property
    def followed(self) -> Module | None:
        """The module whose mode the wrapper follows (see :meth:`follow`), or None.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optim.ScheduleFreeWrapper(optim.SGD([nn.Parameter(lucid.zeros(1))])).followed is None
        True
        """
        return self._modes.followed

    def _average(self, index: int) -> dict:
        while len(self._averages) <= index:
            self._averages.append({"k": 0, "lr_max": 0.0, "weight_sum": 0.0})
        return self._averages[index]

    # --- the step --------------------------------------------------------------------------------
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """Step the wrapped optimizer from :math:`z`, then the average and :math:`y`.

        Raises
        ------
        RuntimeError
            In evaluation mode, before anything runs.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.5))
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> w.detach()     # y = 0.1 z + 0.9 x, with z = 0.5 and x = z after one step
        tensor([0.5000])
        """
        self.check_training()
        loss = _run_closure(closure)
        stepping = [[p for p in group["params"] if p.grad is not None] for group in self.param_groups]
        kept = [(p, p.detach().clone(), self._z.get(id(p))) for params in stepping for p in params]
        kept = [(p, y, None if z is None else z.clone()) for p, y, z in kept]
        momentum, decay = self.momentum, self.weight_decay_at_y
        try:
            with no_grad():
                for group, params in zip(self.param_groups, stepping):
                    lr = float(scalar(group["lr"]))
                    for p in params:
                        z = self._z.get(id(p))
                        if z is None:
                            z = self._z[id(p)] = p.detach().clone()
                        if decay != 0.0:
                            z.sub_(p, alpha=lr * decay)
                            p.sub_(p, alpha=lr * decay * (1 - momentum))
                        p.lerp_(z, 1 - 1 / momentum)  # y -> x
                        _swap(z, p)                    # the wrapped optimizer steps z
            self.optimizer.step()
        except BaseException:
            with no_grad():
                for p, y, z in kept:
                    p.copy_(y)
                    if z is None:
                        self._z.pop(id(p), None)
                    else:
                        self._z[id(p)].copy_(z)
            raise
        with no_grad():
            for index, (group, params) in enumerate(zip(self.param_groups, stepping)):
                lr = float(scalar(group["lr"])) * group.get("d", 1.0)
                ckp1 = advance_average(self._average(index), lr, self.r, self.weight_lr_power, lr_max_start=0.0)
                for p in params:
                    z = self._z[id(p)]
                    _swap(z, p)
                    p.lerp_(z, ckp1)               # the average takes in z
                    p.lerp_(z, 1 - momentum)       # x -> y
        lucid_eval(*[p for params in stepping for p in params], list(self._z.values()))
        return loss

    # --- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The wrapped optimizer's state dict and the wrapper's own part, as copies.

        Returns
        -------
        dict
            ``{"optimizer": ..., "schedule_free": {"train_mode", "momentum", "weight_decay_at_y",
            "weight_lr_power", "r", "averages", "state"}}``; ``"state"`` holds, by flat parameter
            index, ``"z"``, the evaluation weights ``"x"`` and, in training mode, ``"y"``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.5))
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.state_dict()["schedule_free"]["state"]
        {0: {'z': tensor([0.5000]), 'x': tensor([0.5000]), 'y': tensor([0.5000])}}
        """
        index = {id(p): i for i, p in enumerate(self._params())}
        state = {index[key]: {"z": deep_copy(z)} for key, z in self._z.items() if key in index}
        by_param = {id(p): i for i, p in enumerate(self._params())}
        self._modes.record_weights(lambda param: state[by_param[id(param)]])
        own = {"train_mode": self.train_mode, "momentum": self.momentum,
               "weight_decay_at_y": self.weight_decay_at_y, "weight_lr_power": self.weight_lr_power, "r": self.r,
               "averages": deep_copy(self._averages), "state": dict(sorted(state.items()))}
        return {"optimizer": self.optimizer.state_dict(), self._state_key: own}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a :meth:`state_dict`: the wrapped optimizer's, ``z``, the counters, the
        mode, and the saved weights written back into the parameters (``y`` in training mode,
        ``x`` in evaluation mode); then the followed module's mode. Everything is checked
        before anything changes.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> a = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.5))
        >>> w.grad = lucid.tensor([1.0])
        >>> a.step()
        >>> a.eval()
        >>> b = optim.ScheduleFreeWrapper(optim.SGD([w], lr=0.5))
        >>> b.load_state_dict(a.state_dict())
        >>> b.training, b.state_dict()["schedule_free"]["averages"]
        (False, [{'k': 1, 'lr_max': 0.5, 'weight_sum': 0.25}])
        """
        own = self._split(state_dict)
        keys = {"train_mode", "momentum", "weight_decay_at_y", "weight_lr_power", "r", "averages", "state"}
        if set(own) != keys:
            raise ValueError(f"a state dict's {self._state_key!r} must have the keys {sorted(keys)}, got {sorted(own)}")
        if not isinstance(own["train_mode"], bool) or not isinstance(own["state"], dict):
            raise ValueError("a state dict's 'schedule_free' must hold a bool 'train_mode' and a dict 'state'")
        averages = own["averages"]
        if not isinstance(averages, list) or not all(isinstance(a, dict) and set(a) == {"k", "lr_max", "weight_sum"}
                                                     for a in averages):
            raise ValueError("a state dict's 'averages' must be a list of dicts with 'k', 'lr_max' and 'weight_sum'")
        params = self._params()
        places = dict(enumerate(params))
        stripped, entries = split_weights({"state": own["state"]})
        zs = {}
        for index, entry in stripped["state"].items():
            param = places.get(index)
            z = entry.get("z") if isinstance(entry, dict) else None
            if param is None or not isinstance(z, Tensor) or z.shape != param.shape or set(entry) != {"z"}:
                raise ValueError(f"loaded state of parameter {index} must be {{'z': a Tensor of the parameter's shape}}")
            zs[id(param)] = z.detach().to(param.device, param.dtype).clone()
        weights = self._modes.saved_weights(entries, places)
        self.optimizer.load_state_dict(state_dict["optimizer"])
        self._z = zs
        self._averages = deep_copy(averages)
        self.momentum, self.weight_decay_at_y = own["momentum"], own["weight_decay_at_y"]
        self.weight_lr_power, self.r = own["weight_lr_power"], own["r"]
        self.train_mode = own["train_mode"]
        self._modes.write_weights(weights)

    def extra_repr(self) -> str:
        """The wrapper's settings, for :func:`repr`.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optim.ScheduleFreeWrapper(optim.SGD([nn.Parameter(lucid.zeros(1))])).extra_repr()
        'momentum=0.9, weight_decay_at_y=0.0, weight_lr_power=2.0, r=0.0'
        """
        return (f"momentum={self.momentum}, weight_decay_at_y={self.weight_decay_at_y}, "
                f"weight_lr_power={self.weight_lr_power}, r={self.r}")
