#include "views/torch_snapshot.h"

#include <algorithm>
#include <map>

#include "views/pickle_writer.h"

namespace memlife::views {

namespace {

constexpr uint64_t kLargeSegmentBytes = 1 << 20;  // torch's small/large pool split

const char* action_name(MemAction a) {
  switch (a) {
    case MemAction::kAlloc:
      return "alloc";
    case MemAction::kFreeRequested:
      return "free_requested";
    case MemAction::kFreeCompleted:
      return "free_completed";
    case MemAction::kSegmentAlloc:
      return "segment_alloc";
    case MemAction::kSegmentFree:
      return "segment_free";
    case MemAction::kOom:
      return "oom";
  }
  return "oom";
}

class SnapshotWriter {
 public:
  SnapshotWriter(const TraceTimeline& t, const SnapshotOptions& o, SnapshotSummary& s)
      : t_(t), options_(o), summary_(s) {
    int64_t max_cuda = -1;
    bool has_cpu = false;
    for (const DeviceTimeline& d : t.devices) {
      if (d.device >= 0) {
        max_cuda = std::max(max_cuda, d.device);
      } else {
        has_cpu = true;
      }
      segmented_[d.device] = d.has_segments;
    }
    if (has_cpu && options_.include_cpu) summary_.cpu_index = static_cast<int>(max_cuda + 1);
    device_count_ = static_cast<size_t>(std::max<int64_t>(max_cuda + 1, summary_.cpu_index + 1));
  }

  std::string write() {
    w_.begin_dict();
    w_.key("segments");
    write_segments();
    w_.key("device_traces");
    write_traces();
    w_.key("allocator_settings");
    w_.begin_dict();
    w_.end_dict();
    w_.key("memlife");
    write_identity();
    w_.end_dict();
    return w_.finish();
  }

 private:
  // Snapshot index of a trace device, -1 when left out.
  int64_t index_of(int64_t device) const {
    if (device >= 0) return device;
    return summary_.cpu_index;
  }
  bool segmented(int64_t device) const {
    auto it = segmented_.find(device);
    return it != segmented_.end() && it->second;
  }

  void frames(uint64_t stack_id) {
    if (stack_id == 0) {
      w_.begin_list();
      w_.end_list();
      return;
    }
    if (auto it = memo_.find(stack_id); it != memo_.end()) return w_.get(it->second);
    w_.begin_list();
    for (const Frame& f : t_.frames(stack_id)) {
      w_.begin_dict();
      w_.key("filename");
      w_.str(f.filename);
      w_.key("line");
      w_.unsigned_integer(f.line);
      w_.key("name");
      w_.str(f.name);
      w_.end_dict();
    }
    w_.end_list();
    memo_[stack_id] = w_.put();
  }

  void block(uint64_t addr, uint64_t size, uint64_t requested, bool active, uint64_t stack) {
    w_.begin_dict();
    w_.key("address");
    w_.unsigned_integer(addr);
    w_.key("size");
    w_.unsigned_integer(size);
    w_.key("requested_size");
    w_.unsigned_integer(requested);
    w_.key("state");
    w_.str(active ? "active_allocated" : "inactive");
    w_.key("frames");
    frames(active ? stack : 0);
    w_.end_dict();
    ++summary_.blocks;
  }

  void segment(int64_t index, uint64_t addr, uint64_t size, uint64_t stream,
               const std::vector<const LiveBlock*>& blocks) {
    uint64_t allocated = 0;
    for (const LiveBlock* b : blocks) allocated += b->size;
    w_.begin_dict();
    w_.key("device");
    w_.integer(index);
    w_.key("address");
    w_.unsigned_integer(addr);
    w_.key("total_size");
    w_.unsigned_integer(size);
    w_.key("allocated_size");
    w_.unsigned_integer(allocated);
    w_.key("active_size");
    w_.unsigned_integer(allocated);
    w_.key("requested_size");
    w_.unsigned_integer(allocated);
    w_.key("stream");
    w_.unsigned_integer(stream);
    w_.key("segment_type");
    w_.str(size >= kLargeSegmentBytes ? "large" : "small");
    w_.key("segment_pool_id");
    w_.begin_list();
    w_.integer(0);
    w_.integer(0);
    w_.end_list();
    w_.key("is_expandable");
    w_.boolean(false);
    w_.key("frames");
    frames(0);
    // Blocks tile the segment: the viewer derives each block's address
    // from the segment's address plus the sizes before it.
    w_.key("blocks");
    w_.begin_list();
    uint64_t at = addr;
    for (const LiveBlock* b : blocks) {
      if (b->addr > at) block(at, b->addr - at, 0, false, 0);
      const uint64_t size_in = std::min(b->size, addr + size - b->addr);
      block(b->addr, size_in, size_in, true, b->stack_id);
      at = b->addr + size_in;
    }
    if (at < addr + size) block(at, addr + size - at, 0, false, 0);
    w_.end_list();
    w_.end_dict();
    ++summary_.segments;
  }

  void write_segments() {
    w_.begin_list();
    // Live blocks of segmented devices go into the segment that holds them;
    // the rest (CPU, or blocks whose segment the trace never saw) become a
    // segment of their own.
    std::vector<const LiveBlock*> loose;
    std::map<uint64_t, std::vector<const LiveBlock*>> in_segment;  // by segment address
    for (const LiveBlock& b : t_.live_blocks) {
      if (index_of(b.device) < 0) continue;
      const LiveSegment* holder = nullptr;
      if (segmented(b.device)) {
        auto it = std::upper_bound(t_.live_segments.begin(), t_.live_segments.end(), b.addr,
                                   [](uint64_t a, const LiveSegment& s) { return a < s.addr; });
        if (it != t_.live_segments.begin()) {
          --it;
          if (it->device == b.device && b.addr < it->addr + it->size) holder = &*it;
        }
      }
      if (holder) {
        in_segment[holder->addr].push_back(&b);
      } else {
        loose.push_back(&b);
      }
    }
    for (const LiveSegment& s : t_.live_segments) {
      if (index_of(s.device) < 0) continue;
      segment(index_of(s.device), s.addr, s.size, s.stream, in_segment[s.addr]);
    }
    for (const LiveBlock* b : loose) segment(index_of(b->device), b->addr, b->size, b->stream, {b});
    w_.end_list();
  }

  void event(const MemEvent& e, MemAction action) {
    w_.begin_dict();
    w_.key("action");
    w_.str(action_name(action));
    w_.key("addr");
    w_.unsigned_integer(e.addr);
    w_.key("size");
    w_.unsigned_integer(e.size);
    w_.key("stream");
    w_.unsigned_integer(e.stream);
    w_.key("time_us");
    w_.unsigned_integer((t_.header.start_wall_ns + e.t_ns) / 1000);
    if (action == MemAction::kOom) {
      w_.key("device_free");
      w_.unsigned_integer(e.device_free);
    }
    w_.key("frames");
    frames(action == MemAction::kSegmentAlloc || action == MemAction::kSegmentFree ? 0
                                                                                   : e.stack_id);
    w_.end_dict();
    ++summary_.events;
    if (action == MemAction::kAlloc) ++summary_.alloc_events;
    if (action == MemAction::kFreeCompleted) ++summary_.free_events;
  }

  void write_traces() {
    std::vector<std::vector<const MemEvent*>> per_device(device_count_);
    for (const MemEvent& e : t_.events) {
      const int64_t index = index_of(e.device);
      if (index >= 0) per_device[static_cast<size_t>(index)].push_back(&e);
    }
    w_.begin_list();
    for (auto& events : per_device) {
      size_t first = 0;
      if (options_.max_events_per_device && events.size() > options_.max_events_per_device)
        first = events.size() - options_.max_events_per_device;
      w_.begin_list();
      for (size_t i = first; i < events.size(); ++i) {
        const MemEvent& e = *events[i];
        const bool synthetic_segments = !segmented(e.device);
        if (synthetic_segments && e.action == MemAction::kAlloc) event(e, MemAction::kSegmentAlloc);
        event(e, e.action);
        if (synthetic_segments && e.action == MemAction::kFreeCompleted)
          event(e, MemAction::kSegmentFree);
      }
      w_.end_list();
    }
    w_.end_list();
  }

  void write_identity() {
    w_.begin_dict();
    w_.key("trace");
    w_.str(t_.path);
    w_.key("pid");
    w_.unsigned_integer(t_.header.pid);
    w_.key("rank");
    w_.integer(t_.rank);
    w_.key("host");
    w_.str(t_.header.host);
    w_.key("truncated");
    w_.boolean(t_.truncated);
    w_.key("devices");
    w_.begin_dict();
    for (size_t i = 0; i < device_count_; ++i) {
      w_.key(std::to_string(i));
      w_.str(static_cast<int>(i) == summary_.cpu_index ? "cpu"
                                                       : device_name(static_cast<int64_t>(i)));
    }
    w_.end_dict();
    w_.end_dict();
  }

  const TraceTimeline& t_;
  const SnapshotOptions& options_;
  SnapshotSummary& summary_;
  PickleWriter w_;
  std::map<int64_t, bool> segmented_;
  std::unordered_map<uint64_t, uint32_t> memo_;
  size_t device_count_ = 0;
};

}  // namespace

std::string torch_snapshot_pickle(const TraceTimeline& timeline, const SnapshotOptions& options,
                                  SnapshotSummary* summary) {
  SnapshotSummary local;
  SnapshotSummary& s = summary ? *summary : local;
  s = SnapshotSummary{};
  return SnapshotWriter(timeline, options, s).write();
}

}  // namespace memlife::views
