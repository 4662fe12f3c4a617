"""The fact graph: negation, timelines, traversal, r3's graph import, REST facts."""
