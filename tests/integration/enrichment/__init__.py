"""The enrichment worker: stages, calls, pollers, intents."""
