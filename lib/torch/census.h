// PluginHooks::census: every live tracked tensor, grouped by storage, with
// the bytes each can reach and the storage's strong reference count.
#pragma once

#include "memlife/trace_format.h"

namespace memlife::torch_plugin {

void write_census(CensusReason reason);

// In a forked child: its trace starts with a whole census.
void reset_census_after_fork();

}  // namespace memlife::torch_plugin
