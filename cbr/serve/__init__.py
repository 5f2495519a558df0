"""``cbr serve``: the engine over HTTP (needs the ``serve`` extra: FastAPI and uvicorn).

- :mod:`cbr.serve.engine`: the loaded case bases and the work of each endpoint, over the
  library (no HTTP, no FastAPI: the benchmark and the tests call it directly too);
- :mod:`cbr.serve.schemas`: the request bodies (pydantic);
- :mod:`cbr.serve.app`: the FastAPI app built from a :class:`~cbr.serve.app.ServeConfig`,
  its limits (body size, time limit) and how errors become HTTP statuses.

Importing this package imports none of them (FastAPI is optional).
"""
