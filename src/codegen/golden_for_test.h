// Comparing generated text with a golden file in src/codegen/testdata/, for the codegen tests;
// JAXCC_UPDATE_GOLDEN=1 rewrites the files instead (then review the diff).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace jaxcc::codegen {

inline std::string GoldenPath(const std::string& name) {
  return std::string(JAXCC_SOURCE_DIR) + "/src/codegen/testdata/" + name;
}

inline void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = GoldenPath(name);
  if (std::getenv("JAXCC_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with JAXCC_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "generated text differs from " << path;
}

}  // namespace jaxcc::codegen
