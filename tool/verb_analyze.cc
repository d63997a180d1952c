// `memlife analyze DIR|TRACE... [-o report.json] [--warmup-steps N]`:
// replays every trace of a run (in parallel), adds the cross-rank checks,
// writes the JSON report and prints a summary table.
#include <unistd.h>

#include <iostream>

#include "analysis/analyze.h"
#include "analysis/cross_rank.h"
#include "analysis/incomplete.h"
#include "analysis/redact.h"
#include "analysis/report.h"
#include "analysis/terminal_text.h"
#include "output_file.h"
#include "verbs.h"

namespace memlife::tool {

void register_analyze_verb(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string output;
    uint64_t warmup_steps = 2;
    unsigned jobs = 0;
    std::string run_id;
    bool all_runs = false;
    bool keep_secrets = false;
    double imbalance_ratio = 0.25;
    uint64_t imbalance_min_bytes = 1u << 20;
  };
  auto args = std::make_shared<Args>();
  CLI::App* verb = app.add_subcommand("analyze", "Replay traces and report findings as JSON");
  verb->add_option("inputs", args->inputs, "trace files or folders of *.mltrace")->required();
  verb->add_option("-o,--output", args->output, "write the JSON report here (default: stdout)");
  verb->add_option("--warmup-steps", args->warmup_steps, "steps step_growth ignores at the start")
      ->capture_default_str();
  verb->add_option("-j,--jobs", args->jobs, "traces analyzed at once (0: one per core)");
  verb->add_option("--run", args->run_id,
                   "analyze the traces of this run id (default: the newest run among the inputs)");
  verb->add_flag("--all-runs", args->all_runs,
                 "analyze the traces of every run (cross-rank checks stay within each run)");
  verb->add_flag("--keep-secrets", args->keep_secrets,
                 "keep argument values that look like secrets (--password=..., *_TOKEN=...) in "
                 "the report; by default they are written as ***");
  verb->add_option("--imbalance-ratio", args->imbalance_ratio,
                   "rank_imbalance when a rank's peak or end bytes differ from the median rank's "
                   "by more than this fraction")
      ->capture_default_str();
  verb->add_option("--imbalance-min-bytes", args->imbalance_min_bytes,
                   "... and by more than this many bytes")
      ->capture_default_str();
  verb->callback([args] {
    std::vector<std::string> paths;
    std::string error;
    std::vector<std::string> warnings;
    if (!analysis::collect_trace_paths(args->inputs, paths, error) ||
        !analysis::select_run(paths, args->run_id, args->all_runs, warnings, error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    if (!output_is_not_an_input(args->output, args->inputs, error) ||
        !output_is_not_an_input(args->output, paths, error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    for (const std::string& w : warnings)
      std::cerr << "memlife analyze: warning: " << analysis::terminal_safe(w) << "\n";
    analysis::AnalysisOptions options;
    options.warmup_steps = args->warmup_steps;
    // Progress only for a person watching: never in logs or pipes.
    analysis::ProgressFn progress;
    if (isatty(STDERR_FILENO) && paths.size() > 1) {
      progress = [](size_t done, size_t total, const std::string&) {
        std::cerr << "\rmemlife analyze: " << done << "/" << total << " traces" << std::flush;
        if (done == total) std::cerr << "\n";
      };
    }
    auto results = analysis::analyze_traces(paths, options, args->jobs, progress);
    for (const auto& r : results)
      if (!r.error.empty()) {
        std::cerr << "memlife analyze: " << r.error << "\n";
        throw ExitWith{2};
      }
    analysis::CrossRankOptions cross;
    cross.imbalance_ratio = args->imbalance_ratio;
    cross.imbalance_min_bytes = args->imbalance_min_bytes;
    const auto run_findings = analysis::cross_rank_findings(results, cross);
    nlohmann::json report = analysis::make_report(results, run_findings, warnings);
    if (!args->keep_secrets) analysis::redact_secrets(report);
    for (const auto& w : report["warnings"])
      if (analysis::incomplete_kind_of(w.get<std::string>()) != nullptr)
        std::cerr << "memlife analyze: warning: " << analysis::terminal_safe(w.get<std::string>())
                  << "\n";
    if (args->output.empty()) {
      // ASCII: names from the trace cannot carry a terminal escape.
      std::cout << report.dump(2, ' ', true) << "\n";
      if (!finish_stdout(error)) {
        std::cerr << "memlife analyze: " << error << "\n";
        throw ExitWith{2};
      }
      std::cerr << analysis::summary_table(report);
      return;
    }
    if (!write_output_file(args->output, report.dump(2) + "\n", error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    std::cout << analysis::summary_table(report);
    if (!finish_stdout(error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
  });
}

}  // namespace memlife::tool
