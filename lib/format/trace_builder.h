// Builds trace files from typed records in one thread: the oracle for unit
// tests, the generator of synthetic traces for benchmarks, and a way to
// hand-write corner cases. It writes exactly the bytes the recorder writes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/encoder.h"

namespace memlife::format {

class TraceBuilder {
 public:
  explicit TraceBuilder(const HeaderFields& header);

  // Appends a record to `stream`, stamped with the next global sequence
  // number and `time_ns` (0: one microsecond after the previous record).
  template <typename R>
  TraceBuilder& add(uint64_t stream, const R& record, uint64_t time_ns = 0) {
    Stream& s = stream_for(stream, bound_bytes(record));
    uint8_t* end =
        encode_record(s.buffer.data() + s.used, s.state, next_seq(), stamp(time_ns), record);
    s.used = static_cast<size_t>(end - s.buffer.data());
    maybe_cut(stream, s);
    return *this;
  }
  TraceBuilder& add_segment(uint64_t stream, bool is_alloc, const SegmentRecord& record,
                            uint64_t time_ns = 0);

  // Ends the chunk of `stream` now (the next record starts a new chunk).
  // `new_block`: the next chunk starts from zero delta state and is a sync
  // chunk, as the recorder's first chunk of each block is; otherwise its
  // deltas carry over, as a block drained in several chunks does.
  void cut(uint64_t stream, bool new_block = true);
  // Chunk payload size at which a stream's chunk is cut automatically.
  void set_chunk_bytes(size_t bytes) { chunk_bytes_ = bytes; }

  // Cuts every open chunk and returns the file's bytes so far. With
  // `clean_end`, appends an end record first, as a clean process exit does.
  std::vector<uint8_t> finish(bool clean_end = true, uint64_t exit_status = 0);
  // finish() and write to `path`; returns false on an I/O error.
  bool write_file(const std::string& path, bool clean_end = true, uint64_t exit_status = 0);

  uint64_t last_seq() const { return seq_; }

 private:
  struct Stream {
    StreamState state;
    std::vector<uint8_t> buffer;
    size_t used = 0;
    bool sync = true;  // the open chunk starts from zero state
  };
  Stream& stream_for(uint64_t stream, size_t room);
  void maybe_cut(uint64_t stream, Stream& s);
  uint64_t next_seq() { return ++seq_; }
  uint64_t stamp(uint64_t time_ns);

  std::vector<uint8_t> out_;
  std::map<uint64_t, Stream> streams_;
  uint64_t seq_ = 0;
  uint64_t time_ns_ = 0;
  size_t chunk_bytes_ = size_t{64} * 1024;
  bool finished_ = false;
  uint32_t format_version_ = kFormatVersion;
};

}  // namespace memlife::format
