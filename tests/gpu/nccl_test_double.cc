// TEST DOUBLE for NCCL: libnccl_test_double.so exports the NCCL entry points
// memlife interposes, with the real signatures, and does no communication
// at all. Collectives only count themselves (nccl_test_double_calls) so a
// test can tell that memlife forwarded each call to the "real" library.
// Never install or ship this library.
#include <atomic>
#include <cstddef>

namespace {
struct FakeComm {
  int rank;
  int nranks;
};
FakeComm g_comms[16];
std::atomic<int> g_next{0};
std::atomic<int> g_calls{0};
}  // namespace

using ncclResult_t = int;
using ncclComm_t = FakeComm*;
using cudaStream_t = void*;
struct ncclUniqueId {
  char internal[128];
};
struct ncclConfig_t;

#define DOUBLE_EXPORT extern "C" __attribute__((visibility("default")))

DOUBLE_EXPORT int nccl_test_double_calls() { return g_calls.load(); }

// Internal, like NCCL's own: calls between entry points must not go through
// the (interposable) exported names.
static ncclResult_t new_comm(ncclComm_t* comm, int nranks, int rank) {
  FakeComm* c = &g_comms[g_next.fetch_add(1) % 16];
  c->rank = rank;
  c->nranks = nranks;
  *comm = c;
  return 0;
}

DOUBLE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  return new_comm(comm, nranks, rank);
}
DOUBLE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                  int rank, ncclConfig_t*) {
  return new_comm(comm, nranks, rank);
}
DOUBLE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int*) {
  for (int i = 0; i < ndev; ++i) new_comm(&comms[i], ndev, i);
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                         ncclConfig_t*) {
  return new_comm(newcomm, 1, 0);
}
DOUBLE_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = comm->rank;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  *count = comm->nranks;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t) { return 0; }
DOUBLE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t) { return 0; }
DOUBLE_EXPORT ncclResult_t ncclGroupStart() { return 0; }
DOUBLE_EXPORT ncclResult_t ncclGroupEnd() { return 0; }

DOUBLE_EXPORT ncclResult_t ncclAllGather(const void*, void*, size_t, int, ncclComm_t,
                                         cudaStream_t) {
  ++g_calls;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclReduceScatter(const void*, void*, size_t, int, int, ncclComm_t,
                                             cudaStream_t) {
  ++g_calls;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclAllReduce(const void*, void*, size_t, int, int, ncclComm_t,
                                         cudaStream_t) {
  ++g_calls;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclBroadcast(const void*, void*, size_t, int, int, ncclComm_t,
                                         cudaStream_t) {
  ++g_calls;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclReduce(const void*, void*, size_t, int, int, int, ncclComm_t,
                                      cudaStream_t) {
  ++g_calls;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclSend(const void*, size_t, int, int, ncclComm_t, cudaStream_t) {
  ++g_calls;
  return 0;
}
DOUBLE_EXPORT ncclResult_t ncclRecv(void*, size_t, int, int, ncclComm_t, cudaStream_t) {
  ++g_calls;
  return 0;
}
