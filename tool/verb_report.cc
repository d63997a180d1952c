// memlife report: one self-contained HTML page of a run. Given traces (or
// their folder) it runs the analysis itself; given a report.json it reads
// the traces the report names, or the ones beside it.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/redact.h"
#include "analysis/report.h"
#include "output_file.h"
#include "verbs.h"
#include "views/html_report.h"
#include "views/trace_timeline.h"

namespace memlife::tool {

namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string report;
  std::string title;
  bool keep_secrets = false;
  analysis::RunChoice run;
};

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "memlife report: " << message << "\n";
  throw ExitWith{2};
}

bool is_json_file(const std::string& path) {
  return fs::path(path).extension() == ".json" && fs::is_regular_file(path);
}

nlohmann::json read_report(const std::string& path) {
  nlohmann::json report;
  std::string error;
  if (!analysis::load_report(path, report, error)) fail(error);
  return report;
}

// The traces a report names: each process's path as written, else the file
// of that name beside the report, else every trace beside the report.
std::vector<std::string> traces_of_report(const nlohmann::json& report, const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  std::vector<std::string> found;
  for (const nlohmann::json& p : report["processes"]) {
    if (!p.is_object() || !p.contains("path") || !p["path"].is_string()) continue;
    const fs::path named = p["path"].get<std::string>();
    std::error_code ec;
    if (fs::is_regular_file(named, ec)) {
      found.push_back(named.string());
    } else if (fs::is_regular_file(dir / named.filename(), ec)) {
      found.push_back((dir / named.filename()).string());
    }
  }
  if (found.empty()) {
    std::string error;
    analysis::TraceSelection beside;
    if (analysis::select_traces({dir.empty() ? std::string(".") : dir.string()}, {}, beside, error))
      found = beside.paths;
  }
  return found;
}

void run_report(const ReportArgs& args) {
  nlohmann::json report;
  std::vector<std::string> traces;
  std::string error;
  std::vector<std::string> all_inputs = args.inputs;
  if (!args.report.empty()) all_inputs.push_back(args.report);
  if (!output_is_not_an_input(args.output, all_inputs, error)) fail(error);
  if (args.inputs.size() == 1 && is_json_file(args.inputs.front())) {
    report = read_report(args.inputs.front());
    traces = traces_of_report(report, args.inputs.front());
    if (traces.empty())
      std::cerr << "memlife report: no trace found for " << args.inputs.front()
                << "; the page has findings but no timeline\n";
  } else {
    analysis::TraceSelection selection;
    if (!analysis::select_traces(args.inputs, args.run, selection, error)) fail(error);
    traces = selection.paths;
    if (!args.report.empty()) {
      report = read_report(args.report);
    } else if (!analysis::analyze_run(selection, analysis::RunOptions{}, report, error)) {
      fail(error);
    }
  }

  std::vector<views::TraceTimeline> timelines;
  std::string first_error;
  for (const std::string& path : traces) {
    views::TraceTimeline t;
    if (!views::load_timeline(path, views::TimelineOptions{}, t, error)) {
      if (first_error.empty()) first_error = error;
      continue;
    }
    timelines.push_back(std::move(t));
  }
  if (timelines.empty() && !first_error.empty()) fail(first_error);
  if (!first_error.empty())
    std::cerr << "memlife report: " << first_error << "; that trace is left out\n";
  views::HtmlOptions options;
  if (!args.title.empty()) options.title = args.title;
  if (!output_is_not_an_input(args.output, traces, error)) fail(error);
  if (!args.keep_secrets) {
    analysis::redact_secrets(report);
    for (views::TraceTimeline& t : timelines)
      t.header.command_line = analysis::redact_command_line(t.header.command_line);
  }
  const std::string page = views::html_report(timelines, report, options);
  if (!write_output_file(args.output, page, error)) fail(error);
  std::cerr << "memlife report: wrote " << args.output << " (" << timelines.size()
            << " process(es), " << report.value("findings", nlohmann::json::array()).size()
            << " finding(s))\n";
}

}  // namespace

void register_report_verb(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* verb =
      app.add_subcommand("report", "Write a self-contained HTML report of traces or a report.json");
  verb->add_option("inputs", args->inputs, "trace files, folders of *.mltrace, or one report.json")
      ->required();
  verb->add_option("-o,--output", args->output, "HTML file to write")->required();
  verb->add_option("--report", args->report,
                   "with traces: use this analysis report instead of analyzing again");
  verb->add_option("--title", args->title, "page title");
  add_run_options(verb, args->run);
  verb->add_flag("--keep-secrets", args->keep_secrets,
                 "keep argument values that look like secrets (--password=..., *_TOKEN=...) in "
                 "the page; by default they are shown as ***");
  verb->callback([args] { run_report(*args); });
}

}  // namespace memlife::tool
