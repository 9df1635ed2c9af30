"""Per-parameter state: ``optimizer.state`` (by flat index or by Parameter), and keeping each
parameter's state fitting it (created on first use, converted to its device and dtype)."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping

from .._dtype import float32
from .._tensor import Tensor, same_kind
from ._groups import ParamGroups


class OptimizerState(MutableMapping):
    """Per-parameter state dicts, reachable by flat parameter index and by the Parameter.

    ``state[i]`` and ``state[p]`` name the same dict when ``p`` is the ``i``-th parameter
    over all groups in order (the numbering ``state_dict()`` uses). Iteration yields the
    indices of the parameters that have state; a parameter that has never stepped has none.

    It also keeps each parameter's state fitting it: created on first use (:meth:`of`),
    converted to its device and dtype (``float32_keys`` stay float32, as torch keeps them
    in its default dtype), and checked against its shape when that changes (:meth:`check_fits`).
    """

    def __init__(self, groups: ParamGroups, float32_keys: frozenset = frozenset()) -> None:
        self._groups, self.float32_keys = groups, float32_keys
        self.by_id: dict[int, dict] = {}  # the state dicts by id(param), read by the step plans
        self._ids: tuple = (None, set())  # (the flat parameter list, the ids in it), rebuilt when it changes
        self._fitted: dict[int, tuple[int, ...]] = {}  # by id(param): the shape its state was last checked at

    def _param(self, key) -> Tensor:
        params = self._groups.flat()
        if self._ids[0] is not params:
            self._ids = (params, {id(p) for p in params})
        if isinstance(key, Tensor) and id(key) in self._ids[1]:
            return key
        if isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(params):
            return params[key]
        raise KeyError("a Tensor that this optimizer does not optimise" if isinstance(key, Tensor) else key)

    def __getitem__(self, key) -> dict:
        state = self.by_id.get(id(self._param(key)))
        if state is None:
            which = f"parameter {key}" if isinstance(key, int) else "this parameter"
            raise KeyError(
                f"{which} has no state yet: it has not stepped (torch's defaultdict would return {{}} "
                "here; lucid keeps 'no state' visible)"
            )
        return state

    def __setitem__(self, key, value: dict) -> None:
        if not isinstance(value, dict):
            raise TypeError(f"a parameter's state must be a dict, got {type(value).__name__}")
        self.by_id[id(self._param(key))] = value

    def __delitem__(self, key) -> None:
        del self.by_id[id(self._param(key))]

    def __iter__(self):
        return (index for index, param in enumerate(self._groups.flat()) if id(param) in self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)

    def for_param(self, param) -> dict | None:
        """The state of ``param``, or None if it has none (no KeyError, no creation)."""
        return self.by_id.get(id(param))

    def discard(self, param) -> None:
        """Forget ``param``'s state, if it has any."""
        self.by_id.pop(id(param), None)

    def replace(self, by_param: dict[int, dict]) -> None:
        """Hold ``by_param`` (state dicts by parameter id, checked already) instead."""
        self.by_id, self._fitted = by_param, {}

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{i}: {self[i]!r}" for i in self) + "}"

    def dtype_for(self, key: str, value: Tensor, param: Tensor):
        """The dtype state entry ``key`` keeps next to ``param``: a floating parameter's (an int
        or bool entry too, as torch casts it), float32 for ``float32_keys``; next to a
        non-floating parameter, its own."""
        if not param.dtype.is_floating_point:
            return value.dtype
        return float32 if key in self.float32_keys else param.dtype

    def fits(self, param: Tensor) -> bool:
        """Whether ``param``'s state was checked at its shape (:meth:`check_fits`): no need again."""
        return self._fitted.get(id(param)) == param.shape

    def check_fits(self, index: int, param: Tensor, shapes: dict) -> None:
        """Raise if ``param``'s state no longer fits ``shapes`` (its data was replaced by another shape)."""
        for key, value in self.by_id.get(id(param), {}).items():
            if isinstance(value, Tensor) and key in shapes and value.shape != shapes[key]:
                raise RuntimeError(
                    f"the state of parameter {index} ({key!r} of shape {value.shape}) does not fit the "
                    f"parameter's shape {param.shape}; was its data replaced? Reset or reload its state"
                )
        self._fitted[id(param)] = param.shape

    def of(self, param: Tensor, group: dict, init_state: Callable[[Tensor, dict], dict]) -> dict:
        """``param``'s state: ``init_state(param, group)`` on first use, else converted to its
        device and dtype."""
        state = self.by_id.get(id(param))
        if state is None:  # a fresh state, which fits already
            return self.by_id.setdefault(id(param), init_state(param, group))
        for key, value in state.items():
            if isinstance(value, Tensor) and not same_kind(value, param):  # else it fits: the usual case
                dtype = self.dtype_for(key, value, param)
                if value.device != param.device or value.dtype is not dtype:
                    state[key] = value.detach().to(param.device, dtype)
        return state


