// How the GPU half gets going: CUPTI is attached when the CUDA driver
// initialises (through the driver's documented injection hook,
// CUDA_INJECTION64_PATH, the one profilers use), or on dlopen of libcuda
// when another tool already owns that hook; the torch CUDA tracker is
// loaded once libc10_cuda is in the process.
#include "gpu/gpu_hooks.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/cupti_callbacks.h"
#include "preload/recorder.h"
#include "preload/recorder_state.h"

namespace memlife::gpu {
namespace {

std::atomic<bool> g_c10_cuda{false};
std::atomic<bool> g_injection_ours{false};

int find_object(dl_phdr_info* info, size_t, void* needle) {
  const char* name = info->dlpi_name;
  return name != nullptr && std::strstr(name, static_cast<const char*>(needle)) != nullptr;
}

bool loaded(const char* needle) {
  return dl_iterate_phdr(find_object, const_cast<char*>(needle)) != 0;
}

}  // namespace

bool c10_cuda_loaded() { return g_c10_cuda.load(std::memory_order_acquire); }

void at_start() {
  // NOLINTBEGIN(concurrency-mt-unsafe): the constructor runs single-threaded.
  const char* existing = std::getenv("CUDA_INJECTION64_PATH");
  Dl_info self{};
  if ((existing == nullptr || *existing == '\0') &&
      dladdr(reinterpret_cast<void*>(&at_start), &self) != 0 && self.dli_fname != nullptr) {
    setenv("CUDA_INJECTION64_PATH", self.dli_fname, 1);
    g_injection_ours.store(true);
  } else if (existing != nullptr && self.dli_fname != nullptr &&
             std::strcmp(existing, self.dli_fname) == 0) {
    g_injection_ours.store(true);  // inherited from a traced parent
  }
  // NOLINTEND(concurrency-mt-unsafe)
  if (loaded("libc10_cuda")) g_c10_cuda.store(true);
  if (!g_injection_ours.load() && loaded("libcuda.so")) attach_cupti();
}

void at_attach() {
  if (loaded("libc10_cuda")) g_c10_cuda.store(true, std::memory_order_release);
  if (loaded("libcuda.so")) attach_cupti();
}

void on_library_loaded(const char* file) {
  if (!g_c10_cuda.load(std::memory_order_relaxed) && loaded("libc10_cuda")) {
    g_c10_cuda.store(true, std::memory_order_release);
  }
  if (!g_injection_ours.load(std::memory_order_relaxed) && file != nullptr &&
      std::strstr(file, "libcuda.so") != nullptr) {
    attach_cupti();
  }
}

void emit_waits(const uint64_t* ids, size_t count, WaitHow how, const char* api) {
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  format::CollectiveWaitRecord r;
  r.op_string = rec::intern_string(api);
  r.how = how;
  // Native frames only: a Python stack needs the GIL, and CUDA calls run
  // under the caller's locks.
  const rec::StackMode mode = rec::settings().stacks;
  if (mode == rec::StackMode::kNative || mode == rec::StackMode::kAll) {
    uint64_t native[64];
    const size_t depth = rec::settings().max_depth < 64 ? rec::settings().max_depth : 64;
    const size_t n = rec::capture_native_stack(native, depth, 3);
    r.stack_id = rec::intern_stack(*w, nullptr, 0, native, n);
  }
  for (size_t i = 0; i < count; ++i) {
    r.collective_id = ids[i];
    rec::emit(*w, r);
  }
}

}  // namespace memlife::gpu

using memlife::gpu::attach_cupti;

// The CUDA driver calls this during cuInit when CUDA_INJECTION64_PATH names
// this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  // An untraced child that inherited the variable: stay out.
  if (memlife::rec::phase().load() == static_cast<int>(memlife::rec::Phase::kInert)) return 1;
  attach_cupti();
  return 1;
}

extern "C" __attribute__((visibility("default"))) int memlife_gpu_cupti_attached(void) {
  return memlife::gpu::cupti_attached() ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) int memlife_torch_cuda_attach_if_ready(
    uint64_t (*current_op_name)()) {
  static std::atomic<int> state{0};  // 0 not yet, 1 attached, 2 impossible
  const int s = state.load(std::memory_order_acquire);
  if (s != 0) return s == 1;
  if (!memlife::gpu::c10_cuda_loaded()) return 0;
  using TryAttach = int (*)(uint64_t(*)());
  static std::atomic<TryAttach> try_attach{nullptr};
  TryAttach fn = try_attach.load(std::memory_order_acquire);
  if (fn == nullptr) {
    static std::atomic<bool> loading{false};
    if (loading.exchange(true)) return 0;  // another thread is loading it
    // Next to the plugin the preload loaded: MEMLIFE_TORCH_PLUGIN's, or the
    // one from the plugin cache built for the running torch.
    const char* plugin = memlife::rec::loaded_torch_plugin();
    char path[4200] = "";
    if (plugin != nullptr && *plugin != '\0') {
      std::snprintf(path, sizeof(path), "%s", plugin);
      char* slash = std::strrchr(path, '/');
      if (slash != nullptr) {
        std::snprintf(slash + 1, sizeof(path) - static_cast<size_t>(slash + 1 - path),
                      "libmemlife_torch_cuda.so");
      }
    }
    void* handle = path[0] ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    fn = handle ? reinterpret_cast<TryAttach>(dlsym(handle, "memlife_torch_cuda_try_attach"))
                : nullptr;
    if (fn == nullptr) {
      const char* error = dlerror();
      char line[4400];
      std::snprintf(line, sizeof(line),
                    "memlife: no CUDA allocator tracker (%s): %s; CUDA tensors' memory is "
                    "not recorded\n",
                    path[0] ? path : "no torch plugin loaded", error ? error : "not found");
      (void)!fwrite(line, 1, std::strlen(line), stderr);
      state.store(2);
      return 0;
    }
    try_attach.store(fn, std::memory_order_release);
  }
  const int r = fn(current_op_name);
  if (r != 0) state.store(r > 0 ? 1 : 2, std::memory_order_release);
  return r > 0;
}
