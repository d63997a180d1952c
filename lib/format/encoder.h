// Record encoder: turns typed records into the byte layout documented in
// include/memlife/trace_format.h. Header-only so that the recording hot
// path inlines it. The caller guarantees room: bound_bytes() gives an upper
// bound for any record, and the recorder reserves that before encoding.
#pragma once

#include <cstring>

#include "format/record_fields.h"
#include "format/records.h"
#include "format/varint.h"

namespace memlife::format {

// Per-stream delta state: the encoder and the reader each keep one per
// stream and update it identically.
struct StreamState {
  uint64_t last_seq = 0;
  uint64_t last_time_ns = 0;
  uint64_t last_address = 0;
};

class RecordEncoder {
 public:
  explicit RecordEncoder(uint8_t* out) : out_(out) {}
  uint8_t* position() const { return out_; }

  void begin(StreamState& state, RecordKind kind, uint64_t seq, uint64_t time_ns) {
    *out_++ = static_cast<uint8_t>(kind);
    varint(seq - state.last_seq);
    // Clocks are monotonic per thread, but a record may be stamped a little
    // before a record with a lower seq was: keep the delta signed-safe.
    svarint(static_cast<int64_t>(time_ns - state.last_time_ns));
    state.last_seq = seq;
    state.last_time_ns = time_ns;
  }
  void varint(uint64_t v) { out_ = put_varint(out_, v); }
  void svarint(int64_t v) { out_ = put_varint(out_, zigzag_encode(v)); }
  void address(StreamState& state, uint64_t a) {
    svarint(static_cast<int64_t>(a - state.last_address));
    state.last_address = a;
  }
  void str(std::string_view s) {
    varint(s.size());
    // An empty view may have a null data(), which memcpy must not get.
    if (!s.empty()) std::memcpy(out_, s.data(), s.size());
    out_ += s.size();
  }
  template <typename T>
  void varints(List<T> list) {
    varint(list.size);
    for (const T& v : list) varint(static_cast<uint64_t>(v));
  }
  void svarints(List<int64_t> list) {
    varint(list.size);
    for (int64_t v : list) svarint(v);
  }

 private:
  uint8_t* out_;
};

// The field visitor of record_fields.h: writes each field in turn. An
// encoder itself, so that a record's encoding is one local object whose
// output pointer stays in a register.
class FieldWriter : public RecordEncoder {
 public:
  FieldWriter(uint8_t* out, StreamState& state) : RecordEncoder(out), state_(state) {}
  void varint(const char*, uint64_t v, Meaning) { RecordEncoder::varint(v); }
  void svarint(const char*, int64_t v) { RecordEncoder::svarint(v); }
  void address(const char*, uint64_t v) { RecordEncoder::address(state_, v); }
  void bytes(const char*, std::string_view v, Meaning) { str(v); }
  void ids(const char*, List<uint64_t> v) { varints(v); }
  void sids(const char*, List<int64_t> v) { svarints(v); }
  void holders(const char*, List<CensusHolder> v) {
    RecordEncoder::varint(v.size);
    for (const CensusHolder& h : v) {
      RecordEncoder::varint(h.tensor_id);
      RecordEncoder::varint(h.reachable_bytes);
    }
  }
  template <typename E>
  void enumeration(const char*, E v) {
    RecordEncoder::varint(static_cast<uint64_t>(v));
  }
  template <size_t N>
  void flags(const char*, uint64_t v, const std::array<FlagName, N>&) {
    RecordEncoder::varint(v);
  }

 private:
  StreamState& state_;
};

// Upper bounds on encoded size, prefix (kind, seq, time) included: the
// field descriptions summed with every varint at its longest.
inline constexpr size_t kRecordPrefixBound = 1 + 2 * kMaxVarintBytes;

struct FieldBound {
  size_t total = kRecordPrefixBound;
  void varint(const char*, uint64_t, Meaning) { total += kMaxVarintBytes; }
  void svarint(const char*, int64_t) { total += kMaxVarintBytes; }
  void address(const char*, uint64_t) { total += kMaxVarintBytes; }
  void bytes(const char*, std::string_view v, Meaning) { total += kMaxVarintBytes + v.size(); }
  template <typename T>
  void ids(const char*, List<T> v) {
    total += kMaxVarintBytes * (1 + v.size);
  }
  void sids(const char*, List<int64_t> v) { total += kMaxVarintBytes * (1 + v.size); }
  void holders(const char*, List<CensusHolder> v) { total += kMaxVarintBytes * (1 + 2 * v.size); }
  template <typename E>
  void enumeration(const char*, E) {
    total += kMaxVarintBytes;
  }
  template <size_t N>
  void flags(const char*, uint64_t, const std::array<FlagName, N>&) {
    total += kMaxVarintBytes;
  }
};

template <typename R>
size_t bound_bytes(const R& r) {
  FieldBound bound;
  fields(r, bound);
  return bound.total;
}

template <typename R>
struct KindOf;
#define MEMLIFE_KIND_OF(Type, Kind)                       \
  template <>                                             \
  struct KindOf<Type> {                                   \
    static constexpr RecordKind value = RecordKind::Kind; \
  }
MEMLIFE_KIND_OF(ProcessRecord, kProcess);
MEMLIFE_KIND_OF(ThreadRecord, kThread);
MEMLIFE_KIND_OF(ModuleRecord, kModule);
MEMLIFE_KIND_OF(StringRecord, kString);
MEMLIFE_KIND_OF(FrameRecord, kFrame);
MEMLIFE_KIND_OF(StackRecord, kStack);
MEMLIFE_KIND_OF(AllocRecord, kAlloc);
MEMLIFE_KIND_OF(FreeRecord, kFree);
MEMLIFE_KIND_OF(TensorRecord, kTensor);
MEMLIFE_KIND_OF(OpBeginRecord, kOpBegin);
MEMLIFE_KIND_OF(OpEndRecord, kOpEnd);
MEMLIFE_KIND_OF(CollectiveIssueRecord, kCollectiveIssue);
MEMLIFE_KIND_OF(CollectiveWaitRecord, kCollectiveWait);
MEMLIFE_KIND_OF(MarkRecord, kMark);
MEMLIFE_KIND_OF(CensusRecord, kCensus);
MEMLIFE_KIND_OF(CensusStorageRecord, kCensusStorage);
MEMLIFE_KIND_OF(OomRecord, kOom);
MEMLIFE_KIND_OF(LostRecord, kLost);
MEMLIFE_KIND_OF(EndRecord, kEnd);
MEMLIFE_KIND_OF(TensorDeathRecord, kTensorDeath);
#undef MEMLIFE_KIND_OF

// Segment records share a struct; the kind is explicit.
inline uint8_t* encode_segment(uint8_t* out, StreamState& state, bool is_alloc, uint64_t seq,
                               uint64_t time_ns, const SegmentRecord& r) {
  FieldWriter writer(out, state);
  writer.begin(state, is_alloc ? RecordKind::kSegmentAlloc : RecordKind::kSegmentFree, seq,
               time_ns);
  fields(r, writer);
  return writer.position();
}

template <typename R>
inline uint8_t* encode_record(uint8_t* out, StreamState& state, uint64_t seq, uint64_t time_ns,
                              const R& r) {
  FieldWriter writer(out, state);
  writer.begin(state, KindOf<R>::value, seq, time_ns);
  fields(r, writer);
  return writer.position();
}

}  // namespace memlife::format
