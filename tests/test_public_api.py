"""The public surface stays what users and the docs rely on, wherever the code behind it lives:
every name of `jaxcc.__all__` (the list below is the contract: removing or renaming one fails
here), `import jaxcc as brainevent`, every `jaxcc.X` the README and docs name, and the command
line's commands through `python -m jaxcc` and the `jaxcc` console script."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import jaxcc

ROOT = pathlib.Path(__file__).resolve().parent.parent

PUBLIC_NAMES = {
    "Autotune", "AutotuneError", "AutotuneWarning", "BackendError", "BackendWarning",
    "BenchmarkConfig", "BenchmarkDataFnNotProvidedError", "BenchmarkRecord", "BenchmarkResult",
    "BundleError", "CacheError", "CacheWarning", "CallError", "CallValueError",
    "DTypeMismatchError", "CompileError", "CompiledModule", "MAX_SCRATCH_BYTES", "DeviceError",
    "ExportError", "JaxVersionWarning", "JaxccError", "KernelEntry", "KernelCheckError",
    "KernelCompilationError", "KernelError", "KernelFallbackExhaustedError", "KernelFunction",
    "KernelReport", "KernelLoadError", "KernelLoweringError", "KernelRegistrationError",
    "LoadError", "MissingTargetError", "NotDifferentiableError", "RegistrationError",
    "ReloadWarning", "ShardingError", "ShardingRule", "ShardingWarning", "SignatureError",
    "SpecError", "SpecTypeError", "ToolchainError", "XLACustomKernel", "__version__",
    "assert_kernel_ok", "benchmark_function", "check_kernel", "clear_backends", "clear_cache",
    "defjvp", "deserialize", "export", "general_batching_rule", "get_all_primitive_names",
    "get_backend", "get_cache_dir", "get_primitives_by_tags", "get_registry", "include_dir",
    "list_registered_targets", "load_cpp_dir", "load_cpp_file", "load_cpp_inline",
    "load_cuda_dir", "load_cuda_file", "load_cuda_inline", "load_library", "numba_cuda_kernel",
    "print_diagnostics", "triton_kernel", "numba_kernel", "set_backend", "set_cache_dir",
    "set_sharding_check", "vectorized_batching_rule",
}  # fmt: skip

COMMANDS = ("cache", "doctor", "benchmark", "build", "check", "tune", "stubs")
CACHE_COMMANDS = ("dir", "ls", "clear", "prune")


def test_all_is_the_documented_set_and_every_name_resolves():
    assert set(jaxcc.__all__) == PUBLIC_NAMES
    assert len(jaxcc.__all__) == len(PUBLIC_NAMES)  # no name listed twice
    for name in PUBLIC_NAMES:
        assert getattr(jaxcc, name) is not None, name
    assert PUBLIC_NAMES <= set(dir(jaxcc))


def test_brainevent_import_alias_reaches_the_same_objects():
    import jaxcc as brainevent

    assert brainevent.XLACustomKernel is jaxcc.custom_kernel.XLACustomKernel
    assert brainevent.load_cuda_inline is jaxcc.load_cuda_inline
    assert brainevent.numba_kernel is jaxcc.custom_kernel.numba_kernel


def test_every_jaxcc_name_the_docs_use_exists():
    documents = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    missing = []
    for document in documents:
        if document.name == "decisions.md":  # the decision log quotes names as they were
            continue
        for match in re.finditer(r"(?<![\w./-])jaxcc\.([A-Za-z_]\w*)", document.read_text()):
            if not hasattr(jaxcc, match.group(1)):
                missing.append(f"{document.name}: jaxcc.{match.group(1)}")
    assert not missing, sorted(set(missing))


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_answers_help_through_python_m(command):
    result = run([sys.executable, "-m", "jaxcc", command, "--help"])
    assert result.returncode == 0, result.stderr
    assert f"jaxcc {command}" in result.stdout


def test_top_level_help_lists_every_command_and_cache_its_subcommands():
    top = run([sys.executable, "-m", "jaxcc", "--help"])
    assert top.returncode == 0, top.stderr
    for command in COMMANDS:
        assert command in top.stdout, command
    cache = run([sys.executable, "-m", "jaxcc", "cache", "--help"])
    for command in CACHE_COMMANDS:
        assert command in cache.stdout, command


def test_console_script_runs_the_same_main():
    script = shutil.which("jaxcc") or str(pathlib.Path(sys.executable).parent / "jaxcc")
    result = run([script, "--version"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"jaxcc {jaxcc.__version__}"
