// memlife build-plugin: builds the torch plugin for the torch a python runs
// into the user's cache (tool/torch_plugin.h). `memlife run` does the same
// on first use; this verb is what the recorder's messages tell a user to run
// where that could not happen (a launcher memlife cannot see into).
#include <iostream>

#include "run_setup.h"
#include "torch_plugin.h"
#include "verbs.h"

namespace memlife::tool {
namespace {

struct BuildPluginOptions {
  std::string python = "python3";
  bool force = false;
};

int build_plugin_verb(const BuildPluginOptions& options) {
  std::string error;
  auto python = find_command(options.python, error);
  if (!python) {
    std::cerr << "memlife build-plugin: " << error << "\n";
    return 2;
  }
  const auto torch = find_torch(*python);
  if (!torch) {
    std::cerr << "memlife build-plugin: " << *python << " has no torch\n";
    return 2;
  }
  auto layout = find_layout(error);
  if (!layout) {
    std::cerr << "memlife build-plugin: " << error << "\n";
    return 2;
  }
  const std::string& own = layout->libs.torch_plugin;
  if (!options.force && !own.empty() && plugin_torch_version(own) == torch->version) {
    std::cout << own << "\n";
    std::cerr << "memlife build-plugin: memlife's own plugin is built for torch " << torch->version
              << "; nothing to build\n";
    return 0;
  }
  if (auto cached = cached_plugin(torch->version); cached && !options.force) {
    std::cout << *cached << "\n";
    std::cerr << "memlife build-plugin: already built for torch " << torch->version << "\n";
    return 0;
  }
  auto built = build_plugin(*python, *torch, layout->plugin_sources, error);
  if (!built) {
    std::cerr << "memlife build-plugin: " << error << "\n";
    return 1;
  }
  std::cout << *built << "\n";
  return 0;
}

}  // namespace

void register_build_plugin_verb(CLI::App& app) {
  auto options = std::make_shared<BuildPluginOptions>();
  CLI::App* verb = app.add_subcommand(
      "build-plugin", "Build the torch plugin for the torch a python runs, into the user's cache");
  verb->add_option("--python", options->python, "The python whose torch to build for")
      ->capture_default_str();
  verb->add_flag("--force", options->force, "Build again even if a plugin for it exists");
  verb->footer(
      "The plugin goes to $MEMLIFE_CACHE_DIR, else $XDG_CACHE_HOME/memlife, else "
      "~/.cache/memlife (torch-plugin/<torch version>/), where memlife run and the recorder "
      "look for it. Prints its path.");
  verb->callback([options] {
    if (int code = build_plugin_verb(*options); code != 0) throw ExitWith{code};
  });
}

}  // namespace memlife::tool
