"""A loaded kernel looks like a Python function (issue 52 item 4): `inspect.signature` names its
inputs, `outs` and typed attributes; `__doc__` carries the comment above the C++ function;
`help(mod)` lists the functions; `jaxcc stubs` and `jaxcc build` write a `.pyi`."""

import ast
import inspect
import os
import pydoc
import subprocess
import sys
import textwrap
import typing

import jax
import pytest

import jaxcc
from jaxcc.call.doc_comments import doc_comment

SOURCE = r"""
#include "jaxcc/jaxcc.h"

/// Adds one to every element of x.
/// Written for the guide.
void add_one(const jaxcc::Tensor x, jaxcc::Tensor out) {
    for (int64_t i = 0; i < x.numel(); ++i)
        out.data_ptr<float>()[i] = x.data_ptr<float>()[i] + 1.0f;
}

/**
 * Scales x by factor, n times.
 */
// @BE scale_by
void scale_by(const jaxcc::Tensor x, jaxcc::Tensor out, float factor, int64_t n, bool flip) {
    add_one(x, out);  // a call, not the declaration: its comment is not scale_by's
}

// two outputs
void split(const jaxcc::Tensor values, jaxcc::Tensor low, jaxcc::Tensor high) {}
"""


@pytest.fixture(scope="module")
def mod():
    return jaxcc.load_cpp_inline("sig_mod", SOURCE, functions=["add_one", "scale_by", "split"])


def test_the_signature_names_inputs_outs_and_typed_keyword_attributes(mod):
    sig = inspect.signature(mod.scale_by)
    params = list(sig.parameters.values())
    assert [p.name for p in params] == ["x", "outs", "factor", "n", "flip"]
    assert params[0].kind is inspect.Parameter.POSITIONAL_ONLY
    assert params[0].annotation is jax.Array and sig.return_annotation is jax.Array
    assert params[1].kind is inspect.Parameter.KEYWORD_ONLY and params[1].default is None
    attributes = {p.name: p.annotation for p in params[2:]}
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[2:])
    assert all(p.default is inspect.Parameter.empty for p in params[2:])
    assert attributes == {
        "factor": typing.Annotated[float, "float32"],
        "n": typing.Annotated[int, "int64"],
        "flip": typing.Annotated[bool, "bool"],
    }
    # Two outputs cannot be inferred: outs is required, and a list comes back.
    split = inspect.signature(mod.split)
    assert list(split.parameters) == ["values", "outs"]
    assert split.parameters["outs"].default is inspect.Parameter.empty
    assert split.return_annotation == list[jax.Array]
    # The signature is what a call binds: one too few attributes is refused by both.
    with pytest.raises(TypeError):
        sig.bind(jax.numpy.ones(2), factor=1.0, n=2)


def test_the_doc_is_the_spec_then_the_comment_above_the_cpp_function(mod):
    assert mod.add_one.__doc__ == (
        "jaxcc kernel sig_mod.add_one(arg x, ret out)\n\n"
        "Adds one to every element of x.\nWritten for the guide."
    )
    doc = mod.scale_by.__doc__
    assert doc.startswith("jaxcc kernel sig_mod.scale_by(arg x, ret out, factor: float32")
    assert doc.endswith("\n\nScales x by factor, n times.") and "@BE" not in doc
    assert mod.split.__doc__.endswith("\n\ntwo outputs")
    # The class keeps its own docstring; help() on a function shows the instance's.
    assert jaxcc.CompiledModule.__doc__.startswith("A loaded module")
    assert "Adds one to every element" in pydoc.render_doc(mod.add_one)


def test_help_of_a_module_lists_its_functions(mod):
    text = pydoc.render_doc(mod, renderer=pydoc.plaintext)
    for line in ("add_one(x: ", "scale_by(x: ", "split(values: ", "Scales x by factor"):
        assert line in text, text


def test_nothing_is_read_until_the_doc_or_signature_is_asked_for(unique_name, monkeypatch):
    from jaxcc.call import kernel_function

    calls = []
    monkeypatch.setattr(kernel_function.KernelFunction.__dict__["__doc__"], "make",
                        lambda fn: calls.append(fn) or "doc")  # fmt: skip
    fresh = jaxcc.load_cpp_inline(unique_name, SOURCE, functions=["add_one"])
    fresh.add_one(jax.numpy.ones(3, jax.numpy.float32))
    assert calls == []
    assert fresh.add_one.__doc__ == "doc" and fresh.add_one.__doc__ == "doc"
    assert len(calls) == 1  # computed once, then kept


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("/// one\n/// two\nvoid f(int a);\n", "one\ntwo"),
        ("/** block\n *  indented\n */\nstatic inline void\nf(int a) {}\n", "block\n indented"),
        ("// plain\n\nvoid f(int a) {}\n", ""),  # a blank line ends the comment's reach
        ("// decl\nvoid f(int);\n/// def\nvoid f(int a) {}\n", "def"),
        ("void g() {\n  // not f's\n  f(1);\n  return f(2);\n}\n", ""),
        ('/// c\nextern "C" void f(int a) noexcept {}\n', "c"),
    ],
)
def test_doc_comment_forms(source, expected):
    assert doc_comment(source, "f") == expected


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "jaxcc", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)  # fmt: skip


def _check_stub(path, module):
    text = open(path).read()
    tree = ast.parse(text)  # a valid .pyi
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert set(defs) == {"add_one", "scale_by", "split"}, text
    scale = defs["scale_by"]
    assert [a.arg for a in scale.args.posonlyargs] == ["x"]
    assert [a.arg for a in scale.args.kwonlyargs] == ["outs", "factor", "n", "flip"]
    assert ast.unparse(scale.args.kwonlyargs[1].annotation) == "Annotated[float, 'float32']"
    assert "Scales x by factor, n times." in ast.get_docstring(scale)
    assert ast.unparse(defs["split"].returns) == "list[jax.Array]"
    assert f"jaxcc module {module!r}" in ast.get_docstring(tree)


def test_jaxcc_stubs_writes_a_pyi_for_each_module_a_python_module_loads(tmp_path):
    (tmp_path / "my_kernels.py").write_text(
        textwrap.dedent(f"""
        import jaxcc
        ops = jaxcc.load_cpp_inline("stub_ops", {SOURCE!r},
                                    functions=["add_one", "scale_by", "split"])
    """)
    )
    result = _cli("stubs", "my_kernels", "-o", "stubs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    _check_stub(tmp_path / "stubs" / "stub_ops.pyi", "stub_ops")
    missing = _cli("stubs", "no_such_module_here", cwd=tmp_path)
    assert missing.returncode == 1 and "cannot import 'no_such_module_here'" in missing.stderr


def test_jaxcc_build_writes_a_pyi_beside_the_bundle(tmp_path):
    source = tmp_path / "bundled.cc"
    source.write_text(SOURCE)
    out = tmp_path / "bundle"
    result = _cli("build", str(source), "--functions", "add_one,scale_by,split", "--out", str(out),
                  cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    _check_stub(out / "bundled.pyi", "bundled")
    loaded = jaxcc.load_library(str(out))  # the stub does not disturb the bundle
    assert float(loaded.add_one(jax.numpy.zeros(1, jax.numpy.float32))[0]) == 1.0
    assert os.path.exists(out / "bundled.pyi")
