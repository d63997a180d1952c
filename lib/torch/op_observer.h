// The global RecordFunction observer: ops, the tensors they take and make,
// collectives and their waits, optimizer steps.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlife::torch_plugin {

void install_op_observer();
// Only an empty callback with the same needs and scopes: the overhead
// floor of RecordFunction itself (MEMLIFE_TORCH_FLOOR=1).
void install_floor_observer();

// Work.wait() seen from Python, with the TensorImpls of the work's tensors.
void record_work_wait(const uintptr_t* tensor_impls, size_t count);

// Fork: no thread is inside a call that takes one of torch's process-wide
// locks (switching RecordFunction, looking up an operator) while the
// process forks: the child would find that lock taken for good.
void hold_torch_calls_for_fork();
void release_torch_calls_after_fork();
void reset_op_observer_after_fork();

}  // namespace memlife::torch_plugin
