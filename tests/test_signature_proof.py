"""The compiler proves every inferred signature (issue 37, point 4; decision 147): the load's
`-D`/`-U` flags reach jaxcc's reading of macro-stamped entry points, a by-value tensor whose
`const` hangs on a branch jaxcc cannot evaluate is refused, and any type the compiler sees
differently (a macro from a header, a typedef, an overload) is a SignatureError at the user's
line naming both types. Each regression test here failed on main at e9a7d1c."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcc
from jaxcc.errors import SignatureError

REAL_SOURCE = r"""
#include "brainevent/common.h"
#ifndef REAL
#define REAL float
#endif
#define FFI_FILL(SUFFIX) \
void fill##SUFFIX(const BE::Tensor& x, BE::Tensor& out, REAL alpha) { \
    for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<double>()[i] = alpha; }
// @BE fill_a
FFI_FILL(_a)
"""

INQ_SOURCE = r"""
#include "brainevent/common.h"
#ifndef INQ
#define INQ const
#endif
#define FFI_BUMP(SUFFIX) \
void bump##SUFFIX(INQ BE::Tensor x, BE::Tensor out) { \
    for (int64_t i = 0; i < x.numel(); ++i) { \
        x.data_ptr<float>()[i] += 1.0f; out.data_ptr<float>()[i] = 0.0f; } }
// @BE bump_a
FFI_BUMP(_a)
"""


@pytest.fixture
def x64():
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


def test_regression_real_defined_double_on_the_command_line(unique_name, x64):
    mod = jaxcc.load_cpp_inline(unique_name, REAL_SOURCE, extra_cflags=["-DREAL=double"])
    assert mod.specs["fill_a"].params[2].attr_type == "float64"
    out = mod.fill_a(jnp.zeros(2, jnp.float64), alpha=0.1)
    assert out[0].item() == 0.1  # was 0.10000000149011612: a float32 attribute into a double


def test_regression_inq_emptied_on_the_command_line_is_an_output(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, INQ_SOURCE, extra_cflags=["-DINQ="])
    # The compiled function writes `x`: jaxcc must call it a result, never an input.
    assert [p.kind for p in mod.specs["bump_a"].params] == ["ret", "ret"]


def test_regression_inq_on_an_unevaluable_branch_is_refused(unique_name):
    with pytest.raises(SignatureError) as info:
        jaxcc.load_cpp_inline(unique_name, INQ_SOURCE)
    message = str(info.value)
    assert ":10:8: error: parameter `x` of `bump_a` is a tensor taken by value" in message
    assert "depends on macro `INQ`" in message
    assert "#ifndef INQ" in message
    # Stating the roles, or the macro, is the fix.
    jaxcc.load_cpp_inline(unique_name + "_flag", INQ_SOURCE, extra_cflags=["-DINQ=const"])


def test_a_header_macro_the_compiler_sees_differently_is_a_signature_error(unique_name, tmp_path):
    header = tmp_path / "config.h"
    header.write_text("#define REAL double\n")
    with pytest.raises(SignatureError) as info:
        jaxcc.load_cpp_inline(unique_name, REAL_SOURCE, extra_cflags=["-include", str(header)])
    message = str(info.value)
    assert ":9:8:" in message  # the annotation's line, at the function's name
    # The caret underlines that name (it sat past the end of the annotation before).
    assert "\n    9 | // @BE fill_a\n      |        ^\n" in message, message
    assert "jaxcc reads `fill_a` as `(const jaxcc::Tensor&, jaxcc::Tensor&, float)`" in message
    assert (
        "the compiler declares it as `void (*)(const jaxcc::Tensor&, jaxcc::Tensor&, double)`"
        in (message)
    )


def test_a_typedef_that_disagrees_with_the_stated_type_is_a_signature_error(unique_name):
    source = r"""
#include "brainevent/common.h"
typedef double real_t;
// @BE scale arg ret attr.alpha:float32
void scale(const BE::Tensor& x, BE::Tensor& out, real_t alpha) {}
"""
    with pytest.raises(SignatureError) as info:
        jaxcc.load_cpp_inline(unique_name, source)
    assert (
        "the compiler declares it as `void (*)(const jaxcc::Tensor&, jaxcc::Tensor&, real_t)`"
        in (str(info.value))
    )
    assert "\n      |        ^\n" in str(info.value)  # under `scale`, not past the tokens


def test_an_overload_in_a_header_binds_the_function_jaxcc_read(unique_name, tmp_path):
    header = tmp_path / "more.h"
    header.write_text('#include "brainevent/common.h"\nvoid twice(BE::Tensor x, BE::Tensor out);\n')
    source = r"""
#include "more.h"
void twice(const BE::Tensor& x, BE::Tensor& out) {}
"""
    # jaxcc reads one `twice`; the compiler has two, and binds the one jaxcc read.
    mod = jaxcc.load_cpp_inline(
        unique_name, source, functions=["twice"], extra_include_paths=[str(tmp_path)]
    )
    assert [p.kind for p in mod.specs["twice"].params] == ["arg", "ret"]


def test_signatures_the_compiler_agrees_with_still_build(unique_name):
    source = r"""
#include "brainevent/common.h"
extern "C" void plain(const BE::Tensor x, BE::Tensor out, long long n, const double& d) noexcept {
    for (int64_t i = 0; i < out.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + float(n) + float(d);
}
"""
    mod = jaxcc.load_cpp_inline(unique_name, source, functions=["plain"])
    out = mod.plain(jnp.ones(3, jnp.float32), n=2, d=0.5)
    np.testing.assert_allclose(np.asarray(out), [3.5, 3.5, 3.5])
