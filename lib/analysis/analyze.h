// Analysis of whole traces: one process per trace, several traces in
// parallel, per process first (cross-rank checks build on the results).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/collective_log.h"
#include "analysis/detector.h"
#include "analysis/finding.h"
#include "analysis/model.h"

namespace memlife::analysis {

struct ProcessAnalysis {
  std::string path;
  std::string error;  // non-empty: the trace could not be opened at all
  format::TraceHeader header;
  int64_t rank = -1, world_size = -1;
  // The memlife.record() block judged (AnalysisOptions::block), 0 for the
  // whole trace.
  uint64_t block = 0;
  std::string torch_version;
  std::vector<StepMark> steps;
  uint64_t allocations = 0, peak_bytes = 0, records = 0, records_lost = 0, ooms = 0;
  uint64_t final_live_bytes = 0;  // allocator-level bytes live at the end
  // Nonzero: a step census cost this much (ns), and the recorder spaced
  // them from then on (MEMLIFE_CENSUS_SPACED_LABEL).
  uint64_t census_spaced_cost_ns = 0;
  // Device segments still held at the end that held allocator blocks: the
  // caching allocator's cache, not a leak of the program.
  uint64_t cached_segments = 0, cached_segment_bytes = 0;
  // Raw CUDA segments (no allocator block inside) still held at the end.
  uint64_t raw_segments = 0, raw_segment_bytes = 0;
  // c10d collectives a library issued and waits itself (DDP's reducer, its
  // Join hook): recorded, their waits not judged.
  uint64_t collectives_waited_by_libraries = 0;
  // Allocations live at a clean exit (still reachable; see leaked_at_exit).
  nlohmann::json still_reachable_at_exit;
  // Growth that is no leak (a bounded container filling, collective
  // buffers the backend has yet to reap): not findings (set_aside_growth).
  nlohmann::json growth_set_aside = nlohmann::json::array();
  std::vector<CollectiveCall> collectives;  // the calls, in issue order
  bool truncated = false;
  // The status the process exited with, as its end record says: that of
  // exit() (Python's sys.exit(N), 1 after an uncaught exception) or _exit().
  uint64_t exit_status = 0;
  // False when the trace has no end record (killed by a signal, still
  // running): exit_status is then no status, and the report says null.
  bool exit_recorded = false;
  bool damaged = false;  // reading stopped at a bad chunk or record
  std::string stop_reason;
  std::string plugin_note;  // see Model::plugin_note
  bool python_hooks = false;
  bool saw_python = false;  // the trace has Python frames
  std::vector<Finding> findings;
};

ProcessAnalysis analyze_trace(const std::string& path, const AnalysisOptions& options);
ProcessAnalysis analyze_reader(format::TraceReader& reader, const AnalysisOptions& options);

// Called after each trace is analyzed, one call at a time, from any thread.
using ProgressFn = std::function<void(size_t done, size_t total, const std::string& path)>;

// Analyzes every trace, up to `threads` at once (0: one per core); results
// in the order of `paths`.
std::vector<ProcessAnalysis> analyze_traces(const std::vector<std::string>& paths,
                                            const AnalysisOptions& options, unsigned threads = 0,
                                            const ProgressFn& progress = {});

// Expands folders into the *.mltrace files they hold (sorted); files are
// taken as given. Returns false with a one-line error when an input does not
// exist or a folder holds no trace.
bool collect_trace_paths(const std::vector<std::string>& inputs, std::vector<std::string>& paths,
                         std::string& error);

// Trace files of different runs (header run_id) in one folder are never
// mixed. Keeps the traces of `run_id` when given, of every run with
// `all_runs` (cross-rank checks then stay within each run), else of the
// newest run (latest start_wall_ns); each run left out gets a warning.
// Unreadable files are kept (analysis reports them). False with a one-line
// error when `run_id` names no run.
bool select_run(std::vector<std::string>& paths, const std::string& run_id, bool all_runs,
                std::vector<std::string>& warnings, std::string& error);

}  // namespace memlife::analysis
