"""Lucid's random numbers: seeded host generators for every device.

Drawing on the host and moving the result to the device makes ``manual_seed(s)`` give the
same numbers on NumPy and on MLX, so tests can compare the two backends run for run.
The numbers are NumPy's (PCG64), not torch's: the same seed gives the same draws in
lucid on every device, and other draws than torch's.
"""

from __future__ import annotations

import numbers
import secrets
from typing import Any

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

    _seed: int
    _rng: np.random.Generator

    def __init__(self, device: str = "cpu") -> None:
        from . import canonical_device

        self.device = canonical_device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> "Generator":
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

    def get_state(self) -> dict[str, Any]:
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

    def set_state(self, state: dict[str, Any]) -> "Generator":
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


def manual_seed(seed: int) -> Generator:
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


def truncated_normal(shape, dtype, backend, mean, std, low, high, generator=None):
    """Samples of N(mean, std**2) conditioned on ``[low, high]``, by rejection on the host."""
    rng = _rng(generator)
    count = int(np.prod(shape, dtype=np.int64))
    out = np.empty(count)
    filled = 0
    while filled < count:
        draw = rng.standard_normal(max(2 * (count - filled), 16)) * std + mean
        draw = draw[(draw >= low) & (draw <= high)][: count - filled]
        out[filled:filled + draw.shape[0]] = draw
        filled += draw.shape[0]
    return backend.asarray(out.reshape(tuple(shape)), dtype)


def orthogonal(rows, cols, dtype, backend, generator=None):
    """A ``rows`` x ``cols`` matrix with orthonormal rows or columns, as torch's ``orthogonal_``:
    the Q of the QR decomposition of a normal sample, its signs fixed by R's diagonal."""
    flat = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return backend.asarray(q, dtype)


def choice(weights, count, replacement, generator=None) -> list:
    """``count`` indices drawn with probabilities proportional to ``weights``, as Python ints."""
    p = np.asarray(weights, dtype=np.float64)
    return _rng(generator).choice(p.shape[0], size=count, replace=replacement, p=p / p.sum()).tolist()
