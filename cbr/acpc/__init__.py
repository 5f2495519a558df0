"""The ACPC dealer protocol 2.0.0: ``MATCHSTATE`` lines, parsed and written
(:mod:`cbr.acpc.matchstate`), the rest of the protocol (handshake, answers, comments, the
line channel; :mod:`cbr.acpc.protocol`), a dealer (:mod:`cbr.acpc.dealer`) and a client
(:mod:`cbr.acpc.client`)."""
