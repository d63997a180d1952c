#include "format/file_layout.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/crc32c.h"
#include "format/encoder.h"

namespace memlife::format {
namespace {

void put_u32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

std::vector<uint8_t> encode_file_header(const HeaderFields& h) {
  const size_t strings =
      h.host.size() + h.run_id.size() + h.torch_version.size() + h.command_line.size();
  std::vector<uint8_t> body(strings + 32 * kMaxVarintBytes);
  RecordEncoder enc(body.data());
  enc.varint(h.producer_major);
  enc.varint(h.producer_minor);
  enc.varint(h.producer_patch);
  enc.varint(h.pid);
  enc.varint(h.ppid);
  enc.svarint(h.rank);
  enc.svarint(h.local_rank);
  enc.svarint(h.world_size);
  enc.str(h.host);
  enc.str(h.run_id);
  enc.str(h.torch_version);
  enc.varint(h.start_monotonic_ns);
  enc.varint(h.start_wall_ns);
  enc.str(h.command_line);
  body.resize(static_cast<size_t>(enc.position() - body.data()));

  std::vector<uint8_t> out(kFileHeaderPrefixBytes + body.size());
  std::memcpy(out.data(), kFileMagic, sizeof(kFileMagic));
  put_u32(out.data() + 8, h.format_version);
  put_u32(out.data() + 12, static_cast<uint32_t>(body.size()));
  std::memcpy(out.data() + kFileHeaderPrefixBytes, body.data(), body.size());
  return out;
}

size_t encode_chunk_prefix(uint8_t* out, uint64_t stream_id, bool sync, const uint8_t* records,
                           size_t record_bytes, uint32_t format_version) {
  uint8_t* stream_begin = out + kChunkPrefixBytes;
  uint8_t* stream_end = put_varint(stream_begin, stream_id);
  if (format_version >= kChunkFlagsFormatVersion)
    stream_end = put_varint(stream_end, sync ? uint64_t{kChunkSync} : uint64_t{0});
  const auto stream_bytes = static_cast<size_t>(stream_end - stream_begin);
  uint32_t crc = crc32c(stream_begin, stream_bytes);
  crc = crc32c(records, record_bytes, crc);
  put_u32(out, static_cast<uint32_t>(stream_bytes + record_bytes));
  put_u32(out + 4, crc);
  put_u32(out + 8, kChunkMagic);
  return kChunkPrefixBytes + stream_bytes;
}

bool write_fully(int fd, const void* data, size_t bytes) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace memlife::format
