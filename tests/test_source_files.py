"""Source files are read by the core (`_core.read_source_file`): the text a load hashes and builds
is exactly the file's bytes, and a file that is not UTF-8 is refused where Python's own decoder
would refuse it, at the same byte, with a typed SpecError that names the line and column."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxcc import _core
from jaxcc.errors import SpecError

# Bytes near UTF-8's edges: ASCII runs (the eight-byte skip), lead and continuation bytes,
# surrogates, overlong and out-of-range forms, all mixed.
_PIECES = st.one_of(
    st.binary(max_size=24),
    st.text(max_size=12).map(lambda t: t.encode("utf-8")),
    st.sampled_from(
        [
            b"\n",
            b"\xc0\xaf",
            b"\xe0\x80\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xf5",
            b"\xc2",
            b"\xe2\x82",
            b"\xf0\x9f\x98",
            b"\x80",
            b"\xbf",
            b"abcdefgh",
        ]
    ),  # fmt: skip
)


def _line_column(data: bytes, offset: int) -> tuple[int, int]:
    before = data[:offset]
    return before.count(b"\n") + 1, offset - (before.rfind(b"\n") + 1) + 1


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=12).map(b"".join))
def test_the_core_reads_utf8_exactly_as_pythons_decoder_judges_it(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("src") / "k.cc"
    path.write_bytes(data)
    try:
        expected = data.decode("utf-8")
    except UnicodeDecodeError as e:
        with pytest.raises(SpecError) as refused:
            _core.read_source_file(str(path))
        line, column = _line_column(data, e.start)
        message = str(refused.value)
        assert f"{path} is not valid UTF-8 (byte 0x{data[e.start]:02x} " in message
        assert f"at line {line}, column {column} starts no UTF-8 character" in message
        assert message.endswith("; save it as UTF-8")
    else:
        source = _core.read_source_file(str(path))
        assert source.label == str(path)
        assert source.text == expected


def test_a_path_with_a_nul_is_refused_not_read_up_to_the_nul(tmp_path):
    # open(2) stops at the NUL: "k.cc\0.bak" would read k.cc, a file the caller did not name.
    (tmp_path / "k.cc").write_text("int f();\n")
    with pytest.raises(SpecError, match="contains a NUL character"):
        _core.read_source_file(str(tmp_path / "k.cc") + "\0.bak")


def test_an_unreadable_path_is_a_spec_error_naming_it(tmp_path):
    for path in (tmp_path / "absent.cu", tmp_path):
        with pytest.raises(SpecError, match="pass the path of a readable source file"):
            _core.read_source_file(str(path))
