"""Adapters: vendor code behind the ports. Vendor shapes and errors never leave this package."""
