// Writes a synthetic trace the views tests know by heart: CPU memory and a
// CUDA device with caching-allocator segments, four step marks, one
// collective waited and one never waited, an OOM, and a Python frame whose
// file name is an HTML injection attempt.
//
//   make_views_trace OUT.mltrace [PID]
#include <cstdlib>
#include <string>
#include <vector>

#include "format/trace_builder.h"

namespace {

using namespace memlife;
using namespace memlife::format;

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kCpuBase = 0x5500'0000'0000;
constexpr uint64_t kCudaSegment = 0x7f00'0000'0000;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  HeaderFields h;
  h.pid = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4242;
  h.rank = 0;
  h.world_size = 1;
  h.host = "testhost";
  h.run_id = "views-test";
  h.torch_version = "2.15.0";
  h.start_monotonic_ns = 1000 * kMs;
  h.start_wall_ns = 1'700'000'000'000 * kMs;
  h.command_line = "python train.py";
  TraceBuilder b(h);
  uint64_t now = h.start_monotonic_ns;
  auto t = [&](uint64_t ms) { return now += ms * kMs; };

  const char* strings[] = {"/tmp/<script>alert(1)</script>.py",
                           "train_step",
                           "model.py",
                           "forward",
                           "c10d::allreduce_",
                           "default_pg",
                           "gloo"};
  for (uint64_t i = 0; i < std::size(strings); ++i) b.add(0, StringRecord{i + 1, strings[i]}, t(0));
  b.add(0, FrameRecord{1, 1, 2, 7}, t(0));  // the <script> file
  b.add(0, FrameRecord{2, 3, 4, 42}, t(0));
  const std::vector<uint64_t> leak_stack = {2, 1}, other_stack = {1};
  const std::vector<uint64_t> none;
  b.add(0, StackRecord{1, list_of<uint64_t>(leak_stack), list_of<uint64_t>(none)}, t(0));
  b.add(0, StackRecord{2, list_of<uint64_t>(other_stack), list_of<uint64_t>(none)}, t(0));

  // CUDA: one 2 MiB segment, blocks inside it.
  b.add_segment(0, true, SegmentRecord{kCudaSegment, 2 << 20, 0, 0}, t(1));
  uint64_t cpu_allocs = 0, cuda_allocs = 0;
  for (uint64_t step = 1; step <= 4; ++step) {
    // A CPU buffer that leaks each step, and a temporary freed at once.
    b.add(0, AllocRecord{kCpuBase + step * 0x10000, 4096 * step, -1, 0, 1, 0}, t(2));
    ++cpu_allocs;
    b.add(0, AllocRecord{kCpuBase + 0x100000, 65536, -1, 0, 2, 0}, t(1));
    ++cpu_allocs;
    b.add(0, FreeRecord{kCpuBase + 0x100000, 0, -1, FreePhase::kFree}, t(3));
    // A CUDA block, freed in two phases like the caching allocator does.
    b.add(0, AllocRecord{kCudaSegment + 0x1000, 262144, 0, 0, 1, 0}, t(1));
    ++cuda_allocs;
    b.add(0, FreeRecord{kCudaSegment + 0x1000, 262144, 0, FreePhase::kRequested}, t(1));
    b.add(0, FreeRecord{kCudaSegment + 0x1000, 262144, 0, FreePhase::kCompleted}, t(1));
    b.add(0, MarkRecord{MarkKind::kStep, step, 0, 0, 0, 0}, t(1));
  }
  // A block still live at the end, inside the segment.
  b.add(0, AllocRecord{kCudaSegment + 0x40000, 131072, 0, 0, 1, 0}, t(1));
  ++cuda_allocs;

  CollectiveIssueRecord issue{};
  issue.collective_id = 1;
  issue.op_string = 5;
  issue.group_string = 6;
  issue.backend_string = 7;
  issue.bytes = 4096;
  issue.flags = kCollectiveAsync;
  b.add(0, issue, t(1));
  b.add(0, CollectiveWaitRecord{1, 5, {}, 0, WaitHow::kWorkWait}, t(2));
  issue.collective_id = 2;
  b.add(0, issue, t(1));  // never waited
  b.add(0, OomRecord{0, 1 << 30, 1 << 20, 16ull << 30}, t(1));
  b.add(0, ThreadRecord{1, "MainThread"}, t(5));
  return b.write_file(argv[1]) ? 0 : 1;
}
