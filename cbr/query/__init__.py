"""Answering from a case base: a situation -> a probability triple with its explanation,
and how well a case base predicts held-out decisions.

- :mod:`cbr.query.answer`: ``cbr query`` (features -> retrieval -> triple + explanation).
- :mod:`cbr.query.evaluate`: ``cbr evaluate`` (hold-out accuracy and log-loss).
- :mod:`cbr.query.tune`: ``cbr tune`` (similarity weights learned on held-out decisions).
"""

#: Most cases an answer lists (``cbr query --top``, the HTTP API's ``top``): more is a usage error.
MAX_TOP = 100_000
