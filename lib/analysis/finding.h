// A finding: one problem a detector saw, with the evidence a person needs to
// act on it. Detectors fill these; the report adds the process identity.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memlife::analysis {

inline constexpr const char* kResidualView = "residual_view";
inline constexpr const char* kUnwaitedCollective = "unwaited_collective";
inline constexpr const char* kUseBeforeWait = "use_before_wait";
inline constexpr const char* kStepGrowth = "step_growth";
inline constexpr const char* kUnexplainedHolder = "unexplained_holder";
inline constexpr const char* kExpectFreed = "expect_freed";
inline constexpr const char* kLeakedAtExit = "leaked_at_exit";
// Memory a `memlife.record()` block made and still holds at its end.
inline constexpr const char* kLeakedByBlock = "leaked_by_block";
// Cross-rank kinds (whole run, not one process).
inline constexpr const char* kCollectiveMismatch = "collective_mismatch";
inline constexpr const char* kRankImbalance = "rank_imbalance";

// Every kind, in the order the documentation lists them.
const std::vector<std::string>& all_finding_kinds();
// The severity a kind gets unless the user gates otherwise: "error" kinds
// fail `memlife check` by default, "warning" kinds do not.
const char* default_severity(const std::string& kind);

struct Finding {
  std::string kind;
  std::string severity;
  uint64_t bytes = 0;        // memory this finding keeps (or kept) alive
  uint64_t count = 1;        // occurrences grouped into this finding
  uint64_t retained_ns = 0;  // how long the bytes were held
  std::string message;       // one line a person understands
  // Free-form details plus the common keys: "storage", "tensors", "steps",
  // "stacks" (each a list of frames, see report.schema.json).
  nlohmann::json evidence = nlohmann::json::object();
  // Set on findings about several processes (cross-rank, or the same
  // finding on every rank); empty for a finding of one process.
  std::vector<int64_t> ranks;
  std::vector<uint64_t> pids;

  // The allocations this finding keeps alive, as (allocation sequence
  // number, bytes): what "one storage, one finding" compares. Not written
  // to the report.
  struct Retained {
    uint64_t alloc_seq = 0, bytes = 0;
  };
  std::vector<Retained> retains;
  // The record that showed a problem that retains no memory (a read before
  // a wait): what `--block` compares; 0 when not given.
  uint64_t seen_seq = 0;
  // A finding that only adds evidence to the finding that retains the same
  // memory (a census's unexplained references): never reported alone.
  bool evidence_only = false;

  // Sort key: retained bytes x time (a finding without a duration counts
  // as one nanosecond).
  double weight() const {
    return static_cast<double>(bytes) * static_cast<double>(retained_ns ? retained_ns : 1);
  }
};

}  // namespace memlife::analysis
