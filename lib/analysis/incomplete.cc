#include "analysis/incomplete.h"

#include <algorithm>
#include <map>
#include <set>

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
       "a chunk or record failed its CRC or did not decode: what it held is missing (the reader "
       "skips to the next good chunk, or stops there in traces before format 3)"},
      {"records_lost", "the recorder dropped records (its buffers were full)"},
      {"process_failed",
       "the process exited with a non-zero status (an uncaught Python exception, or an _exit "
       "status): it stopped early, so what it never did is not judged (a collective its peers "
       "issued after it stopped is no mismatch)"},
      {"missing_trace",
       "a run's ranks say how many there are (world size) but some left no trace: a spawned "
       "process ran without memlife's recorder (environment not passed on) or its trace was "
       "not copied"},
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
    if (p.exit_status != 0)
      out.push_back("process_failed: exited with status " + std::to_string(p.exit_status) +
                    where(p));
    if (p.records_lost > 0)
      out.push_back("records_lost: " + std::to_string(p.records_lost) + " records lost" + where(p));
  }
  // Ranks missing from a run whose ranks know the world size. Not for a
  // memlife.record() block: it is one process's (each rank records and
  // judges its own blocks, in its own run), so the other ranks' traces are
  // not the block's to miss.
  std::map<std::string, std::pair<int64_t, std::set<int64_t>>> runs;  // run id -> size, ranks
  for (const ProcessAnalysis& p : processes) {
    if (!p.error.empty() || p.rank < 0 || p.block != 0) continue;
    auto& [world_size, ranks] = runs[p.header.run_id];
    world_size = std::max(world_size, p.world_size);
    ranks.insert(p.rank);
  }
  for (const auto& [run_id, run] : runs) {
    const auto& [world_size, ranks] = run;
    std::string missing;
    int64_t count = 0;
    for (int64_t r = 0; r < world_size; ++r)
      if (!ranks.count(r)) {
        if (count++ < 8) missing += (missing.empty() ? "" : ",") + std::to_string(r);
      }
    if (count == 0) continue;
    out.push_back("missing_trace: no trace of rank" + std::string(count > 1 ? "s " : " ") +
                  missing + (count > 8 ? ",..." : "") + " of " + std::to_string(world_size) +
                  (run_id.empty() ? std::string() : " (run " + run_id + ")"));
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
