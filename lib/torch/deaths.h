// Tensor deaths written when they happen: a background thread sweeps the
// identity tables every flush interval, so the analyzer knows when an owner
// let go of a storage that its views keep (residual_view) without waiting
// for a census, a step or the storage's free.
#pragma once

namespace memlife::torch_plugin {

// One sweep: tensors destroyed while their storage lives on, then (with the
// GIL, when Python runs and views are alive) tensors the program's Python
// code let go of that live only as views' `_base`. Callable from any thread,
// also inside a hook. The periodic sweeper makes one pass over the tables
// (a cascade of deaths goes at its next sweep, 50 ms later); the census,
// which must see every death before it, follows cascades (kCensusPasses).
inline constexpr int kPeriodicPasses = 1;
inline constexpr int kCensusPasses = 4;
void sweep_deaths(int passes);

// Starts the sweeping thread once per process (again in a forked child).
void ensure_death_sweeper();

// In a forked child: the parent's sweeper did not come along.
void reset_death_sweeper_after_fork();

}  // namespace memlife::torch_plugin
