#include "analysis/stacks.h"

namespace memlife::analysis {

namespace {

// memlife's own Python side (its API and the hooks it installs): never a
// frame of the program's stacks.
bool is_memlife_file(std::string_view file) {
  return file.find("/memlife/__init__.py") != std::string_view::npos ||
         file.find("/memlife/_holders.py") != std::string_view::npos ||
         file.find("/memlife/autoload/") != std::string_view::npos;
}

}  // namespace

bool is_library_file(std::string_view file) {
  const bool installed = file.find("-packages/") != std::string_view::npos;
  const bool stdlib = file.find("/lib/python3") != std::string_view::npos;
  return installed || stdlib || is_memlife_file(file) || file.starts_with("<frozen");
}

nlohmann::json StackResolver::frames(uint64_t stack_id, size_t max_native) {
  nlohmann::json out = nlohmann::json::array();
  const Stack* stack = model_.tables.stack(stack_id);
  if (stack == nullptr) return out;
  for (uint64_t frame_id : stack->python_frames) {
    const format::PythonFrame* f = model_.tables.frame(frame_id);
    if (f == nullptr || is_memlife_file(model_.str(f->file_string))) continue;
    out.push_back({{"file", std::string(model_.str(f->file_string))},
                   {"line", f->line},
                   {"function", std::string(model_.str(f->function_string))}});
  }
  const auto& native = stack->native_addresses;
  for (size_t i = 0; i < native.size() && i < max_native; ++i) {
    const NativeFrame& nf = symbolizer_.symbolize(native[i], i > 0);
    nlohmann::json j = {{"module", nf.module}, {"function", nf.function}};
    j["file"] = nf.file.empty() ? nlohmann::json(nullptr) : nlohmann::json(nf.file);
    j["line"] = nf.line == 0 ? nlohmann::json(nullptr) : nlohmann::json(nf.line);
    out.push_back(std::move(j));
  }
  return out;
}

const std::string& StackResolver::key(uint64_t stack_id) {
  auto found = keys_.find(stack_id);
  if (found != keys_.end()) return found->second;
  return keys_.emplace(stack_id, model_.tables.stack_key(stack_id)).first->second;
}

std::string StackResolver::user_line(uint64_t stack_id) {
  const Stack* stack = model_.tables.stack(stack_id);
  if (stack == nullptr) return {};
  std::string first;
  for (uint64_t frame_id : stack->python_frames) {
    const format::PythonFrame* f = model_.tables.frame(frame_id);
    if (f == nullptr) continue;
    std::string file(model_.str(f->file_string));
    std::string text =
        file + ":" + std::to_string(f->line) + " in " + std::string(model_.str(f->function_string));
    if (!is_library_file(file)) return text;
    if (first.empty()) first = text;
  }
  return first;
}

}  // namespace memlife::analysis
