// Placeholder: the report verb is delivered by issue 6.
#include <iostream>

#include "verbs.h"

namespace memlife::tool {

void register_report_verb(CLI::App& app) {
  CLI::App* verb = app.add_subcommand("report", "Write an HTML report of traces (issue 6)");
  verb->allow_extras();
  verb->callback([] {
    std::cerr << "memlife report: not implemented yet; see issue 6\n";
    throw ExitWith{2};
  });
}

}  // namespace memlife::tool
