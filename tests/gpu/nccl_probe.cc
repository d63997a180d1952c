// Calls NCCL (the test double) under memlife's preload, two ways:
//   direct:  NCCL linked into this program (global scope), every entry point
//   dlopen:  through a library dlopened RTLD_LOCAL, as Python loads torch
// Built twice: nccl_probe links the double (direct), nccl_dlopen_probe does
// not (dlopen), so there NCCL is only reachable through the local scope.
// Prints the number of calls the double saw, so the test can check that
// every call reached the "real" NCCL.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#ifdef NCCL_PROBE_DIRECT
using ncclComm_t = struct FakeComm*;
struct ncclUniqueId {
  char internal[128];
};
extern "C" {
int ncclCommInitRank(ncclComm_t*, int, ncclUniqueId, int);
int ncclCommInitAll(ncclComm_t*, int, const int*);
int ncclAllGather(const void*, void*, size_t, int, ncclComm_t, void*);
int ncclReduceScatter(const void*, void*, size_t, int, int, ncclComm_t, void*);
int ncclAllReduce(const void*, void*, size_t, int, int, ncclComm_t, void*);
int ncclBroadcast(const void*, void*, size_t, int, int, ncclComm_t, void*);
int ncclReduce(const void*, void*, size_t, int, int, int, ncclComm_t, void*);
int ncclSend(const void*, size_t, int, int, ncclComm_t, void*);
int ncclRecv(void*, size_t, int, int, ncclComm_t, void*);
int ncclGroupStart();
int ncclGroupEnd();
int ncclCommDestroy(ncclComm_t);
int nccl_test_double_calls();
}
#endif

namespace {
[[maybe_unused]] void* p(unsigned long v) { return reinterpret_cast<void*>(v); }
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "direct";
#ifdef NCCL_PROBE_DIRECT
  if (mode == "direct") {
    ncclComm_t comm = nullptr;
    ncclCommInitRank(&comm, 2, ncclUniqueId{}, 1);
    ncclAllGather(p(0x1000), p(0x2000), 1024, 7, comm, p(0x11));        // float32
    ncclReduceScatter(p(0x3000), p(0x4000), 512, 9, 0, comm, p(0x11));  // bf16
    ncclAllReduce(p(0x5000), p(0x5000), 100, 4, 0, comm, p(0x22));      // int64
    ncclBroadcast(p(0x6000), p(0x6000), 64, 0, 0, comm, p(0x22));
    ncclReduce(p(0x6100), p(0x6200), 8, 8, 0, 0, comm, p(0x22));
    ncclGroupStart();
    ncclSend(p(0x7000), 32, 6, 0, comm, p(0x33));
    ncclRecv(p(0x7100), 32, 6, 0, comm, p(0x33));
    ncclGroupEnd();
    ncclComm_t all[2] = {nullptr, nullptr};
    ncclCommInitAll(all, 2, nullptr);
    ncclCommDestroy(comm);
    std::printf("calls=%d\n", nccl_test_double_calls());
    return 0;
  }
#endif
  if (mode == "dlopen" && argc > 2) {
    void* lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      return 2;
    }
    auto run = reinterpret_cast<int (*)(int)>(dlsym(lib, "nccl_user_run"));
    std::printf("calls=%d\n", run ? run(5) : -1);
    return 0;
  }
  std::fprintf(stderr, "usage: nccl_probe direct | dlopen LIB\n");
  return 2;
}
