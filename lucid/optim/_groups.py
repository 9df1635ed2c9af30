"""Parameter groups: the list users read and change, adding a group (checked), the flat numbering."""

from __future__ import annotations

from collections.abc import Callable

from .._dtype import describe
from .._tensor import Tensor
from . import schedules as _schedules
from ._checks import required

def _ordered(params, message: str) -> list:
    """``params`` as a list, refusing a lone Tensor (``message``) and sets (their order changes)."""
    if isinstance(params, Tensor):
        raise TypeError(message + describe(params.dtype, params.shape))
    if isinstance(params, (set, frozenset)):
        raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                        "of tensors in sets will change between runs. Please use a list instead.")
    return list(params)


class ParamGroups(list):
    """An optimizer's ``param_groups``: a list of dicts, each ``"params"`` and every
    hyperparameter, that users read and change in place.

    :meth:`add` checks a group before it joins (``defaults_of`` gives the hyperparameters it
    is filled from, ``check`` validates them); :meth:`flat` numbers every parameter over the
    groups in order (``state_dict``'s numbering).
    """

    def __init__(self, defaults_of: Callable[[dict], dict], check: Callable[[dict], None]) -> None:
        super().__init__()
        self.defaults_of, self.check = defaults_of, check
        self._flat: list[Tensor] | None = None

    def initial(self, params) -> list[dict]:
        """The groups a constructor's ``params`` describe (parameters, (name, parameter) pairs or dicts)."""
        groups = _ordered(params, "params argument given to the optimizer should be an iterable of Tensors "
                                  "or dicts, but got ")
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        return groups if isinstance(groups[0], dict) else [{"params": groups}]

    def add(self, param_group: dict) -> None:
        """Check ``param_group`` (filled from the defaults) and append it; see ``add_param_group``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        group = dict(param_group)
        params = group["params"]  # a KeyError, as torch's, where it is missing
        params = [params] if isinstance(params, Tensor) else _ordered(params, "")
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            group["param_names"] = names
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}")
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults_of(group).items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        self.check(_schedules.attach(group))
        if len({id(p) for p in params}) != len(params):
            raise ValueError(
                "optimizer contains a parameter group with duplicate parameters; each parameter may "
                "appear once (torch only warns, then updates it twice per step)"
            )
        if self and ("param_names" in group) != ("param_names" in self[0]):  # the groups agree: the first speaks
            kind = "with names" if "param_names" in group else "without names"
            raise ValueError(
                f"all optimizer param groups should be with/without names. cannot add param group {kind} to the optimizer"
            )
        if not {id(p) for p in self.flat()}.isdisjoint(map(id, params)):
            raise ValueError("some parameters appear in more than one parameter group")
        self.append(group)
        self._flat = None

    def add_all(self, groups: list[dict]) -> None:
        """:meth:`add` each of ``groups``, or none where one is refused."""
        size = len(self)
        try:
            for group in groups:
                self.add(group)
        except Exception:
            del self[size:]
            self._flat = None
            raise

    def flat(self) -> list[Tensor]:
        """Every parameter over all groups, in order: the numbering of ``state_dict``."""
        if self._flat is None:
            self._flat = [p for group in self for p in group["params"]]
        return self._flat
