// Native stacks through libunwind's unw_backtrace, loaded with RTLD_LOCAL:
// linking libunwind into a preloaded library would let its _Unwind_*
// symbols interpose on libgcc_s for every C++ exception of the program.
#include <dlfcn.h>

#include <atomic>

#include "preload/recorder_state.h"

namespace memlife::rec {
namespace {

using UnwBacktrace = int (*)(void**, int);
std::atomic<UnwBacktrace> g_unw_backtrace{nullptr};
std::atomic<bool> g_unw_tried{false};

UnwBacktrace load_unw_backtrace() {
  if (UnwBacktrace fn = g_unw_backtrace.load(std::memory_order_acquire)) return fn;
  if (g_unw_tried.exchange(true)) return g_unw_backtrace.load(std::memory_order_acquire);
  void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return nullptr;
  auto fn = reinterpret_cast<UnwBacktrace>(dlsym(lib, "unw_backtrace"));
  g_unw_backtrace.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

size_t capture_native_stack(uint64_t* out, size_t max, int skip) {
  UnwBacktrace backtrace = load_unw_backtrace();
  if (backtrace == nullptr || max == 0) return 0;
  void* frames[288];
  const int wanted = static_cast<int>(max) + skip + 1;
  const int n = backtrace(frames, wanted < 288 ? wanted : 288);
  size_t count = 0;
  for (int i = skip + 1; i < n && count < max; ++i) {
    out[count++] = reinterpret_cast<uint64_t>(frames[i]);
  }
  return count;
}

}  // namespace memlife::rec
