"""Tenants, users, keys and permissions: isolation on every surface."""
