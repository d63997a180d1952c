#include "views/perfetto.h"

#include <algorithm>
#include <limits>

#include "views/utf8.h"

namespace memlife::views {

using nlohmann::json;

namespace {

void steps_of(const json& v, uint64_t& lo, uint64_t& hi) {
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0)) {
    const uint64_t s = v.get<uint64_t>();
    lo = std::min(lo, s);
    hi = std::max(hi, s);
  } else if (v.is_array()) {
    for (const json& e : v) steps_of(e, lo, hi);
  } else if (v.is_object() && v.contains("step")) {
    steps_of(v["step"], lo, hi);
  }
}

std::string process_label(const TraceTimeline& t) {
  std::string label = t.rank >= 0 ? "rank " + std::to_string(t.rank) + " " : "";
  label += "pid " + std::to_string(t.header.pid);
  if (!t.header.host.empty()) label += " (" + valid_utf8(t.header.host) + ")";
  return label;
}

json meta(uint64_t pid, int tid, const char* what, const std::string& name) {
  json e = {{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
  if (tid) e["tid"] = tid;
  return e;
}

}  // namespace

TimeRange finding_time_range(const TraceTimeline& t, const json& finding) {
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0;
  if (finding.contains("evidence") && finding["evidence"].is_object() &&
      finding["evidence"].contains("steps"))
    steps_of(finding["evidence"]["steps"], lo, hi);
  // A finding without steps (a leak at exit, a view that outlived its
  // owner in a program without steps) retained its bytes for retained_ns up
  // to the end; without that either, it is about the end.
  if (lo > hi || t.steps.empty()) {
    const json& retained_ns = finding.contains("retained_ns") ? finding["retained_ns"] : json();
    const uint64_t retained =
        retained_ns.is_number_integer()
            ? static_cast<uint64_t>(std::max<int64_t>(0, retained_ns.get<int64_t>()))
            : 0;
    return {t.end_ns - std::min(t.end_ns, retained), t.end_ns};
  }
  // Step s runs from its mark to the next mark; before the first mark is
  // the step the program was in when it started.
  TimeRange r{0, t.end_ns};
  for (size_t i = 0; i < t.steps.size(); ++i) {
    if (t.steps[i].step <= lo) r.begin_ns = t.steps[i].t_ns;
    if (t.steps[i].step > hi) {
      r.end_ns = t.steps[i].t_ns;
      break;
    }
  }
  if (r.end_ns < r.begin_ns) r.end_ns = r.begin_ns;
  return r;
}

json perfetto_trace(const std::vector<TraceTimeline>& timelines, const json& report,
                    const PerfettoOptions& options) {
  json events = json::array();
  uint64_t origin = std::numeric_limits<uint64_t>::max();
  for (const TraceTimeline& t : timelines) origin = std::min(origin, t.header.start_wall_ns);
  uint64_t flow_id = 0;

  for (const TraceTimeline& t : timelines) {
    const uint64_t pid = t.header.pid;
    // Processes line up on the wall clock; ts is in microseconds.
    const uint64_t offset = t.header.start_wall_ns - origin;
    auto ts = [&](uint64_t t_ns) { return static_cast<double>(offset + t_ns) / 1000.0; };
    events.push_back(meta(pid, 0, "process_name", process_label(t)));
    events.push_back(meta(pid, kStepsTrack, "thread_name", "steps"));
    events.push_back(meta(pid, kIssueTrack, "thread_name", "collective issue"));
    events.push_back(meta(pid, kWaitTrack, "thread_name", "collective wait"));
    events.push_back(meta(pid, kFindingsTrack, "thread_name", "findings"));

    for (const DeviceTimeline& d : t.devices) {
      auto counter = [&](const std::string& name, const char* arg,
                         const std::vector<BytesPoint>& points) {
        for (const BytesPoint& p : downsample_keep_peaks(points, options.max_counter_points))
          events.push_back({{"ph", "C"},
                            {"pid", pid},
                            {"name", name},
                            {"ts", ts(p.t_ns)},
                            {"args", {{arg, p.bytes}}}});
      };
      counter("live bytes " + device_name(d.device), "live", d.live);
      if (d.has_segments)
        counter("reserved bytes " + device_name(d.device), "reserved", d.reserved);
    }

    for (size_t i = 0; i < t.steps.size(); ++i) {
      const uint64_t begin = t.steps[i].t_ns;
      const uint64_t end = i + 1 < t.steps.size() ? t.steps[i + 1].t_ns : t.end_ns;
      events.push_back({{"ph", "X"},
                        {"pid", pid},
                        {"tid", kStepsTrack},
                        {"name", "step " + std::to_string(t.steps[i].step)},
                        {"ts", ts(begin)},
                        {"dur", static_cast<double>(end - std::min(end, begin)) / 1000.0},
                        {"args", {{"step", t.steps[i].step}}}});
    }

    for (const CollectiveSpan& c : t.collectives) {
      const std::string name = valid_utf8(c.op.empty() ? "collective" : c.op);
      json args = {{"collective_id", c.id},
                   {"group", valid_utf8(c.group)},
                   {"bytes", c.bytes},
                   {"waited", c.waited}};
      events.push_back({{"ph", "X"},
                        {"pid", pid},
                        {"tid", kIssueTrack},
                        {"name", name},
                        {"ts", ts(c.issue_ns)},
                        {"dur", 1},
                        {"args", args}});
      if (!c.waited) continue;
      ++flow_id;
      events.push_back({{"ph", "X"},
                        {"pid", pid},
                        {"tid", kWaitTrack},
                        {"name", "wait " + name},
                        {"ts", ts(c.wait_ns)},
                        {"dur", 1},
                        {"args", args}});
      events.push_back({{"ph", "s"},
                        {"pid", pid},
                        {"tid", kIssueTrack},
                        {"id", flow_id},
                        {"cat", "collective"},
                        {"name", name},
                        {"ts", ts(c.issue_ns)}});
      events.push_back({{"ph", "f"},
                        {"bp", "e"},
                        {"pid", pid},
                        {"tid", kWaitTrack},
                        {"id", flow_id},
                        {"cat", "collective"},
                        {"name", name},
                        {"ts", ts(c.wait_ns)}});
    }

    if (!report.is_object() || !report.contains("findings") || !report["findings"].is_array())
      continue;
    for (const json& f : report["findings"]) {
      if (!f.is_object() || f.value("pid", json(0)) != json(pid)) continue;
      const TimeRange r = finding_time_range(t, f);
      events.push_back({{"ph", "i"},
                        {"s", "p"},
                        {"pid", pid},
                        {"tid", kFindingsTrack},
                        {"name", f.value("kind", std::string("finding"))},
                        {"ts", ts(r.begin_ns)},
                        {"args",
                         {{"severity", f.value("severity", std::string())},
                          {"bytes", f.value("bytes", json(0))},
                          {"message", f.value("message", std::string())},
                          {"fingerprint", f.value("fingerprint", std::string())},
                          {"until_us", ts(r.end_ns)}}}});
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace memlife::views
