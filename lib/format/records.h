// Typed views of every record kind. The encoder takes them, the reader fills
// them. Lists and strings are non-owning views: the encoder only reads them
// during the call, and the reader's views stay valid until the next record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memlife/trace_format.h"

namespace memlife::format {

template <typename T>
struct List {
  const T* data = nullptr;
  size_t size = 0;
  const T* begin() const { return data; }
  const T* end() const { return data + size; }
  const T& operator[](size_t i) const { return data[i]; }
  bool empty() const { return size == 0; }
};

template <typename T, typename Container>
List<T> list_of(const Container& c) {
  return List<T>{c.data(), c.size()};
}

struct HeaderFields {
  uint32_t format_version = kFormatVersion;
  uint32_t producer_major = 0, producer_minor = 0, producer_patch = 0;
  uint64_t pid = 0, ppid = 0;
  int64_t rank = -1, local_rank = -1, world_size = -1;
  std::string_view host, run_id, torch_version;
  uint64_t start_monotonic_ns = 0, start_wall_ns = 0;
  std::string_view command_line;
};

struct ProcessRecord {
  int64_t rank = -1, local_rank = -1, world_size = -1;
  std::string_view torch_version, note;
};
struct ThreadRecord {
  uint64_t tid = 0;
  std::string_view name;
};
struct ModuleRecord {
  std::string_view path;
  uint64_t base = 0, size = 0;
  std::string_view build_id;
};
struct StringRecord {
  uint64_t id = 0;
  std::string_view bytes;
};
struct FrameRecord {
  uint64_t id = 0, file_string = 0, function_string = 0, line = 0;
};
struct StackRecord {
  uint64_t id = 0;
  List<uint64_t> python_frames;
  List<uint64_t> native_addresses;
};
struct AllocRecord {
  uint64_t address = 0, bytes = 0;
  int64_t device = -1;
  uint64_t stream = 0, stack_id = 0, op_string = 0;
};
struct FreeRecord {
  uint64_t address = 0, bytes = 0;
  int64_t device = -1;
  FreePhase phase = FreePhase::kFree;
};
struct SegmentRecord {
  uint64_t address = 0, bytes = 0;
  int64_t device = -1;
  uint64_t stream = 0;
};
struct TensorRecord {
  uint64_t tensor_id = 0, storage_id = 0, data_address = 0, storage_bytes = 0;
  uint64_t storage_offset = 0;
  List<int64_t> sizes, strides;
  uint64_t itemsize = 0, dtype_string = 0;
  int64_t device = -1;
  uint64_t flags = 0, base_tensor_id = 0, op_string = 0, stack_id = 0;
};
struct OpBeginRecord {
  uint64_t op_id = 0, name_string = 0, stack_id = 0;
  List<uint64_t> inputs;
};
struct OpEndRecord {
  uint64_t op_id = 0;
  List<uint64_t> outputs;
};
struct CollectiveIssueRecord {
  uint64_t collective_id = 0, op_string = 0, group_string = 0, backend_string = 0;
  List<uint64_t> inputs, outputs;
  uint64_t bytes = 0, stack_id = 0;
  uint64_t nccl_comm = 0, nccl_count = 0, nccl_datatype = 0, stream = 0;
  uint64_t send_address = 0, recv_address = 0, flags = 0;
};
struct CollectiveWaitRecord {
  uint64_t collective_id = 0, op_string = 0;
  List<uint64_t> tensors;
  uint64_t stack_id = 0;
  WaitHow how = WaitHow::kWaitTensor;
};
struct MarkRecord {
  MarkKind kind = MarkKind::kStep;
  uint64_t step = 0, label_string = 0, storage_id = 0, address = 0, stack_id = 0;
};
inline constexpr uint64_t kUnknownCount = ~uint64_t{0};
struct CensusRecord {
  uint64_t census_id = 0;
  CensusPhase phase = CensusPhase::kBegin;
  CensusReason reason = CensusReason::kStep;
  uint64_t step = 0, live_tensors = 0, c10d_unwaited_works = kUnknownCount;
};
struct CensusHolder {
  uint64_t tensor_id = 0, reachable_bytes = 0;
  bool operator==(const CensusHolder&) const = default;
};
struct CensusStorageRecord {
  uint64_t census_id = 0, storage_id = 0, data_address = 0, storage_bytes = 0, use_count = 0;
  int64_t device = -1;
  List<CensusHolder> holders;
};
struct OomRecord {
  int64_t device = 0;
  uint64_t bytes_requested = 0, device_free = 0, device_total = 0;
};
struct LostRecord {
  uint64_t records_lost = 0, bytes_lost = 0;
};
struct TensorDeathRecord {
  DeathHow how = DeathHow::kDestroyed;
  List<uint64_t> tensor_ids;
};
struct EndRecord {
  uint64_t exit_status = 0, flags = 0;
};

// Common prefix of every record.
struct RecordHeader {
  RecordKind kind = RecordKind::kEnd;
  uint64_t seq = 0;
  uint64_t time_ns = 0;
  uint64_t stream_id = 0;
};

const char* record_kind_name(RecordKind kind);

}  // namespace memlife::format
