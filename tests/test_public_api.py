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
    documents = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))  # the guide too
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


# docs/reference.md answers every lookup (issue 52 item 1): each public name, loader keyword,
# environment variable the code reads and command-line option is documented there.
REFERENCE = (ROOT / "docs" / "reference.md").read_text()
LOADERS = ("load_cpp_inline", "load_cpp_file", "load_cpp_dir", "load_cuda_inline",
           "load_cuda_file", "load_cuda_dir", "load_library")  # fmt: skip
# Names the code reads that are not environment variables.
NOT_VARIABLES = {"JAXCC_CHECKS": "the dict `jaxcc check` reads from a module"}
# How the code reads a variable: C++ getenv and its wrappers, Python's os.environ and getenv.
_READS = (
    r'(?:getenv|EnvOr|Env|PathList|OnOffSetting)\(\s*"([A-Z][A-Z0-9_]*)"',
    r"""environ(?:\.get|\.pop|\.setdefault)?[\[(]\s*["']([A-Z][A-Z0-9_]*)["']""",
    r"""["']([A-Z][A-Z0-9_]*)["']\s+(?:not\s+)?in\s+os\.environ""",
    r"""["'](JAXCC_[A-Z0-9_]+)["']""",
)


def reference_section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", REFERENCE, re.M | re.S)
    assert match, f"docs/reference.md has no section '## {title}'"
    return match.group(1)


def variables_the_code_reads() -> set[str]:
    """Every environment variable python/jaxcc and src/ (tests left out) read, found afresh."""
    files = list((ROOT / "python" / "jaxcc").rglob("*.py"))
    files += [p for p in (ROOT / "src").rglob("*") if p.suffix in (".cc", ".h")
              and not p.stem.endswith("_test") and "testing" not in p.parts]  # fmt: skip
    names = set()
    for path in files:
        text = path.read_text()
        for pattern in _READS:
            names.update(re.findall(pattern, text))
        # The tools' own variables, keyed by the cache (src/pipeline/tool_environment.cc).
        for block in re.findall(r"k\w+Variables\[\] = \{(.*?)\};", text, re.S):
            names.update(re.findall(r'"([A-Z][A-Z0-9_]*)"', block))
    return names - set(NOT_VARIABLES)


def test_the_reference_documents_every_public_name():
    section = reference_section("Public names")
    missing = [n for n in jaxcc.__all__ if f"`jaxcc.{n}`" not in section]
    assert not missing, f"add to docs/reference.md's 'Public names': {missing}"


def test_the_reference_documents_every_loader_keyword():
    import inspect

    section = reference_section("Loader options")
    missing = []
    for loader in LOADERS:
        for p in inspect.signature(getattr(jaxcc, loader)).parameters.values():
            if p.kind is not p.VAR_KEYWORD and f"`{p.name}`" not in section:
                missing.append(f"{loader}({p.name})")
    assert not missing, f"add to docs/reference.md's 'Loader options': {missing}"


def test_the_reference_documents_every_variable_the_code_reads_and_no_other():
    read = variables_the_code_reads()
    # The scan itself must work: a few it has to find, one from each way of reading.
    assert {"JAXCC_CACHE_DIR", "JAXCC_LINKER", "CXX", "TMPDIR", "CPATH", "XLA_FLAGS"} <= read
    section = reference_section("Environment variables")
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]{2,})`", section))
    assert not read - documented, f"add to 'Environment variables': {sorted(read - documented)}"
    stale = {n for n in documented - read if n.startswith("JAXCC_")}
    assert not stale, f"docs/reference.md documents variables nothing reads: {sorted(stale)}"


def test_the_reference_documents_every_command_and_option():
    section = reference_section("Command line")
    top = run([sys.executable, "-m", "jaxcc", "--help"]).stdout
    commands = re.search(r"\{([\w,-]+)\}", top).group(1).split(",")
    assert set(commands) == set(COMMANDS)
    missing = [f"jaxcc {c}" for c in commands if f"`jaxcc {c}" not in section]
    missing += [f"jaxcc cache {c}" for c in CACHE_COMMANDS if f"`jaxcc cache {c}" not in section]
    for command in [*[[c] for c in commands if c != "cache"], ["cache", "prune"]]:
        usage = run([sys.executable, "-m", "jaxcc", *command, "--help"]).stdout.split("\n\n")[0]
        for option in set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", usage)) - {"-h"}:
            if f"`{option}`" not in section:
                missing.append(f"jaxcc {' '.join(command)} {option}")
    assert not missing, f"add to docs/reference.md's 'Command line': {missing}"
