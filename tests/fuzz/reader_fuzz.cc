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

  void record(const Record& r) {
    u(static_cast<uint64_t>(r.header.kind));
    u(r.header.seq);
    u(r.header.time_ns);
    u(r.header.stream_id);
    switch (r.header.kind) {
      case RecordKind::kProcess:
        u(r.process.rank), u(r.process.local_rank), u(r.process.world_size);
        s(r.process.torch_version), s(r.process.note);
        break;
      case RecordKind::kThread:
        u(r.thread.tid), s(r.thread.name);
        break;
      case RecordKind::kModule:
        s(r.module.path), u(r.module.base), u(r.module.size), s(r.module.build_id);
        break;
      case RecordKind::kString:
        u(r.string.id), s(r.string.bytes);
        break;
      case RecordKind::kFrame:
        u(r.frame.id), u(r.frame.file_string), u(r.frame.function_string), u(r.frame.line);
        break;
      case RecordKind::kStack:
        u(r.stack.id), l(r.stack.python_frames), l(r.stack.native_addresses);
        break;
      case RecordKind::kAlloc:
        u(r.alloc.address), u(r.alloc.bytes), u(r.alloc.device), u(r.alloc.stream);
        u(r.alloc.stack_id), u(r.alloc.op_string);
        break;
      case RecordKind::kFree:
        u(r.free.address), u(r.free.bytes), u(r.free.device);
        u(static_cast<uint64_t>(r.free.phase));
        break;
      case RecordKind::kSegmentAlloc:
      case RecordKind::kSegmentFree:
        u(r.segment.address), u(r.segment.bytes), u(r.segment.device), u(r.segment.stream);
        break;
      case RecordKind::kTensor: {
        const TensorRecord& t = r.tensor;
        u(t.tensor_id), u(t.storage_id), u(t.data_address), u(t.storage_bytes);
        u(t.storage_offset), l(t.sizes), l(t.strides), u(t.itemsize), u(t.dtype_string);
        u(t.device), u(t.flags), u(t.base_tensor_id), u(t.op_string), u(t.stack_id);
        break;
      }
      case RecordKind::kOpBegin:
        u(r.op_begin.op_id), u(r.op_begin.name_string), u(r.op_begin.stack_id);
        l(r.op_begin.inputs);
        break;
      case RecordKind::kOpEnd:
        u(r.op_end.op_id), l(r.op_end.outputs);
        break;
      case RecordKind::kCollectiveIssue: {
        const CollectiveIssueRecord& c = r.collective_issue;
        u(c.collective_id), u(c.op_string), u(c.group_string), u(c.backend_string);
        l(c.inputs), l(c.outputs), u(c.bytes), u(c.stack_id), u(c.nccl_comm), u(c.nccl_count);
        u(c.nccl_datatype), u(c.stream), u(c.send_address), u(c.recv_address), u(c.flags);
        break;
      }
      case RecordKind::kCollectiveWait: {
        const CollectiveWaitRecord& w = r.collective_wait;
        u(w.collective_id), u(w.op_string), l(w.tensors), u(w.stack_id);
        u(static_cast<uint64_t>(w.how));
        break;
      }
      case RecordKind::kMark:
        u(static_cast<uint64_t>(r.mark.kind)), u(r.mark.step), u(r.mark.label_string);
        u(r.mark.storage_id), u(r.mark.address), u(r.mark.stack_id);
        break;
      case RecordKind::kCensus:
        u(r.census.census_id), u(r.census.phase), u(static_cast<uint64_t>(r.census.reason));
        u(r.census.step), u(r.census.live_tensors), u(r.census.c10d_unwaited_works);
        break;
      case RecordKind::kCensusStorage: {
        const CensusStorageRecord& c = r.census_storage;
        u(c.census_id), u(c.storage_id), u(c.data_address), u(c.storage_bytes);
        u(c.use_count), u(c.device), u(c.holders.size);
        for (const CensusHolder& h : c.holders) u(h.tensor_id), u(h.reachable_bytes);
        break;
      }
      case RecordKind::kOom:
        u(r.oom.device), u(r.oom.bytes_requested), u(r.oom.device_free), u(r.oom.device_total);
        break;
      case RecordKind::kLost:
        u(r.lost.records_lost), u(r.lost.bytes_lost);
        break;
      case RecordKind::kEnd:
        u(r.end.exit_status), u(r.end.flags);
        break;
      case RecordKind::kTensorDeath:
        u(static_cast<uint64_t>(r.tensor_death.how)), l(r.tensor_death.tensor_ids);
        break;
    }
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
