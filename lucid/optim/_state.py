"""Per-parameter state: ``optimizer.state`` (by flat index or by Parameter), and keeping each
parameter's state fitting it (created on first use, converted to its device and dtype)."""

from __future__ import annotations

from collections.abc import MutableMapping

from .._dtype import float32
from .._tensor import Tensor, same_kind
from ._parts import OptimizerParts


class OptimizerState(MutableMapping):
    """Per-parameter state dicts, reachable by flat parameter index and by the Parameter.

    ``state[i]`` and ``state[p]`` name the same dict when ``p`` is the ``i``-th parameter
    over all groups in order (the numbering ``state_dict()`` uses). Iteration yields the
    indices of the parameters that have state; a parameter that has never stepped has none.
    """

    def __init__(self, optimizer):
        self._optimizer = optimizer
        self._by_param: dict[int, dict] = {}
        self._ids: tuple = (None, set())  # (the flat parameter list, the ids in it), rebuilt when it changes

    def _param(self, key) -> Tensor:
        if isinstance(key, Tensor):
            params = self._optimizer._flat_params()
            if self._ids[0] is not params:
                self._ids = (params, {id(p) for p in params})
            if id(key) not in self._ids[1]:
                raise KeyError("a Tensor that this optimizer does not optimise")
            return key
        if isinstance(key, int) and not isinstance(key, bool):
            params = self._optimizer._flat_params()
            if not 0 <= key < len(params):
                raise KeyError(key)
            return params[key]
        raise KeyError(key)

    def __getitem__(self, key) -> dict:
        param = self._param(key)
        try:
            return self._by_param[id(param)]
        except KeyError:
            which = f"parameter {key}" if isinstance(key, int) else "this parameter"
            raise KeyError(
                f"{which} has no state yet: it has not stepped (torch's defaultdict would return {{}} "
                "here; lucid keeps 'no state' visible)"
            ) from None

    def __setitem__(self, key, value: dict) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"a parameter's state must be a dict, got {type(value).__name__}")
        self._by_param[id(self._param(key))] = value

    def __delitem__(self, key) -> None:
        del self._by_param[id(self._param(key))]

    def __contains__(self, key) -> bool:
        try:
            return id(self._param(key)) in self._by_param
        except KeyError:
            return False

    def __iter__(self):
        for index, param in enumerate(self._optimizer._flat_params()):
            if id(param) in self._by_param:
                yield index

    def __len__(self) -> int:
        return len(self._by_param)

    def for_param(self, param) -> dict | None:
        """The state of ``param``, or None if it has none (no KeyError, no creation)."""
        return self._by_param.get(id(param))

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{i}: {self[i]!r}" for i in self) + "}"


class StateConversions(OptimizerParts):
    """State created on first use and kept on its parameter's device and dtype (a part of
    :class:`~lucid.optim.Optimizer`)."""

    #: State entries kept in float32 whatever the parameter's dtype, as torch keeps them in
    #: its default dtype (ASGD's "eta" and "mu", NAdam's "mu_product").
    _float32_state: frozenset = frozenset()

    def _state_dtype(self, key, value: Tensor, param: Tensor):
        """The dtype state entry ``key`` keeps next to ``param``."""
        if not value.dtype.is_floating_point:
            return value.dtype
        return float32 if key in self._float32_state else param.dtype

    def state_shapes(self, param: Tensor, group: dict) -> dict:
        """The shape of each tensor ``param``'s state holds: by default, a fresh state's.

        An optimizer that creates state entries during ``update`` (SGD's momentum buffer)
        lists them too, so that loading and stepping can check them.

        Examples
        --------
        >>> import lucid
        >>> from lucid import nn, optim
        >>> p = nn.Parameter(lucid.zeros(2, 3))
        >>> adam = optim.Adam([p])
        >>> adam.state_shapes(p, adam.param_groups[0])
        {'exp_avg': (2, 3), 'exp_avg_sq': (2, 3)}
        """
        return {k: v.shape for k, v in self.init_state(param, group).items() if isinstance(v, Tensor)}

    def _check_state_fits(self, index: int, param: Tensor, state: dict, group: dict) -> None:
        """Raise if ``param``'s state no longer fits it (its data was replaced by another shape).

        The step checks it only when the parameter's shape differs from the one last checked,
        so a normal step allocates nothing here.
        """
        shapes = self.state_shapes(param, group)
        for key, value in state.items():
            if isinstance(value, Tensor) and key in shapes and value.shape != shapes[key]:
                raise RuntimeError(
                    f"the state of parameter {index} ({key!r} of shape {value.shape}) does not fit the "
                    f"parameter's shape {param.shape}; was its data replaced? Reset or reload its state"
                )
        self._state_shapes[id(param)] = param.shape

    def _state_of(self, param: Tensor, group: dict) -> dict:
        """``param``'s state, created on first use and converted to its device and dtype."""
        state = self.state.for_param(param)
        if state is None:
            state = self.state[param] = self.init_state(param, group)
            return state
        for key, value in state.items():
            if isinstance(value, Tensor) and not same_kind(value, param):  # else it fits: the usual case
                dtype = self._state_dtype(key, value, param)
                if value.device != param.device or value.dtype is not dtype:
                    state[key] = value.detach().to(param.device, dtype)
        return state
