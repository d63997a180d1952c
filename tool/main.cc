// memlife: record a program's memory lifetimes (`run`), then read the traces
// back (`dump`, `analyze`, `check`, `report`, `export`).
#include <iostream>

#include "verbs.h"

int main(int argc, char** argv) {
  CLI::App app{"memlife: memory-lifetime diagnostics and leak detection for PyTorch programs"};
  app.set_version_flag("--version", std::string("memlife ") + MEMLIFE_VERSION);
  app.require_subcommand(1);

  memlife::tool::register_run_verb(app);
  memlife::tool::register_analyze_verb(app);
  memlife::tool::register_check_verb(app);
  memlife::tool::register_report_verb(app);
  memlife::tool::register_export_verb(app);
  memlife::tool::register_dump_verb(app);
  memlife::tool::register_build_plugin_verb(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors share exit status 2 with every other refusal.
    app.exit(e);
    return 2;
  } catch (const memlife::tool::ExitWith& e) {
    return e.code;
  } catch (const std::exception& e) {
    // A verb let an exception through (a filesystem error, an allocation
    // failure): one line and the status of unreadable input, never an abort.
    std::cerr << "memlife: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
