#include "analysis/finding.h"

namespace memlife::analysis {

const std::vector<std::string>& all_finding_kinds() {
  static const std::vector<std::string> kinds = {
      kResidualView, kUnwaitedCollective, kUseBeforeWait, kStepGrowth,         kUnexplainedHolder,
      kExpectFreed,  kLeakedAtExit,       kLeakedByBlock, kCollectiveMismatch, kRankImbalance};
  return kinds;
}

const char* default_severity(const std::string& kind) {
  if (kind == kUnexplainedHolder || kind == kLeakedAtExit || kind == kRankImbalance)
    return "warning";
  return "error";
}

}  // namespace memlife::analysis
