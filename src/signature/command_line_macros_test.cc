// Reading `-D`/`-U` off compile flags as the compiler does.
#include "signature/command_line_macros.h"

#include <gtest/gtest.h>

namespace jaxcc::signature {
namespace {

std::string Body(const MacroDefinition& m) {
  std::string out;
  for (const Token& t : m.body) out += (out.empty() ? "" : " ") + t.text;
  return out;
}

TEST(MacrosFromFlagsTest, SpellingsOfDefineAndUndefine) {
  auto macros = MacrosFromFlags({"-O2", "-DREAL=double", "-D", "N", "-DE=", "-UX", "-U", "Y",
                                 "-DF(a,b)=a+b", "--define-macro=M=2", "--undefine-macro", "Z",
                                 "-I", "-DNOT_A_DEFINE", "-D1BAD"});
  ASSERT_EQ(macros.size(), 8u);
  EXPECT_EQ(macros[0].name, "REAL");
  EXPECT_EQ(Body(*macros[0].definition), "double");
  EXPECT_EQ(macros[0].flag, "-DREAL=double");
  EXPECT_EQ(macros[0].definition->flag, "-DREAL=double");
  EXPECT_EQ(macros[0].definition->name_token.line, 0);  // nowhere in any source
  EXPECT_EQ(Body(*macros[1].definition), "1");          // `-D N` is 1
  EXPECT_EQ(macros[1].flag, "-D N");
  EXPECT_EQ(Body(*macros[2].definition), "");  // `-DE=` is empty
  EXPECT_FALSE(macros[3].definition);          // -UX
  EXPECT_EQ(macros[4].name, "Y");
  EXPECT_TRUE(macros[5].definition->function_like);
  EXPECT_EQ(Body(*macros[5].definition), "a + b");
  EXPECT_EQ(macros[6].name, "M");
  EXPECT_EQ(macros[7].name, "Z");
  // `-I -DNOT_A_DEFINE` names a directory; `-D1BAD` has no identifier (the compiler's to reject).
}

}  // namespace
}  // namespace jaxcc::signature
