// leaked_at_exit: allocations still live when the process closed its trace,
// grouped by allocation site. A truncated trace did not exit, so what was
// live at the cut is not reported as leaked.
#include <algorithm>
#include <map>

#include "analysis/detector.h"

namespace memlife::analysis {
namespace {

class LeakedAtExit final : public Detector {
 public:
  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    if (truncated) return;
    struct Group {
      uint64_t bytes = 0, count = 0, stack_id = 0, oldest = ~uint64_t{0};
      std::vector<uint64_t> devices;
    };
    std::map<std::string, Group> groups;
    for (const auto& [address, a] : m.allocations) {
      Group& g = groups[stacks.key(a.stack_id)];
      g.bytes += a.bytes;
      ++g.count;
      if (a.at.time_ns < g.oldest) {
        g.oldest = a.at.time_ns;
        g.stack_id = a.stack_id;
      }
      if (std::find(g.devices.begin(), g.devices.end(), a.device) == g.devices.end())
        g.devices.push_back(static_cast<uint64_t>(a.device));
    }
    for (auto& [key, g] : groups) {
      Finding f;
      f.kind = kLeakedAtExit;
      f.severity = default_severity(f.kind);
      f.bytes = g.bytes;
      f.count = g.count;
      f.retained_ns = m.last_time_ns - std::min(m.last_time_ns, g.oldest);
      f.evidence["stacks"] = nlohmann::json::array({stacks.frames(g.stack_id)});
      f.evidence["stack_roles"] = {"allocation"};
      f.evidence["steps"] = nlohmann::json::array();
      const std::string line = stacks.user_line(g.stack_id);
      f.message = std::to_string(g.count) + " allocation(s), " + format_bytes(g.bytes) +
                  ", still live at exit; allocated at " +
                  (line.empty() ? std::string("an unknown site") : line);
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Detector> make_leaked_at_exit_detector(const AnalysisOptions&) {
  return std::make_unique<LeakedAtExit>();
}

}  // namespace memlife::analysis
