// The analysis report: JSON described by lib/analysis/report.schema.json,
// and a short human table of the same findings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analyze.h"

namespace memlife::analysis {

inline constexpr int kReportSchemaVersion = 1;

// Processes in input order; findings of all processes, errors first, then
// by bytes, each with its `fingerprint`; a `summary` of the counts.
// `run_findings` are about several processes (cross-rank checks, findings
// folded over every rank): rank null, "ranks" and "pids" set. `warnings`
// (e.g. runs left out) go to the report's "warnings".
nlohmann::json make_report(const std::vector<ProcessAnalysis>& processes,
                           const std::vector<Finding>& run_findings = {},
                           const std::vector<std::string>& warnings = {});

// Checks the shape check relies on (schema_version, processes, findings
// with kind/severity/bytes). Returns false with a one-line reason.
bool validate_report(const nlohmann::json& report, std::string& error);

// Reads and validates a report file; one-line error on failure.
bool load_report(const std::string& path, nlohmann::json& report, std::string& error);

// The string at `key` of a report object (a finding, a frame), empty when
// absent or not a string.
std::string string_field(const nlohmann::json& j, const char* key);

// A finding's stable identity: its "fingerprint" field, or for reports
// without one, a hash of its kind, op and the program's own frames (file
// base name and function), free of pids, addresses and line numbers. Used
// by --baseline and JUnit.
std::string finding_fingerprint(const nlohmann::json& finding);

// Ranks of a finding or process for people: "0", "0,1", "all (8)", "-".
std::string ranks_text(const nlohmann::json& finding_or_process, size_t ranked_processes);

// One line per process and per finding, for a terminal.
std::string summary_table(const nlohmann::json& report);

}  // namespace memlife::analysis
