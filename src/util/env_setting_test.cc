#include "util/env_setting.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace jaxcc {
namespace {

TEST(OnOffSetting, UnsetEmptyAndOneAreOnZeroIsOffAnythingElseIsASpecError) {
  constexpr const char* kName = "JAXCC_TEST_ON_OFF_SETTING";
  ::unsetenv(kName);
  EXPECT_TRUE(*OnOffSetting(kName, "on", "off"));
  for (const char* on : {"", "1"}) {
    ::setenv(kName, on, 1);
    EXPECT_TRUE(*OnOffSetting(kName, "on", "off")) << on;
  }
  ::setenv(kName, "0", 1);
  EXPECT_FALSE(*OnOffSetting(kName, "on", "off"));
  for (const char* wrong : {"yes", "true", "01", " 1"}) {
    ::setenv(kName, wrong, 1);
    auto setting = OnOffSetting(kName, "do it now", "later");
    ASSERT_FALSE(setting.ok()) << wrong;
    EXPECT_EQ(setting.error().kind, ErrorKind::kSpec);
    EXPECT_EQ(setting.error().message,
              std::string(kName) + "=" + wrong +
                  " is not a setting; use 1 (do it now, the default) or 0 (later)");
  }
  ::unsetenv(kName);
}

}  // namespace
}  // namespace jaxcc
