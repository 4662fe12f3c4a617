"""Long operations as jobs on the worker queue: one runner, registered steps."""
