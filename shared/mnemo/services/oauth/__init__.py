"""MCP authorization: registration, codes, grants and tokens, discovery documents."""
