"""The native entry point of the Numba CPU bridge: one Numba `cfunc` per (argument types, return
type), shared by every kernel compiled for those types (decision 91).

    int32_t entry(void** buffers, const int64_t* dims, void* impl)

builds a C-contiguous Numba array for each buffer from its data pointer and its dimensions, calls
`impl`, the address of a kernel's compiled native function (Numba's own calling convention for
those argument types), and returns 1 when the kernel raised. The kernel is not linked into the
entry, so making an entry compiles only the few instructions that build the arrays, and a second
kernel with the same buffer types compiles nothing here: its native function comes from Numba's
ordinary compile of the kernel, the one compile brainevent's bridge pays too.
"""

from __future__ import annotations


def _array_value(context, builder, array_type, data_pointer, dims, first_dim):
    """The Numba array struct of `array_type` over `data_pointer`, C-contiguous, with shape
    dims[first_dim : first_dim + ndim] (no meminfo: XLA owns the buffer)."""
    from numba import types
    from numba.core import cgutils

    intp = context.get_value_type(types.intp)
    element = context.get_data_type(array_type.dtype)
    itemsize = context.get_abi_sizeof(element)
    shape = [
        builder.load(builder.gep(dims, [context.get_constant(types.intp, first_dim + d)]))
        for d in range(array_type.ndim)
    ]
    strides, step = [], context.get_constant(types.intp, itemsize)
    for extent in reversed(shape):
        strides.insert(0, step)
        step = builder.mul(step, extent)
    array = context.make_array(array_type)(context, builder)
    context.populate_array(
        array,
        data=builder.bitcast(data_pointer, element.as_pointer()),
        shape=cgutils.pack_array(builder, shape, intp),
        strides=cgutils.pack_array(builder, strides, intp),
        itemsize=context.get_constant(types.intp, itemsize),
        meminfo=None,
    )
    return array._getvalue()


def make_entry(arg_types: tuple, return_type):
    """A compiled `cfunc` for kernels whose native signature is `return_type(*arg_types)` (every
    argument an array type). Returns the numba CFunc object (keep it alive; `.address`)."""
    import numba
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def call_kernel(typingctx, buffers, dims, impl):
        def codegen(context, builder, signature, args):
            buffer_array, dim_array, impl_pointer = args
            arrays, used = [], 0
            for i, array_type in enumerate(arg_types):
                slot = builder.gep(buffer_array, [context.get_constant(types.intp, i)])
                arrays.append(
                    _array_value(context, builder, array_type, builder.load(slot), dim_array, used)
                )
                used += array_type.ndim
            call_conv = context.call_conv
            function_type = call_conv.get_function_type(return_type, arg_types)
            callee = builder.bitcast(impl_pointer, function_type.as_pointer())
            status, result = call_conv.call_function(
                builder, callee, return_type, arg_types, arrays
            )
            if context.enable_nrt and return_type != types.none:
                # A value the kernel returned (outputs are written in place) is dropped here.
                context.nrt.decref(builder, return_type, result)
            one, zero = ir.Constant(ir.IntType(32), 1), ir.Constant(ir.IntType(32), 0)
            return builder.select(status.is_error, one, zero)

        return types.int32(buffers, dims, impl), codegen

    signature = types.int32(
        types.CPointer(types.voidptr), types.CPointer(types.int64), types.voidptr
    )

    def entry(buffers, dims, impl):
        return call_kernel(buffers, dims, impl)

    return numba.cfunc(signature)(entry)
