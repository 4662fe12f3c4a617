"""Erasure: of a memory and of a user, races and properties."""
