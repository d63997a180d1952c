// leaked_by_block: memory a `memlife.record()` block allocated and still
// holds when the block ends, as pytest-memray's limit_leaks counts a
// test's leaks. Only with `--block N`: the replay stops at the block's end
// mark, which the Python side writes after a garbage collection and a
// holder walk, so what is still allocated there is held by something the
// block left behind (a global list, a cache, a hook, a view), and the
// holder walk names it. One finding per allocation site; memory another
// finding explains (a residual view, an unwaited collective) goes to that
// finding instead (attribution). Memory an import made (a module-level
// constant of a library the block imported first, torchmetrics'
// `_EPS_SMOOTHING = tensor(1e-16)`) is the module's state for the rest of
// the process, as any later import would find it: not the block's leak.
#include <algorithm>
#include <map>

#include "analysis/detector.h"

namespace memlife::analysis {
namespace {

// Whether the allocation ran inside an import: CPython's import machinery
// is on its Python stack.
bool made_by_an_import(const Model& m, uint64_t stack_id) {
  const format::Stack* stack = m.tables.stack(stack_id);
  if (stack == nullptr) return false;
  for (uint64_t id : stack->python_frames)
    if (const format::PythonFrame* frame = m.tables.frame(id))
      if (m.str(frame->file_string).rfind("<frozen importlib", 0) == 0) return true;
  return false;
}

class LeakedByBlock final : public Detector {
 public:
  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    if (m.block == 0 || truncated || !m.block_ended) return;
    struct Site {
      std::vector<const Allocation*> allocations;
      uint64_t bytes = 0;
    };
    std::map<std::string, Site> sites;
    for (const auto& [address, a] : m.allocations) {
      if (a.at.seq <= m.block_begin.seq || made_by_an_import(m, a.stack_id)) continue;
      Site& s = sites[stacks.key(a.stack_id)];
      s.allocations.push_back(&a);
      s.bytes += a.bytes;
    }
    for (auto& [key, s] : sites) {
      std::sort(s.allocations.begin(), s.allocations.end(),
                [](const Allocation* x, const Allocation* y) { return x->at.seq < y->at.seq; });
      const Allocation& first = *s.allocations.front();
      Finding f;
      f.kind = kLeakedByBlock;
      f.severity = default_severity(f.kind);
      f.bytes = s.bytes;
      f.count = s.allocations.size();
      f.retained_ns = m.last_time_ns - std::min(m.last_time_ns, first.at.time_ns);
      nlohmann::json list = nlohmann::json::array();
      for (const Allocation* a : s.allocations) {
        f.retains.push_back({a->at.seq, a->bytes});
        if (list.size() < 64)
          list.push_back({{"address", a->address},
                          {"bytes", a->bytes},
                          {"device", a->device},
                          {"storage_id", a->storage_id}});
      }
      f.evidence["block"] = m.block;
      f.evidence["allocations"] = std::move(list);
      f.evidence["stacks"] = nlohmann::json::array({stacks.frames(first.stack_id)});
      f.evidence["stack_roles"] = {"allocation"};
      f.evidence["steps"] = nlohmann::json::array({first.at.step});
      const std::string line = stacks.user_line(first.stack_id);
      f.message = std::to_string(f.count) + " allocation(s), " + format_bytes(f.bytes) +
                  ", made inside memlife.record() block " + std::to_string(m.block) +
                  (line.empty() ? "" : " at " + line) + ", still allocated at its end";
      out.push_back(std::move(f));
    }
  }
};

}  // namespace

std::unique_ptr<Detector> make_leaked_by_block_detector(const AnalysisOptions&) {
  return std::make_unique<LeakedByBlock>();
}

}  // namespace memlife::analysis
