"""Import and export of memories and facts."""
