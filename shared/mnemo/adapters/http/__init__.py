"""Outbound HTTP adapters: mem0's API and OAuth client metadata documents."""
