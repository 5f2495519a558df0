"""The file format of trained models (the action predictor, the thesis network): a magic
line naming the kind, a JSON header (input schema, settings, training report), then the
pickled scikit-learn model. The header is read and checked before anything is unpickled,
so a file of another kind or schema is refused without running its pickle; only load
files you trust.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "m.bin"
>>> _ = write_model_file(path, b"CBR-DEMO\\n", {"schema_version": 1}, [1, 2], what="demo")
>>> read_model_header(path, b"CBR-DEMO\\n", what="demo", made_by="cbr demo", error=ValueError)
{'schema_version': 1}
>>> read_model_object(path, b"CBR-DEMO\\n", what="demo", error=ValueError)
[1, 2]
"""
from __future__ import annotations

import io
import json
import pickle
from pathlib import Path
from typing import Any, Callable

__all__ = ["write_model_file", "read_model_header", "read_model_object"]


def json_default(o: Any) -> Any:
    """What :func:`json.dumps` writes for what JSON has no type for: numpy arrays and scalars as
    lists and numbers, objects with attributes as their dict, anything else as its text.

    >>> import json, numpy as np
    >>> json.dumps({"a": np.float32(0.5), "b": np.arange(2)}, default=json_default)
    '{"a": 0.5, "b": [0, 1]}'
    """
    if hasattr(o, "tolist"):
        return o.tolist()
    if hasattr(o, "__dict__"):
        return vars(o)
    return str(o)


def write_model_file(path: str | Path, magic: bytes, header: dict[str, Any], model: Any, *, what: str,
                     overwrite: bool = False, default: Callable[[Any], Any] = str) -> Path:
    """Write magic, header and pickled ``model`` atomically (temp file + rename); an
    existing file only with ``overwrite`` (:func:`~cbr.logs.output.check_output_path`)."""
    from cbr.logs.output import check_output_path
    from cbr.store.durable import atomic_write_bytes

    path = Path(path)
    check_output_path(path, overwrite=overwrite, what=what)
    buf = io.BytesIO()
    buf.write(magic)
    buf.write(json.dumps(header, default=default).encode() + b"\n")
    pickle.dump(model, buf, protocol=pickle.HIGHEST_PROTOCOL)
    atomic_write_bytes(path, buf.getvalue())
    return path


def read_model_header(path: str | Path, magic: bytes, *, what: str, made_by: str,
                      error: type[Exception]) -> dict[str, Any]:
    """The JSON header of a model file; ``error`` (one line) for an unreadable file, a file
    of another kind or a damaged header. The caller checks the schema."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            head = f.read(len(magic))
            line = f.readline(1 << 20)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if head != magic:
        raise error(f"{path} is not {what} file (saved by `{made_by}`)")
    try:
        header = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise error(f"{path}: damaged {what} header") from None
    if not isinstance(header, dict):
        raise error(f"{path}: damaged {what} header")
    return header


def read_model_object(path: str | Path, magic: bytes, *, what: str, error: type[Exception]) -> Any:
    """The pickled model after the header (call :func:`read_model_header` first)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    start = data.index(b"\n", len(magic)) + 1
    try:
        return pickle.loads(data[start:])
    except Exception:  # a truncated or damaged pickle: any error, one message (no class name: it says nothing)
        raise error(f"{path}: damaged {what}: the model after its header cannot be read "
                    f"(a file cut short or overwritten)") from None
