"""The CBR engine: game rules, log parsers, case store, retrieval, policies, play."""
