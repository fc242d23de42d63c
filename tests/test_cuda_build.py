"""The CUDA path without a GPU (these run in CI): nvcc builds and links the seeds' CUDA kernels for
an explicit architecture, errors come before any toolchain probe, a missing nvcc is explained,
and a directory rebuild recompiles exactly the changed file."""

import os
import shutil
import subprocess

import pytest
from conftest import run_python
from cuda_sources import MIXED, SCALE_BY, VECTOR_ADD

import jaxcc

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_DIR = os.path.join(HERE, "kernels", "cuda_dir")

pytestmark = pytest.mark.skipif(
    shutil.which("nvcc") is None
    and not os.path.exists("/usr/local/cuda/bin/nvcc")
    and not os.environ.get("CUDA_HOME"),
    reason="nvcc is not installed",
)


@pytest.fixture(autouse=True)
def nvcc_on_path(monkeypatch):
    if shutil.which("nvcc") is None and os.path.exists("/usr/local/cuda/bin/nvcc"):
        monkeypatch.setenv("CUDA_HOME", "/usr/local/cuda")


def no_gpu() -> bool:
    return shutil.which("nvidia-smi") is None


def fatbin_archs(library: str) -> set[str]:
    """sm_XX names embedded in the library's fat binary (from cuobjdump when available)."""
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    if not os.path.exists(cuobjdump):
        pytest.skip("cuobjdump not installed")
    listing = subprocess.run([cuobjdump, "--list-elf", library], capture_output=True, text=True)
    return {part for part in listing.stdout.split(".") if part.startswith("sm_")}


def test_seed_vector_add_builds_links_and_registers_for_an_explicit_arch(unique_name):
    mod = jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability="8.0")
    assert mod.platform == "cuda"
    assert mod.function_names == ["vector_add"]
    assert mod.cuda_archs == ["80"]
    assert os.path.exists(mod.path)
    assert f"{unique_name}.vector_add" in jaxcc.list_registered_targets()
    spec = mod.specs["vector_add"]
    assert [p["kind"] for p in spec["params"]] == ["arg", "arg", "ret", "stream"]


def test_seed_scale_by_with_fast_math_and_options_in_the_key(unique_name):
    plain = jaxcc.load_cuda_inline(unique_name, SCALE_BY, compute_capability="sm_90")
    fast = jaxcc.load_cuda_inline(
        unique_name + "_fast", SCALE_BY, compute_capability="sm_90", use_fast_math=True
    )
    o1 = jaxcc.load_cuda_inline(
        unique_name + "_o1", SCALE_BY, compute_capability="sm_90", optimization_level=1
    )
    attrs = [p for p in plain.specs["scale_by"]["params"] if p["kind"] == "attr"]
    assert attrs == [{"kind": "attr", "name": "scale_factor", "type": "float32"}] or (
        attrs[0]["name"] == "scale_factor" and attrs[0]["type"] == "float32"
    )
    assert len({plain.key, fast.key, o1.key}) == 3


def test_every_seed_cuda_example_and_the_mixed_kernels_build(unique_name):
    mod = jaxcc.load_cuda_inline(
        unique_name, [VECTOR_ADD, SCALE_BY, MIXED], compute_capability=["8.0", "9.0a"]
    )
    assert sorted(mod.function_names) == [
        "affine",
        "bad_launch",
        "bad_memcpy",
        "scale_by",
        "vector_add",
    ]
    assert mod.cuda_archs == ["80", "90a"]
    if shutil.which("cuobjdump") or os.path.exists("/usr/local/cuda/bin/cuobjdump"):
        assert {"sm_80", "sm_90a"} <= fatbin_archs(mod.path)


def test_load_cuda_file_puts_the_files_directory_on_the_include_path(tmp_path, unique_name):
    (tmp_path / "factor.cuh").write_text("#define FACTOR 3.0f\n")
    kernel = tmp_path / "my_kernel.cu"
    kernel.write_text('#include "factor.cuh"\n' + SCALE_BY.replace("* factor;", "* FACTOR;"))
    mod = jaxcc.load_cuda_file(str(kernel), name=unique_name, compute_capability="8.6")
    assert mod.function_names == ["scale_by"]
    assert mod.cuda_archs == ["86"]


def test_cpu_and_cuda_builds_of_one_module_live_side_by_side(unique_name):
    cpu = jaxcc.load_cpp_inline(
        unique_name,
        "void vector_add(const BE::Tensor a, const BE::Tensor b, BE::Tensor out) {"
        " for (int64_t i = 0; i < a.numel(); ++i) out.data_ptr<float>()[i] ="
        " a.data_ptr<float>()[i] + b.data_ptr<float>()[i]; }",
        ["vector_add"],
    )
    gpu = jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability="8.0")
    assert cpu.key != gpu.key and cpu.path != gpu.path
    import jax.numpy as jnp

    out = cpu.vector_add(jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float32))
    assert out.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.skipif(not no_gpu(), reason="checks the behaviour without a GPU")
def test_calling_a_cuda_kernel_without_a_gpu_says_so(unique_name):
    import jax.numpy as jnp

    mod = jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability="8.0")
    with pytest.raises(jaxcc.DeviceError, match="no GPU backend"):
        mod.vector_add(jnp.ones(4), jnp.ones(4))


@pytest.mark.skipif(not no_gpu(), reason="needs a machine without a GPU")
def test_no_gpu_and_no_arch_is_a_clear_toolchain_error(unique_name, monkeypatch):
    monkeypatch.delenv("JAXCC_CUDA_ARCH", raising=False)
    with pytest.raises(jaxcc.ToolchainError, match="compute_capability=") as info:
        jaxcc.load_cuda_inline(unique_name, VECTOR_ADD)
    assert "JAXCC_CUDA_ARCH" in str(info.value)


def test_jaxcc_cuda_arch_environment_variable_is_used(unique_name, monkeypatch):
    monkeypatch.setenv("JAXCC_CUDA_ARCH", "75,80")
    mod = jaxcc.load_cuda_inline(unique_name, VECTOR_ADD)
    assert mod.cuda_archs == ["75", "80"]


@pytest.mark.parametrize("bad", ["sm_8x", "2.0", "", "9.0b", "compute"])
def test_bad_architectures_are_spec_errors_before_any_toolchain_probe(
    unique_name, monkeypatch, bad
):
    monkeypatch.setenv("JAXCC_NVCC", "/nonexistent/nvcc")
    with pytest.raises(jaxcc.SpecError, match="compute_capability") as info:
        jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, compute_capability=bad or [""])
    # JAXCC_NVCC points nowhere: a probe would have raised ToolchainError instead.
    assert "Tried, in order" not in str(info.value)


def test_spec_and_signature_errors_come_before_any_toolchain_probe(unique_name):
    env = {"JAXCC_NVCC": "/nonexistent/nvcc", "CXX": "/nonexistent/g++", "PATH": "/usr/bin:/bin"}
    code = (
        "import jaxcc\n"
        "for functions, src in [({'vector_add': ['arg', 'argg', 'ret']}, SRC),\n"
        "                       (['missing_fn'], SRC),\n"
        "                       (None, 'void f(BE::Tensor x, std::map<int,int> m, BE::Tensor o, int64_t stream) {}\\n// @BE f\\n')]:\n"
        "    try:\n"
        f"        jaxcc.load_cuda_inline({unique_name!r}, src, functions, compute_capability='8.0')\n"
        "    except (jaxcc.SpecError, jaxcc.SignatureError) as e:\n"
        "        print(type(e).__name__)\n"
    )
    result = run_python(f"SRC = {VECTOR_ADD!r}\n" + code, env=env)
    assert result.returncode == 0, result.stderr
    kinds = result.stdout.split()
    assert len(kinds) == 3, result.stdout
    assert set(kinds) <= {"SpecError", "SignatureError"}


def test_a_missing_nvcc_lists_what_was_tried_and_how_to_fix_it(unique_name):
    env = {
        "JAXCC_NVCC": "",  # set, it would be the error itself (decision 252)
        "CUDA_HOME": "/nonexistent/cuda",
        "CUDA_PATH": "",
        "PATH": "/usr/bin:/bin",
    }
    code = (
        "import jaxcc\n"
        "try:\n"
        f"    jaxcc.load_cuda_inline({unique_name!r}, SRC, compute_capability='8.0')\n"
        "except jaxcc.ToolchainError as e:\n"
        "    print('TOOLCHAIN', e)\n"
    )
    result = run_python(f"SRC = {VECTOR_ADD!r}\n" + code, env=env)
    assert "TOOLCHAIN" in result.stdout, result.stderr
    text = result.stdout
    assert "$CUDA_HOME (/nonexistent/cuda/bin/nvcc): not found" in text, text
    assert "JAXCC_NVCC" in text and "CUDA_HOME" in text


def test_a_device_compile_error_points_at_the_users_line(unique_name):
    broken = VECTOR_ADD.replace("out[idx] = a[idx] + b[idx];", "out[idx] = a[idx] + undefined_b;")
    with pytest.raises(jaxcc.CompileError) as info:
        jaxcc.load_cuda_inline(unique_name, broken, compute_capability="8.0")
    line = broken.splitlines().index(next(x for x in broken.splitlines() if "undefined_b" in x))
    assert f"<{unique_name}>:{line + 1}" in str(info.value)
    assert "undefined_b" in str(info.value)


def _nvcc_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "nvcc" in line and " -c " in line]


def test_directory_rebuild_recompiles_exactly_the_changed_file(tmp_path, unique_name, capfd):
    src = tmp_path / "kernels"
    shutil.copytree(CUDA_DIR, src)
    build = tmp_path / "build"
    kwargs = dict(name=unique_name, compute_capability="8.0", build_directory=str(build))
    mod = jaxcc.load_cuda_dir(str(src), verbose=True, **kwargs)
    assert sorted(mod.function_names) == ["add_vec", "mul_vec", "sub_vec"]
    first = _nvcc_lines(capfd.readouterr().err)
    assert len(first) == 3, first

    text = (src / "mul.cu").read_text().replace("a[i] * b[i]", "a[i] * b[i] * 1.0f")
    (src / "mul.cu").write_text(text)
    jaxcc.load_cuda_dir(str(src), verbose=True, target_prefix=unique_name + "_v2", **kwargs)
    second = _nvcc_lines(capfd.readouterr().err)
    assert len(second) == 1 and "kernel_1.cu" in second[0], second  # mul.cu, sorted second

    # A shared header is a dependency of every file (tracked through nvcc's depfiles).
    (src / "common.cuh").write_text("#pragma once\n#define CUDA_DIR_BLOCK 256\n")
    jaxcc.load_cuda_dir(str(src), verbose=True, target_prefix=unique_name + "_v3", **kwargs)
    third = _nvcc_lines(capfd.readouterr().err)
    assert len(third) == 3, third


@pytest.mark.parametrize("form", ["list", "dict"])
def test_functions_as_a_list_or_a_dict_work_for_cuda(unique_name, form):
    src = SCALE_BY.replace("// @BE scale_by arg ret attr.scale_factor:float32 stream\n", "")
    functions = (
        ["scale_by"]
        if form == "list"
        else {"scale_by": ["arg", "ret", "attr.scale_factor:float32", "stream"]}
    )
    mod = jaxcc.load_cuda_inline(unique_name, src, functions, compute_capability="8.0")
    params = mod.specs["scale_by"]["params"]
    assert [p["kind"] for p in params] == ["arg", "ret", "attr", "stream"]
    assert params[2]["type"] == "float32"


def test_several_architectures_compile_in_parallel_without_changing_the_cache_key(
    fresh_cache, unique_name, capfd
):
    # Decision 133: nvcc gets --threads for a unit of several architectures when the build has
    # workers to spare; it changes how nvcc runs, not what it makes, so the key is the same
    # whatever the worker count (a fresh process with one worker finds the entry).
    kwargs = dict(compute_capability=["8.0", "9.0"], verbose=True)
    jaxcc.load_cuda_inline(unique_name, VECTOR_ADD, ninja_workers=2, **kwargs)
    (line,) = _nvcc_lines(capfd.readouterr().err)
    assert "--threads 2" in line, line
    jaxcc.load_cuda_inline(unique_name + "_one", VECTOR_ADD, compute_capability="9.0",
                           ninja_workers=2, verbose=True)  # fmt: skip
    (line,) = _nvcc_lines(capfd.readouterr().err)
    assert "--threads" not in line, line
    again = run_python(
        "import jaxcc\n"
        f"m = jaxcc.load_cuda_inline({unique_name!r}, {VECTOR_ADD!r},\n"
        "    compute_capability=['8.0', '9.0'], ninja_workers=1)\n"
        "print('HIT', m.cache_hit)\n",
        env={"JAXCC_CACHE_DIR": str(fresh_cache)},
    )
    assert "HIT True" in again.stdout, again.stderr[-3000:]
