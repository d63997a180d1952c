// unwaited_collective: an async or functional collective whose output was
// not waited by the end of the step it was issued in (step marks), or by the
// end of the trace. c10d keeps such outputs alive (the work registry holds
// the Work, the Work holds the tensors). A wait that matches no collective
// in flight is kept as evidence: it often waited a copy instead (seed 001).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {
namespace {

struct Issue {
  uint64_t op_string = 0, group_string = 0, backend_string = 0, stack_id = 0, bytes = 0;
  When issued, resolved;
  bool flagged = false, waited = false;
};

struct OrphanWait {
  uint64_t op_string = 0, stack_id = 0;
  WaitHow how = WaitHow::kWaitTensor;
  std::vector<uint64_t> tensors;
  When at;
};

class UnwaitedCollective final : public Detector {
 public:
  void on_collective_issue(const Model& m, const Collective& c) override {
    Issue& i = issues_[c.id];
    i = Issue{c.op_string, c.group_string, c.backend_string, c.stack_id, 0, c.issued, {}};
    for (uint64_t s : c.output_storages)
      if (const Storage* st = m.storage(s)) i.bytes += st->bytes;
    if (i.bytes == 0) i.bytes = c.bytes;
  }

  void on_collective_wait(const Model& m, const format::CollectiveWaitRecord& r,
                          const Collective* matched, const When& at) override {
    if (!matched) {
      if (orphans_.size() < 64)
        orphans_.push_back(
            {r.op_string, r.stack_id, r.how, {r.tensors.begin(), r.tensors.end()}, at});
      ++orphan_count_;
      return;
    }
    auto it = issues_.find(matched->id);
    if (it == issues_.end()) return;
    if (!it->second.flagged) {
      issues_.erase(it);
      return;
    }
    it->second.waited = true;
    it->second.resolved = at;
  }

  void on_step(const Model& m, const StepMark& mark) override {
    for (auto& [id, i] : issues_) {
      if (i.flagged || i.issued.seq >= mark.at.seq) continue;
      i.flagged = true;
      i.resolved = mark.at;
    }
  }

  void on_census(const Model&, const Census& c) override {
    if (c.c10d_unwaited_works != format::kUnknownCount) last_c10d_unwaited_ = c.c10d_unwaited_works;
  }

  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    struct Group {
      const Issue* first = nullptr;
      uint64_t count = 0, bytes = 0, retained = 0, late = 0;
      std::vector<uint64_t> steps;
    };
    std::map<std::string, Group> groups;
    const When end{~uint64_t{0} >> 1, m.last_time_ns, m.current_step};
    for (auto& [id, i] : issues_) {
      if (!i.flagged) {
        i.flagged = true;
        i.resolved = end;
      }
      const When until = i.waited ? i.resolved : end;
      std::string key = std::string(m.str(i.op_string)) + "|" + std::string(m.str(i.group_string)) +
                        "|" + stacks.key(i.stack_id);
      Group& g = groups[key];
      if (!g.first || i.issued.seq < g.first->issued.seq) g.first = &i;
      ++g.count;
      g.late += i.waited;
      g.bytes += i.bytes;
      g.retained = std::max(g.retained, until.time_ns - std::min(until.time_ns, i.issued.time_ns));
      g.steps.push_back(i.issued.step);
    }
    nlohmann::json orphans = nlohmann::json::array();
    for (const OrphanWait& w : orphans_)
      orphans.push_back({{"op", std::string(m.str(w.op_string))},
                         {"how", static_cast<int>(w.how)},
                         {"tensors", w.tensors},
                         {"step", w.at.step},
                         {"stack", stacks.frames(w.stack_id)}});
    for (auto& [key, g] : groups) {
      std::sort(g.steps.begin(), g.steps.end());
      g.steps.erase(std::unique(g.steps.begin(), g.steps.end()), g.steps.end());
      Finding f;
      f.kind = kUnwaitedCollective;
      f.severity = default_severity(f.kind);
      f.count = g.count;
      f.bytes = g.bytes;
      f.retained_ns = g.retained;
      const std::string op(m.str(g.first->op_string));
      const std::string group(m.str(g.first->group_string));
      f.evidence["op"] = op;
      f.evidence["group"] = group;
      f.evidence["backend"] = std::string(m.str(g.first->backend_string));
      f.evidence["waited_late"] = g.late;
      f.evidence["steps"] = g.steps;
      f.evidence["stacks"] = nlohmann::json::array({stacks.frames(g.first->stack_id)});
      f.evidence["stack_roles"] = {"issue"};
      if (orphan_count_) {
        f.evidence["unmatched_waits"] = orphans;
        f.evidence["unmatched_wait_count"] = orphan_count_;
      }
      if (last_c10d_unwaited_ != format::kUnknownCount)
        f.evidence["c10d_unwaited_works"] = last_c10d_unwaited_;
      const std::string line = stacks.user_line(g.first->stack_id);
      f.message = std::to_string(g.count) + " x " + (op.empty() ? "collective" : op) +
                  (group.empty() ? "" : " on group '" + group + "'") +
                  " not waited by the end of its step" +
                  (g.late ? " (" + std::to_string(g.late) + " waited later)" : "") + ", keeping " +
                  format_bytes(g.bytes) + " alive" + (line.empty() ? "" : "; issued at " + line) +
                  (orphan_count_ ? "; " + std::to_string(orphan_count_) +
                                       " wait(s) matched no collective in flight"
                                 : "");
      out.push_back(std::move(f));
    }
  }

 private:
  std::unordered_map<uint64_t, Issue> issues_;
  std::vector<OrphanWait> orphans_;
  uint64_t orphan_count_ = 0;
  uint64_t last_c10d_unwaited_ = format::kUnknownCount;
};

}  // namespace

std::unique_ptr<Detector> make_unwaited_collective_detector(const AnalysisOptions&) {
  return std::make_unique<UnwaitedCollective>();
}

}  // namespace memlife::analysis
