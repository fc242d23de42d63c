#include "build/link_trace.h"

#include <gtest/gtest.h>

#include "build/build_graph.h"

namespace jaxcc::build {
namespace {

TEST(LinkTrace, ArchivesOnceObjectsKeptSharedLibrariesLeftOut) {
  // gold/lld/mold print "archive(member)", GNU ld "archive" or "(archive)member".
  const std::string trace =
      "/usr/lib/x86_64-linux-gnu/crti.o\n"
      "kernel_0.o\n"
      "/work/lib/libk.a(k.o)\n"
      "/work/lib/libk.a(other.o)\n"
      "(/work/lib/libold.a)x.o\n"
      "./libplain.a\n"
      "/lib/x86_64-linux-gnu/libc.so.6\n"
      "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc_s.so\n"
      "/usr/bin/ld: mode elf_x86_64\n"
      "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a\n";
  EXPECT_EQ(ParseLinkTrace(trace),
            (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/crti.o", "kernel_0.o",
                                      "/work/lib/libk.a", "/work/lib/libold.a", "./libplain.a",
                                      "/usr/lib/gcc/x86_64-linux-gnu/12/libgcc.a"}));
}

TEST(LinkTrace, TheLinkRuleWritesTheTraceAndCompilesWriteFullDepfiles) {
  BuildGraph graph;
  graph.compiles.push_back({"a.cc", "a.o", {"g++"}, {}});
  graph.link_command = {"g++", "-shared"};
  graph.output = "m.so";
  const std::string ninja = RenderNinjaFile(graph);
  EXPECT_NE(ninja.find("-Wl,--trace > $out.inputs"), std::string::npos) << ninja;
  // -MD, not -MMD: system headers are in the depfile too (decision 171).
  EXPECT_NE(ninja.find(" -MD -MF $out.d"), std::string::npos) << ninja;
  EXPECT_EQ(ninja.find("-MMD"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc::build
