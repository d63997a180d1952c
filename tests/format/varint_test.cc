#include "format/varint.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace memlife::format {
namespace {

std::vector<uint8_t> encode(uint64_t v) {
  std::vector<uint8_t> out(kMaxVarintBytes);
  out.resize(static_cast<size_t>(put_varint(out.data(), v) - out.data()));
  return out;
}

TEST(Varint, EdgeValuesHaveTheLeb128Length) {
  struct Case {
    uint64_t value;
    size_t bytes;
  };
  const Case cases[] = {{0, 1},
                        {1, 1},
                        {127, 1},
                        {128, 2},
                        {16383, 2},
                        {16384, 3},
                        {(uint64_t{1} << 35) - 1, 5},
                        {uint64_t{1} << 35, 6},
                        {(uint64_t{1} << 63) - 1, 9},
                        {uint64_t{1} << 63, 10},
                        {std::numeric_limits<uint64_t>::max(), 10}};
  for (const Case& c : cases) {
    const std::vector<uint8_t> bytes = encode(c.value);
    EXPECT_EQ(bytes.size(), c.bytes) << c.value;
    const uint8_t* in = bytes.data();
    uint64_t back = 0;
    ASSERT_TRUE(get_varint(in, bytes.data() + bytes.size(), back)) << c.value;
    EXPECT_EQ(back, c.value);
    EXPECT_EQ(in, bytes.data() + bytes.size());
  }
}

TEST(Varint, KnownEncodings) {
  EXPECT_EQ(encode(300), (std::vector<uint8_t>{0xac, 0x02}));
  EXPECT_EQ(encode(0), (std::vector<uint8_t>{0x00}));
  EXPECT_EQ(encode(std::numeric_limits<uint64_t>::max()),
            (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(Varint, RandomRoundTripsOfEveryBitLength) {
  std::mt19937_64 rng(42);
  for (int bits = 0; bits <= 64; ++bits) {
    for (int i = 0; i < 200; ++i) {
      uint64_t v = bits == 0 ? 0 : (rng() >> (64 - bits)) | (uint64_t{1} << (bits - 1));
      const std::vector<uint8_t> bytes = encode(v);
      const uint8_t* in = bytes.data();
      uint64_t back = ~v;
      ASSERT_TRUE(get_varint(in, bytes.data() + bytes.size(), back));
      ASSERT_EQ(back, v);
    }
  }
}

TEST(Varint, TruncatedInputFailsWithoutReadingPastTheEnd) {
  const std::vector<uint8_t> bytes = encode(std::numeric_limits<uint64_t>::max());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(cut));
    const uint8_t* in = prefix.data();
    uint64_t v = 0;
    EXPECT_FALSE(get_varint(in, prefix.data() + prefix.size(), v)) << cut;
    EXPECT_EQ(in, prefix.data() + prefix.size());
  }
}

TEST(Varint, OverlongEncodingIsRejected) {
  const std::vector<uint8_t> eleven(11, 0x80);
  const uint8_t* in = eleven.data();
  uint64_t v = 0;
  EXPECT_FALSE(get_varint(in, eleven.data() + eleven.size(), v));
  EXPECT_LE(in - eleven.data(), static_cast<long>(kMaxVarintBytes));
}

TEST(Zigzag, KnownMappings) {
  EXPECT_EQ(zigzag_encode(0), 0u);
  EXPECT_EQ(zigzag_encode(-1), 1u);
  EXPECT_EQ(zigzag_encode(1), 2u);
  EXPECT_EQ(zigzag_encode(-2), 3u);
  EXPECT_EQ(zigzag_encode(std::numeric_limits<int64_t>::max()),
            std::numeric_limits<uint64_t>::max() - 1);
  EXPECT_EQ(zigzag_encode(std::numeric_limits<int64_t>::min()),
            std::numeric_limits<uint64_t>::max());
}

TEST(Zigzag, RoundTripsEdgeAndRandomValues) {
  const int64_t edges[] = {0,
                           1,
                           -1,
                           63,
                           -64,
                           64,
                           -65,
                           std::numeric_limits<int64_t>::max(),
                           std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::min() + 1};
  for (int64_t v : edges) EXPECT_EQ(zigzag_decode(zigzag_encode(v)), v) << v;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const auto v = static_cast<int64_t>(rng());
    ASSERT_EQ(zigzag_decode(zigzag_encode(v)), v);
  }
}

TEST(Zigzag, SmallMagnitudesStayShort) {
  EXPECT_EQ(encode(zigzag_encode(-64)).size(), 1u);
  EXPECT_EQ(encode(zigzag_encode(63)).size(), 1u);
  EXPECT_EQ(encode(zigzag_encode(64)).size(), 2u);
}

}  // namespace
}  // namespace memlife::format
