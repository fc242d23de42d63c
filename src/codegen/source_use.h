// What a kernel source may use of the standard library, so that its kernel unit can leave the
// headers it does not need out: <complex> (decision 108) and the iostreams (decision 129). nvcc
// parses every header of a kernel unit once per architecture and once for the host.
#pragma once

#include <string>

namespace jaxcc::codegen {

/// False only when no identifier of `source` outside comments and literals contains "complex" in
/// any case (std::complex, jaxcc::complex64_t, DType::Complex64, BE_DISPATCH_COMPLEX, cuComplex)
/// or ends in "DISPATCH_ALL" (JAXCC_/BE_DISPATCH_ALL, whose body is instantiated with the complex
/// types). Errs towards true: a wrong true costs the <complex> parse, a wrong false a compile
/// error, so anything the scan cannot classify is read as code.
bool MayUseStdComplex(const std::string& source);

/// False only when no identifier of `source` outside comments and literals names a stream, a
/// stream header, a standard stream object or a manipulator (ostream, iostream, sstream, cout,
/// endl, setw, ...; the manipulators whose names are common words, such as `hex`, `left` or
/// `fixed`, only as `std::hex`, or anywhere in a source that says `using namespace std`), and
/// no `operator<<` is declared. Errs towards true like MayUseStdComplex: a wrong true costs the
/// <ostream> parse, a wrong false a compile error in the user's unit.
bool MayUseStreams(const std::string& source);

}  // namespace jaxcc::codegen
