#include "analysis/run.h"

#include "analysis/report.h"

namespace memlife::analysis {

bool select_traces(const std::vector<std::string>& inputs, const RunChoice& choice,
                   TraceSelection& out, std::string& error) {
  out = TraceSelection{};
  return collect_trace_paths(inputs, out.paths, error) &&
         select_run(out.paths, choice.run_id, choice.all_runs, out.warnings, error);
}

bool analyze_run(const TraceSelection& selection, const RunOptions& options, nlohmann::json& report,
                 std::string& error) {
  auto results = analyze_traces(selection.paths, options.analysis, options.jobs, options.progress);
  for (const auto& r : results)
    if (!r.error.empty()) {
      error = r.error;
      return false;
    }
  const auto run_findings = cross_rank_findings(results, options.cross_rank);
  report = make_report(results, run_findings, selection.warnings);
  return true;
}

}  // namespace memlife::analysis
