"""Feature extractors: decision point -> feature row. Pure functions, no I/O."""
