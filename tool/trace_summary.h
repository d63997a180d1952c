// After a run: which traces it left in the output directory, and one line
// per traced process saying how much was recorded and whether the trace is
// complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memlife::tool {

struct TraceSummary {
  std::string path;
  uint64_t pid = 0;
  int64_t rank = -1;
  uint64_t records = 0;
  uint64_t bytes = 0;
  bool readable = true;  // false: not a trace this build can read
  bool complete = false;
  std::string problem;  // why reading stopped, or why the file is unreadable
};

// The *.mltrace files in `dir` whose header carries `run_id` (a directory
// reused across runs holds older traces too), plus unreadable ones, which
// cannot say whose they are. Sorted by path.
std::vector<TraceSummary> summarize_run(const std::string& dir, const std::string& run_id);

// "pid 1234 rank 0: 5120 records, 1.2 MiB, complete (host-1234-r0.mltrace)".
std::string summary_line(const TraceSummary& summary);

}  // namespace memlife::tool
