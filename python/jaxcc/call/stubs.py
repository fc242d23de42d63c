"""A `.pyi` stub of a module's kernel functions, for editors and type checkers: `jaxcc stubs`
and `jaxcc build` write one (docs/reference.md, "Command line")."""

from __future__ import annotations

from .kernel_function import KernelFunction
from .kernel_signature import kernel_doc, outs_inferred, parameter_names

_ANNOTATIONS = {"bool": "bool", "float16": "float", "bfloat16": "float"}
_ANNOTATIONS.update({f"float{b}": "float" for b in (32, 64)})
_ANNOTATIONS.update({f"{s}int{b}": "int" for s in ("", "u") for b in (8, 16, 32, 64)})
_OUTS = "jax.ShapeDtypeStruct | Sequence[jax.ShapeDtypeStruct]"


def functions_of(module_name: str, specs, request=None) -> list[KernelFunction]:
    """KernelFunctions for `specs` (nothing registered or called), their comments read from
    `request`'s sources when it is given."""
    functions = []
    for spec in specs:
        fn = KernelFunction(module_name, f"{module_name}.{spec.name}", spec, "sequential")
        fn.load_request = request
        functions.append(fn)
    return functions


def stub_text(module_name: str, functions: list[KernelFunction]) -> str:
    """The `.pyi` text: one `def` per function with its inputs, `outs`, typed attributes, return
    type and `__doc__`."""
    parts = [
        f'"""jaxcc module {module_name!r}: its kernel functions as editors and type checkers see '
        'them (written by jaxcc)."""',
        "",
        "from collections.abc import Callable, Sequence",
        "from typing import Annotated",
        "",
        "import jax",
    ]
    for fn in functions:
        parts += ["", "", _stub_def(fn)]
    return "\n".join(parts) + "\n"


def _stub_def(fn: KernelFunction) -> str:
    spec = fn.spec
    inputs, attributes = parameter_names(spec)
    params = [f"{name}: jax.Array" for name in inputs]
    if inputs:
        params.append("/")
    params.append("*")
    params.append(f"outs: {_OUTS} | None = None" if outs_inferred(spec) else f"outs: {_OUTS}")
    for name, declared in attributes.items():
        params.append(f'{name}: Annotated[{_ANNOTATIONS.get(declared, "object")}, "{declared}"]')
    if fn.has_scratch:
        params.append("scratch_bytes: int | Callable[..., int]")
    returns = "jax.Array" if spec.num_rets == 1 else "list[jax.Array]"
    doc = kernel_doc(fn).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    body = "\n".join(f"    {line}".rstrip() for line in doc.splitlines())
    lines = [f"def {fn.name}(", *(f"    {p}," for p in params), f") -> {returns}:"]
    return "\n".join(lines) + f'\n    """{body.lstrip()}\n    """\n    ...'


def write_stub(path: str, module_name: str, functions: list[KernelFunction]) -> str:
    """Writes the stub to `path` (through a temporary file, so a reader never sees half of it)."""
    import os

    text = stub_text(module_name, functions)
    temporary = f"{path}.tmp{os.getpid()}"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)
    return path
