"""The console script ``cbr``: the command line lives in :mod:`cbr.cli`."""
from cbr.cli import app

__all__ = ["app"]

if __name__ == "__main__":  # pragma: no cover
    app()
