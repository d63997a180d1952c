// Checks across the ranks of one run, over the per-process results:
// collective sequences that diverge, ranks whose memory stands out, and the
// folding of a finding every rank has into one finding naming the ranks.
// Only processes that know their rank take part (a launcher does not).
#pragma once

#include <vector>

#include "analysis/analyze.h"

namespace memlife::analysis {

struct CrossRankOptions {
  // A rank is imbalanced when its peak (or end-of-run live) bytes differ
  // from the median rank's by more than this fraction of the median and by
  // more than min_bytes (tiny CPU runs jitter by a few KiB).
  double imbalance_ratio = 0.25;
  uint64_t imbalance_min_bytes = 1u << 20;
};

// collective_mismatch: per group, the first index k where the ranks' k-th
// calls differ in op or bytes, or where some member rank has no k-th call.
std::vector<Finding> collective_mismatches(const std::vector<const ProcessAnalysis*>& ranks);

// rank_imbalance: one finding per metric (peak_bytes, live_bytes_at_end).
std::vector<Finding> rank_imbalances(const std::vector<const ProcessAnalysis*>& ranks,
                                     const CrossRankOptions& options);

// Removes from every rank the findings all ranks share (same kind, op,
// group and first stack frames) and returns them folded: counts and bytes
// summed, evidence.per_rank with each rank's own numbers.
std::vector<Finding> fold_every_rank(std::vector<ProcessAnalysis*>& ranks);

// All of the above, per run (header run_id: ranks of different runs are
// never compared), in place: returns the run-level findings; the folded
// ones are removed from the processes.
std::vector<Finding> cross_rank_findings(std::vector<ProcessAnalysis>& processes,
                                         const CrossRankOptions& options);

}  // namespace memlife::analysis
