#include "build/ninja_log.h"

#include <gtest/gtest.h>

namespace jaxcc::build {
namespace {

TEST(NinjaLog, ReadsTheStepsAppendedAfterTheOffset) {
  const std::string earlier = "# ninja log v7\n0\t300\t1\tkernel_0.o\tabc\n";
  const std::string log = earlier +
                          "2\t57\t9\tffi_wrapper.o\tdef\n"
                          "1\t314\t9\tkernel_0.o\t123\n"
                          "314\t335\t9\tm.so\t456\n";
  std::vector<BuildStep> steps = ParseNinjaLogSince(log, earlier.size());
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].output, "ffi_wrapper.o");
  EXPECT_DOUBLE_EQ(steps[0].start_seconds, 0.002);
  EXPECT_DOUBLE_EQ(steps[0].end_seconds, 0.057);
  EXPECT_EQ(steps[2].output, "m.so");
  EXPECT_DOUBLE_EQ(steps[2].start_seconds, 0.314);
  EXPECT_EQ(ParseNinjaLogSince(log, 0).size(), 4u);  // a fresh directory's whole log
  EXPECT_TRUE(ParseNinjaLogSince(log, log.size()).empty());
  EXPECT_TRUE(ParseNinjaLogSince(log, log.size() + 10).empty());
}

TEST(NinjaLog, MalformedLinesAreSkippedNotTrusted) {
  const std::string log =
      "# ninja log v7\n"
      "x\t5\t1\ta.o\th\n"                      // start not a number
      "5\t3\t1\tb.o\th\n"                      // ends before it starts
      "-1\t3\t1\tc.o\th\n"                     // negative
      "1\t2\t1\n"                              // too few fields
      "1\t2\t1\t\th\n"                         // no output
      "1\t2\t1\td.o\th\n"                      // the one good line
      "99999999999999999999\t1\t1\te.o\th\n";  // overflows
  std::vector<BuildStep> steps = ParseNinjaLogSince(log, 0);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].output, "d.o");
}

}  // namespace
}  // namespace jaxcc::build
