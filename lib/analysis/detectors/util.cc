#include "analysis/detectors/util.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/detector.h"

namespace memlife::analysis {

uint64_t peak_held_bytes(const std::vector<HeldInterval>& intervals) {
  // Sweep: +bytes at each begin, -bytes at each end; at equal sequence
  // numbers the ends come first (half-open intervals).
  std::vector<std::pair<uint64_t, int64_t>> edges;
  edges.reserve(2 * intervals.size());
  for (const HeldInterval& h : intervals) {
    edges.push_back({h.begin, static_cast<int64_t>(h.bytes)});
    edges.push_back({h.end, -static_cast<int64_t>(h.bytes)});
  }
  std::sort(edges.begin(), edges.end());
  int64_t live = 0, peak = 0;
  for (const auto& [seq, delta] : edges) peak = std::max(peak, live += delta);
  return static_cast<uint64_t>(peak);
}

uint64_t union_bytes(std::vector<ByteRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
  uint64_t total = 0, cur_begin = 0, cur_end = 0;
  bool open = false;
  for (const ByteRange& r : ranges) {
    if (r.end <= r.begin) continue;
    if (open && r.begin <= cur_end) {
      cur_end = std::max(cur_end, r.end);
      continue;
    }
    if (open) total += cur_end - cur_begin;
    cur_begin = r.begin;
    cur_end = r.end;
    open = true;
  }
  if (open) total += cur_end - cur_begin;
  return total;
}

std::string format_bytes(uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::vector<std::unique_ptr<Detector>> make_all_detectors(const AnalysisOptions& o) {
  std::vector<std::unique_ptr<Detector>> all;
  all.push_back(make_residual_view_detector(o));
  all.push_back(make_unwaited_collective_detector(o));
  all.push_back(make_use_before_wait_detector(o));
  all.push_back(make_step_growth_detector(o));
  all.push_back(make_unexplained_holder_detector(o));
  all.push_back(make_expect_freed_detector(o));
  all.push_back(make_leaked_at_exit_detector(o));
  all.push_back(make_leaked_by_block_detector(o));
  return all;
}

HeldSites describe_held_allocations(const Model& m, StackResolver& stacks,
                                    std::vector<const Allocation*> allocations, Finding& f) {
  std::sort(allocations.begin(), allocations.end(),
            [](const Allocation* x, const Allocation* y) { return x->at.seq < y->at.seq; });
  struct Site {
    uint64_t stack_id = 0, bytes = 0;
  };
  std::map<std::string, Site> sites;  // by stack key
  f.count = allocations.size();
  f.retained_ns = m.last_time_ns - std::min(m.last_time_ns, allocations.front()->at.time_ns);
  nlohmann::json list = nlohmann::json::array();
  for (const Allocation* a : allocations) {
    f.bytes += a->bytes;
    f.retains.push_back({a->at.seq, a->bytes});
    Site& site = sites[stacks.key(a->stack_id)];
    site.stack_id = site.stack_id ? site.stack_id : a->stack_id;
    site.bytes += a->bytes;
    if (list.size() < 64)
      list.push_back({{"address", a->address},
                      {"bytes", a->bytes},
                      {"device", a->device},
                      {"storage_id", a->storage_id}});
  }
  std::vector<const Site*> by_bytes;
  by_bytes.reserve(sites.size());
  for (const auto& [key, site] : sites) by_bytes.push_back(&site);
  std::sort(by_bytes.begin(), by_bytes.end(),
            [](const Site* x, const Site* y) { return x->bytes > y->bytes; });
  nlohmann::json stack_list = nlohmann::json::array();
  nlohmann::json roles = nlohmann::json::array();
  for (size_t i = 0; i < by_bytes.size() && i < 8; ++i) {
    stack_list.push_back(stacks.frames(by_bytes[i]->stack_id));
    roles.push_back("allocation");
  }
  f.evidence["allocations"] = std::move(list);
  f.evidence["stacks"] = std::move(stack_list);
  f.evidence["stack_roles"] = std::move(roles);
  f.evidence["steps"] = nlohmann::json::array({allocations.front()->at.step});
  return {stacks.user_line(by_bytes.front()->stack_id), by_bytes.size() - 1};
}

std::string container_of(const std::string& path) {
  size_t cut = path.find('[');
  for (const char* link : {".grad_fn", ".grad", ".__traceback__", ".__context__"})
    cut = std::min(cut, path.find(link));
  return path.substr(0, cut);
}

}  // namespace memlife::analysis
