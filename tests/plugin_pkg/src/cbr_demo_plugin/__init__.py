"""Example third-party plugins for cbr-holdem (a test fixture)."""
