#include "bindings/raise_error.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace jaxcc::bindings {
namespace {

const char* ClassName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kSpec:
      return "SpecError";
    case ErrorKind::kSignature:
      return "SignatureError";
    case ErrorKind::kCompile:
      return "CompileError";
    case ErrorKind::kToolchain:
      return "ToolchainError";
    case ErrorKind::kLoad:
      return "LoadError";
    case ErrorKind::kRegistration:
      return "RegistrationError";
    case ErrorKind::kCache:
      return "CacheError";
    case ErrorKind::kIo:
      return "JaxccError";
    case ErrorKind::kBundle:
      return "BundleError";
  }
  return "JaxccError";
}

// Messages quote compiler output and user text, which need not be valid UTF-8; a strict
// conversion would turn the real error into a UnicodeDecodeError.
nb::object Text(const std::string& text) {
  PyObject* decoded =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (!decoded) throw nb::python_error();
  return nb::steal(decoded);
}

}  // namespace

void RaiseError(const Error& error) {
  nb::object errors = nb::module_::import_("jaxcc.errors");
  nb::object cls = errors.attr(ClassName(error.kind));
  nb::object log_path = error.log_path.empty() ? nb::none() : Text(error.log_path);
  nb::object instance = cls(Text(error.message), nb::arg("log_path") = log_path);
  PyErr_SetObject(cls.ptr(), instance.ptr());
  throw nb::python_error();
}

}  // namespace jaxcc::bindings
