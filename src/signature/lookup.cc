// Overloads are refused: the FFI target is named after the function, so it must be unique.
#include "signature/lookup.h"

#include "signature/diagnostic.h"
#include "signature/signature_errors.h"

namespace jaxcc::signature {
namespace {

std::string Key(const Declaration& d) {
  std::string key = d.is_template ? "template " : "";
  for (const std::string& ns : d.namespaces) key += "::" + ns;
  key += "::" + d.name + "(";
  for (const ParsedParam& p : d.params) key += p.Key() + ",";
  return key + ")";
}

std::string Note(const Declaration& d, const std::vector<SourceFile>& sources) {
  const SourceFile& source = sources[d.source_index];
  return FormatDiagnostic(source.label, source.text, NameSpan(d), "note",
                          "`" + d.QualifiedSignature() + "` is declared here");
}

Error OverloadError(const std::vector<const Declaration*>& found,
                    const std::vector<SourceFile>& sources) {
  const Declaration& first = *found[0];
  std::vector<const Declaration*> others;
  for (const Declaration* d : found) {
    if (Key(*d) != Key(first)) others.push_back(d);
  }
  std::string message =
      "`" + first.name + "` is overloaded: `" + first.QualifiedSignature() + "` here and " +
      std::to_string(others.size()) + " other declaration" + (others.size() == 1 ? "" : "s") +
      " below differ in parameters or namespace; jaxcc exports one C++ function per name, so "
      "rename the others or export a wrapper with a unique name";
  std::string text = SignatureError(sources[first.source_index], NameSpan(first), message).message;
  for (const Declaration* d : others) text += "\n" + Note(*d, sources);
  return MakeError(ErrorKind::kSignature, text);
}

}  // namespace

DeclarationIndex IndexByName(const std::vector<Declaration>& declarations) {
  DeclarationIndex index;
  for (const Declaration& d : declarations) index[d.name].push_back(&d);
  return index;
}

Result<const Declaration*> FindFunction(const std::string& name, const DeclarationIndex& index,
                                        const std::vector<SourceFile>& sources) {
  auto it = index.find(name);
  if (it == index.end() || it->second.empty()) return static_cast<const Declaration*>(nullptr);
  const std::vector<const Declaration*>& found = it->second;
  bool all_templates = true, same = true;
  for (const Declaration* d : found) {
    all_templates = all_templates && d->is_template;
    same = same && Key(*d) == Key(*found[0]);
  }
  const Declaration& first = *found[0];
  const SourceFile& source = sources[first.source_index];
  if (all_templates) {
    return SignatureError(
        source, NameSpan(first),
        "`" + name +
            "` is a template: jaxcc calls the function with concrete arguments and "
            "cannot choose template arguments; export a non-template wrapper instead, e.g. `void " +
            name + "_f32(const jaxcc::Tensor& x, jaxcc::Tensor& y) { " + name +
            "<float>(x, y); }`");
  }
  if (!same) return OverloadError(found, sources);
  bool kernel = false;
  for (const Declaration* d : found) kernel = kernel || d->is_cuda_kernel;
  if (kernel) {
    return SignatureError(source, NameSpan(first),
                          "`" + name +
                              "` is a `__global__` CUDA kernel, which the host cannot "
                              "call directly; export a host function that launches it");
  }
  const Declaration* chosen = found[0];
  for (const Declaration* d : found) {
    if (d->is_definition) {
      chosen = d;
      break;
    }
  }
  if (!chosen->params_closed) {
    return SignatureError(sources[chosen->source_index], NameSpan(*chosen),
                          "the parameter list of `" + name +
                              "` is never closed: a `)` is missing (or a `(` too many) before "
                              "the end of the declaration; balance the parentheses");
  }
  return chosen;
}

}  // namespace jaxcc::signature
