#include "pipeline/flag_files.h"

#include <algorithm>

#include "util/fs.h"
#include "util/sha256.h"

namespace jaxcc::pipeline {
namespace {

constexpr int kMaxResponseDepth = 16;

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Options whose next word is a path (compiler driver, nvcc, linker).
bool TakesPathArgument(const std::string& word) {
  static const char* const kOptions[] = {"-include",
                                         "-imacros",
                                         "-I",
                                         "-isystem",
                                         "-idirafter",
                                         "-iquote",
                                         "-iprefix",
                                         "-isysroot",
                                         "--sysroot",
                                         "-B",
                                         "-L",
                                         "-specs",
                                         "--specs",
                                         "--config",
                                         "-load",
                                         "-fplugin",
                                         "-ivfsoverlay",
                                         "-fmodule-file",
                                         "--include-path",
                                         "--library-path",
                                         "--pre-include",
                                         "-T",
                                         "--script",
                                         "--version-script",
                                         "--dynamic-list",
                                         "--retain-symbols-file",
                                         "--just-symbols",
                                         "-R",
                                         "-rpath-link",
                                         "--options-file",
                                         "-optf",
                                         "-Xclang"};
  return std::any_of(std::begin(kOptions), std::end(kOptions),
                     [&](const char* option) { return word == option; });
}

// Options that name a file which must exist to be read: named and absent, the entry holds only
// while it stays absent (the compiler failed or warned without it).
bool NamesInputFile(const std::string& option) {
  static const char* const kOptions[] = {"-include",
                                         "-imacros",
                                         "-specs",
                                         "--specs",
                                         "--config",
                                         "-fplugin",
                                         "-fprofile-use",
                                         "-fauto-profile",
                                         "-fprofile-sample-use",
                                         "-fprofile-instr-use",
                                         "-fprofile-remapping-file",
                                         "-fsanitize-ignorelist",
                                         "-fsanitize-blacklist",
                                         "-fsanitize-coverage-allowlist",
                                         "-fsanitize-coverage-ignorelist",
                                         "-fsanitize-coverage-blocklist",
                                         "-fxray-attr-list",
                                         "-fprofile-list",
                                         "-fpass-plugin",
                                         "-T",
                                         "--script",
                                         "--version-script",
                                         "--dynamic-list",
                                         "--retain-symbols-file",
                                         "--just-symbols",
                                         "-load",
                                         "--pre-include",
                                         "-ivfsoverlay"};
  return std::any_of(std::begin(kOptions), std::end(kOptions),
                     [&](const char* name) { return option == name; });
}

// Options whose argument is an output, a run-time path or a macro, never something the build
// reads.
bool IsNotAnInput(const std::string& option) {
  static const char* const kOptions[] = {
      "-rpath",        "-soname",           "-Map",     "-o",        "-MF", "-MT",
      "-MQ",           "--out-implib",      "-dumpdir", "-dumpbase", "-h",  "--dependency-file",
      "-fprofile-dir", "-fprofile-generate"};
  return std::any_of(std::begin(kOptions), std::end(kOptions),
                     [&](const char* name) { return option == name; }) ||
         StartsWith(option, "-D") || StartsWith(option, "-U");
}

// Options whose directory's files are read as a whole: the programs of a -B prefix, the
// profiles of -fprofile-use=<dir>.
bool ReadsDirectoryFiles(const std::string& option) {
  return option == "-B" || option == "-fprofile-use" || option == "-fauto-profile";
}

class Collector {
 public:
  explicit Collector(FlagFiles& out) : out_(out) {}

  Status Expand(const std::vector<std::string>& words, bool linker, int depth) {
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& word = words[i];
      const bool has_next = i + 1 < words.size();
      if (word.size() > 1 && word[0] == '@') {
        JAXCC_RETURN_IF_ERROR(ResponseFile(word.substr(1), linker, depth));
      } else if (!linker && (word == "--options-file" || word == "-optf") && has_next) {
        JAXCC_RETURN_IF_ERROR(ResponseFile(words[++i], false, depth));
      } else if (!linker && StartsWith(word, "-Wl,")) {
        JAXCC_RETURN_IF_ERROR(Expand(SplitCommas(word.substr(4)), true, depth));
      } else if (!linker && word == "-Xlinker" && has_next) {
        JAXCC_RETURN_IF_ERROR(Expand({words[++i]}, true, depth));
      } else {
        (linker ? out_.linker_words : out_.compiler_words).push_back(word);
      }
    }
    return OkStatus();
  }

  void Scan(const std::vector<std::string>& words) {
    for (size_t i = 0; i < words.size(); ++i) {
      const std::string& word = words[i];
      if ((TakesPathArgument(word) || IsNotAnInput(word)) && i + 1 < words.size()) {
        Consider(words[++i], word);
        continue;
      }
      if (word.empty()) continue;
      if (word[0] != '-') {
        Consider(word, "");  // a path by itself: an object, an archive, a linker script
        continue;
      }
      const size_t equals = word.find('=');
      if (equals != std::string::npos) {
        Consider(word.substr(equals + 1), word.substr(0, equals));
        continue;
      }
      for (const char* prefix : {"-isystem", "-idirafter", "-iquote", "-I", "-L", "-B", "-T"}) {
        if (StartsWith(word, prefix) && word.size() > std::string(prefix).size()) {
          Consider(word.substr(std::string(prefix).size()), prefix);
          break;
        }
      }
    }
  }

 private:
  static std::vector<std::string> SplitCommas(const std::string& list) {
    std::vector<std::string> parts;
    for (size_t start = 0; start <= list.size();) {
      size_t end = list.find(',', start);
      if (end == std::string::npos) end = list.size();
      parts.push_back(list.substr(start, end - start));
      start = end + 1;
    }
    return parts;
  }

  Status ResponseFile(const std::string& name, bool linker, int depth) {
    const std::string path = AbsolutePath(name);
    const FileInfo info = StatPath(path);
    if (!info.exists || info.is_dir) {
      // GCC passes a missing @file on as a word; one created later is read.
      AddAbsent(path);
      (linker ? out_.linker_words : out_.compiler_words).push_back("@" + name);
      return OkStatus();
    }
    if (depth >= kMaxResponseDepth) {
      return MakeError(ErrorKind::kSpec,
                       "response file " + path + " nests more than " +
                           std::to_string(kMaxResponseDepth) +
                           " response files deep (does it name itself?); flatten it or pass "
                           "the flags directly");
    }
    auto text = ReadFile(path);
    if (!text.ok()) {
      return MakeError(ErrorKind::kSpec, "response file " + path +
                                             " cannot be read: " + text.error().message +
                                             "; make it readable or pass the flags directly");
    }
    AddFile(path);
    return Expand(SplitResponseFile(*text), linker, depth + 1);
  }

  void Consider(const std::string& value, const std::string& option) {
    if (value.empty() || value[0] == '-' || IsNotAnInput(option)) return;
    const std::string path = AbsolutePath(value);
    const FileInfo info = StatPath(path);
    if (!info.exists) {
      if (NamesInputFile(option)) AddAbsent(path);
      return;
    }
    if (!info.is_dir) {
      AddFile(path);
      return;
    }
    if (std::find(out_.directories.begin(), out_.directories.end(), path) ==
        out_.directories.end()) {
      out_.directories.push_back(path);
    }
    if (!ReadsDirectoryFiles(option)) return;
    for (const std::string& name : ListDir(path)) {
      const std::string child = JoinPath(path, name);
      const FileInfo child_info = StatPath(child);
      if (child_info.exists && !child_info.is_dir) AddFile(child);
    }
  }

  void AddFile(const std::string& path) {
    if (std::find(out_.files.begin(), out_.files.end(), path) != out_.files.end()) return;
    auto sha = Sha256FileHex(path);
    out_.files.push_back(path);
    out_.key.push_back(path + "\t" + (sha.ok() ? *sha : "unreadable"));
  }

  void AddAbsent(const std::string& path) {
    if (std::find(out_.absent.begin(), out_.absent.end(), path) != out_.absent.end()) return;
    out_.absent.push_back(path);
    out_.key.push_back(path + "\tabsent");
  }

  FlagFiles& out_;
};

}  // namespace

std::vector<std::string> SplitResponseFile(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

Result<FlagFiles> FilesNamedByFlags(const std::vector<std::string>& flags) {
  FlagFiles out;
  Collector collector(out);
  JAXCC_RETURN_IF_ERROR(collector.Expand(flags, /*linker=*/false, 0));
  collector.Scan(out.compiler_words);
  collector.Scan(out.linker_words);
  return out;
}

}  // namespace jaxcc::pipeline
