#include "record_json.h"

#include <cstdio>

namespace memlife::tool {
namespace {

using format::Record;
using memlife::RecordKind;

template <typename T>
Json array_of(const format::List<T>& list) {
  Json out = Json::array();
  for (const T& v : list) out.push_back(v);
  return out;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hex_bytes(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

const char* free_phase_name(FreePhase phase) {
  switch (phase) {
    case FreePhase::kFree:
      return "free";
    case FreePhase::kRequested:
      return "requested";
    case FreePhase::kCompleted:
      return "completed";
  }
  return "unknown";
}

const char* wait_how_name(WaitHow how) {
  switch (how) {
    case WaitHow::kWaitTensor:
      return "wait_tensor";
    case WaitHow::kWorkWait:
      return "work_wait";
    case WaitHow::kStreamWait:
      return "stream_wait";
    case WaitHow::kSynchronize:
      return "synchronize";
  }
  return "unknown";
}

const char* mark_kind_name(MarkKind kind) {
  switch (kind) {
    case MarkKind::kStep:
      return "step";
    case MarkKind::kLabel:
      return "label";
    case MarkKind::kExpectFreed:
      return "expect_freed";
    case MarkKind::kHolder:
      return "holder";
  }
  return "unknown";
}

const char* census_reason_name(CensusReason reason) {
  switch (reason) {
    case CensusReason::kStep:
      return "step";
    case CensusReason::kRequest:
      return "request";
    case CensusReason::kExit:
      return "exit";
  }
  return "unknown";
}

// "unknown" counts are all ones on the wire; null says so in JSON.
Json count_or_null(uint64_t v) { return v == format::kUnknownCount ? Json(nullptr) : Json(v); }

}  // namespace

Json RecordJson::header(const format::TraceHeader& h) {
  Json out;
  out["type"] = "header";
  out["format_version"] = h.format_version;
  out["producer_version"] = std::to_string(h.producer_major) + "." +
                            std::to_string(h.producer_minor) + "." +
                            std::to_string(h.producer_patch);
  out["pid"] = h.pid;
  out["ppid"] = h.ppid;
  out["rank"] = h.rank;
  out["local_rank"] = h.local_rank;
  out["world_size"] = h.world_size;
  out["host"] = h.host;
  out["run_id"] = h.run_id;
  out["torch_version"] = h.torch_version;
  out["start_monotonic_ns"] = h.start_monotonic_ns;
  out["start_wall_ns"] = h.start_wall_ns;
  out["command_line"] = h.command_line;
  return out;
}

Json RecordJson::summary(const format::ReadStatus& s) {
  Json out;
  out["type"] = "summary";
  out["records"] = s.records;
  out["chunks"] = s.chunks;
  out["streams"] = s.streams;
  out["file_bytes"] = s.file_bytes;
  out["complete"] = s.complete;
  out["truncated"] = !s.complete;
  out["damaged"] = s.damaged;
  out["stop_reason"] = s.stop_reason;
  out["stop_offset"] = s.stop_offset;
  out["skipped_bytes"] = s.skipped_bytes;
  out["skipped_chunks"] = s.skipped_chunks;
  out["resumed"] = s.resumed;
  return out;
}

Json RecordJson::string_ref(uint64_t id) const {
  if (id == 0) return nullptr;
  auto it = strings_.find(id);
  return it == strings_.end() ? Json(nullptr) : Json(it->second);
}

Json RecordJson::stack_ref(uint64_t id) const {
  if (id == 0) return nullptr;
  auto it = stacks_.find(id);
  return it == stacks_.end() ? Json(nullptr) : it->second;
}

Json RecordJson::native_frame(uint64_t address) const {
  Json out;
  out["address"] = hex(address);
  auto it = modules_by_base_.upper_bound(address);
  if (it != modules_by_base_.begin()) {
    --it;
    const uint64_t offset = address - it->first;
    if (offset < it->second.size) {
      out["module"] = it->second.path + "+" + hex(offset);
      return out;
    }
  }
  out["module"] = nullptr;
  return out;
}

Json RecordJson::resolve_stack(const format::StackRecord& stack) const {
  Json frames = Json::array();
  for (uint64_t frame_id : stack.python_frames) {
    Json frame;
    auto it = frames_.find(frame_id);
    if (it == frames_.end()) {
      frame["frame_id"] = frame_id;
      frame["file"] = nullptr;
      frame["line"] = nullptr;
      frame["function"] = nullptr;
    } else {
      frame["file"] = string_ref(it->second.file_string);
      frame["line"] = it->second.line;
      frame["function"] = string_ref(it->second.function_string);
    }
    frames.push_back(std::move(frame));
  }
  for (uint64_t address : stack.native_addresses) frames.push_back(native_frame(address));
  return frames;
}

Json RecordJson::convert(const Record& record) {
  Json out;
  out["type"] = format::record_kind_name(record.header.kind);
  if (record.header.kind == RecordKind::kOpBegin) out["phase"] = "begin";
  if (record.header.kind == RecordKind::kOpEnd) out["phase"] = "end";
  out["seq"] = record.header.seq;
  out["time_ns"] = record.header.time_ns;
  out["stream"] = record.header.stream_id;
  add_fields(record, out);
  return out;
}

void RecordJson::add_fields(const Record& record, Json& out) {
  switch (record.header.kind) {
    case RecordKind::kProcess: {
      const auto& r = record.process;
      out["rank"] = r.rank;
      out["local_rank"] = r.local_rank;
      out["world_size"] = r.world_size;
      out["torch_version"] = r.torch_version;
      out["note"] = r.note;
      break;
    }
    case RecordKind::kThread:
      out["tid"] = record.thread.tid;
      out["name"] = record.thread.name;
      break;
    case RecordKind::kModule: {
      const auto& r = record.module;
      out["path"] = r.path;
      out["base"] = r.base;
      out["size"] = r.size;
      out["build_id"] = hex_bytes(r.build_id);
      modules_by_base_[r.base] = Module{std::string(r.path), r.size};
      break;
    }
    case RecordKind::kString:
      out["id"] = record.string.id;
      out["bytes"] = record.string.bytes;
      strings_[record.string.id] = std::string(record.string.bytes);
      break;
    case RecordKind::kFrame: {
      const auto& r = record.frame;
      out["id"] = r.id;
      out["file_string"] = r.file_string;
      out["file"] = string_ref(r.file_string);
      out["function_string"] = r.function_string;
      out["function"] = string_ref(r.function_string);
      out["line"] = r.line;
      frames_[r.id] = Frame{r.file_string, r.function_string, r.line};
      break;
    }
    case RecordKind::kStack: {
      const auto& r = record.stack;
      out["id"] = r.id;
      out["python_frames"] = array_of(r.python_frames);
      Json native = Json::array();
      for (uint64_t a : r.native_addresses) native.push_back(a);
      out["native_addresses"] = std::move(native);
      Json resolved = resolve_stack(r);
      out["stack"] = resolved;
      stacks_[r.id] = std::move(resolved);
      break;
    }
    case RecordKind::kAlloc: {
      const auto& r = record.alloc;
      out["address"] = r.address;
      out["bytes"] = r.bytes;
      out["device"] = r.device;
      out["cuda_stream"] = r.stream;
      out["stack_id"] = r.stack_id;
      out["stack"] = stack_ref(r.stack_id);
      out["op_string"] = r.op_string;
      out["op"] = string_ref(r.op_string);
      break;
    }
    case RecordKind::kFree: {
      const auto& r = record.free;
      out["address"] = r.address;
      out["bytes"] = r.bytes;
      out["device"] = r.device;
      out["phase"] = free_phase_name(r.phase);
      break;
    }
    case RecordKind::kSegmentAlloc:
    case RecordKind::kSegmentFree: {
      const auto& r = record.segment;
      out["address"] = r.address;
      out["bytes"] = r.bytes;
      out["device"] = r.device;
      out["cuda_stream"] = r.stream;
      break;
    }
    case RecordKind::kTensor: {
      const auto& r = record.tensor;
      out["tensor_id"] = r.tensor_id;
      out["storage_id"] = r.storage_id;
      out["data_address"] = r.data_address;
      out["storage_bytes"] = r.storage_bytes;
      out["storage_offset"] = r.storage_offset;
      out["sizes"] = array_of(r.sizes);
      out["strides"] = array_of(r.strides);
      out["itemsize"] = r.itemsize;
      out["dtype_string"] = r.dtype_string;
      out["dtype"] = string_ref(r.dtype_string);
      out["device"] = r.device;
      out["flags"] = r.flags;
      out["is_view"] = (r.flags & kTensorIsView) != 0;
      out["aliases"] = (r.flags & kTensorAliases) != 0;
      out["requires_grad"] = (r.flags & kTensorRequiresGrad) != 0;
      out["from_input"] = (r.flags & kTensorFromInput) != 0;
      out["base_tensor_id"] = r.base_tensor_id;
      out["op_string"] = r.op_string;
      out["op"] = string_ref(r.op_string);
      out["stack_id"] = r.stack_id;
      out["stack"] = stack_ref(r.stack_id);
      break;
    }
    case RecordKind::kOpBegin: {
      const auto& r = record.op_begin;
      out["op_id"] = r.op_id;
      out["name_string"] = r.name_string;
      out["name"] = string_ref(r.name_string);
      out["stack_id"] = r.stack_id;
      out["stack"] = stack_ref(r.stack_id);
      out["inputs"] = array_of(r.inputs);
      break;
    }
    case RecordKind::kOpEnd:
      out["op_id"] = record.op_end.op_id;
      out["outputs"] = array_of(record.op_end.outputs);
      break;
    case RecordKind::kCollectiveIssue: {
      const auto& r = record.collective_issue;
      out["collective_id"] = r.collective_id;
      out["op_string"] = r.op_string;
      out["op"] = string_ref(r.op_string);
      out["group_string"] = r.group_string;
      out["group"] = string_ref(r.group_string);
      out["backend_string"] = r.backend_string;
      out["backend"] = string_ref(r.backend_string);
      out["inputs"] = array_of(r.inputs);
      out["outputs"] = array_of(r.outputs);
      out["bytes"] = r.bytes;
      out["stack_id"] = r.stack_id;
      out["stack"] = stack_ref(r.stack_id);
      out["nccl_comm"] = r.nccl_comm;
      out["nccl_count"] = r.nccl_count;
      out["nccl_datatype"] = r.nccl_datatype;
      out["cuda_stream"] = r.stream;
      out["send_address"] = r.send_address;
      out["recv_address"] = r.recv_address;
      out["flags"] = r.flags;
      out["async"] = (r.flags & kCollectiveAsync) != 0;
      out["functional"] = (r.flags & kCollectiveFunctional) != 0;
      out["nccl"] = (r.flags & kCollectiveNccl) != 0;
      break;
    }
    case RecordKind::kCollectiveWait: {
      const auto& r = record.collective_wait;
      out["collective_id"] = r.collective_id;
      out["op_string"] = r.op_string;
      out["op"] = string_ref(r.op_string);
      out["tensors"] = array_of(r.tensors);
      out["stack_id"] = r.stack_id;
      out["stack"] = stack_ref(r.stack_id);
      out["how"] = wait_how_name(r.how);
      break;
    }
    case RecordKind::kMark: {
      const auto& r = record.mark;
      out["kind"] = mark_kind_name(r.kind);
      out["step"] = r.step;
      out["label_string"] = r.label_string;
      out["label"] = string_ref(r.label_string);
      out["storage_id"] = r.storage_id;
      out["address"] = r.address;
      out["stack_id"] = r.stack_id;
      out["stack"] = stack_ref(r.stack_id);
      break;
    }
    case RecordKind::kCensus: {
      const auto& r = record.census;
      out["census_id"] = r.census_id;
      out["phase"] = r.phase == 0 ? "begin" : "end";
      out["reason"] = census_reason_name(r.reason);
      out["step"] = r.step;
      out["live_tensors"] = r.live_tensors;
      out["c10d_unwaited_works"] = count_or_null(r.c10d_unwaited_works);
      break;
    }
    case RecordKind::kCensusStorage: {
      const auto& r = record.census_storage;
      out["census_id"] = r.census_id;
      out["storage_id"] = r.storage_id;
      out["data_address"] = r.data_address;
      out["storage_bytes"] = r.storage_bytes;
      out["use_count"] = r.use_count;
      out["device"] = r.device;
      Json holders = Json::array();
      for (const format::CensusHolder& h : r.holders) {
        holders.push_back(Json{{"tensor_id", h.tensor_id}, {"reachable_bytes", h.reachable_bytes}});
      }
      out["holders"] = std::move(holders);
      break;
    }
    case RecordKind::kOom: {
      const auto& r = record.oom;
      out["device"] = r.device;
      out["bytes_requested"] = r.bytes_requested;
      out["device_free"] = r.device_free;
      out["device_total"] = r.device_total;
      break;
    }
    case RecordKind::kLost:
      out["records_lost"] = record.lost.records_lost;
      out["bytes_lost"] = record.lost.bytes_lost;
      break;
    case RecordKind::kEnd:
      out["exit_status"] = record.end.exit_status;
      out["flags"] = record.end.flags;
      out["signal"] = (record.end.flags & kEndSignal) != 0;
      break;
    case RecordKind::kTensorDeath:
      out["how"] =
          record.tensor_death.how == DeathHow::kOnlyViewsBase ? "only_views_base" : "destroyed";
      out["tensor_ids"] = array_of(record.tensor_death.tensor_ids);
      break;
  }
}

std::string to_line(const Json& json) {
  // ASCII only: \u escapes for DEL and C1 controls too, so a jsonl line
  // shown on a terminal cannot carry an escape sequence (issue 15 item 7).
  return json.dump(-1, ' ', true, Json::error_handler_t::replace);
}

}  // namespace memlife::tool
