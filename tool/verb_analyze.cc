// `memlife analyze DIR|TRACE... [-o report.json] [--warmup-steps N]`:
// replays every trace (in parallel), writes the JSON report and prints a
// summary table.
#include <fstream>
#include <iostream>

#include "analysis/analyze.h"
#include "analysis/report.h"
#include "verbs.h"

namespace memlife::tool {

void register_analyze_verb(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string output;
    uint64_t warmup_steps = 2;
    unsigned jobs = 0;
  };
  auto args = std::make_shared<Args>();
  CLI::App* verb = app.add_subcommand("analyze", "Replay traces and report findings as JSON");
  verb->add_option("inputs", args->inputs, "trace files or folders of *.mltrace")->required();
  verb->add_option("-o,--output", args->output, "write the JSON report here (default: stdout)");
  verb->add_option("--warmup-steps", args->warmup_steps, "steps step_growth ignores at the start")
      ->capture_default_str();
  verb->add_option("-j,--jobs", args->jobs, "traces analyzed at once (0: one per core)");
  verb->callback([args] {
    std::vector<std::string> paths;
    std::string error;
    if (!analysis::collect_trace_paths(args->inputs, paths, error)) {
      std::cerr << "memlife analyze: " << error << "\n";
      throw ExitWith{2};
    }
    analysis::AnalysisOptions options;
    options.warmup_steps = args->warmup_steps;
    const auto results = analysis::analyze_traces(paths, options, args->jobs);
    for (const auto& r : results)
      if (!r.error.empty()) {
        std::cerr << "memlife analyze: " << r.error << "\n";
        throw ExitWith{2};
      }
    const nlohmann::json report = analysis::make_report(results);
    if (args->output.empty()) {
      std::cout << report.dump(2) << "\n";
      std::cerr << analysis::summary_table(report);
      return;
    }
    std::ofstream out(args->output);
    out << report.dump(2) << "\n";
    out.close();
    if (!out) {
      std::cerr << "memlife analyze: cannot write " << args->output << "\n";
      throw ExitWith{2};
    }
    std::cout << analysis::summary_table(report);
  });
}

}  // namespace memlife::tool
