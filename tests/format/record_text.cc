#include "record_text.h"

#include <sstream>

namespace memlife::format::testing {
namespace {

// Strings may hold NUL and non-printable bytes: render them as hex so that
// a mismatch is visible and an embedded NUL cannot truncate the comparison.
std::string hex(std::string_view s) {
  static const char* digits = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out + "\"";
}

template <typename T>
std::string list_text(List<T> list) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < list.size; ++i) out << (i ? "," : "") << list[i];
  out << "]";
  return out.str();
}

class Fields {
 public:
  template <typename T>
  Fields& operator()(const char* name, const T& value) {
    out_ << name << "=" << value << " ";
    return *this;
  }
  Fields& s(const char* name, std::string_view value) { return (*this)(name, hex(value)); }
  template <typename T>
  Fields& l(const char* name, List<T> value) {
    return (*this)(name, list_text(value));
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

}  // namespace

std::string body_text(const ProcessRecord& r) {
  return Fields()("rank", r.rank)("local_rank", r.local_rank)("world_size", r.world_size)
      .s("torch_version", r.torch_version)
      .s("note", r.note)
      .str();
}
std::string body_text(const ThreadRecord& r) {
  return Fields()("tid", r.tid).s("name", r.name).str();
}
std::string body_text(const ModuleRecord& r) {
  return Fields().s("path", r.path)("base", r.base)("size", r.size).s("build_id", r.build_id).str();
}
std::string body_text(const StringRecord& r) {
  return Fields()("id", r.id).s("bytes", r.bytes).str();
}
std::string body_text(const FrameRecord& r) {
  return Fields()("id", r.id)("file", r.file_string)("function", r.function_string)("line", r.line)
      .str();
}
std::string body_text(const StackRecord& r) {
  return Fields()("id", r.id).l("python", r.python_frames).l("native", r.native_addresses).str();
}
std::string body_text(const AllocRecord& r) {
  return Fields()("address", r.address)("bytes", r.bytes)("device", r.device)("stream", r.stream)(
             "stack", r.stack_id)("op", r.op_string)
      .str();
}
std::string body_text(const FreeRecord& r) {
  return Fields()("address", r.address)("bytes", r.bytes)("device", r.device)(
             "phase", static_cast<int>(r.phase))
      .str();
}
std::string body_text(const SegmentRecord& r) {
  return Fields()("address", r.address)("bytes", r.bytes)("device", r.device)("stream", r.stream)
      .str();
}
std::string body_text(const TensorRecord& r) {
  return Fields()("tensor", r.tensor_id)("storage", r.storage_id)("data", r.data_address)(
             "storage_bytes", r.storage_bytes)("offset", r.storage_offset)
      .l("sizes", r.sizes)
      .l("strides", r.strides)("itemsize", r.itemsize)("dtype", r.dtype_string)("device", r.device)(
          "flags", r.flags)("base", r.base_tensor_id)("op", r.op_string)("stack", r.stack_id)
      .str();
}
std::string body_text(const OpBeginRecord& r) {
  return Fields()("op", r.op_id)("name", r.name_string)("stack", r.stack_id)
      .l("inputs", r.inputs)
      .str();
}
std::string body_text(const OpEndRecord& r) {
  return Fields()("op", r.op_id).l("outputs", r.outputs).str();
}
std::string body_text(const CollectiveIssueRecord& r) {
  return Fields()("id", r.collective_id)("op", r.op_string)("group", r.group_string)(
             "backend", r.backend_string)
      .l("inputs", r.inputs)
      .l("outputs", r.outputs)("bytes", r.bytes)("stack", r.stack_id)("comm", r.nccl_comm)(
          "count", r.nccl_count)("datatype", r.nccl_datatype)("stream", r.stream)(
          "send", r.send_address)("recv", r.recv_address)("flags", r.flags)
      .str();
}
std::string body_text(const CollectiveWaitRecord& r) {
  return Fields()("id", r.collective_id)("op", r.op_string)
      .l("tensors", r.tensors)("stack", r.stack_id)("how", static_cast<int>(r.how))
      .str();
}
std::string body_text(const MarkRecord& r) {
  return Fields()("kind", static_cast<int>(r.kind))("step", r.step)("label", r.label_string)(
             "storage", r.storage_id)("address", r.address)("stack", r.stack_id)
      .str();
}
std::string body_text(const CensusRecord& r) {
  return Fields()("id", r.census_id)("phase", r.phase)("reason", static_cast<int>(r.reason))(
             "step", r.step)("live", r.live_tensors)("unwaited", r.c10d_unwaited_works)
      .str();
}
std::string body_text(const CensusStorageRecord& r) {
  std::ostringstream holders;
  for (const CensusHolder& h : r.holders) holders << h.tensor_id << ":" << h.reachable_bytes << ",";
  return Fields()("id", r.census_id)("storage", r.storage_id)("data", r.data_address)(
             "bytes", r.storage_bytes)("use_count", r.use_count)("device", r.device)("holders",
                                                                                     holders.str())
      .str();
}
std::string body_text(const OomRecord& r) {
  return Fields()("device", r.device)("requested", r.bytes_requested)("free", r.device_free)(
             "total", r.device_total)
      .str();
}
std::string body_text(const LostRecord& r) {
  return Fields()("records", r.records_lost)("bytes", r.bytes_lost).str();
}
std::string body_text(const TensorDeathRecord& r) {
  std::ostringstream ids;
  for (uint64_t id : r.tensor_ids) ids << id << ',';
  return Fields()("how", static_cast<int>(r.how))("tensors", ids.str()).str();
}
std::string body_text(const EndRecord& r) {
  return Fields()("exit", r.exit_status)("flags", r.flags).str();
}

std::string record_text(RecordKind kind, uint64_t seq, uint64_t time_ns, uint64_t stream,
                        const std::string& body) {
  std::ostringstream out;
  out << static_cast<int>(kind) << " seq=" << seq << " t=" << time_ns << " stream=" << stream
      << " | " << body;
  return out.str();
}

std::string record_text(const Record& r) {
  std::string body;
  switch (r.header.kind) {
    case RecordKind::kProcess:
      body = body_text(r.process);
      break;
    case RecordKind::kThread:
      body = body_text(r.thread);
      break;
    case RecordKind::kModule:
      body = body_text(r.module);
      break;
    case RecordKind::kString:
      body = body_text(r.string);
      break;
    case RecordKind::kFrame:
      body = body_text(r.frame);
      break;
    case RecordKind::kStack:
      body = body_text(r.stack);
      break;
    case RecordKind::kAlloc:
      body = body_text(r.alloc);
      break;
    case RecordKind::kFree:
      body = body_text(r.free);
      break;
    case RecordKind::kSegmentAlloc:
    case RecordKind::kSegmentFree:
      body = body_text(r.segment);
      break;
    case RecordKind::kTensor:
      body = body_text(r.tensor);
      break;
    case RecordKind::kOpBegin:
      body = body_text(r.op_begin);
      break;
    case RecordKind::kOpEnd:
      body = body_text(r.op_end);
      break;
    case RecordKind::kCollectiveIssue:
      body = body_text(r.collective_issue);
      break;
    case RecordKind::kCollectiveWait:
      body = body_text(r.collective_wait);
      break;
    case RecordKind::kMark:
      body = body_text(r.mark);
      break;
    case RecordKind::kCensus:
      body = body_text(r.census);
      break;
    case RecordKind::kCensusStorage:
      body = body_text(r.census_storage);
      break;
    case RecordKind::kOom:
      body = body_text(r.oom);
      break;
    case RecordKind::kLost:
      body = body_text(r.lost);
      break;
    case RecordKind::kEnd:
      body = body_text(r.end);
      break;
    case RecordKind::kTensorDeath:
      body = body_text(r.tensor_death);
      break;
  }
  return record_text(r.header.kind, r.header.seq, r.header.time_ns, r.header.stream_id, body);
}

ReadResult read_all(const uint8_t* data, size_t bytes) {
  ReadResult result;
  auto reader = TraceReader::from_memory(data, bytes, result.error);
  if (!reader) return result;
  result.opened = true;
  result.status = reader->for_each([&](const Record& r) {
    result.records.push_back(record_text(r));
    result.seqs.push_back(r.header.seq);
    return true;
  });
  return result;
}

ReadResult read_all(const std::vector<uint8_t>& bytes) {
  return read_all(bytes.data(), bytes.size());
}

}  // namespace memlife::format::testing

#include <algorithm>

#include "scripted_trace.h"

namespace memlife::format::testing {

Framing walk_framing(const std::vector<uint8_t>& bytes) {
  auto u32 = [&](size_t at) {
    return static_cast<uint32_t>(bytes[at]) | static_cast<uint32_t>(bytes[at + 1]) << 8 |
           static_cast<uint32_t>(bytes[at + 2]) << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
  };
  Framing f;
  f.header_end = 16 + u32(12);
  size_t at = f.header_end;
  while (at + 12 <= bytes.size()) {
    f.chunk_begin.push_back(at);
    at += 12 + u32(at);
    f.chunk_end.push_back(at);
  }
  return f;
}

std::vector<std::string> expected_texts(const std::vector<std::vector<ExpectedRecord>>& chunks,
                                        size_t chunks_kept) {
  std::vector<size_t> lost;
  for (size_t i = chunks_kept; i < chunks.size(); ++i) lost.push_back(i);
  return expected_texts_without(chunks, lost);
}

std::vector<std::string> expected_texts_without(
    const std::vector<std::vector<ExpectedRecord>>& chunks, const std::vector<size_t>& lost) {
  std::vector<ExpectedRecord> all;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (std::find(lost.begin(), lost.end(), i) != lost.end()) continue;
    all.insert(all.end(), chunks[i].begin(), chunks[i].end());
  }
  std::sort(all.begin(), all.end(),
            [](const ExpectedRecord& a, const ExpectedRecord& b) { return a.seq < b.seq; });
  std::vector<std::string> texts;
  for (const ExpectedRecord& r : all) texts.push_back(r.text);
  return texts;
}

}  // namespace memlife::format::testing
