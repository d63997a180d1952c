// The verbs of the `memlife` executable. Each verb lives in its own
// verb_<name>.cc and adds itself to the app; main.cc only wires them up.
#pragma once

#include <CLI/CLI.hpp>

#include "analysis/run.h"

namespace memlife::tool {

// --run and --all-runs, the same for every verb that reads traces.
inline void add_run_options(CLI::App* verb, analysis::RunChoice& choice) {
  verb->add_option("--run", choice.run_id,
                   "read the traces of this run id (default: the newest run among the inputs; "
                   "folders are searched recursively)");
  verb->add_flag("--all-runs", choice.all_runs,
                 "read the traces of every run (cross-rank checks stay within each run)");
}

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
void register_build_plugin_verb(CLI::App& app);

}  // namespace memlife::tool
