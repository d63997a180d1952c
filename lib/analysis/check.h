// The CI gate behind `memlife check`: which findings fail, which only warn,
// which a suppression rule or a baseline report excuses; JUnit XML output.
#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace memlife::analysis {

// One rule a line, LeakSanitizer/valgrind style:
//   <kind>:<frame-glob>     kind is a finding kind or "*"
//   # comment
// The glob (fnmatch) is tried on each frame of the finding's stacks, as
// "function", "file", "file:line" and "module".
struct Suppression {
  std::string kind, pattern;
  int line = 0;
};
bool parse_suppressions(const std::string& text, std::vector<Suppression>& out, std::string& error);
bool load_suppressions(const std::string& path, std::vector<Suppression>& out, std::string& error);

struct GateOptions {
  std::set<std::string> fail_kinds;  // empty: the default gate
  uint64_t max_bytes = 0;            // >0: failing kinds fail only above this many bytes
  std::vector<Suppression> suppressions;
  std::set<std::string> baseline;  // fingerprints of an earlier report
  bool has_baseline = false;
};

// Parses "--fail-on a,b": kind names, "all" or "none". One-line error on an
// unknown kind.
bool parse_fail_kinds(const std::string& text, std::set<std::string>& out, std::string& error);

enum class Verdict { kFail, kWarn, kSuppressed, kInBaseline, kBelowLimit };
const char* verdict_name(Verdict v);

struct GateResult {
  std::vector<Verdict> verdicts;  // one per report finding
  size_t failures = 0, warnings = 0;
  int exit_code() const { return failures ? 1 : 0; }
};

GateResult apply_gate(const nlohmann::json& report, const GateOptions& options);

// JUnit XML: one testsuite per process, one testcase per finding kind.
std::string junit_xml(const nlohmann::json& report, const GateResult& result);

}  // namespace memlife::analysis
