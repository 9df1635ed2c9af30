"""Parameter groups: adding them (checked), the flat numbering of parameters, zeroing gradients."""

from __future__ import annotations

from .._autograd import no_grad
from .._tensor import Tensor
from . import _checks
from ._checks import required
from . import schedules as _schedules
from ._parts import OptimizerParts


_UNORDERED = ("optimizer parameters need to be organized in ordered collections, but the ordering "
              "of tensors in sets will change between runs. Please use a list instead.")


class ParamGroups(OptimizerParts):
    """``param_groups`` and what reads them (a part of :class:`~lucid.optim.Optimizer`)."""

    def _add_initial_groups(self, params) -> None:
        """The constructor's ``params``: parameters, (name, parameter) pairs or group dicts."""
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {params._describe()}")
        if isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED)
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        for group in groups if isinstance(groups[0], dict) else [{"params": groups}]:
            self.add_param_group(group)

    def _validate_hyperparameters(self, group: dict) -> None:
        """The optimizer's own checks (torch's messages), then NaN and infinities torch lets through."""
        _checks.number_types(group, placeholder=required)
        _checks.structure(group)
        self._check_hyperparameters(group)
        _checks.finite_hyperparameters(group)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, with its own hyperparameters, to optimise from now on.

        Parameters
        ----------
        param_group : dict
            ``"params"`` (a Parameter or an ordered iterable of them, or of (name, Parameter)
            pairs) and any hyperparameters to set for this group; the rest come from
            ``defaults``.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> a, b = nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.zeros(3))
        >>> opt = optim.SGD([a], lr=0.1)
        >>> opt.add_param_group({"params": [b], "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        group = dict(param_group)
        if "params" not in group:
            raise KeyError("params")
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(_UNORDERED)
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            group["param_names"] = names
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}"
                )
            if not (param.is_leaf or param._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        _schedules.attach(group)
        self._validate_hyperparameters(group)
        if len({id(p) for p in params}) != len(params):
            raise ValueError(
                "optimizer contains a parameter group with duplicate parameters; each parameter may "
                "appear once (torch only warns, then updates it twice per step)"
            )
        seen: set[int] = set()
        for existing in self.param_groups:
            seen.update(id(p) for p in existing["params"])
            if ("param_names" in group) != ("param_names" in existing):
                kind = "with names" if "param_names" in group else "without names"
                raise ValueError(
                    f"all optimizer param groups should be with/without names. cannot add param group {kind} to the optimizer"
                )
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)
        self._flat = None
        self._drop_plans()
        try:
            self._on_new_group(group)
        except Exception:
            # a group the optimizer refuses (Muon's non-2-D params) leaves nothing behind
            self.param_groups.pop()
            self._flat = None
            for param in params:
                self.state._by_param.pop(id(param), None)
            raise

    def _on_new_group(self, group: dict) -> None:
        """Called once a group is added (Adagrad creates its state here, as torch does)."""

    def _flat_params(self) -> list[Tensor]:
        """Every parameter over all groups, in order: the numbering of ``state_dict``."""
        if self._flat is None:
            self._flat = [p for group in self.param_groups for p in group["params"]]
        return self._flat

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter.

        Parameters
        ----------
        set_to_none : bool, default True
            Set ``.grad`` to None (the parameter is then skipped by ``step``), or, if False,
            write zeros into the existing gradient in place (the parameter still steps). A
            row-sparse gradient is emptied instead (no rows left, in O(1)), as in torch.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.ones(2))
        >>> opt = optim.SGD([p], lr=0.1)
        >>> (p * 3).sum().backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> p.grad
        tensor([0., 0.])
        >>> opt.zero_grad()
        >>> p.grad is None
        True
        """
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    with no_grad():
                        param.grad.detach_().zero_()

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"
