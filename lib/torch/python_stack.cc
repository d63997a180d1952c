#include "torch/python_stack.h"

#include <dlfcn.h>

#include <string_view>
#include <unordered_map>

#include "preload/recorder.h"
#include "torch/arena.h"

namespace memlife::torch_plugin {
namespace {

using PyObj = void;
struct PythonApi {
  int (*is_initialized)() = nullptr;
  int (*is_finalizing)() = nullptr;
  void* (*gil_this_thread_state)() = nullptr;
  int (*gil_ensure)() = nullptr;
  void (*gil_release)(int) = nullptr;
  PyObj* (*thread_state_get_frame)(void*) = nullptr;
  PyObj* (*frame_get_back)(PyObj*) = nullptr;
  PyObj* (*frame_get_code)(PyObj*) = nullptr;
  int (*frame_get_lasti)(PyObj*) = nullptr;
  int (*frame_get_line_number)(PyObj*) = nullptr;
  void (*inc_ref)(PyObj*) = nullptr;
  void (*dec_ref)(PyObj*) = nullptr;
  PyObj* (*get_attr_string)(PyObj*, const char*) = nullptr;
  const char* (*unicode_as_utf8)(PyObj*, long*) = nullptr;
  void (*err_clear)() = nullptr;
  bool ready = false;
};
PythonApi g_py;

template <typename F>
void resolve(F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

bool python_usable() {
  if (!g_py.ready || g_py.is_initialized() == 0) return false;
  return g_py.is_finalizing == nullptr || g_py.is_finalizing() == 0;
}

struct FrameKey {
  const void* code;
  int lasti;
  bool operator==(const FrameKey& o) const { return code == o.code && lasti == o.lasti; }
};
struct FrameKeyHash {
  size_t operator()(const FrameKey& k) const {
    return std::hash<const void*>()(k.code) * 31u + static_cast<size_t>(k.lasti);
  }
};
// Guarded by the GIL. Each key holds a strong reference to its code object
// so the address is never reused by another code object.
using FrameTable = std::unordered_map<FrameKey, uint64_t, FrameKeyHash, std::equal_to<FrameKey>,
                                      arena::Allocator<std::pair<const FrameKey, uint64_t>>>;
FrameTable* g_frames = nullptr;

uint64_t intern_attr(PyObj* code, const char* attr, const char* fallback_attr) {
  PyObj* value = g_py.get_attr_string(code, attr);
  if (value == nullptr && fallback_attr != nullptr) {
    g_py.err_clear();
    value = g_py.get_attr_string(code, fallback_attr);
  }
  if (value == nullptr) {
    g_py.err_clear();
    return rec::intern_string("?");
  }
  long size = 0;
  const char* utf8 = g_py.unicode_as_utf8(value, &size);
  uint64_t id = 0;
  if (utf8 == nullptr) {
    g_py.err_clear();
    id = rec::intern_string("?");
  } else {
    id = rec::intern_string(std::string_view(utf8, static_cast<size_t>(size)));
  }
  g_py.dec_ref(value);
  return id;
}

// First sight of (code, lasti): write the frame record, then publish it, so
// the record precedes every use in sequence order.
uint64_t intern_frame(PyObj* frame, PyObj* code, int lasti) {
  if (g_frames == nullptr) g_frames = arena::make<FrameTable>();
  const FrameKey key{code, lasti};
  auto it = g_frames->find(key);
  if (it != g_frames->end()) return it->second;
  format::FrameRecord record;
  record.id = rec::next_id();
  record.file_string = intern_attr(code, "co_filename", nullptr);
  record.function_string = intern_attr(code, "co_qualname", "co_name");
  const int line = g_py.frame_get_line_number(frame);
  record.line = line > 0 ? static_cast<uint64_t>(line) : 0;
  rec::emit(record);
  g_py.inc_ref(code);
  g_frames->emplace(key, record.id);
  return record.id;
}

}  // namespace

bool init_python_api() {
  resolve(g_py.is_initialized, "Py_IsInitialized");
  resolve(g_py.is_finalizing, "Py_IsFinalizing");
  if (g_py.is_finalizing == nullptr) resolve(g_py.is_finalizing, "_Py_IsFinalizing");
  resolve(g_py.gil_this_thread_state, "PyGILState_GetThisThreadState");
  resolve(g_py.gil_ensure, "PyGILState_Ensure");
  resolve(g_py.gil_release, "PyGILState_Release");
  resolve(g_py.thread_state_get_frame, "PyThreadState_GetFrame");
  resolve(g_py.frame_get_back, "PyFrame_GetBack");
  resolve(g_py.frame_get_code, "PyFrame_GetCode");
  resolve(g_py.frame_get_lasti, "PyFrame_GetLasti");
  resolve(g_py.frame_get_line_number, "PyFrame_GetLineNumber");
  resolve(g_py.inc_ref, "Py_IncRef");
  resolve(g_py.dec_ref, "Py_DecRef");
  resolve(g_py.get_attr_string, "PyObject_GetAttrString");
  resolve(g_py.unicode_as_utf8, "PyUnicode_AsUTF8AndSize");
  resolve(g_py.err_clear, "PyErr_Clear");
  // PyFrame_GetLasti is 3.11+; older interpreters are not supported.
  g_py.ready = g_py.is_initialized && g_py.gil_this_thread_state && g_py.gil_ensure &&
               g_py.gil_release && g_py.thread_state_get_frame && g_py.frame_get_back &&
               g_py.frame_get_code && g_py.frame_get_lasti && g_py.frame_get_line_number &&
               g_py.inc_ref && g_py.dec_ref && g_py.get_attr_string && g_py.unicode_as_utf8 &&
               g_py.err_clear;
  return g_py.ready;
}

size_t capture_python_stack(uint64_t* frame_ids, size_t max) {
  if (max == 0 || !python_usable()) return 0;
  // Threads Python never ran on (gloo, intra-op pools) have no frames, and
  // creating a thread state for them would be wrong.
  if (g_py.gil_this_thread_state() == nullptr) return 0;
  const int gil = g_py.gil_ensure();
  size_t count = 0;
  void* tstate = g_py.gil_this_thread_state();
  PyObj* frame = tstate != nullptr ? g_py.thread_state_get_frame(tstate) : nullptr;
  while (frame != nullptr && count < max) {
    PyObj* code = g_py.frame_get_code(frame);
    if (code != nullptr) {
      frame_ids[count++] = intern_frame(frame, code, g_py.frame_get_lasti(frame));
      g_py.dec_ref(code);
    }
    PyObj* back = g_py.frame_get_back(frame);
    g_py.dec_ref(frame);
    frame = back;
  }
  if (frame != nullptr) g_py.dec_ref(frame);
  g_py.gil_release(gil);
  return count;
}

void reset_python_frames_after_fork() {
  // Leaked on purpose: the child must not run destructors over state another
  // thread of the parent may have been changing.
  g_frames = nullptr;
}

GilScope::GilScope() {
  if (!python_usable()) return;
  state_ = g_py.gil_ensure();
  held_ = true;
}

GilScope::~GilScope() {
  if (held_) g_py.gil_release(state_);
}

}  // namespace memlife::torch_plugin
