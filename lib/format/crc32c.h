// CRC32C (Castagnoli), the checksum of every chunk payload.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlife::format {

// Uses the SSE4.2 crc32 instruction when the CPU has it, else a table.
uint32_t crc32c(const void* data, size_t bytes, uint32_t seed = 0);

}  // namespace memlife::format
