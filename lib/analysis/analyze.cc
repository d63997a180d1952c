#include "analysis/analyze.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "analysis/replay.h"
#include "analysis/stacks.h"
#include "analysis/symbolize.h"

namespace memlife::analysis {

ProcessAnalysis analyze_reader(format::TraceReader& reader, const AnalysisOptions& options) {
  ProcessAnalysis out;
  out.path = reader.path();
  Model model;
  auto detectors = make_all_detectors(options);
  std::vector<Detector*> raw;
  for (auto& d : detectors) raw.push_back(d.get());
  const format::ReadStatus status = replay(reader, model, raw);
  out.truncated = !status.complete;
  out.stop_reason = status.stop_reason;
  if (out.truncated && out.stop_reason.empty()) out.stop_reason = "no end record";

  Symbolizer symbolizer(model.modules);
  StackResolver stacks(model, symbolizer);
  for (Detector* d : raw) d->finish(model, out.truncated, stacks, out.findings);

  out.header = model.header;
  out.rank = model.rank;
  out.world_size = model.world_size;
  out.torch_version = model.torch_version;
  out.steps = std::move(model.steps);
  out.allocations = model.allocation_count;
  out.peak_bytes = model.peak_bytes;
  out.records = model.records;
  out.records_lost = model.records_lost;
  out.ooms = model.ooms;
  return out;
}

ProcessAnalysis analyze_trace(const std::string& path, const AnalysisOptions& options) {
  std::string error;
  auto reader = format::TraceReader::open(path, error);
  if (!reader) {
    ProcessAnalysis out;
    out.path = path;
    out.error = error;
    return out;
  }
  return analyze_reader(*reader, options);
}

std::vector<ProcessAnalysis> analyze_traces(const std::vector<std::string>& paths,
                                            const AnalysisOptions& options, unsigned threads) {
  std::vector<ProcessAnalysis> results(paths.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(paths.size()));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < paths.size();)
      results[i] = analyze_trace(paths[i], options);
  };
  if (threads <= 1) {
    work();
    return results;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  return results;
}

bool collect_trace_paths(const std::vector<std::string>& inputs, std::vector<std::string>& paths,
                         std::string& error) {
  namespace fs = std::filesystem;
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(in, ec))
        if (e.is_regular_file() && e.path().extension() == ".mltrace")
          found.push_back(e.path().string());
      if (ec) {
        error = in + ": cannot list folder: " + ec.message();
        return false;
      }
      if (found.empty()) {
        error = in + ": no *.mltrace files in this folder";
        return false;
      }
      std::sort(found.begin(), found.end());
      paths.insert(paths.end(), found.begin(), found.end());
    } else if (fs::exists(in, ec)) {
      paths.push_back(in);
    } else {
      error = in + ": no such file or folder";
      return false;
    }
  }
  return true;
}

}  // namespace memlife::analysis
