"""The console script ``cbr``: the command line lives in :mod:`cbr.cli`."""
from cbr.cli import app, main

__all__ = ["app", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
