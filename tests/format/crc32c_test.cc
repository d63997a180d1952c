#include "format/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace memlife::format {
namespace {

// Bit-at-a-time CRC32C, the slowest and most obviously right definition.
uint32_t crc32c_bitwise(const uint8_t* data, size_t bytes) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < bytes; ++i) {
    crc ^= data[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0);
  }
  return ~crc;
}

TEST(Crc32c, KnownVectors) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32c(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(check.data(), check.size()), 0xE3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
  // RFC 3720 (iSCSI) B.4 test patterns.
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xff), inc(32), dec(32);
  for (int i = 0; i < 32; ++i) {
    inc[i] = static_cast<uint8_t>(i);
    dec[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  EXPECT_EQ(crc32c(inc.data(), inc.size()), 0x46DD794Eu);
  EXPECT_EQ(crc32c(dec.data(), dec.size()), 0x113FDB5Cu);
  EXPECT_EQ(crc32c_portable(dec.data(), dec.size()), 0x113FDB5Cu);
}

TEST(Crc32c, HardwareAndTablePathsAgreeOnEveryLengthAndAlignment) {
  if (!crc32c_uses_hardware()) {
    GTEST_SKIP() << "this CPU has no SSE4.2: crc32c() is the table path";
  }
  std::mt19937 rng(1);
  std::vector<uint8_t> buffer(4096 + 16);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t len = 0; len <= 300; ++len) {
      const uint8_t* p = buffer.data() + align;
      ASSERT_EQ(crc32c(p, len), crc32c_portable(p, len)) << align << "/" << len;
    }
  }
  EXPECT_EQ(crc32c(buffer.data(), 4096), crc32c_portable(buffer.data(), 4096));
}

TEST(Crc32c, BothPathsMatchTheBitwiseDefinition) {
  std::mt19937 rng(2);
  std::vector<uint8_t> buffer(1000);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  for (size_t len : {0, 1, 7, 8, 9, 63, 64, 65, 999, 1000}) {
    const uint32_t expected = crc32c_bitwise(buffer.data(), len);
    EXPECT_EQ(crc32c(buffer.data(), len), expected) << len;
    EXPECT_EQ(crc32c_portable(buffer.data(), len), expected) << len;
  }
}

TEST(Crc32c, SeedChainsPiecewiseComputation) {
  // encode_chunk_prefix checksums the stream id and the records separately.
  std::mt19937 rng(3);
  std::vector<uint8_t> buffer(777);
  for (auto& b : buffer) b = static_cast<uint8_t>(rng());
  const uint32_t whole = crc32c(buffer.data(), buffer.size());
  for (size_t split : {0, 1, 5, 8, 100, 776, 777}) {
    const uint32_t first = crc32c(buffer.data(), split);
    EXPECT_EQ(crc32c(buffer.data() + split, buffer.size() - split, first), whole) << split;
    const uint32_t first_portable = crc32c_portable(buffer.data(), split);
    EXPECT_EQ(crc32c_portable(buffer.data() + split, buffer.size() - split, first_portable), whole);
  }
}

TEST(Crc32c, EverySingleBitFlipChangesTheChecksum) {
  std::vector<uint8_t> buffer(256);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<uint8_t>(i * 31);
  const uint32_t clean = crc32c(buffer.data(), buffer.size());
  for (size_t i = 0; i < buffer.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      buffer[i] ^= static_cast<uint8_t>(1u << bit);
      ASSERT_NE(crc32c(buffer.data(), buffer.size()), clean) << i << ":" << bit;
      buffer[i] ^= static_cast<uint8_t>(1u << bit);
    }
  }
}

}  // namespace
}  // namespace memlife::format
