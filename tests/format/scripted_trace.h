// A TraceBuilder that also writes down, independently of the reader, what a
// correct reader must return: every record's text and seq, and which chunk
// (in file order) holds it. Chunks are cut only where the test says, so the
// expectation for any prefix of the file follows from the chunk ends alone.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/trace_builder.h"
#include "record_text.h"

namespace memlife::format::testing {

struct ExpectedRecord {
  uint64_t seq;
  std::string text;
};

class ScriptedTrace {
 public:
  explicit ScriptedTrace(const HeaderFields& header) : builder_(header) {
    // Never cut on size: chunk boundaries are exactly the test's cut() calls.
    builder_.set_chunk_bytes(size_t{1} << 40);
  }

  template <typename R>
  void add(uint64_t stream, const R& record, uint64_t time_ns) {
    builder_.add(stream, record, time_ns);
    note(stream, KindOf<R>::value, time_ns, body_text(record));
  }
  void add_segment(uint64_t stream, bool is_alloc, const SegmentRecord& record, uint64_t time_ns) {
    builder_.add_segment(stream, is_alloc, record, time_ns);
    note(stream, is_alloc ? RecordKind::kSegmentAlloc : RecordKind::kSegmentFree, time_ns,
         body_text(record));
  }
  void cut(uint64_t stream, bool new_block = true) {
    builder_.cut(stream, new_block);
    auto it = open_.find(stream);
    if (it == open_.end() || it->second.empty()) return;
    chunks_.push_back(std::move(it->second));
    it->second.clear();
  }
  // Cuts every stream in ascending id order, then (with clean_end) adds the
  // end record in a chunk of its own, the way TraceBuilder::finish does.
  std::vector<uint8_t> finish(bool clean_end) {
    std::vector<uint64_t> ids;
    for (auto& [id, records] : open_) ids.push_back(id);
    for (uint64_t id : ids) cut(id);
    if (clean_end) {
      // finish() stamps the end record one microsecond after the last one.
      note(0, RecordKind::kEnd, last_time_ + 1000, body_text(EndRecord{0, 0}));
      chunks_.push_back(std::move(open_[0]));
    }
    return builder_.finish(clean_end);
  }

  // Records of each chunk, in the order the chunks appear in the file.
  const std::vector<std::vector<ExpectedRecord>>& chunks() const { return chunks_; }
  uint64_t records() const { return seq_; }

 private:
  void note(uint64_t stream, RecordKind kind, uint64_t time_ns, const std::string& body) {
    ++seq_;
    last_time_ = time_ns;
    open_[stream].push_back({seq_, record_text(kind, seq_, time_ns, stream, body)});
  }

  TraceBuilder builder_;
  std::map<uint64_t, std::vector<ExpectedRecord>> open_;
  std::vector<std::vector<ExpectedRecord>> chunks_;
  uint64_t seq_ = 0;
  uint64_t last_time_ = 0;
};

// Chunk boundaries found by walking the framing with nothing but the spec:
// the header length, then each chunk's u32 payload length.
struct Framing {
  size_t header_end = 0;
  std::vector<size_t> chunk_begin, chunk_end;
};
Framing walk_framing(const std::vector<uint8_t>& bytes);

// The records a correct reader returns when only the chunks in `keep` are
// readable, sorted by seq.
std::vector<std::string> expected_texts(const std::vector<std::vector<ExpectedRecord>>& chunks,
                                        size_t chunks_kept);
// The same for every chunk but those in `lost` (indices in file order).
std::vector<std::string> expected_texts_without(
    const std::vector<std::vector<ExpectedRecord>>& chunks, const std::vector<size_t>& lost);

}  // namespace memlife::format::testing
