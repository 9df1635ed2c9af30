"""The functions of :mod:`lucid.nn.functional`, one family per file (import them from there)."""
