// CUPTI callbacks: raw device allocations (runtime and driver API) as
// segment records, and event record / stream wait / synchronize to tell
// when an NCCL collective was waited for. libcupti is dlopened, so a
// process without CUDA never loads it.
#include "gpu/cupti_callbacks.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/cupti_abi.h"
#include "gpu/gpu_hooks.h"
#include "gpu/stream_waits.h"
#include "preload/recorder.h"

namespace memlife::gpu {
namespace {

using namespace cupti;

std::atomic<int> g_state{0};  // 0 not tried, 1 attaching, 2 attached, 3 failed
using CtxGetDeviceFn = int (*)(int*);
CtxGetDeviceFn g_ctx_get_device = nullptr;

// Runtime calls reach the driver, whose callbacks would record the same
// allocation twice: driver callbacks nested in a runtime one are skipped.
thread_local int tls_runtime_depth = 0;

void say(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

int64_t current_device() {
  int device = -1;
  if (g_ctx_get_device == nullptr || g_ctx_get_device(&device) != 0) return 0;
  return device;
}

void segment(bool is_alloc, uint64_t address, uint64_t bytes, int64_t device, void* stream) {
  if (address == 0) return;
  rec::emit_segment(
      is_alloc, format::SegmentRecord{address, bytes, device, reinterpret_cast<uint64_t>(stream)});
}

void released(size_t n, const uint64_t* ids, WaitHow how, const char* api) {
  if (n > 0) emit_waits(ids, n, how, api);
}

void on_event_record(void* event, void* stream) {
  stream_waits().note_event_record(reinterpret_cast<uint64_t>(event),
                                   reinterpret_cast<uint64_t>(stream));
}

void on_stream_wait(void* event, const char* api) {
  uint64_t ids[StreamWaitTable::kMaxReleased];
  released(stream_waits().on_event_waited(reinterpret_cast<uint64_t>(event), ids,
                                          StreamWaitTable::kMaxReleased),
           ids, WaitHow::kStreamWait, api);
}

void on_event_sync(void* event, const char* api) {
  uint64_t ids[StreamWaitTable::kMaxReleased];
  released(stream_waits().on_event_waited(reinterpret_cast<uint64_t>(event), ids,
                                          StreamWaitTable::kMaxReleased),
           ids, WaitHow::kSynchronize, api);
}

void on_stream_sync(void* stream, const char* api) {
  uint64_t ids[StreamWaitTable::kMaxReleased];
  released(stream_waits().on_stream_synchronized(reinterpret_cast<uint64_t>(stream), ids,
                                                 StreamWaitTable::kMaxReleased),
           ids, WaitHow::kSynchronize, api);
}

void on_device_sync(const char* api) {
  uint64_t ids[StreamWaitTable::kMaxReleased];
  released(stream_waits().on_device_synchronized(ids, StreamWaitTable::kMaxReleased), ids,
           WaitHow::kSynchronize, api);
}

void runtime_exit(CallbackId cbid, const void* p) {
  switch (cbid) {
    case rt::kMalloc:
    case rt::kMallocManaged: {
      auto* a = static_cast<const rt::MallocParams*>(p);
      segment(true, reinterpret_cast<uint64_t>(*a->ptr), a->size, current_device(), nullptr);
      break;
    }
    case rt::kMallocHost:
    case rt::kHostAlloc: {
      auto* a = static_cast<const rt::MallocParams*>(p);
      segment(true, reinterpret_cast<uint64_t>(*a->ptr), a->size, -1, nullptr);
      break;
    }
    case rt::kFree:
      segment(false, reinterpret_cast<uint64_t>(static_cast<const rt::FreeParams*>(p)->ptr), 0,
              current_device(), nullptr);
      break;
    case rt::kFreeHost:
      segment(false, reinterpret_cast<uint64_t>(static_cast<const rt::FreeParams*>(p)->ptr), 0, -1,
              nullptr);
      break;
    case rt::kMallocAsync:
    case rt::kMallocAsyncPtsz: {
      auto* a = static_cast<const rt::MallocAsyncParams*>(p);
      segment(true, reinterpret_cast<uint64_t>(*a->ptr), a->size, current_device(), a->stream);
      break;
    }
    case rt::kMallocFromPoolAsync:
    case rt::kMallocFromPoolAsyncPtsz: {
      auto* a = static_cast<const rt::MallocFromPoolAsyncParams*>(p);
      segment(true, reinterpret_cast<uint64_t>(*a->ptr), a->size, current_device(), a->stream);
      break;
    }
    case rt::kFreeAsync:
    case rt::kFreeAsyncPtsz: {
      auto* a = static_cast<const rt::FreeAsyncParams*>(p);
      segment(false, reinterpret_cast<uint64_t>(a->ptr), 0, current_device(), a->stream);
      break;
    }
    case rt::kEventRecord:
    case rt::kEventRecordPtsz:
    case rt::kEventRecordWithFlags:
    case rt::kEventRecordWithFlagsPtsz: {
      auto* a = static_cast<const rt::EventRecordParams*>(p);
      on_event_record(a->event, a->stream);
      break;
    }
    case rt::kStreamWaitEvent:
    case rt::kStreamWaitEventPtsz:
      on_stream_wait(static_cast<const rt::StreamWaitEventParams*>(p)->event,
                     "cudaStreamWaitEvent");
      break;
    case rt::kEventSynchronize:
      on_event_sync(static_cast<const rt::EventParams*>(p)->event, "cudaEventSynchronize");
      break;
    case rt::kStreamSynchronize:
    case rt::kStreamSynchronizePtsz:
      on_stream_sync(static_cast<const rt::StreamParams*>(p)->stream, "cudaStreamSynchronize");
      break;
    case rt::kDeviceSynchronize:
      on_device_sync("cudaDeviceSynchronize");
      break;
    default:
      break;
  }
}

void driver_exit(CallbackId cbid, const void* p) {
  switch (cbid) {
    case drv::kMemAllocV2:
    case drv::kMemAllocManaged: {
      auto* a = static_cast<const drv::MemAllocParams*>(p);
      segment(true, *a->dptr, a->size, current_device(), nullptr);
      break;
    }
    case drv::kMemAllocHostV2: {
      auto* a = static_cast<const drv::MemAllocHostParams*>(p);
      segment(true, reinterpret_cast<uint64_t>(*a->pp), a->size, -1, nullptr);
      break;
    }
    case drv::kMemFreeV2:
      segment(false, static_cast<const drv::MemFreeParams*>(p)->dptr, 0, current_device(), nullptr);
      break;
    case drv::kMemFreeHost:
      segment(false, reinterpret_cast<uint64_t>(static_cast<const drv::MemFreeHostParams*>(p)->p),
              0, -1, nullptr);
      break;
    case drv::kMemAllocAsync:
    case drv::kMemAllocAsyncPtsz: {
      auto* a = static_cast<const drv::MemAllocAsyncParams*>(p);
      segment(true, *a->dptr, a->size, current_device(), a->stream);
      break;
    }
    case drv::kMemFreeAsync:
    case drv::kMemFreeAsyncPtsz: {
      auto* a = static_cast<const drv::MemFreeAsyncParams*>(p);
      segment(false, a->dptr, 0, current_device(), a->stream);
      break;
    }
    // Virtual memory: cuMemCreate/Release make and drop physical handles
    // with no address; the memory becomes addressable at cuMemMap.
    case drv::kMemMap: {
      auto* a = static_cast<const drv::MemMapParams*>(p);
      segment(true, a->ptr, a->size, current_device(), nullptr);
      break;
    }
    case drv::kMemUnmap: {
      auto* a = static_cast<const drv::MemUnmapParams*>(p);
      segment(false, a->ptr, a->size, current_device(), nullptr);
      break;
    }
    case drv::kEventRecord:
    case drv::kEventRecordPtsz:
    case drv::kEventRecordWithFlags:
    case drv::kEventRecordWithFlagsPtsz: {
      auto* a = static_cast<const drv::EventRecordParams*>(p);
      on_event_record(a->event, a->stream);
      break;
    }
    case drv::kStreamWaitEvent:
    case drv::kStreamWaitEventPtsz:
      on_stream_wait(static_cast<const drv::StreamWaitEventParams*>(p)->event, "cuStreamWaitEvent");
      break;
    case drv::kEventSynchronize:
      on_event_sync(static_cast<const drv::EventParams*>(p)->event, "cuEventSynchronize");
      break;
    case drv::kStreamSynchronize:
    case drv::kStreamSynchronizePtsz:
      on_stream_sync(static_cast<const drv::StreamParams*>(p)->stream, "cuStreamSynchronize");
      break;
    case drv::kCtxSynchronize:
    case drv::kCtxSynchronizeV2:
      on_device_sync("cuCtxSynchronize");
      break;
    default:
      break;
  }
}

void on_callback(void*, CallbackDomain domain, CallbackId cbid, const void* data) {
  const auto* cb = static_cast<const CallbackData*>(data);
  if (domain == kDomainRuntime) {
    if (cb->callbackSite == kApiEnter) {
      ++tls_runtime_depth;
      return;
    }
    --tls_runtime_depth;
  } else if (domain != kDomainDriver || cb->callbackSite != kApiExit || tls_runtime_depth > 0) {
    return;
  }
  // Failed calls allocated nothing (cudaSuccess and CUDA_SUCCESS are 0).
  if (cb->functionReturnValue != nullptr && *static_cast<const int*>(cb->functionReturnValue) != 0)
    return;
  rec::ReentryGuard guard;
  // Not rec::active(): in a framework-free program this is the first thing
  // recorded, and recording starts with it.
  if (!guard.entered()) return;
  if (domain == kDomainRuntime) {
    runtime_exit(cbid, cb->functionParams);
  } else {
    driver_exit(cbid, cb->functionParams);
  }
}

void* open_cupti() {
  const char* configured = std::getenv("MEMLIFE_CUPTI_PATH");  // NOLINT(concurrency-mt-unsafe)
  const char* candidates[] = {configured,
                              "libcupti.so.13",
                              "libcupti.so.12",
                              "libcupti.so",
                              "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                              "/usr/local/cuda/lib64/libcupti.so"};
  for (const char* path : candidates) {
    if (path == nullptr || *path == '\0') continue;
    if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

}  // namespace

bool attach_cupti() {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 1)) return expected == 2;
  rec::ReentryGuard guard;  // our dlopen interposer stays out
  if (!rec::option_on("cupti")) {
    g_state.store(3);
    return false;
  }
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    g_ctx_get_device = reinterpret_cast<CtxGetDeviceFn>(dlsym(cuda, "cuCtxGetDevice"));
  }
  void* lib = open_cupti();
  auto subscribe = lib ? reinterpret_cast<SubscribeFn>(dlsym(lib, "cuptiSubscribe")) : nullptr;
  auto enable =
      lib ? reinterpret_cast<EnableCallbackFn>(dlsym(lib, "cuptiEnableCallback")) : nullptr;
  SubscriberHandle subscriber = nullptr;
  if (subscribe == nullptr || enable == nullptr) {
    say("memlife: libcupti not found (set MEMLIFE_CUPTI_PATH); raw CUDA allocations and "
        "stream waits are not recorded\n");
    g_state.store(3);
    return false;
  }
  const CUptiResult r = subscribe(&subscriber, &on_callback, nullptr);
  if (r != 0) {
    char line[200];
    std::snprintf(line, sizeof(line),
                  "memlife: cuptiSubscribe failed (%d; another CUPTI client such as a profiler?); "
                  "raw CUDA allocations and stream waits are not recorded\n",
                  r);
    say(line);
    g_state.store(3);
    return false;
  }
  // Only these ids: enabling whole domains would put a callback on every
  // kernel launch.
  static constexpr CallbackId kRuntime[] = {rt::kMalloc,
                                            rt::kFree,
                                            rt::kMallocHost,
                                            rt::kFreeHost,
                                            rt::kHostAlloc,
                                            rt::kMallocManaged,
                                            rt::kStreamSynchronize,
                                            rt::kStreamSynchronizePtsz,
                                            rt::kEventRecord,
                                            rt::kEventRecordPtsz,
                                            rt::kEventRecordWithFlags,
                                            rt::kEventRecordWithFlagsPtsz,
                                            rt::kEventSynchronize,
                                            rt::kStreamWaitEvent,
                                            rt::kStreamWaitEventPtsz,
                                            rt::kDeviceSynchronize,
                                            rt::kMallocAsync,
                                            rt::kMallocAsyncPtsz,
                                            rt::kFreeAsync,
                                            rt::kFreeAsyncPtsz,
                                            rt::kMallocFromPoolAsync,
                                            rt::kMallocFromPoolAsyncPtsz};
  static constexpr CallbackId kDriver[] = {drv::kCtxSynchronize,
                                           drv::kCtxSynchronizeV2,
                                           drv::kMemAllocV2,
                                           drv::kMemFreeV2,
                                           drv::kMemAllocHostV2,
                                           drv::kMemFreeHost,
                                           drv::kMemAllocManaged,
                                           drv::kMemMap,
                                           drv::kMemUnmap,
                                           drv::kEventRecord,
                                           drv::kEventRecordPtsz,
                                           drv::kEventRecordWithFlags,
                                           drv::kEventRecordWithFlagsPtsz,
                                           drv::kEventSynchronize,
                                           drv::kStreamSynchronize,
                                           drv::kStreamSynchronizePtsz,
                                           drv::kStreamWaitEvent,
                                           drv::kStreamWaitEventPtsz,
                                           drv::kMemAllocAsync,
                                           drv::kMemAllocAsyncPtsz,
                                           drv::kMemFreeAsync,
                                           drv::kMemFreeAsyncPtsz};
  for (CallbackId id : kRuntime) enable(1, subscriber, kDomainRuntime, id);
  for (CallbackId id : kDriver) enable(1, subscriber, kDomainDriver, id);
  g_state.store(2);
  return true;
}

bool cupti_attached() { return g_state.load() == 2; }

}  // namespace memlife::gpu
