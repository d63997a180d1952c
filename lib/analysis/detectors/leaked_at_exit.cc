// leaked_at_exit: allocations still live when the process closed its trace,
// grouped by allocation site. A truncated trace did not exit, so what was
// live at the cut is not reported as leaked.
// Framework-free memory too: raw device (or pinned host) segments from the
// CUDA APIs (CUPTI) that no alloc record ever fell inside and that were not
// freed, as compute-sanitizer --leak-check reports them
// (evidence.memory = "raw_device"). Segments that held allocator blocks are
// the torch caching allocator's cache, which it keeps until the process
// dies: not the program's leak (the process entry counts them instead).
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
    report_raw_segments(m, out);
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

 private:
  static void report_raw_segments(const Model& m, std::vector<Finding>& out) {
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

std::unique_ptr<Detector> make_leaked_at_exit_detector(const AnalysisOptions&) {
  return std::make_unique<LeakedAtExit>();
}

}  // namespace memlife::analysis
