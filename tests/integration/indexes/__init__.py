"""The search and fact index ports, OpenSearch bodies through the emulator."""
