"""Optimizers with torch.optim's semantics."""
