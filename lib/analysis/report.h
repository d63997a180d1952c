// The analysis report: JSON described by lib/analysis/report.schema.json,
// and a short human table of the same findings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analyze.h"

namespace memlife::analysis {

inline constexpr int kReportSchemaVersion = 1;

// Processes in input order; findings of all processes sorted by retained
// bytes x time, heaviest first.
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

// One line per process and per finding, for a terminal.
std::string summary_table(const nlohmann::json& report);

}  // namespace memlife::analysis
