#include "build/compile_diagnostics.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "util/text.h"

namespace jaxcc::build {
namespace {

// "path:12:5: error: ..." or "path:12: error: ..." (nvcc omits the column sometimes).
bool IsLocatedDiagnostic(const std::string& line, const char* severity) {
  size_t pos = line.find(std::string(": ") + severity);
  if (pos == std::string::npos || pos == 0) return false;
  size_t i = pos;
  int numeric_fields = 0;
  while (i > 0) {
    size_t colon = line.rfind(':', i - 1);
    if (colon == std::string::npos) break;
    std::string field = line.substr(colon + 1, i - colon - 1);
    if (field.empty() || !std::all_of(field.begin(), field.end(), ::isdigit)) break;
    ++numeric_fields;
    i = colon;
  }
  return numeric_fields >= 1;
}

bool IsContinuation(const std::string& line) {
  // g++ prints the offending source line and the caret line indented, or with " | " gutters.
  return !line.empty() && (line[0] == ' ' || line[0] == '\t');
}

// nvcc's front end writes "path(12): error: ..."; rewritten as "path:12: error: ..." so one
// format reaches the user (and the source excerpt) whichever compiler failed.
std::string NormalizeEdgLocation(const std::string& line) {
  for (const char* marker : {"): error:", "): catastrophic error:"}) {
    size_t close = line.find(marker);
    if (close == std::string::npos) continue;
    size_t open = line.rfind('(', close);
    if (open == std::string::npos || open == 0 || open + 1 == close) continue;
    std::string number = line.substr(open + 1, close - open - 1);
    if (!std::all_of(number.begin(), number.end(), ::isdigit)) continue;
    return line.substr(0, open) + ":" + number +
           ": error:" + line.substr(close + std::string(marker).size());
  }
  return line;
}

// "g++: error: ..." or "cc1plus: fatal error: ...": the compiler driver itself, no location.
bool IsDriverError(const std::string& line) {
  if (line.rfind("nvcc fatal", 0) == 0) return true;
  if (line.find("ld returned") != std::string::npos) return false;  // collect2 says only that
  size_t pos = line.find(": error: ");
  if (pos == std::string::npos) pos = line.find(": fatal error: ");
  return pos != std::string::npos && pos > 0 && line.find(' ') > pos;
}

struct Hint {
  const char* needle;
  const char* advice;
};

constexpr const char* kMissingLibraryAdvice =
    "How to fix: install the library, or pass its directory too: "
    "extra_ldflags=['-L<dir>', '-l<name>'].";

// First match wins: newer linkers end "cannot find -lx" with "No such file or directory". A
// missing library in GNU ld's and gold's words, lld's, then mold's.
constexpr Hint kHints[] = {
    {"cannot find -l", kMissingLibraryAdvice},
    {"unable to find library -l", kMissingLibraryAdvice},
    {"library not found: ", kMissingLibraryAdvice},
    {"No such file or directory",
     "How to fix: pass the header's directory in extra_include_paths=[...] (load_cpp_file and "
     "load_cpp_dir also search the source file's own directory)."},
    {"cannot open source file",
     "How to fix: pass the header's directory in extra_include_paths=[...] (load_cuda_file and "
     "load_cuda_dir also search the source file's own directory)."},
    {"unrecognized command-line option",
     "How to fix: remove or correct the flag in extra_cflags (extra_cuda_cflags for nvcc)."},
    {"Unknown option",
     "How to fix: remove or correct the flag in extra_cuda_cflags (extra_cflags for the host "
     "compiler)."},
};

}  // namespace

namespace {

// The symbol a linker reports undefined, in each linker's words: GNU ld "undefined reference to
// `sym'", gold the same with 'sym', lld and mold "undefined symbol: sym" (decision 161a made
// gold, lld or mold the usual linker). "" when the text names none.
std::string UndefinedSymbol(const std::string& text) {
  for (const char* marker : {"undefined reference to `", "undefined reference to '"}) {
    size_t at = text.find(marker);
    if (at == std::string::npos) continue;
    size_t begin = at + std::string(marker).size();
    size_t end = text.find('\'', begin);
    return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  }
  const std::string marker = "undefined symbol: ";
  size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  size_t begin = at + marker.size();
  size_t end = text.find_first_of("\n", begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The names a kernel unit declares only when a function it loads takes a pool or state: their
// headers cost about 0.2 s of every compile (docs/usage.md, "Using the whole machine"), so code
// that uses them elsewhere must include them itself, and the compiler only says "undeclared".
struct UnitOptionalName {
  const char* name;
  const char* header;
  const char* what;  // the subject and verb of the hint
  const char* parameter;
};
constexpr UnitOptionalName kUnitOptionalNames[] = {
    {"ThreadPool", "jaxcc/parallel.h", "jaxcc::ThreadPool and jaxcc::parallel_for are", "a pool"},
    {"parallel_for", "jaxcc/parallel.h", "jaxcc::ThreadPool and jaxcc::parallel_for are", "a pool"},
    {"State", "jaxcc/state.h", "jaxcc::State is", "a state"},
};

// Whether the diagnostic line says `name` of namespace jaxcc (or brainevent's BE, which names the
// same types) is undeclared, in g++'s, Clang's or nvcc's words:
//   g++    'jaxcc::ThreadPool' has not been declared; 'parallel_for' is not a member of 'BE'
//   Clang  no type named 'ThreadPool' in namespace 'jaxcc'
//   nvcc   namespace "jaxcc" has no member "ThreadPool"
bool SaysUndeclared(const std::string& diagnostic, const std::string& name) {
  // The message only: the location before it is a path, often under a cache named jaxcc.
  const size_t error = diagnostic.find("error:");
  if (error == std::string::npos) return false;
  const std::string line = diagnostic.substr(error);
  bool named = false;
  for (const char* open : {"\u2018", "'", "\"", "::"}) {  // g++'s curly quotes, or plain ones
    for (const char* close : {"\u2019", "'", "\""}) {
      named = named || line.find(open + name + close) != std::string::npos;
    }
  }
  if (!named) return false;
  bool ours = line.find("jaxcc") != std::string::npos;
  for (const char* be : {"\u2018BE\u2019", "'BE'", "\"BE\"", "BE::"}) {
    ours = ours || line.find(be) != std::string::npos;
  }
  bool undeclared = false;
  for (const char* words : {"has not been declared", "is not a member of", "does not name a",
                            "in namespace", "has no member", "was not declared"}) {
    undeclared = undeclared || line.find(words) != std::string::npos;
  }
  return ours && undeclared;
}

// Looks at every error line: a failed build's message holds the first error of each failed step.
std::string UnitOptionalNameHint(const std::string& message) {
  for (const std::string& line : SplitLines(message)) {
    for (const UnitOptionalName& entry : kUnitOptionalNames) {
      if (!SaysUndeclared(line, entry.name)) continue;
      return std::string("How to fix: ") + entry.what + " declared in " + entry.header +
             ", which a kernel unit includes only when a function it loads takes " +
             entry.parameter + " (docs/usage.md, \"Using the whole machine\"): add `#include \"" +
             entry.header + "\"` at the top of the source.";
    }
  }
  return "";
}

}  // namespace

std::string FixHint(const std::string& first_error) {
  if (first_error.find("cannot find -l") == std::string::npos &&
      first_error.find("unable to find library -l") == std::string::npos &&
      first_error.find("library not found: ") == std::string::npos) {
    const std::string symbol = UndefinedSymbol(first_error);
    if (symbol.rfind("GOMP_", 0) == 0) {
      return "How to fix: the code uses OpenMP (#pragma omp): pass -fopenmp in extra_cflags "
             "(jaxcc links with it too).";
    }
    if (symbol.rfind("omp_", 0) == 0) {
      return "How to fix: the code calls the OpenMP runtime: pass -fopenmp in extra_cflags "
             "(jaxcc links with it too).";
    }
    if (!symbol.empty()) {
      return "How to fix: define the symbol in the sources, or link the library that defines it "
             "with extra_ldflags=['-l<name>'] (and '-L<dir>').";
    }
  }
  if (std::string hint = UnitOptionalNameHint(first_error); !hint.empty()) return hint;
  // A full disk fails the compiler, the assembler and the linker with texts that would read as
  // a missing header ("can't create kernel_0.o: No such file or directory", issue 49 item 19).
  if (first_error.find("No space left on device") != std::string::npos ||
      first_error.find("Disk quota exceeded") != std::string::npos) {
    return "How to fix: the disk is full: free space there, or point $JAXCC_CACHE_DIR (and "
           "$TMPDIR) at a disk with room.";
  }
  // The driver could not start a program of its own: g++ "fatal error: cannot execute 'as':
  // execvp: No such file or directory" read as a missing header before.
  if (first_error.find("cannot execute") != std::string::npos ||
      first_error.find("unable to execute command") != std::string::npos) {
    return "How to fix: the compiler cannot start a program of its own (the assembler `as`, the "
           "linker): install binutils (Debian/Ubuntu: apt-get install binutils), or add the "
           "directory that holds it to PATH.";
  }
  // Only the preprocessor's "fatal error: <header>: No such file or directory" is a missing
  // header; the assembler's "Fatal error: can't create ...: No such file" is not.
  const bool missing_header = first_error.find("fatal error: ") != std::string::npos;
  for (const Hint& hint : kHints) {
    if (first_error.find(hint.needle) == std::string::npos) continue;
    if (std::string(hint.needle) == "No such file or directory" && !missing_header) continue;
    return hint.advice;
  }
  return "";
}

namespace {

// The parenthesised text that starts at `open` (nesting respected), without the parentheses.
std::string Parenthesised(const std::string& line, size_t open) {
  int depth = 0;
  for (size_t i = open; i < line.size(); ++i) {
    if (line[i] == '(') ++depth;
    if (line[i] == ')' && --depth == 0) return line.substr(open + 1, i - open - 1);
  }
  return "";
}

// The type of the user's function as the binder's failed call shows it.
std::string CompilerSideType(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    size_t bind = line.find("::Bind(");
    if (bind != std::string::npos && line.find("jaxcc_read_") != std::string::npos &&
        line.find("no matching function") != std::string::npos) {
      return Parenthesised(line, bind + 6);
    }
    size_t types = line.find("argument types are: (");
    if (types != std::string::npos) return Parenthesised(line, types + 20);
  }
  return "";
}

}  // namespace

std::optional<std::string> SignatureProofFailure(const std::string& output) {
  std::string first = FirstError(output);
  if (first.find("jaxcc signature proof") == std::string::npos) return std::nullopt;
  std::string type = CompilerSideType(SplitLines(output));
  if (type.find("unresolved overloaded function") != std::string::npos) {
    return first + "\nthe compiler sees several overloads of that name, none with these types";
  }
  if (!type.empty()) return first + "\nthe compiler declares it as `" + type + "`";
  return first;
}

std::string FirstError(const std::string& output) {
  std::vector<std::string> lines = SplitLines(output);
  for (std::string& line : lines) line = NormalizeEdgLocation(line);
  for (const char* severity : {"error:", "fatal error:"}) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!IsLocatedDiagnostic(lines[i], severity)) continue;
      std::string result = lines[i];
      // Include an "In function ..." context line when the compiler printed one just before.
      if (i > 0 && lines[i - 1].find("In function") != std::string::npos) {
        result = lines[i - 1] + "\n" + result;
      }
      for (size_t j = i + 1; j < lines.size() && j < i + 8 && IsContinuation(lines[j]); ++j) {
        result += "\n" + lines[j];
      }
      return result;
    }
  }
  // GNU ld names the symbol on the "undefined reference" line and the caller on the line before
  // (gold on the same line); lld and mold say "undefined symbol" and where it is referenced on
  // the ">>>" lines after.
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("undefined symbol: ") != std::string::npos) {
      std::string result = lines[i];
      for (size_t j = i + 1; j < lines.size() && j < i + 4 && lines[j].rfind(">>>", 0) == 0; ++j) {
        result += "\n" + lines[j];
      }
      return result;
    }
    if (lines[i].find("undefined reference") == std::string::npos) continue;
    if (i > 0 && lines[i - 1].find("in function") != std::string::npos) {
      return lines[i - 1] + "\n" + lines[i];
    }
    return lines[i];
  }
  for (const std::string& line : lines) {
    if (line.find("ld: ") != std::string::npos) return line;
  }
  for (const std::string& line : lines) {
    if (IsDriverError(line)) return line;
  }
  size_t start = lines.size() > 40 ? lines.size() - 40 : 0;
  std::string tail;
  for (size_t i = start; i < lines.size(); ++i) tail += (tail.empty() ? "" : "\n") + lines[i];
  return tail;
}

bool ParseNinjaStatus(const std::string& line, int* finished, int* total) {
  const std::string prefix = kNinjaStatusPrefix;
  if (line.compare(0, prefix.size(), prefix) != 0) return false;
  size_t slash = line.find('/', prefix.size());
  size_t close = line.find(']', prefix.size());
  if (slash == std::string::npos || close == std::string::npos || slash > close) return false;
  try {
    *finished = std::stoi(line.substr(prefix.size(), slash - prefix.size()));
    *total = std::stoi(line.substr(slash + 1, close - slash - 1));
  } catch (const std::exception&) {
    return false;
  }
  return *finished >= 0 && *total >= *finished;
}

std::vector<std::string> FailedStepOutputs(const std::string& output) {
  std::vector<std::string> failed;
  bool inside = false;
  for (const std::string& line : SplitLines(output)) {
    int finished = 0, total = 0;
    bool ends = ParseNinjaStatus(line, &finished, &total) || line.rfind("ninja: ", 0) == 0;
    if (line.rfind("FAILED: ", 0) == 0) {
      failed.emplace_back();
      inside = true;
      continue;
    }
    if (ends) inside = false;
    if (inside) failed.back() += line + "\n";
  }
  return failed;
}

std::string FailedBuildMessage(const std::string& output) {
  std::vector<std::string> failed = FailedStepOutputs(output);
  if (failed.size() < 2) return FirstError(output);
  std::string message =
      std::to_string(failed.size()) + " build steps failed; the first error of each, in order:";
  for (const std::string& step : failed) message += "\n\n" + FirstError(step);
  return message;
}

}  // namespace jaxcc::build
