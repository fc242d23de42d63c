#include "pipeline/build_plan.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "codegen/ffi_wrapper.h"
#include "codegen/kernel_unit.h"
#include "pipeline/compile_database.h"
#include "pipeline/debug_profile.h"
#include "pipeline/sanitizer_runtime.h"
#include "toolchain/cuda_arch.h"
#include "util/fs.h"

namespace jaxcc::pipeline {
namespace {

std::vector<std::string> CommonFlags(const std::string& optimization) {
  return {"-std=c++17", optimization, "-fPIC", "-fvisibility=hidden",
          "-fvisibility-inlines-hidden"};
}

std::string UserOptimization(const LoadRequest& request) {
  return "-O" + std::to_string(request.optimization_level);
}

// Whether the compiler of `version` (the first line of its --version) takes -falign-loops=N:
// GCC always, Clang from 13 on; nothing else is assumed to.
bool TakesAlignLoops(const std::string& version) {
  if (toolchain::IsClangVersion(version)) {
    size_t clang = version.find("clang version ");
    return std::atoi(version.c_str() + clang + std::strlen("clang version ")) >= 13;
  }
  for (const char* gcc : {"g++", "c++", "gcc", "GCC"}) {
    if (version.find(gcc) != std::string::npos) return true;
  }
  return false;
}

// Hot loops of optimised host-compiled kernel units start on a 32-byte boundary (decision 131):
// with the compilers' default 16, whether a small loop straddles a 64-byte fetch window depended
// on where the link put the unit, so any change to jaxcc's own objects could make a user's loop
// run 40% slower or faster.
std::vector<std::string> LoopAlignment(const LoadRequest& request,
                                       const toolchain::HostCompiler& compiler) {
  if (request.optimization_level < 2 || !TakesAlignLoops(compiler.version)) return {};
  return {"-falign-loops=32"};
}

void Append(std::vector<std::string>& to, const std::vector<std::string>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// In a CUDA module, C++ files (a host-side helper, say) keep the host compiler; everything else,
// inline source included, is CUDA.
bool IsCudaSource(const LoadRequest& request, size_t index) {
  if (request.platform != "cuda") return false;
  const std::string& label = request.sources[index].label;
  return !(EndsWith(label, ".cc") || EndsWith(label, ".cpp") || EndsWith(label, ".cxx"));
}

std::string KernelFile(const LoadRequest& request, size_t index) {
  return "kernel_" + std::to_string(index) + (IsCudaSource(request, index) ? ".cu" : ".cc");
}

// The include path of user code, for g++ and nvcc alike (decision 89). jaxcc's kernel headers
// come first, as -I: the generated wrapper is compiled against them, so "brainevent/common.h" or
// "jaxcc/tensor.h" must be jaxcc's even when a user directory holds a header of that name
// (brainevent's own include directory, passed for its private helpers, holds both; -isystem
// would lose to any -I, and nvcc has no -iquote). Then the user's directories, and last XLA's
// FFI headers as a system directory, so a source that writes its own xla::ffi code (as some of
// brainevent's do) finds them without taking precedence over anything of the user's. None of
// these directories is tracked per file: their headers are in the key's header digest.
void AppendKernelIncludeDirs(std::vector<std::string>& flags, const LoadRequest& request,
                             const BuildEnvironment& env) {
  Append(flags, {"-I", env.jaxcc_include_dir});
  for (const std::string& dir : request.source_dirs) Append(flags, {"-I", dir});
  for (const std::string& dir : request.extra_include_paths) Append(flags, {"-I", dir});
  if (!env.ffi_include_dir.empty()) Append(flags, {"-isystem", env.ffi_include_dir});
}

// nvcc: the host compiler jaxcc chose (-ccbin) so host and device objects agree on the ABI;
// position-independent, hidden symbols, like the host translation units.
std::vector<std::string> NvccFlags(const LoadRequest& request, const BuildEnvironment& env,
                                   const toolchain::HostCompiler& host, const CudaToolchain& cuda) {
  std::string level = std::to_string(request.optimization_level);
  std::vector<std::string> flags = {
      "-std=c++17", "-O" + level, "-Xptxas=-O" + level,
      "-ccbin",     host.path,    "-Xcompiler=-fPIC,-fvisibility=hidden"};
  Append(flags, toolchain::GencodeFlags(cuda.archs));
  if (request.cuda.use_fast_math) flags.push_back("--use_fast_math");
  AppendKernelIncludeDirs(flags, request, env);
  Append(flags, request.cuda.extra_cflags);
  return flags;
}

// nvcc compiles a unit once per virtual architecture, one after another unless told --threads
// (CUDA 11.2+). A module built for several architectures gets one thread per architecture, as
// far as the build's workers divided among its nvcc units allow (decision 133): on 2 cores a
// two-architecture corpus file builds in 5.7 s instead of 8.4 s. One architecture, or no spare
// worker, adds nothing.
std::vector<std::string> NvccThreads(const CudaToolchain& cuda, size_t nvcc_units,
                                     int ninja_workers) {
  if (toolchain::NvccRelease(cuda.nvcc.version) < 112 || nvcc_units == 0) return {};
  int workers =
      ninja_workers > 0 ? ninja_workers : static_cast<int>(std::thread::hardware_concurrency());
  int share = std::max(1, workers / static_cast<int>(nvcc_units));
  int threads = std::min(static_cast<int>(cuda.archs.size()), share);
  if (threads < 2) return {};
  return {"--threads", std::to_string(threads)};
}

// Static cudart keeps the library self-contained (no LD_LIBRARY_PATH for libcudart.so at run
// time); kernels still launch on XLA's stream in the primary context. pip's CUDA wheels ship only
// the shared runtime, which is then found through an rpath. The shared runtime of JAX's own
// wheel, when chosen (decision 136), is linked by file name and found through its folder.
std::vector<std::string> CudaLinkFlags(const CudaToolchain& cuda) {
  if (!cuda.shared_runtime.empty()) {
    std::string dir = DirName(cuda.shared_runtime);
    return {"-L" + dir, "-l:" + BaseName(cuda.shared_runtime), "-Wl,-rpath," + dir};
  }
  for (const char* sub : {"lib64", "lib", "targets/x86_64-linux/lib"}) {
    std::string dir = JoinPath(cuda.nvcc.cuda_home, sub);
    if (StatPath(JoinPath(dir, "libcudart_static.a")).exists) {
      return {"-L" + dir, "-lcudart_static", "-ldl", "-lrt", "-lpthread"};
    }
    if (StatPath(JoinPath(dir, "libcudart.so")).exists) {
      return {"-L" + dir, "-Wl,-rpath," + dir, "-lcudart"};
    }
  }
  return {"-lcudart"};
}

// Compile flags that change what the link must bring in: with `-fopenmp` (or `-fopenmp=libomp`)
// the objects call the OpenMP runtime, and `-pthread` defines what libpthread needs; without them
// at the link, `-z defs` fails on GOMP_* symbols. Users write them once, in extra_cflags (issue 39
// item 4), so they reach the link too unless extra_ldflags already has them.
std::vector<std::string> LinkFlagsImpliedByCompileFlags(const LoadRequest& request) {
  std::vector<std::string> implied;
  for (const std::string& flag : request.extra_cflags) {
    bool needs_link = flag == "-pthread" || flag == "-fopenmp" || flag.rfind("-fopenmp=", 0) == 0;
    bool given = std::find(request.extra_ldflags.begin(), request.extra_ldflags.end(), flag) !=
                 request.extra_ldflags.end();
    bool seen = std::find(implied.begin(), implied.end(), flag) != implied.end();
    if (needs_link && !given && !seen) implied.push_back(flag);
  }
  return implied;
}

// A user who names a linker, or asks for link-time optimisation (which lld cannot do with GCC's
// objects), keeps the driver's choice: jaxcc's pick only saves milliseconds (decision 161a).
bool UserDecidesLinker(const LoadRequest& request) {
  for (const auto* flags : {&request.extra_cflags, &request.extra_ldflags}) {
    for (const std::string& flag : *flags) {
      if (flag.rfind("-fuse-ld=", 0) == 0 || flag.rfind("-flto", 0) == 0) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::vector<std::string>> SourceUserFlags(const LoadRequest& request) {
  std::vector<std::vector<std::string>> flags;
  for (size_t i = 0; i < request.sources.size(); ++i) {
    flags.push_back(IsCudaSource(request, i) ? request.cuda.extra_cflags : request.extra_cflags);
  }
  return flags;
}

BuildPlan MakeBuildPlan(const LoadRequest& request, const BuildEnvironment& env,
                        const toolchain::HostCompiler& compiler, const CudaToolchain* cuda) {
  BuildPlan plan;
  bool is_cuda = request.platform == "cuda" && cuda != nullptr;
  // User code: the include path of AppendKernelIncludeDirs; the user's own directories are -I so
  // depfiles record them.
  plan.user_flags = CommonFlags(UserOptimization(request));
  Append(plan.user_flags, LoopAlignment(request, compiler));
  AppendKernelIncludeDirs(plan.user_flags, request, env);
  if (is_cuda) {
    // Host-side .cc files of a CUDA module may call the runtime API.
    Append(plan.user_flags, {"-isystem", JoinPath(cuda->nvcc.cuda_home, "include")});
    plan.cuda_flags = NvccFlags(request, env, compiler, *cuda);
  }
  Append(plan.user_flags, request.extra_cflags);

  // The wrapper is glue (a descriptor and a bridge call per function) that includes only
  // frame_entry.h. The frame runtime is the decoder of every call, compiled once per cache (its
  // text and command are the same for every module of a platform) but on the critical path of a
  // cache's first build: -O1 compiles it in 0.64 s against 0.83 s at -O2, with the same per-call
  // time (decision 128). The user's level only decides between -O1 and -O0 for both.
  const bool optimize = request.optimization_level > 0;
  plan.wrapper_flags = CommonFlags(optimize ? "-O1" : "-O0");
  Append(plan.wrapper_flags,
         {"-DNDEBUG", "-isystem", env.ffi_include_dir, "-isystem", env.jaxcc_include_dir});
  plan.runtime_flags = CommonFlags(optimize ? "-O1" : "-O0");
  Append(plan.runtime_flags,
         {"-DNDEBUG", "-isystem", env.ffi_include_dir, "-isystem", env.jaxcc_include_dir});

  if (request.debug) ApplyDebugProfile(plan, compiler.version);

  size_t nvcc_units = 0;
  for (size_t i = 0; i < request.sources.size(); ++i) nvcc_units += IsCudaSource(request, i);
  const std::vector<std::string> nvcc_threads =
      is_cuda ? NvccThreads(*cuda, nvcc_units, env.ninja_workers) : std::vector<std::string>{};
  for (size_t i = 0; i < request.sources.size(); ++i) {
    build::CompileStep step{KernelFile(request, i), "kernel_" + std::to_string(i) + ".o", {}, {}};
    if (is_cuda && IsCudaSource(request, i)) {
      step.command = {cuda->nvcc.path};
      Append(step.command, plan.cuda_flags);
      step.scheduling_flags = nvcc_threads;
    } else {
      step.command = compiler.command;
      Append(step.command, plan.user_flags);
    }
    plan.graph.compiles.push_back(std::move(step));
  }
  plan.graph.compile_database = CompileDatabaseJson(request, plan.graph.compiles);

  build::CompileStep wrapper{kWrapperSource, "ffi_wrapper.o", compiler.command, {}};
  Append(wrapper.command, plan.wrapper_flags);
  plan.graph.compiles.push_back(std::move(wrapper));
  build::CompileStep runtime{kFrameRuntimeSource, "ffi_frame_runtime.o", compiler.command, {}};
  Append(runtime.command, plan.runtime_flags);
  plan.graph.compiles.push_back(std::move(runtime));

  plan.graph.link_command = compiler.command;
  // -z defs: an undefined symbol is a link error naming it, not a dlopen failure later.
  Append(plan.graph.link_command, {"-shared", "-fPIC", "-Wl,-z,defs"});
  // CPU links only: a CUDA module's build is nvcc's seconds, and its link has only run with the
  // driver's linker on a GPU machine.
  if (!is_cuda && !UserDecidesLinker(request)) {
    Append(plan.graph.link_command, compiler.linker.flags);
  }
  if (is_cuda) plan.graph.link_flags = CudaLinkFlags(*cuda);
  Append(plan.graph.link_flags, LinkFlagsImpliedByCompileFlags(request));
  if (!is_cuda) Append(plan.graph.link_flags, SanitizerLinkFlags(request, compiler));
  Append(plan.graph.link_flags, request.extra_ldflags);
  plan.graph.output = request.name + ".so";
  return plan;
}

std::vector<std::pair<std::string, std::string>> GenerateSources(
    const LoadRequest& request, const std::vector<argspec::FunctionSpec>& specs) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < request.sources.size(); ++i) {
    std::vector<argspec::FunctionSpec> declared_here;
    for (const auto& spec : specs) {
      if (spec.source_index == static_cast<int>(i)) declared_here.push_back(spec);
    }
    files.emplace_back(KernelFile(request, i),
                       codegen::GenerateKernelUnit(request.sources[i].label,
                                                   request.sources[i].text, declared_here));
  }
  codegen::WrapperOptions options;
  options.module_name = request.name;
  options.platform = request.platform;
  options.allow_cuda_graph = request.cuda.allow_cuda_graph;
  for (const auto& source : request.sources) options.source_labels.push_back(source.label);
  files.emplace_back(kWrapperSource, codegen::GenerateFfiWrapper(specs, options));
  files.emplace_back(kFrameRuntimeSource, codegen::FrameRuntimeSource(
                                              request.platform, codegen::FrameFeaturesOf(specs)));
  return files;
}

}  // namespace jaxcc::pipeline
