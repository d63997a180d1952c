// File header and chunk framing, shared by the recorder's writer thread,
// the synthetic trace builder and the reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/records.h"

namespace memlife::format {

// Full header (prefix and body) ready to be written at offset 0.
std::vector<uint8_t> encode_file_header(const HeaderFields& header);

// The 12-byte chunk prefix plus the stream id and chunk flags that open the
// payload, for a payload whose records occupy `records` bytes. `out` gets
// kChunkPrefixBytes + varint(stream_id) + varint(flags) bytes; the CRC
// covers those and the records. `sync`: the records start from zero delta
// state (kChunkSync). Returns the bytes written to `out`.
// `format_version` below kChunkFlagsFormatVersion writes the older
// layout, without chunk flags (tests of old traces).
size_t encode_chunk_prefix(uint8_t* out, uint64_t stream_id, bool sync, const uint8_t* records,
                           size_t record_bytes, uint32_t format_version = kFormatVersion);
inline constexpr size_t kChunkPrefixBound = kChunkPrefixBytes + 20;

// Writes the whole buffer to fd, retrying on EINTR and short writes.
// Returns false (errno set) when the write fails.
bool write_fully(int fd, const void* data, size_t bytes);

}  // namespace memlife::format
