// Placeholder: the export verb is delivered by issue 6.
#include <iostream>

#include "verbs.h"

namespace memlife::tool {

void register_export_verb(CLI::App& app) {
  CLI::App* verb = app.add_subcommand("export", "Export traces to memory_viz / Perfetto (issue 6)");
  verb->allow_extras();
  verb->callback([] {
    std::cerr << "memlife export: not implemented yet; see issue 6\n";
    throw ExitWith{2};
  });
}

}  // namespace memlife::tool
