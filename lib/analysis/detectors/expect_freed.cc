// expect_freed: the program declared (memlife.expect_freed) that a storage
// must die soon, and it was still alive at the next census, or at the end.
// Reports what still holds it.
#include <algorithm>

#include "analysis/detector.h"

namespace memlife::analysis {
namespace {

struct Expectation {
  uint64_t storage_id = 0, address = 0, label = 0, stack_id = 0, bytes = 0, alloc_stack = 0;
  uint64_t alloc_seq = 0;
  When at;
};

struct Violation {
  Expectation e;
  When seen;
  uint64_t use_count = 0;
  std::vector<format::CensusHolder> holders;
  bool at_end = false;
};

class ExpectFreed final : public Detector {
 public:
  void on_mark(const Model& m, const format::MarkRecord& r, const When& at) override {
    if (r.kind != MarkKind::kExpectFreed) return;
    Expectation e{r.storage_id, r.address, r.label_string, r.stack_id, 0, 0, 0, at};
    if (e.storage_id == 0 && e.address != 0) {
      auto it = m.storage_at.find(e.address);
      if (it != m.storage_at.end()) e.storage_id = it->second;
    }
    if (const Storage* s = m.storage(e.storage_id)) {
      if (e.address == 0) e.address = s->data_address;
      e.bytes = s->bytes;
      e.alloc_stack = s->alloc.stack_id;
      e.alloc_seq = s->alloc.at.seq;
    } else if (auto a = m.allocations.find(e.address); a != m.allocations.end()) {
      e.bytes = a->second.bytes;
      e.alloc_stack = a->second.stack_id;
      e.alloc_seq = a->second.at.seq;
    } else {
      return;  // already gone
    }
    pending_.push_back(e);
  }

  void on_free(const Model&, const Allocation& a, const Storage* s, const When&) override {
    std::erase_if(pending_, [&](const Expectation& e) {
      return e.address == a.address || (s && e.storage_id == s->id);
    });
  }

  void on_census(const Model& m, const Census& c) override {
    std::erase_if(pending_, [&](const Expectation& e) {
      if (e.at.seq >= c.begin.seq) return false;
      for (const auto& entry : c.storages) {
        const bool same = (e.storage_id && entry.storage_id == e.storage_id) ||
                          (e.address && entry.data_address == e.address);
        if (!same || entry.storage_bytes == 0) continue;
        violations_.push_back({e, c.begin, entry.use_count, entry.holders, false});
        return true;
      }
      // Not listed: no tracked tensor holds it; still alive if its memory is.
      if (m.allocations.count(e.address)) {
        violations_.push_back({e, c.begin, 0, {}, false});
        return true;
      }
      return false;
    });
  }

  void finish(const Model& m, bool, StackResolver& stacks, std::vector<Finding>& out) override {
    for (const Expectation& e : pending_)
      if (m.allocations.count(e.address))
        violations_.push_back({e, When{0, m.last_time_ns, m.current_step}, 0, {}, true});
    for (const Violation& v : violations_) {
      Finding f;
      f.kind = kExpectFreed;
      f.severity = default_severity(f.kind);
      f.bytes = v.e.bytes;
      f.retains.push_back({v.e.alloc_seq, v.e.bytes});
      f.retained_ns = v.seen.time_ns - std::min(v.seen.time_ns, v.e.at.time_ns);
      nlohmann::json tensors = nlohmann::json::array();
      std::string holder_line;
      for (const auto& h : v.holders) {
        nlohmann::json t = {{"tensor_id", h.tensor_id}, {"reachable_bytes", h.reachable_bytes}};
        if (const Tensor* tt = m.tensor(h.tensor_id)) {
          t["op"] = std::string(m.str(tt->op_string));
          t["stack"] = stacks.frames(tt->stack_id);
          if (holder_line.empty()) holder_line = stacks.user_line(tt->stack_id);
        }
        tensors.push_back(std::move(t));
      }
      const std::string label(m.str(v.e.label));
      f.evidence["storage"] = {{"storage_id", v.e.storage_id},
                               {"address", v.e.address},
                               {"bytes", v.e.bytes},
                               {"use_count", v.use_count}};
      f.evidence["label"] = label;
      f.evidence["tensors"] = tensors;
      f.evidence["steps"] = {v.e.at.step, v.seen.step};
      f.evidence["stacks"] =
          nlohmann::json::array({stacks.frames(v.e.stack_id), stacks.frames(v.e.alloc_stack)});
      f.evidence["stack_roles"] = {"expect_freed", "allocation"};
      const std::string line = stacks.user_line(v.e.stack_id);
      f.message =
          "storage of " + format_bytes(v.e.bytes) + (label.empty() ? "" : " ('" + label + "')") +
          " expected freed" + (line.empty() ? "" : " at " + line) + " was still alive " +
          (v.at_end ? "at the end of the trace" : "at the next census") +
          (v.holders.empty() ? ""
                             : ", held by " + std::to_string(v.holders.size()) + " tensor(s)" +
                                   (holder_line.empty() ? "" : " (made at " + holder_line + ")"));
      out.push_back(std::move(f));
    }
  }

 private:
  std::vector<Expectation> pending_;
  std::vector<Violation> violations_;
};

}  // namespace

std::unique_ptr<Detector> make_expect_freed_detector(const AnalysisOptions&) {
  return std::make_unique<ExpectFreed>();
}

}  // namespace memlife::analysis
