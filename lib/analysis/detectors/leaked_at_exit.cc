// leaked_at_exit, as LeakSanitizer means it: memory nothing can reach any
// more. Framework-free memory: raw device (or pinned host) segments from the
// CUDA APIs (CUPTI) that no alloc record ever fell inside and that were not
// freed, as compute-sanitizer --leak-check reports them
// (evidence.memory = "raw_device"). Segments that held allocator blocks are
// the torch caching allocator's cache, which it keeps until the process
// dies: not the program's leak (the process entry counts them instead).
// Tensor memory still allocated at exit is "still reachable", not a
// finding: CPython does not free module globals at exit, and memory a C++
// registry keeps for an unwaited collective is that collective's finding.
// The process summary counts it by site (still_reachable_summary). Except
// tensor memory that the exit walk, after a gc.collect(), found kept only
// by a reference cycle the collector could not free (a cycle through C++,
// HolderPath::in_uncollectable_cycle): nothing can reach or free it any
// more (evidence.memory = "uncollectable_cycle"), one finding per cycle.
// A truncated trace did not exit: nothing is reported for it.
#include <algorithm>
#include <map>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {
namespace {

class LeakedAtExit final : public Detector {
 public:
  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    if (truncated) return;
    report_raw_segments(m, out);
    if (m.block == 0) report_uncollectable_cycles(m, stacks, out);
  }

 private:
  static void report_uncollectable_cycles(const Model& m, StackResolver& stacks,
                                          std::vector<Finding>& out) {
    std::map<std::string, std::vector<const Allocation*>> by_cycle;
    for (const auto& [address, a] : m.allocations) {
      auto holder = m.holder_of_alloc.find(a.at.seq);
      if (holder == m.holder_of_alloc.end() || m.holder_gone(holder->second) ||
          !holder->second.in_uncollectable_cycle())
        continue;
      by_cycle[container_of(holder->second.path)].push_back(&a);
    }
    for (auto& [cycle, allocations] : by_cycle) {
      Finding f;
      f.kind = kLeakedAtExit;
      f.severity = default_severity(f.kind);
      f.evidence["memory"] = "uncollectable_cycle";
      const HeldSites held = describe_held_allocations(m, stacks, std::move(allocations), f);
      // name_holders adds the cycle ("held by a reference cycle that ...").
      f.message =
          std::to_string(f.count) + " allocation(s), " + format_bytes(f.bytes) +
          (held.lead_line.empty() ? "" : " made at " + held.lead_line) +
          (held.other_sites ? " and " + std::to_string(held.other_sites) + " other site(s)" : "") +
          ", unreachable at exit";
      out.push_back(std::move(f));
    }
  }

  static void report_raw_segments(const Model& m, std::vector<Finding>& out) {
    // Under a framework (torch loaded, or its allocator seen), raw CUDA memory is mostly the
    // libraries' own (cuBLAS and NCCL workspaces, torch's pinned host blocks), kept until the
    // process dies, and CUPTI names no caller that would tell a program's own cudaMalloc apart: not
    // judged (counted in the process entry as raw_device_segments_at_exit).
    if (m.device_allocator_seen || !m.torch_version.empty()) return;
    // One finding per device: CUPTI gives segments no stack.
    std::map<int64_t, std::vector<const Segment*>> by_device;
    for (const auto& [address, s] : m.segments)
      if (!s.holds_allocations) by_device[s.device].push_back(&s);
    for (const auto& [device, segs] : by_device) {
      Finding f;
      f.kind = kLeakedAtExit;
      f.severity = default_severity(f.kind);
      f.count = segs.size();
      uint64_t oldest = ~uint64_t{0};
      nlohmann::json list = nlohmann::json::array();
      for (const Segment* s : segs) {
        f.bytes += s->bytes;
        oldest = std::min(oldest, s->at.time_ns);
        if (list.size() < 64) list.push_back({{"address", s->address}, {"bytes", s->bytes}});
      }
      f.retained_ns = m.last_time_ns - std::min(m.last_time_ns, oldest);
      f.evidence["memory"] = "raw_device";
      f.evidence["device"] = device;
      f.evidence["allocations"] = std::move(list);
      f.evidence["stacks"] = nlohmann::json::array();
      f.evidence["steps"] = nlohmann::json::array();
      const std::string where = device < 0 ? "pinned host" : "device " + std::to_string(device);
      f.message = std::to_string(f.count) + " raw CUDA allocation(s) on " + where + ", " +
                  format_bytes(f.bytes) +
                  ", never freed by exit (cudaMalloc-level, outside any framework allocator)";
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

nlohmann::json still_reachable_summary(const Model& m, StackResolver& stacks) {
  struct Site {
    uint64_t bytes = 0, count = 0;
  };
  // By the line shown: stacks that differ below the program's line (a
  // different caller of the same model code) are one site to the reader.
  std::map<uint64_t, std::string> line_of_stack;
  std::map<std::string, Site> sites;
  uint64_t bytes = 0;
  for (const auto& [address, a] : m.allocations) {
    std::string line;
    if (a.stack_id != 0) {
      auto [known, fresh] = line_of_stack.try_emplace(a.stack_id);
      if (fresh) known->second = stacks.user_line(a.stack_id);
      line = known->second;
    }
    // Without a stack (an autograd engine thread runs no Python), the op
    // that allocated is the site.
    if (line.empty() && a.op_string != 0)
      line = "inside " + std::string(m.str(a.op_string)) + " (no Python stack)";
    Site& s = sites[line];
    s.bytes += a.bytes;
    ++s.count;
    bytes += a.bytes;
  }
  std::vector<std::pair<const std::string*, const Site*>> top;
  top.reserve(sites.size());
  for (const auto& [line, s] : sites) top.emplace_back(&line, &s);
  std::sort(top.begin(), top.end(),
            [](const auto& a, const auto& b) { return a.second->bytes > b.second->bytes; });
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < top.size() && i < 8; ++i) {
    const std::string& line = *top[i].first;
    list.push_back({{"bytes", top[i].second->bytes},
                    {"allocations", top[i].second->count},
                    {"site", line.empty() ? nullptr : nlohmann::json(line)}});
  }
  return {{"bytes", bytes}, {"allocations", m.allocations.size()}, {"top_sites", list}};
}

std::unique_ptr<Detector> make_leaked_at_exit_detector(const AnalysisOptions&) {
  return std::make_unique<LeakedAtExit>();
}

}  // namespace memlife::analysis
