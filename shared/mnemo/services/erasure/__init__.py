"""Permanent erasure: one memory, one user, and the fence against writes in flight."""
