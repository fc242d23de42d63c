"""A kernel function as Python sees one: its `inspect.Signature` (the C++ inputs by name, `outs`,
the attributes typed and keyword-only), its `__doc__` (the spec, then the comment written above
the C++ function) and a `.pyi` stub of a module. All of it is computed on first access, never
while a module loads (decision 210)."""

from __future__ import annotations

import inspect
import keyword
from typing import Annotated

from .doc_comments import doc_comment

# The Python type a call passes for each attribute type the core knows (call/attributes.py).
_ATTRIBUTE_PYTHON_TYPES = {"bool": bool, "float16": float, "bfloat16": float}
_ATTRIBUTE_PYTHON_TYPES.update({f"float{b}": float for b in (32, 64)})
_ATTRIBUTE_PYTHON_TYPES.update({f"{s}int{b}": int for s in ("", "u") for b in (8, 16, 32, 64)})


class LazyInstanceValue:
    """A class attribute that is `class_value` when read on the class and `make(instance)` when
    read on an instance: computed on the first read and kept in the instance's `__dict__`.
    (A plain instance attribute would be computed for every function of every load.)"""

    def __init__(self, class_value, make):
        self.class_value = class_value
        self.make = make

    def __set_name__(self, owner, name: str) -> None:
        self.cache = f"_lazy{name}"

    def __get__(self, instance, owner=None):
        if instance is None:
            return self.class_value
        cached = instance.__dict__.get(self.cache)
        if cached is None:
            cached = instance.__dict__[self.cache] = self.make(instance)
        return cached


def parameter_names(spec) -> tuple[list[str], dict[str, str]]:
    """The inputs' Python names (the C++ parameter names, `input<i>` where a spec gives none, a
    trailing `_` on a Python keyword) and the attributes as {name: declared type}."""
    inputs, attributes = [], {}
    for p in spec.params:
        if p.kind == "arg":
            name = p.name or f"input{len(inputs)}"
            inputs.append(name + "_" if keyword.iskeyword(name) else name)
        elif p.kind == "attr":
            attributes[p.name] = p.attr_type
    return inputs, attributes


def outs_inferred(spec) -> bool:
    """Whether a call may leave out `outs` (KernelFunction._output_types)."""
    return spec.num_rets == 1 and spec.num_args >= 1


def python_signature(spec) -> inspect.Signature:
    """`(x, y, /, *, outs=None, factor: Annotated[float, 'float32']) -> jax.Array`."""
    import collections.abc

    import jax

    Parameter = inspect.Parameter
    inputs, attributes = parameter_names(spec)
    params = [Parameter(n, Parameter.POSITIONAL_ONLY, annotation=jax.Array) for n in inputs]
    outs_type = jax.ShapeDtypeStruct | collections.abc.Sequence[jax.ShapeDtypeStruct]
    default = Parameter.empty
    if outs_inferred(spec):
        outs_type, default = outs_type | None, None
    params.append(Parameter("outs", Parameter.KEYWORD_ONLY, default=default, annotation=outs_type))
    for name, declared in attributes.items():
        python_type = _ATTRIBUTE_PYTHON_TYPES.get(declared, object)
        annotation = Annotated[python_type, declared]
        params.append(Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation))
    if any(p.kind == "scratch" for p in spec.params):
        annotation = int | collections.abc.Callable[..., int]
        params.append(Parameter("scratch_bytes", Parameter.KEYWORD_ONLY, annotation=annotation))
    returns = jax.Array if spec.num_rets == 1 else list[jax.Array]
    return inspect.Signature(params, return_annotation=returns)


def source_texts(request) -> list[str]:
    """The text of every source of a load request (a file not read by the load is read now;
    one that cannot be read gives '')."""
    if request is None:
        return []
    texts = []
    for source in request.sources:
        text = getattr(source, "text", None)
        if text is None:
            try:
                with open(source.label, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError):
                text = ""
        texts.append(text)
    return texts


def function_comment(name: str, texts: list[str]) -> str:
    """The comment above `name` in the first source that has one ('' for none)."""
    for text in texts:
        if name in text:
            comment = doc_comment(text, name)
            if comment:
                return comment
    return ""


def kernel_doc(fn) -> str:
    """A KernelFunction's `__doc__`: the spec line, then the author's comment from the source."""
    doc = f"jaxcc kernel {fn.__qualname__}({fn.signature()})"
    comment = function_comment(fn.name, source_texts(getattr(fn, "load_request", None)))
    return f"{doc}\n\n{comment}" if comment else doc


def module_doc(module) -> str:
    """A CompiledModule's `__doc__` (what `help(mod)` shows): each function, its Python signature
    and the first line of its comment."""
    lines = [f"jaxcc module {module.name!r} ({module.platform}); functions:", ""]
    for name, fn in module.functions.items():
        lines.append(f"{name}{inspect.signature(fn)}")
        comment = fn.__doc__.split("\n\n", 1)[1] if "\n\n" in fn.__doc__ else ""
        if comment:
            lines.append(f"    {comment.splitlines()[0]}")
    return "\n".join(lines)
