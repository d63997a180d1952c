// memlife export: traces to the ecosystem's viewers. torch-snapshot writes
// the pickle of torch.cuda.memory._dump_snapshot for pytorch.org/memory_viz
// (one per process); perfetto writes Chrome trace-event JSON for
// ui.perfetto.dev (all processes in one file).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/report.h"
#include "output_file.h"
#include "verbs.h"
#include "views/perfetto.h"
#include "views/torch_snapshot.h"
#include "views/trace_timeline.h"

namespace memlife::tool {

namespace {

struct ExportArgs {
  std::vector<std::string> inputs;
  std::string format;
  std::string output;
  std::string report;
  bool no_cpu = false;
  size_t max_entries = 0;
  analysis::RunChoice run;
};

[[noreturn]] void fail(const std::string& message) {
  std::cerr << "memlife export: " << message << "\n";
  throw ExitWith{2};
}

void write_file(const std::string& path, const std::string& bytes,
                const std::vector<std::string>& inputs) {
  std::string error;
  if (!output_is_not_an_input(path, inputs, error)) fail(error);
  if (!write_output_file(path, bytes, error)) fail(error);
}

// FILE for one process; FILE with ".pid<PID>" before its extension when
// there are several.
std::string snapshot_path(const std::string& output, uint64_t pid, bool several) {
  if (!several) return output;
  std::filesystem::path p(output);
  const std::string stem = p.stem().string() + ".pid" + std::to_string(pid);
  return (p.parent_path() / (stem + p.extension().string())).string();
}

std::vector<views::TraceTimeline> load_all(const std::vector<std::string>& paths,
                                           const views::TimelineOptions& options) {
  std::vector<views::TraceTimeline> timelines(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    std::string error;
    if (!views::load_timeline(paths[i], options, timelines[i], error)) fail(error);
    if (timelines[i].truncated)
      std::cerr << "memlife export: " << paths[i] << ": truncated (" << timelines[i].stop_reason
                << "); exporting what was recorded\n";
  }
  return timelines;
}

void run_export(const ExportArgs& args) {
  analysis::TraceSelection selection;
  std::string error;
  if (!analysis::select_traces(args.inputs, args.run, selection, error)) fail(error);
  const std::vector<std::string>& paths = selection.paths;
  std::vector<std::string> inputs = args.inputs;
  inputs.insert(inputs.end(), paths.begin(), paths.end());
  if (!args.report.empty()) inputs.push_back(args.report);
  if (!output_is_not_an_input(args.output, inputs, error)) fail(error);

  if (args.format == "torch-snapshot") {
    views::TimelineOptions options;
    options.keep_events = true;
    views::SnapshotOptions snapshot;
    snapshot.include_cpu = !args.no_cpu;
    snapshot.max_events_per_device = args.max_entries;
    const bool several = paths.size() > 1;
    for (const std::string& path : paths) {
      const auto timelines = load_all({path}, options);
      const views::TraceTimeline& t = timelines.front();
      views::SnapshotSummary summary;
      const std::string bytes = views::torch_snapshot_pickle(t, snapshot, &summary);
      const std::string out = snapshot_path(args.output, t.header.pid, several);
      write_file(out, bytes, inputs);
      std::cerr << "memlife export: wrote " << out << " (" << summary.segments << " segments, "
                << summary.blocks << " blocks, " << summary.events << " events"
                << (summary.cpu_index >= 0 ? ", CPU as device " + std::to_string(summary.cpu_index)
                                           : std::string())
                << ")\n";
    }
    return;
  }

  // The findings: --report's, else the same analysis every verb runs.
  nlohmann::json report;
  if (!args.report.empty()) {
    if (!analysis::load_report(args.report, report, error)) fail(error);
  } else if (!analysis::analyze_run(selection, analysis::RunOptions{}, report, error)) {
    fail(error);
  }
  const auto timelines = load_all(paths, views::TimelineOptions{});
  const nlohmann::json trace = views::perfetto_trace(timelines, report, views::PerfettoOptions{});
  write_file(args.output, views::dump_json(trace), inputs);
  std::cerr << "memlife export: wrote " << args.output << " (" << trace["traceEvents"].size()
            << " events from " << timelines.size() << " process(es))\n";
}

}  // namespace

void register_export_verb(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* verb = app.add_subcommand(
      "export", "Export traces for PyTorch's memory viewer (torch-snapshot) or Perfetto");
  verb->add_option("inputs", args->inputs, "trace files or folders of *.mltrace")->required();
  verb->add_option("--format", args->format, "torch-snapshot or perfetto")
      ->required()
      ->check(CLI::IsMember({"torch-snapshot", "perfetto"}));
  verb->add_option("-o,--output", args->output,
                   "output file (torch-snapshot with several processes: FILE.pid<PID>.ext each)")
      ->required();
  verb->add_option("--report", args->report,
                   "perfetto: analysis report whose findings become instant events (default: "
                   "the findings of analyzing the traces)");
  add_run_options(verb, args->run);
  verb->add_flag("--no-cpu", args->no_cpu, "torch-snapshot: leave CPU storages out");
  verb->add_option("--max-entries", args->max_entries,
                   "torch-snapshot: keep the last N events per device (0: all)");
  verb->callback([args] { run_export(*args); });
}

}  // namespace memlife::tool
