"""Small utilities shared across lucid."""
