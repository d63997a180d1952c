#include "analysis/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace memlife::analysis {

using nlohmann::json;

namespace {

json rank_json(int64_t rank) { return rank < 0 ? json(nullptr) : json(rank); }

json process_json(const ProcessAnalysis& p) {
  json steps = json::array();
  for (const StepMark& s : p.steps)
    steps.push_back(
        {{"step", s.step},
         {"time_ns", s.at.time_ns - std::min(s.at.time_ns, p.header.start_monotonic_ns)},
         {"live_bytes", s.live_bytes},
         {"peak_bytes", s.peak_bytes}});
  json j = {
      {"path", p.path},
      {"pid", p.header.pid},
      {"rank", rank_json(p.rank)},
      {"world_size", p.world_size < 0 ? json(nullptr) : json(p.world_size)},
      {"host", p.header.host},
      {"run_id", p.header.run_id},
      {"torch_version", p.torch_version},
      {"command_line", p.header.command_line},
      {"steps", p.steps.size()},
      {"allocations", p.allocations},
      {"peak_bytes", p.peak_bytes},
      {"records", p.records},
      {"records_lost", p.records_lost},
      {"ooms", p.ooms},
      {"truncated", p.truncated},
      {"collectives", p.collectives.size()},
      {"collectives_waited_in_cxx", p.collectives_waited_in_cxx},
      {"live_bytes_at_end", p.final_live_bytes},
      {"cached_segments", {{"count", p.cached_segments}, {"bytes", p.cached_segment_bytes}}},
      {"raw_device_segments_at_exit", {{"count", p.raw_segments}, {"bytes", p.raw_segment_bytes}}},
      {"per_step", steps}};
  if (p.truncated) j["stop_reason"] = p.stop_reason;
  if (!p.still_reachable_at_exit.is_null())
    j["still_reachable_at_exit"] = p.still_reachable_at_exit;
  if (!p.error.empty()) j["error"] = p.error;
  return j;
}

}  // namespace

json make_report(const std::vector<ProcessAnalysis>& processes,
                 const std::vector<Finding>& run_findings,
                 const std::vector<std::string>& warnings) {
  json procs = json::array();
  struct Ranked {
    double weight;
    json finding;
  };
  std::vector<Ranked> findings;
  for (const ProcessAnalysis& p : processes) {
    procs.push_back(process_json(p));
    for (const Finding& f : p.findings) {
      json j = {{"kind", f.kind},
                {"severity", f.severity},
                {"bytes", f.bytes},
                {"count", f.count},
                {"retained_ns", f.retained_ns},
                {"pid", p.header.pid},
                {"rank", rank_json(p.rank)},
                {"message", f.message},
                {"evidence", f.evidence}};
      findings.push_back({f.weight(), std::move(j)});
    }
  }
  for (const Finding& f : run_findings) {
    json j = {{"kind", f.kind},
              {"severity", f.severity},
              {"bytes", f.bytes},
              {"count", std::max<uint64_t>(f.count, 1)},
              {"retained_ns", f.retained_ns},
              {"pid", f.pids.empty() ? uint64_t{0} : f.pids.front()},
              {"rank", nullptr},
              {"ranks", f.ranks},
              {"pids", f.pids},
              {"message", f.message},
              {"evidence", f.evidence}};
    findings.push_back({f.weight(), std::move(j)});
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Ranked& a, const Ranked& b) { return a.weight > b.weight; });
  json out_findings = json::array();
  for (auto& r : findings) out_findings.push_back(std::move(r.finding));
  return {{"schema_version", kReportSchemaVersion},
          {"tool", "memlife"},
          {"processes", procs},
          {"warnings", warnings},
          {"findings", out_findings}};
}

bool validate_report(const json& r, std::string& error) {
  if (!r.is_object()) return error = "report is not a JSON object", false;
  if (!r.contains("schema_version") || !r["schema_version"].is_number_integer())
    return error = "report has no integer schema_version", false;
  if (r["schema_version"].get<int64_t>() > kReportSchemaVersion)
    return error = "report schema_version " + r["schema_version"].dump() +
                   " is newer than this memlife reads (" + std::to_string(kReportSchemaVersion) +
                   ")",
           false;
  if (!r.contains("processes") || !r["processes"].is_array())
    return error = "report has no processes array", false;
  if (!r.contains("findings") || !r["findings"].is_array())
    return error = "report has no findings array", false;
  size_t i = 0;
  for (const json& f : r["findings"]) {
    if (!f.is_object() || !f.contains("kind") || !f["kind"].is_string() ||
        !f.contains("severity") || !f["severity"].is_string() || !f.contains("bytes") ||
        !f["bytes"].is_number_unsigned())
      return error = "finding " + std::to_string(i) + " lacks kind, severity or bytes", false;
    ++i;
  }
  return true;
}

bool load_report(const std::string& path, json& report, std::string& error) {
  std::ifstream in(path);
  if (!in) return error = path + ": cannot open", false;
  report = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded()) return error = path + ": not valid JSON", false;
  if (!validate_report(report, error)) return error = path + ": " + error, false;
  return true;
}

std::string summary_table(const json& report) {
  std::ostringstream out;
  char line[512];
  out << "memlife: " << report["processes"].size() << " process(es), " << report["findings"].size()
      << " finding(s)\n";
  for (const json& p : report["processes"]) {
    std::snprintf(line, sizeof line, "  pid %-8s rank %-4s steps %-5s peak %-12s allocs %-9s%s\n",
                  p.value("pid", json(0)).dump().c_str(),
                  p.value("rank", json(nullptr)).dump().c_str(),
                  p.value("steps", json(0)).dump().c_str(),
                  format_bytes(p.value("peak_bytes", uint64_t{0})).c_str(),
                  p.value("allocations", json(0)).dump().c_str(),
                  p.value("truncated", false) ? "  TRUNCATED" : "");
    out << line;
  }
  if (report["findings"].empty()) return out.str();
  std::snprintf(line, sizeof line, "  %-20s %-8s %-6s %-12s %-6s %s\n", "KIND", "SEVERITY", "RANK",
                "BYTES", "COUNT", "MESSAGE");
  out << line;
  for (const json& f : report["findings"]) {
    std::snprintf(line, sizeof line, "  %-20s %-8s %-6s %-12s %-6s ", f.value("kind", "").c_str(),
                  f.value("severity", "").c_str(),
                  f.contains("ranks") ? ("[" + std::to_string(f["ranks"].size()) + "]").c_str()
                                      : f.value("rank", json(nullptr)).dump().c_str(),
                  format_bytes(f.value("bytes", uint64_t{0})).c_str(),
                  f.value("count", json(1)).dump().c_str());
    out << line << f.value("message", "") << "\n";
  }
  return out.str();
}

}  // namespace memlife::analysis
