"""The annotation form of autotuning (issue 40, decision 159a): `// @jaxcc fn tune="..."` (or
after `// @BE fn tokens`) declares what `tune={"fn": {...}}` on the loader does; the signature
stage reads and checks it, so a malformed one is a SpecError with a caret before any build."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_autotune import REPEAT_SOURCE, TILED_CUDA

import jaxcc
from jaxcc.build import load_request, loaded_table
from jaxcc.tune.choose import TunedFunction

X = jnp.arange(1024, dtype=jnp.float32)
JAXCC_FORM = REPEAT_SOURCE.replace("// @BE bump arg ret", '// @jaxcc bump tune="REPEAT=3000,1"')
BE_FORM = REPEAT_SOURCE.replace(
    "// @BE bump arg ret", '// @BE bump arg ret tune="REPEAT = 3000, 1;"'
)


@pytest.mark.parametrize("source", [JAXCC_FORM, BE_FORM], ids=["jaxcc", "BE"])
def test_annotation_declares_what_the_loader_argument_does(unique_name, source):
    mod = jaxcc.load_cpp_inline(unique_name, source)
    assert isinstance(mod.bump, TunedFunction)
    assert mod.bump.variant_targets == {
        "REPEAT=3000": f"{unique_name}@tune-REPEAT3000.bump",
        "REPEAT=1": f"{unique_name}@tune-REPEAT1.bump",
    }
    np.testing.assert_array_equal(mod.bump(X), X + 1)
    assert mod.bump.chosen_config(X) == {"REPEAT": 1}
    again = jaxcc.load_cpp_inline(unique_name, source)  # the same request: nothing asked again
    assert again.bump.chosen_config(X) == {"REPEAT": 1}


def test_annotation_in_a_source_file_is_read_on_warm_loads_too(tmp_path, unique_name):
    path = tmp_path / "bump.cc"
    path.write_text(JAXCC_FORM)
    old = os.stat(path).st_mtime - 10  # settled: the file enters the request by its stamp
    os.utime(path, (old, old))
    mod = jaxcc.load_cpp_file(path, name=unique_name)
    assert sorted(mod.bump.variant_targets) == ["REPEAT=1", "REPEAT=3000"]
    load_request._declared.clear()  # as a fresh process: the core reads the annotation again
    loaded_table.forget(unique_name)
    warm = jaxcc.load_cpp_file(path, name=unique_name)
    assert sorted(warm.bump.variant_targets) == ["REPEAT=1", "REPEAT=3000"]
    assert all(jaxcc.load_cpp_file(path, name=unique_name).bump.variant_targets for _ in range(2))


def test_flags_that_define_every_parameter_build_that_configuration_only(unique_name):
    mod = jaxcc.load_cpp_inline(unique_name, JAXCC_FORM, extra_cflags=["-DREPEAT=1"])
    assert not isinstance(mod.bump, TunedFunction)
    np.testing.assert_array_equal(mod.bump(X), X + 1)


def test_loader_and_annotation_for_different_functions_are_merged(unique_name):
    second = REPEAT_SOURCE.replace("bump", "bump2").replace("#ifndef REPEAT", "#ifndef REPEAT2")
    second = second.replace("#define REPEAT 1", "#define REPEAT2 1").replace(
        "< REPEAT;", "< REPEAT2;"
    )
    source = JAXCC_FORM + second
    mod = jaxcc.load_cpp_inline(unique_name, source, tune={"bump2": {"REPEAT2": [1, 2]}})
    assert sorted(mod.bump.variant_targets) == ["REPEAT=1", "REPEAT=3000"]
    assert sorted(mod.bump2.variant_targets) == ["REPEAT2=1", "REPEAT2=2"]
    np.testing.assert_array_equal(mod.bump2(X), X + 1)


def test_both_forms_for_one_function_is_a_spec_error(unique_name):
    with pytest.raises(jaxcc.SpecError, match=r"both declare bump \(bump at <") as info:
        jaxcc.load_cpp_inline(unique_name, JAXCC_FORM, tune={"bump": {"REPEAT": [1, 2]}})
    assert "keep one" in str(info.value)


@pytest.mark.parametrize(
    "tune, message, column",
    [
        ("REPEAT=1,,2", "REPEAT has an empty candidate", 31),
        ("REPEAT=1.5", "candidate '1.5' of REPEAT is not an int", 29),
        ("REPEAT", "each parameter is NAME=V1,V2", 22),
        ("1X=2", "'1X' is not a macro name", 22),
    ],
)
def test_malformed_tune_text_is_a_spec_error_pointing_into_it(unique_name, tune, message, column):
    source = "#error never built\n" + REPEAT_SOURCE.replace(
        "// @BE bump arg ret", f'// @jaxcc bump tune="{tune}"'
    )
    with pytest.raises(jaxcc.SpecError) as info:
        jaxcc.load_cpp_inline(unique_name, source)
    text = str(info.value)
    assert message in text
    assert f"<{unique_name}>:6:{column}: error: function `bump`: tune=" in text, text
    assert "\n" + " " * (column - 1) + "^" in text, text


def test_unquoted_tune_is_a_spec_error(unique_name):
    source = REPEAT_SOURCE.replace("// @BE bump arg ret", "// @BE bump arg ret tune=REPEAT=1")
    with pytest.raises(jaxcc.SpecError, match="write the candidates in double quotes"):
        jaxcc.load_cpp_inline(unique_name, source)


@pytest.mark.skipif(not os.path.exists("/usr/local/cuda/bin/nvcc"), reason="no nvcc")
def test_cuda_annotation_builds_every_variant_without_a_gpu(unique_name, monkeypatch):
    monkeypatch.setenv("CUDA_HOME", os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    source = TILED_CUDA.replace(
        "// @BE twice arg ret stream",
        '// @BE twice arg ret stream tune="THREADS=128,256; ITEMS=1,4"',
    )
    mod = jaxcc.load_cuda_inline(unique_name, source, compute_capability="8.0")
    assert len(mod.twice.variant_targets) == 4
    assert f"{unique_name}@tune-THREADS256-ITEMS4.twice" in jaxcc.list_registered_targets()

    # The CUDA path's decisions are keyed by the GPU model JAX reports (decision 159e).
    class Card:
        device_kind = "NVIDIA H200"

    monkeypatch.setattr(jax, "devices", lambda backend=None: [Card()])
    assert mod.twice._device_model() == "gpu:NVIDIA H200"
