// Records torch's CUDA caching allocator through its trace tracker
// (torch >= 2.2). The tracker runs with the per-device allocator lock held:
// it copies plain fields into a record and nothing else: no GIL, no torch
// calls, no Python stack (a thread waiting for the GIL may hold this lock's
// waiters: lock order is GIL -> allocator). The Python side of an
// allocation's stack comes from the op that is open on this thread.
// Outside any op (workspaces, NCCL buffers) the native stack is taken here.
#include "torch/cuda/cuda_tracker.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
#include <mutex>

#include "gpu/gpu_hooks.h"
#include "preload/recorder.h"

#if TORCH_VERSION_MAJOR < 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR < 2)
#error "memlife's CUDA tracker needs torch >= 2.2 (attachAllocatorTraceTracker)"
#endif

namespace memlife::torch_cuda {
namespace {

namespace alloc = c10::cuda::CUDACachingAllocator;
// TraceEntry moved to c10/core/CachingDeviceAllocator.h in newer trees; the
// CUDA namespace re-exports it, so this name works in 2.2 through 2.15.
using Entry = alloc::TraceEntry;

std::atomic<uint64_t (*)()> g_current_op_name{nullptr};

uint64_t allocation_stack(rec::ThreadWriter& w) {
  const rec::StackMode mode = rec::settings().stacks;
  if (mode != rec::StackMode::kNative && mode != rec::StackMode::kAll) return 0;
  uint64_t native[64];
  const size_t depth = rec::settings().max_depth < 64 ? rec::settings().max_depth : 64;
  const size_t n = rec::capture_native_stack(native, depth, 3);
  return rec::intern_stack(w, nullptr, 0, native, n);
}

bool gives_memory_back(Entry::Action action) {
  return action == Entry::FREE_REQUESTED || action == Entry::FREE_COMPLETED ||
         action == Entry::SEGMENT_FREE || action == Entry::SEGMENT_UNMAP;
}

void on_trace(const Entry& e) {
  rec::ReentryGuard guard;
  // Frees are recorded also inside memlife's own code (a census letting go
  // of the last reference to a tensor frees the program's memory; see
  // cpu_allocator.cc); what memlife's code allocates is not the program's.
  if (!guard.entered() && !gives_memory_back(e.action_)) return;
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  const auto address = static_cast<uint64_t>(e.addr_);
  const auto bytes = static_cast<uint64_t>(e.size_);
  // A device index (c10::DeviceIndex, a signed char): small, and -1 means
  // none, so the signed value is the one to keep.
  const auto device = static_cast<int64_t>(e.device_);  // NOLINT(bugprone-signed-char-misuse)
  const auto stream = reinterpret_cast<uint64_t>(e.stream_);
  switch (e.action_) {
    case Entry::ALLOC: {
      auto op_name_of = g_current_op_name.load(std::memory_order_relaxed);
      const uint64_t op_name = op_name_of != nullptr ? op_name_of() : 0;
      // Inside an op, the tensor that owns this storage is recorded when
      // the op ends, with the whole stack (Python and native), and the
      // analyzer gives it to the allocation: unwinding here too would cost
      // a second stack per allocation and hide the Python half.
      const uint64_t stack = op_name != 0 ? 0 : allocation_stack(*w);
      rec::emit(*w, format::AllocRecord{address, bytes, device, stream, stack, op_name});
      break;
    }
    case Entry::FREE_REQUESTED:
      rec::emit(*w, format::FreeRecord{address, bytes, device, FreePhase::kRequested});
      break;
    case Entry::FREE_COMPLETED:
      rec::emit(*w, format::FreeRecord{address, bytes, device, FreePhase::kCompleted});
      break;
    // CUPTI sees the same cudaMalloc/cuMemMap: one record per segment.
    case Entry::SEGMENT_ALLOC:
    case Entry::SEGMENT_MAP:
      if (!memlife_gpu_cupti_attached())
        rec::emit_segment(true, format::SegmentRecord{address, bytes, device, stream});
      break;
    case Entry::SEGMENT_FREE:
    case Entry::SEGMENT_UNMAP:
      if (!memlife_gpu_cupti_attached())
        rec::emit_segment(false, format::SegmentRecord{address, bytes, device, stream});
      break;
    case Entry::OOM:
      // For OOM, addr_ is the free memory the device reported.
      rec::emit(*w, format::OomRecord{device, bytes, address, 0});
      break;
    default:  // SNAPSHOT and newer actions carry no memory event
      break;
  }
}

}  // namespace
}  // namespace memlife::torch_cuda

extern "C" __attribute__((visibility("default"))) int memlife_torch_cuda_try_attach(
    uint64_t (*current_op_name)()) {
  using namespace memlife::torch_cuda;
  static std::atomic<int> state{0};
  static std::mutex attach_mutex;
  if (state.load() != 0) return state.load();
  try {
    alloc::CUDAAllocator* allocator = alloc::get();
    if (allocator == nullptr || !allocator->initialized()) return 0;
    // Never waits: another thread attaching now means "not yet" (this one
    // tries again after its next op). A child forked while a thread of its
    // parent held the mutex would otherwise wait for good at its first op;
    // it cannot use CUDA anyway, and stays unattached.
    std::unique_lock<std::mutex> lock(attach_mutex, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    if (state.load() != 0) return state.load();
    g_current_op_name.store(current_op_name);
    // The cudaMallocAsync backend refuses trace trackers (throws).
    allocator->attachAllocatorTraceTracker(&on_trace);
    state.store(1);
  } catch (...) {
    state.store(-1);
  }
  return state.load();
}
