"""Neural-network building blocks: Parameter, Module and layers."""

from .parameter import Parameter
