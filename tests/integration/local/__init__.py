"""The embedded local stack and its moto patches."""
