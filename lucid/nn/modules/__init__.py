"""The layers of :mod:`lucid.nn`, one family per file."""

from .activation import ReLU, Sigmoid, Tanh
from .container import Sequential
from .linear import Linear
from .sparse import Embedding

__all__ = ["Linear", "Sequential", "ReLU", "Tanh", "Sigmoid", "Embedding"]
