"""The machine code of a Numba cache entry (numba_cpu_cache.py stores and loads the files):
what `serialized` writes and `split` reads back.

An entry's file is the kernel's machine code, a relocatable ELF object that a later process links
without generating code, followed by the bitcode Numba keeps beside it, framed by the object's
length. Numba's mangled names carry per-process counters, so the entry's global symbols are
renamed after its key: otherwise they would clash in the loading process.

The code comes from Numba's own compile where it can (decision 126): Numba compiles every nopython
library with object caching on, so its JIT hands back the object it linked in memory. An ELF
object names its symbols through offsets into a string table, so renaming them is a copy of the
table with the new names appended, the symbols pointed at those, the copy placed at the end of the
file and its section header moved there: old offsets stay valid (section names may share the
table) and relocations name symbols by index, so nothing else moves. Where that object is not
there (or the kernel calls Numba runtime functions its library does not define), the module is
generated once more, the kernel alone (decision 125).
"""

from __future__ import annotations

import hashlib
import struct

from .numba_cpu_values import Unkeyable

_SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
_SHT_SYMTAB = 2
_SHN_UNDEF = 0
_STB_GLOBAL, _STB_WEAK = 1, 2
_ET_REL = 1


def serialized(library, key: str, symbol: str) -> tuple[bytes, str]:
    """(the file's bytes, the new name of `symbol`): the machine code Numba generated for the
    library, renamed, when it is there; else the kernel's code generated once more."""
    try:
        object_code = library._get_compiled_object()
    except (AttributeError, ValueError, RuntimeError):  # not cached by this Numba, or not yet
        object_code = None
    if isinstance(object_code, bytes) and not _needs_runtime(library):
        try:
            return _reused(library, object_code, key, symbol)
        except ValueError:
            pass  # not an object this reader knows: generate it instead
    return _generated(library, key, symbol)


def _new_name(key: str, old: str, symbol: str) -> str:
    if old == symbol:
        return f"jaxcc_numba_{key[:32]}"
    return f"jaxcc_numba_{key[:24]}_{hashlib.sha256(old.encode()).hexdigest()[:16]}"


def _needs_runtime(library) -> bool:
    """Whether the library calls LLVM functions of Numba's runtime that it does not define
    (NRT_incref... compiled once per process): its object would need them in the loading
    process, so the generated path links them in instead."""
    from numba.core.runtime import rtsys

    if not rtsys._init:
        return False
    declared = {f.name for f in library._final_module.functions if f.is_declaration}
    return bool(declared & {f.name for f in rtsys.library._final_module.functions
                            if not f.is_declaration})  # fmt: skip


def _reused(library, object_code: bytes, key: str, symbol: str) -> tuple[bytes, str]:
    """The object Numba's JIT linked, its global symbols renamed, and the final module's
    bitcode renamed the same way."""
    from llvmlite import binding

    module = binding.parse_bitcode(library._final_module.as_bitcode())
    local = (binding.Linkage.internal, binding.Linkage.private)
    names = {}
    for value in (*module.functions, *module.global_variables):
        if not value.is_declaration and value.linkage not in local:
            names[value.name] = _new_name(key, value.name, symbol)
            value.name = names[value.name]
    renamed_object, renamed = rename_symbols(object_code, names)
    if symbol not in renamed:
        raise ValueError(f"{symbol} is not a global symbol of the object")
    return _framed(renamed_object, module.as_bitcode()), names[symbol]


def _framed(object_code: bytes, bitcode: bytes) -> bytes:
    return len(object_code).to_bytes(8, "little") + object_code + bitcode


def _generated(library, key: str, symbol: str) -> tuple[bytes, str]:
    """(the file's bytes, the new name of `symbol`): the library's final module with Numba's
    runtime functions it calls linked in, `symbol` renamed after `key` and everything else made
    internal and dropped where `symbol` does not reach it, as machine code (what a later process
    loads without generating code) followed by its bitcode (what Numba keeps beside it), framed by
    the machine code's length.

    Internal symbols cannot collide with another entry's in the loading process, so only `symbol`
    needs a name of its own; and the code generation, the whole cost of a store, covers only the
    kernel: Numba's CPython and cfunc wrappers, which jaxcc never calls, were half of it
    (decision 125)."""
    from llvmlite import binding
    from numba.core.runtime import rtsys

    module = binding.parse_bitcode(library._final_module.as_bitcode())
    if _needs_runtime(library):
        # Linked in, a later process need not compile the runtime before loading this code.
        module.link_in(binding.parse_bitcode(rtsys.library._final_module.as_bitcode()))
    new_symbol = _new_name(key, symbol, symbol)
    found = False
    for value in (*module.functions, *module.global_variables):
        if value.is_declaration:
            continue
        if value.name == symbol:
            value.name, found = new_symbol, True
        else:
            value.linkage = "internal"
    if not found:
        raise Unkeyable(f"{symbol} is not defined in its library")
    _drop_unreachable(module, library.codegen._tm)
    object_code = library.codegen._tm.emit_object(module)
    bitcode = module.as_bitcode()
    return _framed(object_code, bitcode), new_symbol


def _drop_unreachable(module, target_machine) -> None:
    """LLVM's global dead-code elimination over the module: the internal functions and globals
    that the one external symbol does not use. Left as they are where this llvmlite lacks the
    new pass manager (older than 0.44): still correct, only a larger store."""
    from llvmlite import binding

    try:
        passes = binding.create_new_module_pass_manager()
        passes.add_global_dead_code_eliminate_pass()
        builder = binding.create_pass_builder(target_machine,
                                              binding.create_pipeline_tuning_options())  # fmt: skip
    except AttributeError:
        return
    passes.run(module, builder)


def split(blob: bytes) -> tuple[bytes, bytes]:
    """(machine code, bitcode) of a file written by `serialized`; ValueError when malformed."""
    size = int.from_bytes(blob[:8], "little")
    object_code, bitcode = blob[8 : 8 + size], blob[8 + size :]
    if len(blob) < 8 or len(object_code) != size or not object_code or not bitcode:
        raise ValueError("malformed numba cache file")
    return object_code, bitcode


def rename_symbols(data: bytes, names: dict[str, str]) -> tuple[bytes, set[str]]:
    """(the object with every defined global or weak symbol named in `names` renamed, the old
    names renamed). ValueError for anything but a well-formed 64-bit little-endian relocatable
    ELF object with one symbol table."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF object")
    (e_type,) = struct.unpack_from("<H", data, 16)
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    if e_type != _ET_REL or e_shentsize != _SECTION_HEADER.size:
        raise ValueError("not a relocatable ELF object")
    if e_shoff + e_shnum * e_shentsize > len(data):
        raise ValueError("section headers past the end of the object")
    headers = [_SECTION_HEADER.unpack_from(data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    tables = [i for i, header in enumerate(headers) if header[1] == _SHT_SYMTAB]
    if len(tables) != 1:
        raise ValueError(f"{len(tables)} symbol tables")
    _, _, _, _, symbols_at, symbols_size, strings_index, _, _, entry_size = headers[tables[0]]
    if entry_size != _SYMBOL.size or strings_index >= e_shnum:
        raise ValueError("malformed symbol table")
    strings_at, strings_size = headers[strings_index][4], headers[strings_index][5]
    if symbols_at + symbols_size > len(data) or strings_at + strings_size > len(data):
        raise ValueError("a table past the end of the object")
    old_strings = data[strings_at : strings_at + strings_size]
    strings = bytearray(old_strings)
    out = bytearray(data)
    renamed: set[str] = set()
    for at in range(symbols_at, symbols_at + symbols_size - _SYMBOL.size + 1, _SYMBOL.size):
        st_name, st_info, st_other, st_shndx, st_value, st_size = _SYMBOL.unpack_from(data, at)
        if st_shndx == _SHN_UNDEF or st_info >> 4 not in (_STB_GLOBAL, _STB_WEAK):
            continue
        end = old_strings.find(b"\0", st_name)
        if end < 0:
            raise ValueError("a symbol name runs past its string table")
        old_name = old_strings[st_name:end].decode("utf-8", "replace")
        new_name = names.get(old_name)
        if new_name is None:
            continue
        _SYMBOL.pack_into(out, at, len(strings), st_info, st_other, st_shndx, st_value, st_size)
        strings += new_name.encode() + b"\0"
        renamed.add(old_name)
    header_at = e_shoff + strings_index * e_shentsize
    fields = list(headers[strings_index])
    fields[4], fields[5] = len(out), len(strings)
    _SECTION_HEADER.pack_into(out, header_at, *fields)
    return bytes(out + strings), renamed
