"""Capture, edit, search and deduplication of memories."""
