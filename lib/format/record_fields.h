// The one description of every record's fields: name, wire encoding and
// meaning, in the order the bytes hold them (include/memlife/trace_format.h
// tells the same in prose). The encoder, the reader, `memlife dump` and the
// format tests all walk these descriptions, so a field is added, renamed or
// reordered in one place.
//
// `fields(record, visitor)` calls one visitor method per field:
//   varint(name, value, meaning)    unsigned LEB128
//   svarint(name, value)            zig-zag LEB128
//   address(name, value)            svarint delta from the stream's last address
//   bytes(name, value, meaning)     varint length, then the bytes
//   ids(name, list) / sids(name, list)   varint count, then varints / svarints
//   holders(name, list)             varint count, then (tensor_id, reachable_bytes)
//   enumeration(name, value)        varint, at most EnumInfo<E>::max
//   flags(name, value, bit_names)   varint bit set
// The record is const for the encoder and mutable for the reader: the same
// description serves both.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "format/records.h"

namespace memlife::format {

// How dump shows a field beyond its wire type.
enum class Meaning : uint8_t {
  kNumber,
  kStringId,  // a string record's id: dump adds its text (name without "_string")
  kStackId,   // a stack record's id: dump adds its frames (name without "_id")
  kCount,     // all ones means unknown (kUnknownCount): dump shows null
  kText,      // bytes shown as text
  kRawBytes,  // bytes shown in hex (a build id)
};

struct FlagName {
  uint64_t bit;
  const char* name;
};

// Names of each enum's values, indexed by value; `max` bounds what a reader
// accepts.
template <typename E>
struct EnumInfo;
template <>
struct EnumInfo<FreePhase> {
  static constexpr std::array<const char*, 3> names = {"free", "requested", "completed"};
};
template <>
struct EnumInfo<WaitHow> {
  static constexpr std::array<const char*, 4> names = {"wait_tensor", "work_wait", "stream_wait",
                                                       "synchronize"};
};
template <>
struct EnumInfo<MarkKind> {
  static constexpr std::array<const char*, 4> names = {"step", "label", "expect_freed", "holder"};
};
template <>
struct EnumInfo<CensusReason> {
  static constexpr std::array<const char*, 3> names = {"step", "request", "exit"};
};
template <>
struct EnumInfo<CensusPhase> {
  static constexpr std::array<const char*, 3> names = {"begin", "end", "begin_changes"};
};
template <>
struct EnumInfo<DeathHow> {
  static constexpr std::array<const char*, 2> names = {"destroyed", "only_views_base"};
};

template <typename E>
constexpr uint64_t enum_max() {
  return EnumInfo<E>::names.size() - 1;
}
template <typename E>
const char* enum_name(E value) {
  const auto i = static_cast<uint64_t>(value);
  return i <= enum_max<E>() ? EnumInfo<E>::names[i] : "unknown";
}

inline constexpr std::array<FlagName, 4> kTensorFlagNames = {
    {{kTensorIsView, "is_view"},
     {kTensorAliases, "aliases"},
     {kTensorRequiresGrad, "requires_grad"},
     {kTensorFromInput, "from_input"}}};
inline constexpr std::array<FlagName, 4> kCollectiveFlagNames = {
    {{kCollectiveAsync, "async"},
     {kCollectiveFunctional, "functional"},
     {kCollectiveNccl, "nccl"},
     {kCollectivePointToPoint, "point_to_point"}}};
inline constexpr std::array<FlagName, 1> kEndFlagNames = {{{kEndSignal, "signal"}}};

// The recorder encodes in its hooks: each description must fold into the
// caller (and a fixed-size record's bound into a constant), as hand-written
// code would.
#define MEMLIFE_FIELDS_INLINE [[gnu::always_inline]] inline

// `R` is the record type, const or not.
template <typename R, typename T>
concept RecordOf = std::same_as<std::remove_const_t<R>, T>;

MEMLIFE_FIELDS_INLINE void fields(RecordOf<ProcessRecord> auto& r, auto& v) {
  v.svarint("rank", r.rank);
  v.svarint("local_rank", r.local_rank);
  v.svarint("world_size", r.world_size);
  v.bytes("torch_version", r.torch_version, Meaning::kText);
  v.bytes("note", r.note, Meaning::kText);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<ThreadRecord> auto& r, auto& v) {
  v.varint("tid", r.tid, Meaning::kNumber);
  v.bytes("name", r.name, Meaning::kText);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<ModuleRecord> auto& r, auto& v) {
  v.bytes("path", r.path, Meaning::kText);
  v.varint("base", r.base, Meaning::kNumber);
  v.varint("size", r.size, Meaning::kNumber);
  v.bytes("build_id", r.build_id, Meaning::kRawBytes);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<StringRecord> auto& r, auto& v) {
  v.varint("id", r.id, Meaning::kNumber);
  v.bytes("bytes", r.bytes, Meaning::kText);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<FrameRecord> auto& r, auto& v) {
  v.varint("id", r.id, Meaning::kNumber);
  v.varint("file_string", r.file_string, Meaning::kStringId);
  v.varint("function_string", r.function_string, Meaning::kStringId);
  v.varint("line", r.line, Meaning::kNumber);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<StackRecord> auto& r, auto& v) {
  v.varint("id", r.id, Meaning::kNumber);
  v.ids("python_frames", r.python_frames);  // innermost first
  v.ids("native_addresses", r.native_addresses);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<AllocRecord> auto& r, auto& v) {
  v.address("address", r.address);
  v.varint("bytes", r.bytes, Meaning::kNumber);
  v.svarint("device", r.device);  // -1 = CPU
  v.varint("cuda_stream", r.stream, Meaning::kNumber);
  v.varint("stack_id", r.stack_id, Meaning::kStackId);
  v.varint("op_string", r.op_string, Meaning::kStringId);  // innermost open op
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<FreeRecord> auto& r, auto& v) {
  v.address("address", r.address);
  v.varint("bytes", r.bytes, Meaning::kNumber);
  v.svarint("device", r.device);
  v.enumeration("phase", r.phase);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<SegmentRecord> auto& r, auto& v) {
  v.address("address", r.address);
  v.varint("bytes", r.bytes, Meaning::kNumber);
  v.svarint("device", r.device);
  v.varint("cuda_stream", r.stream, Meaning::kNumber);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<TensorRecord> auto& r, auto& v) {
  v.varint("tensor_id", r.tensor_id, Meaning::kNumber);
  v.varint("storage_id", r.storage_id, Meaning::kNumber);
  v.varint("data_address", r.data_address, Meaning::kNumber);
  v.varint("storage_bytes", r.storage_bytes, Meaning::kNumber);
  v.varint("storage_offset", r.storage_offset, Meaning::kNumber);
  v.sids("sizes", r.sizes);
  v.sids("strides", r.strides);
  v.varint("itemsize", r.itemsize, Meaning::kNumber);
  v.varint("dtype_string", r.dtype_string, Meaning::kStringId);
  v.svarint("device", r.device);
  v.flags("flags", r.flags, kTensorFlagNames);
  v.varint("base_tensor_id", r.base_tensor_id, Meaning::kNumber);
  v.varint("op_string", r.op_string, Meaning::kStringId);
  v.varint("stack_id", r.stack_id, Meaning::kStackId);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<OpBeginRecord> auto& r, auto& v) {
  v.varint("op_id", r.op_id, Meaning::kNumber);
  v.varint("name_string", r.name_string, Meaning::kStringId);
  v.varint("stack_id", r.stack_id, Meaning::kStackId);
  v.ids("inputs", r.inputs);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<OpEndRecord> auto& r, auto& v) {
  v.varint("op_id", r.op_id, Meaning::kNumber);
  v.ids("outputs", r.outputs);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<CollectiveIssueRecord> auto& r, auto& v) {
  v.varint("collective_id", r.collective_id, Meaning::kNumber);
  v.varint("op_string", r.op_string, Meaning::kStringId);
  v.varint("group_string", r.group_string, Meaning::kStringId);
  v.varint("backend_string", r.backend_string, Meaning::kStringId);
  v.ids("inputs", r.inputs);
  v.ids("outputs", r.outputs);
  v.varint("bytes", r.bytes, Meaning::kNumber);
  v.varint("stack_id", r.stack_id, Meaning::kStackId);
  v.varint("nccl_comm", r.nccl_comm, Meaning::kNumber);
  v.varint("nccl_count", r.nccl_count, Meaning::kNumber);
  v.varint("nccl_datatype", r.nccl_datatype, Meaning::kNumber);
  v.varint("cuda_stream", r.stream, Meaning::kNumber);
  v.varint("send_address", r.send_address, Meaning::kNumber);
  v.varint("recv_address", r.recv_address, Meaning::kNumber);
  v.flags("flags", r.flags, kCollectiveFlagNames);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<CollectiveWaitRecord> auto& r, auto& v) {
  v.varint("collective_id", r.collective_id, Meaning::kNumber);
  v.varint("op_string", r.op_string, Meaning::kStringId);
  v.ids("tensors", r.tensors);
  v.varint("stack_id", r.stack_id, Meaning::kStackId);
  v.enumeration("how", r.how);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<MarkRecord> auto& r, auto& v) {
  v.enumeration("kind", r.kind);
  v.varint("step", r.step, Meaning::kNumber);
  v.varint("label_string", r.label_string, Meaning::kStringId);
  v.varint("storage_id", r.storage_id, Meaning::kNumber);
  v.varint("address", r.address, Meaning::kNumber);
  v.varint("stack_id", r.stack_id, Meaning::kStackId);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<CensusRecord> auto& r, auto& v) {
  v.varint("census_id", r.census_id, Meaning::kNumber);
  v.enumeration("phase", r.phase);
  v.enumeration("reason", r.reason);
  v.varint("step", r.step, Meaning::kNumber);
  v.varint("live_tensors", r.live_tensors, Meaning::kNumber);
  v.varint("c10d_unwaited_works", r.c10d_unwaited_works, Meaning::kCount);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<CensusStorageRecord> auto& r, auto& v) {
  v.varint("census_id", r.census_id, Meaning::kNumber);
  v.varint("storage_id", r.storage_id, Meaning::kNumber);
  v.varint("data_address", r.data_address, Meaning::kNumber);
  v.varint("storage_bytes", r.storage_bytes, Meaning::kNumber);
  v.varint("use_count", r.use_count, Meaning::kNumber);
  v.svarint("device", r.device);
  v.holders("holders", r.holders);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<OomRecord> auto& r, auto& v) {
  v.svarint("device", r.device);
  v.varint("bytes_requested", r.bytes_requested, Meaning::kNumber);
  v.varint("device_free", r.device_free, Meaning::kNumber);
  v.varint("device_total", r.device_total, Meaning::kNumber);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<LostRecord> auto& r, auto& v) {
  v.varint("records_lost", r.records_lost, Meaning::kNumber);
  v.varint("bytes_lost", r.bytes_lost, Meaning::kNumber);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<TensorDeathRecord> auto& r, auto& v) {
  v.enumeration("how", r.how);
  v.ids("tensor_ids", r.tensor_ids);
}
MEMLIFE_FIELDS_INLINE void fields(RecordOf<EndRecord> auto& r, auto& v) {
  v.varint("exit_status", r.exit_status, Meaning::kNumber);
  v.flags("flags", r.flags, kEndFlagNames);
}

}  // namespace memlife::format
