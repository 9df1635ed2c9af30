"""``lucid.Generator``: a seeded stream of random numbers, and its state as a tensor.

The stream itself is the host's (:class:`lucid._backend.random.HostGenerator`, shared by
every device); this class adds torch's state I/O, ``get_state`` and ``set_state``, whose
state is a tensor, and makes the default generator that ``lucid.manual_seed`` seeds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _dtype
from ._backend import random as _random
from ._tensor import Tensor

if TYPE_CHECKING:
    from ._backend.host import ndarray

__all__ = ["Generator", "default_generator"]


class Generator(_random.HostGenerator):
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
    ``get_state`` gives the state as a tensor, as torch's does, but of 8 int64 words rather
    than torch's uint8 bytes (lucid has no uint8 dtype): the seed, NumPy's PCG64 state and
    the draw it holds back; ``set_state`` takes such a tensor. It saves with
    :func:`lucid.save` like any other tensor.

    Examples
    --------
    >>> import lucid
    >>> g = lucid.Generator().manual_seed(42)
    >>> a = lucid.randn(3, generator=g)
    >>> _ = g.manual_seed(42)
    >>> bool((lucid.randn(3, generator=g) == a).all()), g.initial_seed()
    (True, 42)
    """

    def get_state(self) -> Tensor:
        """The generator's whole state, as a new int64 tensor to give back to :meth:`set_state`.

        Returns
        -------
        Tensor
            8 int64 words on the cpu: the initial seed and NumPy's PCG64 state (torch gives
            a uint8 tensor; see the class Notes). Drawing does not change it.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.Generator().manual_seed(3)
        >>> state = g.get_state()
        >>> a = lucid.rand(2, generator=g)
        >>> _ = g.set_state(state)
        >>> bool((lucid.rand(2, generator=g) == a).all()), state.dtype, state.shape
        (True, lucid.int64, (8,))
        """
        return Tensor(self._state_words(), dtype=_dtype.int64)

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state that :meth:`get_state` gave (of this generator or another); returns the generator.

        The next draws are the ones that followed the state, on every device, and
        :meth:`initial_seed` is the seed it came from.

        Parameters
        ----------
        new_state : Tensor
            The 8 int64 words of :meth:`get_state` (or :func:`lucid.get_rng_state`), on
            any device, e.g. as :func:`lucid.load` gave them back.

        Raises
        ------
        TypeError
            If ``new_state`` is not a Tensor, or not of dtype int64.
        RuntimeError
            If it does not hold 8 words, or they are not a lucid state. The generator is
            unchanged then.

        Examples
        --------
        >>> import lucid
        >>> g = lucid.Generator()
        >>> other = lucid.Generator().manual_seed(5)
        >>> g.set_state(other.get_state()) is g, g.initial_seed()
        (True, 5)
        """
        return self._restore_words(state_words(new_state, "Generator.set_state"), "Generator.set_state")


def state_words(new_state, caller: str) -> ndarray:
    """The host words of a state tensor, or a TypeError naming ``caller`` and ``new_state``
    (the words themselves are checked where they are read, before anything changes)."""
    expected = "the int64 tensor that get_state() or get_rng_state() returns"
    if not isinstance(new_state, Tensor):
        raise TypeError(f"{caller}: new_state must be {expected}, got {type(new_state).__name__}")
    if new_state.dtype is not _dtype.int64:
        raise TypeError(f"{caller}: new_state must be {expected}, got a tensor of dtype {new_state.dtype}")
    return new_state.detach().numpy().reshape(-1)


default_generator = Generator()
_random.use_default(default_generator)


def set_default_state(new_state: Tensor) -> None:
    """:func:`lucid.set_rng_state`'s work: the default generator takes ``new_state``."""
    default_generator._restore_words(state_words(new_state, "set_rng_state"), "set_rng_state")
