"""Differentiable ops: each computes its output through the backend and records its backward."""
