"""``lucid.random``: the default generator's seed and state, under torch.random's names.

The same functions as ``lucid.manual_seed``, ``lucid.seed``, ``lucid.initial_seed``,
``lucid.get_rng_state`` and ``lucid.set_rng_state``, where torch also has them.

Examples
--------
>>> import lucid
>>> state = lucid.random.get_rng_state()
>>> a = lucid.rand(2)
>>> lucid.random.set_rng_state(state)
>>> bool((lucid.rand(2) == a).all())
True
"""

from ._factory import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["get_rng_state", "set_rng_state", "manual_seed", "seed", "initial_seed"]
