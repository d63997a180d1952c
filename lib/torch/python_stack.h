// Python frames of the calling thread, through the CPython C API resolved
// with dlsym (no Python headers, no link-time dependency on libpython).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlife::torch_plugin {

// Resolves the CPython entry points; false when this process has no
// Python (then every function below is a cheap no-op).
bool init_python_api();

// PluginHooks::python_stack: interned frame ids, innermost first. Only on
// threads that have a Python thread state; takes the GIL for the walk.
size_t capture_python_stack(uint64_t* frame_ids, size_t max);

// Forgets every interned frame (their records live in the parent's trace).
void reset_python_frames_after_fork();

// Holds the GIL for a scope when this thread may take it (Python running,
// not finalizing); otherwise holds nothing. Take it before any plugin lock:
// the order is always GIL first.
class GilScope {
 public:
  GilScope();
  ~GilScope();
  GilScope(const GilScope&) = delete;
  GilScope& operator=(const GilScope&) = delete;
  bool held() const { return held_; }

 private:
  bool held_ = false;
  int state_ = 0;
};

}  // namespace memlife::torch_plugin
