"""The ACPC dealer protocol 2.0.0: message text (:mod:`cbr.acpc.protocol`), a dealer
(:mod:`cbr.acpc.dealer`) and a client (:mod:`cbr.acpc.client`)."""
