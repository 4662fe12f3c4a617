"""Import, export and the jobs that run them."""
