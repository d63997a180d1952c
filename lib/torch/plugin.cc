// Entry point the preload library calls right after dlopen of this plugin.
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "memlife/memlife.h"
#include "preload/recorder.h"
#include "torch/census.h"
#include "torch/cpu_allocator.h"
#include "torch/deaths.h"
#include "torch/identity.h"
#include "torch/op_observer.h"
#include "torch/python_stack.h"
#include "torch/storage_watch.h"
#include "torch/thread_state.h"

namespace memlife::torch_plugin {
namespace {

thread_local ThreadState* tls_state = nullptr;

void after_fork_child() {
  // Another thread may have held the arena's lock at fork.
  arena::g_pool.lock.clear(std::memory_order_release);
  reset_identity_after_fork();
  reset_op_observer_after_fork();
  reset_storage_watch_after_fork();
  reset_python_frames_after_fork();
  reset_thread_state_after_fork();
  reset_death_sweeper_after_fork();
  reset_census_after_fork();
}

// Under the plugin, glibc's dynamic mmap threshold (raised to the largest
// freed mapping, so that tensors of megabytes then come from the heap) let
// the heap fragment: a tensor-churning loop went from 580 MB peak RSS to
// 2 GB (bench/rss), likely because the identity tables' weak references
// keep freed tensors' TensorImpl and StorageImpl objects allocated a while
// between the program's large blocks. A fixed threshold of 128 KiB, what
// MALLOC_MMAP_THRESHOLD_=131072 gives, keeps large tensors in their own
// mappings (624 MB). Left alone when the program chose its own threshold
// or MEMLIFE_MALLOC_TUNE=0.
void fix_mmap_threshold() {
  if (!rec::option_on("malloc-tune")) return;
  // Read once, at plugin load.
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr) return;  // NOLINT(concurrency-mt-unsafe)
  const char* tunables = std::getenv("GLIBC_TUNABLES");          // NOLINT(concurrency-mt-unsafe)
  if (tunables != nullptr && std::strstr(tunables, "mmap_threshold") != nullptr) return;
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);  // NOLINT(concurrency-mt-unsafe): before any worker thread
}

uint64_t storage_id_hook(const void* address) { return storage_id_for_address(address); }

}  // namespace

OpName* OpNameCache::find(const char* name) {
  Slot& s = slots_[slot_of(name)];
  if (s.pointer != name || std::strcmp(s.text.c_str(), name) != 0) return nullptr;
  return &s.value;
}

void OpNameCache::insert(const char* name, const OpName& value) {
  Slot& s = slots_[slot_of(name)];
  s.pointer = name;
  s.text = name;
  s.value = value;
}

void OpNameCache::clear() {
  for (Slot& s : slots_) s = Slot();
}

ThreadState& thread_state() {
  if (tls_state == nullptr) tls_state = arena::make<ThreadState>();
  return *tls_state;
}

uint64_t current_op_name() {
  const ThreadState* ts = tls_state;
  if (ts == nullptr || ts->depth == 0) return 0;
  const int top = ts->depth > ThreadState::kMaxDepth ? ThreadState::kMaxDepth : ts->depth;
  return ts->frames[top - 1].name.string_id;
}

void reset_thread_state_after_fork() {
  if (tls_state == nullptr) return;
  tls_state->names.clear();
  tls_state->last_alloc_address = 0;
  tls_state->last_alloc_stack = 0;
}

}  // namespace memlife::torch_plugin

// The plugin's own memory (bytes mapped for its arena, bytes in use):
// kept out of the program's malloc heap (issue 15). Read by tests and tools
// through dlsym.
extern "C" MEMLIFE_API void memlife_torch_arena_stats(uint64_t* mapped, uint64_t* in_use) {
  using memlife::torch_plugin::arena::g_stats;
  if (mapped != nullptr) *mapped = g_stats.mapped.load(std::memory_order_relaxed);
  if (in_use != nullptr) *in_use = g_stats.in_use.load(std::memory_order_relaxed);
}

extern "C" MEMLIFE_API int memlife_torch_plugin_init(void) {
  using namespace memlife;
  using namespace memlife::torch_plugin;
  try {
    const char* floor = std::getenv("MEMLIFE_TORCH_FLOOR");  // NOLINT(concurrency-mt-unsafe)
    if (floor != nullptr && std::strcmp(floor, "1") == 0) {
      install_floor_observer();
      return 0;
    }
    if (!rec::ensure_started()) return 0;  // recording is off: stay out of the way
    init_python_api();
    rec::PluginHooks hooks;
    hooks.census = &write_census;
    hooks.storage_id_for_address = &torch_plugin::storage_id_hook;
    hooks.python_stack = &capture_python_stack;
    hooks.before_fork = &hold_torch_calls_for_fork;
    hooks.after_fork_parent = &release_torch_calls_after_fork;
    hooks.after_fork_child = &torch_plugin::after_fork_child;
    hooks.work_wait = &record_work_wait;
    hooks.watch_storages = &watch_storages;
    hooks.watched_storage_written = &watched_storage_written;
    rec::register_plugin(hooks);
    fix_mmap_threshold();
    install_cpu_allocator();
    install_op_observer();
    ensure_death_sweeper();
    return 0;
  } catch (...) {
    return -1;
  }
}
