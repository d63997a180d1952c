// A detector watches the replayed timeline through these hooks and, at the
// end, turns what it saw into findings. Hooks run in trace order with the
// model already updated by the event (on_free: just before the allocation
// and its storage are dropped).
#pragma once

#include <memory>
#include <vector>

#include "analysis/finding.h"
#include "analysis/model.h"
#include "analysis/stacks.h"

namespace memlife::analysis {

struct AnalysisOptions {
  uint64_t warmup_steps = 2;
  // Consecutive step-to-step increases that make a step_growth finding.
  uint64_t growth_steps = 3;
  // Judge only the N-th `memlife.record()` block of each process (0: the
  // whole trace): the replay stops at the block's end as at an exit, and
  // findings keep only memory made (or problems seen) inside the block.
  uint64_t block = 0;
};

class Detector {
 public:
  virtual ~Detector() = default;
  virtual void on_alloc(const Model&, const Allocation&) {}
  // `storage` is null when no tensor ever named the allocation.
  virtual void on_free(const Model&, const Allocation&, const Storage* storage, const When& at) {}
  virtual void on_op_begin(const Model&, const format::OpBeginRecord&, const When& at,
                           uint64_t stream) {}
  virtual void on_op_end(const Model&, const format::OpEndRecord&, uint64_t stream) {}
  // Every collective issue, including those that completed on return (not
  // tracked as in flight); runs before on_collective_issue.
  virtual void on_collective_call(const Model&, const Collective&, bool in_flight) {}
  virtual void on_collective_issue(const Model&, const Collective&) {}
  // `matched` is null for a wait that matches no collective in flight; the
  // collective is removed from the model after the hook.
  virtual void on_collective_wait(const Model&, const format::CollectiveWaitRecord&,
                                  const Collective* matched, const When& at) {}
  virtual void on_step(const Model&, const StepMark&) {}
  virtual void on_mark(const Model&, const format::MarkRecord&, const When& at) {}
  // A census is complete (its end record was read).
  virtual void on_census(const Model&, const Census&) {}
  // The trace ended (cleanly, or cut short when `truncated`).
  virtual void finish(const Model&, bool truncated, StackResolver&, std::vector<Finding>& out) = 0;
};

std::unique_ptr<Detector> make_residual_view_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_unwaited_collective_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_use_before_wait_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_step_growth_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_unexplained_holder_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_expect_freed_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_leaked_at_exit_detector(const AnalysisOptions&);
std::unique_ptr<Detector> make_leaked_by_block_detector(const AnalysisOptions&);

// Tensor memory still allocated when the trace ended, by site: reachable
// (module globals, caches) rather than leaked; the process entry's
// "still_reachable_at_exit".
nlohmann::json still_reachable_summary(const Model& m, StackResolver& stacks);

std::vector<std::unique_ptr<Detector>> make_all_detectors(const AnalysisOptions&);

// Ops whose outputs are views of their inputs (they read no data).
bool is_view_op(std::string_view name);
// c10d and functional-collective ops, wait_tensor, gloo/nccl ranges.
bool is_collective_op(std::string_view name);

// The trend step_growth looks for in one site's live bytes at the step
// marks: [begin, end] is the growing window, `increases` the steps in it
// whose bytes rose.
struct GrowthTrend {
  bool grows = false;
  size_t begin = 0, end = 0;
  uint64_t increases = 0;
};
GrowthTrend growth_trend(const std::vector<uint64_t>& samples, uint64_t min_increases);

// Human-readable byte count ("12.0 MiB") for messages.
std::string format_bytes(uint64_t bytes);

}  // namespace memlife::analysis
