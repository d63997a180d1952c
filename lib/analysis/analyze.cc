#include "analysis/analyze.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "analysis/attribution.h"
#include "analysis/replay.h"
#include "analysis/stacks.h"
#include "symbols/symbolizer.h"

namespace memlife::analysis {
namespace {

// --block: a finding stays when memory it retains was made inside the
// block (only that memory is kept), or when it retains none and the
// problem was seen inside it. What earlier code left behind is not the
// block's.
void keep_block_findings(std::vector<Finding>& findings, uint64_t begin_seq) {
  std::vector<Finding> kept;
  for (Finding& f : findings) {
    if (f.retains.empty()) {
      if (f.seen_seq > begin_seq) kept.push_back(std::move(f));
      continue;
    }
    std::vector<Finding::Retained> inside;
    uint64_t bytes = 0;
    for (const Finding::Retained& r : f.retains)
      if (r.alloc_seq > begin_seq) {
        inside.push_back(r);
        bytes += r.bytes;
      }
    if (inside.empty()) continue;
    if (inside.size() != f.retains.size()) {
      f.bytes = bytes;
      f.retains = std::move(inside);
    }
    kept.push_back(std::move(f));
  }
  findings = std::move(kept);
}

}  // namespace

ProcessAnalysis analyze_reader(format::TraceReader& reader, const AnalysisOptions& options) {
  ProcessAnalysis out;
  out.path = reader.path();
  Model model;
  model.block = options.block;
  out.block = options.block;
  auto detectors = make_all_detectors(options);
  std::vector<Detector*> raw;
  for (auto& d : detectors) raw.push_back(d.get());
  CollectiveLog collective_log(out.collectives);
  raw.push_back(&collective_log);
  const format::ReadStatus status = replay(reader, model, raw);
  out.truncated = !status.complete;
  out.damaged = status.damaged;
  out.stop_reason = status.stop_reason;
  if (out.truncated && out.stop_reason.empty()) out.stop_reason = "no end record";
  if (options.block != 0) {
    // The block's end is this analysis's exit; a trace still being written
    // after it is complete for the block.
    const std::string block = "memlife.record() block " + std::to_string(options.block);
    out.truncated = !model.block_ended;
    if (!model.block_begun) {
      // Asking for a block the program never ran is a mistake, not an
      // incomplete recording.
      out.error = out.path + ": no " + block + " (the trace has " +
                  std::to_string(model.blocks_begun) + " block(s))";
      return out;
    }
    if (!model.block_ended)
      out.stop_reason = block + " has no end mark (" +
                        (out.stop_reason.empty() ? "trace ends inside it" : out.stop_reason) + ")";
    else if (!out.damaged)
      out.stop_reason.clear();
  }

  Symbolizer symbolizer(model.tables.modules());
  StackResolver stacks(model, symbolizer);
  for (Detector* d : raw) d->finish(model, out.truncated, stacks, out.findings);
  attribute_retained_memory(out.findings);
  if (options.block != 0) keep_block_findings(out.findings, model.block_begin.seq);
  name_holders(out.findings, model);
  out.growth_set_aside = set_aside_growth(out.findings);
  name_cxx_holders(out.findings, model, stacks);
  say_what_no_walk_reached(out.findings, model);
  if (!out.truncated && options.block == 0)
    out.still_reachable_at_exit = still_reachable_summary(model, stacks);

  out.header = model.header;
  out.rank = model.rank;
  out.world_size = model.world_size;
  out.torch_version = model.torch_version;
  out.steps = std::move(model.steps);
  out.allocations = model.allocation_count;
  out.peak_bytes = model.peak_bytes;
  out.records = model.records;
  out.records_lost = model.records_lost;
  out.exit_status = model.exit_status;
  out.exit_recorded = model.exit_recorded;
  out.census_spaced_cost_ns = model.census_spaced_cost_ns;
  out.plugin_note = model.plugin_note;
  out.python_hooks = model.python_hooks;
  out.saw_python = model.tables.has_python_frames();
  out.ooms = model.ooms;
  out.final_live_bytes = model.live_bytes;
  out.collectives_waited_by_libraries = model.collectives_waited_by_libraries;
  for (const auto& [address, s] : model.segments)
    if (s.holds_allocations) {
      ++out.cached_segments;
      out.cached_segment_bytes += s.bytes;
    } else {
      ++out.raw_segments;
      out.raw_segment_bytes += s.bytes;
    }
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
                                            const AnalysisOptions& options, unsigned threads,
                                            const ProgressFn& progress) {
  std::vector<ProcessAnalysis> results(paths.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(paths.size()));
  std::atomic<size_t> next{0};
  std::mutex progress_mutex;
  size_t done = 0;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < paths.size();) {
      results[i] = analyze_trace(paths[i], options);
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(++done, paths.size(), paths[i]);
      }
    }
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

bool select_run(std::vector<std::string>& paths, const std::string& run_id, bool all_runs,
                std::vector<std::string>& warnings, std::string& error) {
  struct Run {
    std::vector<size_t> files;
    uint64_t newest_wall_ns = 0;
  };
  std::map<std::string, Run> runs;
  std::vector<size_t> unreadable;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string open_error;
    auto reader = format::TraceReader::open(paths[i], open_error);
    if (!reader) {
      unreadable.push_back(i);
      continue;
    }
    Run& r = runs[std::string(reader->header().run_id)];
    r.files.push_back(i);
    r.newest_wall_ns = std::max(r.newest_wall_ns, reader->header().start_wall_ns);
  }
  if (runs.size() <= 1 && run_id.empty()) return true;
  if (all_runs) {
    warnings.push_back("traces of " + std::to_string(runs.size()) +
                       " runs analyzed; cross-rank checks stay within each run");
    return true;
  }
  auto keep = runs.end();
  if (!run_id.empty()) {
    keep = runs.find(run_id);
    if (keep == runs.end()) {
      error = "no trace of run '" + run_id + "' among the inputs";
      return false;
    }
  } else {
    for (auto it = runs.begin(); it != runs.end(); ++it)
      if (keep == runs.end() || it->second.newest_wall_ns > keep->second.newest_wall_ns) keep = it;
  }
  std::vector<std::string> kept;
  for (size_t i : keep->second.files) kept.push_back(paths[i]);
  for (size_t i : unreadable) kept.push_back(paths[i]);
  for (const auto& [id, r] : runs)
    if (id != keep->first)
      warnings.push_back("left out " + std::to_string(r.files.size()) + " trace(s) of run '" + id +
                         "' (analyzing run '" + keep->first +
                         "'; use --run ID or --all-runs for the others)");
  std::sort(kept.begin(), kept.end());
  paths = std::move(kept);
  return true;
}

}  // namespace memlife::analysis
