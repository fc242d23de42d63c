// The data model shared by every stage: one FunctionSpec per exported kernel entry point.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "argspec/element_type.h"

namespace jaxcc::argspec {

/// The role a C++ parameter plays in the XLA FFI call. kPool, kState and kAsync are what a
/// function takes from XLA beyond buffers and attributes (decision 94): its thread pool
/// (`jaxcc::ThreadPool&`), per-call-site state (`jaxcc::State<T>&`), asynchronous execution
/// (`jaxcc::Async`); the generated handler asks XLA only for these.
/// kScratch (`jaxcc::Scratch`) is a hidden extra result buffer sized at trace time;
/// kScratchAlloc (`jaxcc::ScratchAllocator&`) allocates while the call runs (decision 105).
enum class ParamKind { kArg, kRet, kStream, kAttr, kPool, kState, kAsync, kScratch, kScratchAlloc };

/// Scalar attribute types that XLA FFI can deliver. Float16/BFloat16 travel as raw uint16 bits.
enum class AttrType {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kFloat16,   ///< C++ side sees uint16_t bits
  kBFloat16,  ///< C++ side sees uint16_t bits
};

/// One parameter of the user's function, in the user's order.
struct Param {
  ParamKind kind = ParamKind::kArg;
  std::string name;  ///< attr name for kAttr; the C++ parameter name when known, else ""
  /// Set for kAttr once the type is known (explicit `:type` or inferred from the signature).
  std::optional<AttrType> attr_type;
  /// The C++ parameter type jaxcc read, spelled for the compiler to prove (decision 147):
  /// `const ::jaxcc::Tensor&`, `::jaxcc::Tensor`, `float`, `const double&`; "" where jaxcc has
  /// no exact type to claim (a stream, pool, state or async parameter, a tensor without a
  /// declaration), which the proof leaves to the compiler's deduction.
  std::string cpp_type;
  /// For kArg and kRet: the dtype the spec declares (`arg:float32`), which a call must pass
  /// (checked in Python before the call is staged, decision 158); nullopt = any dtype.
  std::optional<ElementType> dtype;
};

/// Everything the code generator needs to know about one entry point.
struct FunctionSpec {
  std::string name;  ///< unqualified C++ name, also the FFI target suffix
  /// Namespace path used to call the function from global scope, e.g. {"ops", "detail"}.
  std::vector<std::string> namespaces;
  std::vector<Param> params;
  /// Which source (translation unit) declares the function; the bridge call is emitted there.
  int source_index = 0;
  /// Line in that source where the user states the signature (the annotation, else the
  /// declaration or the macro invocation that stamps it out); 0 if unknown. The compiler's
  /// proof of the signature reports there.
  int line = 0;
  /// Column (1-based) of the function's name on `line`, 0 if unknown: the proof's error puts its
  /// caret there (decision 158's note on decision 147).
  int column = 0;
  /// Sharding rule (argspec/sharding_rule.h), canonically spaced; "" = none. Not part of the
  /// cache key: it changes how JAX partitions calls, not the library.
  std::string sharding_rule;

  int CountOf(ParamKind kind) const {
    int n = 0;
    for (const Param& p : params) n += p.kind == kind ? 1 : 0;
    return n;
  }
  int num_args() const { return CountOf(ParamKind::kArg); }
  int num_rets() const { return CountOf(ParamKind::kRet); }
  bool has_stream() const { return CountOf(ParamKind::kStream) > 0; }
  bool has_pool() const { return CountOf(ParamKind::kPool) > 0; }
  bool has_state() const { return CountOf(ParamKind::kState) > 0; }
  bool is_async() const { return CountOf(ParamKind::kAsync) > 0; }
  bool has_scratch() const { return CountOf(ParamKind::kScratch) > 0; }
  bool has_scratch_alloc() const { return CountOf(ParamKind::kScratchAlloc) > 0; }
  /// The types the kernel unit makes the compiler prove and the line it reports at, for the
  /// cache key: a library built without that proof, or proving others, is another entry.
  std::string ProofKey() const;
  /// Needs the bridge's CallContext (pool, state or scratch allocator).
  bool has_context() const { return has_pool() || has_state() || has_scratch_alloc(); }
};

/// Spelling helpers shared by the parser, the code generator and the Python layer.
const char* ParamKindName(ParamKind kind);  ///< "arg", "ret", "stream", "attr", "pool", ...
std::optional<ParamKind> ParamKindFromName(const std::string& name);
const char* AttrTypeName(AttrType type);     ///< "float32", "bfloat16", ...
const char* AttrTypeCppName(AttrType type);  ///< "float", "uint16_t", ...
std::optional<AttrType> AttrTypeFromName(const std::string& name);
/// Every valid arg_spec type name, comma-separated, for error messages: "bool, int8, ...".
std::string AttrTypeNameList();

}  // namespace jaxcc::argspec
