// Chrome trace-event JSON ({"traceEvents": [...]}) that Perfetto
// (ui.perfetto.dev) and chrome://tracing open: per process a counter track
// per device for live bytes (and reserved bytes where the allocator reports
// segments), a slice per step, a slice at each collective's issue and wait
// joined by a flow arrow, and an instant event per finding.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "views/trace_timeline.h"

namespace memlife::views {

struct PerfettoOptions {
  size_t max_counter_points = 100000;  // per counter track; peaks are kept
};

// Thread ids of the fixed tracks inside each process.
inline constexpr int kStepsTrack = 1;
inline constexpr int kIssueTrack = 2;
inline constexpr int kWaitTrack = 3;
inline constexpr int kFindingsTrack = 4;

// `report` is the analyzer's JSON report or null; its findings are matched
// to processes by pid.
nlohmann::json perfetto_trace(const std::vector<TraceTimeline>& timelines,
                              const nlohmann::json& report, const PerfettoOptions& options);

// Nanoseconds since the process started that a finding's steps cover, from
// the start of its first step to the end of its last; the end of the trace
// when the finding names no steps.
struct TimeRange {
  uint64_t begin_ns = 0, end_ns = 0;
};
TimeRange finding_time_range(const TraceTimeline& timeline, const nlohmann::json& finding);

// JSON text that survives any bytes taken from a trace (invalid UTF-8 is
// replaced).
std::string dump_json(const nlohmann::json& j, int indent = -1);

}  // namespace memlife::views
