"""The one seam between lucid and its array libraries.

Everything that knows NumPy from MLX lives in this package. The rest of lucid asks
:func:`get` for the :class:`~lucid._backend.base.Backend` of a device and calls its methods.

========  ============  =====================================================
device    library       where it runs
========  ============  =====================================================
``cpu``   NumPy         the host CPU
``gpu``   MLX           the Apple GPU where there is one, MLX's CPU device
                        elsewhere (so the same backend is tested on Linux)
========  ============  =====================================================
"""

from __future__ import annotations

from .base import Backend
from .numpy_backend import NumpyBackend

DEVICES = ("cpu", "gpu")
_loaded: dict[str, Backend] = {}


def canonical_device(device) -> str:
    """Normalise a device argument ("cpu", "gpu", "mlx", "metal") to "cpu" or "gpu"."""
    name = getattr(device, "type", device)
    if isinstance(name, str):
        name = name.lower()
        if name in ("mlx", "metal", "mps"):
            name = "gpu"
        if name in DEVICES:
            return name
    raise ValueError(f"unknown device {device!r}; expected 'cpu' or 'gpu'")


def get(device) -> Backend:
    """The backend that serves ``device``, loaded on first use."""
    device = canonical_device(device)
    backend = _loaded.get(device)
    if backend is None:
        cls: type[Backend]
        if device == "cpu":
            cls = NumpyBackend
        else:
            # here, not at the top: MLX is optional and slow to import, and only "gpu" needs it
            from .mlx_backend import MlxBackend as cls
        backend = _loaded[device] = cls()
    return backend


def of_array(array) -> Backend:
    """The backend whose native array type ``array`` is."""
    for backend in list(_loaded.values()):
        if backend.owns(array):
            return backend
    if type(array).__module__.startswith("mlx"):
        return get("gpu")
    return get("cpu")


Backend.of_array = staticmethod(of_array)


def is_available(device) -> bool:
    """Whether ``device`` can be used here (``"gpu"`` needs MLX installed)."""
    try:
        get(device)
    except RuntimeError:
        return False
    return True
