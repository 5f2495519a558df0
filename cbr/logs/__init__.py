"""Hand-history logs: one HandRecord model, a parser plugin per format, replay."""
from cbr.logs.record import Action, HandRecord, ParseIssue, ParseResult

__all__ = ["Action", "HandRecord", "ParseIssue", "ParseResult"]
