"""MCP authorization on the REST origin: routes, consent page, the SDK provider, step-up."""
