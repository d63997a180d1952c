#include "analysis/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/incomplete.h"
#include "analysis/json_input.h"
#include "analysis/stacks.h"
#include "analysis/terminal_text.h"

namespace memlife::analysis {

using nlohmann::json;

namespace {

json rank_json(int64_t rank) { return rank < 0 ? json(nullptr) : json(rank); }

int severity_rank(const json& finding) {
  const std::string s = finding.value("severity", "");
  return s == "error" ? 0 : s == "warning" ? 1 : 2;
}

std::string basename_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

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
      {"exit_status", p.exit_recorded ? nlohmann::json(p.exit_status) : nlohmann::json(nullptr)},
      {"collectives", p.collectives.size()},
      {"collectives_waited_by_libraries", p.collectives_waited_by_libraries},
      {"live_bytes_at_end", p.final_live_bytes},
      {"cached_segments", {{"count", p.cached_segments}, {"bytes", p.cached_segment_bytes}}},
      {"raw_device_segments_at_exit", {{"count", p.raw_segments}, {"bytes", p.raw_segment_bytes}}},
      {"per_step", steps}};
  if (p.truncated) j["stop_reason"] = p.stop_reason;
  if (p.census_spaced_cost_ns != 0) j["step_census_cost_ns"] = p.census_spaced_cost_ns;
  if (!p.still_reachable_at_exit.is_null())
    j["still_reachable_at_exit"] = p.still_reachable_at_exit;
  if (!p.growth_set_aside.empty()) j["growth_set_aside"] = p.growth_set_aside;
  if (!p.error.empty()) j["error"] = p.error;
  return j;
}

}  // namespace

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json make_report(const std::vector<ProcessAnalysis>& processes,
                 const std::vector<Finding>& run_findings,
                 const std::vector<std::string>& given_warnings) {
  // Every way the recording was incomplete first (incomplete.h), then the
  // caller's own (runs left out, ...).
  std::vector<std::string> warnings = incomplete_warnings(processes);
  warnings.insert(warnings.end(), given_warnings.begin(), given_warnings.end());
  json procs = json::array();
  std::vector<json> findings;
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
      j["fingerprint"] = finding_fingerprint(j);
      findings.push_back(std::move(j));
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
    j["fingerprint"] = finding_fingerprint(j);
    findings.push_back(std::move(j));
  }
  // Errors before warnings, then the most bytes first.
  std::stable_sort(findings.begin(), findings.end(), [](const json& a, const json& b) {
    const int sa = severity_rank(a), sb = severity_rank(b);
    if (sa != sb) return sa < sb;
    return a.value("bytes", uint64_t{0}) > b.value("bytes", uint64_t{0});
  });
  json by_kind = json::object(), by_severity = json::object();
  for (const json& f : findings) {
    const std::string kind = string_field(f, "kind"), severity = string_field(f, "severity");
    by_kind[kind] = by_kind.value(kind, 0) + 1;
    by_severity[severity] = by_severity.value(severity, 0) + 1;
  }
  json summary = {{"processes", processes.size()},
                  {"findings", findings.size()},
                  {"by_severity", by_severity},
                  {"by_kind", by_kind},
                  {"warnings", warnings.size()}};
  return {{"schema_version", kReportSchemaVersion},
          {"tool", "memlife"},
          {"summary", summary},
          {"processes", procs},
          {"warnings", warnings},
          {"findings", findings}};
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
  if (!read_json_file(path, report, error)) return false;
  if (!validate_report(report, error))
    return error = path + ": not a memlife analysis report (" + error + ")", false;
  return true;
}

std::string finding_fingerprint(const json& f) {
  if (auto it = f.find("fingerprint"); it != f.end() && it->is_string()) return *it;
  // What places the finding in the program: its kind, the op and group it
  // names, and each stack's frames in the program's own files (base name
  // and function: no pid, address, line number or checkout path, which
  // change from run to run or with an unrelated edit).
  std::string key = string_field(f, "kind");
  if (auto e = f.find("evidence"); e != f.end() && e->is_object()) {
    key += "|" + string_field(*e, "op");
    if (auto s = e->find("stacks"); s != e->end() && s->is_array())
      for (const json& stack : *s) {
        key += "|";
        if (!stack.is_array()) continue;
        for (const json& frame : stack) {
          const std::string file = string_field(frame, "file");
          if (file.empty() || is_library_file(file)) continue;
          key += basename_of(file) + ":" + string_field(frame, "function") + ";";
        }
      }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
  return hex;
}

std::string ranks_text(const json& finding, size_t ranked_processes) {
  auto ranks = finding.find("ranks");
  if (ranks == finding.end() || !ranks->is_array() || ranks->empty()) {
    auto rank = finding.find("rank");
    return rank != finding.end() && rank->is_number() ? rank->dump() : "-";
  }
  if (ranks->size() == ranked_processes && ranks->size() > 1)
    return "all (" + std::to_string(ranks->size()) + ")";
  std::string text;
  for (const json& r : *ranks) text += (text.empty() ? "" : ",") + r.dump();
  return text;
}

namespace {

std::string summary_table_raw(const json& report) {
  std::ostringstream out;
  char line[512];
  out << "memlife: " << report["processes"].size() << " process(es), " << report["findings"].size()
      << " finding(s)\n";
  size_t ranked = 0;
  for (const json& p : report["processes"]) {
    ranked += p.value("rank", json(nullptr)).is_number();
    std::snprintf(line, sizeof line, "  pid %-8s rank %-4s steps %-5s peak %-12s allocs %-9s%s\n",
                  p.value("pid", json(0)).dump().c_str(), ranks_text(p, 0).c_str(),
                  p.value("steps", json(0)).dump().c_str(),
                  format_bytes(p.value("peak_bytes", uint64_t{0})).c_str(),
                  p.value("allocations", json(0)).dump().c_str(),
                  p.value("truncated", false) ? "  TRUNCATED" : "");
    out << line;
    // Growth judged no leak is said, not dropped silently.
    for (const json& g : p.value("growth_set_aside", json::array())) {
      out << "    growth set aside (" << g.value("reason", g.value("why", ""))
          << "): " << format_bytes(g.value("bytes", uint64_t{0}));
      if (g.contains("path")) out << " held by " << g.value("path", "");
      out << "\n";
    }
  }
  if (report["findings"].empty()) return out.str();
  std::snprintf(line, sizeof line, "  %-20s %-8s %-6s %-12s %-6s %s\n", "KIND", "SEVERITY", "RANK",
                "BYTES", "COUNT", "MESSAGE");
  out << line;
  for (const json& f : report["findings"]) {
    std::snprintf(line, sizeof line, "  %-20s %-8s %-6s %-12s %-6s ", f.value("kind", "").c_str(),
                  f.value("severity", "").c_str(), ranks_text(f, ranked).c_str(),
                  format_bytes(f.value("bytes", uint64_t{0})).c_str(),
                  f.value("count", json(1)).dump().c_str());
    out << line << f.value("message", "") << "\n";
  }
  return out.str();
}

}  // namespace

// Names and messages come from the traces: escaped for the terminal.
std::string summary_table(const json& report) {
  return terminal_safe(summary_table_raw(report), /*keep_newlines=*/true);
}

}  // namespace memlife::analysis
