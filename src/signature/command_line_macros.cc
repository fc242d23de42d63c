// A `-D` is read as the `#define` it stands for (`-DNAME=VALUE` is `#define NAME VALUE`), so one
// parser owns what a definition is.
#include "signature/command_line_macros.h"

#include <string_view>

namespace jaxcc::signature {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::optional<MacroDefinition> DefineFromFlag(const std::string& value, const std::string& flag) {
  std::string text = "#define " + value;
  size_t eq = text.find('=');
  // `-DX` is 1; `-DX=v` is v; `-DF(a)=a` keeps its parameter list (no `=` inside it).
  if (eq == std::string::npos) {
    text += " 1";
  } else {
    text[eq] = ' ';
  }
  std::vector<Token> tokens = Lex(text);
  if (tokens.empty() || tokens[0].kind != TokenKind::kPreprocessor) return std::nullopt;
  std::optional<MacroDefinition> macro = ParseDefine(tokens[0]);
  if (!macro) return std::nullopt;
  // Nowhere in any source: no note may point into a file at these positions.
  auto away = [](Token* t) {
    t->line = 0;
    t->column = 0;
    t->offset = 0;
  };
  away(&macro->name_token);
  for (Token& t : macro->body) away(&t);
  macro->end_offset = 0;
  macro->flag = flag;
  return macro;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$';
    if (!ok) return false;
  }
  return true;
}

// The macro name of a `-D` value: up to `=` or `(`.
std::string NameOf(std::string_view value) {
  size_t end = value.find_first_of("=(");
  return std::string(value.substr(0, end));
}

}  // namespace

// Flags whose value is the next argument: that value is never a `-D` of its own (`-I -Dx` names
// a directory), and what `-Xcompiler -DX` gives nvcc's host pass only is not read either.
bool TakesSeparateValue(const std::string& flag) {
  static const char* const kFlags[] = {"-I",
                                       "-isystem",
                                       "-iquote",
                                       "-idirafter",
                                       "-include",
                                       "-imacros",
                                       "-o",
                                       "-x",
                                       "-MF",
                                       "-MT",
                                       "-MQ",
                                       "-L",
                                       "-Xlinker",
                                       "-Xcompiler",
                                       "--compiler-options",
                                       "-Xptxas",
                                       "-Xassembler",
                                       "-Xnvlink",
                                       "-ccbin",
                                       "--compiler-bindir",
                                       "-arch",
                                       "-gencode",
                                       "--include-path"};
  for (const char* f : kFlags) {
    if (flag == f) return true;
  }
  return false;
}

std::vector<CommandLineMacro> MacrosFromFlags(const std::vector<std::string>& flags) {
  std::vector<CommandLineMacro> macros;
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string& f = flags[i];
    if (TakesSeparateValue(f)) {
      ++i;
      continue;
    }
    bool define = false;
    std::string value;
    std::string spelled = f;
    auto take = [&](std::string_view joined, std::string_view separate, bool is_define) {
      if (f == separate && i + 1 < flags.size()) {
        value = flags[++i];
        spelled = f + " " + value;
      } else if (!joined.empty() && StartsWith(f, joined) && f.size() > joined.size()) {
        value = f.substr(joined.size());
      } else {
        return false;
      }
      define = is_define;
      return true;
    };
    if (!take("-D", "-D", true) && !take("-U", "-U", false) &&
        !take("--define-macro=", "--define-macro", true) &&
        !take("--undefine-macro=", "--undefine-macro", false)) {
      continue;
    }
    std::string name = define ? NameOf(value) : value;
    if (!IsIdentifier(name)) continue;
    CommandLineMacro macro{name, std::nullopt, spelled};
    if (define) {
      macro.definition = DefineFromFlag(value, spelled);
      if (!macro.definition) continue;
    }
    macros.push_back(std::move(macro));
  }
  return macros;
}

}  // namespace jaxcc::signature
