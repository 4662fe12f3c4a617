"""Keys, permissions and metering of a tenant."""
