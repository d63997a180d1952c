// Record encoder: turns typed records into the byte layout documented in
// include/memlife/trace_format.h. Header-only so that the recording hot
// path inlines it. The caller guarantees room: bound_bytes() gives an upper
// bound for any record, and the recorder reserves that before encoding.
#pragma once

#include <cstring>

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

  void encode(const ProcessRecord& r) {
    svarint(r.rank);
    svarint(r.local_rank);
    svarint(r.world_size);
    str(r.torch_version);
    str(r.note);
  }
  void encode(const ThreadRecord& r) {
    varint(r.tid);
    str(r.name);
  }
  void encode(const ModuleRecord& r) {
    str(r.path);
    varint(r.base);
    varint(r.size);
    str(r.build_id);
  }
  void encode(const StringRecord& r) {
    varint(r.id);
    str(r.bytes);
  }
  void encode(const FrameRecord& r) {
    varint(r.id);
    varint(r.file_string);
    varint(r.function_string);
    varint(r.line);
  }
  void encode(const StackRecord& r) {
    varint(r.id);
    varints(r.python_frames);
    varints(r.native_addresses);
  }
  void encode(StreamState& s, const AllocRecord& r) {
    address(s, r.address);
    varint(r.bytes);
    svarint(r.device);
    varint(r.stream);
    varint(r.stack_id);
    varint(r.op_string);
  }
  void encode(StreamState& s, const FreeRecord& r) {
    address(s, r.address);
    varint(r.bytes);
    svarint(r.device);
    varint(static_cast<uint64_t>(r.phase));
  }
  void encode(StreamState& s, const SegmentRecord& r) {
    address(s, r.address);
    varint(r.bytes);
    svarint(r.device);
    varint(r.stream);
  }
  void encode(const TensorRecord& r) {
    varint(r.tensor_id);
    varint(r.storage_id);
    varint(r.data_address);
    varint(r.storage_bytes);
    varint(r.storage_offset);
    svarints(r.sizes);
    svarints(r.strides);
    varint(r.itemsize);
    varint(r.dtype_string);
    svarint(r.device);
    varint(r.flags);
    varint(r.base_tensor_id);
    varint(r.op_string);
    varint(r.stack_id);
  }
  void encode(const OpBeginRecord& r) {
    varint(r.op_id);
    varint(r.name_string);
    varint(r.stack_id);
    varints(r.inputs);
  }
  void encode(const OpEndRecord& r) {
    varint(r.op_id);
    varints(r.outputs);
  }
  void encode(const CollectiveIssueRecord& r) {
    varint(r.collective_id);
    varint(r.op_string);
    varint(r.group_string);
    varint(r.backend_string);
    varints(r.inputs);
    varints(r.outputs);
    varint(r.bytes);
    varint(r.stack_id);
    varint(r.nccl_comm);
    varint(r.nccl_count);
    varint(r.nccl_datatype);
    varint(r.stream);
    varint(r.send_address);
    varint(r.recv_address);
    varint(r.flags);
  }
  void encode(const CollectiveWaitRecord& r) {
    varint(r.collective_id);
    varint(r.op_string);
    varints(r.tensors);
    varint(r.stack_id);
    varint(static_cast<uint64_t>(r.how));
  }
  void encode(const MarkRecord& r) {
    varint(static_cast<uint64_t>(r.kind));
    varint(r.step);
    varint(r.label_string);
    varint(r.storage_id);
    varint(r.address);
    varint(r.stack_id);
  }
  void encode(const CensusRecord& r) {
    varint(r.census_id);
    varint(r.phase);
    varint(static_cast<uint64_t>(r.reason));
    varint(r.step);
    varint(r.live_tensors);
    varint(r.c10d_unwaited_works);
  }
  void encode(const CensusStorageRecord& r) {
    varint(r.census_id);
    varint(r.storage_id);
    varint(r.data_address);
    varint(r.storage_bytes);
    varint(r.use_count);
    svarint(r.device);
    varint(r.holders.size);
    for (const CensusHolder& h : r.holders) {
      varint(h.tensor_id);
      varint(h.reachable_bytes);
    }
  }
  void encode(const OomRecord& r) {
    svarint(r.device);
    varint(r.bytes_requested);
    varint(r.device_free);
    varint(r.device_total);
  }
  void encode(const LostRecord& r) {
    varint(r.records_lost);
    varint(r.bytes_lost);
  }
  void encode(const TensorDeathRecord& r) {
    varint(static_cast<uint64_t>(r.how));
    varints(r.tensor_ids);
  }
  void encode(const EndRecord& r) {
    varint(r.exit_status);
    varint(r.flags);
  }

 private:
  uint8_t* out_;
};

// Upper bounds on encoded size, prefix (kind, seq, time) included.
inline constexpr size_t kRecordPrefixBound = 1 + 2 * kMaxVarintBytes;
inline constexpr size_t kFixedFieldsBound = 16 * kMaxVarintBytes;

inline size_t bound_bytes(const ProcessRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.torch_version.size() + r.note.size();
}
inline size_t bound_bytes(const ThreadRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.name.size();
}
inline size_t bound_bytes(const ModuleRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.path.size() + r.build_id.size();
}
inline size_t bound_bytes(const StringRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.bytes.size();
}
inline size_t bound_bytes(const StackRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound +
         (r.python_frames.size + r.native_addresses.size) * kMaxVarintBytes;
}
inline size_t bound_bytes(const TensorRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + (r.sizes.size + r.strides.size) * kMaxVarintBytes;
}
inline size_t bound_bytes(const OpBeginRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.inputs.size * kMaxVarintBytes;
}
inline size_t bound_bytes(const OpEndRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.outputs.size * kMaxVarintBytes;
}
inline size_t bound_bytes(const CollectiveIssueRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound +
         (r.inputs.size + r.outputs.size) * kMaxVarintBytes;
}
inline size_t bound_bytes(const CollectiveWaitRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.tensors.size * kMaxVarintBytes;
}
inline size_t bound_bytes(const TensorDeathRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.tensor_ids.size * kMaxVarintBytes;
}
inline size_t bound_bytes(const CensusStorageRecord& r) {
  return kRecordPrefixBound + kFixedFieldsBound + r.holders.size * 2 * kMaxVarintBytes;
}
template <typename R>
constexpr size_t bound_bytes(const R&) {
  return kRecordPrefixBound + kFixedFieldsBound;
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

// Records whose fields carry a delta-encoded address take the stream state.
template <typename R>
inline void encode_fields(RecordEncoder& enc, StreamState&, const R& r) {
  enc.encode(r);
}
inline void encode_fields(RecordEncoder& enc, StreamState& s, const AllocRecord& r) {
  enc.encode(s, r);
}
inline void encode_fields(RecordEncoder& enc, StreamState& s, const FreeRecord& r) {
  enc.encode(s, r);
}

// Segment records share a struct; the kind is explicit.
inline uint8_t* encode_segment(uint8_t* out, StreamState& state, bool is_alloc, uint64_t seq,
                               uint64_t time_ns, const SegmentRecord& r) {
  RecordEncoder enc(out);
  enc.begin(state, is_alloc ? RecordKind::kSegmentAlloc : RecordKind::kSegmentFree, seq, time_ns);
  enc.encode(state, r);
  return enc.position();
}

template <typename R>
inline uint8_t* encode_record(uint8_t* out, StreamState& state, uint64_t seq, uint64_t time_ns,
                              const R& r) {
  RecordEncoder enc(out);
  enc.begin(state, KindOf<R>::value, seq, time_ns);
  encode_fields(enc, state, r);
  return enc.position();
}

}  // namespace memlife::format
