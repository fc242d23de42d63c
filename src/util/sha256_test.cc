#include "util/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <utility>
#include <vector>

#include "util/sha256_compress.h"
#include "util/temp_dir_for_test.h"

#if JAXCC_TEST_WITH_OPENSSL
#include <openssl/evp.h>
#endif

namespace jaxcc {
namespace {

constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), kEmpty);
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
}

// FIPS 180-4's worked examples (NIST, "SHA-256 examples with intermediate values": one block,
// two blocks with the length in the second, and the 896-bit message of FIPS 180-2), and the
// million 'a's of FIPS 180-2 appendix B.3.
TEST(Sha256, FipsExamples) {
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                      "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths at the padding's edges: the 0x80 marker and the 8-byte length fit in the last block
// up to 55 bytes mod 64, and need another block from 56 on (digests from Python's hashlib).
TEST(Sha256, PaddingEdges) {
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto& [size, digest] : cases) {
    EXPECT_EQ(Sha256Hex(std::string(size, 'a')), digest) << size << " bytes";
  }
}

// NIST CAVP SHA256ShortMsg.rsp, byte-oriented messages of 1 and 2 bytes.
TEST(Sha256, CavpShortMessages) {
  EXPECT_EQ(Sha256Hex("\xd3"), "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1");
  EXPECT_EQ(Sha256Hex("\x11\xaf"),
            "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98");
}

std::string RandomBytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

// Every length around the padding's edges (55, 56, 63, 64 bytes mod 64), fed in random pieces:
// the buffering must not change the digest.
TEST(Sha256, AnySplitOfAnyLengthGivesTheOneShotDigest) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n <= 300; ++n) {
    std::string data = RandomBytes(n, static_cast<std::uint32_t>(n));
    std::string expected = Sha256Hex(data);
    Sha256Builder builder;
    for (std::size_t at = 0; at < n;) {
      std::size_t piece = std::min<std::size_t>(n - at, rng() % 130);
      builder.Update(std::string_view(data).substr(at, piece));
      at += piece;
    }
    ASSERT_EQ(builder.FinishHex(), expected) << "length " << n;
  }
}

// The accelerated block function against the portable one, block counts 1..64 over random data
// and random starting states (the state each earlier block would have left).
TEST(Sha256, ShaExtensionsMatchThePortableCode) {
  sha256_detail::CompressFn accelerated = sha256_detail::ShaExtensionsCompress();
  if (accelerated == nullptr) GTEST_SKIP() << "this CPU has no SHA extensions";
  EXPECT_EQ(sha256_detail::SelectedCompress(), accelerated);
  std::mt19937 rng(11);
  for (std::size_t blocks = 1; blocks <= 64; ++blocks) {
    std::string data = RandomBytes(64 * blocks, static_cast<std::uint32_t>(blocks));
    std::uint32_t portable[8], fast[8];
    for (auto& word : portable) word = static_cast<std::uint32_t>(rng());
    std::memcpy(fast, portable, sizeof(fast));
    auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
    sha256_detail::CompressPortable(portable, bytes, blocks);
    accelerated(fast, bytes, blocks);
    ASSERT_EQ(std::memcmp(portable, fast, sizeof(fast)), 0) << blocks << " blocks";
  }
}

#if JAXCC_TEST_WITH_OPENSSL
std::string OpenSslSha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EXPECT_EQ(EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr), 1);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 0xf];
  }
  return hex;
}

// Against OpenSSL where the tests were built with it (scripts/setup.sh installs libssl-dev):
// every length to 2 KiB, then sizes up to 4 MiB.
TEST(Sha256, MatchesOpenSsl) {
  for (std::size_t n = 0; n <= 2048; ++n) {
    std::string data = RandomBytes(n, static_cast<std::uint32_t>(n) + 1000);
    ASSERT_EQ(Sha256Hex(data), OpenSslSha256Hex(data)) << "length " << n;
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 20; ++i) {
    std::string data = RandomBytes(rng() % (4u << 20), static_cast<std::uint32_t>(i));
    ASSERT_EQ(Sha256Hex(data), OpenSslSha256Hex(data)) << "length " << data.size();
  }
}
#else
TEST(Sha256, MatchesOpenSsl) { GTEST_SKIP() << "built without OpenSSL (no libssl-dev)"; }
#endif

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
  const std::string dir = testing_util::MakeTestTempDir("jaxcc-sha256-test");
  ASSERT_FALSE(dir.empty());
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
