#include "util/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace jaxcc {
namespace {

constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), kEmpty);
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
}

TEST(Sha256, IncrementalEqualsOneShot) {
  Sha256Builder builder;
  builder.Update("a");
  builder.Update("");
  builder.Update("bc");
  EXPECT_EQ(builder.FinishHex(), kAbc);
  // Finishing resets the builder to a fresh digest.
  EXPECT_EQ(builder.FinishHex(), kEmpty);
}

TEST(Sha256, FieldsKeepTheirBoundaries) {
  Sha256Builder a;
  a.UpdateField("ab");
  a.UpdateField("c");
  Sha256Builder b;
  b.UpdateField("a");
  b.UpdateField("bc");
  Sha256Builder c;
  c.UpdateField("abc");
  std::string ha = a.FinishHex(), hb = b.FinishHex(), hc = c.FinishHex();
  EXPECT_NE(ha, hb);
  EXPECT_NE(ha, hc);
  EXPECT_NE(hb, hc);
}

TEST(Sha256, FileMatchesBuffer) {
  std::string dir = testing::TempDir() + "sha256_testXXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::string path = dir + "/data";
  std::string contents(200000, 'x');  // several read chunks
  contents += "tail";
  std::ofstream(path, std::ios::binary) << contents;
  auto digest = Sha256FileHex(path);
  ASSERT_TRUE(digest.ok()) << digest.error().message;
  EXPECT_EQ(*digest, Sha256Hex(contents));
  std::remove(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(Sha256, MissingFileIsAnIoErrorNamingThePath) {
  auto digest = Sha256FileHex("/nonexistent/jaxcc/file");
  ASSERT_FALSE(digest.ok());
  EXPECT_EQ(digest.error().kind, ErrorKind::kIo);
  EXPECT_NE(digest.error().message.find("/nonexistent/jaxcc/file"), std::string::npos);
}

}  // namespace
}  // namespace jaxcc
