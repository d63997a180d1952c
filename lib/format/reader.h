// Trace reader: maps a trace file, validates its chunks and hands every
// record to a visitor in global sequence order. A truncated or corrupt file
// yields every record of every complete chunk before the damage, and a
// ReadStatus that says where and why reading stopped. It never throws on
// bad input and never reads outside the mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/record_fields.h"
#include "format/records.h"

namespace memlife::format {

struct TraceHeader {
  uint32_t format_version = 0;
  uint32_t producer_major = 0, producer_minor = 0, producer_patch = 0;
  uint64_t pid = 0, ppid = 0;
  int64_t rank = -1, local_rank = -1, world_size = -1;
  std::string host, run_id, torch_version;
  uint64_t start_monotonic_ns = 0, start_wall_ns = 0;
  std::string command_line;
};

// One decoded record. Only the member matching header.kind is meaningful;
// list and string views point into the reader's buffers or the mapping and
// stay valid until the visitor returns.
struct Record {
  RecordHeader header;
  ProcessRecord process;
  ThreadRecord thread;
  ModuleRecord module;
  StringRecord string;
  FrameRecord frame;
  StackRecord stack;
  AllocRecord alloc;
  FreeRecord free;
  SegmentRecord segment;
  TensorRecord tensor;
  OpBeginRecord op_begin;
  OpEndRecord op_end;
  CollectiveIssueRecord collective_issue;
  CollectiveWaitRecord collective_wait;
  MarkRecord mark;
  CensusRecord census;
  CensusStorageRecord census_storage;
  OomRecord oom;
  LostRecord lost;
  EndRecord end;
  TensorDeathRecord tensor_death;

  // Backing storage for the lists above, reused across records.
  std::vector<uint64_t> list_a, list_b;
  std::vector<int64_t> slist_a, slist_b;
  std::vector<CensusHolder> holders;
};

// Calls f(body) with the member of `r` that a record of `kind` fills (the
// segment kinds share `segment`); false for a kind this reader does not
// know. `RecordT` is Record or const Record.
template <typename RecordT, typename F>
bool with_body(RecordKind kind, RecordT& r, F&& f) {
  switch (kind) {
    case RecordKind::kProcess:
      f(r.process);
      return true;
    case RecordKind::kThread:
      f(r.thread);
      return true;
    case RecordKind::kModule:
      f(r.module);
      return true;
    case RecordKind::kString:
      f(r.string);
      return true;
    case RecordKind::kFrame:
      f(r.frame);
      return true;
    case RecordKind::kStack:
      f(r.stack);
      return true;
    case RecordKind::kAlloc:
      f(r.alloc);
      return true;
    case RecordKind::kFree:
      f(r.free);
      return true;
    case RecordKind::kSegmentAlloc:
    case RecordKind::kSegmentFree:
      f(r.segment);
      return true;
    case RecordKind::kTensor:
      f(r.tensor);
      return true;
    case RecordKind::kOpBegin:
      f(r.op_begin);
      return true;
    case RecordKind::kOpEnd:
      f(r.op_end);
      return true;
    case RecordKind::kCollectiveIssue:
      f(r.collective_issue);
      return true;
    case RecordKind::kCollectiveWait:
      f(r.collective_wait);
      return true;
    case RecordKind::kMark:
      f(r.mark);
      return true;
    case RecordKind::kCensus:
      f(r.census);
      return true;
    case RecordKind::kCensusStorage:
      f(r.census_storage);
      return true;
    case RecordKind::kOom:
      f(r.oom);
      return true;
    case RecordKind::kLost:
      f(r.lost);
      return true;
    case RecordKind::kEnd:
      f(r.end);
      return true;
    case RecordKind::kTensorDeath:
      f(r.tensor_death);
      return true;
  }
  return false;
}

struct ReadStatus {
  bool complete = false;     // an end record was read: the process closed cleanly
  bool damaged = false;      // a bad chunk or record was met (skipped or stopped at)
  std::string stop_reason;   // the first problem; empty when there was none
  uint64_t stop_offset = 0;  // where the first problem is
  // Bytes the reader could not use: bad chunks it scanned past to the next
  // good one, and good chunks of a stream waiting for its next sync chunk.
  uint64_t skipped_bytes = 0;
  uint64_t skipped_chunks = 0;
  bool resumed = false;  // records were read after a problem
  uint64_t file_bytes = 0;
  uint64_t chunks = 0;
  uint64_t records = 0;
  uint64_t streams = 0;
};

class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  // Return false to stop reading.
  virtual bool on_record(const Record& record) = 0;
};

class TraceReader {
 public:
  // Opens and maps `path` and validates the header. Returns null and sets
  // `error` to one line naming the file and the problem (missing, not a
  // trace, a newer format version, a damaged header).
  static std::unique_ptr<TraceReader> open(const std::string& path, std::string& error);
  // Reads a trace held in memory (fuzzing, tests). The buffer must outlive
  // the reader.
  static std::unique_ptr<TraceReader> from_memory(const uint8_t* data, size_t bytes,
                                                  std::string& error);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const TraceHeader& header() const { return header_; }
  const std::string& path() const { return path_; }

  // Visits every record in global sequence order. Can be called again.
  ReadStatus read(RecordVisitor& visitor);

  template <typename F>
  ReadStatus for_each(F&& f) {
    struct Adapter final : RecordVisitor {
      F& fn;
      explicit Adapter(F& f) : fn(f) {}
      bool on_record(const Record& r) override { return fn(r); }
    } adapter(f);
    return read(adapter);
  }

 private:
  TraceReader() = default;
  bool parse_header(std::string& error);
  // Why the chunk at `offset` cannot be used (empty when it checks out);
  // sets `payload_bytes` once the prefix is there.
  std::string chunk_problem(size_t offset, uint32_t& payload_bytes) const;
  // A cheap magic test first: the scan for the next good chunk calls this
  // at every byte of a damaged stretch.
  // `crc_budget` bounds the CRC work of one read's scans.
  bool chunk_checks_out(size_t offset, uint64_t& crc_budget) const;

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  bool mapped_ = false;
  size_t body_offset_ = 0;
  TraceHeader header_;
};

// Decodes one record's fields (after kind, seq and time) from [in, end).
// Exposed for the fuzz target and unit tests.
bool decode_record_fields(RecordKind kind, const uint8_t*& in, const uint8_t* end,
                          uint64_t& last_address, Record& out);

}  // namespace memlife::format
