// Writes a small synthetic trace holding every record kind, with known
// values the dump tests check. Two recording streams, small chunks, so
// truncating the file loses whole chunks.
//
//   make_trace OUT.mltrace [--no-end]   write OUT (without the end record)
//   make_trace --into-run-dir           write <host>-<pid>.mltrace into
//                                       $MEMLIFE_OUTPUT_DIR, stamped with
//                                       $MEMLIFE_RUN_ID, as the recorder would
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "format/trace_builder.h"

namespace {

using namespace memlife;
using namespace memlife::format;

constexpr uint64_t kModuleBase = 0x400000;
constexpr uint64_t kBufferAddress = 0x7f0000001000;

void add_every_kind(TraceBuilder& b) {
  b.add(0, ProcessRecord{0, 0, 2, "2.15.0", "started"});
  b.add(0, ThreadRecord{101, "MainThread"});
  b.add(0, ModuleRecord{"/opt/fake/libfake.so", kModuleBase, 0x10000, "\x01\xab"});
  // $MAKE_TRACE_FUNCTION replaces the function name "forward" (terminal
  // escape tests, issue 15).
  const char* function = std::getenv("MAKE_TRACE_FUNCTION");
  const char* strings[] = {
      "train.py",   "step", "aten::add", "float32",  "c10d::allreduce_",
      "default_pg", "gloo", "epoch-1",   "model.py", function ? function : "forward"};
  for (uint64_t i = 0; i < std::size(strings); ++i) b.add(0, StringRecord{i + 1, strings[i]});
  b.add(0, FrameRecord{1, 1, 2, 42});  // train.py:42 step
  b.add(0, FrameRecord{2, 9, 10, 7});  // model.py:7 forward
  const std::vector<uint64_t> python = {2, 1};
  // The second address lies in no module: it must dump with module null.
  const std::vector<uint64_t> native = {kModuleBase + 0x123, 0x999999};
  b.add(0, StackRecord{1, list_of<uint64_t>(python), list_of<uint64_t>(native)});

  b.add(0, OpBeginRecord{1, 3, 1, {}});
  b.add(0, AllocRecord{kBufferAddress, 4096, -1, 0, 1, 3});
  const std::vector<int64_t> sizes = {32, 32}, strides = {32, 1};
  TensorRecord base{};
  base.tensor_id = 1;
  base.storage_id = 1;
  base.data_address = kBufferAddress;
  base.storage_bytes = 4096;
  base.sizes = list_of<int64_t>(sizes);
  base.strides = list_of<int64_t>(strides);
  base.itemsize = 4;
  base.dtype_string = 4;
  base.op_string = 3;
  base.stack_id = 1;
  b.add(0, base);
  const std::vector<int64_t> view_sizes = {32}, view_strides = {1};
  TensorRecord view = base;
  view.tensor_id = 2;
  view.storage_offset = 32;
  view.sizes = list_of<int64_t>(view_sizes);
  view.strides = list_of<int64_t>(view_strides);
  view.flags = kTensorIsView | kTensorAliases;
  view.base_tensor_id = 1;
  b.add(0, view);
  const std::vector<uint64_t> outputs = {1, 2};
  b.add(0, OpEndRecord{1, list_of<uint64_t>(outputs)});

  // A second thread issues and waits on a collective.
  b.add(1, ThreadRecord{102, "comm"});
  const std::vector<uint64_t> tensors = {1};
  CollectiveIssueRecord issue{};
  issue.collective_id = 1;
  issue.op_string = 5;
  issue.group_string = 6;
  issue.backend_string = 7;
  issue.inputs = list_of<uint64_t>(tensors);
  issue.outputs = list_of<uint64_t>(tensors);
  issue.bytes = 4096;
  issue.stack_id = 1;
  issue.flags = kCollectiveAsync;
  b.add(1, issue);
  b.add(1, CollectiveWaitRecord{1, 5, list_of<uint64_t>(tensors), 1, WaitHow::kWorkWait});

  b.add(0, MarkRecord{MarkKind::kStep, 1, 8, 0, 0, 1});
  b.add(0, MarkRecord{MarkKind::kExpectFreed, 1, 8, 1, kBufferAddress, 0});
  b.add(0, CensusRecord{1, CensusPhase::kBegin, CensusReason::kStep, 1, 2, kUnknownCount});
  const std::vector<CensusHolder> holders = {{2, 128}};
  b.add(0, CensusStorageRecord{1, 1, kBufferAddress, 4096, 3, -1, list_of<CensusHolder>(holders)});
  b.add(0, CensusRecord{1, CensusPhase::kEnd, CensusReason::kStep, 1, 2, 0});
  b.add_segment(1, true, SegmentRecord{0x7e0000000000, 1 << 20, 0, 7});
  b.add_segment(1, false, SegmentRecord{0x7e0000000000, 1 << 20, 0, 7});
  b.add(0, FreeRecord{kBufferAddress, 4096, -1, FreePhase::kFree});
  b.add(1, OomRecord{0, 1 << 30, 1 << 20, 80ull << 30});
  b.add(1, LostRecord{5, 640});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_trace OUT.mltrace [--no-end] | make_trace --into-run-dir\n");
    return 2;
  }
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  std::string path = argv[1];
  std::string run_id = "make-trace";
  bool clean_end = !(argc > 2 && std::strcmp(argv[2], "--no-end") == 0);
  if (path == "--into-run-dir") {
    const char* dir = std::getenv("MEMLIFE_OUTPUT_DIR");
    const char* id = std::getenv("MEMLIFE_RUN_ID");
    if (!dir || !id) {
      std::fprintf(stderr, "make_trace: MEMLIFE_OUTPUT_DIR and MEMLIFE_RUN_ID must be set\n");
      return 2;
    }
    path = std::string(dir) + "/" + host + "-" + std::to_string(getpid()) + ".mltrace";
    run_id = id;
  }
  // $MAKE_TRACE_ARGS is appended to the recorded command line.
  const char* extra_args = std::getenv("MAKE_TRACE_ARGS");
  const std::string command_line =
      "make_trace " + path + (extra_args ? std::string(" ") + extra_args : std::string());
  HeaderFields header;
  header.producer_major = 0;
  header.producer_minor = 1;
  header.pid = static_cast<uint64_t>(getpid());
  header.ppid = static_cast<uint64_t>(getppid());
  header.host = host;
  header.run_id = run_id;
  header.torch_version = "2.15.0";
  header.start_monotonic_ns = 1'000'000'000;
  header.start_wall_ns = 1'700'000'000'000'000'000;
  header.command_line = command_line;

  TraceBuilder builder(header);
  builder.set_chunk_bytes(48);
  add_every_kind(builder);
  if (!builder.write_file(path, clean_end, 0)) {
    std::fprintf(stderr, "make_trace: cannot write %s\n", path.c_str());
    return 1;
  }
  return 0;
}
