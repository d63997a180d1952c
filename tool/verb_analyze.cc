// `memlife analyze DIR|TRACE... [-o report.json] [--warmup-steps N]`:
// replays every trace of a run (in parallel), adds the cross-rank checks,
// writes the JSON report and prints a summary table.
#include <unistd.h>

#include <iostream>

#include "analysis/incomplete.h"
#include "analysis/redact.h"
#include "analysis/report.h"
#include "analysis/terminal_text.h"
#include "output_file.h"
#include "verbs.h"

namespace memlife::tool {

namespace {
constexpr const char* kDefaultReportFile = "memlife-report.json";
}  // namespace

void register_analyze_verb(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string output;
    uint64_t warmup_steps = 2;
    uint64_t block = 0;
    unsigned jobs = 0;
    analysis::RunChoice run;
    bool keep_secrets = false;
    double imbalance_ratio = 0.25;
    uint64_t imbalance_min_bytes = 1u << 20;
  };
  auto args = std::make_shared<Args>();
  CLI::App* verb = app.add_subcommand("analyze", "Replay traces and report findings as JSON");
  verb->add_option("inputs", args->inputs, "trace files or folders of *.mltrace")->required();
  verb->add_option("-o,--output", args->output,
                   "write the JSON report here ('-': stdout; default: stdout when it is a pipe "
                   "or file, else memlife-report.json in the current folder)");
  verb->add_option("--warmup-steps", args->warmup_steps, "steps step_growth ignores at the start")
      ->capture_default_str();
  verb->add_option("--block", args->block,
                   "judge only the N-th memlife.record() block of each process: memory it made "
                   "and still holds at its end (leaked_by_block), and the problems seen inside it");
  verb->add_option("-j,--jobs", args->jobs, "traces analyzed at once (0: one per core)");
  add_run_options(verb, args->run);
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
    analysis::TraceSelection selection;
    std::string error;
    if (!analysis::select_traces(args->inputs, args->run, selection, error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    // A person at a terminal gets the table and a report file, not a
    // screenful of JSON; a pipe or file gets the JSON.
    if (args->output.empty() && isatty(STDOUT_FILENO)) args->output = kDefaultReportFile;
    if (!output_is_not_an_input(args->output, args->inputs, error) ||
        !output_is_not_an_input(args->output, selection.paths, error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    for (const std::string& w : selection.warnings)
      std::cerr << "memlife analyze: warning: " << analysis::terminal_safe(w) << "\n";
    analysis::RunOptions options;
    options.analysis.warmup_steps = args->warmup_steps;
    options.analysis.block = args->block;
    options.cross_rank.imbalance_ratio = args->imbalance_ratio;
    options.cross_rank.imbalance_min_bytes = args->imbalance_min_bytes;
    options.jobs = args->jobs;
    // Progress only for a person watching: never in logs or pipes.
    if (isatty(STDERR_FILENO) && selection.paths.size() > 1) {
      options.progress = [](size_t done, size_t total, const std::string&) {
        std::cerr << "\rmemlife analyze: " << done << "/" << total << " traces" << std::flush;
        if (done == total) std::cerr << "\n";
      };
    }
    nlohmann::json report;
    if (!analysis::analyze_run(selection, options, report, error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    if (!args->keep_secrets) analysis::redact_secrets(report);
    for (const auto& w : report["warnings"])
      if (analysis::incomplete_kind_of(w.get<std::string>()) != nullptr)
        std::cerr << "memlife analyze: warning: " << analysis::terminal_safe(w.get<std::string>())
                  << "\n";
    const bool to_stdout = args->output.empty() || args->output == "-";
    if (to_stdout) {
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
    std::cout << "memlife analyze: report written to " << args->output << "\n";
    if (!finish_stdout(error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
  });
}

}  // namespace memlife::tool
