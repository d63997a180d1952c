// A process's trace as the pickle torch.cuda.memory._dump_snapshot writes,
// so PyTorch's memory viewer (pytorch.org/memory_viz, and the
// torch.cuda._memory_viz helpers) opens it.
//
// Device numbering: the snapshot indexes `device_traces` by CUDA device and
// the viewer has no notion of host memory. CUDA devices keep their index;
// CPU storages, when included, get the next index after the highest CUDA
// device (index 0 in a CPU-only trace), and the top-level "memlife" dict
// names every index ({"devices": {"0": "cpu"}}). The CPU allocator has no
// cache, so each CPU allocation is written as its own segment
// (segment_alloc before the alloc, segment_free after the free) and the
// viewer's reserved memory equals live memory there.
#pragma once

#include <cstdint>
#include <string>

#include "views/trace_timeline.h"

namespace memlife::views {

struct SnapshotOptions {
  bool include_cpu = true;
  // Keep only the last N events of each device, like torch's ring buffer
  // (trace_alloc_max_entries); 0 keeps all.
  size_t max_events_per_device = 0;
};

struct SnapshotSummary {
  size_t segments = 0, blocks = 0, events = 0, alloc_events = 0, free_events = 0;
  int cpu_index = -1;  // -1 when CPU memory was left out or absent
};

// `timeline` must have been loaded with keep_events.
std::string torch_snapshot_pickle(const TraceTimeline& timeline, const SnapshotOptions& options,
                                  SnapshotSummary* summary = nullptr);

}  // namespace memlife::views
