"""Schedule-Free SGD, AdamW and RAdam (Defazio et al., 2024), as ``schedulefree`` 1.4.1 computes
them, and what the Schedule-Free family shares: the modes, the running average's weight, and
checkpoints that hold the evaluation weights.

A Schedule-Free optimizer trains the weights ``y``, an interpolation between its base
sequence ``z`` and the running average ``x`` that is evaluated and saved:
``y = (1 - beta) z + beta x``. The parameters hold ``y`` in training mode and ``x`` in
evaluation mode; ``train()`` and ``eval()`` move them between the two (``lerp`` towards
``z``). :class:`ScheduleFreeModes` is that part, held by the optimizers here
(:class:`ScheduleFreeOptimizer`) and by the wrapper of ``schedule_free_wrapper.py``: the two
modes and their switches, following a module's ``train()``/``eval()``, the step refused in
evaluation mode, and the ``x`` (and ``y`` in training mode) a ``state_dict`` records with the
mode, which loading writes back.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import _factory
from .._autograd import no_grad
from .._tensor import Tensor, eval as lucid_eval
from ..nn.module import Module
from . import _checks
from .elementwise import elementwise, lerp, sqrt
from .optimizer import Optimizer, scalar

if TYPE_CHECKING:
    from ..utils.hooks import RemovableHandle
    from .elementwise import Rule
    from .optimizer import ParamsT
    from .schedules import Schedule


def advance_average(group: dict, lr: float, r: float, weight_lr_power: float, lr_max_start: float = -1.0) -> float:
    """Count step ``k + 1`` of ``group`` with learning rate ``lr`` into its running average,
    as the reference does: ``lr_max``, the step's weight ``(k+1)^r lr_max^p`` added to
    ``weight_sum``; returns :math:`c_{k+1}`, the weight of the new point in the average
    (0 while ``weight_sum`` is 0, RAdam's silent steps).

    Examples
    --------
    >>> group = {"k": 0, "lr_max": -1.0, "weight_sum": 0.0}
    >>> advance_average(group, 0.5, 0.0, 2.0), advance_average(group, 0.5, 0.0, 2.0), group["k"]
    (1.0, 0.5, 2)
    """
    step = group.get("k", 0) + 1
    lr_max = group["lr_max"] = max(lr, group.get("lr_max", lr_max_start))
    weight = (step ** r) * (lr_max ** weight_lr_power)
    weight_sum = group["weight_sum"] = group.get("weight_sum", 0.0) + weight
    group["k"] = step
    return averaging_weight(weight, weight_sum)


def averaging_weight(weight: float, weight_sum: float) -> float:
    """:math:`c = w / \\sum w`, 0 where the sum is 0 (the reference's ZeroDivisionError).

    Examples
    --------
    >>> averaging_weight(1.0, 4.0), averaging_weight(0.0, 0.0)
    (0.25, 0.0)
    """
    return weight / weight_sum if weight_sum != 0 else 0.0


def _interpolate(pairs: Iterable[tuple[Tensor, Tensor, float]]) -> None:
    """Each parameter moved towards its ``z`` by its weight (torch's ``lerp_``), in place;
    evaluated once at the end (MLX is lazy)."""
    moved = []
    with no_grad():
        for param, z, weight in pairs:
            moved.append(param.lerp_(z.to(param.device), weight))
    lucid_eval(*moved)


def split_weights(state_dict: dict) -> tuple[dict, dict]:
    """``state_dict`` without the ``"x"``/``"y"`` entries of its per-parameter state, and those
    entries by saved index; the given dict is not changed.

    Examples
    --------
    >>> split_weights({"state": {0: {"z": 1, "x": 2}}, "param_groups": []})
    ({'state': {0: {'z': 1}}, 'param_groups': []}, {0: {'x': 2}})
    """
    if not isinstance(state_dict, dict) or not isinstance(state_dict.get("state"), dict):
        return state_dict, {}
    stripped, weights = {}, {}
    for index, entry in state_dict["state"].items():
        if isinstance(entry, dict) and ("x" in entry or "y" in entry):
            weights[index] = {k: v for k, v in entry.items() if k in ("x", "y")}
            entry = {k: v for k, v in entry.items() if k not in ("x", "y")}
        stripped[index] = entry
    return {**state_dict, "state": stripped}, weights


def places_of(param_groups: list, state_dict: dict) -> dict:
    """The live parameter of each saved index of ``state_dict`` (empty where its groups are
    malformed: the loader reports that)."""
    try:
        return {index: param for live, saved in zip(param_groups, state_dict["param_groups"])
                for index, param in zip(saved["params"], live["params"])}
    except (KeyError, TypeError):
        return {}


class _Follower:
    """The train hook by which an optimizer follows a module's mode (it holds the optimizer,
    as a module's hooks hold their callbacks)."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner

    def __call__(self, module: Module, mode: bool) -> None:
        self.owner.train() if mode else self.owner.eval()


class ScheduleFreeModes:
    """The modes of a Schedule-Free optimizer or wrapper, a part its owner holds (see the
    module docstring): the switches, the module followed, the step's check, and the weights a
    checkpoint records and a load writes back.

    Parameters
    ----------
    name : str
        The owner's class name, for the error of a step in evaluation mode.
    param_groups : list of dict
        The owner's parameter groups.
    beta : callable
        ``beta(group)``: :math:`\\beta` of ``group``'s interpolation.
    base_sequence : callable
        ``base_sequence(param)``: ``param``'s :math:`z`, or None before its first step.
    group_training, set_group_training : callable, optional
        Where the mode is kept: by default each group's ``"train_mode"``, as the reference keeps it.

    Notes
    -----
    The callables reach the owner through a weak proxy, so that the owner holding the part
    makes no reference cycle. :meth:`follow` is given the owner itself: the module's hook
    calls its ``train()``/``eval()`` and keeps it alive.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn
    >>> w = nn.Parameter(lucid.tensor([1.0]))
    >>> groups, zs = [{"params": [w], "train_mode": True}], {id(w): lucid.tensor([0.0])}
    >>> modes = ScheduleFreeModes("Example", groups, lambda group: 0.5, lambda param: zs.get(id(param)))
    >>> modes.eval()           # y -> x = (y - (1 - beta) z) / beta
    >>> w.detach(), modes.training
    (tensor([2.]), False)
    """

    def __init__(self, name: str, param_groups: list, beta: Callable[[dict], float],
                 base_sequence: Callable[[Tensor], Tensor | None],
                 group_training: Callable[[dict], bool] | None = None,
                 set_group_training: Callable[[dict, bool], None] | None = None) -> None:
        self.name = name
        self.param_groups = param_groups
        self.beta = beta
        self.base_sequence = base_sequence
        self.group_training = group_training or (lambda group: bool(group["train_mode"]))
        self.set_group_training = set_group_training or (lambda group, mode: group.__setitem__("train_mode", mode))
        self.following: tuple | None = None

    # --- the modes ---------------------------------------------------------------------------
    @property
    def training(self) -> bool:
        """The first group's mode, which the reference's ``step`` reads too."""
        return self.group_training(self.param_groups[0])

    def train(self) -> None:
        """Each group in evaluation mode to training mode (``lerp`` by :math:`1 - \\beta`)."""
        self._switch(True)

    def eval(self) -> None:
        """Each group in training mode to evaluation mode (``lerp`` by :math:`1 - 1/\\beta`)."""
        self._switch(False)

    def _switch(self, to_train: bool) -> None:
        groups = [group for group in self.param_groups if self.group_training(group) != to_train]
        pairs = []
        for group in groups:
            beta = self.beta(group)
            weight = 1 - beta if to_train else 1 - 1 / beta
            pairs += [(p, z, weight) for p in group["params"] if (z := self.base_sequence(p)) is not None]
        for group in groups:
            self.set_group_training(group, to_train)
        _interpolate(pairs)

    def check_training(self) -> None:
        """RuntimeError unless in training mode (where ``step`` may run); changes nothing."""
        if not self.training:
            raise RuntimeError(
                f"{self.name}.step() was called in evaluation mode, where the parameters hold the "
                "evaluation weights x: call optimizer.train() before training (and optimizer.eval() before "
                "evaluating or saving), or let the optimizer follow the model's mode with optimizer.follow(model)"
            )

    # --- following a module -------------------------------------------------------------------
    def follow(self, module: Module | None, owner: Any) -> None:
        """Switch ``owner`` (whose ``train()``/``eval()`` the module's hook calls) with
        ``module``'s mode, now and from now on; None: stop following."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"follow expects a lucid.nn.Module or None, got {type(module).__name__}")
        if self.following is not None:
            self.following[1].remove()
            self.following = None
        if module is None:
            return
        handle: RemovableHandle = module.register_train_hook(_Follower(owner))
        self.following = (weakref.ref(module), handle)
        self.take_mode_of_followed()

    @property
    def followed(self) -> Module | None:
        """The module followed, or None."""
        return self.following[0]() if self.following is not None else None

    def take_mode_of_followed(self) -> None:
        """The followed module's mode, if a module is followed."""
        module = self.followed
        if module is not None:
            self.train() if module.training else self.eval()

    # --- checkpoints -----------------------------------------------------------------------
    def record_weights(self, state_of: Callable[[Tensor], dict]) -> None:
        """Add to a state dict being made each stepped parameter's evaluation weights ``"x"``
        and, in training mode, its training weights ``"y"``; ``state_of(param)`` is where its
        entry goes."""
        with no_grad():
            for group in self.param_groups:
                train_mode = self.group_training(group)
                weight = 1 - 1 / self.beta(group)
                for param in group["params"]:
                    z = self.base_sequence(param)
                    if z is None:
                        continue
                    entry = state_of(param)
                    y = param.detach().clone()
                    # the same lerp_ as eval(): the evaluation weights of either mode, to the bit
                    entry["x"] = y.clone().lerp_(z.to(param.device), weight) if train_mode else y
                    if train_mode:
                        entry["y"] = y
                    lucid_eval(entry["x"])

    @staticmethod
    def saved_weights(entries: dict, places: dict) -> list[tuple[Tensor, Tensor, Tensor | None]]:
        """The ``(param, x, y-or-None)`` to write back after a load, from the ``"x"``/``"y"``
        popped off the loaded entries (``entries``: by saved index) and ``places`` (the
        parameter of each saved index); ValueError for any that does not fit its parameter."""
        out = []
        for index, found in entries.items():
            param = places.get(index)
            if param is None:
                raise ValueError(f"loaded state has weights for parameter {index}, which no group lists")
            for key, value in found.items():
                if not isinstance(value, Tensor) and hasattr(value, "shape") and hasattr(value, "dtype"):
                    value = found[key] = Tensor(value)  # host arrays, e.g. from a checkpoint file
                if not isinstance(value, Tensor) or value.shape != param.shape:
                    raise ValueError(f"loaded state of parameter {index} has {key!r} of "
                                     f"{value.shape if isinstance(value, Tensor) else type(value).__name__}, "
                                     f"expected a Tensor of shape {param.shape}")
            if "x" not in found:
                raise ValueError(f"loaded state of parameter {index} has 'y' without 'x'")
            out.append((param, found["x"], found.get("y")))
        return out

    def write_weights(self, weights: list[tuple[Tensor, Tensor, Tensor | None]]) -> None:
        """Write the loaded weights into the parameters, for the mode just loaded (``y`` in
        training mode, ``x`` in evaluation mode); then take the followed module's mode."""
        group_of = {id(p): group for group in self.param_groups for p in group["params"]}
        written = []
        with no_grad():
            for param, x, y in weights:
                train_mode = self.group_training(group_of[id(param)])
                source = y if train_mode and y is not None else x
                if train_mode and y is None:  # a checkpoint of x alone: y from it, as train() would
                    source = x.clone().lerp_(self.base_sequence(param).to(x.device), 1 - self.beta(group_of[id(param)]))  # type: ignore[union-attr]
                written.append(param.copy_(source))
        lucid_eval(*written)
        self.take_mode_of_followed()


def _per_group(state: dict) -> None:
    """The scalars depend on the group alone (its counters), not on a parameter's state."""
    return None


def averaging_scalars(group: dict, beta1: float) -> dict:
    """The step's scalars of the interpolation and the averaging, from the group's counters
    (already counted): :math:`c_{k+1}`, the step of ``y`` and the step of ``z``."""
    lr, step = group["scheduled_lr"], group["k"]
    ckp1 = averaging_weight((step ** group["r"]) * (group["lr_max"] ** group["weight_lr_power"]), group["weight_sum"])
    return {"ckp1": ckp1, "y_step": lr * (beta1 * (1 - ckp1) - 1), "neg_lr": -lr}


def sgd_scalars(group: dict, param: Tensor, state: dict) -> dict:
    return averaging_scalars(group, group["momentum"])


def adam_scalars(group: dict, param: Tensor, state: dict) -> dict:
    beta1, beta2 = group["betas"]
    return {"beta2": beta2, "one_minus_beta2": 1 - beta2, "bias_correction2": 1 - beta2 ** group["k"],
            "eps": group["eps"], "weight_decay": group["weight_decay"], **averaging_scalars(group, beta1)}


# weight decay is L2, added to the gradient at y
@elementwise(state=("z",), decay="l2", scalars=sgd_scalars, depends_on=_per_group)
def sgd_schedule_free(param, grad, z, ckp1, y_step, neg_lr):
    y = lerp(param, z, ckp1)            # y <- x: the average takes in z with weight c
    return y + grad * y_step, z + grad * neg_lr


@elementwise(state=("z", "exp_avg_sq"), scalars=adam_scalars, depends_on=_per_group)
def adamw_schedule_free(param, grad, z, exp_avg_sq, beta2, one_minus_beta2, bias_correction2, eps, weight_decay,
                        ckp1, y_step, neg_lr):
    exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
    grad = grad / (sqrt(exp_avg_sq / bias_correction2) + eps) + param * weight_decay  # decay at y
    y = lerp(param, z, ckp1)
    return y + grad * y_step, z + grad * neg_lr, exp_avg_sq


# RAdam's first steps, while the variance is not tractable (rho_t <= 4): the gradient unscaled
@elementwise(state=("z", "exp_avg_sq"), scalars=adam_scalars, depends_on=_per_group)
def radam_schedule_free_sgd(param, grad, z, exp_avg_sq, beta2, one_minus_beta2, bias_correction2, eps,
                            weight_decay, ckp1, y_step, neg_lr):
    exp_avg_sq = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
    grad = grad + param * weight_decay
    y = lerp(param, z, ckp1)
    return y + grad * y_step, z + grad * neg_lr, exp_avg_sq


def _warmed_up(group: dict, step: int) -> float:
    """The linear warmup's factor of step ``step`` (1-based): ``step / warmup_steps``, then 1."""
    warmup_steps = group["warmup_steps"]
    return step / warmup_steps if step - 1 < warmup_steps else 1.0


def radam_rho(beta2: float, step: int) -> tuple[float, float]:
    """``(rho_t, rho_inf)``: the length of RAdam's approximated moving average at ``step``, and its limit."""
    beta2_t = beta2 ** step
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf - 2 * step * beta2_t / (1 - beta2_t), rho_inf


class ScheduleFreeOptimizer(Optimizer):
    """The base of the Schedule-Free optimizers: the modes (a :class:`ScheduleFreeModes` it
    holds and delegates to), the group counters of the running average, and an elementwise
    rule per group. A subclass gives :meth:`beta` and its rule.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> isinstance(optim.SGDScheduleFree([nn.Parameter(lucid.zeros(1))]), ScheduleFreeOptimizer)
    True
    """

    def __init__(self, params: ParamsT, defaults: dict) -> None:
        defaults = {**defaults, "k": 0, "train_mode": True, "weight_sum": 0.0, "lr_max": -1.0, "scheduled_lr": 0.0}
        super().__init__(params, defaults)

    def _compose(self) -> None:
        super()._compose()
        me = weakref.proxy(self)  # as the base's parts: no reference cycle
        self._modes = ScheduleFreeModes(type(self).__name__, self.param_groups, lambda group: me.beta(group),
                                        lambda param: me.base_sequence(param))

    # --- the modes (the part this optimizer holds) ----------------------------------------------
    def beta(self, group: dict) -> float:
        """:math:`\\beta` of ``group``'s interpolation (``momentum``, or ``betas[0]``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.AdamWScheduleFree([nn.Parameter(lucid.zeros(1))], betas=(0.95, 0.999))
        >>> optimizer.beta(optimizer.param_groups[0])
        0.95
        """
        raise NotImplementedError

    def base_sequence(self, param: Tensor) -> Tensor | None:
        """``param``'s base sequence :math:`z`, or None before its first step.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.base_sequence(w)
        tensor([0.5000])
        """
        state = self.state.for_param(param)
        return state.get("z") if state else None

    @property
    def training(self) -> bool:
        """Whether the optimizer is in training mode (the parameters hold ``y``); the first
        group's mode, which the reference's ``step`` reads too.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.SGDScheduleFree([nn.Parameter(lucid.zeros(1))])
        >>> optimizer.training      # a new optimizer is ready to train
        True
        """
        return self._modes.training

    def train(self) -> None:
        """Training mode: each parameter moves from the evaluation weights ``x`` to the
        training weights :math:`y = (1 - \\beta) z + \\beta x` (``lerp`` by :math:`1 - \\beta`);
        nothing happens in a group already in training mode.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.eval(); optimizer.train()
        >>> w.detach(), optimizer.training
        (tensor([0.5000]), True)
        """
        self._modes.train()

    def eval(self) -> None:
        """Evaluation mode: each parameter moves from ``y`` to ``x`` (``lerp`` by
        :math:`1 - 1/\\beta`); nothing happens in a group already in evaluation mode.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()       # y moved by lr (beta (1 - c) - 1) g, z by -lr g
        >>> optimizer.eval()
        >>> w.detach()             # x: the average of z's points, (0.5 + 0) / 2
        tensor([0.2500])
        """
        self._modes.eval()

    def check_training(self) -> None:
        """RuntimeError unless in training mode (where ``step`` may run); changes nothing.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.SGDScheduleFree([nn.Parameter(lucid.zeros(1))])
        >>> optimizer.check_training()
        >>> optimizer.eval()
        >>> optimizer.check_training()
        Traceback (most recent call last):
            ...
        RuntimeError: SGDScheduleFree.step() was called in evaluation mode, where the parameters hold the evaluation weights x: call optimizer.train() before training (and optimizer.eval() before evaluating or saving), or let the optimizer follow the model's mode with optimizer.follow(model)
        """
        self._modes.check_training()

    def follow(self, module: Module | None) -> None:
        """Take ``module``'s mode now and at each of its ``train()``/``eval()`` from now on
        (None: stop following). One module at a time: following another stops following the first.

        Raises
        ------
        TypeError
            Where ``module`` is not a :class:`lucid.nn.Module` (or None).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> model = nn.Linear(2, 1)
        >>> optimizer = optim.AdamWScheduleFree(model.parameters())
        >>> optimizer.follow(model)
        >>> _ = model.eval()
        >>> optimizer.training, optimizer.followed is model
        (False, True)
        >>> optimizer.follow(None)      # stop following
        >>> _ = model.train()
        >>> optimizer.training
        False
        """
        self._modes.follow(module, self)

    @property
    def followed(self) -> Module | None:
        """The module whose mode the optimizer follows (see :meth:`follow`), or None.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.SGDScheduleFree([nn.Parameter(lucid.zeros(1))])
        >>> optimizer.followed is None
        True
        """
        return self._modes.followed

    def scheduled_lr(self, group: dict, step: int) -> float:
        """The learning rate of ``step`` (1-based): the group's, warmed up (the reference's
        ``warmup_steps``: ``lr * step / warmup_steps`` up to ``warmup_steps``).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.AdamWScheduleFree([nn.Parameter(lucid.zeros(1))], lr=0.1, warmup_steps=4)
        >>> [optimizer.scheduled_lr(optimizer.param_groups[0], step) for step in (1, 2, 4, 5)]
        [0.025, 0.05, 0.1, 0.1]
        """
        return float(scalar(group["lr"])) * _warmed_up(group, step)

    def check(self, group: dict) -> None:
        _checks.learning_rate(group["lr"])
        _checks.non_negative("weight_decay", group["weight_decay"])
        _checks.finite("r", group["r"])
        _checks.finite("weight_lr_power", group["weight_lr_power"])
        if "warmup_steps" in group:
            _checks.count("warmup_steps", group["warmup_steps"])
        _checks.count("k", group["k"])

    # --- the step ------------------------------------------------------------------------------
    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """One step, in training mode only (see :meth:`train`); as :meth:`Optimizer.step`.

        Raises
        ------
        RuntimeError
            In evaluation mode, before anything runs (hooks, closure, schedules).

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> w.detach(), optimizer.state[0]["z"], optimizer.param_groups[0]["k"]
        (tensor([0.5000]), tensor([0.5000]), 1)
        """
        self.check_training()
        return super().step(closure)

    def run_step(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        # every group counts the step into its average, as the reference's; a step that raises takes it back
        kept = [{key: group[key] for key in ("k", "lr_max", "weight_sum", "scheduled_lr")} for group in self.param_groups]
        for group in self.param_groups:
            lr = group["scheduled_lr"] = self.scheduled_lr(group, group["k"] + 1)
            advance_average(group, lr, group["r"], group["weight_lr_power"])
        try:
            return super().run_step(closure)
        except BaseException:
            for group, counters in zip(self.param_groups, kept):
                group.update(counters)
            raise

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (as :meth:`Optimizer.add_param_group`), in the optimizer's current mode.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> optimizer = optim.SGDScheduleFree([nn.Parameter(lucid.zeros(1))])
        >>> optimizer.eval()
        >>> optimizer.add_param_group({"params": [nn.Parameter(lucid.zeros(2))]})
        >>> [group["train_mode"] for group in optimizer.param_groups]
        [False, False]
        """
        if self.param_groups and isinstance(param_group, dict) and "train_mode" not in param_group:
            param_group = {**param_group, "train_mode": self.training}
        super().add_param_group(param_group)

    # --- checkpoints ------------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """As :meth:`Optimizer.state_dict`, with the mode in each group's ``"train_mode"`` and,
        for each parameter that has stepped, its evaluation weights ``"x"`` (and, in training
        mode, the training weights ``"y"`` it holds), so that a checkpoint of either mode loads
        back to the same weights and evaluates at the same ``x``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.state_dict()["state"]
        {0: {'z': tensor([0.5000]), 'x': tensor([0.5000]), 'y': tensor([0.5000])}}
        """
        saved = super().state_dict()
        index = {id(p): i for i, p in enumerate(self.param_groups.flat())}
        self._modes.record_weights(lambda param: saved["state"][index[id(param)]])
        return saved

    def load_state_dict(self, state_dict: dict) -> None:
        """As :meth:`Optimizer.load_state_dict`, then the saved weights written back into the
        parameters for the loaded mode (``y`` in training mode, ``x`` in evaluation mode), and
        the mode of the module the optimizer follows taken (see :meth:`follow`). Everything is
        checked before anything changes.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> w = nn.Parameter(lucid.tensor([1.0]))
        >>> optimizer = optim.SGDScheduleFree([w], lr=0.5)
        >>> w.grad = lucid.tensor([1.0])
        >>> optimizer.step()
        >>> optimizer.eval()
        >>> saved = optimizer.state_dict()
        >>> other = nn.Parameter(lucid.tensor([7.0]))
        >>> restored = optim.SGDScheduleFree([other], lr=0.5)
        >>> restored.load_state_dict(saved)      # the mode and the weights x come back
        >>> other.detach(), restored.training
        (tensor([0.5000]), False)
        """
        stripped, entries = split_weights(state_dict)
        weights = self._modes.saved_weights(entries, places_of(list(self.param_groups), state_dict)) if entries else []
        super().load_state_dict(stripped)
        self._modes.write_weights(weights)


_COMMON_NOTES = r"""    The parameters hold :math:`y` in training mode and :math:`x` in evaluation mode. Unlike the
    reference (which starts in evaluation mode and raises a bare ``Exception``), the optimizer
    starts in training mode, and ``step()`` in evaluation mode raises a RuntimeError that says to
    call :meth:`train`, before anything changes. :meth:`follow` ties the mode to a module's
    ``train()``/``eval()``. ``state_dict()`` records the mode (each group's ``"train_mode"``) and
    each parameter's evaluation weights ``"x"`` (and in training mode its training weights
    ``"y"``); ``load_state_dict`` writes them back, so a checkpoint of either mode resumes and
    evaluates to the same bits. A group added with ``add_param_group`` takes the current mode
    (the reference's starts in evaluation mode). The reference overwrites ``p.grad`` with the
    normalised gradient; lucid leaves gradients alone. The learning rate is read as a number (a
    Tensor lr as its value). The counters ``k``, ``lr_max``, ``weight_sum`` and ``scheduled_lr``
    live in the groups, as in the reference, and count every step of every group. See
    :doc:`/guide/schedule_free` for the mode rules and BatchNorm's recalibration."""


def _with_common_notes(cls: type) -> type:
    """``cls`` with the Notes every Schedule-Free optimizer shares in its docstring."""
    cls.__doc__ = (cls.__doc__ or "").replace("    __COMMON_NOTES__\n", _COMMON_NOTES.lstrip("\n") + "\n")
    return cls


@_with_common_notes
class SGDScheduleFree(ScheduleFreeOptimizer):
    r"""Schedule-Free SGD (Defazio et al., 2024), computed as ``schedulefree.SGDScheduleFree`` 1.4.1.

    Momentum is replaced by an interpolation and an average: gradients are taken at
    :math:`y`, a point between the SGD sequence :math:`z` and its running average :math:`x`,
    which is what to evaluate. No schedule is needed; ``warmup_steps`` warms up linearly.

    .. math::
        \begin{aligned}
        \gamma_t &\leftarrow \gamma \min(1, t / T_{\text{warmup}}), \quad
            w_t \leftarrow t^r \bigl(\max_{s \le t} \gamma_s\bigr)^{p}, \quad
            c_t \leftarrow w_t / \textstyle\sum_{s \le t} w_s \\
        g_t &\leftarrow \nabla f(y_{t-1}) + \lambda y_{t-1} \\
        y_t &\leftarrow (1 - c_t) y_{t-1} + c_t z_{t-1}
            + \gamma_t \bigl(\beta (1 - c_t) - 1\bigr) g_t \\
        z_t &\leftarrow z_{t-1} - \gamma_t g_t \\
        x_t &= \bigl(y_t - (1 - \beta) z_t\bigr) / \beta
            \quad\text{(the parameters after eval())}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Schedule, default 1.0
        Learning rate :math:`\gamma` (10x-50x a usual SGD rate, says the reference).
    momentum : float, default 0.9
        Interpolation :math:`\beta`, between 0 and 1 exclusive.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`, taken at :math:`y`.
    warmup_steps : int, default 0
        Steps of linear warmup of the learning rate.
    r : float, default 0.0
        Power of the polynomial weighting :math:`t^r` in the average.
    weight_lr_power : float, default 2.0
        Power :math:`p` of the largest learning rate so far in the average's weights.
    foreach : bool, optional
        Accepted for the reference's signature; lucid runs one implementation.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "momentum", "weight_decay", "warmup_steps", "r",
        "weight_lr_power", "foreach", and the reference's counters "k", "train_mode",
        "weight_sum", "lr_max" and "scheduled_lr".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "z", the SGD sequence (a tensor shaped like the parameter).

    Notes
    -----
    The arithmetic is the reference's, in its order, so float64 trajectories agree with it to
    float64 rounding over thousands of steps (1e-12 relative, tested over 1,000).
    __COMMON_NOTES__

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> model = nn.Linear(2, 1)
    >>> optimizer = optim.SGDScheduleFree(model.parameters(), lr=0.1)
    >>> optimizer.follow(model)        # model.train() / model.eval() switch the optimizer too
    >>> x, target = lucid.randn(8, 2), lucid.randn(8, 1)
    >>> for _ in range(3):
    ...     optimizer.zero_grad()
    ...     nn.functional.mse_loss(model(x), target).backward()
    ...     optimizer.step()
    >>> _ = model.eval()               # the parameters are the average x now
    >>> optimizer.training
    False
    >>> optimizer.step()
    Traceback (most recent call last):
        ...
    RuntimeError: SGDScheduleFree.step() was called in evaluation mode, where the parameters hold the evaluation weights x: call optimizer.train() before training (and optimizer.eval() before evaluating or saving), or let the optimizer follow the model's mode with optimizer.follow(model)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 1.0, momentum: float = 0.9,
                 weight_decay: float = 0, warmup_steps: int = 0, r: float = 0.0, weight_lr_power: float = 2,
                 foreach: bool | None = None) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay, warmup_steps=warmup_steps,
                                      r=r, weight_lr_power=weight_lr_power, foreach=foreach))

    def check(self, group: dict) -> None:
        super().check(group)
        _checks.finite("momentum", group["momentum"])
        if group["momentum"] <= 0 or group["momentum"] >= 1:
            raise ValueError(f"Momentum must be between 0 and 1 exclusive: {group['momentum']}")

    def beta(self, group: dict) -> float:
        return group["momentum"]

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"z": param.detach().clone()}

    def elementwise_rule(self, group: dict) -> Rule | None:
        return sgd_schedule_free


class AdamScheduleFreeOptimizer(ScheduleFreeOptimizer):
    """What AdamW's and RAdam's Schedule-Free forms share: betas, eps and the second moment.

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> isinstance(optim.RAdamScheduleFree([nn.Parameter(lucid.zeros(1))]), AdamScheduleFreeOptimizer)
    True
    """

    def check(self, group: dict) -> None:
        super().check(group)
        _checks.epsilon(group["eps"])
        _checks.betas(group["betas"])
        if group["betas"][0] == 0:  # eval() divides by it
            raise ValueError(f"Invalid beta parameter at index 0: {group['betas'][0]} (must be greater than 0)")

    def beta(self, group: dict) -> float:
        return group["betas"][0]

    def init_state(self, param: Tensor, group: dict) -> dict:
        return {"z": param.detach().clone(), "exp_avg_sq": _factory.zeros_like(param)}


@_with_common_notes
class AdamWScheduleFree(AdamScheduleFreeOptimizer):
    r"""Schedule-Free AdamW (Defazio et al., 2024), computed as ``schedulefree.AdamWScheduleFree`` 1.4.1.

    Schedule-Free's interpolation and average (see :class:`SGDScheduleFree`) around Adam's
    normalised gradient, with decoupled weight decay taken at :math:`y`. It won the
    self-tuning track of the AlgoPerf benchmark.

    .. math::
        \begin{aligned}
        \gamma_t &\leftarrow \gamma \min(1, t / T_{\text{warmup}}), \quad
            w_t \leftarrow t^r \bigl(\max_{s \le t} \gamma_s\bigr)^{p}, \quad
            c_t \leftarrow w_t / \textstyle\sum_{s \le t} w_s \\
        g_t &\leftarrow \nabla f(y_{t-1}) \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        u_t &\leftarrow g_t \big/ \bigl(\sqrt{v_t / (1 - \beta_2^t)} + \epsilon\bigr) + \lambda y_{t-1} \\
        y_t &\leftarrow (1 - c_t) y_{t-1} + c_t z_{t-1}
            + \gamma_t \bigl(\beta_1 (1 - c_t) - 1\bigr) u_t \\
        z_t &\leftarrow z_{t-1} - \gamma_t u_t \\
        x_t &= \bigl(y_t - (1 - \beta_1) z_t\bigr) / \beta_1
            \quad\text{(the parameters after eval())}
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Schedule, default 0.0025
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        :math:`\beta_1`, the interpolation (in (0, 1)), and :math:`\beta_2`, the second moment's decay.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`, taken at :math:`y`.
    warmup_steps : int, default 0
        Steps of linear warmup of the learning rate.
    r : float, default 0.0
        Power of the polynomial weighting :math:`t^r` in the average.
    weight_lr_power : float, default 2.0
        Power :math:`p` of the largest learning rate so far in the average's weights.
    foreach : bool, optional
        Accepted for the reference's signature; lucid runs one implementation.

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "warmup_steps", "r",
        "weight_lr_power", "foreach", and the reference's counters "k", "train_mode",
        "weight_sum", "lr_max" and "scheduled_lr".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "z" (the base sequence) and "exp_avg_sq" (:math:`v`),
        tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is the reference's, in its order, so float64 trajectories agree with it to
    float64 rounding over thousands of steps (1e-12 relative, tested over 1,000). The update
    is one elementwise rule, fused (numba on "cpu", ``mx.compile`` on "gpu"); the step's
    scalars (the warmup, :math:`c_t`, the bias correction) are computed once per group.
    __COMMON_NOTES__

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.AdamWScheduleFree([w], lr=0.1)
    >>> for _ in range(2):
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> optimizer.eval()        # evaluate (and save) at x
    >>> w
    Parameter containing:
    tensor([ 0.8527, -1.8513], requires_grad=True)
    >>> optimizer.train()       # back to y to go on training
    >>> sorted(optimizer.state[0]), optimizer.param_groups[0]["k"]
    (['exp_avg_sq', 'z'], 2)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 0.0025,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 warmup_steps: int = 0, r: float = 0.0, weight_lr_power: float = 2.0,
                 foreach: bool | None = None) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      warmup_steps=warmup_steps, r=r, weight_lr_power=weight_lr_power,
                                      foreach=foreach))

    def elementwise_rule(self, group: dict) -> Rule | None:
        return adamw_schedule_free


@_with_common_notes
class RAdamScheduleFree(AdamScheduleFreeOptimizer):
    r"""Schedule-Free RAdam, computed as ``schedulefree.RAdamScheduleFree`` 1.4.1.

    :class:`AdamWScheduleFree` with RAdam's rectification in place of a warmup: the
    learning rate is scaled by RAdam's :math:`r_t`, and while the variance estimate is not
    tractable (:math:`\rho_t \le 4`, the first 4 steps at :math:`\beta_2 = 0.999`) the
    gradient is used unnormalised, with the learning rate 0 (``silent_sgd_phase``, the
    default: only :math:`v` moves) or unscaled.

    .. math::
        \begin{aligned}
        \rho_\infty &= \frac{2}{1 - \beta_2} - 1, \quad
            \rho_t \leftarrow \rho_\infty - \frac{2 t \beta_2^t}{1 - \beta_2^t} \\
        \gamma_t &\leftarrow \gamma \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}
            {(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}} \text{ if } \rho_t > 4,
            \text{ else } 0 \text{ (silent) or } \gamma \\
        w_t &\leftarrow t^r \bigl(\max_{s \le t} \gamma_s\bigr)^{p}, \quad
            c_t \leftarrow w_t / \textstyle\sum_{s \le t} w_s \quad (0 \text{ while the sum is } 0) \\
        v_t &\leftarrow \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        u_t &\leftarrow g_t \big/ \bigl(\sqrt{v_t / (1 - \beta_2^t)} + \epsilon\bigr)
            \text{ if } \rho_t > 4 \text{, else } g_t; \quad u_t \leftarrow u_t + \lambda y_{t-1} \\
        y_t &\leftarrow (1 - c_t) y_{t-1} + c_t z_{t-1}
            + \gamma_t \bigl(\beta_1 (1 - c_t) - 1\bigr) u_t, \quad
        z_t \leftarrow z_{t-1} - \gamma_t u_t
        \end{aligned}

    Parameters
    ----------
    params : iterable of Parameter or iterable of dict
        Parameters to optimise, or a list of parameter-group dicts.
    lr : float or Schedule, default 0.0025
        Learning rate :math:`\gamma`.
    betas : tuple of float, default (0.9, 0.999)
        :math:`\beta_1`, the interpolation (in (0, 1)), and :math:`\beta_2`.
    eps : float, default 1e-8
        Term :math:`\epsilon` added to the denominator.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`, taken at :math:`y`.
    r : float, default 0.0
        Power of the polynomial weighting :math:`t^r` in the average.
    weight_lr_power : float, default 2.0
        Power :math:`p` of the largest learning rate so far in the average's weights.
    foreach : bool, optional
        Accepted for the reference's signature; lucid runs one implementation.
    silent_sgd_phase : bool, default True
        Learning rate 0 while :math:`\rho_t \le 4` (True), or :math:`\gamma` (False).

    Attributes
    ----------
    param_groups : list of dict
        Groups with keys "params", "lr", "betas", "eps", "weight_decay", "r",
        "weight_lr_power", "foreach", "silent_sgd_phase", and the reference's counters "k",
        "train_mode", "weight_sum", "lr_max" and "scheduled_lr".
    defaults : dict
        Default hyperparameter values.
    state : dict
        By flat parameter index: "z" and "exp_avg_sq", tensors shaped like the parameter.

    Notes
    -----
    The arithmetic is the reference's, in its order (float64 agreement to 1e-12 relative over
    1,000 steps); both phases are elementwise rules, fused.
    __COMMON_NOTES__

    Examples
    --------
    >>> import lucid
    >>> from lucid import nn, optim
    >>> w = nn.Parameter(lucid.tensor([1.0, -2.0]))
    >>> optimizer = optim.RAdamScheduleFree([w], lr=0.1)
    >>> for _ in range(4):      # rho_t <= 4: the silent phase moves only the second moment
    ...     optimizer.zero_grad()
    ...     (w * w).sum().backward()
    ...     optimizer.step()
    >>> w.detach(), optimizer.param_groups[0]["scheduled_lr"]
    (tensor([ 1., -2.]), 0.0)
    """

    def __init__(self, params: ParamsT, lr: float | Tensor | Schedule = 0.0025,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 r: float = 0.0, weight_lr_power: float = 2.0, foreach: bool | None = None,
                 silent_sgd_phase: bool = True) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, r=r,
                                      weight_lr_power=weight_lr_power, foreach=foreach,
                                      silent_sgd_phase=silent_sgd_phase))

    def scheduled_lr(self, group: dict, step: int) -> float:
        rho_t, rho_inf = radam_rho(group["betas"][1], step)
        rect = (((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                if rho_t > 4.0 else float(not group["silent_sgd_phase"]))
        return float(scalar(group["lr"])) * rect

    def elementwise_rule(self, group: dict) -> Rule | None:
        # the group's step is counted already when the step asks (run_step)
        return adamw_schedule_free if radam_rho(group["betas"][1], max(group["k"], 1))[0] > 4.0 else radam_schedule_free_sgd
