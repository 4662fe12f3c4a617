"""The Lambda functions: handlers, the built packages, init, SnapStart, the CLI, lazy wiring."""
