"""The surfaces as clients see them: REST, MCP profiles, the console's routes."""
