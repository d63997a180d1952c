// Placeholder until the analysis library lands; its owner replaces this file.
#include <iostream>

#include "verbs.h"

namespace memlife::tool {

void register_check_verb(CLI::App &app) {
  CLI::App *verb =
      app.add_subcommand("check", "Gate CI on the findings of traces");
  verb->allow_extras();
  verb->callback([] {
    std::cerr << "memlife check: not built yet\n";
    throw ExitWith{2};
  });
}

} // namespace memlife::tool
