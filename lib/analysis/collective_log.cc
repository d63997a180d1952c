#include "analysis/collective_log.h"

#include <unordered_map>

namespace memlife::analysis {
namespace {

// c10d's name of the default process group (init_process_group's).
constexpr std::string_view kDefaultGroupName = "0";

}  // namespace

std::string comparable_group(std::string_view group,
                             std::unordered_map<std::string, int>& nccl_comms) {
  if (group.empty() || group == kDefaultGroupName) return "default";
  // The recorder names NCCL communicators "nccl:0x<comm> rank r/N": the
  // pointer and the rank differ between ranks, the size does not.
  if (group.rfind("nccl:0x", 0) != 0) return std::string(group);
  const size_t slash = group.rfind('/');
  const std::string size =
      slash == std::string_view::npos ? "?" : std::string(group.substr(slash + 1));
  const std::string comm(group.substr(0, group.find(' ')));
  auto [it, fresh] = nccl_comms.try_emplace(comm, static_cast<int>(nccl_comms.size()));
  return "nccl comm #" + std::to_string(it->second) + " of " + size + " ranks";
}

void CollectiveLog::on_collective_call(const Model&, const Collective& c, bool) {
  Call call{c.id,
            c.op_string,
            c.group_string,
            c.stack_id,
            c.bytes,
            c.issued,
            (c.flags & kCollectivePointToPoint) != 0};
  for (uint64_t child : c.layers) {
    auto it = index_.find(child);
    if (it == index_.end()) continue;
    Call& inner = calls_[it->second];
    inner.adopted = true;
    if (call.bytes == 0) call.bytes = inner.bytes;
  }
  index_[c.id] = calls_.size();
  calls_.push_back(call);
}

void CollectiveLog::finish(const Model& m, bool, StackResolver& stacks, std::vector<Finding>&) {
  std::unordered_map<std::string, int> nccl_comms;
  std::unordered_map<uint64_t, std::pair<nlohmann::json, std::string>> stack_cache;
  for (const Call& c : calls_) {
    if (c.adopted || c.point_to_point) continue;
    CollectiveCall out;
    out.group = comparable_group(m.str(c.group_string), nccl_comms);
    out.op = std::string(m.str(c.op_string));
    out.bytes = c.bytes;
    out.seq = c.issued.seq;
    out.time_ns = c.issued.time_ns;
    out.step = c.issued.step;
    auto [it, fresh] = stack_cache.try_emplace(c.stack_id);
    if (fresh) it->second = {stacks.frames(c.stack_id), stacks.user_line(c.stack_id)};
    out.stack = it->second.first;
    out.where = it->second.second;
    out_.push_back(std::move(out));
  }
  calls_.clear();
  index_.clear();
}

}  // namespace memlife::analysis
