#include "analysis/incomplete.h"

#include "analysis/analyze.h"

namespace memlife::analysis {

const std::vector<IncompleteKind>& incomplete_kinds() {
  static const std::vector<IncompleteKind> kinds = {
      {"torch_plugin_not_loaded",
       "the process ran torch without memlife's torch plugin (none configured, built for another "
       "torch, or it failed to load): no tensors, views, ops or collectives were recorded"},
      {"python_hooks_not_installed",
       "a Python torch process ran without memlife's Python hooks (python/memlife not on its "
       "PYTHONPATH): Work.wait is not seen, so waited collectives look unwaited, and a spawned "
       "rank has no rank"},
      {"truncated_trace",
       "the trace has no end record: the process was killed or is still running"},
      {"damaged_trace",
       "reading stopped at a chunk or record that fails its CRC or does not decode"},
      {"records_lost", "the recorder dropped records (its buffers were full)"},
  };
  return kinds;
}

namespace {

std::string where(const ProcessAnalysis& p) {
  return " (pid " + std::to_string(p.header.pid) +
         (p.rank >= 0 ? ", rank " + std::to_string(p.rank) : std::string()) + ", " + p.path + ")";
}

}  // namespace

std::vector<std::string> incomplete_warnings(const std::vector<ProcessAnalysis>& processes) {
  std::vector<std::string> out;
  for (const ProcessAnalysis& p : processes) {
    if (!p.error.empty()) continue;
    if (p.plugin_note.rfind("torch plugin not loaded", 0) == 0)
      out.push_back("torch_plugin_not_loaded: " + p.plugin_note + where(p));
    // A file cut inside its last chunk reads as "truncated chunk ...": cut
    // short, not damaged.
    const bool cut_short = p.stop_reason.rfind("truncated chunk", 0) == 0;
    if (p.plugin_note.rfind("torch plugin loaded", 0) == 0 && p.saw_python && !p.python_hooks)
      out.push_back(
          "python_hooks_not_installed: no record that memlife's Python hooks (Work.wait, "
          "init_process_group) were installed; is memlife's python/ folder on PYTHONPATH?" +
          where(p));
    if (p.damaged && !cut_short)
      out.push_back("damaged_trace: " + p.stop_reason + where(p));
    else if (p.truncated || p.damaged)
      out.push_back("truncated_trace: " + p.stop_reason + where(p));
    if (p.records_lost > 0)
      out.push_back("records_lost: " + std::to_string(p.records_lost) + " records lost" + where(p));
  }
  return out;
}

const char* incomplete_kind_of(const std::string& warning) {
  for (const IncompleteKind& k : incomplete_kinds()) {
    const std::string prefix = std::string(k.name) + ": ";
    if (warning.rfind(prefix, 0) == 0) return k.name;
  }
  return nullptr;
}

}  // namespace memlife::analysis
