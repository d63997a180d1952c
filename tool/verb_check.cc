// `memlife check DIR|TRACE|report.json [--fail-on KINDS] [--max-bytes N]
// [--suppressions FILE] [--baseline FILE] [--junit FILE] [--accept-incomplete]`:
// exit 0 when no finding fails the gate, 1 when one does, 2 on a usage error,
// an unreadable input or an incomplete recording (analysis/incomplete.h)
// unless --accept-incomplete.
#include <fstream>
#include <iostream>

#include "analysis/analyze.h"
#include "analysis/check.h"
#include "analysis/incomplete.h"
#include "analysis/report.h"
#include "analysis/terminal_text.h"
#include "output_file.h"
#include "verbs.h"

namespace memlife::tool {

namespace {

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "memlife check: " << message << "\n";
  throw ExitWith{2};
}

nlohmann::json report_for(const std::vector<std::string>& inputs, const analysis::RunChoice& run,
                          uint64_t warmup) {
  std::string error;
  nlohmann::json report;
  if (inputs.size() == 1 && inputs[0].size() > 5 &&
      inputs[0].compare(inputs[0].size() - 5, 5, ".json") == 0) {
    if (!analysis::load_report(inputs[0], report, error)) usage_error(error);
    return report;
  }
  analysis::TraceSelection selection;
  analysis::RunOptions options;
  options.analysis.warmup_steps = warmup;
  if (!analysis::select_traces(inputs, run, selection, error) ||
      !analysis::analyze_run(selection, options, report, error))
    usage_error(error);
  return report;
}

}  // namespace

void register_check_verb(CLI::App& app) {
  struct Args {
    std::vector<std::string> inputs;
    std::string fail_on, suppressions, baseline, junit;
    uint64_t max_bytes = 0, warmup_steps = 2;
    bool accept_incomplete = false;
    analysis::RunChoice run;
  };
  auto args = std::make_shared<Args>();
  CLI::App* verb = app.add_subcommand("check", "Gate CI on the findings of traces");
  verb->footer(
      "Exit codes: 0 no finding fails the gate; 1 a finding fails it; 2 usage error, unreadable "
      "input, or an incomplete recording (torch plugin not loaded, Python hooks not installed, "
      "truncated or damaged trace, lost records) unless --accept-incomplete.");
  verb->add_option("inputs", args->inputs, "report.json, trace files or folders")->required();
  verb->add_option("--fail-on", args->fail_on,
                   "comma-separated kinds that fail (default: residual_view, unwaited_collective, "
                   "use_before_wait, step_growth, expect_freed); 'all' or 'none'");
  verb->add_option("--max-bytes", args->max_bytes,
                   "failing findings of at most this many bytes only warn");
  verb->add_option("--suppressions", args->suppressions, "file of kind:frame-glob rules");
  verb->add_option("--baseline", args->baseline, "an earlier report: fail only on new findings");
  verb->add_option("--junit", args->junit, "write JUnit XML here");
  verb->add_option("--warmup-steps", args->warmup_steps, "when analyzing traces");
  add_run_options(verb, args->run);
  verb->add_flag("--accept-incomplete", args->accept_incomplete,
                 "gate an incomplete recording (torch plugin not loaded, truncated or damaged "
                 "trace, records lost) on its findings instead of exiting 2");
  verb->callback([args] {
    analysis::GateOptions gate;
    std::string error;
    if (!args->fail_on.empty() &&
        !analysis::parse_fail_kinds(args->fail_on, gate.fail_kinds, error))
      usage_error(error);
    gate.max_bytes = args->max_bytes;
    if (!args->suppressions.empty() &&
        !analysis::load_suppressions(args->suppressions, gate.suppressions, error))
      usage_error(error);
    if (!args->baseline.empty()) {
      nlohmann::json base;
      if (!analysis::load_report(args->baseline, base, error)) usage_error("baseline " + error);
      for (const auto& f : base["findings"]) gate.baseline.insert(analysis::finding_fingerprint(f));
      gate.has_baseline = true;
    }
    const nlohmann::json report = report_for(args->inputs, args->run, args->warmup_steps);
    // An incomplete recording fails before any finding is judged: one line.
    std::vector<std::string> incomplete;
    for (const auto& w : report.value("warnings", nlohmann::json::array()))
      if (w.is_string() && analysis::incomplete_kind_of(w.get<std::string>()) != nullptr)
        incomplete.push_back(w.get<std::string>());
    if (!incomplete.empty() && !args->accept_incomplete) {
      std::cerr << "memlife check: incomplete recording: " << incomplete.front();
      if (incomplete.size() > 1)
        std::cerr << " (and " << incomplete.size() - 1 << " more in the report's warnings)";
      std::cerr << "; --accept-incomplete gates it on its findings\n";
      throw ExitWith{2};
    }
    for (const std::string& w : incomplete)
      std::cerr << "memlife check: warning: incomplete recording accepted: " << w << "\n";
    const analysis::GateResult result = analysis::apply_gate(report, gate);
    const auto& findings = report["findings"];
    for (size_t i = 0; i < findings.size(); ++i) {
      const auto v = result.verdicts[i];
      std::cerr << analysis::terminal_safe(
                       std::string(analysis::verdict_name(v)) + ": " +
                       findings[i].value("kind", "") + " (rank " +
                       findings[i].value("rank", nlohmann::json(nullptr)).dump() +
                       "): " + findings[i].value("message", ""))
                << "\n";
    }
    if (!args->junit.empty()) {
      std::vector<std::string> inputs = args->inputs;
      for (const std::string* p : {&args->baseline, &args->suppressions})
        if (!p->empty()) inputs.push_back(*p);
      if (!output_is_not_an_input(args->junit, inputs, error) ||
          !write_output_file(args->junit, analysis::junit_xml(report, result), error))
        usage_error(error);
    }
    std::cerr << "memlife check: " << result.failures << " failing, " << result.warnings
              << " warning(s), " << findings.size() << " finding(s)\n";
    if (result.exit_code() != 0) throw ExitWith{result.exit_code()};
  });
}

}  // namespace memlife::tool
