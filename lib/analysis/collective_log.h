// The collectives a process called, one entry per user call (the layers of
// a call folded by CollectiveNesting), in issue order, with the group they
// ran on: what the cross-rank sequence check compares between ranks.
// Sends and receives are left out: a pipeline's rank sends while its peer
// receives, and c10d orders them apart from the group's collectives.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/detector.h"

namespace memlife::analysis {

struct CollectiveCall {
  // Comparable between ranks: "default" for the default group (c10d names
  // it "0"; traces that named no group), other groups by their c10d name,
  // NCCL communicators by order of first use ("nccl comm #0 of 4 ranks").
  std::string group;
  std::string op;
  uint64_t bytes = 0, seq = 0, time_ns = 0, step = 0;
  nlohmann::json stack = nlohmann::json::array();
  std::string where;  // the user's line, for messages
};

// Group string as the ranks can compare it (see CollectiveCall::group).
// `nccl_comms` numbers the communicators of one process.
std::string comparable_group(std::string_view group,
                             std::unordered_map<std::string, int>& nccl_comms);

class CollectiveLog final : public Detector {
 public:
  explicit CollectiveLog(std::vector<CollectiveCall>& out) : out_(out) {}
  void on_collective_call(const Model&, const Collective& c, bool in_flight) override;
  void finish(const Model& m, bool truncated, StackResolver& stacks,
              std::vector<Finding>& out) override;

 private:
  struct Call {
    uint64_t id, op_string, group_string, stack_id, bytes;
    When issued;
    bool point_to_point = false;
    bool adopted = false;
  };
  std::vector<CollectiveCall>& out_;
  std::vector<Call> calls_;
  std::unordered_map<uint64_t, size_t> index_;  // collective id -> calls_
};

}  // namespace memlife::analysis
