"""What crosses the tuning child's pipes (decision 232): JSON for the structure, raw bytes for
arrays, so that reading a message can never run code (pickle could, whatever wrote the pipe).

A message is one frame: its length, the number of buffers, the JSON text's length and the text,
then each buffer as its length and its bytes (lengths 8-byte little-endian). JSON objects are never
plain data here but one-key tags: {"d": {...}} a dict with string keys, {"t": [...]} a tuple,
{"a": [dtype, shape, buffer]} a NumPy array, {"g": [dtype, buffer]} a NumPy scalar, {"b": buffer}
bytes, {"p": text} a path. Arrays come back as NumPy arrays of a numeric or bool dtype (never
object dtype); anything else is refused with a TypeError when it is written (the variant is then
measured in the user's process, as one without a recipe)."""

from __future__ import annotations

import json
import os
import pathlib
import struct

_LENGTH = struct.Struct("<Q")
# Kinds of dtype an array may have on the wire: bool, integers, floats, complex; and the
# ml_dtypes JAX uses (bfloat16, float8s, int4...: NumPy's kind "V", registered once JAX is
# imported), by name.
_KINDS = "biufc"
_ML_DTYPES = {"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
              "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn",
              "int4", "uint4", "int2", "uint2"}  # fmt: skip


def _dtype_name(dtype) -> str:
    import numpy as np

    dtype = np.dtype(dtype)
    if dtype.kind not in _KINDS and dtype.name not in _ML_DTYPES:
        raise TypeError(f"an array of dtype {dtype} cannot cross to the tuning process")
    return dtype.name


def _encode(value, buffers: list):
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(v, buffers) for v in value]
    if isinstance(value, tuple):
        return {"t": [_encode(v, buffers) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise TypeError(
                "a dict with keys other than strings cannot cross to the tuning process"
            )
        return {"d": {k: _encode(v, buffers) for k, v in value.items()}}
    if isinstance(value, np.ndarray):
        name = _dtype_name(value.dtype)
        buffers.append(np.ascontiguousarray(value).tobytes())
        return {"a": [name, list(value.shape), len(buffers) - 1]}
    if isinstance(value, np.generic):
        name = _dtype_name(value.dtype)
        buffers.append(np.asarray(value).tobytes())
        return {"g": [name, len(buffers) - 1]}
    if isinstance(value, (bytes, bytearray)):
        buffers.append(bytes(value))
        return {"b": len(buffers) - 1}
    if isinstance(value, os.PathLike):
        return {"p": os.fspath(value)}
    raise TypeError(f"a {type(value).__name__} cannot cross to the tuning process")


def encode(message) -> bytes:
    """The frame of `message`; TypeError for a value the wire does not carry."""
    buffers: list[bytes] = []
    text = json.dumps(_encode(message, buffers), separators=(",", ":")).encode()
    parts = [_LENGTH.pack(len(text)), text]
    for buffer in buffers:
        parts += [_LENGTH.pack(len(buffer)), buffer]
    return _LENGTH.pack(len(buffers)) + b"".join(parts)


def _array(name: str, shape, data: bytes):
    import numpy as np

    dtype = np.dtype(name)
    if dtype.kind not in _KINDS and dtype.name not in _ML_DTYPES:
        raise ValueError(f"the tuning pipe carried an array of dtype {dtype}")
    return np.frombuffer(data, dtype=dtype).reshape(tuple(int(d) for d in shape)).copy()


def _decode(value, buffers: list[bytes]):
    if isinstance(value, list):
        return [_decode(v, buffers) for v in value]
    if not isinstance(value, dict):
        return value
    ((tag, body),) = value.items()
    if tag == "d":
        return {k: _decode(v, buffers) for k, v in body.items()}
    if tag == "t":
        return tuple(_decode(v, buffers) for v in body)
    if tag == "a":
        return _array(body[0], body[1], buffers[body[2]])
    if tag == "g":
        return _array(body[0], (), buffers[body[1]])[()]
    if tag == "b":
        return buffers[body]
    if tag == "p":
        return pathlib.Path(body)
    raise ValueError(f"the tuning pipe carried an unknown tag {tag!r}")


def write(fd: int, message) -> None:
    data = encode(message)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def decode(data: bytes):
    view = memoryview(data)
    (count,) = _LENGTH.unpack_from(view, 0)
    (size,) = _LENGTH.unpack_from(view, 8)
    at = 16 + size
    structure = json.loads(bytes(view[16:at]))
    buffers = []
    for _ in range(count):
        (size,) = _LENGTH.unpack_from(view, at)
        buffers.append(bytes(view[at + 8 : at + 8 + size]))
        at += 8 + size
    return _decode(structure, buffers)


def read(fd: int):
    """The next message; None at the end of the pipe."""
    header = _read_exactly(fd, _LENGTH.size)
    if header is None:
        return None
    data = _read_exactly(fd, _LENGTH.unpack(header)[0])
    if data is None:
        return None
    try:
        return decode(data)
    except (struct.error, KeyError, IndexError, TypeError, UnicodeDecodeError) as e:
        raise ValueError(f"the tuning pipe carried a malformed message ({e})") from None
