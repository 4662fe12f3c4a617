"""MCP authorization: the flow, the discovery documents, the server and its store."""
