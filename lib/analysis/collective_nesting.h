// One user call makes several collective records: functional all_gather ->
// c10d::allgather_into_tensor_coalesced_ -> nccl:AllGather, each recorded
// when its layer returns (innermost first), all with the user's stack.
// Reporting each layer would count one bug three times, so the outer record
// adopts the inner ones: those issued on the same thread since the op that
// is innermost-open at the outer issue began (the outer's own op).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace memlife::analysis {

class CollectiveNesting {
 public:
  void op_begin(uint64_t thread, uint64_t op_id, uint64_t seq) {
    open_[thread].push_back({op_id, seq});
  }
  void op_end(uint64_t thread, uint64_t op_id) {
    auto it = open_.find(thread);
    if (it == open_.end()) return;
    auto& ops = it->second;
    for (size_t i = ops.size(); i-- > 0;)
      if (ops[i].op_id == op_id) {
        ops.resize(i);
        break;
      }
    if (ops.empty()) forget_thread(thread);
  }
  // Records the collective `id` issued at `seq` on `thread` and returns the
  // ids it adopts (earlier, not yet adopted records of the same call).
  std::vector<uint64_t> adopt(uint64_t thread, uint64_t id, uint64_t seq) {
    std::vector<uint64_t> adopted;
    auto it = open_.find(thread);
    // With no op open, nothing can enclose this record later either.
    if (it == open_.end() || it->second.empty()) return adopted;
    const uint64_t since = it->second.back().seq;
    for (size_t i = 0; i < recent_.size();) {
      if (recent_[i].thread == thread && recent_[i].seq > since) {
        adopted.push_back(recent_[i].id);
        recent_[i] = recent_.back();
        recent_.pop_back();
      } else {
        ++i;
      }
    }
    recent_.push_back({id, seq, thread});
    return adopted;
  }

 private:
  struct OpenOp {
    uint64_t op_id, seq;
  };
  struct Recent {
    uint64_t id, seq, thread;
  };
  void forget_thread(uint64_t thread) {
    for (size_t i = 0; i < recent_.size();) {
      if (recent_[i].thread == thread) {
        recent_[i] = recent_.back();
        recent_.pop_back();
      } else {
        ++i;
      }
    }
  }
  std::unordered_map<uint64_t, std::vector<OpenOp>> open_;
  std::vector<Recent> recent_;
};

}  // namespace memlife::analysis
