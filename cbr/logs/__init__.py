"""Hand-history logs: one HandRecord model, a parser plugin per format, replay. The formats a
match log is written in (acpc, phh) are written by the module that reads them; the writers'
shared plumbing and the output-path rule are in :mod:`cbr.logs.output`."""
from cbr.logs.record import Action, HandRecord, ParseIssue, ParseResult

__all__ = ["Action", "HandRecord", "ParseIssue", "ParseResult"]
