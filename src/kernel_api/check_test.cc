#include "jaxcc/check.h"

#include <gtest/gtest.h>

#include <iomanip>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace jaxcc {
namespace {

static_assert(std::is_base_of_v<std::runtime_error, Error>);
static_assert(std::is_base_of_v<Error, CheckError>);
static_assert(std::is_base_of_v<Error, CudaError>);
static_assert(std::is_base_of_v<Error, DTypeError>);

// A type that is printable only through a user-defined operator<<.
struct Point {
  int x;
  int y;
};
std::ostream& operator<<(std::ostream& os, const Point& p) {
  return os << "(" << p.x << ", " << p.y << ")";
}

// Returns the message of the CheckError thrown by `body`, or "" (with a test failure).
template <class F>
std::string CheckMessageOf(F body) {
  try {
    body();
  } catch (const CheckError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no jaxcc::CheckError was thrown";
  return "";
}

TEST(CheckTest, FailureThrowsWithLocationConditionAndMessage) {
  const int n = 3;
  int line = 0;
  std::string message = CheckMessageOf([&] {
    line = __LINE__ + 1;
    JAXCC_CHECK(n > 4) << "n=" << n << ", point " << Point{1, 2} << ' ' << 2.5 << ' '
                       << std::string("s") << ' ' << DType::Int16 << std::hex << ' ' << 255;
  });
  EXPECT_EQ(message, std::string("CHECK failed at ") + __FILE__ + ":" + std::to_string(line) +
                         ": n > 4: n=3, point (1, 2) 2.5 s int16 ff");
}

TEST(CheckTest, FailureWithoutMessageEndsAfterTheCondition) {
  std::string message = CheckMessageOf([] { JAXCC_CHECK(1 + 1 == 3); });
  EXPECT_NE(message.find(": 1 + 1 == 3"), std::string::npos) << message;
  EXPECT_EQ(message.substr(message.size() - 10), "1 + 1 == 3") << message;
}

TEST(CheckTest, PassingCheckDoesNotEvaluateTheMessage) {
  int evaluated = 0;
  auto side_effect = [&] {
    ++evaluated;
    return "costly";
  };
  JAXCC_CHECK(true) << side_effect();
  JAXCC_CHECK(evaluated == 0) << side_effect();
  EXPECT_EQ(evaluated, 0);
  EXPECT_THROW(JAXCC_CHECK(false) << side_effect(), CheckError);
  EXPECT_EQ(evaluated, 1);
}

TEST(CheckTest, ConditionIsEvaluatedOnce) {
  int calls = 0;
  auto once = [&] { return ++calls == 1; };
  JAXCC_CHECK(once());
  EXPECT_EQ(calls, 1);
}

// A value whose formatting throws.
struct Throws {};
struct Thrower {};
std::ostream& operator<<(std::ostream&, const Thrower&) { throw Throws{}; }

TEST(CheckTest, ExceptionWhileFormattingPropagatesAlone) {
  // The formatting exception surfaces as itself; the process is not terminated.
  EXPECT_THROW(JAXCC_CHECK(false) << "before " << Thrower{}, Throws);
}

TEST(CheckTest, WorksAsTheOnlyStatementOfIfAndElse) {
  std::vector<int> taken;
  for (int i = 0; i < 2; ++i) {
    if (i == 0)
      JAXCC_CHECK(true) << "unused";
    else
      taken.push_back(i);
  }
  EXPECT_EQ(taken, std::vector<int>{1});
}

TEST(CheckTest, ConditionsMayUseExplicitBoolConversions) {
  struct Flag {
    bool value;
    explicit operator bool() const { return value; }
  };
  JAXCC_CHECK(Flag{true});
  EXPECT_THROW(JAXCC_CHECK(Flag{false}), CheckError);
  EXPECT_THROW(JAXCC_CHECK((std::is_same_v<int, long>)), CheckError);
}

TEST(CheckTest, ErrorTypesCarryTheirPayload) {
  CudaError cuda("launch failed", 9);
  EXPECT_EQ(cuda.code(), 9);
  EXPECT_STREQ(cuda.what(), "launch failed");
  DTypeError dtype("bad dtype", DType::Int8);
  EXPECT_EQ(dtype.dtype(), DType::Int8);
  EXPECT_EQ(DTypeError("no dtype").dtype(), DType::Invalid);
}

}  // namespace
}  // namespace jaxcc
