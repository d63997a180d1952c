// The slice of the CUPTI callback ABI memlife uses (cupti_callbacks.h,
// cupti_runtime_cbid.h, cupti_driver_cbid.h, generated_cuda*_meta.h of
// CUPTI 13), declared here so memlife builds and runs without the CUDA
// toolkit. Callback ids and parameter layouts are append-only in CUPTI.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlife::gpu::cupti {

using CUptiResult = int;
using CallbackId = uint32_t;
enum CallbackDomain : int { kDomainDriver = 1, kDomainRuntime = 2 };
enum ApiCallbackSite : int { kApiEnter = 0, kApiExit = 1 };

struct CallbackData {
  ApiCallbackSite callbackSite;
  const char* functionName;
  const void* functionParams;
  void* functionReturnValue;
  const char* symbolName;
  void* context;
  uint32_t contextUid;
  uint64_t* correlationData;
  uint32_t correlationId;
};
using CallbackFunc = void (*)(void* userdata, CallbackDomain domain, CallbackId cbid,
                              const void* cbdata);
using SubscriberHandle = struct Subscriber_st*;
using SubscribeFn = CUptiResult (*)(SubscriberHandle*, CallbackFunc, void*);
using EnableCallbackFn = CUptiResult (*)(uint32_t, SubscriberHandle, CallbackDomain, CallbackId);

// Runtime API (CUPTI_RUNTIME_TRACE_CBID_*).
namespace rt {
constexpr CallbackId kMalloc = 20, kFree = 22, kMallocHost = 25, kFreeHost = 26, kHostAlloc = 27;
constexpr CallbackId kMallocManaged = 206;
constexpr CallbackId kStreamSynchronize = 131, kStreamSynchronizePtsz = 239;
constexpr CallbackId kEventRecord = 135, kEventRecordPtsz = 242;
constexpr CallbackId kEventRecordWithFlags = 370, kEventRecordWithFlagsPtsz = 371;
constexpr CallbackId kEventSynchronize = 137;
constexpr CallbackId kStreamWaitEvent = 147, kStreamWaitEventPtsz = 247;
constexpr CallbackId kDeviceSynchronize = 165;
constexpr CallbackId kMallocAsync = 373, kMallocAsyncPtsz = 374;
constexpr CallbackId kFreeAsync = 375, kFreeAsyncPtsz = 376;
constexpr CallbackId kMallocFromPoolAsync = 391, kMallocFromPoolAsyncPtsz = 392;

struct MallocParams {  // cudaMalloc, cudaMallocHost, cudaHostAlloc, cudaMallocManaged
  void** ptr;
  size_t size;
};
struct FreeParams {  // cudaFree, cudaFreeHost
  void* ptr;
};
struct MallocAsyncParams {
  void** ptr;
  size_t size;
  void* stream;
};
struct MallocFromPoolAsyncParams {
  void** ptr;
  size_t size;
  void* pool;
  void* stream;
};
struct FreeAsyncParams {
  void* ptr;
  void* stream;
};
struct StreamParams {  // cudaStreamSynchronize
  void* stream;
};
struct EventRecordParams {  // cudaEventRecord(WithFlags)
  void* event;
  void* stream;
};
struct EventParams {  // cudaEventSynchronize
  void* event;
};
struct StreamWaitEventParams {
  void* stream;
  void* event;
  unsigned flags;
};
}  // namespace rt

// Driver API (CUPTI_DRIVER_TRACE_CBID_*).
namespace drv {
constexpr CallbackId kCtxSynchronize = 17, kCtxSynchronizeV2 = 800;
constexpr CallbackId kMemAllocV2 = 243, kMemFreeV2 = 245;
constexpr CallbackId kMemAllocHostV2 = 294, kMemFreeHost = 38;
constexpr CallbackId kMemAllocManaged = 371;
constexpr CallbackId kMemCreate = 549, kMemRelease = 550, kMemMap = 551, kMemUnmap = 552;
constexpr CallbackId kEventRecord = 119, kEventRecordPtsz = 441;
constexpr CallbackId kEventRecordWithFlags = 587, kEventRecordWithFlagsPtsz = 588;
constexpr CallbackId kEventSynchronize = 121;
constexpr CallbackId kStreamSynchronize = 126, kStreamSynchronizePtsz = 440;
constexpr CallbackId kStreamWaitEvent = 295, kStreamWaitEventPtsz = 436;
constexpr CallbackId kMemAllocAsync = 598, kMemAllocAsyncPtsz = 599;
constexpr CallbackId kMemFreeAsync = 600, kMemFreeAsyncPtsz = 601;

struct MemAllocParams {  // cuMemAlloc_v2, cuMemAllocManaged
  uint64_t* dptr;
  size_t size;
};
struct MemAllocHostParams {
  void** pp;
  size_t size;
};
struct MemFreeParams {  // cuMemFree_v2
  uint64_t dptr;
};
struct MemFreeHostParams {
  void* p;
};
struct MemAllocAsyncParams {
  uint64_t* dptr;
  size_t size;
  void* stream;
};
struct MemFreeAsyncParams {
  uint64_t dptr;
  void* stream;
};
struct MemMapParams {
  uint64_t ptr;
  size_t size;
  size_t offset;
  uint64_t handle;
  unsigned long long flags;
};
struct MemUnmapParams {
  uint64_t ptr;
  size_t size;
};
struct StreamParams {
  void* stream;
};
struct EventRecordParams {
  void* event;
  void* stream;
};
struct EventParams {
  void* event;
};
struct StreamWaitEventParams {
  void* stream;
  void* event;
  unsigned flags;
};
}  // namespace drv

}  // namespace memlife::gpu::cupti
