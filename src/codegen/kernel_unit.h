// The user's translation unit: jaxcc's kernel header, the user's code under #line, then one
// bridge function per exported entry point that calls the user's function with its own types.
#pragma once

#include <string>
#include <vector>

#include "argspec/function_spec.h"

namespace jaxcc::codegen {

/// `label` is what compiler diagnostics print for the user's lines ("<module>" or a real path).
/// `specs` are the functions declared in this source.
std::string GenerateKernelUnit(const std::string& label, const std::string& user_source,
                               const std::vector<argspec::FunctionSpec>& specs);

/// Declaration of the bridge shared by the kernel unit (definition) and the wrapper (call):
/// `void jaxcc_bridge_<f>(::jaxcc::Tensor* args, ::jaxcc::Tensor* rets, std::int64_t stream,
/// [const ::jaxcc::detail::CallContext& context,] <attr types...>)` (the context only for a
/// function with a pool or state). Only jaxcc and standard types appear, so the wrapper unit never
/// needs the user's headers.
std::string BridgeDeclaration(const argspec::FunctionSpec& spec);

/// For a function with a `jaxcc::State<T>&`: the declarations of the kernel unit's factory and
/// deleter of its state (`void* jaxcc_state_new_<f>(<attrs>)`, `void jaxcc_state_delete_<f>(
/// void*) noexcept`), which the wrapper's instantiate stage and XLA's type registry call; "" for
/// any other function.
std::string StateFactoryDeclarations(const argspec::FunctionSpec& spec);

/// `"text"` as a C string literal (for #line file names and messages).
std::string CStringLiteral(const std::string& text);

}  // namespace jaxcc::codegen
