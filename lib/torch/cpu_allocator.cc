#include "torch/cpu_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/csrc/api/include/torch/version.h>

#include <limits>
#include <new>

#include "preload/recorder.h"
#include "torch/thread_state.h"

// Allocator::allocate lost its const in torch 2.2 (pytorch #113447);
// copy_data became pure virtual in 2.3.
#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 2)
#define MEMLIFE_ALLOCATE_CONST const
#else
#define MEMLIFE_ALLOCATE_CONST
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define MEMLIFE_HAS_COPY_DATA 1
#endif

namespace memlife::torch_plugin {
namespace {

c10::Allocator* g_inner = nullptr;
c10::DeleterFnPtr g_inner_raw_deleter = nullptr;

void record_free(void* data) {
  // Recorded also inside memlife's own code: memlife letting go of a
  // reference (a census's strong ones, a dead tensor's weak one) can be
  // what frees the program's memory, and a free left out is a leak made
  // up. No torch memory is freed inside an emit, so this never splits a
  // record. Never a stack here: frees run in destructors, under arbitrary
  // locks.
  rec::emit(format::FreeRecord{reinterpret_cast<uint64_t>(data), 0, -1, FreePhase::kFree});
}

// The inner allocator's DataPtr is simple (context == data) with a raw
// deleter: swap in ours and keep it simple, so raw_allocate and
// copy-on-write keep working.
void free_simple(void* data) {
  record_free(data);
  g_inner_raw_deleter(data);
}

// Anything else: keep the original context beside the data.
struct WrappedContext {
  void* data;
  void* inner_context;
  c10::DeleterFnPtr inner_deleter;
};
void free_wrapped(void* context) {
  auto* c = static_cast<WrappedContext*>(context);
  record_free(c->data);
  if (c->inner_deleter != nullptr) c->inner_deleter(c->inner_context);
  arena::destroy(c);
}

void record_alloc(const c10::DataPtr& p, size_t bytes) {
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  const uint64_t address = reinterpret_cast<uint64_t>(p.get());
  ThreadState& ts = thread_state();
  const uint64_t stack = rec::capture_stack(*w, 3);
  ts.last_alloc_address = address;
  ts.recent_allocs[ts.allocs++ % ThreadState::kRecentAllocs] = address;
  ts.last_alloc_stack = stack;
  rec::emit(*w, format::AllocRecord{address, bytes, -1, 0, stack, current_op_name()});
}

class RecordingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) MEMLIFE_ALLOCATE_CONST override {
    c10::DataPtr p = g_inner->allocate(n);
    if (n == 0 || p.get() == nullptr) return p;
    rec::ReentryGuard guard;
    if (!guard.entered() || !rec::active()) return p;
    try {
      record_alloc(p, n);
    } catch (...) {
    }
    const c10::Device device = p.device();
    if (g_inner_raw_deleter != nullptr && p.get() == p.get_context() &&
        p.get_deleter() == g_inner_raw_deleter) {
      void* data = p.release_context();
      return {data, data, &free_simple, device};
    }
    auto* context = arena::make<WrappedContext>(WrappedContext{p.get(), nullptr, p.get_deleter()});
    if (context == nullptr) return p;
    void* data = p.get();
    context->inner_context = p.release_context();
    return {data, context, &free_wrapped, device};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return g_inner_raw_deleter != nullptr ? &free_simple : nullptr;
  }

#ifdef MEMLIFE_HAS_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    g_inner->copy_data(dest, src, count);
  }
#endif
};

}  // namespace

void install_cpu_allocator() {
  static RecordingCpuAllocator wrapper;
  if (g_inner != nullptr) return;
  g_inner = c10::GetCPUAllocator();
  if (g_inner == nullptr || g_inner == &wrapper) return;
  g_inner_raw_deleter = g_inner->raw_deleter();
  // torch registers its default at priority 0; the highest priority wins
  // over any allocator registered before us.
  c10::SetCPUAllocator(&wrapper, std::numeric_limits<uint8_t>::max());
}

}  // namespace memlife::torch_plugin
