"""Saving and loading an optimizer: ``state_dict`` in torch's layout, and checked loading,
written against the public faces of its groups, its state and its hooks."""

from __future__ import annotations

import copy
import itertools
import math
import numbers

from .._tensor import Tensor
from . import schedules as _schedules
from ._shared import scalar


def deep_copy(value):
    """A deep copy in which tensors get their own storage (state_dict never aliases)."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(deep_copy(v) for v in value)
    return copy.deepcopy(value)


def state_dict(optimizer, hooks) -> dict:
    """``optimizer.state_dict()`` (see :meth:`lucid.optim.Optimizer.state_dict`); ``hooks``
    are its :class:`~lucid.optim._hooks.Hooks`."""
    hooks.run("state_dict_pre", optimizer)
    groups, numbering = [], itertools.count()  # parameters numbered in group order from 0
    for group in optimizer.param_groups:
        groups.append(_schedules.to_plain({k: deep_copy(v) for k, v in group.items() if k != "params"}))
        groups[-1]["params"] = [next(numbering) for _ in group["params"]]
    state = {index: deep_copy(optimizer.state[index]) for index in optimizer.state}
    return hooks.run("state_dict_post", optimizer, {"state": state, "param_groups": groups})


def load_state_dict(optimizer, hooks, state_dict: dict) -> None:
    """``optimizer.load_state_dict(state_dict)`` (see :meth:`lucid.optim.Optimizer.load_state_dict`);
    ``hooks`` are its :class:`~lucid.optim._hooks.Hooks`."""
    if not isinstance(state_dict, dict):
        raise ValueError(f"a state dict must be a dict, got {type(state_dict).__name__}")
    state_dict = hooks.run("load_state_dict_pre", optimizer, dict(state_dict))
    new_groups, new_state = _checked_load(optimizer, state_dict)
    for group, new in zip(optimizer.param_groups, new_groups):
        group.clear()
        group.update(new)
    optimizer.state.replace(new_state)
    hooks.run("load_state_dict_post", optimizer)


def _checked_load(optimizer, state_dict: dict):
    """The groups and state ``state_dict`` describes, built without touching ``optimizer``."""
    if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
        raise ValueError("a state dict must be a dict with 'state' and 'param_groups' entries")
    saved_groups = state_dict["param_groups"]
    if not isinstance(saved_groups, (list, tuple)) or not all(
        isinstance(g, dict) and isinstance(g.get("params"), (list, tuple)) for g in saved_groups
    ):
        raise ValueError("a state dict's 'param_groups' must be a list of dicts, each with a 'params' list")
    if not isinstance(state_dict["state"], dict):
        raise ValueError(f"a state dict's 'state' must be a dict, got {type(state_dict['state']).__name__}")
    if len(saved_groups) != len(optimizer.param_groups):
        raise ValueError("loaded state dict has a different number of parameter groups")
    new_groups, places = [], dict[int, tuple[Tensor, dict]]()  # places: (parameter, group) by saved index
    for at, (live, saved) in enumerate(zip(optimizer.param_groups, saved_groups)):
        if len(saved["params"]) != len(live["params"]):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        new_groups.append(_loaded_group(optimizer, at, live, saved, state_dict["state"]))
        places.update((index, (param, new_groups[-1])) for index, param in zip(saved["params"], live["params"]))
    new_state = {}
    for index, saved in state_dict["state"].items():
        if index not in places:
            raise ValueError(f"loaded state has an entry for parameter {index}, which no group lists")
        new_state[id(places[index][0])] = _load_param_state(optimizer, index, *places[index], saved)
    return new_groups, new_state


def _loaded_group(optimizer, at: int, live: dict, saved: dict, saved_state: dict) -> dict:
    """Saved group ``at`` with ``live``'s parameters, checked as the constructor checks a group.

    Of the hyperparameters the optimizer has, a group may lack only those an older torch did
    not save (``optimizer.older_group_defaults``, filled as torch's ``__setstate__`` fills them);
    torch loads a group lacking others and fails at ``step`` (KeyError), lucid refuses it here.
    """
    new = _schedules.from_plain({k: deep_copy(v) for k, v in saved.items() if k != "params"}, f"param_groups[{at}]")
    new["params"] = live["params"]
    if "param_names" in live and "param_names" not in saved:
        new["param_names"] = live["param_names"]
    defaults = optimizer.group_defaults(new)  # the saved group's rule (MuonWithAdamW: by its use_muon)
    missing = [key for key in defaults if key not in new and key not in optimizer.older_group_defaults]
    if missing:  # a damaged state dict, or another optimizer's: its state then says so
        found = {str(k) for i in saved["params"] if isinstance(saved_state.get(i), dict) for k in saved_state[i]}
        kept, name = set(optimizer.state_shapes(live["params"][0], live)), type(optimizer).__name__
        other = f"; its state holds {sorted(found)} where {name} keeps {sorted(kept)}: is it another optimizer's?"
        raise ValueError(f"loaded param_groups[{at}] lacks {missing}, which every {name} group has"
                         + other * bool(found - kept - {"step"}))
    new.update({key: optimizer.older_group_defaults[key] for key in defaults if key not in new})
    optimizer.param_groups.check(new)
    return new


def _load_param_state(optimizer, index, param: Tensor, group: dict, saved) -> dict:
    """One parameter's saved state, checked against a fresh one and converted to ``param``."""
    if not isinstance(saved, dict):
        raise ValueError(f"the state of parameter {index} must be a dict, got {type(saved).__name__}")
    shapes = optimizer.state_shapes(param, group)
    missing = [k for k in optimizer.init_state(param, group) if k not in saved]
    if missing:
        raise ValueError(f"loaded state of parameter {index} lacks {missing} (it holds {sorted(map(str, saved))})")
    state = {}
    for key, value in saved.items():
        if key == "step":
            step = scalar(value)
            if (isinstance(step, bool) or not isinstance(step, numbers.Real) or not math.isfinite(step)
                    or step != int(step) or step < 0):  # type: ignore[call-overload]  # typeshed's numbers.Real has no __int__
                raise ValueError(f"loaded state of parameter {index} has a step count of {value!r}")
            state[key] = int(step)  # type: ignore[call-overload]  # typeshed's numbers.Real has no __int__
            continue
        expected = shapes.get(key)
        if not isinstance(value, Tensor) and (hasattr(value, "shape") and hasattr(value, "dtype")
                                              or expected == () and type(value) in (int, float)):
            value = Tensor(value)  # a host array (from a checkpoint file), or an older torch's number (ASGD's eta)
        if expected is not None and (not isinstance(value, Tensor) or value.shape != expected):
            found = (f"of shape {value.shape}, expected {expected}" if isinstance(value, Tensor)
                     else f"of type {type(value).__name__}, expected a Tensor")
            raise ValueError(f"loaded state of parameter {index} has {key!r} {found}")
        if isinstance(value, Tensor):
            value = value.detach().to(param.device, optimizer.state.dtype_for(key, value, param))
        state[key] = deep_copy(value)
    return optimizer.loaded_state(index, param, group, state)
