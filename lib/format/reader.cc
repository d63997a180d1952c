#include "format/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <queue>
#include <system_error>
#include <unordered_map>

#include "format/crc32c.h"
#include "format/encoder.h"
#include "format/varint.h"

namespace memlife::format {
namespace {

uint32_t get_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Most varints in a trace are single bytes: take those without the loop.
inline bool get_varint_fast(const uint8_t*& in, const uint8_t* end, uint64_t& value) {
  if (in != end && *in < 0x80) {
    value = *in++;
    return true;
  }
  return get_varint(in, end, value);
}

// Bounds-checked field decoding over one record.
class FieldDecoder {
 public:
  FieldDecoder(const uint8_t*& in, const uint8_t* end) : in_(in), end_(end) {}
  bool ok() const { return ok_; }

  uint64_t varint() {
    uint64_t v = 0;
    if (ok_ && !get_varint_fast(in_, end_, v)) ok_ = false;
    return ok_ ? v : 0;
  }
  int64_t svarint() { return zigzag_decode(varint()); }
  std::string_view str() {
    const uint64_t n = varint();
    if (!ok_ || n > static_cast<uint64_t>(end_ - in_)) {
      ok_ = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(in_), n);
    in_ += n;
    return s;
  }
  // A list can hold no more entries than bytes remain (each is >= 1 byte):
  // this bounds allocation on hostile input.
  template <typename T, bool Signed>
  List<T> list(std::vector<T>& storage) {
    const uint64_t n = varint();
    if (!ok_ || n > static_cast<uint64_t>(end_ - in_)) {
      storage.clear();
      ok_ = false;
      return {};
    }
    storage.resize(n);
    for (uint64_t i = 0; i < n && ok_; ++i) {
      if constexpr (Signed) {
        storage[i] = svarint();
      } else {
        storage[i] = static_cast<T>(varint());
      }
    }
    return List<T>{storage.data(), storage.size()};
  }
  List<uint64_t> ids(std::vector<uint64_t>& s) { return list<uint64_t, false>(s); }
  // (tensor_id, reachable_bytes) pairs: two bytes at least each.
  List<CensusHolder> holders(std::vector<CensusHolder>& storage) {
    const uint64_t n = varint();
    storage.clear();
    if (!ok_ || n > static_cast<uint64_t>(end_ - in_) / 2) {
      ok_ = false;
      return {};
    }
    storage.resize(n);
    for (uint64_t i = 0; i < n && ok_; ++i) {
      storage[i].tensor_id = varint();
      storage[i].reachable_bytes = varint();
    }
    return List<CensusHolder>{storage.data(), storage.size()};
  }
  List<int64_t> sids(std::vector<int64_t>& s) { return list<int64_t, true>(s); }
  uint64_t address(uint64_t& last) {
    last += static_cast<uint64_t>(svarint());
    return last;
  }

 private:
  const uint8_t*& in_;
  const uint8_t* end_;
  bool ok_ = true;
};

// The field visitor of record_fields.h: reads each field in turn. Lists
// decode into the record's reused backing vectors, the first list of a
// kind into list_a / slist_a, the second into list_b / slist_b.
class FieldReader {
 public:
  FieldReader(FieldDecoder& d, uint64_t& last_address, Record& r)
      : d_(d), last_address_(last_address), r_(r) {}
  bool enums_ok() const { return enums_ok_; }

  void varint(const char*, uint64_t& v, Meaning) { v = d_.varint(); }
  void svarint(const char*, int64_t& v) { v = d_.svarint(); }
  void address(const char*, uint64_t& v) { v = d_.address(last_address_); }
  void bytes(const char*, std::string_view& v, Meaning) { v = d_.str(); }
  void ids(const char*, List<uint64_t>& v) { v = d_.ids(lists_++ == 0 ? r_.list_a : r_.list_b); }
  void sids(const char*, List<int64_t>& v) {
    v = d_.sids(slists_++ == 0 ? r_.slist_a : r_.slist_b);
  }
  void holders(const char*, List<CensusHolder>& v) { v = d_.holders(r_.holders); }
  template <typename E>
  void enumeration(const char*, E& v) {
    const uint64_t raw = d_.varint();
    if (raw > enum_max<E>()) enums_ok_ = false;
    v = static_cast<E>(raw);
  }
  template <size_t N>
  void flags(const char*, uint64_t& v, const std::array<FlagName, N>&) {
    v = d_.varint();
  }

 private:
  FieldDecoder& d_;
  uint64_t& last_address_;
  Record& r_;
  int lists_ = 0, slists_ = 0;
  bool enums_ok_ = true;
};

}  // namespace

bool decode_record_fields(RecordKind kind, const uint8_t*& in, const uint8_t* end,
                          uint64_t& last_address, Record& r) {
  FieldDecoder d(in, end);
  FieldReader reader(d, last_address, r);
  if (!with_body(kind, r, [&](auto& body) { fields(body, reader); })) return false;
  return d.ok() && reader.enums_ok();
}

namespace {

struct ChunkRef {
  uint64_t file_offset;  // of the first record, for error messages
  const uint8_t* records;
  const uint8_t* end;
  bool sync;  // its first record's deltas start from zero state
};

// Decodes one stream's records, chunk after chunk, into its own Record.
class StreamCursor {
 public:
  StreamCursor(uint64_t stream_id, std::vector<ChunkRef> chunks)
      : stream_id_(stream_id), chunks_(std::move(chunks)) {
    record_.header.stream_id = stream_id;
  }

  // Advances to the next record. Returns false at the end of the stream or
  // on a malformed record (then error() is set).
  // A malformed record skips the rest of the stream up to its next sync
  // chunk (error() names the first one).
  bool next() {
    for (;;) {
      while (chunk_ < chunks_.size() && pos_ == nullptr) {
        pos_ = chunks_[chunk_].records;
        if (chunks_[chunk_].sync) state_ = StreamState{};
        if (pos_ == chunks_[chunk_].end) {
          pos_ = nullptr;
          ++chunk_;
        }
      }
      if (chunk_ >= chunks_.size()) return false;
      if (decode_one()) return true;
      // Skip to the stream's next sync chunk.
      skipped_bytes_ += static_cast<uint64_t>(chunks_[chunk_].end - bad_record_);
      pos_ = nullptr;
      for (++chunk_; chunk_ < chunks_.size() && !chunks_[chunk_].sync; ++chunk_)
        skipped_bytes_ += static_cast<uint64_t>(chunks_[chunk_].end - chunks_[chunk_].records);
    }
  }

  const Record& record() const { return record_; }
  uint64_t seq() const { return record_.header.seq; }
  const std::string& error() const { return error_; }
  uint64_t error_offset() const { return error_offset_; }
  uint64_t skipped_bytes() const { return skipped_bytes_; }
  bool resumed() const { return resumed_; }

 private:
  bool decode_one() {
    const ChunkRef& chunk = chunks_[chunk_];
    const uint8_t* record_start = pos_;
    const uint8_t kind_byte = *pos_++;
    uint64_t seq_delta = 0, time_delta = 0;
    bool ok = kind_byte >= 1 && kind_byte <= kMaxRecordKind &&
              get_varint_fast(pos_, chunk.end, seq_delta) &&
              get_varint_fast(pos_, chunk.end, time_delta);
    // The sequence must increase (also across a sync chunk's reset), and
    // must not wrap around on hostile input.
    if (ok &&
        (seq_delta > ~state_.last_seq || (started_ && state_.last_seq + seq_delta <= last_seq_)))
      ok = false;
    const auto kind = static_cast<RecordKind>(kind_byte);
    if (ok) ok = decode_record_fields(kind, pos_, chunk.end, state_.last_address, record_);
    if (!ok) {
      bad_record_ = record_start;
      if (error_.empty()) {
        error_offset_ = chunk.file_offset + static_cast<uint64_t>(record_start - chunk.records);
        error_ = "malformed record in stream " + std::to_string(stream_id_);
      }
      return false;
    }
    resumed_ |= !error_.empty();
    started_ = true;
    state_.last_seq += seq_delta;
    last_seq_ = state_.last_seq;
    state_.last_time_ns += static_cast<uint64_t>(zigzag_decode(time_delta));
    record_.header.kind = kind;
    record_.header.seq = state_.last_seq;
    record_.header.time_ns = state_.last_time_ns;
    if (pos_ == chunk.end) {
      pos_ = nullptr;
      ++chunk_;
    }
    return true;
  }

  uint64_t stream_id_;
  std::vector<ChunkRef> chunks_;
  size_t chunk_ = 0;
  const uint8_t* pos_ = nullptr;
  bool started_ = false;
  uint64_t last_seq_ = 0;  // of the last record decoded, across resets
  StreamState state_;
  Record record_;
  std::string error_;
  uint64_t error_offset_ = 0;
  const uint8_t* bad_record_ = nullptr;
  uint64_t skipped_bytes_ = 0;
  bool resumed_ = false;
};

}  // namespace

std::unique_ptr<TraceReader> TraceReader::open(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = path + ": cannot open: " + std::generic_category().message(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<TraceReader> reader(new TraceReader());
  reader->path_ = path;
  reader->bytes_ = static_cast<size_t>(st.st_size);
  if (reader->bytes_ > 0) {
    void* map = ::mmap(nullptr, reader->bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      error = path + ": cannot map: " + std::generic_category().message(errno);
      ::close(fd);
      return nullptr;
    }
    reader->data_ = static_cast<const uint8_t*>(map);
    reader->mapped_ = true;
  }
  ::close(fd);
  if (!reader->parse_header(error)) return nullptr;
  return reader;
}

std::unique_ptr<TraceReader> TraceReader::from_memory(const uint8_t* data, size_t bytes,
                                                      std::string& error) {
  std::unique_ptr<TraceReader> reader(new TraceReader());
  reader->path_ = "<memory>";
  reader->data_ = data;
  reader->bytes_ = bytes;
  if (!reader->parse_header(error)) return nullptr;
  return reader;
}

TraceReader::~TraceReader() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), bytes_);
}

bool TraceReader::parse_header(std::string& error) {
  if (bytes_ < kFileHeaderPrefixBytes) {
    error = path_ + ": not a memlife trace (" + std::to_string(bytes_) +
            " bytes, shorter than the 16-byte header)";
    return false;
  }
  if (std::memcmp(data_, kFileMagic, sizeof(kFileMagic)) != 0) {
    error = path_ + ": not a memlife trace (bad magic)";
    return false;
  }
  header_.format_version = get_u32(data_ + 8);
  if (header_.format_version > kFormatVersion) {
    error = path_ + ": trace format version " + std::to_string(header_.format_version) +
            " is newer than this memlife reads (version " + std::to_string(kFormatVersion) +
            "); use a newer memlife";
    return false;
  }
  if (header_.format_version < kMinReadableFormatVersion) {
    error = path_ + ": trace format version " + std::to_string(header_.format_version) +
            " is older than this memlife reads (" + std::to_string(kMinReadableFormatVersion) +
            " to " + std::to_string(kFormatVersion) + ")";
    return false;
  }
  const uint32_t body_bytes = get_u32(data_ + 12);
  if (body_bytes > bytes_ - kFileHeaderPrefixBytes) {
    error = path_ + ": damaged trace header (body of " + std::to_string(body_bytes) +
            " bytes runs past the end of the file)";
    return false;
  }
  const uint8_t* in = data_ + kFileHeaderPrefixBytes;
  const uint8_t* end = in + body_bytes;
  FieldDecoder d(in, end);
  header_.producer_major = static_cast<uint32_t>(d.varint());
  header_.producer_minor = static_cast<uint32_t>(d.varint());
  header_.producer_patch = static_cast<uint32_t>(d.varint());
  header_.pid = d.varint();
  header_.ppid = d.varint();
  header_.rank = d.svarint();
  header_.local_rank = d.svarint();
  header_.world_size = d.svarint();
  header_.host = std::string(d.str());
  header_.run_id = std::string(d.str());
  header_.torch_version = std::string(d.str());
  header_.start_monotonic_ns = d.varint();
  header_.start_wall_ns = d.varint();
  header_.command_line = std::string(d.str());
  if (!d.ok()) {
    error = path_ + ": damaged trace header (fields do not decode)";
    return false;
  }
  body_offset_ = kFileHeaderPrefixBytes + body_bytes;
  return true;
}

ReadStatus TraceReader::read(RecordVisitor& visitor) {
  ReadStatus status;
  status.file_bytes = bytes_;

  // Pass 1: validate chunk framing and CRCs, group chunks by stream. A bad
  // chunk is scanned past to the next one that checks out; from then on
  // each stream waits for its next sync chunk (its deltas start afresh
  // there). Traces older than chunk flags have no sync chunks: reading
  // stops at the first bad one.
  const bool has_chunk_flags = header_.format_version >= kChunkFlagsFormatVersion;
  std::unordered_map<uint64_t, std::vector<ChunkRef>> by_stream;
  std::unordered_map<uint64_t, uint64_t> synced_epoch;  // stream -> damage epoch of its last sync
  uint64_t damage_epoch = 0;
  // CRC bytes the scan for good chunks may check: a file of chunk magics
  // with long lengths must not make the scan quadratic.
  uint64_t scan_budget = 4 * static_cast<uint64_t>(bytes_) + (uint64_t{1} << 20);
  std::vector<uint64_t> stream_order;
  size_t offset = body_offset_;
  auto first_problem = [&](std::string why, uint64_t at) {
    if (status.damaged) return;
    status.damaged = true;
    status.stop_reason = std::move(why);
    status.stop_offset = at;
  };
  while (offset < bytes_) {
    uint32_t payload_bytes = 0;
    std::string problem = chunk_problem(offset, payload_bytes);
    const uint8_t* payload = data_ + offset + kChunkPrefixBytes;
    const uint8_t* records = payload;
    uint64_t stream_id = 0, flags = 0;
    if (problem.empty() &&
        (!get_varint(records, payload + payload_bytes, stream_id) ||
         (has_chunk_flags && !get_varint(records, payload + payload_bytes, flags))))
      problem = "chunk stream id does not decode";
    if (!problem.empty()) {
      first_problem(std::move(problem), offset);
      if (!has_chunk_flags) break;
      size_t next = offset + 1;
      while (next < bytes_ && !chunk_checks_out(next, scan_budget)) ++next;
      status.skipped_bytes += next - offset;
      ++damage_epoch;
      offset = next;
      continue;
    }
    const size_t chunk_bytes = kChunkPrefixBytes + payload_bytes;
    // Older traces carry deltas across every chunk of a stream.
    const bool sync = has_chunk_flags && (flags & kChunkSync) != 0;
    uint64_t& epoch = synced_epoch.try_emplace(stream_id, 0).first->second;
    if (sync) epoch = damage_epoch;
    if (epoch != damage_epoch) {
      // Its deltas continue a chunk that was lost: wait for a sync chunk.
      status.skipped_bytes += chunk_bytes;
      ++status.skipped_chunks;
      offset += chunk_bytes;
      continue;
    }
    if (damage_epoch != 0) status.resumed = true;
    auto [it, inserted] = by_stream.try_emplace(stream_id);
    if (inserted) stream_order.push_back(stream_id);
    if (records != payload + payload_bytes) {
      const auto records_offset = static_cast<uint64_t>(records - data_);
      it->second.push_back(ChunkRef{records_offset, records, payload + payload_bytes, sync});
    }
    ++status.chunks;
    offset += chunk_bytes;
  }
  status.streams = stream_order.size();

  // Pass 2: k-way merge of the per-stream sequences.
  std::vector<std::unique_ptr<StreamCursor>> cursors;
  cursors.reserve(stream_order.size());
  for (uint64_t id : stream_order) {
    cursors.push_back(std::make_unique<StreamCursor>(id, std::move(by_stream[id])));
  }
  auto later = [&](size_t a, size_t b) { return cursors[a]->seq() > cursors[b]->seq(); };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  auto note_stream_error = [&](const StreamCursor& c) {
    if (c.error().empty()) return;
    first_problem(c.error(), c.error_offset());
  };
  for (size_t i = 0; i < cursors.size(); ++i) {
    if (cursors[i]->next()) {
      heap.push(i);
    } else {
      note_stream_error(*cursors[i]);
    }
  }
  while (!heap.empty()) {
    const size_t i = heap.top();
    heap.pop();
    StreamCursor& cursor = *cursors[i];
    // Threads write in bursts: keep taking records from this stream while
    // they come before every other stream's next one, without heap traffic.
    for (;;) {
      ++status.records;
      if (cursor.record().header.kind == RecordKind::kEnd) status.complete = true;
      if (!visitor.on_record(cursor.record())) return status;
      if (!cursor.next()) {
        note_stream_error(cursor);
        break;
      }
      if (!heap.empty() && cursors[heap.top()]->seq() < cursor.seq()) {
        heap.push(i);
        break;
      }
    }
  }
  for (const auto& c : cursors) {
    status.skipped_bytes += c->skipped_bytes();
    status.resumed |= c->resumed();
  }
  if (status.damaged && status.resumed)
    status.stop_reason +=
        "; skipped " + std::to_string(status.skipped_bytes) + " bytes and read on";
  return status;
}

std::string TraceReader::chunk_problem(size_t offset, uint32_t& payload_bytes) const {
  const size_t left = bytes_ - offset;
  const uint8_t* p = data_ + offset;
  if (left < kChunkPrefixBytes)
    return "truncated chunk header (" + std::to_string(left) + " of 12 bytes)";
  payload_bytes = get_u32(p);
  if (get_u32(p + 8) != kChunkMagic) return "bad chunk magic";
  if (payload_bytes == 0 || payload_bytes > kMaxChunkPayloadBytes)
    return "implausible chunk length " + std::to_string(payload_bytes);
  if (payload_bytes > left - kChunkPrefixBytes)
    return "truncated chunk (" + std::to_string(left - kChunkPrefixBytes) + " of " +
           std::to_string(payload_bytes) + " payload bytes)";
  if (crc32c(p + kChunkPrefixBytes, payload_bytes) != get_u32(p + 4)) return "chunk CRC mismatch";
  return {};
}

bool TraceReader::chunk_checks_out(size_t offset, uint64_t& crc_budget) const {
  if (bytes_ - offset < kChunkPrefixBytes || get_u32(data_ + offset + 8) != kChunkMagic)
    return false;
  const uint32_t payload_bytes = get_u32(data_ + offset);
  if (payload_bytes > crc_budget) {
    crc_budget = 0;  // spent: the rest of the file is skipped
    return false;
  }
  crc_budget -= payload_bytes;
  uint32_t checked = 0;
  return chunk_problem(offset, checked).empty();
}

const char* record_kind_name(RecordKind kind) {
  switch (kind) {
    case RecordKind::kProcess:
      return "process";
    case RecordKind::kThread:
      return "thread";
    case RecordKind::kModule:
      return "module";
    case RecordKind::kString:
      return "string";
    case RecordKind::kFrame:
      return "frame";
    case RecordKind::kStack:
      return "stack";
    case RecordKind::kAlloc:
      return "alloc";
    case RecordKind::kFree:
      return "free";
    case RecordKind::kSegmentAlloc:
      return "segment_alloc";
    case RecordKind::kSegmentFree:
      return "segment_free";
    case RecordKind::kTensor:
      return "tensor";
    case RecordKind::kOpBegin:  // NOLINT(bugprone-branch-clone): both phases are "op"
    case RecordKind::kOpEnd:
      return "op";
    case RecordKind::kCollectiveIssue:
      return "collective_issue";
    case RecordKind::kCollectiveWait:
      return "collective_wait";
    case RecordKind::kMark:
      return "mark";
    case RecordKind::kCensus:
      return "census";
    case RecordKind::kCensusStorage:
      return "census_storage";
    case RecordKind::kOom:
      return "oom";
    case RecordKind::kLost:
      return "lost";
    case RecordKind::kEnd:
      return "end";
    case RecordKind::kTensorDeath:
      return "tensor_death";
  }
  return "unknown";
}

}  // namespace memlife::format
