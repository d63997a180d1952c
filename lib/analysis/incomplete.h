// The ways a recording can be incomplete, one list for `memlife analyze`
// (the report's `warnings`), `memlife check` (exit 2 unless
// --accept-incomplete) and the JSON: each such warning is the kind's name,
// ": ", then what was missing and where.
#pragma once

#include <string>
#include <vector>

namespace memlife::analysis {

struct ProcessAnalysis;

struct IncompleteKind {
  const char* name;
  const char* meaning;
};

// The single list of incompleteness kinds.
const std::vector<IncompleteKind>& incomplete_kinds();

// One warning per incomplete process and kind, "<kind>: <what> (pid P, rank R, path)".
std::vector<std::string> incomplete_warnings(const std::vector<ProcessAnalysis>& processes);

// The kind a report warning names, or nullptr when it names none (a warning
// that is not about an incomplete recording, such as runs left out).
const char* incomplete_kind_of(const std::string& warning);

}  // namespace memlife::analysis
