"""The fact graph: record, search, keep timelines, walk."""
