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
  if (id == 0 || !tables_.has_string(id)) return nullptr;
  return Json(std::string(tables_.str(id)));
}

Json RecordJson::stack_ref(uint64_t id) const {
  if (id == 0) return nullptr;
  auto it = stacks_.find(id);
  return it == stacks_.end() ? Json(nullptr) : it->second;
}

Json RecordJson::native_frame(uint64_t address, bool return_address) {
  Json out;
  out["address"] = hex(address);
  uint64_t offset = 0;
  const format::Module* module = tables_.module_of(address, offset);
  out["module"] = module ? Json(module->path + "+" + hex(offset)) : Json(nullptr);
  if (module == nullptr) return out;
  // Symbolized as the analyzer does, where the module's symbols allow.
  const symbols::NativeFrame& nf = symbolizer_.symbolize(address, return_address);
  if (nf.function.rfind("0x", 0) != 0) out["function"] = nf.function;
  if (!nf.file.empty()) {
    out["file"] = nf.file;
    out["line"] = nf.line;
  }
  return out;
}

Json RecordJson::resolve_stack(const format::StackRecord& stack) {
  Json frames = Json::array();
  for (uint64_t frame_id : stack.python_frames) {
    Json frame;
    const format::PythonFrame* f = tables_.frame(frame_id);
    if (f == nullptr) {
      frame["frame_id"] = frame_id;
      frame["file"] = nullptr;
      frame["line"] = nullptr;
      frame["function"] = nullptr;
    } else {
      frame["file"] = string_ref(f->file_string);
      frame["line"] = f->line;
      frame["function"] = string_ref(f->function_string);
    }
    frames.push_back(std::move(frame));
  }
  for (size_t i = 0; i < stack.native_addresses.size; ++i)
    frames.push_back(native_frame(stack.native_addresses[i], i > 0));
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

// The field visitor of record_fields.h: each field by its name, with ids
// resolved next to it ("op_string" then "op", "stack_id" then "stack"),
// enums by name and flag bits as booleans.
class RecordJson::FieldJson {
 public:
  FieldJson(const RecordJson& self, Json& out) : self_(self), out_(out) {}

  void varint(const char* name, uint64_t v, format::Meaning meaning) {
    using format::Meaning;
    switch (meaning) {
      case Meaning::kStringId:
        out_[name] = v;
        out_[without_suffix(name, "_string")] = self_.string_ref(v);
        return;
      case Meaning::kStackId:
        out_[name] = v;
        out_[without_suffix(name, "_id")] = self_.stack_ref(v);
        return;
      case Meaning::kCount:
        out_[name] = count_or_null(v);
        return;
      default:
        out_[name] = v;
    }
  }
  void svarint(const char* name, int64_t v) { out_[name] = v; }
  void address(const char* name, uint64_t v) { out_[name] = v; }
  void bytes(const char* name, std::string_view v, format::Meaning meaning) {
    if (meaning == format::Meaning::kRawBytes)
      out_[name] = hex_bytes(v);
    else
      out_[name] = v;
  }
  template <typename T>
  void ids(const char* name, format::List<T> v) {
    out_[name] = array_of(v);
  }
  void sids(const char* name, format::List<int64_t> v) { out_[name] = array_of(v); }
  void holders(const char* name, format::List<format::CensusHolder> v) {
    Json holders = Json::array();
    for (const format::CensusHolder& h : v)
      holders.push_back(Json{{"tensor_id", h.tensor_id}, {"reachable_bytes", h.reachable_bytes}});
    out_[name] = std::move(holders);
  }
  template <typename E>
  void enumeration(const char* name, E v) {
    out_[name] = format::enum_name(v);
  }
  template <size_t N>
  void flags(const char* name, uint64_t v, const std::array<format::FlagName, N>& bits) {
    out_[name] = v;
    for (const format::FlagName& bit : bits) out_[bit.name] = (v & bit.bit) != 0;
  }

 private:
  static std::string without_suffix(std::string_view name, std::string_view suffix) {
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      name.remove_suffix(suffix.size());
    return std::string(name);
  }

  const RecordJson& self_;
  Json& out_;
};

void RecordJson::add_fields(const Record& record, Json& out) {
  FieldJson field_json(*this, out);
  with_body(record.header.kind, record, [&](const auto& body) { fields(body, field_json); });
  // The tables later records resolve their ids against.
  if (tables_.add(record) && record.header.kind == RecordKind::kModule)
    symbolizer_.add_module(tables_.modules().back());
  if (record.header.kind == RecordKind::kStack) {
    Json resolved = resolve_stack(record.stack);
    out["stack"] = resolved;
    stacks_[record.stack.id] = std::move(resolved);
  }
}

std::string to_line(const Json& json) {
  // ASCII only: \u escapes for DEL and C1 controls too, so a jsonl line
  // shown on a terminal cannot carry an escape sequence (issue 15 item 7).
  return json.dump(-1, ' ', true, Json::error_handler_t::replace);
}

}  // namespace memlife::tool
