"""Enrichment worker Lambda: SQS batch in, partial batch failures out."""

from mnemo.bootstrap import container
from mnemo.surfaces.worker import worker_handler

handler = worker_handler(container)
