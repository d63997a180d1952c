#include "views/trace_timeline.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>

#include "format/trace_tables.h"
#include "symbols/symbolizer.h"

namespace memlife::views {

namespace {

using format::Record;
using memlife::RecordKind;

struct DeviceState {
  DeviceTimeline timeline;
  uint64_t live = 0, reserved = 0;
};

class Builder {
 public:
  Builder(const TimelineOptions& options, TraceTimeline& out) : options_(options), out_(out) {}

  bool on_record(const Record& r) {
    ++out_.records;
    now_ = r.header.time_ns > start_ ? r.header.time_ns - start_ : 0;
    out_.end_ns = std::max(out_.end_ns, now_);
    if (!work_started_ &&
        (r.header.kind == RecordKind::kOpBegin || r.header.kind == RecordKind::kTensor ||
         r.header.kind == RecordKind::kAlloc || r.header.kind == RecordKind::kSegmentAlloc)) {
      work_started_ = true;
      out_.work_start_ns = now_;
    }
    switch (r.header.kind) {
      case RecordKind::kProcess:
        if (r.process.rank >= 0) out_.rank = r.process.rank;
        if (!r.process.torch_version.empty()) out_.torch_version = r.process.torch_version;
        break;
      case RecordKind::kModule:
      case RecordKind::kString:
      case RecordKind::kFrame:
        tables_.add(r);
        break;
      case RecordKind::kStack:
        tables_.add(r);
        site_of_stack_[r.stack.id] = site_for(r.stack.id);
        break;
      case RecordKind::kAlloc:
        on_alloc(r.alloc);
        break;
      case RecordKind::kTensor:
        on_tensor(r.tensor);
        break;
      case RecordKind::kFree:
        on_free(r.free);
        break;
      case RecordKind::kSegmentAlloc:
      case RecordKind::kSegmentFree:
        on_segment(r.header.kind == RecordKind::kSegmentAlloc, r.segment);
        break;
      case RecordKind::kOom:
        if (options_.keep_events)
          out_.events.push_back({MemAction::kOom, r.oom.device, 0, r.oom.bytes_requested, 0, now_,
                                 0, r.oom.device_free});
        break;
      case RecordKind::kMark:
        if (r.mark.kind == MarkKind::kStep) out_.steps.push_back({r.mark.step, now_});
        break;
      case RecordKind::kCollectiveIssue: {
        const auto& c = r.collective_issue;
        pending_[c.collective_id] = out_.collectives.size();
        out_.collectives.push_back(
            {c.collective_id, str(c.op_string), str(c.group_string), c.bytes, c.stack_id, now_});
        break;
      }
      case RecordKind::kCollectiveWait: {
        auto it = pending_.find(r.collective_wait.collective_id);
        if (r.collective_wait.collective_id == 0 || it == pending_.end()) break;
        CollectiveSpan& c = out_.collectives[it->second];
        c.waited = true;
        c.wait_ns = now_;
        pending_.erase(it);
        break;
      }
      default:
        break;
    }
    return true;
  }

  void set_start(uint64_t start_ns) { start_ = start_ns; }

  void finish() {
    // Native frames are symbolized once the whole module map is known.
    symbolizer_ = std::make_unique<symbols::Symbolizer>(tables_.modules());
    for (auto& [device, state] : devices_) out_.devices.push_back(std::move(state.timeline));
    for (auto& [addr, b] : live_) out_.live_blocks.push_back(b);
    std::sort(out_.live_blocks.begin(), out_.live_blocks.end(),
              [](const LiveBlock& a, const LiveBlock& b) { return a.addr < b.addr; });
    for (auto& [addr, s] : segments_) out_.live_segments.push_back(s);
    std::sort(out_.live_segments.begin(), out_.live_segments.end(),
              [](const LiveSegment& a, const LiveSegment& b) { return a.addr < b.addr; });

    std::vector<size_t> order(sites_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return sites_[a].peak_bytes != sites_[b].peak_bytes
                 ? sites_[a].peak_bytes > sites_[b].peak_bytes
                 : a < b;
    });
    for (size_t i = 0; i < order.size() && i < options_.top_sites; ++i) {
      Site& s = sites_[order[i]];
      if (s.allocations == 0) break;
      AllocSite site;
      site.frames = resolve(s.example_stack);
      site.peak_bytes = s.peak_bytes;
      site.live_bytes = s.live_bytes;
      site.allocations = s.allocations;
      site.total_bytes = s.total_bytes;
      out_.top_sites.push_back(std::move(site));
    }

    stack_busiest_device();

    // Frames for every stack a view may name.
    auto want = [&](uint64_t id) {
      if (id && !out_.stack_frames.count(id)) out_.stack_frames[id] = resolve(id);
    };
    for (const MemEvent& e : out_.events) want(e.stack_id);
    for (const LiveBlock& b : out_.live_blocks) want(b.stack_id);
    for (const CollectiveSpan& c : out_.collectives) want(c.stack_id);
  }

 private:
  struct Site {
    uint64_t example_stack = 0;
    uint64_t peak_bytes = 0, live_bytes = 0, allocations = 0, total_bytes = 0;
  };
  // A site's live bytes on one device, at each change.
  struct SiteSeries {
    uint64_t live = 0, peak = 0;
    std::vector<BytesPoint> points;
  };
  static constexpr size_t kUnknownSite = SIZE_MAX;

  size_t site_index_of(uint64_t stack_id) const {
    auto it = site_of_stack_.find(stack_id);
    return it == site_of_stack_.end() ? kUnknownSite : it->second;
  }
  void site_series_change(uint64_t stack_id, int64_t device, uint64_t bytes, bool added) {
    SiteSeries& s = site_series_[{site_index_of(stack_id), device}];
    s.live = added ? s.live + bytes : s.live - std::min(s.live, bytes);
    s.peak = std::max(s.peak, s.live);
    s.points.push_back({now_, s.live});
  }

  void stack_busiest_device() {
    const DeviceTimeline* busiest = nullptr;
    for (const DeviceTimeline& d : out_.devices)
      if (busiest == nullptr || d.peak_live > busiest->peak_live) busiest = &d;
    if (busiest == nullptr) return;
    std::vector<std::pair<size_t, SiteSeries*>> candidates;
    for (auto& [key, series] : site_series_)
      if (key.second == busiest->device && key.first != kUnknownSite && series.peak > 0)
        candidates.emplace_back(key.first, &series);
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      return a.second->peak != b.second->peak ? a.second->peak > b.second->peak : a.first < b.first;
    });
    if (candidates.size() > options_.stacked_sites) candidates.resize(options_.stacked_sites);
    for (auto& [site, series] : candidates)
      out_.stacked_sites.push_back({resolve(sites_[site].example_stack), busiest->device,
                                    series->peak, std::move(series->points)});
  }

  std::string str(uint64_t id) const { return std::string(tables_.str(id)); }

  // Sites are keyed by what the stack spells (TraceTables::stack_key).
  size_t site_for(uint64_t stack_id) {
    auto [it, inserted] = site_index_.emplace(tables_.stack_key(stack_id), sites_.size());
    if (inserted) sites_.push_back({});
    return it->second;
  }

  Site* site_of(uint64_t stack_id) {
    auto it = site_of_stack_.find(stack_id);
    return it == site_of_stack_.end() ? &unknown_site_ : &sites_[it->second];
  }

  DeviceState& device(int64_t d) {
    auto [it, inserted] = devices_.try_emplace(d);
    if (inserted) it->second.timeline.device = d;
    return it->second;
  }

  void point_live(DeviceState& s) {
    s.timeline.live.push_back({now_, s.live});
    s.timeline.peak_live = std::max(s.timeline.peak_live, s.live);
  }
  void point_reserved(DeviceState& s) {
    s.timeline.reserved.push_back({now_, s.reserved});
    s.timeline.peak_reserved = std::max(s.timeline.peak_reserved, s.reserved);
  }

  void on_alloc(const format::AllocRecord& a) {
    // An alloc at a live address means its free was lost: retire it first.
    if (live_.count(a.address)) drop_live(a.address);
    live_[a.address] = {a.device, a.address, a.bytes, a.stream, a.stack_id, now_};
    DeviceState& s = device(a.device);
    s.live += a.bytes;
    ++s.timeline.allocs;
    ++out_.allocs;
    point_live(s);
    Site* site = site_of(a.stack_id);
    if (site != &unknown_site_ && site->example_stack == 0) site->example_stack = a.stack_id;
    site->live_bytes += a.bytes;
    site->total_bytes += a.bytes;
    ++site->allocations;
    site->peak_bytes = std::max(site->peak_bytes, site->live_bytes);
    site_series_change(a.stack_id, a.device, a.bytes, true);
    if (options_.keep_events)
      out_.events.push_back(
          {MemAction::kAlloc, a.device, a.address, a.bytes, a.stream, now_, a.stack_id});
  }

  // CUDA allocations come without a Python stack (the caching allocator's
  // tracker runs under its lock); the tensor that owns the fresh storage
  // has one: move the block to that site.
  void on_tensor(const format::TensorRecord& t) {
    if (t.stack_id == 0 || t.data_address == 0) return;
    auto it = live_.find(t.data_address);
    if (it == live_.end() || site_of(it->second.stack_id) != &unknown_site_) return;
    Site* site = site_of(t.stack_id);
    if (site == &unknown_site_) return;
    LiveBlock& b = it->second;
    site_series_change(b.stack_id, b.device, b.size, false);
    site_series_change(t.stack_id, b.device, b.size, true);
    unknown_site_.live_bytes -= std::min(unknown_site_.live_bytes, b.size);
    unknown_site_.total_bytes -= std::min(unknown_site_.total_bytes, b.size);
    if (unknown_site_.allocations > 0) --unknown_site_.allocations;
    b.stack_id = t.stack_id;
    if (site->example_stack == 0) site->example_stack = t.stack_id;
    site->live_bytes += b.size;
    site->total_bytes += b.size;
    ++site->allocations;
    site->peak_bytes = std::max(site->peak_bytes, site->live_bytes);
  }

  void drop_live(uint64_t address) {
    auto it = live_.find(address);
    const LiveBlock b = it->second;
    live_.erase(it);
    DeviceState& s = device(b.device);
    s.live -= std::min(s.live, b.size);
    ++s.timeline.frees;
    ++out_.frees;
    point_live(s);
    Site* site = site_of(b.stack_id);
    site->live_bytes -= std::min(site->live_bytes, b.size);
    site_series_change(b.stack_id, b.device, b.size, false);
  }

  void on_free(const format::FreeRecord& f) {
    auto it = live_.find(f.address);
    const bool was_live = it != live_.end();
    const uint64_t size = was_live ? it->second.size : f.bytes;
    const uint64_t stream = was_live ? it->second.stream : 0;
    const uint64_t stack = was_live ? it->second.stack_id : 0;
    const int64_t dev = was_live ? it->second.device : f.device;
    // Live bytes drop at the first free record of a block, whatever its
    // phase: a recorder that only sees the request still shows the drop.
    if (was_live) drop_live(f.address);
    if (!options_.keep_events) return;
    if (f.phase != FreePhase::kCompleted)
      out_.events.push_back({MemAction::kFreeRequested, dev, f.address, size, stream, now_, stack});
    if (f.phase != FreePhase::kRequested)
      out_.events.push_back({MemAction::kFreeCompleted, dev, f.address, size, stream, now_, stack});
  }

  void on_segment(bool is_alloc, const format::SegmentRecord& r) {
    DeviceState& s = device(r.device);
    s.timeline.has_segments = true;
    if (is_alloc) {
      if (auto it = segments_.find(r.address); it != segments_.end())
        s.reserved -= std::min(s.reserved, it->second.size);
      segments_[r.address] = {r.device, r.address, r.bytes, r.stream};
      s.reserved += r.bytes;
    } else {
      auto it = segments_.find(r.address);
      const uint64_t size = it == segments_.end() ? r.bytes : it->second.size;
      if (it != segments_.end()) segments_.erase(it);
      s.reserved -= std::min(s.reserved, size);
    }
    point_reserved(s);
    if (options_.keep_events)
      out_.events.push_back({is_alloc ? MemAction::kSegmentAlloc : MemAction::kSegmentFree,
                             r.device, r.address, r.bytes, r.stream, now_, 0});
  }

  std::vector<Frame> resolve(uint64_t stack_id) const {
    std::vector<Frame> out;
    const format::Stack* stack = tables_.stack(stack_id);
    if (stack == nullptr) return out;
    for (uint64_t id : stack->python_frames) {
      const format::PythonFrame* f = tables_.frame(id);
      if (f == nullptr) continue;
      out.push_back({str(f->file_string), f->line, str(f->function_string)});
    }
    const auto& native = stack->native_addresses;
    for (size_t i = 0; i < native.size() && i < options_.max_native_frames; ++i)
      out.push_back(native_frame(native[i], i > 0));
    return out;
  }

  // Symbolized where the module's symbols allow: the function and its
  // source line; otherwise "module.so+0xoffset" in the module.
  Frame native_frame(uint64_t addr, bool return_address) const {
    const symbols::NativeFrame& nf = symbolizer_->symbolize(addr, return_address);
    if (nf.module.empty()) return {"??", 0, nf.function};
    const size_t slash = nf.module.rfind('/');
    const std::string base = slash == std::string::npos ? nf.module : nf.module.substr(slash + 1);
    const bool named = nf.function.rfind("0x", 0) != 0;
    return {nf.file.empty() ? nf.module : nf.file, nf.line,
            named ? nf.function : base + "+" + nf.function};
  }

  const TimelineOptions& options_;
  TraceTimeline& out_;
  uint64_t start_ = 0, now_ = 0;
  bool work_started_ = false;
  std::map<std::pair<size_t, int64_t>, SiteSeries> site_series_;  // by (site, device)
  format::TraceTables tables_;
  std::unique_ptr<symbols::Symbolizer> symbolizer_;
  std::unordered_map<std::string, size_t> site_index_;
  std::unordered_map<uint64_t, size_t> site_of_stack_;
  std::vector<Site> sites_;
  Site unknown_site_;
  std::map<int64_t, DeviceState> devices_;
  std::unordered_map<uint64_t, LiveBlock> live_;
  std::unordered_map<uint64_t, LiveSegment> segments_;
  std::unordered_map<uint64_t, size_t> pending_;
};

}  // namespace

const std::vector<Frame>& TraceTimeline::frames(uint64_t stack_id) const {
  static const std::vector<Frame> kNone;
  auto it = stack_frames.find(stack_id);
  return it == stack_frames.end() ? kNone : it->second;
}

bool load_timeline(const std::string& path, const TimelineOptions& options, TraceTimeline& out,
                   std::string& error) {
  auto reader = format::TraceReader::open(path, error);
  if (!reader) return false;
  out = TraceTimeline{};
  out.path = path;
  out.header = reader->header();
  out.rank = out.header.rank;
  out.torch_version = out.header.torch_version;
  Builder builder(options, out);
  builder.set_start(out.header.start_monotonic_ns);
  const format::ReadStatus status =
      reader->for_each([&](const format::Record& r) { return builder.on_record(r); });
  builder.finish();
  out.truncated = !status.complete;
  out.stop_reason = status.stop_reason;
  if (out.truncated && out.stop_reason.empty()) out.stop_reason = "no end record";
  return true;
}

std::vector<BytesPoint> downsample_keep_peaks(const std::vector<BytesPoint>& points,
                                              size_t max_points) {
  if (points.size() <= max_points || max_points < 4) return points;
  const size_t buckets = max_points / 2;
  const uint64_t t0 = points.front().t_ns, t1 = points.back().t_ns;
  const double width = static_cast<double>(t1 - t0 + 1) / static_cast<double>(buckets);
  std::vector<BytesPoint> out;
  out.reserve(max_points + 2);
  size_t i = 0;
  while (i < points.size()) {
    const size_t bucket = static_cast<size_t>(static_cast<double>(points[i].t_ns - t0) / width);
    BytesPoint peak = points[i], last = points[i];
    size_t j = i;
    while (j < points.size() &&
           static_cast<size_t>(static_cast<double>(points[j].t_ns - t0) / width) == bucket) {
      if (points[j].bytes > peak.bytes) peak = points[j];
      last = points[j];
      ++j;
    }
    out.push_back({points[i].t_ns, peak.bytes});
    if (j - i > 1 && (last.t_ns != points[i].t_ns || last.bytes != peak.bytes)) out.push_back(last);
    i = j;
  }
  return out;
}

std::string device_name(int64_t device) {
  return device < 0 ? std::string("cpu") : "cuda:" + std::to_string(device);
}

}  // namespace memlife::views
