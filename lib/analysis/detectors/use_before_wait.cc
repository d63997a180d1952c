// use_before_wait: a non-view op read a collective's output (or a tensor
// sharing its storage) while the collective was still in flight: it read
// memory the collective had not finished writing. View ops only read
// metadata, the collective's own ops are the collective itself, and ops
// nested in another op are part of the outer op's read.
#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <unordered_map>

#include "analysis/detector.h"
#include "analysis/detectors/util.h"

namespace memlife::analysis {

bool is_view_op(std::string_view name) {
  static constexpr std::array<std::string_view, 24> kViews = {"aten::view",
                                                              "aten::slice",
                                                              "aten::as_strided",
                                                              "aten::alias",
                                                              "aten::_reshape_alias",
                                                              "aten::select",
                                                              "aten::narrow",
                                                              "aten::t",
                                                              "aten::transpose",
                                                              "aten::unsqueeze",
                                                              "aten::squeeze",
                                                              "aten::expand",
                                                              "aten::permute",
                                                              "aten::split",
                                                              "aten::chunk",
                                                              "aten::detach",
                                                              "aten::view_as",
                                                              "aten::unbind",
                                                              "aten::unfold",
                                                              "aten::reshape",
                                                              "aten::split_with_sizes",
                                                              "aten::flatten",
                                                              "aten::lift_fresh",
                                                              "aten::_unsafe_view"};
  // Overload names ("aten::view.dtype") count as the op.
  const std::string_view base = name.substr(0, name.find('.'));
  return std::find(kViews.begin(), kViews.end(), base) != kViews.end();
}

bool is_collective_op(std::string_view name) {
  return name.starts_with("c10d::") || name.starts_with("_c10d_functional::") ||
         name.starts_with("c10d_functional::") ||
         name.find("wait_tensor") != std::string_view::npos || name.starts_with("gloo:") ||
         name.starts_with("nccl:");
}

namespace {

struct Use {
  uint64_t op_string = 0, stack_id = 0, tensor_id = 0, storage_id = 0, collective_id = 0;
  uint64_t collective_op = 0, collective_stack = 0, bytes = 0, issued_seq = 0;
  When at;
};

class UseBeforeWait final : public Detector {
 public:
  void on_collective_issue(const Model& m, const Collective& c) override {
    // A raw NCCL call is ordered by its stream: the work queued after it on
    // that stream (torch's, DeepCompile's) reads after it. Its c10d or
    // functional caller, when there is one, is tracked on its own.
    if (c.flags & kCollectiveNccl) return;
    for (uint64_t s : c.output_storages) by_storage_[s] = c.id;
    for (uint64_t t : c.outputs) by_tensor_[t] = c.id;
  }
  void on_collective_wait(const Model& m, const format::CollectiveWaitRecord&, const Collective* c,
                          const When& at) override {
    if (!c) return;
    // A wait on an inner layer waits the call: c10d's Work::wait in C++
    // (DeepCompile's, DDP's reducer) is seen only as the CUDA stream wait
    // on its NCCL kernel's event, and after a synchronize the data is
    // written whatever c10d thinks.
    const uint64_t id = m.root_collective(c->id);
    waited_at_[id] = at.seq;
    auto root = m.pending_collectives.find(id);
    if (root == m.pending_collectives.end()) return;
    for (uint64_t s : root->second.output_storages) by_storage_.erase(s);
    for (uint64_t t : root->second.outputs) by_tensor_.erase(t);
  }

  void on_op_begin(const Model& m, const format::OpBeginRecord& r, const When& at,
                   uint64_t stream) override {
    const std::string_view name = m.str(r.name_string);
    // Only the outermost op is the program's read: what it runs inside
    // (its kernels' ops, or the PythonDispatchMode wrapper torch puts
    // around an op dispatched to a Python mode, with the op's arguments)
    // is that same read, or no read when the outer op is a view or the
    // collective itself.
    // A user-scope range (`Optimizer.step#SGD.step`, a record_function
    // label) is no op: the ops inside it are the program's reads.
    // The replay has pushed this op last on its stream's open ops.
    const auto& open = m.open_ops.at(stream);
    const bool nested = std::any_of(open.begin(), open.end() - 1, [&m](const auto& op) {
      return m.str(op.second).find("::") != std::string_view::npos;
    });
    if (nested || is_collective_op(name) || is_view_op(name) ||
        (by_storage_.empty() && by_tensor_.empty()))
      return;
    for (uint64_t t : r.inputs) {
      uint64_t cid = 0;
      if (auto it = by_tensor_.find(t); it != by_tensor_.end()) cid = it->second;
      const uint64_t s = m.storage_of(t);
      if (auto it = by_storage_.find(s); !cid && s && it != by_storage_.end()) cid = it->second;
      if (!cid) continue;
      auto c = m.pending_collectives.find(cid);
      if (c == m.pending_collectives.end()) continue;
      // Backends run their own ops on the output from worker threads
      // (gloo copies the gathered data in with aten::copy_): that is the
      // collective writing, not the program reading.
      if (c->second.thread != stream) continue;
      ++total_;
      if (uses_.size() < 4096) {
        const Storage* st = m.storage(s);
        uses_.push_back({r.name_string, r.stack_id, t, s, cid, c->second.op_string,
                         c->second.stack_id, st ? st->bytes : c->second.bytes, c->second.issued.seq,
                         at});
      }
      // Every pending input: a foreach op reads all the gradients at once.
    }
  }

  void finish(const Model& m, bool, StackResolver& stacks, std::vector<Finding>& out) override {
    // One finding per issue site: every read before the wait of the
    // collectives issued there is one missing (or misplaced) wait.
    std::map<std::string, std::vector<const Use*>> groups;
    for (const Use& u : uses_)
      groups[std::string(m.str(u.collective_op)) + "|" + stacks.key(u.collective_stack)].push_back(
          &u);
    for (auto& [key, us] : groups) {
      const Use& u = *us.front();
      Finding f;
      f.kind = kUseBeforeWait;
      f.severity = default_severity(f.kind);
      f.count = us.size();
      // Bytes: the most that was read before its wait at once: the
      // distinct storages read, over the collectives in flight together.
      struct Read {
        uint64_t issued_seq = 0;
        std::map<uint64_t, uint64_t> storages;  // storage (or tensor) -> bytes
      };
      std::map<uint64_t, Read> by_collective;
      std::vector<uint64_t> steps;
      std::vector<const Use*> reads;  // one per read site
      std::vector<std::string> read_keys;
      for (const Use* x : us) {
        Read& read = by_collective[x->collective_id];
        read.issued_seq = x->issued_seq;
        read.storages[x->storage_id ? x->storage_id : x->tensor_id] = x->bytes;
        steps.push_back(x->at.step);
        f.seen_seq = std::max(f.seen_seq, x->at.seq);
        std::string read_key = std::string(m.str(x->op_string)) + "|" + stacks.key(x->stack_id);
        if (std::find(read_keys.begin(), read_keys.end(), read_key) == read_keys.end()) {
          read_keys.push_back(std::move(read_key));
          reads.push_back(x);
        }
      }
      std::vector<HeldInterval> held;  // each collective, issue to wait
      for (const auto& [cid, read] : by_collective) {
        uint64_t sum = 0;
        for (const auto& [id, bytes] : read.storages) sum += bytes;
        const auto waited = waited_at_.find(cid);
        held.push_back(
            {read.issued_seq, waited == waited_at_.end() ? ~uint64_t{0} : waited->second, sum});
      }
      f.bytes = peak_held_bytes(held);
      std::sort(steps.begin(), steps.end());
      steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
      const std::string cop(m.str(u.collective_op));
      nlohmann::json read_list = nlohmann::json::array();
      nlohmann::json stack_list = nlohmann::json::array();
      nlohmann::json roles = nlohmann::json::array();
      std::string read_text;
      for (const Use* r : reads) {
        const std::string op(m.str(r->op_string)), line = stacks.user_line(r->stack_id);
        if (read_list.size() < 8) {
          read_list.push_back({{"op", op}, {"line", line}, {"stack", stacks.frames(r->stack_id)}});
          stack_list.push_back(stacks.frames(r->stack_id));
          roles.push_back("use");
        }
        if (read_text.size() < 200)
          read_text += (read_text.empty() ? "" : ", ") + op + (line.empty() ? "" : " at " + line);
      }
      stack_list.push_back(stacks.frames(u.collective_stack));
      roles.push_back("issue");
      f.evidence["op"] = std::string(m.str(u.op_string));
      f.evidence["collective_op"] = cop;
      f.evidence["reads"] = read_list;
      f.evidence["tensors"] = nlohmann::json::array({{{"tensor_id", u.tensor_id}}});
      f.evidence["steps"] = steps;
      f.evidence["stacks"] = stack_list;
      f.evidence["stack_roles"] = roles;
      if (total_ > uses_.size()) f.evidence["uses_not_listed"] = total_ - uses_.size();
      const std::string issue_line = stacks.user_line(u.collective_stack);
      f.message = read_text;
      f.message += " read the output of " + cop +
                   (issue_line.empty() ? "" : " issued at " + issue_line) +
                   " before it was waited (" + std::to_string(f.count) + " read(s), " +
                   std::to_string(steps.size()) + " step(s))";
      out.push_back(std::move(f));
    }
  }

 private:
  std::unordered_map<uint64_t, uint64_t> by_storage_, by_tensor_;  // -> collective id
  std::vector<Use> uses_;
  uint64_t total_ = 0;
  std::unordered_map<uint64_t, uint64_t> waited_at_;  // collective -> seq of its wait
};

}  // namespace

std::unique_ptr<Detector> make_use_before_wait_detector(const AnalysisOptions&) {
  return std::make_unique<UseBeforeWait>();
}

}  // namespace memlife::analysis
