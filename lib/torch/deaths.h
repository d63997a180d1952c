// Tensor deaths written when they happen: a background thread sweeps the
// identity tables every flush interval, so the analyzer knows when an owner
// let go of a storage that its views keep (residual_view) without waiting
// for a census, a step or the storage's free.
#pragma once

namespace memlife::torch_plugin {

// One sweep: tensors destroyed while their storage lives on, then (with the
// GIL, when Python runs and views are alive) tensors the program's Python
// code let go of that live only as views' `_base`. Callable from any thread,
// also inside a hook (the census calls it first).
void sweep_deaths();

// Starts the sweeping thread once per process (again in a forked child).
void ensure_death_sweeper();

// In a forked child: the parent's sweeper did not come along.
void reset_death_sweeper_after_fork();

}  // namespace memlife::torch_plugin
