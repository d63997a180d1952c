// residual_view: a storage outlives the tensor that owned it (the owner
// died or was rebound with `t.data = x`) because views or aliases still
// hold it. Reported when the owner was rebound (`t.data = ...`), whatever
// the views reach, or when the owner died and the views reach less than the
// storage: the rest is waste.
// Seen at a census (owner absent from the storage's holders), or at the
// storage's free when that came later than the owner's let-go.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {
namespace {

struct ViewInfo {
  uint64_t tensor_id = 0, op_string = 0, stack_id = 0, flags = 0, reachable = 0;
};

struct Episode {
  uint64_t storage_id = 0, bytes = 0, reachable = 0, address = 0;
  int64_t device = -1;
  uint64_t alloc_stack = 0, alloc_op = 0, alloc_seq = 0;
  uint64_t owner = 0;
  LetGo let_go = LetGo::kNone;
  When let_go_at, seen_at, end_at;
  uint64_t let_go_stack = 0;
  bool freed = false;
  std::vector<uint64_t> census_steps;
  std::vector<ViewInfo> views;
};

class ResidualView final : public Detector {
 public:
  void on_census(const Model& m, const Census& c) override {
    std::unordered_set<uint64_t> alive;
    for (const auto& e : c.storages)
      for (const auto& h : e.holders) alive.insert(h.tensor_id);
    for (const auto& e : c.storages) {
      if (e.storage_bytes == 0 || e.holders.empty()) continue;
      const Storage* s = m.storage(e.storage_id);
      if (!s || s->owner_tensor == 0) continue;
      const uint64_t owner = s->owner_tensor;
      bool owner_holds = false;
      for (const auto& h : e.holders) owner_holds |= h.tensor_id == owner;
      if (owner_holds) continue;
      std::vector<ByteRange> ranges;
      std::vector<ViewInfo> views;
      for (const auto& h : e.holders) {
        ViewInfo v{h.tensor_id, 0, 0, 0, h.reachable_bytes};
        ByteRange r{0, h.reachable_bytes};
        if (const Tensor* t = m.tensor(h.tensor_id)) {
          v.op_string = t->op_string;
          v.stack_id = t->stack_id;
          v.flags = t->flags;
          if (t->storage_id == e.storage_id) {
            r = reachable_range(t->geometry);
            if (h.reachable_bytes == 0) v.reachable = r.end - r.begin;
          }
        }
        ranges.push_back(r);
        views.push_back(v);
      }
      const uint64_t reach = std::min(union_bytes(ranges), e.storage_bytes);
      // An owner that was rebound (`t.data = ...`) was meant to release the
      // storage: report it even when the views reach all of it (seed 000 with
      // a shard size that needs no padding). An owner that simply died leaves
      // views that may be using every byte: only the unreachable rest is waste.
      const bool rebound =
          s->let_go == LetGo::kRebound || (s->let_go == LetGo::kNone && alive.count(owner) != 0);
      if (reach >= e.storage_bytes && !rebound) continue;
      auto [it, fresh] = episodes_.try_emplace(e.storage_id);
      Episode& ep = it->second;
      if (fresh) {
        ep.storage_id = e.storage_id;
        ep.owner = owner;
        ep.address = e.data_address;
        ep.device = e.device;
        ep.alloc_stack = s->alloc.stack_id;
        ep.alloc_op = s->alloc.op_string;
        ep.alloc_seq = s->alloc.at.seq;
        ep.seen_at = c.begin;
        if (s->let_go != LetGo::kNone) {
          ep.let_go = s->let_go;
          ep.let_go_at = s->let_go_at;
          ep.let_go_stack = s->let_go_stack;
        } else {
          ep.let_go = alive.count(owner) ? LetGo::kRebound : LetGo::kDied;
          ep.let_go_at = c.begin;
        }
      }
      ep.bytes = e.storage_bytes;
      ep.reachable = reach;
      ep.views = std::move(views);
      ep.end_at = c.end;
      ep.census_steps.push_back(c.step);
    }
  }

  void on_free(const Model& m, const Allocation& a, const Storage* s, const When& at) override {
    if (!s) return;
    auto it = episodes_.find(s->id);
    if (it != episodes_.end()) {
      it->second.freed = true;
      it->second.end_at = at;
      return;
    }
    // No census saw it, but the owner let go and something other than the
    // owner's release freed it later: its views held it meanwhile.
    if (s->let_go != LetGo::kRebound || m.ops_begun <= s->ops_at_let_go) return;
    std::vector<ByteRange> ranges;
    std::vector<ViewInfo> views;
    for (uint64_t tid : s->tensors) {
      if (tid == s->owner_tensor) continue;
      const Tensor* t = m.tensor(tid);
      if (!t || t->storage_id != s->id) continue;
      const ByteRange r = reachable_range(t->geometry);
      ranges.push_back(r);
      views.push_back({tid, t->op_string, t->stack_id, t->flags, r.end - r.begin});
    }
    if (views.empty()) return;
    // Rebound owner (checked above): reported whatever the views reach.
    const uint64_t reach = std::min(union_bytes(ranges), a.bytes);
    Episode& ep = episodes_[s->id];
    ep.storage_id = s->id;
    ep.bytes = a.bytes;
    ep.reachable = reach;
    ep.address = a.address;
    ep.device = a.device;
    ep.alloc_stack = a.stack_id;
    ep.alloc_op = a.op_string;
    ep.alloc_seq = a.at.seq;
    ep.owner = s->owner_tensor;
    ep.let_go = s->let_go;
    ep.let_go_at = s->let_go_at;
    ep.let_go_stack = s->let_go_stack;
    ep.seen_at = at;
    ep.end_at = at;
    ep.freed = true;
    ep.views = std::move(views);
  }

  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    // One finding per pattern: the same views made at the same lines and
    // released at the same line, however many storages it hit.
    std::map<std::string, std::vector<const Episode*>> groups;
    for (auto& [id, ep] : episodes_) {
      if (!ep.freed) ep.end_at = When{~uint64_t{0} >> 1, m.last_time_ns, m.current_step};
      std::string key = stacks.key(ep.let_go_stack);
      for (const ViewInfo& v : ep.views) key += "|" + stacks.key(v.stack_id);
      groups[key].push_back(&ep);
    }
    for (auto& [key, eps] : groups) {
      std::sort(eps.begin(), eps.end(),
                [](const Episode* a, const Episode* b) { return a->seen_at.seq < b->seen_at.seq; });
      const Episode& first = *eps.front();
      Finding f;
      f.kind = kResidualView;
      f.severity = default_severity(f.kind);
      f.count = eps.size();
      uint64_t reach = 0, steps = 0;
      nlohmann::json storages = nlohmann::json::array();
      std::vector<uint64_t> census_steps;
      for (const Episode* ep : eps) {
        f.bytes += ep->bytes;
        f.retains.push_back({ep->alloc_seq, ep->bytes});
        reach += ep->reachable;
        const uint64_t held = ep->end_at.time_ns > ep->let_go_at.time_ns
                                  ? ep->end_at.time_ns - ep->let_go_at.time_ns
                                  : 0;
        f.retained_ns = std::max(f.retained_ns, held);
        steps = std::max(steps, steps_between(m, ep->let_go_at, ep->end_at));
        census_steps.insert(census_steps.end(), ep->census_steps.begin(), ep->census_steps.end());
        if (storages.size() < 16)
          storages.push_back({{"storage_id", ep->storage_id},
                              {"bytes", ep->bytes},
                              {"reachable_bytes", ep->reachable},
                              {"address", ep->address},
                              {"device", ep->device},
                              {"freed", ep->freed}});
      }
      std::sort(census_steps.begin(), census_steps.end());
      census_steps.erase(std::unique(census_steps.begin(), census_steps.end()), census_steps.end());
      nlohmann::json tensors = nlohmann::json::array();
      std::string view_line, view_op;
      for (const ViewInfo& v : first.views) {
        tensors.push_back({{"tensor_id", v.tensor_id},
                           {"role", "view"},
                           {"op", std::string(m.str(v.op_string))},
                           {"is_view", (v.flags & kTensorIsView) != 0},
                           {"reachable_bytes", v.reachable},
                           {"stack", stacks.frames(v.stack_id)}});
        if (view_line.empty()) {
          view_line = stacks.user_line(v.stack_id);
          view_op = std::string(m.str(v.op_string));
        }
      }
      const char* how = first.let_go == LetGo::kRebound ? "rebound (t.data = ...)" : "died";
      tensors.push_back({{"tensor_id", first.owner},
                         {"role", "owner"},
                         {"let_go", first.let_go == LetGo::kRebound ? "rebound" : "died"},
                         {"let_go_step", first.let_go_at.step},
                         {"stack", stacks.frames(first.let_go_stack)}});
      const std::string let_go_line = stacks.user_line(first.let_go_stack);
      f.evidence["storage"] = storages.front();
      f.evidence["storages"] = storages;
      f.evidence["tensors"] = tensors;
      f.evidence["steps"] = census_steps;
      f.evidence["retained_steps"] = steps;
      f.evidence["reachable_bytes"] = reach;
      f.evidence["wasted_bytes"] = f.bytes - std::min(f.bytes, reach);
      f.evidence["stacks"] = nlohmann::json::array(
          {stacks.frames(first.views.empty() ? 0 : first.views.front().stack_id),
           stacks.frames(first.let_go_stack), stacks.frames(first.alloc_stack)});
      f.evidence["stack_roles"] = {"view", "owner_let_go", "allocation"};
      f.message = std::to_string(f.count) + " storage(s) of " + format_bytes(f.bytes) +
                  " kept alive by " + std::to_string(first.views.size()) + " view(s) reaching " +
                  format_bytes(reach) + " after the owner " + how +
                  (let_go_line.empty() ? "" : " at " + let_go_line) + "; view made by " +
                  (view_op.empty() ? "?" : view_op) + (view_line.empty() ? "" : " at " + view_line);
      out.push_back(std::move(f));
    }
  }

 private:
  std::unordered_map<uint64_t, Episode> episodes_;
};

}  // namespace

std::unique_ptr<Detector> make_residual_view_detector(const AnalysisOptions&) {
  return std::make_unique<ResidualView>();
}

}  // namespace memlife::analysis
