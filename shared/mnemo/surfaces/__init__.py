"""Surfaces: the MCP tool profiles and the REST API, mapped onto the services."""
