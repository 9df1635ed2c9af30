"""Lucid's random numbers: seeded host generators for every device.

Drawing on the host and moving the result to the device makes ``manual_seed(s)`` give the
same numbers on NumPy and on MLX, so tests can compare the two backends run for run.
The numbers are NumPy's (PCG64), not torch's: the same seed gives the same draws in
lucid on every device, and other draws than torch's.
"""

from __future__ import annotations

import numbers
import secrets

import numpy as np

DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val: a fresh Generator's initial_seed()


class Generator:
    """A source of random numbers with its own seed and state, as ``torch.Generator``.

    Every random function takes ``generator=`` (``lucid.randn``, ``lucid.randperm``,
    ``Tensor.uniform_``, ``lucid.nn.init``, ``DataLoader(shuffle=True)``, ...); without one
    they draw from the default generator that :func:`lucid.manual_seed` seeds.

    Parameters
    ----------
    device : {"cpu", "gpu"}, default "cpu"
        Accepted for torch's signature: lucid draws on the host for every device.

    Notes
    -----
    ``get_state`` gives the state as a plain dict (NumPy's PCG64 state) rather than a byte
    tensor; ``set_state`` takes what ``get_state`` gave.

    Examples
    --------
    >>> import lucid
    >>> g = lucid.Generator().manual_seed(42)
    >>> a = lucid.randn(3, generator=g)
    >>> _ = g.manual_seed(42)
    >>> bool((lucid.randn(3, generator=g) == a).all()), g.initial_seed()
    (True, 42)
    """

    def __init__(self, device="cpu"):
        from . import canonical_device

        self.device = canonical_device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed) -> "Generator":
        """Reset the state from ``seed`` (an int); returns the generator, as torch's.

        Examples
        --------
        >>> import lucid
        >>> lucid.Generator().manual_seed(3).initial_seed()
        3
        """
        if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
            raise TypeError(f"manual_seed expected an int as the seed, got {type(seed).__name__}")
        seed = int(seed)
        # torch takes any 64-bit seed (negative ones as their unsigned value)
        self._seed = seed % 2**64
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seed from fresh system entropy and return the seed.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.Generator()
        >>> g.seed() == g.initial_seed()
        True
        """
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        """The seed the current stream started from.

        Examples
        --------
        >>> import lucid
        >>> lucid.Generator().initial_seed()
        67280421310721
        """
        return self._seed

    def get_state(self) -> dict:
        """The state, to give back to :meth:`set_state` (a plain dict).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.Generator()
        >>> state = g.get_state()
        >>> a = lucid.rand(2, generator=g)
        >>> _ = g.set_state(state)
        >>> bool((lucid.rand(2, generator=g) == a).all())
        True
        """
        return {"seed": self._seed, "bit_generator": self._rng.bit_generator.state}

    def set_state(self, state) -> "Generator":
        """Restore a state :meth:`get_state` gave.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.Generator()
        >>> g.set_state(g.get_state()) is g
        True
        """
        if not isinstance(state, dict) or "bit_generator" not in state:
            raise TypeError("set_state expects the dict that Generator.get_state() returned")
        self._seed = state["seed"]
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["bit_generator"]
        return self

    def __repr__(self) -> str:
        return f"<lucid.Generator object at {hex(id(self))}>"


default_generator = Generator()


def manual_seed(seed) -> Generator:
    return default_generator.manual_seed(seed)


def _rng(generator):
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a lucid.Generator, got {type(generator).__name__}")
    return generator._rng


def normal(shape, dtype, backend, mean=0.0, std=1.0, generator=None):
    host = _rng(generator).standard_normal(tuple(shape)) * std + mean
    return backend.asarray(host, dtype)


def uniform(shape, dtype, backend, low=0.0, high=1.0, generator=None):
    host = _rng(generator).random(tuple(shape)) * (high - low) + low
    return backend.asarray(host, dtype)


def integers(low, high, shape, dtype, backend, generator=None):
    """Integers drawn uniformly from ``[low, high)``."""
    return backend.asarray(_rng(generator).integers(low, high, size=tuple(shape)), dtype)


def permutation(n, dtype, backend, generator=None):
    """A random permutation of ``0 .. n-1``."""
    return backend.asarray(_rng(generator).permutation(n), dtype)


def python_permutation(n, generator=None) -> list:
    """A random permutation of ``range(n)`` as Python ints (what samplers iterate over)."""
    return _rng(generator).permutation(n).tolist()
