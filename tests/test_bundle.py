"""Prebuilt bundles: `jaxcc build` writes one, `jaxcc.load_library` loads it with no compiler on
the machine, and refuses (typed, with the fix, loading nothing) any bundle that fails a check."""

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import run_python

import jaxcc

SCALE = r"""
// @BE scale arg ret attr.factor:float32
void scale(const jaxcc::Tensor x, jaxcc::Tensor y, float factor) {
    for (int64_t i = 0; i < x.numel(); ++i)
        y.data_ptr<float>()[i] = x.data_ptr<float>()[i] * factor + 1.0f;
}
"""


def jaxcc_cli(*args, env=None, cwd=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "jaxcc", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=600,
    )


def no_compiler_env(tmp_path):
    """PATH without g++, c++, clang++, nvcc or ninja; CXX and JAXCC_NVCC name missing files."""
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir(exist_ok=True)
    return {
        "PATH": str(empty_bin),
        "CXX": str(tmp_path / "missing" / "g++"),
        "JAXCC_NVCC": str(tmp_path / "missing" / "nvcc"),
        "CUDA_HOME": str(tmp_path / "missing"),
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A bundle written by the command line, once for the module's tests."""
    root = tmp_path_factory.mktemp("bundle")
    source = root / "scaler.cc"
    source.write_text(SCALE)
    out = root / "scaler_bundle"
    result = jaxcc_cli("build", str(source), "--name", "bundled_scaler", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "bundled_scaler (cpu; scale)" in result.stdout
    return out


def copy_bundle(built, tmp_path, name="copy"):
    target = tmp_path / name
    shutil.copytree(built, target)
    return target


def manifest_of(bundle):
    return json.loads((bundle / "jaxcc-bundle.json").read_text())


def test_build_writes_library_and_manifest(built):
    manifest = manifest_of(built)
    assert manifest["format"] == 1
    assert manifest["module_name"] == "bundled_scaler"
    assert manifest["platform"] == "cpu"
    assert manifest["jaxcc_version"] == jaxcc.__version__
    major, minor = jaxcc._core.xla_ffi_api_version(jax.ffi.include_dir())
    assert manifest["xla_ffi_api"] == {"major": major, "minor": minor}
    assert manifest["compiler"]
    [function] = manifest["functions"]
    assert function["name"] == "scale"
    assert [p["kind"] for p in function["params"]] == ["arg", "ret", "attr"]
    assert function["params"][2]["attr_type"] == "float32"
    [library] = manifest["files"]
    data = (built / library["path"]).read_bytes()
    assert library["size"] == len(data)
    assert library["sha256"] == hashlib.sha256(data).hexdigest()
    # and the functions' stub for editors (decision 210), which loading ignores
    expected = ["jaxcc-bundle.json", library["path"], "bundled_scaler.pyi"]
    assert sorted(os.listdir(built)) == sorted(expected)


def read_only_mount_works(tmp_path) -> bool:
    """Whether this process may bind-mount read-only in a private mount namespace (root in CI):
    then the bundle is loaded from a real read-only file system, which file modes cannot give
    root."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = tmp_path / "ro-probe"
    probe.mkdir()
    script = (
        f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} && ! touch {probe}/x"
    )
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True)
    return result.returncode == 0


def test_load_library_without_any_compiler_from_a_read_only_directory(built, tmp_path):
    bundle = copy_bundle(built, tmp_path)
    before = sorted(os.listdir(bundle))
    for path in [bundle, *bundle.iterdir()]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    code = textwrap.dedent(f"""
        import os, shutil, jax, jax.numpy as jnp, jaxcc
        assert not any(shutil.which(t) for t in ("g++", "c++", "clang++", "nvcc", "ninja"))
        print("writable" if os.access({str(bundle)!r}, os.W_OK) else "read-only")
        mod = jaxcc.load_library({str(bundle)!r})
        assert isinstance(mod, jaxcc.CompiledModule)
        y = jax.jit(lambda x: mod.scale(x, factor=2.0))(jnp.arange(3, dtype=jnp.float32))
        print(mod.name, mod.targets["scale"], y.tolist())
    """)
    command = [sys.executable, "-c", code]
    read_only = read_only_mount_works(tmp_path)
    if read_only:  # absolute paths: the process's PATH holds no tools
        mount_tool = shutil.which("mount")
        mount = f"{mount_tool} --bind {bundle} {bundle} && {mount_tool} -o remount,bind,ro {bundle}"
        command = [shutil.which("unshare"), "-m", "/bin/sh", "-c", f'{mount} && exec "$@"', "sh"]
        command += [sys.executable, "-c", code]
    env = dict(os.environ, **no_compiler_env(tmp_path))
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    if read_only:
        assert lines[0] == "read-only"
    assert lines[1:] == ["bundled_scaler", "bundled_scaler.scale", "[1.0,", "3.0,", "5.0]"]
    assert sorted(os.listdir(bundle)) == before  # nothing written into the bundle


def test_load_library_in_process_matches_and_takes_a_target_prefix(built, tmp_path):
    mod = jaxcc.load_library(built, target_prefix="bundle_prefixed")
    assert mod.targets == {"scale": "bundle_prefixed.scale"}
    assert mod.bundle.module_name == "bundled_scaler"
    np.testing.assert_array_equal(mod.scale(jnp.ones(4), factor=3.0), 4.0)
    assert "bundle_prefixed.scale" in jaxcc.list_registered_targets()
    # Same bundle again: same key, so registering again is a no-op.
    again = jaxcc.load_library(str(built), target_prefix="bundle_prefixed")
    np.testing.assert_array_equal(again.scale(jnp.ones(2), factor=1.0), 2.0)


def test_load_library_from_package_resources_directory_and_zip(built, tmp_path):
    package = tmp_path / "site" / "shipped_kernels"
    shutil.copytree(built, package / "kernels")
    (package / "__init__.py").write_text("")
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as archive:
        for path in package.rglob("*"):
            name = "zipped_kernels/" + str(path.relative_to(package))
            archive.write(path, name)
    code = textwrap.dedent("""
        import importlib.resources, jax.numpy as jnp, jaxcc
        for pkg, prefix in (("shipped_kernels", "res_dir"), ("zipped_kernels", "res_zip")):
            mod = jaxcc.load_library(importlib.resources.files(pkg) / "kernels",
                                     target_prefix=prefix)
            print(prefix, float(mod.scale(jnp.ones(1), factor=5.0)[0]))
    """)
    env = no_compiler_env(tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(tmp_path / "zipped.zip")])
    result = run_python(code, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["res_dir", "6.0", "res_zip", "6.0"]


def test_build_module_records_every_load(tmp_path):
    package = tmp_path / "recpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(
        "import jaxcc\n"
        f"a = jaxcc.load_cpp_inline('rec_a', {SCALE!r})\n"
        f"b = jaxcc.load_cpp_inline('rec_b', {SCALE.replace('1.0f', '2.0f')!r})\n"
    )
    out = tmp_path / "bundles"
    result = jaxcc_cli(
        "build",
        "--module",
        "recpkg.kernels",
        "--out",
        str(out),
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(out)) == ["rec_a", "rec_b"]
    assert manifest_of(out / "rec_b")["module_name"] == "rec_b"
    mod = jaxcc.load_library(out / "rec_b", target_prefix="rec_b_bundle")
    np.testing.assert_array_equal(mod.scale(jnp.ones(2), factor=1.0), 3.0)


@pytest.mark.parametrize(
    "flags, named",
    [
        (["-O", "0"], "-O has no effect with --module"),  # 0: given, though falsy
        (["--cuda-arch", "9.0"], "--cuda-arch has no effect"),
        (
            ["--name", "n", "--functions", "scale", "--platform", "cpu", "-O", "2", "-I", "inc"]
            + ["--cflags=-g", "--target-prefix", "p", "--vmap-method", "expand_dims"],
            "--name, --functions, --platform, -O, -I, --cflags, --target-prefix, "
            "--vmap-method have no effect",
        ),
    ],
)
def test_build_module_refuses_the_flags_its_load_calls_decide(tmp_path, flags, named):
    """The module's load_* arguments decide name, functions and flags; a flag that would be
    silently ignored is a usage error naming it and the fix, and nothing is built."""
    package = tmp_path / "flagpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(
        f"import jaxcc\nops = jaxcc.load_cpp_inline('flag_ops', {SCALE!r})\n"
    )
    out = tmp_path / "bundles"
    result = jaxcc_cli(
        "build",
        "--module",
        "flagpkg.kernels",
        *flags,
        "--out",
        str(out),
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path)},
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith(f"jaxcc build: {named}")
    assert "module's own load_* call" in result.stderr and "$JAXCC_CUDA_ARCH" in result.stderr
    assert not out.exists()


DOT_PLUS = r"""
extern "C" float cblas_sdot(int n, const float* x, int incx, const float* y, int incy);
// @BE dot_plus arg arg ret
void dot_plus(const jaxcc::Tensor x, const jaxcc::Tensor y, jaxcc::Tensor out) {
    out.data_ptr<float>()[0] = cblas_sdot(int(x.numel()), x.data_ptr<float>(), 1,
                                          y.data_ptr<float>(), 1) + OFFSET;
}
"""


def test_build_takes_cflags_and_ldflags_as_the_docs_write_them(tmp_path):
    """`--cflags "-D... -O1"` (a separate value starting with '-', which argparse alone refuses
    with "expected one argument") and `--ldflags "-lopenblas"` reach the compiler and the linker:
    without the macro the source does not compile, without the library the bundle's dlopen fails."""
    if not any(
        os.path.exists(f"{d}/libopenblas.so") for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib")
    ):
        pytest.skip("needs OpenBLAS (apt-get install -y libopenblas-dev)")
    source = tmp_path / "dot_plus.cc"
    source.write_text(DOT_PLUS)
    out = tmp_path / "dot_bundle"
    result = jaxcc_cli(
        "build", str(source), "--name", "flagged_dot", "--cflags", "-DOFFSET=2.5f -O1",
        "--ldflags", "-lopenblas", "--out", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    mod = jaxcc.load_library(out, target_prefix="flagged_dot_bundle")
    x = jnp.arange(4, dtype=jnp.float32)
    one = jax.ShapeDtypeStruct((1,), jnp.float32)
    np.testing.assert_allclose(mod.dot_plus(x, x, outs=one), [14.0 + 2.5])
    refused = jaxcc_cli("build", str(source), "--out", str(tmp_path / "none"))
    assert refused.returncode != 0 and "OFFSET" in refused.stderr
    unlinked = jaxcc_cli("build", str(source), "--cflags=-DOFFSET=1", "--out", str(tmp_path / "u"))
    if unlinked.returncode == 0:  # the link leaves cblas_sdot undefined: the load must say so
        with pytest.raises(jaxcc.LoadError, match="cblas_sdot"):
            jaxcc.load_library(tmp_path / "u", target_prefix="unlinked_dot")
    else:
        assert "cblas_sdot" in unlinked.stderr


USES_FAKE_DEP = r"""
extern "C" float jaxcc_fake_dep_offset();
// @BE shift arg ret
void shift(const jaxcc::Tensor x, jaxcc::Tensor y) {
    for (int64_t i = 0; i < x.numel(); ++i)
        y.data_ptr<float>()[i] = x.data_ptr<float>()[i] + jaxcc_fake_dep_offset();
}
"""

LOAD_SHIFT = """
import sys, jax.numpy as jnp, jaxcc
try:
    mod = jaxcc.load_library(sys.argv[1], target_prefix="fake_dep_shift")
except jaxcc.BundleError as e:
    print("BUNDLE_ERROR", e)
    raise SystemExit(3)
print("RESULT", list(map(float, mod.shift(jnp.zeros(2, jnp.float32)))))
"""


def test_a_bundle_records_the_libraries_it_needs_and_names_a_missing_one(tmp_path):
    """The manifest lists the shared libraries beyond the C/C++ runtime; on a machine whose loader
    cannot find one, load_library is a BundleError naming it and where it usually comes from
    (it was `LoadError: ... cannot open shared object file` with no hint), and nothing loads."""
    libdir = tmp_path / "deps"
    libdir.mkdir()
    (libdir / "dep.c").write_text("float jaxcc_fake_dep_offset(void) { return 7.0f; }\n")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(libdir / "libjaxcc_fake_dep.so"),
         str(libdir / "dep.c"), "-Wl,-soname,libjaxcc_fake_dep.so.1"],
        check=True, timeout=120,
    )  # fmt: skip
    os.symlink("libjaxcc_fake_dep.so", libdir / "libjaxcc_fake_dep.so.1")
    source = tmp_path / "shift.cc"
    source.write_text(USES_FAKE_DEP)
    out = tmp_path / "shift_bundle"
    result = jaxcc_cli(
        "build", str(source), "--ldflags", f"-L{libdir} -ljaxcc_fake_dep", "--out", str(out),
        env={"LD_LIBRARY_PATH": str(libdir)},  # the build loads the module it built
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    needed = manifest_of(out)["needed_libraries"]
    assert needed == ["libjaxcc_fake_dep.so.1"]  # libc, libstdc++, libm... are not recorded
    code = f"import sys; sys.argv = ['-', {str(out)!r}]\n" + LOAD_SHIFT
    found = run_python(code, env={"LD_LIBRARY_PATH": str(libdir)})
    assert found.returncode == 0, found.stderr[-2000:]
    assert "RESULT [7.0, 7.0]" in found.stdout
    missing = run_python(code, env={"LD_LIBRARY_PATH": ""})
    assert missing.returncode == 3, missing.stdout + missing.stderr[-2000:]
    message = missing.stdout
    assert "libjaxcc_fake_dep.so.1" in message and "which this machine's dynamic loader" in message
    assert "apt-file search libjaxcc_fake_dep.so.1" in message and "LD_LIBRARY_PATH" in message
    assert "Nothing was loaded from this bundle" in message


def test_build_writes_a_compile_database_that_compiles_each_file(tmp_path):
    """`--compile-commands DIR` (issue 39 item 3): one entry per source file, with the command the
    kernel unit is compiled with; running it (syntax only) on the file succeeds, so an editor
    using it (clangd) sees what the compiler sees. The cache entry keeps the same database."""
    source = tmp_path / "scaler.cc"
    source.write_text(SCALE)
    out, db_dir = tmp_path / "b", tmp_path / "editor"
    result = jaxcc_cli(
        "build", str(source), "--name", "db_scaler", "--out", str(out),
        "--compile-commands", str(db_dir),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (entry,) = json.loads((db_dir / "compile_commands.json").read_text())
    assert entry["file"] == str(source) and entry["directory"] == str(tmp_path)
    assert entry["arguments"][-2:] == ["-c", str(source)]
    check = subprocess.run(
        [*entry["arguments"][:-2], "-fsyntax-only", str(source)],
        capture_output=True, text=True, cwd=entry["directory"], timeout=120,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr
    mod = jaxcc.load_cpp_file(str(source), name="db_scaler_loaded")
    kept = json.loads((Path(mod.path).parent / "compile_commands.json").read_text())
    assert [e["file"] for e in kept] == [str(source)]
    inline = jaxcc.load_cpp_inline("db_scaler_inline", SCALE)
    assert not (Path(inline.path).parent / "compile_commands.json").exists()


def test_build_errors_are_clear(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    source = tmp_path / "k.cc"
    source.write_text(SCALE)
    result = jaxcc_cli("build", str(source), "--out", str(tmp_path / "mine"))
    assert result.returncode == 1
    assert "is not a jaxcc bundle" in result.stderr
    assert (tmp_path / "mine" / "notes.txt").read_text() == "mine"  # never clobbered
    result = jaxcc_cli("build", "--out", str(tmp_path / "x"))
    assert result.returncode == 2 and "give source files" in result.stderr
    result = jaxcc_cli("build", str(tmp_path / "absent.cc"), "--out", str(tmp_path / "x"))
    assert result.returncode == 1 and "is not a file" in result.stderr
    result = jaxcc_cli("build", str(source), "--cuda-arch", "8.0", "--out", str(tmp_path / "x"))
    assert result.returncode == 1 and "--cuda-arch is for CUDA" in result.stderr
    result = jaxcc_cli("build", "--module", "no_such_kernels_pkg", "--out", str(tmp_path / "x"))
    assert result.returncode == 1
    assert result.stderr.startswith("jaxcc build: cannot import 'no_such_kernels_pkg'")
    result = jaxcc_cli("build", "--module", "json", "--out", str(tmp_path / "x"))
    assert result.returncode == 1 and "loaded no jaxcc module" in result.stderr


def library_of(bundle):
    return bundle / manifest_of(bundle)["files"][0]["path"]


def edit_manifest(bundle, **changes):
    manifest = manifest_of(bundle)
    manifest.update(changes)
    (bundle / "jaxcc-bundle.json").write_text(json.dumps(manifest))


def mapped(path) -> bool:
    with open("/proc/self/maps") as maps:
        return str(path) in maps.read()


@pytest.mark.parametrize(
    "damage, message",
    [
        ("missing", "is missing"),
        ("altered", r"\(altered\)"),
        ("truncated", r"\(truncated\)"),
        ("newer_format", "format 99, and this jaxcc"),
        ("other_host", "built for plan9-mips, and this machine is"),
        ("newer_ffi", r"XLA FFI API \d+\.999, and this jaxlib provides XLA FFI API"),
        ("not_a_bundle", "is not a jaxcc bundle"),
        ("other_device_platform", "platform 'rocm' is not one this jaxcc loads"),
    ],
)
def test_a_bundle_that_fails_a_check_is_refused_and_nothing_is_loaded(
    built, tmp_path, damage, message
):
    bundle = copy_bundle(built, tmp_path)
    library = library_of(bundle)
    if damage == "missing":
        library.unlink()
    elif damage == "altered":
        data = bytearray(library.read_bytes())
        data[len(data) // 2] ^= 0xFF
        library.write_bytes(bytes(data))
    elif damage == "truncated":
        library.write_bytes(library.read_bytes()[:1000])
    elif damage == "newer_format":
        edit_manifest(bundle, format=99)
    elif damage == "other_host":
        edit_manifest(bundle, host="plan9-mips")
    elif damage == "newer_ffi":
        major = manifest_of(bundle)["xla_ffi_api"]["major"]
        edit_manifest(bundle, xla_ffi_api={"major": major, "minor": 999})
    elif damage == "other_device_platform":
        edit_manifest(bundle, platform="rocm")
    elif damage == "not_a_bundle":
        (bundle / "jaxcc-bundle.json").unlink()
    prefix = f"damaged_{damage}"
    with pytest.raises(jaxcc.BundleError, match=message) as caught:
        jaxcc.load_library(bundle, target_prefix=prefix)
    assert isinstance(caught.value, jaxcc.LoadError)
    assert "jaxcc build" in str(caught.value) or "Build the bundle" in str(caught.value)
    assert not mapped(library)
    assert not any(t.startswith(prefix) for t in jaxcc.list_registered_targets())


def test_a_gpu_the_bundle_has_no_code_for_is_refused_naming_both(built, tmp_path):
    bundle = copy_bundle(built, tmp_path)
    edit_manifest(bundle, platform="cuda", cuda_archs=["80", "90"], ptx_arch="90")
    with pytest.raises(jaxcc.BundleError, match=r"sm_80, sm_90 \(PTX compute_90\).*GPU sm_75"):
        jaxcc._core.load_bundle(str(bundle), jax.ffi.include_dir(), ["7.5"])
    assert not mapped(library_of(bundle))


def test_load_library_argument_errors(built):
    with pytest.raises(jaxcc.SpecError, match="path must be a bundle directory"):
        jaxcc.load_library(42)
    with pytest.raises(jaxcc.SpecError, match="vmap_method"):
        jaxcc.load_library(built, vmap_method="nope")
    with pytest.raises(jaxcc.SpecError):
        jaxcc.load_library(built, target_prefix="bad prefix!")
    with pytest.raises(jaxcc.BundleError, match="not a directory"):
        jaxcc.load_library(built / "jaxcc-bundle.json")


NVCC = shutil.which("nvcc") or (
    "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
)


@pytest.fixture(scope="module")
def cuda_bundle(tmp_path_factory):
    if NVCC is None:
        pytest.skip("nvcc is not installed")
    from cuda_sources import VECTOR_ADD

    root = tmp_path_factory.mktemp("cuda_bundle")
    (root / "vec.cu").write_text(VECTOR_ADD)
    out = root / "vec_bundle"
    result = jaxcc_cli(
        "build",
        str(root / "vec.cu"),
        "--name",
        "bundled_vec",
        "--cuda-arch",
        "8.0,9.0",
        "--out",
        str(out),
        env={"CUDA_HOME": os.path.dirname(os.path.dirname(NVCC))},
    )
    assert result.returncode == 0, result.stderr
    assert "bundled_vec (cuda sm_80, sm_90 + PTX 90; vector_add)" in result.stdout
    return out


def test_cuda_bundle_has_sass_per_arch_and_ptx_and_loads_without_nvcc(cuda_bundle, tmp_path):
    manifest = manifest_of(cuda_bundle)
    assert manifest["platform"] == "cuda"
    assert manifest["cuda_archs"] == ["80", "90"]
    assert manifest["ptx_arch"] == "90"
    assert "nvcc" in manifest["nvcc"]
    cuobjdump = os.path.join(os.path.dirname(NVCC), "cuobjdump")
    if os.path.exists(cuobjdump):
        library = str(library_of(cuda_bundle))
        elf = subprocess.run([cuobjdump, "--list-elf", library], capture_output=True, text=True)
        assert "sm_80" in elf.stdout and "sm_90" in elf.stdout
        ptx = subprocess.run([cuobjdump, "--list-ptx", library], capture_output=True, text=True)
        assert "sm_90" in ptx.stdout
    code = textwrap.dedent(f"""
        import jaxcc
        mod = jaxcc.load_library({str(cuda_bundle)!r})
        print(mod.platform, mod.cuda_archs, mod.targets["vector_add"])
        print(mod.targets["vector_add"] in jaxcc.list_registered_targets())
    """)
    result = run_python(code, env=no_compiler_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cuda", "['80',", "'90']", "bundled_vec.vector_add", "True"]


@pytest.mark.gpu
def test_cuda_bundle_runs_on_the_gpu(cuda_bundle, tmp_path):
    code = textwrap.dedent(f"""
        import jax, jax.numpy as jnp, jaxcc
        mod = jaxcc.load_library({str(cuda_bundle)!r})
        x = jnp.arange(1000, dtype=jnp.float32)
        print(float(jax.jit(mod.vector_add)(x, x).sum()))
    """)
    result = run_python(code, env=no_compiler_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == str(float(2 * sum(range(1000))))
