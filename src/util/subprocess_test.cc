#include "util/subprocess.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

namespace jaxcc {
namespace {

TEST(RunProcess, CapturesStdoutAndStderrAndExitCode) {
  auto result = RunProcess({"sh", "-c", "echo out; echo err 1>&2; exit 3"});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_NE(result->output.find("out"), std::string::npos);
  EXPECT_NE(result->output.find("err"), std::string::npos);
  EXPECT_FALSE(result->timed_out);
}

TEST(RunProcess, StreamsOutputToCallback) {
  std::string seen;
  ProcessOptions options;
  options.on_output = [&](std::string_view chunk) { seen.append(chunk); };
  auto result = RunProcess({"sh", "-c", "printf 'a\\nb\\n'"}, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(seen, "a\nb\n");
}

TEST(RunProcess, AddsAndReplacesEnvironmentEntriesForTheChildOnly) {
  ProcessOptions options;
  options.environment = {"JAXCC_TEST_ADDED=added value", "HOME=/replaced"};
  auto result =
      RunProcess({"sh", "-c", "echo \"[$JAXCC_TEST_ADDED][$HOME][${PATH:+path}]\""}, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->output, "[added value][/replaced][path]\n");  // the rest is inherited
  EXPECT_EQ(std::getenv("JAXCC_TEST_ADDED"), nullptr);
}

TEST(RunProcess, KillsTheWholeGroupOnTimeout) {
  ProcessOptions options;
  options.timeout_seconds = 0.5;
  auto start = std::chrono::steady_clock::now();
  auto result = RunProcess({"sh", "-c", "sleep 30 & sleep 30"}, options);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->timed_out);
  EXPECT_LT(elapsed, 5.0);
}

TEST(RunProcess, MissingProgramIsAnError) {
  auto result = RunProcess({"definitely-not-a-program-jaxcc"});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("definitely-not-a-program-jaxcc"), std::string::npos);
}

TEST(ShellQuote, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(ShellQuote("-O3"), "-O3");
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

}  // namespace
}  // namespace jaxcc
