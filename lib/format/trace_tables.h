// The tables a trace defines before it uses them: strings, Python frames,
// stacks and the module map (records string, frame, stack, module). Every
// reader of traces (the analyzer, the views, `memlife dump`) feeds its
// records through one TraceTables and resolves ids against it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "format/reader.h"

namespace memlife::format {

struct Module {
  std::string path;
  uint64_t base = 0, size = 0;
  std::string build_id;
};

struct PythonFrame {
  uint64_t file_string = 0, function_string = 0, line = 0;
};

struct Stack {
  std::vector<uint64_t> python_frames;     // frame ids, innermost first
  std::vector<uint64_t> native_addresses;  // innermost first
};

class TraceTables {
 public:
  // Takes a string, frame, stack or module record; false (and nothing
  // kept) for any other kind.
  bool add(const Record& r);

  // Empty for 0 or an unknown id.
  std::string_view str(uint64_t id) const;
  bool has_string(uint64_t id) const { return strings_.count(id) != 0; }
  // Null for 0 or an unknown id.
  const PythonFrame* frame(uint64_t id) const;
  const Stack* stack(uint64_t id) const;
  // In the order the trace listed them (a later load may reuse a range).
  const std::vector<Module>& modules() const { return modules_; }
  // The module that maps `address` (the latest listed when several did),
  // or null; `offset` gets the address relative to its base.
  const Module* module_of(uint64_t address, uint64_t& offset) const;
  bool has_python_frames() const { return !frames_.empty(); }
  // The identity of a call site: its Python frames' file:line:function,
  // then its native addresses. Stacks are interned per thread, so equal
  // call sites can have several ids: group by this, never by the id.
  // Empty for 0 or an unknown id.
  std::string stack_key(uint64_t stack_id) const;

 private:
  std::unordered_map<uint64_t, std::string> strings_;
  std::unordered_map<uint64_t, PythonFrame> frames_;
  std::unordered_map<uint64_t, Stack> stacks_;
  std::vector<Module> modules_;
};

}  // namespace memlife::format
