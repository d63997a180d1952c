#include "trace_summary.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "analysis/detector.h"
#include "format/reader.h"

namespace memlife::tool {
namespace fs = std::filesystem;
std::vector<TraceSummary> summarize_run(const std::string& dir, const std::string& run_id) {
  std::vector<TraceSummary> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".mltrace") continue;
    TraceSummary s;
    s.path = entry.path().string();
    s.bytes = entry.file_size(ec);
    std::string error;
    auto reader = format::TraceReader::open(s.path, error);
    if (!reader) {
      s.readable = false;
      s.problem = error;
      out.push_back(std::move(s));
      continue;
    }
    if (reader->header().run_id != run_id) continue;
    s.pid = reader->header().pid;
    s.rank = reader->header().rank;
    format::ReadStatus status = reader->for_each([](const format::Record&) { return true; });
    s.records = status.records;
    s.complete = status.complete;
    s.problem = status.stop_reason;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const TraceSummary& a, const TraceSummary& b) { return a.path < b.path; });
  return out;
}

std::string summary_line(const TraceSummary& s) {
  const std::string name = fs::path(s.path).filename().string();
  if (!s.readable) {
    return "unreadable " + name + ": " + s.problem;
  }
  std::string line = "pid " + std::to_string(s.pid);
  if (s.rank >= 0) line += " rank " + std::to_string(s.rank);
  line += ": " + std::to_string(s.records) + " records, " + analysis::format_bytes(s.bytes) + ", ";
  if (s.complete) {
    line += "complete";
  } else {
    line += "truncated";
    if (!s.problem.empty()) line += " (" + s.problem + ")";
  }
  return line + " (" + name + ")";
}

}  // namespace memlife::tool
