// Placeholder until the analysis library lands; its owner replaces this file.
#include <iostream>

#include "verbs.h"

namespace memlife::tool {

void register_analyze_verb(CLI::App &app) {
  CLI::App *verb = app.add_subcommand(
      "analyze", "Replay traces and report findings as JSON");
  verb->allow_extras();
  verb->callback([] {
    std::cerr << "memlife analyze: not built yet\n";
    throw ExitWith{2};
  });
}

} // namespace memlife::tool
