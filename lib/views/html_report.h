// The self-contained HTML report: one file with inline CSS, JS and SVG and
// no network use. The data (timelines, findings, allocation sites) is
// embedded as script-safe JSON and the page builds its DOM from it with
// textContent only, so nothing from a trace is ever parsed as markup.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "views/trace_timeline.h"

namespace memlife::views {

struct HtmlOptions {
  std::string title = "memlife report";
  size_t max_points_per_series = 2000;  // the plot keeps every peak
};

// The data block the page renders; exposed for tests.
nlohmann::json report_page_data(const std::vector<TraceTimeline>& timelines,
                                const nlohmann::json& report, const HtmlOptions& options);

// `report` is the analyzer's JSON report (null: timelines only).
std::string html_report(const std::vector<TraceTimeline>& timelines, const nlohmann::json& report,
                        const HtmlOptions& options);

}  // namespace memlife::views
