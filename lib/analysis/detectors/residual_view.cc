// residual_view: a storage outlives the tensor that owned it (the owner
// died or was rebound with `t.data = x`) because views or aliases still
// hold it. Reported when the owner was rebound (`t.data = ...`), whatever
// the views reach, or when the owner died and the views reach less than the
// storage: the rest is waste (enough of it: a storage kMinKeptToReached
// times what the views reach, kMinWastedBytes unused, and
// kMinWastedOnceBytes for a pattern that happened once).
// Seen at a census (owner absent from the storage's holders), or at the
// storage's free when that came later than the owner's let-go.
#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {
namespace {

// Unused bytes below which a view that outlived a dead owner is not worth
// a finding (the plain ZeRO-3 loop's 4 KiB loss buffers).
constexpr uint64_t kMinWastedBytes = uint64_t{64} * 1024;
// ... and below which it is not worth one when it happened once: a slice
// a setup step keeps of a temporary (minGPT's AdditionDataset keeps the
// first 500 of a 10,000-element permutation: 74 KiB, once) is no bug a
// maintainer would fix; a pattern that recurs (a view of every step's
// batch kept) or one that wastes a megabyte is.
constexpr uint64_t kMinWastedOnceBytes = uint64_t{1} << 20;
// How many times the bytes its views reach a storage must be, once its
// owner died, for the views to be worth a finding. Keeping one part of a
// few is how tensors get split (`mean, var = x.unbind()`, q, k and v of
// one projection): gpytorch's decoupled variational strategy keeps one
// half of each step's `interp_term` in its output distribution, and no
// maintainer would copy the half out to free the other. Keeping a sample
// of a batch (pytorch#33101: 1/128 of it) is what users report.
constexpr uint64_t kMinKeptToReached = 4;

// The bytes of a storage its views do not reach.
uint64_t unreached_bytes(uint64_t storage_bytes, uint64_t reach) {
  return storage_bytes - std::min(storage_bytes, reach);
}

// Whether the views of a storage whose owner died waste enough of it.
bool views_waste(uint64_t storage_bytes, uint64_t reach) {
  return unreached_bytes(storage_bytes, reach) >= kMinWastedBytes &&
         storage_bytes >= kMinKeptToReached * reach;
}

struct ViewInfo {
  uint64_t tensor_id = 0, op_string = 0, stack_id = 0, flags = 0, reachable = 0;
  uint64_t made_in_op_string = 0;  // the custom op it was made inside, if any
};

struct Episode {
  uint64_t storage_id = 0, bytes = 0, reachable = 0, address = 0;
  int64_t device = -1;
  uint64_t alloc_stack = 0, alloc_op = 0, alloc_seq = 0;
  uint64_t owner = 0;
  LetGo let_go = LetGo::kNone;
  When let_go_at, seen_at, end_at;
  uint64_t let_go_stack = 0;
  uint64_t let_go_op_string = 0;  // the custom op the owner let go inside, if any
  bool freed = false;
  std::vector<uint64_t> census_steps;
  std::vector<ViewInfo> views;
};

// Each episode holds its storage from the owner's let-go to its end
// (inclusive).
uint64_t peak_concurrent_bytes(const std::vector<const Episode*>& eps) {
  std::vector<HeldInterval> held;
  held.reserve(eps.size());
  for (const Episode* ep : eps) {
    const uint64_t begin =
        std::min(ep->let_go_at.seq ? ep->let_go_at.seq : ep->seen_at.seq, ep->seen_at.seq);
    held.push_back({begin, std::max(ep->end_at.seq, begin) + 1, ep->bytes});
  }
  return peak_held_bytes(held);
}

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
      uint64_t addressed = 0;
      for (const auto& h : e.holders) {
        ViewInfo v{h.tensor_id, 0, 0, 0, h.reachable_bytes};
        ByteRange r{0, h.reachable_bytes};
        if (const Tensor* t = m.tensor(h.tensor_id)) {
          v.op_string = t->op_string;
          v.stack_id = t->stack_id;
          v.flags = t->flags;
          v.made_in_op_string = t->made_in_op_string;
          if (t->storage_id == e.storage_id) {
            r = reachable_range(t->geometry);
            v.reachable = std::min(h.reachable_bytes ? h.reachable_bytes : ~uint64_t{0},
                                   addressed_bytes(t->geometry));
          }
        }
        addressed += v.reachable;
        ranges.push_back(r);
        views.push_back(v);
      }
      // Views may overlap (spans) and may address fewer bytes than they
      // span (elements): the smaller of the two, never more than the storage.
      const uint64_t reach = std::min({union_bytes(ranges), addressed, e.storage_bytes});
      // An owner that was rebound (`t.data = ...`) was meant to release the
      // storage: report it even when the views reach all of it (seed 000 with
      // a shard size that needs no padding). An owner that simply died leaves
      // views that may be using every byte: only the unreachable rest is waste.
      const bool rebound =
          s->let_go == LetGo::kRebound || (s->let_go == LetGo::kNone && alive.count(owner) != 0);
      // An owner that died is ordinary (`x = batch[0]`); the views matter
      // only when they keep several times what they use.
      if (!rebound && !views_waste(e.storage_bytes, reach)) continue;
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
          ep.let_go_op_string = s->let_go_op_string;
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
    if (s->let_go == LetGo::kDied) {
      died_owner_episode(m, *s, a, at, true);
      return;
    }
    // No census saw it, but the owner let go and something other than the
    // owner's release freed it later: its views held it meanwhile.
    // The owner's own release frees it at once: within the custom op it let
    // go in (while that op runs), or with no op begun since a `t.data = x`
    // of Python (the old storage dies right after the op).
    if (s->let_go != LetGo::kRebound) return;
    const bool own_release =
        s->let_go_op_id ? m.op_open(s->let_go_op_id) : m.ops_begun <= s->ops_at_let_go;
    if (own_release) return;
    // Rebound owner (checked above): reported whatever the views reach.
    const HeldBy held = views_holding(m, *s, a.bytes, 0);
    if (held.views.empty()) return;
    Episode& ep = episode_from_allocation(*s, a, held, at, at, true);
    ep.let_go_stack = s->let_go_stack;
    ep.let_go_op_string = s->let_go_op_string;
  }

  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    // Storages still allocated when the trace ended, whose owner's death
    // was recorded and whose views outlived it.
    const When end{~uint64_t{0} >> 1, m.last_time_ns, m.current_step};
    for (const auto& [id, s] : m.storages)
      if (s.let_go == LetGo::kDied && s.data_live && !episodes_.count(id))
        died_owner_episode(m, s, s.alloc, end, false);
    // One finding per pattern: the same views made at the same lines and
    // released at the same line, however many storages it hit. A release
    // inside a custom op (dc::release_param) is that op's, wherever the
    // compiled code calling it sits: one finding for every parameter.
    std::map<std::string, std::vector<const Episode*>> groups;
    for (auto& [id, ep] : episodes_) {
      if (!ep.freed) ep.end_at = When{~uint64_t{0} >> 1, m.last_time_ns, m.current_step};
      std::string key;
      if (ep.let_go_op_string) {
        std::set<std::string_view> made_by;
        for (const ViewInfo& v : ep.views)  // a tensor whose op was not seen adds nothing
          if (v.made_in_op_string || v.op_string)
            made_by.insert(m.str(v.made_in_op_string ? v.made_in_op_string : v.op_string));
        key = "op:" + std::string(m.str(ep.let_go_op_string));
        for (std::string_view op : made_by) key += "|" + std::string(op);
      } else {
        key = stacks.key(ep.let_go_stack);
        for (const ViewInfo& v : ep.views) key += "|" + stacks.key(v.stack_id);
      }
      groups[key].push_back(&ep);
    }
    for (auto& [key, eps] : groups) {
      std::sort(eps.begin(), eps.end(),
                [](const Episode* a, const Episode* b) { return a->seen_at.seq < b->seen_at.seq; });
      const Episode& first = *eps.front();
      if (eps.size() == 1 && first.let_go == LetGo::kDied &&
          unreached_bytes(first.bytes, first.reachable) < kMinWastedOnceBytes)
        continue;
      Finding f;
      f.kind = kResidualView;
      f.severity = default_severity(f.kind);
      f.count = eps.size();
      uint64_t reach = 0, wasted = 0, steps = 0;
      nlohmann::json storages = nlohmann::json::array();
      std::vector<uint64_t> census_steps;
      // Bytes are what was held at once: storages held one after another
      // (a view of each step's batch, dropped at the next) count once.
      f.bytes = peak_concurrent_bytes(eps);
      uint64_t total_bytes = 0;
      std::map<uint64_t, uint64_t> bytes_by_step;  // step of the let-go -> bytes
      for (const Episode* ep : eps) {
        total_bytes += ep->bytes;
        bytes_by_step[ep->let_go_at.step] += ep->bytes;
        f.retains.push_back({ep->alloc_seq, ep->bytes});
        reach += ep->reachable;
        wasted += unreached_bytes(ep->bytes, ep->reachable);
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
      std::string view_line, view_op, view_made_in;
      uint64_t view_count = 0;
      for (const Episode* ep : eps) view_count += ep->views.size();
      for (const ViewInfo& v : first.views) {
        tensors.push_back({{"tensor_id", v.tensor_id},
                           {"role", "view"},
                           {"op", std::string(m.str(v.op_string))},
                           {"made_in_op", v.made_in_op_string ? nlohmann::json(std::string(
                                                                    m.str(v.made_in_op_string)))
                                                              : nlohmann::json(nullptr)},
                           {"is_view", (v.flags & kTensorIsView) != 0},
                           {"reachable_bytes", v.reachable},
                           {"stack", stacks.frames(v.stack_id)}});
        if (view_line.empty()) {
          view_line = stacks.user_line(v.stack_id);
          view_op = std::string(m.str(v.op_string));
          if (v.made_in_op_string)
            view_made_in = " inside " + std::string(m.str(v.made_in_op_string));
        }
      }
      const char* how = first.let_go == LetGo::kRebound ? "rebound (t.data = ...)" : "died";
      tensors.push_back(
          {{"tensor_id", first.owner},
           {"role", "owner"},
           {"let_go", first.let_go == LetGo::kRebound ? "rebound" : "died"},
           {"let_go_step", first.let_go_at.step},
           {"let_go_in_op", first.let_go_op_string
                                ? nlohmann::json(std::string(m.str(first.let_go_op_string)))
                                : nlohmann::json(nullptr)},
           {"stack", stacks.frames(first.let_go_stack)}});
      const std::string let_go_line = stacks.user_line(first.let_go_stack);
      f.evidence["storage"] = storages.front();
      f.evidence["storages"] = storages;
      f.evidence["tensors"] = tensors;
      f.evidence["steps"] = census_steps;
      f.evidence["retained_steps"] = steps;
      f.evidence["reachable_bytes"] = reach;
      f.evidence["view_count"] = view_count;
      // Totals over the storages, as total_bytes and reachable_bytes are:
      // f.bytes is what was held at once, which storages held one after
      // another (a view of each step's output, replaced at the next) may
      // not reach.
      f.evidence["wasted_bytes"] = wasted;
      f.evidence["stacks"] = nlohmann::json::array(
          {stacks.frames(first.views.empty() ? 0 : first.views.front().stack_id),
           stacks.frames(first.let_go_stack), stacks.frames(first.alloc_stack)});
      f.evidence["stack_roles"] = {"view", "owner_let_go", "allocation"};
      f.evidence["total_bytes"] = total_bytes;
      // What one step of a loop loses to the pattern: the bytes its
      // let-gos left to views, the median over the steps they happened in.
      std::vector<uint64_t> per_step;
      per_step.reserve(bytes_by_step.size());
      for (const auto& [step, bytes] : bytes_by_step) per_step.push_back(bytes);
      std::sort(per_step.begin(), per_step.end());
      f.evidence["bytes_per_step"] = per_step[per_step.size() / 2];
      f.evidence["let_go_steps"] = bytes_by_step.size();
      const std::string let_go_op =
          first.let_go_op_string ? " inside " + std::string(m.str(first.let_go_op_string)) : "";
      std::string message = std::to_string(f.count) + " storage(s) of " + format_bytes(total_bytes);
      if (total_bytes != f.bytes) message += " (" + format_bytes(f.bytes) + " at once)";
      message += " kept alive by " + std::to_string(view_count) + " view(s) reaching ";
      message += format_bytes(reach) + " after the owner " + how + let_go_op;
      if (!let_go_line.empty()) message += " at " + let_go_line;
      message += "; view made by " + (view_op.empty() ? std::string("?") : view_op) + view_made_in;
      if (!view_line.empty()) message += " at " + view_line;
      f.message = std::move(message);
      out.push_back(std::move(f));
    }
  }

 private:
  // An owner whose death a tensor_death record gave (no census saw the
  // storage since): its views kept the storage from that moment to `end`
  // (its free, or the end of the trace). A finding when the views that
  // outlived the owner waste what a census would call waste, and held it
  // past a step boundary or to the end: a view dropped within the step
  // the owner died in is an ordinary temporary.
  void died_owner_episode(const Model& m, const Storage& s, const Allocation& a, const When& end,
                          bool freed) {
    if (freed && end.step <= s.let_go_at.step) return;
    const HeldBy held = views_holding(m, s, a.bytes, s.let_go_at.seq);
    if (held.views.empty()) return;
    if (!views_waste(a.bytes, held.reach)) return;
    episode_from_allocation(s, a, held, s.let_go_at, end, freed);
  }

  // The tensors other than the owner still on the storage (those that died
  // before `since_seq` left out), and the bytes they reach.
  struct HeldBy {
    std::vector<ViewInfo> views;
    uint64_t reach = 0;
  };
  static HeldBy views_holding(const Model& m, const Storage& s, uint64_t bytes,
                              uint64_t since_seq) {
    HeldBy held;
    std::vector<ByteRange> ranges;
    uint64_t addressed = 0;
    for (uint64_t tid : s.tensors) {
      if (tid == s.owner_tensor) continue;
      const Tensor* t = m.tensor(tid);
      if (!t || t->storage_id != s.id) continue;
      if (since_seq != 0 && t->died_at.seq != 0 && t->died_at.seq < since_seq) continue;
      ranges.push_back(reachable_range(t->geometry));
      held.views.push_back({tid, t->op_string, t->stack_id, t->flags, addressed_bytes(t->geometry),
                            t->made_in_op_string});
      addressed += held.views.back().reachable;
    }
    held.reach = std::min({union_bytes(ranges), addressed, bytes});
    return held;
  }

  Episode& episode_from_allocation(const Storage& s, const Allocation& a, const HeldBy& held,
                                   const When& seen_at, const When& end, bool freed) {
    Episode& ep = episodes_[s.id];
    ep.storage_id = s.id;
    ep.bytes = a.bytes;
    ep.reachable = held.reach;
    ep.address = a.address;
    ep.device = a.device;
    ep.alloc_stack = a.stack_id;
    ep.alloc_op = a.op_string;
    ep.alloc_seq = a.at.seq;
    ep.owner = s.owner_tensor;
    ep.let_go = s.let_go;
    ep.let_go_at = s.let_go_at;
    ep.seen_at = seen_at;
    ep.end_at = end;
    ep.freed = freed;
    ep.views = held.views;
    return ep;
  }

  std::unordered_map<uint64_t, Episode> episodes_;
};

}  // namespace

std::unique_ptr<Detector> make_residual_view_detector(const AnalysisOptions&) {
  return std::make_unique<ResidualView>();
}

}  // namespace memlife::analysis
