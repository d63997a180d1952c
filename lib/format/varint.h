// LEB128 and zig-zag primitives used by every record field (see
// include/memlife/trace_format.h). Header-only: the recording hot path
// inlines them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlife::format {

inline constexpr size_t kMaxVarintBytes = 10;

inline uint8_t* put_varint(uint8_t* out, uint64_t value) {
  while (value >= 0x80) {
    *out++ = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  *out++ = static_cast<uint8_t>(value);
  return out;
}

inline uint64_t zigzag_encode(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}

inline int64_t zigzag_decode(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

// Returns false on overrun or on a varint longer than 10 bytes; `in` is left
// where decoding stopped.
inline bool get_varint(const uint8_t*& in, const uint8_t* end, uint64_t& value) {
  uint64_t result = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (in == end) return false;
    const uint8_t byte = *in++;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      value = result;
      return true;
    }
  }
  return false;
}

}  // namespace memlife::format
