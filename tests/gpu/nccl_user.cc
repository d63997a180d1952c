// A stand-in for libtorch_cuda: a library that links NCCL (here the test
// double) and calls it through its PLT. nccl_probe dlopens it RTLD_LOCAL,
// the way Python loads torch, so NCCL is outside the global scope.
#include <cstddef>

using ncclComm_t = struct FakeComm*;
struct ncclUniqueId {
  char internal[128];
};
extern "C" {
int ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int);
int ncclAllGather(const void*, void*, size_t, int, ncclComm_t, void*);
int ncclAllReduce(const void*, void*, size_t, int, int, ncclComm_t, void*);
int ncclCommDestroy(ncclComm_t);
int nccl_test_double_calls();
}

extern "C" __attribute__((visibility("default"))) int nccl_user_run(int rounds) {
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, 4, ncclUniqueId{}, 3) != 0) return -1;
  for (int i = 0; i < rounds; ++i) {
    ncclAllGather(reinterpret_cast<void*>(0x7000), reinterpret_cast<void*>(0x8000), 256, 7, comm,
                  reinterpret_cast<void*>(0x55));
  }
  ncclAllReduce(reinterpret_cast<void*>(0x9000), reinterpret_cast<void*>(0x9000), 10, 9, 0, comm,
                reinterpret_cast<void*>(0x55));
  ncclCommDestroy(comm);
  return nccl_test_double_calls();
}
