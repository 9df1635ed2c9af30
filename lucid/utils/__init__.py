"""Small utilities shared across lucid, and :mod:`lucid.utils.data` (datasets and the DataLoader)."""

from . import data  # noqa: F401 - lucid.utils.data, as torch.utils.data, after ``import lucid``
