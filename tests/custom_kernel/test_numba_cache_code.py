"""What a Numba cache entry holds: the machine code Numba's own compile generated, its global
symbols renamed after the entry's key (decision 126); where that code is not there, the kernel's
code generated once more, alone (decision 125)."""

import json
import re
import subprocess

import jax
import jax.numpy as jnp
import numba
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llvmlite import binding
from numba import types

import jaxcc
from jaxcc.custom_kernel.bridges import numba_cpu_cache_writer, numba_cpu_object


def stored_entry(cache, prefix):
    (entry,) = [p for p in cache.iterdir() if p.name.startswith(prefix)]
    manifest = json.loads((entry / "manifest.json").read_text())
    blob = (entry / manifest["library_file"]).read_bytes()
    return manifest, *numba_cpu_object.split(blob)


def defined_globals(object_path) -> dict[str, str]:
    """name -> binding of every defined global or weak symbol, as binutils reads the object."""
    table = subprocess.run(["readelf", "-sW", str(object_path)], capture_output=True, text=True,
                           check=True).stdout  # fmt: skip
    found = {}
    for line in table.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[4] in ("GLOBAL", "WEAK") and fields[6] != "UND":
            found[fields[7]] = fields[4]
    return found


def section_names(object_path) -> list[str]:
    table = subprocess.run(["readelf", "-SW", str(object_path)], capture_output=True, text=True,
                           check=True).stdout  # fmt: skip
    return re.findall(r"\[\s*\d+\]\s+(\S*)", table)


def compile_double(factor):
    """A kernel of its own per test (equal code compiles once per process, and is stored once)."""

    @numba.njit
    def double(x, out):
        for i in range(out.size):
            out[i] = factor * x[i]

    x = jnp.arange(3, dtype=jnp.float32)
    with jax.default_device(jax.devices("cpu")[0]):
        y = jax.jit(jaxcc.numba_kernel(double, jax.ShapeDtypeStruct(x.shape, x.dtype)))(x)
    assert y.tolist() == [0.0, factor, 2 * factor]
    numba_cpu_cache_writer.flush()


def test_an_entry_keeps_the_code_numba_generated_under_names_of_its_own(
    fresh_cache, monkeypatch, tmp_path
):
    """No second code generation (which cost 60 ms a kernel in brainevent's tests): with the
    generating path made to fail, the entry is still written, from Numba's own object."""

    def no_second_code_generation(*args):
        raise AssertionError("generated again")

    monkeypatch.setattr(numba_cpu_object, "_generated", no_second_code_generation)
    compile_double(2.0)
    manifest, object_code, bitcode = stored_entry(fresh_cache, "numba_kernel_double")
    (symbol,) = manifest["function_names"]
    assert symbol == "jaxcc_numba_" + manifest["key"][:32]
    path = tmp_path / "entry.o"
    path.write_bytes(object_code)
    names = defined_globals(path)
    assert symbol in names and names[symbol] == "GLOBAL"
    assert all(name.startswith("jaxcc_numba_" + manifest["key"][:24]) for name in names), names
    # The bitcode Numba keeps beside the object defines the same names.
    module = binding.parse_bitcode(bitcode)
    local = (binding.Linkage.internal, binding.Linkage.private)
    external = {
        v.name
        for v in (*module.functions, *module.global_variables)
        if not v.is_declaration and v.linkage not in local
    }
    assert symbol in external and external <= set(names) | {symbol}


def test_without_numba_s_object_the_kernel_alone_is_generated(fresh_cache, monkeypatch):
    """The fallback (decision 125): the kernel under its key's name, everything else internal,
    Numba's CPython and cfunc wrappers dropped."""
    monkeypatch.setattr(numba_cpu_object, "_needs_runtime", lambda library: True)
    compile_double(3.0)
    manifest, _, bitcode = stored_entry(fresh_cache, "numba_kernel_double")
    (symbol,) = manifest["function_names"]
    assert symbol == "jaxcc_numba_" + manifest["key"][:32]
    module = binding.parse_bitcode(bitcode)
    external = [
        v.name
        for v in (*module.functions, *module.global_variables)
        if not v.is_declaration and v.linkage != binding.Linkage.internal
    ]
    assert external == [symbol]
    if not hasattr(binding, "create_new_module_pass_manager"):
        pytest.skip("this llvmlite keeps unreachable internal code (no new pass manager)")
    defined = [f.name for f in module.functions if not f.is_declaration]
    assert not any(name.startswith(("_ZN7cpython", "cfunc.")) for name in defined), defined


@pytest.fixture(scope="module")
def numba_object():
    """A real object from Numba's JIT and its defined global symbols."""

    @numba.njit
    def scale(w, out):
        out[:] = 0.0
        for j in range(w.shape[0]):
            out[j] += w[j] * 3

    signature = (types.float32[::1], types.float32[::1])
    scale.compile(signature)
    return scale.overloads[signature].library._get_compiled_object()


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_renaming_changes_the_chosen_symbols_and_nothing_else(numba_object, tmp_path_factory, data):
    before = tmp_path_factory.mktemp("elf") / "before.o"
    before.write_bytes(numba_object)
    original = defined_globals(before)
    chosen = data.draw(st.sets(st.sampled_from(sorted(original))))
    new_names = {
        old: data.draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1))
        + f"_{i}"
        for i, old in enumerate(sorted(chosen))
    }
    renamed_object, renamed = numba_cpu_object.rename_symbols(numba_object, new_names)
    assert renamed == chosen
    after = before.with_name("after.o")
    after.write_bytes(renamed_object)
    expected = {new_names.get(name, name): bind for name, bind in original.items()}
    assert defined_globals(after) == expected
    assert section_names(after) == section_names(before)


@settings(max_examples=200, deadline=None)
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=6),
       cut=st.integers(0, 10**6))  # fmt: skip
def test_a_damaged_object_is_a_value_error_or_renamed(numba_object, flips, cut):
    """Whatever the bytes, the renamer answers or raises ValueError (the store then generates
    the code instead): never an IndexError or struct.error out of the writer."""
    data = bytearray(numba_object[: max(cut, 1)] if cut < len(numba_object) else numba_object)
    for at, mask in flips:
        data[at % len(data)] ^= mask
    try:
        numba_cpu_object.rename_symbols(bytes(data), {"anything": "else"})
    except ValueError:
        pass
