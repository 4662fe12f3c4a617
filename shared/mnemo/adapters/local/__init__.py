"""The embedded default's models and indexes: heuristic extraction, MiniLM, in-process indexes."""
