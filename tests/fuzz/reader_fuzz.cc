// libFuzzer target for the trace reader. Each input is read twice: as given
// (exercising framing and CRC checks) and with every plausible chunk's magic
// and CRC rewritten to be right, so that mutations reach the record decoder
// instead of dying at the checksum.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/crc32c.h"
#include "format/reader.h"

namespace {

using namespace memlife;
using namespace memlife::format;

// Folds every field into a value the optimizer cannot drop, so that each
// view the reader hands out is actually dereferenced (ASan checks them).
struct Toucher {
  uint64_t sum = 0;
  void u(uint64_t v) { sum = sum * 31 + v; }
  void s(std::string_view v) {
    u(v.size());
    for (char c : v) u(static_cast<unsigned char>(c));
  }
  template <typename T>
  void l(List<T> list) {
    u(list.size);
    for (const T& v : list) u(static_cast<uint64_t>(v));
  }

  // The field visitor of format/record_fields.h.
  void varint(const char*, uint64_t v, Meaning) { u(v); }
  void svarint(const char*, int64_t v) { u(static_cast<uint64_t>(v)); }
  void address(const char*, uint64_t v) { u(v); }
  void bytes(const char*, std::string_view v, Meaning) { s(v); }
  template <typename T>
  void ids(const char*, List<T> v) {
    l(v);
  }
  void sids(const char*, List<int64_t> v) { l(v); }
  void holders(const char*, List<CensusHolder> v) {
    u(v.size);
    for (const CensusHolder& h : v) u(h.tensor_id), u(h.reachable_bytes);
  }
  template <typename E>
  void enumeration(const char*, E v) {
    u(static_cast<uint64_t>(v));
  }
  template <size_t N>
  void flags(const char*, uint64_t v, const std::array<FlagName, N>&) {
    u(v);
  }

  void record(const Record& r) {
    u(static_cast<uint64_t>(r.header.kind));
    u(r.header.seq);
    u(r.header.time_ns);
    u(r.header.stream_id);
    with_body(r.header.kind, r, [&](const auto& body) { fields(body, *this); });
  }
};

uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

void read_and_touch(const uint8_t* data, size_t size) {
  std::string error;
  auto reader = TraceReader::from_memory(data, size, error);
  if (!reader) {
    if (error.empty()) __builtin_trap();  // a refusal must say why
    return;
  }
  const TraceHeader& h = reader->header();
  Toucher touch;
  touch.s(h.host), touch.s(h.run_id), touch.s(h.torch_version), touch.s(h.command_line);
  uint64_t last_seq = 0;
  uint64_t visited = 0;
  const ReadStatus status = reader->for_each([&](const Record& r) {
    // The merge must hand records out in non-decreasing seq order.
    if (visited > 0 && r.header.seq < last_seq) __builtin_trap();
    last_seq = r.header.seq;
    ++visited;
    touch.record(r);
    return true;
  });
  if (status.records != visited) __builtin_trap();
  if (status.damaged == status.stop_reason.empty()) __builtin_trap();
  volatile uint64_t sink = touch.sum;
  (void)sink;
}

// Makes every chunk whose length fits the input pass the magic and CRC
// checks. Returns false when nothing changed (the second read would repeat
// the first).
bool fix_chunk_checks(std::vector<uint8_t>& bytes) {
  if (bytes.size() < kFileHeaderPrefixBytes) return false;
  const uint64_t body = get_u32(bytes.data() + 12);
  uint64_t at = kFileHeaderPrefixBytes + body;
  bool changed = false;
  while (at + kChunkPrefixBytes <= bytes.size()) {
    uint8_t* chunk = bytes.data() + at;
    const uint32_t length = get_u32(chunk);
    if (length == 0 || length > bytes.size() - at - kChunkPrefixBytes) break;
    const uint32_t crc = crc32c(chunk + kChunkPrefixBytes, length);
    if (get_u32(chunk + 4) != crc || get_u32(chunk + 8) != kChunkMagic) {
      put_u32(chunk + 4, crc);
      put_u32(chunk + 8, kChunkMagic);
      changed = true;
    }
    at += kChunkPrefixBytes + length;
  }
  return changed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_and_touch(data, size);
  // An exactly sized copy so ASan sees reads past the end.
  std::vector<uint8_t> fixed(data, data + size);
  if (fix_chunk_checks(fixed)) read_and_touch(fixed.data(), fixed.size());
  return 0;
}
