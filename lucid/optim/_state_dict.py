"""Saving and loading an optimizer: ``state_dict`` in torch's layout, checked loading, pickling."""

from __future__ import annotations

import copy
import math
import numbers

from .._tensor import Tensor
from . import schedules as _schedules
from ._shared import scalar
from ._parts import OptimizerParts
from ._state import OptimizerState

def _copy(value):
    """A deep copy in which tensors get their own storage (state_dict never aliases)."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return copy.deepcopy(value)


class StateDictIO(OptimizerParts):
    """``state_dict``, ``load_state_dict`` and pickling (a part of :class:`~lucid.optim.Optimizer`)."""

    def state_dict(self) -> dict:
        """The optimizer's state and hyperparameters, in torch's layout, as copies.

        Returns
        -------
        dict
            ``{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}``,
            parameters numbered in group order from 0. Tensors are copies: the dict does not
            change when training goes on, and loading it elsewhere shares nothing.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.ones(2))
        >>> opt = optim.SGD([p], lr=0.1, momentum=0.9)
        >>> (p * p).sum().backward()
        >>> opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"]
        {0: {'momentum_buffer': tensor([2., 2.])}}
        >>> sd["param_groups"][0]["params"], sd["param_groups"][0]["lr"]
        ([0], 0.1)
        """
        for hook in self._state_dict_pre_hooks.values():
            hook(self)
        index_of, groups, start = {}, [], 0
        for group in self.param_groups:
            packed = _schedules.to_plain({k: _copy(v) for k, v in group.items() if k != "params"})
            packed["params"] = list(range(start, start + len(group["params"])))
            for offset, param in enumerate(group["params"]):
                index_of[id(param)] = start + offset
            start += len(group["params"])
            groups.append(packed)
        state = {index: _copy(self.state[index]) for index in self.state}
        result = {"state": state, "param_groups": groups}
        for hook in self._state_dict_post_hooks.values():
            replaced = hook(self, result)
            if replaced is not None:
                result = replaced
        return result

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore state and hyperparameters saved by :meth:`state_dict`.

        Everything is checked before anything changes: the number and sizes of the groups,
        each state entry against its parameter's shape, the hyperparameters. Loaded tensors
        are copied and converted to their parameter's device and dtype (``step`` stays an int).

        Raises
        ------
        ValueError
            When the dict does not fit this optimizer; the optimizer is then unchanged.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.ones(2))
        >>> opt = optim.Adam([p], lr=0.1)
        >>> p.sum().backward()
        >>> opt.step()
        >>> fresh = optim.Adam([p], lr=0.5)
        >>> fresh.load_state_dict(opt.state_dict())
        >>> fresh.state[0]["step"], fresh.param_groups[0]["lr"]
        (1, 0.1)
        """
        if not isinstance(state_dict, dict):
            raise ValueError(f"a state dict must be a dict, got {type(state_dict).__name__}")
        state_dict = dict(state_dict)
        for hook in self._load_state_dict_pre_hooks.values():
            replaced = hook(self, state_dict)
            if replaced is not None:
                state_dict = replaced
        new_groups, new_state = self._checked_load(state_dict)
        for group, new in zip(self.param_groups, new_groups):
            group.clear()
            group.update(new)
        self.state._by_param = new_state
        self._state_shapes = {}
        self._drop_plans()
        for hook in self._load_state_dict_post_hooks.values():
            hook(self)

    def _checked_load(self, state_dict: dict):
        """The groups and state ``state_dict`` describes, built without touching ``self``."""
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("a state dict must be a dict with 'state' and 'param_groups' entries")
        saved_groups = state_dict["param_groups"]
        if not isinstance(saved_groups, (list, tuple)) or not all(
            isinstance(g, dict) and isinstance(g.get("params"), (list, tuple)) for g in saved_groups
        ):
            raise ValueError("a state dict's 'param_groups' must be a list of dicts, each with a 'params' list")
        if not isinstance(state_dict["state"], dict):
            raise ValueError(f"a state dict's 'state' must be a dict, got {type(state_dict['state']).__name__}")
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        new_groups, param_of, group_of = [], {}, {}
        for live, saved in zip(self.param_groups, saved_groups):
            if len(saved["params"]) != len(live["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
                )
            new = _schedules.from_plain({k: _copy(v) for k, v in saved.items() if k != "params"})
            new["params"] = live["params"]
            if "param_names" in live and "param_names" not in saved:
                new["param_names"] = live["param_names"]
            for name, default in self.defaults.items():
                new.setdefault(name, live.get(name, default))
            self._validate_hyperparameters(new)
            for index, param in zip(saved["params"], live["params"]):
                param_of[index], group_of[index] = param, new
            new_groups.append(new)
        new_state = {}
        for index, saved in state_dict["state"].items():
            if index not in param_of:
                raise ValueError(f"loaded state has an entry for parameter {index}, which no group lists")
            param = param_of[index]
            new_state[id(param)] = self._load_param_state(index, param, group_of[index], saved)
        return new_groups, new_state

    def _load_param_state(self, index, param: Tensor, group: dict, saved) -> dict:
        """One parameter's saved state, checked against a fresh one and converted to ``param``."""
        if not isinstance(saved, dict):
            raise ValueError(f"the state of parameter {index} must be a dict, got {type(saved).__name__}")
        template = self.init_state(param, group)
        shapes = self.state_shapes(param, group)
        missing = [k for k in template if k not in saved]
        if missing:
            raise ValueError(f"loaded state of parameter {index} lacks {missing}")
        state = {}
        for key, value in saved.items():
            if key == "step":
                step = scalar(value)
                if (isinstance(step, bool) or not isinstance(step, numbers.Real) or not math.isfinite(step)
                        or step != int(step) or step < 0):  # type: ignore[call-overload]  # typeshed's numbers.Real has no __int__
                    raise ValueError(f"loaded state of parameter {index} has a step count of {value!r}")
                state[key] = int(step)  # type: ignore[call-overload]  # typeshed's numbers.Real has no __int__
                continue
            if not isinstance(value, Tensor) and hasattr(value, "shape") and hasattr(value, "dtype"):
                value = Tensor(value)  # host arrays, e.g. from a checkpoint file
            expected = shapes.get(key)
            if expected is not None and not isinstance(value, Tensor):
                raise ValueError(
                    f"loaded state of parameter {index} has {key!r} of type {type(value).__name__}, expected a Tensor"
                )
            if isinstance(value, Tensor):
                if expected is not None and value.shape != expected:
                    raise ValueError(
                        f"loaded state of parameter {index} has {key!r} of shape {value.shape}, "
                        f"expected {expected}"
                    )
                value = value.detach().to(param.device, self._state_dtype(key, value, param))
            state[key] = _copy(value)
        return state

    # --- pickling ----------------------------------------------------------------------
    def __getstate__(self) -> dict:
        # hooks are dropped (as torch drops them); state is keyed by position, as ids change
        params = self._flat_params()
        return {
            "defaults": self.defaults,
            "param_groups": self.param_groups,
            "state": [self.state.for_param(p) for p in params],
        }

    def __setstate__(self, saved: dict) -> None:
        self._init_empty()
        self.defaults = saved["defaults"]
        self.param_groups = saved["param_groups"]
        for param, state in zip(self._flat_params(), saved["state"]):
            if state is not None:
                self.state[param] = state

    def _init_empty(self) -> None:
        self._init_hooks()
        self.state = OptimizerState(self)
        self._flat = None
        self._state_shapes = {}
        self._drop_plans()
