// Whether a kernel source may need std::complex complete, so that its kernel unit can leave
// <complex> out otherwise (decision 108).
#pragma once

#include <string>

namespace jaxcc::codegen {

/// False only when no identifier of `source` outside comments and literals contains "complex" in
/// any case (std::complex, jaxcc::complex64_t, DType::Complex64, BE_DISPATCH_COMPLEX, cuComplex)
/// or ends in "DISPATCH_ALL" (JAXCC_/BE_DISPATCH_ALL, whose body is instantiated with the complex
/// types). Errs towards true: a wrong true costs the <complex> parse, a wrong false a compile
/// error, so anything the scan cannot classify is read as code.
bool MayUseStdComplex(const std::string& source);

}  // namespace jaxcc::codegen
