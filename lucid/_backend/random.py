"""Lucid's random numbers: seeded host generators for every device.

Drawing on the host and moving the result to the device makes ``manual_seed(s)`` give the
same numbers on NumPy and on MLX, so tests can compare the two backends run for run.
The numbers are NumPy's (PCG64), not torch's: the same seed gives the same draws in
lucid on every device, and other draws than torch's.
"""

from __future__ import annotations

import numbers
import secrets
from typing import TYPE_CHECKING

import numpy as np

from . import canonical_device

if TYPE_CHECKING:
    from typing_extensions import Self

DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val: a fresh Generator's initial_seed()

# A state as host words (lucid.Generator.get_state makes them a tensor; lucid has no uint8
# dtype): STATE_WORDS int64 words, each the two's complement of an unsigned 64-bit word: the
# tag, the initial seed, PCG64's 128-bit state and 128-bit increment (low word first), and
# NumPy's buffered 32-bit draw (a flag, then the value). int64 tensors round-trip exactly
# through lucid.save.
STATE_TAG = 0x6C75636964504347  # the bytes "lucidPCG": lucid's PCG64 state, this layout
STATE_WORDS = 8
_WORD = 2**64 - 1


class HostGenerator:
    """The seeded host stream behind :class:`lucid.Generator`: NumPy's PCG64, its seed, and
    its state as :data:`STATE_WORDS` host words (``lucid.Generator`` makes them a tensor).

    Drawing on the host and moving the result to the device gives every device the same
    numbers for the same seed.
    """

    _seed: int
    _rng: np.random.Generator

    def __init__(self, device: str = "cpu") -> None:
        self.device = canonical_device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Self:
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
        """Seed from fresh system entropy and return the seed (a 64-bit number, as torch's).

        Examples
        --------
        >>> import lucid
        >>> g = lucid.Generator()
        >>> g.seed() == g.initial_seed()
        True
        """
        self.manual_seed(secrets.randbits(64))
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

    def _state_words(self) -> np.ndarray:
        """The whole state as :data:`STATE_WORDS` int64 words (see :data:`STATE_TAG`)."""
        bits = self._rng.bit_generator.state
        state, inc = bits["state"]["state"], bits["state"]["inc"]
        words = [STATE_TAG, self._seed, state & _WORD, state >> 64, inc & _WORD, inc >> 64,
                 bits["has_uint32"], bits["uinteger"]]
        return np.array(words, dtype=np.uint64).view(np.int64)

    def _restore_words(self, words: np.ndarray, caller: str) -> Self:
        """Take back the state of :meth:`_state_words`; everything is checked first, and a
        RuntimeError (naming ``caller`` and ``new_state``) leaves the generator as it was."""
        self._seed, self._rng = _from_words(words, caller)
        return self

    def __repr__(self) -> str:
        return f"<lucid.Generator object at {hex(id(self))}>"


# the stream of every draw without generator=: lucid.Generator's default instance, once
# lucid/_generator.py has made it (use_default)
default_generator = HostGenerator()


def use_default(generator: HostGenerator) -> None:
    """Make ``generator`` the default stream (lucid's default :class:`lucid.Generator`)."""
    global default_generator
    default_generator = generator


def _from_words(words: np.ndarray, caller: str):
    """The seed and the NumPy generator that :meth:`HostGenerator._state_words` words hold."""
    if words.size != STATE_WORDS:
        raise RuntimeError(f"{caller}: new_state must hold the {STATE_WORDS} words of a lucid random state, "
                           f"got {words.size}")
    tag, seed, state_low, state_high, inc_low, inc_high, has_uint32, uinteger = (
        int(w) for w in np.asarray(words, dtype=np.int64).reshape(-1).view(np.uint64))
    problem = ("its first word is not lucid's tag" if tag != STATE_TAG
               else "PCG64's increment must be odd" if not inc_low & 1
               else "the flag of the held-back draw must be 0 or 1" if has_uint32 not in (0, 1)
               else "the held-back draw must fit in 32 bits" if uinteger > 0xFFFFFFFF
               else None)
    if problem is not None:
        raise RuntimeError(f"{caller}: new_state is not a lucid random state ({problem})")
    rng = np.random.Generator(np.random.PCG64(0))
    rng.bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": state_high << 64 | state_low, "inc": inc_high << 64 | inc_low},
                               "has_uint32": has_uint32, "uinteger": uinteger}
    return seed, rng


def _rng(generator):
    if generator is None:
        return default_generator._rng
    if not isinstance(generator, HostGenerator):
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


def multinomial(probs, count, replacement, generator=None) -> np.ndarray:
    """``count`` category indices per row of the host array ``probs`` (rows of non-negative
    weights, each with a positive sum: the caller checks), as int64.

    With replacement each draw inverts the row's cumulative distribution at a uniform number
    (a zero weight is never drawn); without, the row is ordered by ``weight / E`` with ``E``
    exponential, torch's method (the Gumbel-top-k trick), and the first ``count`` taken.
    """
    rng = _rng(generator)
    p = np.asarray(probs, dtype=np.float64)
    if replacement:
        cdf = np.cumsum(p, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((p.shape[0], count))
        drawn = np.stack([np.searchsorted(row, draws, side="right") for row, draws in zip(cdf, u)])
        return np.minimum(drawn, p.shape[1] - 1).astype(np.int64)
    keys = p / rng.standard_exponential(p.shape)
    return np.argsort(-keys, axis=1, kind="stable")[:, :count].astype(np.int64)


def bernoulli(probs, shape, generator=None) -> np.ndarray:
    """An array of ``shape``: 1.0 where a uniform draw falls below ``probs`` (a number or a
    host array in [0, 1] that broadcasts to ``shape``), else 0.0."""
    return (_rng(generator).random(tuple(shape)) < np.asarray(probs, dtype=np.float64)).astype(np.float64)


def exponential(shape, dtype, backend, rate=1.0, generator=None):
    """Samples of the exponential distribution of ``rate`` (mean ``1 / rate``)."""
    return backend.asarray(_rng(generator).standard_exponential(tuple(shape)) / rate, dtype)
