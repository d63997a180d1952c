// The 64-bit mixing step of the recorder's hashes (interned stacks and
// strings, a census's holder lists): combines one more value into `h`.
#pragma once

#include <cstdint>

namespace memlife::rec {

inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdull;
  return h ^ (h >> 32);
}

}  // namespace memlife::rec
