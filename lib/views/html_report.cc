#include "views/html_report.h"

#include <algorithm>
#include <map>
#include <set>

#include "views/perfetto.h"
#include "views/script_json.h"
#include "views/utf8.h"

namespace memlife::views {

extern const char* const kReportTemplatePieces[];

using nlohmann::json;

namespace {

constexpr std::string_view kDataMarker = "/*MEMLIFE_DATA*/";

json frames_json(const std::vector<Frame>& frames) {
  json out = json::array();
  for (const Frame& f : frames)
    out.push_back(
        {{"filename", valid_utf8(f.filename)}, {"line", f.line}, {"name", valid_utf8(f.name)}});
  return out;
}

json series_json(const std::vector<BytesPoint>& points, size_t max_points) {
  json out = json::array();
  for (const BytesPoint& p : downsample_keep_peaks(points, max_points))
    out.push_back(json::array({p.t_ns, p.bytes}));
  return out;
}

json process_json(const TraceTimeline& t, const HtmlOptions& options) {
  json devices = json::array();
  for (const DeviceTimeline& d : t.devices) {
    devices.push_back(
        {{"name", device_name(d.device)},
         {"live", series_json(d.live, options.max_points_per_series)},
         {"reserved",
          d.has_segments ? series_json(d.reserved, options.max_points_per_series) : json(nullptr)},
         {"peak_live", d.peak_live},
         {"peak_reserved", d.peak_reserved},
         {"allocs", d.allocs},
         {"frees", d.frees}});
  }
  json steps = json::array();
  for (const StepSpan& s : t.steps) steps.push_back(json::array({s.step, s.t_ns}));
  json sites = json::array();
  for (const AllocSite& s : t.top_sites)
    sites.push_back({{"peak_bytes", s.peak_bytes},
                     {"live_bytes", s.live_bytes},
                     {"allocations", s.allocations},
                     {"total_bytes", s.total_bytes},
                     {"frames", frames_json(s.frames)}});
  json stacked = json::array();
  for (const SiteTimeline& s : t.stacked_sites)
    stacked.push_back({{"device", device_name(s.device)},
                       {"peak_bytes", s.peak_bytes},
                       {"frames", frames_json(s.frames)},
                       {"live", series_json(s.live, options.max_points_per_series / 2)}});
  uint64_t waited = 0;
  for (const CollectiveSpan& c : t.collectives) waited += c.waited;
  return {{"pid", t.header.pid},
          {"rank", t.rank < 0 ? json(nullptr) : json(t.rank)},
          {"host", valid_utf8(t.header.host)},
          {"path", valid_utf8(t.path)},
          {"command_line", valid_utf8(t.header.command_line)},
          {"torch_version", valid_utf8(t.torch_version)},
          {"truncated", t.truncated},
          {"stop_reason", valid_utf8(t.stop_reason)},
          {"end_ns", t.end_ns},
          {"work_start_ns", t.work_start_ns},
          {"allocs", t.allocs},
          {"frees", t.frees},
          {"collectives", t.collectives.size()},
          {"collectives_waited", waited},
          {"devices", devices},
          {"steps", steps},
          {"top_sites", sites},
          {"stacked_sites", stacked}};
}

}  // namespace

json report_page_data(const std::vector<TraceTimeline>& timelines, const json& report,
                      const HtmlOptions& options) {
  // What the report says of each process beside its findings.
  std::map<uint64_t, const json*> reported;
  if (report.is_object() && report.contains("processes") && report["processes"].is_array())
    for (const json& p : report["processes"])
      if (p.is_object() && p.contains("pid") && p["pid"].is_number_integer() && p["pid"] >= 0)
        reported[p["pid"].get<uint64_t>()] = &p;
  json processes = json::array();
  std::set<uint64_t> pids;
  for (const TraceTimeline& t : timelines) {
    json process = process_json(t, options);
    if (const auto it = reported.find(t.header.pid); it != reported.end())
      for (const char* key : {"growth_set_aside", "still_reachable_at_exit"})
        if (it->second->contains(key)) process[key] = (*it->second)[key];
    processes.push_back(std::move(process));
    pids.insert(t.header.pid);
  }
  // Processes the report names but whose trace is not at hand still get a
  // section, with their findings and no plot.
  for (const auto& [pid, p] : reported) {
    if (pids.count(pid)) continue;
    processes.push_back({{"pid", pid},
                         {"rank", p->value("rank", json(nullptr))},
                         {"host", p->value("host", json(""))},
                         {"path", p->value("path", json(""))},
                         {"truncated", p->value("truncated", false)},
                         {"missing_trace", true},
                         {"devices", json::array()},
                         {"steps", json::array()},
                         {"top_sites", json::array()}});
  }
  // The busiest process first (highest peak live bytes on any device): in
  // a torchrun report the launcher, which allocates nothing, comes last.
  auto peak = [](const json& p) {
    uint64_t most = 0;
    for (const json& d : p["devices"]) most = std::max(most, d.value("peak_live", uint64_t{0}));
    return most;
  };
  std::stable_sort(processes.begin(), processes.end(),
                   [&](const json& a, const json& b) { return peak(a) > peak(b); });
  json findings = json::array();
  if (report.is_object() && report.contains("findings") && report["findings"].is_array()) {
    for (const json& f : report["findings"]) {
      if (!f.is_object()) continue;
      json g = f;
      for (const TraceTimeline& t : timelines) {
        if (json(t.header.pid) != f.value("pid", json(0))) continue;
        const TimeRange r = finding_time_range(t, f);
        g["time_range_ns"] = json::array({r.begin_ns, r.end_ns});
      }
      findings.push_back(std::move(g));
    }
  }
  return {{"title", options.title},
          {"processes", processes},
          {"findings", findings},
          {"has_report", report.is_object()}};
}

std::string html_report(const std::vector<TraceTimeline>& timelines, const json& report,
                        const HtmlOptions& options) {
  std::string page;
  for (size_t i = 0; kReportTemplatePieces[i]; ++i) page += kReportTemplatePieces[i];
  const size_t at = page.find(kDataMarker);
  const std::string data = script_safe_json(report_page_data(timelines, report, options));
  if (at == std::string::npos) return page;  // unreachable: the template is ours
  page.replace(at, kDataMarker.size(), data);
  return page;
}

}  // namespace memlife::views
