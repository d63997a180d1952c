// unwaited_collective: an async or functional collective whose output the
// program did not wait (wait_tensor, Work.wait, or a CUDA stream wait on its
// event) by the end of the step it was issued in (step marks), or by the end
// of the trace. c10d keeps such outputs alive (the work registry holds the
// Work, the Work holds the tensors). `released_by` says what ended it:
// "never" (nothing did: it finished on its own), "synchronize" (only a later
// device/stream synchronize, which c10d does not count as a wait), or
// "wait" (waited, but after its step). The layers of one call (functional ->
// c10d -> nccl) make one finding, not three (CollectiveNesting). A wait that
// matches no collective in flight is kept as evidence: it often waited a
// copy instead (seed 001).
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {
namespace {

struct Issue {
  uint64_t op_string = 0, group_string = 0, backend_string = 0, stack_id = 0, bytes = 0;
  When issued;
  uint64_t parent = 0;  // the outer layer of the same call, 0 for the call itself
  std::vector<uint64_t> children;
  bool flagged = false;          // not waited by the end of its step
  When program_wait, sync_wait;  // seq 0: none yet
  uint64_t sync_op = 0;
  uint64_t flags = 0;
  std::vector<Finding::Retained> retains;  // the output storages' allocations
};

struct OrphanWait {
  uint64_t op_string = 0, stack_id = 0;
  WaitHow how = WaitHow::kWaitTensor;
  std::vector<uint64_t> tensors;
  When at;
};

bool is_program_wait(WaitHow how) { return how != WaitHow::kSynchronize; }

class UnwaitedCollective final : public Detector {
 public:
  void on_collective_call(const Model& m, const Collective& c, bool in_flight) override {
    seen_.insert(c.id);
    Issue& i = issues_[c.id];
    i = Issue{};
    i.op_string = c.op_string;
    i.group_string = c.group_string;
    i.backend_string = c.backend_string;
    i.stack_id = c.stack_id;
    i.issued = c.issued;
    i.flags = c.flags;
    for (uint64_t s : c.output_storages)
      if (const Storage* st = m.storage(s)) {
        i.bytes += st->bytes;
        if (st->data_live) i.retains.push_back({st->alloc.at.seq, st->bytes});
      }
    if (i.bytes == 0) i.bytes = c.bytes;
    for (uint64_t child : c.layers) {
      auto it = issues_.find(child);
      if (it == issues_.end()) continue;
      Issue& ch = it->second;
      ch.parent = c.id;
      i.children.push_back(child);
      if (i.bytes == 0) i.bytes = ch.bytes;
      merge_waits(i, ch);
    }
    // Completed before the call returned: the call itself waited.
    if (!in_flight) drop(c.id);
  }

  void on_collective_wait(const Model& m, const format::CollectiveWaitRecord& r,
                          const Collective* matched, const When& at) override {
    const uint64_t id = matched ? matched->id : r.collective_id;
    auto it = id ? issues_.find(m.root_collective(id)) : issues_.end();
    if (it == issues_.end()) {
      // A second wait on a collective already resolved is no orphan.
      if (r.collective_id && seen_.count(r.collective_id)) return;
      if (orphans_.size() < 64)
        orphans_.push_back(
            {r.op_string, r.stack_id, r.how, {r.tensors.begin(), r.tensors.end()}, at});
      ++orphan_count_;
      return;
    }
    Issue& root = it->second;
    if (is_program_wait(r.how)) {
      if (!root.flagged) return drop(it->first);
      if (!root.program_wait.seq) root.program_wait = at;
    } else if (!root.sync_wait.seq) {
      root.sync_wait = at;
      root.sync_op = r.op_string;
    }
  }

  void on_step(const Model& m, const StepMark& mark) override {
    for (auto& [id, i] : issues_)
      if (!i.flagged && i.parent == 0 && i.issued.seq < mark.at.seq) i.flagged = true;
  }

  void on_census(const Model&, const Census& c) override {
    if (c.c10d_unwaited_works != format::kUnknownCount) last_c10d_unwaited_ = c.c10d_unwaited_works;
  }

  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override {
    struct Group {
      const Issue* first = nullptr;
      uint64_t count = 0, bytes = 0, retained = 0, late = 0;
      std::string released_by;
      std::vector<uint64_t> steps;
      std::vector<std::string> layers;
      std::vector<Finding::Retained> retains;
    };
    std::map<std::string, Group> groups;
    for (auto& [id, i] : issues_) {
      if (i.parent != 0) continue;
      // A raw NCCL call no c10d or functional call made (an extension's,
      // DeepCompile's): ordered by its stream, with nothing that keeps its
      // buffers alive; later work on the stream, an event wait or a
      // synchronize is its wait.
      if (i.flags & kCollectiveNccl) continue;
      // Waited after its step: the memory was released by the wait, and a
      // read before it is use_before_wait's finding. Not a bug on its own.
      if (i.program_wait.seq) continue;
      // Unflagged roots reached the end of the trace without a program
      // wait (a prompt one would have dropped them).
      const char* released_by = i.program_wait.seq ? "wait"
                                : i.sync_wait.seq  ? "synchronize"
                                                   : "never";
      const uint64_t until = i.program_wait.seq ? i.program_wait.time_ns
                             : i.sync_wait.seq  ? i.sync_wait.time_ns
                                                : m.last_time_ns;
      std::string key = std::string(m.str(i.op_string)) + "|" + std::string(m.str(i.group_string)) +
                        "|" + released_by + "|" + stacks.key(i.stack_id);
      Group& g = groups[key];
      if (!g.first || i.issued.seq < g.first->issued.seq) g.first = &i;
      g.released_by = released_by;
      ++g.count;
      g.late += i.program_wait.seq != 0;
      g.bytes += i.bytes;
      g.retains.insert(g.retains.end(), i.retains.begin(), i.retains.end());
      g.retained = std::max(g.retained, until - std::min(until, i.issued.time_ns));
      g.steps.push_back(i.issued.step);
      if (g.layers.empty()) collect_layers(m, i, g.layers);
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
      f.retains = std::move(g.retains);
      f.retained_ns = g.retained;
      const std::string op(m.str(g.first->op_string));
      const std::string group(m.str(g.first->group_string));
      f.evidence["op"] = op;
      f.evidence["group"] = group;
      f.evidence["backend"] = std::string(m.str(g.first->backend_string));
      f.evidence["released_by"] = g.released_by;
      if (g.released_by == "synchronize")
        f.evidence["release_op"] = std::string(m.str(g.first->sync_op));
      f.evidence["waited_late"] = g.late;
      f.evidence["layers"] = g.layers;
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
      std::string how;
      if (g.released_by == "never")
        how = " never waited";
      else if (g.released_by == "synchronize")
        how = " never waited (only a later " +
              (f.evidence["release_op"].get<std::string>().empty()
                   ? std::string("synchronize")
                   : f.evidence["release_op"].get<std::string>()) +
              " released it; c10d still counts it unwaited)";
      else
        how = " not waited by the end of its step (waited later)";
      f.message = std::to_string(g.count) + " x " + (op.empty() ? "collective" : op) +
                  (group.empty() ? "" : " on group '" + group + "'") + how + ", keeping " +
                  format_bytes(g.bytes) + " alive" + (line.empty() ? "" : "; issued at " + line) +
                  (orphan_count_ ? "; " + std::to_string(orphan_count_) +
                                       " wait(s) matched no collective in flight"
                                 : "");
      out.push_back(std::move(f));
    }
  }

 private:
  static void merge_waits(Issue& into, const Issue& from) {
    if (from.program_wait.seq &&
        (!into.program_wait.seq || from.program_wait.seq < into.program_wait.seq))
      into.program_wait = from.program_wait;
    if (from.sync_wait.seq && (!into.sync_wait.seq || from.sync_wait.seq < into.sync_wait.seq)) {
      into.sync_wait = from.sync_wait;
      into.sync_op = from.sync_op;
    }
  }
  void drop(uint64_t id) {
    auto it = issues_.find(id);
    if (it == issues_.end()) return;
    const std::vector<uint64_t> children = std::move(it->second.children);
    issues_.erase(it);
    for (uint64_t c : children) drop(c);
  }
  void collect_layers(const Model& m, const Issue& i, std::vector<std::string>& layers) const {
    for (uint64_t c : i.children) {
      auto it = issues_.find(c);
      if (it == issues_.end()) continue;
      layers.emplace_back(m.str(it->second.op_string));
      collect_layers(m, it->second, layers);
    }
  }

  std::unordered_map<uint64_t, Issue> issues_;
  std::unordered_set<uint64_t> seen_;
  std::vector<OrphanWait> orphans_;
  uint64_t orphan_count_ = 0;
  uint64_t last_c10d_unwaited_ = format::kUnknownCount;
};

}  // namespace

std::unique_ptr<Detector> make_unwaited_collective_detector(const AnalysisOptions&) {
  return std::make_unique<UnwaitedCollective>();
}

}  // namespace memlife::analysis
