"""Pure domain: models, validation, scoring, edit parsing. No I/O, no vendor imports."""
