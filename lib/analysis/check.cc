#include "analysis/check.h"

#include <fnmatch.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/finding.h"
#include "analysis/report.h"

namespace memlife::analysis {

using nlohmann::json;

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool known_kind(const std::string& k) {
  const auto& all = all_finding_kinds();
  return std::find(all.begin(), all.end(), k) != all.end();
}

bool glob(const std::string& pattern, const std::string& text) {
  return !text.empty() && fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool frame_matches(const std::string& pattern, const json& frame) {
  if (!frame.is_object()) return false;
  const std::string file = string_field(frame, "file");
  std::string file_line = file;
  if (auto l = frame.find("line"); l != frame.end() && l->is_number())
    file_line += ":" + std::to_string(l->get<uint64_t>());
  return glob(pattern, string_field(frame, "function")) || glob(pattern, file) ||
         glob(pattern, file_line) || glob(pattern, string_field(frame, "module"));
}

bool suppressed(const json& finding, const std::vector<Suppression>& rules) {
  const std::string kind = string_field(finding, "kind");
  const json* stacks = nullptr;
  if (auto e = finding.find("evidence"); e != finding.end() && e->is_object())
    if (auto s = e->find("stacks"); s != e->end() && s->is_array()) stacks = &*s;
  for (const Suppression& r : rules) {
    if (r.kind != "*" && r.kind != kind) continue;
    if (r.pattern == "*") return true;
    if (!stacks) continue;
    for (const json& stack : *stacks) {
      if (!stack.is_array()) continue;
      for (const json& frame : stack)
        if (frame_matches(r.pattern, frame)) return true;
    }
  }
  return false;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

}  // namespace

bool parse_suppressions(const std::string& text, std::vector<Suppression>& out,
                        std::string& error) {
  std::istringstream in(text);
  std::string raw;
  int n = 0;
  while (std::getline(in, raw)) {
    ++n;
    std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= line.size()) {
      error = "line " + std::to_string(n) + ": expected <kind>:<frame-pattern>, got '" + line + "'";
      return false;
    }
    Suppression s{trim(line.substr(0, colon)), trim(line.substr(colon + 1)), n};
    if (s.kind != "*" && !known_kind(s.kind)) {
      error = "line " + std::to_string(n) + ": unknown finding kind '" + s.kind + "'";
      return false;
    }
    if (s.pattern.empty()) {
      error = "line " + std::to_string(n) + ": empty frame pattern";
      return false;
    }
    out.push_back(std::move(s));
  }
  return true;
}

bool load_suppressions(const std::string& path, std::vector<Suppression>& out, std::string& error) {
  std::ifstream in(path);
  if (!in) return error = path + ": cannot open suppressions file", false;
  std::stringstream ss;
  ss << in.rdbuf();
  if (!parse_suppressions(ss.str(), out, error)) return error = path + ": " + error, false;
  return true;
}

bool parse_fail_kinds(const std::string& text, std::set<std::string>& out, std::string& error) {
  std::istringstream in(text);
  std::string k;
  bool any = false;
  while (std::getline(in, k, ',')) {
    k = trim(k);
    if (k.empty()) continue;
    any = true;
    if (k == "all") {
      for (const auto& kind : all_finding_kinds()) out.insert(kind);
    } else if (k == "none") {
      out.insert("none");
    } else if (known_kind(k)) {
      out.insert(k);
    } else {
      error = "--fail-on: unknown finding kind '" + k + "'";
      return false;
    }
  }
  if (!any) return error = "--fail-on: no kinds given", false;
  return true;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFail:
      return "fail";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kSuppressed:
      return "suppressed";
    case Verdict::kInBaseline:
      return "baseline";
    case Verdict::kBelowLimit:
      return "below_limit";
  }
  return "?";
}

GateResult apply_gate(const json& report, const GateOptions& o) {
  GateResult r;
  for (const json& f : report["findings"]) {
    const std::string kind = string_field(f, "kind");
    const bool failing_kind = o.fail_kinds.empty() ? std::string(default_severity(kind)) == "error"
                                                   : o.fail_kinds.count(kind) > 0;
    Verdict v = failing_kind ? Verdict::kFail : Verdict::kWarn;
    if (suppressed(f, o.suppressions)) {
      v = Verdict::kSuppressed;
    } else if (o.has_baseline && o.baseline.count(finding_fingerprint(f))) {
      v = Verdict::kInBaseline;
    } else if (v == Verdict::kFail && o.max_bytes > 0 &&
               f.value("bytes", uint64_t{0}) <= o.max_bytes) {
      v = Verdict::kBelowLimit;
    }
    r.failures += v == Verdict::kFail;
    r.warnings += v == Verdict::kWarn;
    r.verdicts.push_back(v);
  }
  return r;
}

std::string junit_xml(const json& report, const GateResult& result) {
  // One suite per process, named by its rank, or by its place in the
  // report and its program when it has none: never by pid, so the test
  // names are the same from one CI run to the next. A finding about
  // several processes belongs to the first of them.
  std::map<std::string, size_t> process_of_pid;
  const json& processes = report["processes"];
  for (size_t i = 0; i < processes.size(); ++i)
    process_of_pid.emplace(processes[i].value("pid", json(0)).dump(), i);
  std::map<std::pair<size_t, std::string>, std::vector<size_t>> by_case;
  const json& findings = report["findings"];
  for (size_t i = 0; i < findings.size(); ++i) {
    auto p = process_of_pid.find(findings[i].value("pid", json(0)).dump());
    by_case[{p == process_of_pid.end() ? 0 : p->second, string_field(findings[i], "kind")}]
        .push_back(i);
  }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"memlife\" failures=\""
    << result.failures << "\">\n";
  for (size_t index = 0; index < processes.size(); ++index) {
    const json& p = processes[index];
    const json rank = p.value("rank", json(nullptr));
    const std::string suite =
        rank.is_number() ? "rank " + rank.dump() : "process " + std::to_string(index);
    size_t failures = 0;
    std::ostringstream cases;
    for (const std::string& kind : all_finding_kinds()) {
      cases << "    <testcase classname=\"memlife." << xml_escape(suite) << "\" name=\"" << kind
            << "\">\n";
      auto it = by_case.find({index, kind});
      std::string failed, other;
      if (it != by_case.end()) {
        for (size_t i : it->second) {
          const std::string line = std::string(verdict_name(result.verdicts[i])) + ": " +
                                   string_field(findings[i], "message") + "\n";
          (result.verdicts[i] == Verdict::kFail ? failed : other) += line;
        }
      }
      if (!failed.empty()) {
        ++failures;
        cases << "      <failure message=\"" << xml_escape(failed.substr(0, failed.find('\n')))
              << "\">" << xml_escape(failed) << "</failure>\n";
      }
      if (!other.empty()) cases << "      <system-out>" << xml_escape(other) << "</system-out>\n";
      cases << "    </testcase>\n";
    }
    x << "  <testsuite name=\"memlife " << xml_escape(suite) << "\" tests=\""
      << all_finding_kinds().size() << "\" failures=\"" << failures << "\">\n"
      << cases.str() << "  </testsuite>\n";
  }
  x << "</testsuites>\n";
  return x.str();
}

}  // namespace memlife::analysis
