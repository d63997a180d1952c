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

// Fork: no thread is switching torch's RecordFunction on or off while the
// process forks (a switch takes a torch mutex a fork would leave locked).
void hold_record_function_switches_for_fork();
void release_record_function_switches_after_fork();
void reset_op_observer_after_fork();

}  // namespace memlife::torch_plugin
