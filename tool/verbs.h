// The verbs of the `memlife` executable. Each verb lives in its own
// verb_<name>.cc and adds itself to the app; main.cc only wires them up.
#pragma once

#include <CLI/CLI.hpp>

namespace memlife::tool {

// Thrown by a verb's callback to end the program with `code` once the
// callback has unwound (destructors run, output is flushed). A verb that
// succeeds simply returns, which exits 0.
struct ExitWith {
  int code;
};

void register_run_verb(CLI::App& app);
void register_analyze_verb(CLI::App& app);
void register_check_verb(CLI::App& app);
void register_report_verb(CLI::App& app);
void register_export_verb(CLI::App& app);
void register_dump_verb(CLI::App& app);

}  // namespace memlife::tool
