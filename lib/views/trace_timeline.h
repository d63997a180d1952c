// One pass over a trace that keeps what the views draw: live and reserved
// bytes over time per device, steps, collectives from issue to wait, the
// allocation sites with the highest peak, and (on request) every allocator
// event with its stack for the memory_viz export.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/reader.h"

namespace memlife::views {

// A frame as torch's memory snapshot spells it. Native frames carry the
// module path as filename and "module+0xoffset" as name.
struct Frame {
  std::string filename;
  uint64_t line = 0;
  std::string name;
};

// Times are nanoseconds since the process's trace started.
struct BytesPoint {
  uint64_t t_ns = 0;
  uint64_t bytes = 0;
};

struct DeviceTimeline {
  int64_t device = -1;
  std::vector<BytesPoint> live, reserved;
  bool has_segments = false;  // the allocator reported segments (CUDA caching)
  uint64_t peak_live = 0, peak_reserved = 0;
  uint64_t allocs = 0, frees = 0;
};

struct StepSpan {
  uint64_t step = 0;
  uint64_t t_ns = 0;  // when the mark was written; the step runs until the next mark
};

struct CollectiveSpan {
  uint64_t id = 0;
  std::string op, group;
  uint64_t bytes = 0, stack_id = 0;
  uint64_t issue_ns = 0;
  bool waited = false;
  uint64_t wait_ns = 0;
};

enum class MemAction : uint8_t {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kOom
};

struct MemEvent {
  MemAction action = MemAction::kAlloc;
  int64_t device = -1;
  uint64_t addr = 0, size = 0, stream = 0, t_ns = 0, stack_id = 0;
  uint64_t device_free = 0;  // oom only
};

struct LiveBlock {
  int64_t device = -1;
  uint64_t addr = 0, size = 0, stream = 0, stack_id = 0, t_ns = 0;
};

struct LiveSegment {
  int64_t device = -1;
  uint64_t addr = 0, size = 0, stream = 0;
};

struct AllocSite {
  std::vector<Frame> frames;
  uint64_t peak_bytes = 0, live_bytes = 0, allocations = 0, total_bytes = 0;
};

// Live bytes over time of one allocation site on one device.
struct SiteTimeline {
  std::vector<Frame> frames;
  int64_t device = -1;
  uint64_t peak_bytes = 0;
  std::vector<BytesPoint> live;
};

struct TimelineOptions {
  bool keep_events = false;  // fill TraceTimeline::events (memory_viz export)
  size_t top_sites = 20;
  size_t stacked_sites = 6;  // sites whose live bytes the report stacks
  size_t max_native_frames = 16;
};

struct TraceTimeline {
  std::string path;
  format::TraceHeader header;
  int64_t rank = -1;
  std::string torch_version;
  bool truncated = false;
  std::string stop_reason;
  uint64_t end_ns = 0;
  // When the program's own work starts: its first op, tensor or allocation
  // (before it, the interpreter starts and imports torch).
  uint64_t work_start_ns = 0;
  uint64_t allocs = 0, frees = 0, records = 0;

  std::vector<DeviceTimeline> devices;  // sorted by device, CPU (-1) first
  std::vector<StepSpan> steps;
  std::vector<CollectiveSpan> collectives;  // in issue order
  std::vector<AllocSite> top_sites;         // highest peak first
  // The sites with the highest peak on the device with the highest peak,
  // highest first, each with its live bytes over time.
  std::vector<SiteTimeline> stacked_sites;
  std::vector<MemEvent> events;            // keep_events only, trace order
  std::vector<LiveBlock> live_blocks;      // still allocated at the end, by address
  std::vector<LiveSegment> live_segments;  // still reserved at the end, by address

  // Frames of a stack, innermost first; empty for 0 or an unknown id.
  const std::vector<Frame>& frames(uint64_t stack_id) const;
  std::unordered_map<uint64_t, std::vector<Frame>> stack_frames;
};

// Reads the trace at `path`. Returns false with a one-line error when the
// file cannot be opened as a trace; a truncated or damaged trace is read up
// to the damage and marked truncated.
bool load_timeline(const std::string& path, const TimelineOptions& options, TraceTimeline& out,
                   std::string& error);

// At most about `max_points` points that keep every local maximum visible:
// each time bucket keeps its highest value and the value it ends on.
std::vector<BytesPoint> downsample_keep_peaks(const std::vector<BytesPoint>& points,
                                              size_t max_points);

// "cpu" or "cuda:N".
std::string device_name(int64_t device);

}  // namespace memlife::views
