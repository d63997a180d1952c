// The one path from a verb's inputs to a report, shared by analyze, check,
// report and export: the same inputs give the same traces and the same
// findings whatever the verb.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/cross_rank.h"

namespace memlife::analysis {

// Which run of the inputs to read: the newest by default.
struct RunChoice {
  std::string run_id;     // --run
  bool all_runs = false;  // --all-runs
};

struct TraceSelection {
  std::vector<std::string> paths;     // the chosen run's traces, sorted
  std::vector<std::string> warnings;  // runs left out, unreadable files
};

// Folders are searched recursively for *.mltrace files; traces of
// different runs are never mixed (RunChoice). False with a one-line error
// when an input is missing, nothing is found or the run is unknown.
bool select_traces(const std::vector<std::string>& inputs, const RunChoice& choice,
                   TraceSelection& out, std::string& error);

struct RunOptions {
  AnalysisOptions analysis;
  CrossRankOptions cross_rank;
  unsigned jobs = 0;  // traces replayed at once (0: one per core)
  ProgressFn progress;
};

// Replays every selected trace, adds the cross-rank findings and makes the
// report (with the selection's warnings). False with the first trace's
// error when one cannot be read.
bool analyze_run(const TraceSelection& selection, const RunOptions& options, nlohmann::json& report,
                 std::string& error);

}  // namespace memlife::analysis
