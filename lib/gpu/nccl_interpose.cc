// NCCL interposition: the preload library exports the NCCL entry points, so
// libtorch_cuda's calls (and any program's) land here first. Each records a
// collective_issue (kCollectiveNccl) with buffers, count, datatype,
// communicator, rank and stream, then calls the real function. No link-time
// dependency on NCCL or CUDA: the types below are the ABI of nccl.h, and the
// real functions are found at run time.
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "gpu/stream_waits.h"
#include "preload/recorder.h"

namespace {

using ncclResult_t = int;
using ncclComm_t = struct ncclComm*;
using ncclDataType_t = int;
using ncclRedOp_t = int;
using cudaStream_t = void*;
struct ncclUniqueId {
  char internal[128];
};
struct ncclConfig_t;

constexpr ncclResult_t kNcclSuccess = 0;
constexpr ncclResult_t kNcclSystemError = 2;

size_t datatype_bytes(ncclDataType_t t) {
  // ncclInt8, Uint8, Int32, Uint32, Int64, Uint64, Float16, Float32,
  // Float64, Bfloat16, Float8e4m3, Float8e5m2 (nccl.h order).
  static constexpr size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return t >= 0 && static_cast<size_t>(t) < sizeof(kSizes) / sizeof(kSizes[0]) ? kSizes[t] : 0;
}

// --- finding the real NCCL -------------------------------------------------

int find_nccl(dl_phdr_info* info, size_t, void* out) {
  const char* name = info->dlpi_name;
  if (name == nullptr || std::strstr(name, "libnccl") == nullptr) return 0;
  if (std::strstr(name, "memlife") != nullptr) return 0;
  std::snprintf(static_cast<char*>(out), 4096, "%s", name);
  return 1;
}

// RTLD_NEXT finds NCCL when it is in the global scope (linked by the
// program, or loaded RTLD_GLOBAL). libtorch_cuda is loaded by Python with
// RTLD_LOCAL, so its libnccl is outside that scope: then ask the loaded
// libnccl itself.
void* resolve_real(const char* symbol) {
  void* fn = dlsym(RTLD_NEXT, symbol);
  if (fn != nullptr) return fn;
  char path[4096] = "";
  dl_iterate_phdr(find_nccl, path);
  if (path[0] == '\0') return nullptr;
  void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  fn = dlsym(handle, symbol);
  dlclose(handle);  // NOLOAD took a reference: give it back
  return fn;
}

template <typename Fn>
Fn real(std::atomic<void*>& cache, const char* symbol) {
  void* fn = cache.load(std::memory_order_acquire);
  if (fn == nullptr) {
    memlife::rec::ReentryGuard guard;  // our dlopen interposer stays out
    fn = resolve_real(symbol);
    cache.store(fn, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(fn);
}

#define MEMLIFE_REAL(name, type)            \
  static std::atomic<void*> name##_cache{}; \
  auto name##_real = real<type>(name##_cache, #name)

// --- communicator table ------------------------------------------------------

struct CommInfo {
  std::atomic<uint64_t> comm{0};
  int rank = -1;
  int nranks = -1;
};
constexpr size_t kComms = 128;
CommInfo g_comms[kComms];

using UserRankFn = ncclResult_t (*)(ncclComm_t, int*);
using CountFn = ncclResult_t (*)(ncclComm_t, int*);

// Rank and size of `comm`, asked of NCCL once per communicator.
const CommInfo* comm_info(ncclComm_t comm) {
  const uint64_t key = reinterpret_cast<uint64_t>(comm);
  if (key == 0) return nullptr;
  const size_t start = (key >> 4) % kComms;
  for (size_t i = 0; i < kComms; ++i) {
    CommInfo& c = g_comms[(start + i) % kComms];
    uint64_t seen = c.comm.load(std::memory_order_acquire);
    if (seen == key) return c.rank >= 0 ? &c : nullptr;
    if (seen != 0) continue;
    static std::atomic<void*> rank_cache{}, count_cache{};
    auto user_rank = real<UserRankFn>(rank_cache, "ncclCommUserRank");
    auto count = real<CountFn>(count_cache, "ncclCommCount");
    int rank = -1, nranks = -1;
    if (user_rank != nullptr) user_rank(comm, &rank);
    if (count != nullptr) count(comm, &nranks);
    if (c.comm.compare_exchange_strong(seen, key)) {
      c.rank = rank;
      c.nranks = nranks;
      return &c;
    }
    if (seen == key) return &c;
  }
  return nullptr;
}

void forget_comm(ncclComm_t comm) {
  const uint64_t key = reinterpret_cast<uint64_t>(comm);
  for (CommInfo& c : g_comms) {
    // Leave the slot claimed (probe chains stay intact) but invalid: a new
    // communicator at the same address is looked up afresh.
    if (c.comm.load() == key) c.rank = -1;
  }
}

// --- recording ---------------------------------------------------------------

enum class Sizing { kSame, kGather, kScatter };

void record_issue(const char* op, const void* send, const void* recv, size_t count,
                  ncclDataType_t dtype, Sizing sizing, ncclComm_t comm, cudaStream_t stream,
                  bool point_to_point = false) {
  using namespace memlife;
  rec::ReentryGuard guard;
  if (!guard.entered()) return;
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  const CommInfo* info = comm_info(comm);
  const int rank = info ? info->rank : -1;
  const int nranks = info ? info->nranks : -1;
  uint64_t bytes = static_cast<uint64_t>(count) * datatype_bytes(dtype);
  if (sizing != Sizing::kSame && nranks > 0) bytes *= static_cast<uint64_t>(nranks);
  char group[96];
  std::snprintf(group, sizeof(group), "nccl:%p rank %d/%d", static_cast<void*>(comm), rank, nranks);
  format::CollectiveIssueRecord r;
  r.collective_id = rec::next_id();
  r.op_string = rec::intern_string(op);
  r.group_string = rec::intern_string(group);
  r.backend_string = rec::intern_string("nccl");
  r.bytes = bytes;
  r.stack_id = rec::capture_stack(*w, 2);
  r.nccl_comm = reinterpret_cast<uint64_t>(comm);
  r.nccl_count = count;
  r.nccl_datatype = static_cast<uint64_t>(dtype);
  r.stream = reinterpret_cast<uint64_t>(stream);
  r.send_address = reinterpret_cast<uint64_t>(send);
  r.recv_address = reinterpret_cast<uint64_t>(recv);
  r.flags = kCollectiveNccl | kCollectiveAsync;
  if (point_to_point) r.flags |= kCollectivePointToPoint;
  rec::emit(*w, r);
  gpu::stream_waits().note_collective(r.stream, r.collective_id);
}

void record_comm_event(const char* what, ncclComm_t comm, int rank, int nranks) {
  using namespace memlife;
  rec::ReentryGuard guard;
  if (!guard.entered()) return;
  rec::ThreadWriter* w = rec::current_thread_writer();
  if (w == nullptr) return;
  char label[128];
  std::snprintf(label, sizeof(label), "%s comm=%p rank=%d nranks=%d", what,
                static_cast<void*>(comm), rank, nranks);
  format::MarkRecord m;
  m.kind = MarkKind::kLabel;
  m.step = rec::current_step();
  m.label_string = rec::intern_string(label);
  m.address = reinterpret_cast<uint64_t>(comm);
  rec::emit(*w, m);
}

void record_new_comm(const char* what, ncclComm_t comm) {
  const CommInfo* info = comm_info(comm);
  record_comm_event(what, comm, info ? info->rank : -1, info ? info->nranks : -1);
}

}  // namespace

#define MEMLIFE_EXPORT extern "C" __attribute__((visibility("default")))

MEMLIFE_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          ncclDataType_t datatype, ncclComm_t comm,
                                          cudaStream_t stream) {
  MEMLIFE_REAL(ncclAllGather, decltype(&ncclAllGather));
  if (ncclAllGather_real == nullptr) return kNcclSystemError;
  record_issue("nccl:AllGather", sendbuff, recvbuff, sendcount, datatype, Sizing::kGather, comm,
               stream);
  return ncclAllGather_real(sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

MEMLIFE_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                              size_t recvcount, ncclDataType_t datatype,
                                              ncclRedOp_t op, ncclComm_t comm,
                                              cudaStream_t stream) {
  MEMLIFE_REAL(ncclReduceScatter, decltype(&ncclReduceScatter));
  if (ncclReduceScatter_real == nullptr) return kNcclSystemError;
  record_issue("nccl:ReduceScatter", sendbuff, recvbuff, recvcount, datatype, Sizing::kScatter,
               comm, stream);
  return ncclReduceScatter_real(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

MEMLIFE_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream) {
  MEMLIFE_REAL(ncclAllReduce, decltype(&ncclAllReduce));
  if (ncclAllReduce_real == nullptr) return kNcclSystemError;
  record_issue("nccl:AllReduce", sendbuff, recvbuff, count, datatype, Sizing::kSame, comm, stream);
  return ncclAllReduce_real(sendbuff, recvbuff, count, datatype, op, comm, stream);
}

MEMLIFE_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, int root, ncclComm_t comm,
                                          cudaStream_t stream) {
  MEMLIFE_REAL(ncclBroadcast, decltype(&ncclBroadcast));
  if (ncclBroadcast_real == nullptr) return kNcclSystemError;
  record_issue("nccl:Broadcast", sendbuff, recvbuff, count, datatype, Sizing::kSame, comm, stream);
  return ncclBroadcast_real(sendbuff, recvbuff, count, datatype, root, comm, stream);
}

MEMLIFE_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, ncclRedOp_t op, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  MEMLIFE_REAL(ncclReduce, decltype(&ncclReduce));
  if (ncclReduce_real == nullptr) return kNcclSystemError;
  record_issue("nccl:Reduce", sendbuff, recvbuff, count, datatype, Sizing::kSame, comm, stream);
  return ncclReduce_real(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

MEMLIFE_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                     int peer, ncclComm_t comm, cudaStream_t stream) {
  MEMLIFE_REAL(ncclSend, decltype(&ncclSend));
  if (ncclSend_real == nullptr) return kNcclSystemError;
  record_issue("nccl:Send", sendbuff, nullptr, count, datatype, Sizing::kSame, comm, stream, true);
  return ncclSend_real(sendbuff, count, datatype, peer, comm, stream);
}

MEMLIFE_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype,
                                     int peer, ncclComm_t comm, cudaStream_t stream) {
  MEMLIFE_REAL(ncclRecv, decltype(&ncclRecv));
  if (ncclRecv_real == nullptr) return kNcclSystemError;
  record_issue("nccl:Recv", nullptr, recvbuff, count, datatype, Sizing::kSame, comm, stream, true);
  return ncclRecv_real(recvbuff, count, datatype, peer, comm, stream);
}

// Group calls only batch what is between them: the collectives inside are
// recorded one by one as they are enqueued.
MEMLIFE_EXPORT ncclResult_t ncclGroupStart() {
  MEMLIFE_REAL(ncclGroupStart, decltype(&ncclGroupStart));
  return ncclGroupStart_real != nullptr ? ncclGroupStart_real() : kNcclSystemError;
}

MEMLIFE_EXPORT ncclResult_t ncclGroupEnd() {
  MEMLIFE_REAL(ncclGroupEnd, decltype(&ncclGroupEnd));
  return ncclGroupEnd_real != nullptr ? ncclGroupEnd_real() : kNcclSystemError;
}

MEMLIFE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                             int rank) {
  MEMLIFE_REAL(ncclCommInitRank, decltype(&ncclCommInitRank));
  if (ncclCommInitRank_real == nullptr) return kNcclSystemError;
  const ncclResult_t r = ncclCommInitRank_real(comm, nranks, commId, rank);
  if (r == kNcclSuccess && comm != nullptr) record_new_comm("nccl_comm_init", *comm);
  return r;
}

MEMLIFE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                   ncclUniqueId commId, int rank,
                                                   ncclConfig_t* config) {
  MEMLIFE_REAL(ncclCommInitRankConfig, decltype(&ncclCommInitRankConfig));
  if (ncclCommInitRankConfig_real == nullptr) return kNcclSystemError;
  const ncclResult_t r = ncclCommInitRankConfig_real(comm, nranks, commId, rank, config);
  // A non-blocking config returns ncclInProgress (7); the rank is asked
  // for lazily at the first collective then.
  if (r == kNcclSuccess && comm != nullptr) record_new_comm("nccl_comm_init", *comm);
  return r;
}

MEMLIFE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  MEMLIFE_REAL(ncclCommInitAll, decltype(&ncclCommInitAll));
  if (ncclCommInitAll_real == nullptr) return kNcclSystemError;
  const ncclResult_t r = ncclCommInitAll_real(comms, ndev, devlist);
  if (r == kNcclSuccess && comms != nullptr) {
    for (int i = 0; i < ndev; ++i) record_new_comm("nccl_comm_init", comms[i]);
  }
  return r;
}

MEMLIFE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                          ncclConfig_t* config) {
  MEMLIFE_REAL(ncclCommSplit, decltype(&ncclCommSplit));
  if (ncclCommSplit_real == nullptr) return kNcclSystemError;
  const ncclResult_t r = ncclCommSplit_real(comm, color, key, newcomm, config);
  if (r == kNcclSuccess && newcomm != nullptr && *newcomm != nullptr) {
    record_new_comm("nccl_comm_split", *newcomm);
  }
  return r;
}

MEMLIFE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  MEMLIFE_REAL(ncclCommDestroy, decltype(&ncclCommDestroy));
  if (ncclCommDestroy_real == nullptr) return kNcclSystemError;
  record_comm_event("nccl_comm_destroy", comm, -1, -1);
  forget_comm(comm);
  return ncclCommDestroy_real(comm);
}

MEMLIFE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  MEMLIFE_REAL(ncclCommAbort, decltype(&ncclCommAbort));
  if (ncclCommAbort_real == nullptr) return kNcclSystemError;
  record_comm_event("nccl_comm_abort", comm, -1, -1);
  forget_comm(comm);
  return ncclCommAbort_real(comm);
}
