// Hot-path cost of the recorder as hooks see it: emitting a record into the
// calling thread's buffer (the writer thread drains to a real file in the
// background meanwhile), and interning a repeated stack.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "preload/recorder_state.h"

namespace {

using namespace memlife;

void arm_recorder() {
  static bool armed = [] {
    char tmpl[] = "/tmp/memlife-bench-XXXXXX";
    const char* dir = mkdtemp(tmpl);
    setenv("MEMLIFE_OUTPUT_DIR", dir, 1);
    setenv("MEMLIFE_STACKS", "none", 1);
    rec::init_from_environment();
    return rec::ensure_started();
  }();
  if (!armed) std::abort();
}

void BM_EmitAllocNoStack(benchmark::State& state) {
  arm_recorder();
  rec::ThreadWriter* w = rec::current_thread_writer();
  uint64_t address = 0x7f0000000000ull;
  for (auto _ : state) {
    format::AllocRecord alloc;
    alloc.address = address;
    alloc.bytes = 4096;
    alloc.device = -1;
    rec::emit(*w, alloc);
    address += 4096;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EmitAllocNoStack)->Threads(1)->Threads(2)->UseRealTime();

void BM_EmitAllocFreePair(benchmark::State& state) {
  arm_recorder();
  rec::ThreadWriter* w = rec::current_thread_writer();
  uint64_t address = 0x7f0000000000ull;
  for (auto _ : state) {
    format::AllocRecord alloc;
    alloc.address = address;
    alloc.bytes = 4096;
    rec::emit(*w, alloc);
    format::FreeRecord free;
    free.address = address;
    rec::emit(*w, free);
    address += 4096;
  }
  state.SetItemsProcessed(2 * state.iterations());
}
BENCHMARK(BM_EmitAllocFreePair);

void BM_InternRepeatedStackDepth32(benchmark::State& state) {
  arm_recorder();
  rec::ThreadWriter* w = rec::current_thread_writer();
  uint64_t python[16], native[16];
  for (int i = 0; i < 16; ++i) {
    python[i] = 1000 + i;
    native[i] = 0x400000 + 0x40 * i;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(rec::intern_stack(*w, python, 16, native, 16));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InternRepeatedStackDepth32);

void BM_CaptureNativeStack(benchmark::State& state) {
  uint64_t frames[32];
  for (auto _ : state) benchmark::DoNotOptimize(rec::capture_native_stack(frames, 32, 0));
}
BENCHMARK(BM_CaptureNativeStack);

}  // namespace

BENCHMARK_MAIN();
