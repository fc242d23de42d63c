#include "util/fields.h"

#include <gtest/gtest.h>

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
