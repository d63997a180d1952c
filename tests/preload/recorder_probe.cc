// A traced program for the recorder tests: it drives the C API the way a
// real program's hooks drive the recorder, in the situations that break
// recorders (many threads, fork, kill, _exit, a full disk).
#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "memlife/memlife.h"

namespace {

struct Api {
  decltype(&memlife_alloc) alloc = nullptr;
  decltype(&memlife_free) free = nullptr;
  decltype(&memlife_mark_step) mark_step = nullptr;
  decltype(&memlife_flush) flush = nullptr;
};

Api load_api() {
  Api api;
  api.alloc = reinterpret_cast<decltype(api.alloc)>(dlsym(RTLD_DEFAULT, "memlife_alloc"));
  api.free = reinterpret_cast<decltype(api.free)>(dlsym(RTLD_DEFAULT, "memlife_free"));
  api.mark_step =
      reinterpret_cast<decltype(api.mark_step)>(dlsym(RTLD_DEFAULT, "memlife_mark_step"));
  api.flush = reinterpret_cast<decltype(api.flush)>(dlsym(RTLD_DEFAULT, "memlife_flush"));
  return api;
}

// Each thread uses its own address range so the checker can attribute
// every pair: thread t, pair i -> address (t + 1) << 40 | i * 16.
void alloc_free_pairs(const Api& api, int thread, long pairs) {
  for (long i = 0; i < pairs; ++i) {
    const auto address =
        reinterpret_cast<const void*>((uint64_t(thread) + 1) << 40 | uint64_t(i) * 16);
    api.alloc(address, 64, -1);
    api.free(address, -1);
  }
}

void run_threads(const Api& api, int threads, long pairs) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(alloc_free_pairs, std::cref(api), t, pairs);
  for (auto& th : pool) th.join();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: recorder_probe threads|fork|kill|exit_|disk_full|sibling|idle ...\n");
    return 2;
  }
  const Api api = load_api();
  const char* mode = argv[1];
  if (std::strcmp(mode, "idle") == 0) return 0;
  if (std::strcmp(mode, "sibling") == 0 && argc > 2) {
    // Traced or not. argv[2]: a library that opens its sibling through its own RUNPATH
    // or RPATH (tests/preload/caller_search_loader.cc).
    void* loader = dlopen(argv[2], RTLD_NOW);
    if (loader == nullptr) return 2;
    auto open_sibling = reinterpret_cast<int (*)()>(dlsym(loader, "caller_search_open_sibling"));
    return open_sibling != nullptr && open_sibling() == 914 ? 0 : 3;
  }
  if (api.alloc == nullptr) {
    std::fprintf(stderr, "recorder_probe: the memlife C API is not in this process\n");
    return 3;
  }
  if (std::strcmp(mode, "threads") == 0) {
    run_threads(api, std::atoi(argv[2]), std::atol(argv[3]));
    return 0;
  }
  if (std::strcmp(mode, "fork") == 0) {
    // Threads keep recording while the main thread forks: the child must
    // neither deadlock nor write into the parent's trace.
    std::thread background(alloc_free_pairs, std::cref(api), 1, 200000);
    api.mark_step("before-fork");
    const pid_t child = fork();
    if (child == 0) {
      alloc_free_pairs(api, 7, 1000);
      api.mark_step("in-child");
      std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    background.join();
    api.mark_step("after-fork");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
  }
  if (std::strcmp(mode, "kill") == 0) {
    // No explicit flush: the writer thread's periodic flush (50 ms) must
    // have written these before the kill.
    alloc_free_pairs(api, 0, 1000);
    usleep(150000);
    raise(SIGKILL);
  }
  if (std::strcmp(mode, "segv") == 0) {
    // Records made just before a crash, with no time for a periodic flush.
    alloc_free_pairs(api, 0, 1000);
    volatile int* nowhere = nullptr;
    *nowhere = 1;
    return 0;
  }
  if (std::strcmp(mode, "signals") == 0) {
    // Signals land on recording threads all the time.
    signal(SIGUSR1, [](int) {});
    std::atomic<bool> done{false};
    std::thread storm([&] {
      while (!done.load()) {
        kill(getpid(), SIGUSR1);
        usleep(50);
      }
    });
    run_threads(api, 4, 50000);
    done = true;
    storm.join();
    return 0;
  }
  if (std::strcmp(mode, "dlopen") == 0) {
    // Libraries come and go while recording.
    for (int i = 0; i < 50; ++i) {
      void* lib = dlopen(i % 2 ? "libz.so.1" : "libm.so.6", RTLD_NOW);
      alloc_free_pairs(api, i, 100);
      if (lib != nullptr) dlclose(lib);
    }
    return 0;
  }
  if (std::strcmp(mode, "exit7") == 0) {
    alloc_free_pairs(api, 0, 100);
    std::exit(7);
  }
  if (std::strcmp(mode, "exit_") == 0) {
    alloc_free_pairs(api, 0, 1000);
    _exit(5);
  }
  if (std::strcmp(mode, "disk_full") == 0) {
    // A file size limit stands in for a full disk: writes past it fail
    // with EFBIG once SIGXFSZ is ignored.
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{256 * 1024, 256 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    for (int batch = 0; batch < 200; ++batch) {
      alloc_free_pairs(api, batch, 1000);
      api.flush();
    }
    std::printf("still running\n");
    return 0;
  }
  std::fprintf(stderr, "recorder_probe: unknown mode %s\n", mode);
  return 2;
}
