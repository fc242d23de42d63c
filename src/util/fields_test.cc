#include "util/fields.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace jaxcc {
namespace {

TEST(Fields, RoundTripAnyBytes) {
  std::string record;
  const std::string binary("a\0b,:\n9:", 8);
  AppendField(record, "key");
  AppendField(record, "");
  AppendField(record, binary);
  AppendIntField(record, -42);
  AppendIntField(record, 1795489931403328567);
  FieldReader reader(record);
  EXPECT_EQ(reader.Next(), "key");
  EXPECT_EQ(reader.Next(), "");
  EXPECT_EQ(reader.NextString(), binary);
  EXPECT_EQ(reader.NextInt(), -42);
  EXPECT_EQ(reader.NextInt(), 1795489931403328567);
  EXPECT_TRUE(reader.Done());
  EXPECT_FALSE(reader.Next().has_value());  // past the end
  EXPECT_FALSE(reader.Done());
}

TEST(Fields, MalformedInputFailsAndStaysFailed) {
  for (std::string_view text :
       {"3:ab,", "3:abcd", "3:abc", ":abc,", "x:abc,", "-1:,", "99999999999999999999:a,", "3abc,",
        "5:abc,", "18446744073709551615:a,"}) {
    FieldReader reader(text);
    EXPECT_FALSE(reader.Next().has_value()) << text;
    EXPECT_FALSE(reader.Next().has_value()) << text;
    EXPECT_FALSE(reader.Done()) << text;
  }
  std::string record;
  AppendField(record, "12x");
  AppendField(record, "ok");
  FieldReader reader(record);
  EXPECT_FALSE(reader.NextInt().has_value());
  EXPECT_FALSE(reader.Next().has_value());  // a failed reader reads nothing more
}

TEST(Fields, IntegersReadBackAcrossTheWholeRangeAndNothingElse) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t value : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{9}, kMin, kMax,
                             kMin + 1, kMax - 1, std::int64_t{1000000000000000000}}) {
    std::string record;
    AppendIntField(record, value);
    FieldReader reader(record);
    EXPECT_EQ(reader.NextInt(), value) << record;
    EXPECT_TRUE(reader.Done());
  }
  // Anything but eight bytes is not an integer field, decimal text included.
  for (std::string_view text : {"", "1", "1234567", "123456789", "-42", "9223372036854775807"}) {
    std::string record;
    AppendField(record, text);
    FieldReader reader(record);
    EXPECT_FALSE(reader.NextInt().has_value()) << text;
  }
}

TEST(Fields, UnconsumedFieldsAreNotDone) {
  std::string record;
  AppendField(record, "a");
  AppendField(record, "b");
  FieldReader reader(record);
  EXPECT_EQ(reader.Next(), "a");
  EXPECT_FALSE(reader.Done());
}

}  // namespace
}  // namespace jaxcc
