#include "format/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace memlife::format {
namespace {

constexpr uint32_t kPolynomialReflected = 0x82f63b78u;

std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomialReflected : 0);
    table[i] = crc;
  }
  return table;
}

uint32_t crc32c_table(const uint8_t* data, size_t bytes, uint32_t crc) {
  static const std::array<uint32_t, 256> table = make_table();
  for (size_t i = 0; i < bytes; ++i) crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const uint8_t* data, size_t bytes,
                                                        uint32_t crc) {
  uint64_t crc64 = crc;
  while (bytes >= 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);
    crc64 = _mm_crc32_u64(crc64, word);
    data += 8;
    bytes -= 8;
  }
  crc = static_cast<uint32_t>(crc64);
  while (bytes--) crc = _mm_crc32_u8(crc, *data++);
  return crc;
}

bool cpu_has_sse42() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

}  // namespace

bool crc32c_uses_hardware() {
#if defined(__x86_64__)
  static const bool use_sse42 = cpu_has_sse42();
  return use_sse42;
#else
  return false;
#endif
}

uint32_t crc32c_portable(const void* data, size_t bytes, uint32_t seed) {
  return ~crc32c_table(static_cast<const uint8_t*>(data), bytes, ~seed);
}

uint32_t crc32c(const void* data, size_t bytes, uint32_t seed) {
  const auto* bytes_in = static_cast<const uint8_t*>(data);
  uint32_t crc = ~seed;
#if defined(__x86_64__)
  crc = crc32c_uses_hardware() ? crc32c_sse42(bytes_in, bytes, crc)
                               : crc32c_table(bytes_in, bytes, crc);
#else
  crc = crc32c_table(bytes_in, bytes, crc);
#endif
  return ~crc;
}

}  // namespace memlife::format
