"""The tuning child's wire format (decision 232): what the user's process and the tuning child
send each other crosses as JSON and raw array bytes; reading a frame builds only plain data and
NumPy arrays of numeric dtypes, whatever the bytes say, and a value the wire does not carry is a
TypeError when written (the variant is then measured in the user's process). No builds."""

import json
import os
import pathlib
import struct

import jax  # noqa: F401  # registers bfloat16 with NumPy, as in the tuning child
import ml_dtypes
import numpy as np
import pytest

from jaxcc.tune import wire


def _frame(structure, buffers=()) -> bytes:
    """A frame as encode() lays it out, for hand-made (hostile) contents."""
    text = json.dumps(structure).encode()
    out = struct.pack("<Q", len(buffers)) + struct.pack("<Q", len(text)) + text
    for b in buffers:
        out += struct.pack("<Q", len(b)) + b
    return out


def test_a_job_crosses_the_pipe_unchanged():
    job = {
        "qualname": "m.f", "order": ["A", "B"], "outs": (True, [((8, 4), "float32")]),
        "inputs": [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([True, False]),
                   np.arange(-3, 3, dtype=np.int8), np.ones(2, ml_dtypes.bfloat16),
                   np.array([1 + 2j], np.complex64), np.zeros((0, 3), np.float64)],
        "attributes": {"factor": np.float32(2.5), "n": 3, "flag": True},
        "budget_s": None, "bound_s": 60.0, "nan": float("nan"),
        "recipes": {"A": (("request", "here", {"build_directory": pathlib.Path("/tmp/b"),
                                               "sources": [("inline", "x.cc", "int f();")]},
                           "m@tune-A"), "f")},
        "blob": b"\x00\xff",
    }  # fmt: skip
    read, write = os.pipe()
    try:
        wire.write(write, job)
        got = wire.read(read)
    finally:
        os.close(read)
        os.close(write)
    for want, have in zip(job["inputs"], got["inputs"], strict=True):
        assert have.dtype == want.dtype and have.shape == want.shape
        np.testing.assert_array_equal(have, want)
    assert type(got["attributes"]["factor"]) is np.float32 and got["attributes"]["n"] == 3
    assert got["outs"] == (True, [((8, 4), "float32")])  # tuples stay tuples
    assert got["recipes"]["A"][0][2]["build_directory"] == pathlib.Path("/tmp/b")
    assert got["blob"] == b"\x00\xff" and got["budget_s"] is None and np.isnan(got["nan"])
    assert got["order"] == ["A", "B"] and got["qualname"] == "m.f"


@pytest.mark.parametrize(
    "value",
    [np.array([object()]), {1: "a"}, {"x": {2, 3}}, object(), np.array([(1, 2.0)], "i4,f4")],
    ids=["object-array", "int-key", "set", "object", "structured"],
)
def test_what_the_wire_does_not_carry_is_refused_when_written(value):
    with pytest.raises(TypeError, match="cannot cross to the tuning process"):
        wire.encode({"v": value})


@pytest.mark.parametrize(
    "structure, buffers, problem",
    [
        ({"a": ["object", [1], 0]}, [b"\x00" * 8], "dtype object"),
        ({"a": ["V8", [1], 0]}, [b"\x00" * 8], "dtype"),
        ({"z": 1}, [], "unknown tag"),
        ({"a": ["float32", [4], 0]}, [], "malformed"),  # a buffer that is not there
    ],
    ids=["object-dtype", "void-dtype", "unknown-tag", "missing-buffer"],
)
def test_a_hostile_frame_is_an_error_not_code(structure, buffers, problem):
    read, write = os.pipe()
    try:
        data = _frame(structure, buffers)
        os.write(write, struct.pack("<Q", len(data)) + data)
        with pytest.raises(ValueError, match=problem):
            wire.read(read)
    finally:
        os.close(read)
        os.close(write)


def test_the_end_of_the_pipe_is_none():
    read, write = os.pipe()
    os.close(write)
    try:
        assert wire.read(read) is None
    finally:
        os.close(read)
