#include "format/trace_tables.h"

#include <cstdio>

namespace memlife::format {

bool TraceTables::add(const Record& r) {
  switch (r.header.kind) {
    case RecordKind::kString:
      strings_[r.string.id] = std::string(r.string.bytes);
      return true;
    case RecordKind::kFrame:
      frames_[r.frame.id] = {r.frame.file_string, r.frame.function_string, r.frame.line};
      return true;
    case RecordKind::kStack: {
      Stack& s = stacks_[r.stack.id];
      s.python_frames.assign(r.stack.python_frames.begin(), r.stack.python_frames.end());
      s.native_addresses.assign(r.stack.native_addresses.begin(), r.stack.native_addresses.end());
      return true;
    }
    case RecordKind::kModule:
      modules_.push_back({std::string(r.module.path), r.module.base, r.module.size,
                          std::string(r.module.build_id)});
      return true;
    default:
      return false;
  }
}

std::string_view TraceTables::str(uint64_t id) const {
  auto it = strings_.find(id);
  return it == strings_.end() ? std::string_view{} : std::string_view{it->second};
}

const PythonFrame* TraceTables::frame(uint64_t id) const {
  auto it = frames_.find(id);
  return it == frames_.end() ? nullptr : &it->second;
}

const Stack* TraceTables::stack(uint64_t id) const {
  if (id == 0) return nullptr;
  auto it = stacks_.find(id);
  return it == stacks_.end() ? nullptr : &it->second;
}

std::string TraceTables::stack_key(uint64_t stack_id) const {
  std::string key;
  const Stack* s = stack(stack_id);
  if (s == nullptr) return key;
  for (uint64_t frame_id : s->python_frames) {
    const PythonFrame* f = frame(frame_id);
    if (f == nullptr) continue;
    key += str(f->file_string);
    key += ':';
    key += std::to_string(f->line);
    key += ':';
    key += str(f->function_string);
    key += '\n';
  }
  char buf[24];
  for (uint64_t a : s->native_addresses) {
    std::snprintf(buf, sizeof buf, "%llx;", static_cast<unsigned long long>(a));
    key += buf;
  }
  return key;
}

const Module* TraceTables::module_of(uint64_t address, uint64_t& offset) const {
  for (auto it = modules_.rbegin(); it != modules_.rend(); ++it) {
    if (address >= it->base && address - it->base < it->size) {
      offset = address - it->base;
      return &*it;
    }
  }
  return nullptr;
}

}  // namespace memlife::format
