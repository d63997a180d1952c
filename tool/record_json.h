// Turns decoded trace records into JSON objects with every field by name,
// resolving ids on the fly: string ids become their text next to the id,
// stack ids become lists of Python frames and native frames located in the
// modules seen so far. Definitions precede their uses in sequence order, so
// feeding records in reader order resolves everything a trace can resolve.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "format/reader.h"
#include "format/trace_tables.h"
#include "symbols/symbolizer.h"

namespace memlife::tool {

using Json = nlohmann::ordered_json;

class RecordJson {
 public:
  // {"type":"header", ...}: the file header's fields.
  static Json header(const format::TraceHeader& header);
  // {"type":"summary", ...}: how reading went.
  static Json summary(const format::ReadStatus& status);

  // {"type":..., "seq":..., "time_ns":..., "stream":..., fields...}.
  Json convert(const format::Record& record);

 private:
  Json string_ref(uint64_t id) const;
  Json stack_ref(uint64_t id) const;
  Json resolve_stack(const format::StackRecord& stack);
  Json native_frame(uint64_t address, bool return_address);
  void add_fields(const format::Record& record, Json& out);
  class FieldJson;

  format::TraceTables tables_;
  symbols::Symbolizer symbolizer_;
  std::unordered_map<uint64_t, Json> stacks_;  // resolved, by stack id
};

// Writes JSON as one line; invalid UTF-8 in trace strings is replaced, not
// fatal.
std::string to_line(const Json& json);

}  // namespace memlife::tool
