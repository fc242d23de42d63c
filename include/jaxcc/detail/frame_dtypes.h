// The decoder's check of the dtypes an arg_spec declares (`arg:float32`, decision 180): each
// declared buffer's element type against the call frame's, before the kernel runs, so a raw
// `jax.ffi.ffi_call` meets the same typed error as jaxcc's own callables. Part of ffi_frame.h,
// which includes it; FrameElement's values are checked against XLA's `XLA_FFI_DataType` here.
#pragma once

#include <new>

#include "jaxcc/check.h"
#include "jaxcc/detail/ffi_common.h"
#include "jaxcc/detail/frame_entry.h"
#include "jaxcc/detail/frame_text.h"
#include "xla/ffi/api/c_api.h"

namespace jaxcc::detail {

static_assert(static_cast<int>(FrameElement::kPred) == XLA_FFI_DataType_PRED &&
              static_cast<int>(FrameElement::kS8) == XLA_FFI_DataType_S8 &&
              static_cast<int>(FrameElement::kS16) == XLA_FFI_DataType_S16 &&
              static_cast<int>(FrameElement::kS32) == XLA_FFI_DataType_S32 &&
              static_cast<int>(FrameElement::kS64) == XLA_FFI_DataType_S64 &&
              static_cast<int>(FrameElement::kU8) == XLA_FFI_DataType_U8 &&
              static_cast<int>(FrameElement::kU16) == XLA_FFI_DataType_U16 &&
              static_cast<int>(FrameElement::kU32) == XLA_FFI_DataType_U32 &&
              static_cast<int>(FrameElement::kU64) == XLA_FFI_DataType_U64 &&
              static_cast<int>(FrameElement::kF16) == XLA_FFI_DataType_F16 &&
              static_cast<int>(FrameElement::kF32) == XLA_FFI_DataType_F32 &&
              static_cast<int>(FrameElement::kF64) == XLA_FFI_DataType_F64 &&
              static_cast<int>(FrameElement::kC64) == XLA_FFI_DataType_C64 &&
              static_cast<int>(FrameElement::kBF16) == XLA_FFI_DataType_BF16 &&
              static_cast<int>(FrameElement::kC128) == XLA_FFI_DataType_C128 &&
              XLA_FFI_DataType_INVALID == 0);

/// Throws the DTypeError of buffer `index` (arguments first, then results) whose element type
/// `given` is not the `declared` one of its arg_spec: names the parameter, both dtypes and the
/// fix. The caller prefixes the function's name. Out of line and cold.
[[noreturn]] JAXCC_BRIDGE_COLD inline void ThrowDeclaredDTypeError(const FrameSpec& spec, int index,
                                                                   int given, int declared) {
  const bool result = index >= spec.num_args;
  const int position = result ? index - spec.num_args : index;
  const char* name = result ? spec.ret_names[position] : spec.arg_names[position];
  const char* kind = result ? "ret" : "arg";
  XlaTypeNameRoom given_room, declared_room;
  const char* given_name = XlaTypeName(given, given_room);
  const char* declared_name = XlaTypeName(declared, declared_room);
  FrameText what;
  if (name != nullptr && name[0] != '\0') {
    what.AddFormat("%s '%s'", result ? "result" : "parameter", name);
  } else {
    what.AddFormat("%s %d", result ? "result" : "argument", position + 1);
  }
  what.AddFormat(" is %s, but the arg_spec declares `%s:%s`; ", given_name, kind, declared_name);
  if (result) {
    what.AddFormat("ask for a result of dtype %s (outs=, or the result type of jax.ffi.ffi_call)",
                   declared_name);
  } else {
    what.AddFormat("cast it before the call (%s.astype(jnp.%s))",
                   name != nullptr && name[0] != '\0' ? name : "x", declared_name);
  }
  what.AddFormat(", or change the spec (`%s:%s`, or a bare `%s` for any dtype)", kind, given_name,
                 kind);
  const int wide[] = {XLA_FFI_DataType_F64, XLA_FFI_DataType_S64, XLA_FFI_DataType_U64,
                      XLA_FFI_DataType_C128};
  for (int type : wide) {
    if (declared == type) {
      what.AddFormat(
          ". JAX makes every %s array 32-bit unless 64-bit types are on: "
          "jax.config.update('jax_enable_x64', True) (or JAX_ENABLE_X64=1)",
          declared_name);
    }
  }
  if (!what.ok()) throw std::bad_alloc();
  throw DTypeError(what.c_str(), DTypeFromXlaCode(given));
}

/// The declared element types (spec.dtypes, decision 180) against the frame's buffers, before
/// any becomes a Tensor (a type no Tensor can describe is then named against the declaration):
/// one compare per buffer; throws ThrowDeclaredDTypeError's error for the first that differs.
/// The check a raw `jax.ffi.ffi_call` meets too, which jaxcc's Python checks never see.
JAXCC_BRIDGE_HOT_INLINE void CheckDeclaredDTypes(const XLA_FFI_CallFrame* frame,
                                                 const FrameSpec& spec) {
  const FrameElement* declared = spec.dtypes;
  for (int i = 0; i < spec.num_args; ++i) {
    const auto given = static_cast<const XLA_FFI_Buffer*>(frame->args.args[i])->dtype;
    if (JAXCC_BRIDGE_UNLIKELY(declared[i] != FrameElement::kAny &&
                              static_cast<int>(declared[i]) != static_cast<int>(given))) {
      ThrowDeclaredDTypeError(spec, i, static_cast<int>(given), static_cast<int>(declared[i]));
    }
  }
  declared += spec.num_args;
  for (int i = 0; i < spec.num_rets; ++i) {
    const auto given = static_cast<const XLA_FFI_Buffer*>(frame->rets.rets[i])->dtype;
    if (JAXCC_BRIDGE_UNLIKELY(declared[i] != FrameElement::kAny &&
                              static_cast<int>(declared[i]) != static_cast<int>(given))) {
      ThrowDeclaredDTypeError(spec, spec.num_args + i, static_cast<int>(given),
                              static_cast<int>(declared[i]));
    }
  }
}

}  // namespace jaxcc::detail
