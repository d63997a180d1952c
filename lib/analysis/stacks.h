// Turns stack ids into frame lists for the report and into grouping keys.
// Ids are per process and a thread's stacks get their own ids, so findings
// group by the frames a key spells, never by the id.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "analysis/model.h"
#include "symbols/symbolizer.h"

namespace memlife::analysis {

using symbols::NativeFrame;
using symbols::Symbolizer;

class StackResolver {
 public:
  StackResolver(const Model& model, Symbolizer& symbolizer)
      : model_(model), symbolizer_(symbolizer) {}

  // Python frames {"file","line","function"} innermost first, then native
  // frames {"module","function","file","line"} innermost first (at most
  // `max_native`). Empty list for stack 0 or an unknown id.
  nlohmann::json frames(uint64_t stack_id, size_t max_native = 32);
  // Identity of the call site: Python file:line:function, then native
  // addresses. Empty for stack 0.
  const std::string& key(uint64_t stack_id);
  // "file:line in function" of the innermost frame outside torch and the
  // standard library (or the innermost frame at all); empty when none.
  std::string user_line(uint64_t stack_id);

 private:
  const Model& model_;
  Symbolizer& symbolizer_;
  std::unordered_map<uint64_t, std::string> keys_;
};

// Frames from installed packages (site-packages, dist-packages: torch,
// transformers, lightning, ...), the standard library and memlife's own
// Python module: not the program's line.
bool is_library_file(std::string_view file);

}  // namespace memlife::analysis
