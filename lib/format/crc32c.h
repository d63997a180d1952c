// CRC32C (Castagnoli), the checksum of every chunk payload.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlife::format {

// Uses the SSE4.2 crc32 instruction when the CPU has it, else a table.
uint32_t crc32c(const void* data, size_t bytes, uint32_t seed = 0);

// The table implementation whatever the CPU, and whether crc32c() uses the
// instruction here: lets tests check that both paths agree.
uint32_t crc32c_portable(const void* data, size_t bytes, uint32_t seed = 0);
bool crc32c_uses_hardware();

}  // namespace memlife::format
