// unexplained_holder: at a census a storage has more strong references
// (use_count) than the live tensors memlife knows hold it, so something it
// cannot see holds it too: an autograd graph's saved variables, a Python
// storage object (`untyped_storage()`, a state_dict), a C++ registry, a
// collective's Work. Most of these are how torch works, not bugs, so this is
// evidence only: it is added to the finding that retains the same storage
// (residual view, unwaited collective, growth, leak at exit) and never
// reported on its own.
#include <algorithm>
#include <map>

#include "analysis/detector.h"

namespace memlife::analysis {
namespace {

struct Gap {
  uint64_t storage_id = 0, stack_id = 0, bytes = 0, use_count = 0, holders = 0;
  uint64_t first_step = 0, last_step = 0, censuses = 0, alloc_seq = 0;
  When first, last;
  std::vector<uint64_t> holder_ids;
};

class UnexplainedHolder final : public Detector {
 public:
  void on_census(const Model& m, const Census& c) override {
    for (const auto& e : c.storages) {
      if (e.storage_bytes == 0 || e.use_count <= e.holders.size()) continue;
      auto [it, fresh] = gaps_.try_emplace(e.storage_id);
      Gap& g = it->second;
      if (fresh) {
        g.storage_id = e.storage_id;
        const Storage* s = m.storage(e.storage_id);
        g.stack_id = s ? s->alloc.stack_id : 0;
        g.alloc_seq = s ? s->alloc.at.seq : 0;
        g.first = c.begin;
        g.first_step = c.step;
      }
      g.bytes = e.storage_bytes;
      g.use_count = e.use_count;
      g.holders = e.holders.size();
      g.holder_ids.clear();
      for (const auto& h : e.holders) g.holder_ids.push_back(h.tensor_id);
      g.last = c.end;
      g.last_step = c.step;
      ++g.censuses;
    }
  }

  void finish(const Model& m, bool, StackResolver& stacks, std::vector<Finding>& out) override {
    std::map<std::string, std::vector<const Gap*>> groups;
    for (const auto& [id, g] : gaps_) groups[stacks.key(g.stack_id)].push_back(&g);
    for (auto& [key, gs] : groups) {
      std::sort(gs.begin(), gs.end(),
                [](const Gap* a, const Gap* b) { return a->first.seq < b->first.seq; });
      const Gap& g = *gs.front();
      Finding f;
      f.kind = kUnexplainedHolder;
      f.severity = default_severity(f.kind);
      f.count = gs.size();
      uint64_t max_gap = 0;
      nlohmann::json storages = nlohmann::json::array();
      f.evidence_only = true;
      f.severity = "info";
      for (const Gap* x : gs) {
        f.bytes += x->bytes;
        if (x->alloc_seq) f.retains.push_back({x->alloc_seq, x->bytes});
        f.retained_ns =
            std::max(f.retained_ns, x->last.time_ns - std::min(x->last.time_ns, x->first.time_ns));
        max_gap = std::max(max_gap, x->use_count - x->holders);
        if (storages.size() < 16)
          storages.push_back({{"storage_id", x->storage_id},
                              {"bytes", x->bytes},
                              {"use_count", x->use_count},
                              {"known_holders", x->holders},
                              {"gap", x->use_count - x->holders},
                              {"censuses", x->censuses}});
      }
      nlohmann::json tensors = nlohmann::json::array();
      for (uint64_t t : g.holder_ids) tensors.push_back({{"tensor_id", t}});
      f.evidence["storage"] = storages.front();
      f.evidence["storages"] = storages;
      f.evidence["tensors"] = tensors;
      f.evidence["gap"] = max_gap;
      f.evidence["steps"] = {g.first_step, g.last_step};
      f.evidence["stacks"] = nlohmann::json::array({stacks.frames(g.stack_id)});
      f.evidence["stack_roles"] = {"allocation"};
      const std::string line = stacks.user_line(g.stack_id);
      f.message = std::to_string(f.count) + " storage(s) (" + format_bytes(f.bytes) +
                  ") held by up to " + std::to_string(max_gap) +
                  " reference(s) no live tracked tensor explains (checked: the tensors and views "
                  "memlife tracks; not checked: autograd saved tensors, Python storage objects, "
                  "C++ registries)" +
                  (line.empty() ? "" : "; allocated at " + line);
      out.push_back(std::move(f));
    }
  }

 private:
  std::map<uint64_t, Gap> gaps_;
};

}  // namespace

std::unique_ptr<Detector> make_unexplained_holder_detector(const AnalysisOptions&) {
  return std::make_unique<UnexplainedHolder>();
}

}  // namespace memlife::analysis
