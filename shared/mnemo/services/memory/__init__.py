"""Memories: capture, read, search, edit and archive, with duplicates, idempotency and the r3 hot set."""
