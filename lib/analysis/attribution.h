// One retained storage, one finding. Several detectors can see the same
// bytes (a residual view's storage is also live at exit; an unwaited
// collective's output also grows per step): each allocation is reported
// once, by the most specific cause, and what the other detectors saw of it
// goes into that finding's evidence ("also_seen_as").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/finding.h"
#include "analysis/model.h"
#include "analysis/stacks.h"

namespace memlife::analysis {

// Rank of a kind as a cause of retained memory: lower is more specific.
// Kinds that retain nothing (use_before_wait) are never merged.
int cause_rank(const std::string& kind);

// Rewrites one process's findings in place: a finding whose retained
// allocations were all claimed by a more specific one is folded into it;
// one that keeps some unclaimed allocations keeps only those (bytes and
// count follow); evidence-only findings are folded and never kept alone.
void attribute_retained_memory(std::vector<Finding>& findings);

// Adds to each finding the Python reference paths that reached the memory
// it retains (evidence.held_by, grouped with list indices and dict keys as
// `[*]`), and names the first in its message.
// A holder mark's label: the path, then one `file:line` per line after it
// (see MarkKind::kHolder).
HolderPath parse_holder_label(std::string_view label, uint64_t step);

// Whether a later walk's path for an allocation is the same container as an
// earlier walk's that carried a running loop's bound (`<list loop_line=N>`),
// without it: the loop has ended (a script's module-level epoch loop, seen
// again by the exit walk), and the bound it gave still says what the
// container held.
bool loses_a_loop_bound(std::string_view earlier, std::string_view later);

// A finding about memory at the end (a block's, the process's) names only
// paths no later complete walk lost (Model::holder_gone); growth names the
// holder it had while it grew.
void name_holders(std::vector<Finding>& findings, const Model& m);

// Growth no maintainer would call a leak leaves the findings and is
// returned as the process's "growth_set_aside" entries, each saying why:
// - "bounded": held (at least 90 % of its named bytes, less what a variable
//   holds now: the last step's batch) by containers that evict by
//   themselves (a deque with a maxlen, an lru_cache with a maxsize: a
//   replay buffer, a bounded cache still filling) or have a bound by
//   design (an ignite engine's epoch, a dataset's length, the pass of a
//   running loop that makes them anew, unless they keep autograd graphs);
// - "numbers": each allocation it keeps is one number (at most 8 bytes)
//   that a named holder keeps with no autograd graph: a record of the run
//   kept by design (fastai's Recorder.losses, a detached loss history);
// - "collective_buffers": no Python path holds it (but a slot that held
//   one allocation when a walk ran: the gradient the walk saw while it was
//   the parameter's, all-reduced and stashed by the backend after
//   zero_grad) and (at least 90 % of) it is the buffers of collectives,
//   which the backend keeps after their wait until it reaps their works
//   (ProcessGroupNCCL's watchdog, every few hundred milliseconds: a short
//   run sees a rise, a long one a sawtooth). A program that keeps them in
//   a container is named by the holder walk;
// - "cyclic_garbage": no Python path holds it (as above) and (at least
//   90 % of) it was freed by the exit walk's gc.collect(): garbage on
//   reference cycles that the program's collector had not freed yet
//   (torchtitan disables it and collects every gc_freq steps);
// - "metric_reset", "epoch_end": growth (90 %) that a torchmetrics reset()
//   or the end of a training epoch freed (the Python hooks mark both): it
//   grew for the period the program chose;
// - "replaced": a memlife.record() block's leak that replaces as much
//   memory an earlier call made by the same code and the same container
//   held, which the block freed (a framework keeping its last call's
//   results): one call's worth, not an accumulation.
nlohmann::json set_aside_growth(std::vector<Finding>& findings);

// For findings that say memory stayed (growth, a block's leak, a broken
// expectation) and whose memory no Python path named: the tensors that
// held it at the last census, when a custom (non-aten) op made them (an
// extension's C++ registry, DeepCompile's gathered parameters), go to
// evidence.held_in_cxx with the op and its Python call site, and the op
// into the message.
void name_cxx_holders(std::vector<Finding>& findings, const Model& m, StackResolver& stacks);

// Growth that neither a Python path nor a custom op's tensors name, made
// before a complete holder walk that did not reach it: the message says so
// and evidence.holder_search says which walk looked and what no walk
// enters, so that the reader looks in C++ rather than in the program.
void say_what_no_walk_reached(std::vector<Finding>& findings, const Model& m);

}  // namespace memlife::analysis
