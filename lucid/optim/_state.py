"""``optimizer.state``: the live per-parameter state, by flat index or by Parameter."""

from __future__ import annotations

from collections.abc import MutableMapping

from .._tensor import Tensor


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
