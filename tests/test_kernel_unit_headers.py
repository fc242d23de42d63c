"""Kernel units parse <complex> only where the source may use it, never <sstream>, and the
iostreams only where the source names a stream (decisions 108, 129): every kind of source still
builds and runs, with the same check messages."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc

# Names no complex type but streams (std::hex, a Point with its operator<<): its kernel unit only
# declares std::complex and streams check messages through jaxcc's own buffer, manipulators
# included.
LEAN = """
#include "brainevent/common.h"
struct Point { int x, y; };
std::ostream& operator<<(std::ostream& os, const Point& p) { return os << "(" << p.x << "," << p.y << ")"; }
// @BE checked_copy
void checked_copy(const BE::Tensor x, BE::Tensor y) {
  JAXCC_CHECK(x.numel() < 4) << "too long: " << x.numel() << " hex " << std::hex << 255
                             << std::dec << " " << x.dtype() << " " << Point{1, 2} << std::endl;
  BE_DISPATCH_FLOATING(x.dtype(), T, {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<T>()[i] = x.data_ptr<const T>()[i];
  });
}
"""

# Computes with complex values without including <complex>, as before decision 108.
COMPLEX = """
#include "brainevent/common.h"
// @BE twice
void twice(const BE::Tensor x, BE::Tensor y) {
  BE_DISPATCH_COMPLEX(x.dtype(), T, {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<T>()[i] = x.data_ptr<const T>()[i] * T(2);
  });
}
// @BE copy_any
void copy_any(const BE::Tensor x, BE::Tensor y) {
  JAXCC_DISPATCH_ALL(x.dtype(), T, {  // a complex T is copied by value: it must be complete
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<T>()[i] = x.data_ptr<const T>()[i];
  });
}
"""


# Names no stream: its kernel unit parses no <ostream>, and the check message is jaxcc's own text
# of each value (jaxcc/detail/check_text.h), the same a stream gives.
STREAMLESS = """
#include "brainevent/common.h"
// @BE checked_sum
void checked_sum(const BE::Tensor x, BE::Tensor y) {
  const int8_t letter = 'q';
  const char* none = nullptr;
  JAXCC_CHECK(x.numel() < 4) << "n=" << x.numel() << " f=" << 0.1f << " d=" << 1e-7 << " big="
                             << 123456789.0 << " b=" << (x.numel() > 0) << " c=" << 'z'
                             << " i8=" << letter << " u=" << 42u << " s=" << std::string("str")
                             << " t=" << x.dtype() << " " << none << "dropped";
  BE_DISPATCH_FLOATING(x.dtype(), T, {
    for (int64_t i = 0; i < x.numel(); ++i) y.data_ptr<T>()[i] = x.data_ptr<const T>()[i] + 1;
  });
}
"""


@pytest.fixture(scope="module")
def streamless():
    return jaxcc.load_cpp_inline("unit_headers_streamless", STREAMLESS)


def test_a_source_naming_no_stream_gets_the_same_check_text(streamless):
    x = jnp.arange(3, dtype=jnp.float32)
    np.testing.assert_array_equal(streamless.checked_sum(x), x + 1)
    with pytest.raises(Exception) as failure:
        jax.block_until_ready(streamless.checked_sum(jnp.ones(5, jnp.float32)))
    message = str(failure.value)
    assert (
        ": x.numel() < 4: n=5 f=0.1 d=1e-07 big=1.23457e+08 b=1 c=z i8=q u=42 s=str t=float32 "
        in message
    ), message
    assert "dropped" not in message  # a null C string ends it, as a stream's badbit does


def test_streaming_a_type_without_jaxccs_text_asks_for_ostream(unique_name):
    source = """
#include <string>
struct Point { int x, y; };
template <class Out> Out& print(Out& out, const Point& p) { return out; }
void checked(const jaxcc::Tensor& x, jaxcc::Tensor& y) {
  JAXCC_CHECK(x.numel() > 0) << Point{1, 2};
}
"""
    with pytest.raises(jaxcc.errors.CompileError, match=r"Add `#include <ostream>` at the top"):
        jaxcc.load_cpp_inline(unique_name, source, ["checked"])


@pytest.fixture(scope="module")
def lean():
    return jaxcc.load_cpp_inline("unit_headers_lean", LEAN)


@pytest.fixture(scope="module")
def with_complex():
    return jaxcc.load_cpp_inline("unit_headers_complex", COMPLEX)


def test_lean_unit_runs_and_formats_check_messages_as_before(lean):
    x = jnp.arange(3, dtype=jnp.float32)
    np.testing.assert_array_equal(lean.checked_copy(x), x)
    with pytest.raises(
        Exception,
        match=r"CHECK failed at .*: x\.numel\(\) < 4: too long: 5 hex ff "
        r"float32 \(1,2\)",
    ):
        jax.block_until_ready(lean.checked_copy(jnp.ones(5, jnp.float32)))


def test_source_naming_complex_types_gets_complete_std_complex(with_complex):
    z = jnp.array([1 + 2j, -3 + 0.5j], jnp.complex64)
    np.testing.assert_allclose(with_complex.twice(z), 2 * np.asarray(z))
    np.testing.assert_array_equal(with_complex.copy_any(z), z)
    np.testing.assert_array_equal(with_complex.copy_any(jnp.arange(3.0)), np.arange(3.0))
