"""Enrichment: the worker's stages over an SQS batch, recovery and status."""
