"""What Schedule-Free optimizers share (Defazio et al., 2024): the modes, the running average's
weight, and checkpoints that hold the evaluation weights.

A Schedule-Free optimizer trains the weights ``y``, an interpolation between its base
sequence ``z`` and the running average ``x`` that is evaluated and saved:
``y = (1 - beta) z + beta x``. The parameters hold ``y`` in training mode and ``x`` in
evaluation mode; ``train()`` and ``eval()`` move them between the two (``lerp`` towards
``z``). :class:`ScheduleFreeModes` is that part, written once for the optimizers of
``schedule_free.py`` and the wrapper of ``schedule_free_wrapper.py``: the two modes and their
switches, following a module's ``train()``/``eval()``, the step refused in evaluation mode,
and a ``state_dict`` that records the mode with ``x`` (and ``y`` in training mode), whose
loading writes the saved weights back.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._autograd import no_grad
from .._tensor import Tensor, eval as lucid_eval
from ..nn.module import Module

if TYPE_CHECKING:
    from ..utils.hooks import RemovableHandle

__all__ = ["ScheduleFreeModes", "advance_average", "averaging_weight", "split_weights", "places_of"]


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


class _Follower:
    """The train hook by which an optimizer follows a module's mode."""

    def __init__(self, optimizer: ScheduleFreeModes) -> None:
        self.optimizer = optimizer

    def __call__(self, module: Module, mode: bool) -> None:
        self.optimizer.train() if mode else self.optimizer.eval()


class ScheduleFreeModes:
    """The modes of a Schedule-Free optimizer (see the module docstring).

    A class using it gives :meth:`beta` (:math:`\\beta` of the interpolation) and
    :meth:`base_sequence` (a parameter's ``z``, or None before its first step), and keeps the
    mode in each group's ``"train_mode"``, as the reference does.
    """

    param_groups: Any
    _following: tuple | None = None

    # --- what the class gives ----------------------------------------------------------------
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
        raise NotImplementedError

    # --- the modes ---------------------------------------------------------------------------
    def _group_training(self, group: dict) -> bool:
        """Whether ``group`` is in training mode (by default its ``"train_mode"``, as the reference keeps it)."""
        return bool(group["train_mode"])

    def _set_group_training(self, group: dict, mode: bool) -> None:
        group["train_mode"] = mode

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
        return self._group_training(self.param_groups[0])

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
        self._switch(True)

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
        self._switch(False)

    def _switch(self, to_train: bool) -> None:
        groups = [group for group in self.param_groups if self._group_training(group) != to_train]
        pairs = []
        for group in groups:
            beta = self.beta(group)
            weight = 1 - beta if to_train else 1 - 1 / beta
            pairs += [(p, z, weight) for p in group["params"] if (z := self.base_sequence(p)) is not None]
        for group in groups:
            self._set_group_training(group, to_train)
        _interpolate(pairs)

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
        if not self.training:
            raise RuntimeError(
                f"{type(self).__name__}.step() was called in evaluation mode, where the parameters hold the "
                "evaluation weights x: call optimizer.train() before training (and optimizer.eval() before "
                "evaluating or saving), or let the optimizer follow the model's mode with optimizer.follow(model)"
            )

    # --- following a module -------------------------------------------------------------------
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
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"follow expects a lucid.nn.Module or None, got {type(module).__name__}")
        if self._following is not None:
            self._following[1].remove()
            self._following = None
        if module is None:
            return
        handle: RemovableHandle = module.register_train_hook(_Follower(self))
        self._following = (weakref.ref(module), handle)
        self._take_mode_of_followed()

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
        return self._following[0]() if self._following is not None else None

    def _take_mode_of_followed(self) -> None:
        module = self.followed
        if module is not None:
            self.train() if module.training else self.eval()

    # --- checkpoints -----------------------------------------------------------------------
    def _record_weights(self, saved: dict, state_of: Callable[[Tensor], dict]) -> None:
        """Add to ``saved`` (a state dict being made, numbered in group order) each stepped
        parameter's evaluation weights ``"x"`` and, in training mode, its training weights
        ``"y"``; ``state_of(param)`` is where its entry goes."""
        with no_grad():
            for group in self.param_groups:
                train_mode = self._group_training(group)
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

    def _saved_weights(self, entries: dict, places: dict) -> list[tuple[Tensor, Tensor, Tensor | None]]:
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

    def _write_weights(self, weights: list[tuple[Tensor, Tensor, Tensor | None]]) -> None:
        """Write the loaded weights into the parameters, for the mode just loaded (``y`` in
        training mode, ``x`` in evaluation mode); then take the followed module's mode."""
        group_of = {id(p): group for group in self.param_groups for p in group["params"]}
        written = []
        with no_grad():
            for param, x, y in weights:
                train_mode = self._group_training(group_of[id(param)])
                source = y if train_mode and y is not None else x
                if train_mode and y is None:  # a checkpoint of x alone: y from it, as train() would
                    source = x.clone().lerp_(self.base_sequence(param).to(x.device), 1 - self.beta(group_of[id(param)]))  # type: ignore[union-attr]
                written.append(param.copy_(source))
        lucid_eval(*written)
        self._take_mode_of_followed()


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
